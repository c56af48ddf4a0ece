// Exit codes and the two error kinds every verb maps onto them.
#pragma once
#include <stdexcept>
#include <string>

namespace bitgate {

enum Exit : int {
    exit_ok = 0,        // every check held
    exit_failed = 1,    // a check failed
    exit_bad_input = 2, // usage or a bad input file
    exit_no_gpu = 3,    // a GPU was required and none is present
    exit_internal = 4,  // a bug in bitgate
};

// Bad input: the message is one line naming the file (and line) and what is wrong.
struct BadInput : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// A GPU was required (--device) and none is usable.
struct NoGpu : std::runtime_error {
    using std::runtime_error::runtime_error;
};

}  // namespace bitgate
