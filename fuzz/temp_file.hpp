// The fuzz input as a temporary file, for readers that only take a path; removed when it goes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <unistd.h>

namespace bitgate::fuzz {

class TempFile {
public:
    TempFile(const uint8_t* data, size_t size, const char* stem) : name_(std::string("/tmp/") + stem + "_XXXXXX") {
        const int fd = ::mkstemp(name_.data());
        if (fd < 0) std::abort();
        for (size_t done = 0; done < size;) {
            const ssize_t w = ::write(fd, data + done, size - done);
            if (w <= 0) std::abort();
            done += static_cast<size_t>(w);
        }
        ::close(fd);
    }
    ~TempFile() { ::unlink(name_.c_str()); }
    TempFile(const TempFile&) = delete;
    TempFile& operator=(const TempFile&) = delete;
    const std::string& path() const { return name_; }

private:
    std::string name_;
};

// A fresh path in /tmp for a reader that also writes (nothing there yet); whatever was written
// there is removed when it goes.
class TempPath {
public:
    explicit TempPath(const char* stem) : name_(std::string("/tmp/") + stem + "_XXXXXX") {
        const int fd = ::mkstemp(name_.data());
        if (fd < 0) std::abort();
        ::close(fd);
        ::unlink(name_.c_str());
    }
    ~TempPath() { ::unlink(name_.c_str()); }
    TempPath(const TempPath&) = delete;
    TempPath& operator=(const TempPath&) = delete;
    const std::string& path() const { return name_; }

private:
    std::string name_;
};

}  // namespace bitgate::fuzz
