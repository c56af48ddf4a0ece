// Shared by the fuzz targets: the convention is one file per reader (fuzz/<reader>_fuzz.cpp) with
// libFuzzer's entry point, LLVMFuzzerTestOneInput. BadInput is the expected outcome of a bad
// input; any other exception, a crash, a sanitizer report or a hang is a finding.
#pragma once
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>
#include <string_view>

#include "errors.hpp"
#include "registry.hpp"

namespace bitgate::fuzz {

// The readers under test take paths: the input goes to a file private to this process.
inline std::string as_file(std::string_view bytes, const char* tag) {
    const std::string path = "/tmp/bitgate_fuzz_" + std::string(tag) + "_" + std::to_string(::getpid());
    std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), std::streamsize(bytes.size()));
    return path;
}

// "FAMILY\nrest": the first line picks the family, the rest is the reader's text. nullptr when
// the first line names no family (not an interesting input).
inline const FamilySpec* split_family(std::string_view in, std::string_view& rest) {
    const size_t nl = in.find('\n');
    const std::string name(in.substr(0, nl));
    rest = nl == std::string_view::npos ? std::string_view() : in.substr(nl + 1);
    try {
        return &family(name);
    } catch (const BadInput&) {
        return nullptr;
    }
}

}  // namespace bitgate::fuzz
