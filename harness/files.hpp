// Input files from the command line, checked before they are read: a directory, a device such as
// /dev/zero or a FIFO would otherwise be read until memory runs out, or fail deep inside a reader.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace bitgate {

// The size of `path`, which must be a regular file (symbolic links followed) of at most
// `max_bytes`; otherwise BadInput("PATH: <what> is not a regular file (a directory)", or
// "... is N bytes, more than the M ...", with `what` naming the use, e.g. "input x").
uint64_t regular_file_size(const std::string& path, uint64_t max_bytes, std::string_view what);

// The whole of a regular file of at most `max_bytes`, read with the same checks.
std::string read_regular_file(const std::string& path, uint64_t max_bytes, std::string_view what);

}  // namespace bitgate
