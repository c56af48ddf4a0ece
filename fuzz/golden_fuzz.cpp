// Fuzz target: golden files (golden/<family>.golden) through the reader `golden check` uses.
// Input: "FAMILY\n" then the golden file's text.
#include "fuzz_input.hpp"
#include "golden.hpp"
#include "one_line.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace bitgate;
    std::string_view rest;
    const FamilySpec* f = fuzz::split_family(std::string_view(reinterpret_cast<const char*>(data), size), rest);
    if (!f) return 0;
    const std::string path = fuzz::as_file(rest, "golden");
    try {
        (void)read_golden(*f, path);
    } catch (const BadInput& e) {
        fuzz::expect_one_line_naming(e, path);
    }
    return 0;
}
