// Exit codes and the two error kinds every verb maps onto them.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace bitgate {

enum Exit : int {
    exit_ok = 0,        // every check held
    exit_failed = 1,    // a check failed
    exit_bad_input = 2, // usage or a bad input file
    exit_no_gpu = 3,    // a GPU was required and none is present
    exit_internal = 4,  // a bug in bitgate
    exit_hang = 5,      // a device case did not finish within its limit (the watchdog stopped the run)
};

// A GPU was required (--device) and none is usable.
struct NoGpu : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Names joined by sep, for messages and report fields ("add,bias", "a b").
inline std::string joined(const std::vector<std::string>& names, std::string_view sep) {
    std::string s;
    for (const auto& n : names) {
        if (!s.empty()) s += sep;
        s += n;
    }
    return s;
}

// Text from a file or the command line, made safe to put in a one-line message: a newline becomes
// the two characters \n (likewise \r, \t), other control bytes and bytes that are not valid UTF-8
// become \xHH, valid UTF-8 stays as it is. Every BadInput's message passes through it when it is
// made (so its callers pass file and command-line text as it is), and the CLI passes every other
// error it prints.
inline std::string printable(std::string_view s) {
    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    out.reserve(s.size());
    auto escape = [&](unsigned char c) {
        out += "\\x";
        out += hex[c >> 4];
        out += hex[c & 15];
    };
    for (size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c < 0x80) {
            if (c == '\n') out += "\\n";
            else if (c == '\r') out += "\\r";
            else if (c == '\t') out += "\\t";
            else if (c < 0x20 || c == 0x7f) escape(c);
            else out += static_cast<char>(c);
            ++i;
            continue;
        }
        // A well-formed UTF-8 sequence (no overlong forms, no surrogates, at most U+10FFFF)?
        size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
        if (n && i + n <= s.size()) {
            const auto c1 = static_cast<unsigned char>(s[i + 1]);
            bool ok = (c1 & 0xc0) == 0x80;
            if (c == 0xe0) ok = ok && c1 >= 0xa0;
            if (c == 0xed) ok = ok && c1 < 0xa0;
            if (c == 0xf0) ok = ok && c1 >= 0x90;
            if (c == 0xf4) ok = ok && c1 < 0x90;
            for (size_t j = 2; j < n; ++j) ok = ok && (static_cast<unsigned char>(s[i + j]) & 0xc0) == 0x80;
            if (ok) {
                out.append(s.substr(i, n));
                i += n;
                continue;
            }
        }
        escape(c);
        ++i;
    }
    return out;
}

// Bad input: the message is one line naming the file (and line) and what is wrong. The text is
// made printable here, once for every reader, so that a name or value echoed from a file cannot
// break the line (printable leaves text it already made printable as it is).
struct BadInput : std::runtime_error {
    explicit BadInput(std::string_view what) : std::runtime_error(printable(what)) {}
};

}  // namespace bitgate
