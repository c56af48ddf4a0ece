// Fuzz target: golden files (golden/<family>.golden) through the reader `golden check` uses.
// Input: "FAMILY\n" then the golden file's text.
#include "fuzz_input.hpp"
#include "golden.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace bitgate;
    std::string_view rest;
    const FamilySpec* f = fuzz::split_family(std::string_view(reinterpret_cast<const char*>(data), size), rest);
    if (!f) return 0;
    try {
        (void)read_golden(*f, fuzz::as_file(rest, "golden"));
    } catch (const BadInput&) {
    }
    return 0;
}
