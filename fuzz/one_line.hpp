// Shared by the fuzz targets of file readers: a bad input's message must have the contract's form,
// one line naming the file it is about (the CLI prints it as is). A message that does not name
// the file, or spans lines, is a finding like a crash: the input is kept and printed.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include "errors.hpp"

namespace bitgate::fuzz {

inline void expect_one_line_naming(const BadInput& e, const std::string& path) {
    const std::string m = e.what();
    if (m.find(path) != std::string::npos && m.find('\n') == std::string::npos) return;
    std::fprintf(stderr, "finding: a bad input's message is not one line naming %s: %s\n", path.c_str(), m.c_str());
    std::abort();
}

}  // namespace bitgate::fuzz
