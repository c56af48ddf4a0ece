#include "files.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "errors.hpp"

namespace bitgate {

namespace {

std::string kind_of(mode_t m) {
    if (S_ISDIR(m)) return "a directory";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    if (S_ISFIFO(m)) return "a pipe";
    if (S_ISSOCK(m)) return "a socket";
    return "not a plain file";
}

}  // namespace

uint64_t regular_file_size(const std::string& path, uint64_t max_bytes, std::string_view what) {
    struct stat st {};
    const std::string& name = path;
    if (::stat(path.c_str(), &st) != 0)
        throw BadInput(name + ": cannot open " + std::string(what) + " (" + std::strerror(errno) + ")");
    if (!S_ISREG(st.st_mode))
        throw BadInput(name + ": " + std::string(what) + " is not a regular file (" + kind_of(st.st_mode) + ")");
    const auto size = static_cast<uint64_t>(st.st_size);
    if (size > max_bytes)
        throw BadInput(name + ": " + std::string(what) + " is " + std::to_string(size) + " bytes, more than the " +
                       std::to_string(max_bytes) + " it may be");
    return size;
}

std::string read_regular_file(const std::string& path, uint64_t max_bytes, std::string_view what) {
    const uint64_t size = regular_file_size(path, max_bytes, what);
    std::ifstream in(path, std::ios::binary);
    if (!in) throw BadInput(path + ": cannot open " + std::string(what));
    std::string text(size, '\0');
    in.read(text.data(), static_cast<std::streamsize>(size));
    // A file that shrank under us reads short; one that grew is read to its size at open.
    text.resize(static_cast<size_t>(in.gcount()));
    if (in.bad()) throw BadInput(path + ": read error in " + std::string(what));
    return text;
}

}  // namespace bitgate
