// Fuzz target: shape catalogs (shapes/<family>.shapes) and the regression file, through the
// readers `check` uses. Input: "FAMILY\n" then the catalog text; the whole input is also read as a
// regression file, whose lines start with their family.
#include "catalog.hpp"
#include "fuzz_input.hpp"
#include "one_line.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace bitgate;
    const std::string_view in(reinterpret_cast<const char*>(data), size);
    std::string_view rest;
    if (const FamilySpec* f = fuzz::split_family(in, rest)) {
        const std::string path = fuzz::as_file(rest, "catalog");
        try {
            for (const CatalogLine& line : read_family_catalog(*f, path)) (void)expand(line, true);
        } catch (const BadInput& e) {
            fuzz::expect_one_line_naming(e, path);
        }
    }
    const std::string path = fuzz::as_file(in, "regressions");
    try {
        for (const CatalogLine& line : read_regressions(path)) (void)expand(line, false);
    } catch (const BadInput& e) {
        fuzz::expect_one_line_naming(e, path);
    }
    return 0;
}
