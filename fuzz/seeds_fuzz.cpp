// Fuzz target: seed lists and ranges ("1,2,7", "1-5"), as catalog lines and --seeds give them.
#include "catalog.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        (void)bitgate::parse_seeds(std::string(reinterpret_cast<const char*>(data), size), "--seeds");
    } catch (const bitgate::BadInput&) {
    }
    return 0;
}
