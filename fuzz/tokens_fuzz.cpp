// Fuzz target: any bytes as a token file (`model run --tokens`, whitespace-separated ids): the ids
// or BadInput, never a crash; every id read is one the text spelled, in int32 range.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "errors.hpp"
#include "model/forward.hpp"
#include "one_line.hpp"
#include "temp_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const bitgate::fuzz::TempFile file(data, size, "tokens_fuzz");
    try {
        const std::vector<int32_t> t = bitgate::model::read_tokens(file.path());
        // An id takes at least one character and one separator after it (but the last).
        if (t.size() > size / 2 + 1) std::abort();
        for (int32_t id : t)
            if (id < 0) std::abort();
    } catch (const bitgate::BadInput& e) {
        bitgate::fuzz::expect_one_line_naming(e, file.path());
    }
    return 0;
}
