// Fuzz target: any bytes as a PTX module (`bitgate lint --ptx FILE`): findings or nothing, never a
// crash or a hang; every finding points at a line of the input and names a rule, and a module
// read twice gives the same findings.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "errors.hpp"
#include "ptx_lint.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const int lines = int(std::count(text.begin(), text.end(), '\n')) + 1;
    try {
        const bitgate::LintReport r = bitgate::lint_ptx_module(text, "fuzz.ptx");
        if (r.kernels < 0) std::abort();
        for (const bitgate::LintFinding& f : r.findings) {
            if (f.line < 1 || f.line > lines || f.rule.empty()) std::abort();
            (void)bitgate::format_finding(f);
        }
        if (bitgate::lint_ptx(text, "fuzz.ptx").size() != r.findings.size()) std::abort();
    } catch (const bitgate::BadInput&) {
    }
    return 0;
}
