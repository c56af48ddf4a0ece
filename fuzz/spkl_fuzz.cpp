// Fuzz target: any bytes as a .spkl file. The reader must either read it whole (rows, digest) or
// throw BadInput; any other exception, a crash or a sanitizer report is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <unistd.h>
#include <vector>

#include "errors.hpp"
#include "spkl.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    // The reader works on files (it checks the size against the header first): a temporary one.
    char name[] = "/tmp/spkl_fuzz_XXXXXX";
    const int fd = ::mkstemp(name);
    if (fd < 0) std::abort();
    for (size_t done = 0; done < size;) {
        const ssize_t w = ::write(fd, data + done, size - done);
        if (w <= 0) std::abort();
        done += static_cast<size_t>(w);
    }
    ::close(fd);
    try {
        bitgate::spkl::Reader r(name);
        std::vector<uint8_t> buf(1 << 16);
        while (r.read_logits(buf.data(), buf.size()) != 0) {
        }
        (void)r.finish(false);
        r.visit_prefix([](const void*, size_t) {});
    } catch (const bitgate::BadInput&) {
        // the expected outcome for a malformed file
    }
    ::unlink(name);
    return 0;
}
