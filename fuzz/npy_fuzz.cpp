// Fuzz target: any bytes as a .npy file, through the in-memory parser and the file reader. Both
// must accept the file or throw BadInput, and agree on which; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>

#include "errors.hpp"
#include "temp_file.hpp"
#include "npy.hpp"
#include "one_line.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    bool parsed = false, read = false;
    try {
        (void)bitgate::npy::parse(std::span<const uint8_t>(data, size), "fuzz.npy");
        parsed = true;
    } catch (const bitgate::BadInput& e) {
        bitgate::fuzz::expect_one_line_naming(e, "fuzz.npy");
    }
    const bitgate::fuzz::TempFile file(data, size, "npy_fuzz");
    const std::string& name = file.path();
    try {
        const bitgate::npy::Tensor t = bitgate::npy::read(name);
        read = true;
        if (t.shape.size() == 1 && t.dtype != "<f4" && t.dtype != "<f2")
            (void)bitgate::npy::read_ids(name, static_cast<uint64_t>(t.shape[0]), true);
    } catch (const bitgate::BadInput& e) {
        bitgate::fuzz::expect_one_line_naming(e, name);
    }
    if (parsed != read) std::abort();  // the two ways in disagree
    return 0;
}
