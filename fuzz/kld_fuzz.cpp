// Fuzz target: any bytes as a llama.cpp KLD base file (`spkl from-llama-kld`). The converter must
// either write a .spkl that reads back whole, with the rows the header promises, or throw
// BadInput; a crash, a sanitizer report, an unbounded allocation or a short .spkl is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "errors.hpp"
#include "llama_kld.hpp"
#include "spkl.hpp"
#include "temp_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace bitgate;
    const fuzz::TempFile in(data, size, "kld_fuzz");
    const fuzz::TempPath out("kld_fuzz_out"), tokens("kld_fuzz_tokens");
    spkl::llama::KldHeader h;
    try {
        h = spkl::llama::to_spkl(in.path(), out.path(), "", tokens.path());
    } catch (const BadInput&) {
        return 0;  // the expected outcome for a malformed file
    }
    // Accepted: what it wrote must be a whole .spkl of the header's rows and vocabulary.
    try {
        spkl::Reader r(out.path());
        if (r.header().rows != uint64_t(h.rows()) || r.header().vocab != uint32_t(h.n_vocab)) std::abort();
        std::vector<uint8_t> buf(1 << 16);
        while (r.read_logits(buf.data(), buf.size()) != 0) {
        }
        (void)r.finish(false);
    } catch (const BadInput&) {
        std::abort();  // the converter wrote a file its own reader refuses
    }
    return 0;
}
