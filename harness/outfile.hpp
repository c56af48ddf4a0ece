// An output file that is either written whole or not at all, and never destroys what it did not
// create.
//
// A regular target (or a path that does not exist yet) is written to a temporary file beside it
// and renamed over it by commit(); a writer abandoned before commit() removes only that temporary
// file, so a failed write leaves the old target as it was. A target that exists and is not a
// regular file (a device such as /dev/full or /dev/null, a pipe) is written in place, and never
// removed. A symbolic link is followed: the file it points to is replaced, the link stays.
// Write errors (a full disk, /dev/full) are BadInput("PATH: write failed: reason"), one line.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace bitgate {

class OutFile {
public:
    // `inputs`: files this run reads; an output that is one of them (same device and inode,
    // whatever the spelling) is refused with BadInput before anything is touched.
    explicit OutFile(std::string path, const std::vector<std::string>& inputs = {});
    ~OutFile();
    OutFile(const OutFile&) = delete;
    OutFile& operator=(const OutFile&) = delete;

    const std::string& path() const { return path_; }
    void write(const void* p, size_t n);
    // Flushes, closes and renames the temporary file over the target. Throws BadInput on failure
    // (the temporary file is then removed).
    void commit();

private:
    void flush();
    std::string path_;     // as the user spelled it, for messages
    std::string target_;   // where the data ends up (the link's target for a symbolic link)
    std::string tmp_;      // empty when writing in place
    int fd_ = -1;
    std::vector<uint8_t> buf_;
    size_t used_ = 0;
    bool committed_ = false;
};

// A whole small file (a JSON report, ...) through OutFile, never over one of `inputs`.
void write_file(const std::string& path, const std::string& contents, const std::vector<std::string>& inputs = {});

// BadInput "PATH: is the input IN itself; ..." when `path` exists and is one of `inputs` (same
// device and inode, whatever the spelling): for a verb to refuse before its run, not after.
void refuse_input_as_output(const std::string& path, const std::vector<std::string>& inputs);
// A run's outputs, checked before it starts: two naming one file, whatever the spelling (the
// second would replace the first), are BadInput "A and B name the same file (PATH); ..."; one
// that is one of `inputs` is refused as above. Pairs are (option, path); empty paths are outputs
// not asked for; a device such as /dev/null may take several.
void refuse_outputs(const std::vector<std::pair<std::string, std::string>>& outputs,
                    const std::vector<std::string>& inputs = {});

}  // namespace bitgate
