// Fuzz target: any bytes as a .spkl file. The reader must either read it whole (rows, digest) or
// throw BadInput; any other exception, a crash or a sanitizer report is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "errors.hpp"
#include "temp_file.hpp"
#include "spkl.hpp"
#include "one_line.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    // The reader works on files (it checks the size against the header first): a temporary one.
    const bitgate::fuzz::TempFile file(data, size, "spkl_fuzz");
    const std::string& name = file.path();
    try {
        bitgate::spkl::Reader r(name);
        std::vector<uint8_t> buf(1 << 16);
        while (r.read_logits(buf.data(), buf.size()) != 0) {
        }
        (void)r.finish(false);
        r.visit_prefix([](const void*, size_t) {});
    } catch (const bitgate::BadInput& e) {
        // the expected outcome for a malformed file
        bitgate::fuzz::expect_one_line_naming(e, name);
    }
    return 0;
}
