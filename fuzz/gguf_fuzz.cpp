// Fuzz target for the GGUF reader and the qwen2 loader: any byte string is either a model or a
// BadInput, never a crash, a hang or an unbounded allocation. Seeds: fuzz/corpus/gguf/.
#include <cstddef>
#include <cstdint>
#include <span>

#include "errors.hpp"
#include "model/weights.hpp"
#include "one_line.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        const bitgate::gguf::File f = bitgate::gguf::parse(std::span<const uint8_t>(data, size), "fuzz.gguf");
        // Every tensor the parser accepted lies inside the input: touch its first and last byte.
        for (const auto& t : f.tensors)
            if (!t.bytes.empty()) (void)(t.bytes.front() ^ t.bytes.back());
        const bitgate::model::Model m = bitgate::model::model_from_gguf(f, "fuzz.gguf");
        (void)m;
    } catch (const bitgate::BadInput& e) {
        // the expected outcome for almost every input
        bitgate::fuzz::expect_one_line_naming(e, "fuzz.gguf");
    }
    return 0;
}
