// How a host model computes its bytes. `scalar` is the plain C++ definition; each SIMD spelling
// performs exactly the definition's operations per output element (integer sums, which are exact
// in any order, and the same IEEE roundings of the same floats in the same order), so it changes
// the time and never a byte. The tests hold every spelling the CPU has equal to `scalar`, byte
// for byte. `fastest` takes the best one the CPU running it has.
#pragma once
#include <string_view>

namespace bitgate::ref {

enum class HostPath {
    fastest,
    scalar,
    avx2,         // AVX2 + FMA: 16-bit products summed by vpmaddwd
    avx512_vnni,  // AVX-512 (F, BW, VL) + VNNI: 8-bit products summed by vpdpbusd
};

// Whether this CPU (and this build) can run `p`; `fastest` and `scalar` always can.
bool host_path_available(HostPath p);
const char* host_path_name(HostPath p);
// The path named `name` (host_path_name's spelling); false for an unknown name.
bool host_path_from_name(std::string_view name, HostPath& out);

}  // namespace bitgate::ref
