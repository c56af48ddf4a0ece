#include "outfile.hpp"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errors.hpp"

namespace bitgate {
namespace {

constexpr size_t kBuffer = size_t{1} << 20;

[[noreturn]] void fail(const std::string& path, const std::string& what) {
    throw BadInput(path + ": " + what + ": " + std::strerror(errno));
}

std::string dir_of(const std::string& p) {
    const size_t s = p.rfind('/');
    return s == std::string::npos ? std::string(".") : s == 0 ? std::string("/") : p.substr(0, s);
}
std::string base_of(const std::string& p) {
    const size_t s = p.rfind('/');
    return s == std::string::npos ? p : p.substr(s + 1);
}

}  // namespace

void refuse_input_as_output(const std::string& path, const std::vector<std::string>& inputs) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return;  // follows links; a new file is no input
    for (const std::string& in : inputs) {
        struct stat si {};
        if (::stat(in.c_str(), &si) == 0 && si.st_dev == st.st_dev && si.st_ino == st.st_ino)
            throw BadInput(path + ": is the input " + in + " itself; write the output to another file");
    }
}

void refuse_outputs(const std::vector<std::pair<std::string, std::string>>& outputs, const std::vector<std::string>& inputs) {
    namespace fs = std::filesystem;
    const auto same = [](const std::string& x, const std::string& y) {
        std::error_code e1, e2;
        // A device (/dev/null) takes any number of writers, each in place.
        if (fs::exists(x, e1) && !fs::is_regular_file(x, e1)) return false;
        if (x == y) return true;
        if (fs::exists(x, e1) && fs::exists(y, e2)) return fs::equivalent(x, y, e1);  // links, other spellings
        return fs::weakly_canonical(x, e1) == fs::weakly_canonical(y, e2);
    };
    for (size_t i = 0; i < outputs.size(); ++i)
        for (size_t j = i + 1; j < outputs.size(); ++j)
            if (!outputs[i].second.empty() && !outputs[j].second.empty() && same(outputs[i].second, outputs[j].second))
                throw BadInput(outputs[i].first + " and " + outputs[j].first + " name the same file (" + outputs[j].second +
                               "); give each its own");
    for (const auto& [option, path] : outputs)
        if (!path.empty()) refuse_input_as_output(path, inputs);
}

OutFile::OutFile(std::string path, const std::vector<std::string>& inputs) : path_(std::move(path)), target_(path_) {
    if (path_.empty()) throw BadInput("output path is empty");
    refuse_input_as_output(path_, inputs);
    struct stat st {};
    const bool exists = ::stat(path_.c_str(), &st) == 0;  // follows links
    if (exists) {
        if (!S_ISREG(st.st_mode)) {
            if (S_ISDIR(st.st_mode)) throw BadInput(path_ + ": is a directory");
            // A device or a pipe: written in place, never replaced, never removed.
            fd_ = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC);
            if (fd_ < 0) fail(path_, "cannot open for writing");
            buf_.resize(kBuffer);
            return;
        }
        // Replace what a symbolic link points to, not the link.
        char real[PATH_MAX];
        if (::realpath(path_.c_str(), real)) target_ = real;
    }
    static std::atomic<unsigned> counter{0};
    for (int attempt = 0; fd_ < 0; ++attempt) {
        tmp_ = dir_of(target_) + "/." + base_of(target_) + "." + std::to_string(::getpid()) + "." +
               std::to_string(counter.fetch_add(1)) + ".tmp";
        fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd_ < 0 && (errno != EEXIST || attempt > 100)) {
            tmp_.clear();
            fail(path_, "cannot create");
        }
    }
    buf_.resize(kBuffer);
}

OutFile::~OutFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_ && !tmp_.empty()) ::unlink(tmp_.c_str());  // only ever the file we created
}

void OutFile::flush() {
    const uint8_t* p = buf_.data();
    size_t n = used_;
    while (n > 0) {
        const ssize_t w = ::write(fd_, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            fail(path_, "write failed");
        }
        if (w == 0) {
            errno = ENOSPC;
            fail(path_, "write failed");
        }
        p += w;
        n -= static_cast<size_t>(w);
    }
    used_ = 0;
}

void OutFile::write(const void* p, size_t n) {
    if (committed_) throw std::logic_error("OutFile::write after commit");
    const auto* c = static_cast<const uint8_t*>(p);
    while (n > 0) {
        if (used_ == buf_.size()) flush();
        const size_t k = std::min(n, buf_.size() - used_);
        std::memcpy(buf_.data() + used_, c, k);
        used_ += k;
        c += k;
        n -= k;
    }
}

void OutFile::commit() {
    flush();
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) fail(path_, "write failed");
    if (!tmp_.empty() && ::rename(tmp_.c_str(), target_.c_str()) != 0) fail(path_, "cannot rename the finished file into place");
    committed_ = true;
}

void write_file(const std::string& path, const std::string& contents, const std::vector<std::string>& inputs) {
    OutFile f(path, inputs);
    f.write(contents.data(), contents.size());
    f.commit();
}

}  // namespace bitgate
