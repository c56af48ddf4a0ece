// Fuzz target: JSON reports (--json of check and golden check) through the reader `report merge`
// and the workers' parent use. Input: the report's text.
#include <string_view>

#include "errors.hpp"
#include "report_merge.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace bitgate;
    try {
        const Report r = parse_report(std::string_view(reinterpret_cast<const char*>(data), size), "report");
        // A report that reads must also merge with itself as its only shard.
        (void)merge_reports({r}, r.shard_index, r.shard_count);
    } catch (const BadInput&) {
    }
    return 0;
}
