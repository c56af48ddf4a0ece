// Fuzz target: shape catalogs (shapes/<family>.shapes) and the regression file, through the
// readers `check` uses. Input: "FAMILY\n" then the catalog text; the whole input is also read as a
// regression file, whose lines start with their family.
#include "catalog.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace bitgate;
    const std::string_view in(reinterpret_cast<const char*>(data), size);
    std::string_view rest;
    if (const FamilySpec* f = fuzz::split_family(in, rest)) {
        try {
            for (const CatalogLine& line : read_family_catalog(*f, fuzz::as_file(rest, "catalog")))
                (void)expand(line, true);
        } catch (const BadInput&) {
        }
    }
    try {
        for (const CatalogLine& line : read_regressions(fuzz::as_file(in, "regressions"))) (void)expand(line, false);
    } catch (const BadInput&) {
    }
    return 0;
}
