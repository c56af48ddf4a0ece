// The PTX lint: the bit-exactness contract checked on the compiler's output, where no header,
// macro or library call can hide an approximation. Every kernel in kernels/*.cu is bit-exact.
#pragma once
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace bitgate {

struct LintFinding {
    std::string file;         // as given to lint_ptx
    std::string kernel;       // demangled name of the .entry or .func holding the instruction
    int line = 0;             // 1-based line in the PTX file
    std::string instruction;  // the instruction as written, whitespace collapsed, without ';'
    std::string rule;         // why it breaks the contract (see rule_* below); several joined by ", "
};

// Rule names, as they appear in LintFinding::rule.
inline constexpr std::string_view rule_approx = "approximation";              // .approx, rsqrt, ex2, ...
inline constexpr std::string_view rule_ftz = "flush-to-zero";                 // .ftz
inline constexpr std::string_view rule_div_full = "div.full is approximate";  // 2-ulp division
inline constexpr std::string_view rule_float_atomic = "float atomic";         // order-dependent sums
inline constexpr std::string_view rule_no_rounding = "no rounding modifier, contractible";
// mma/wgmma/wmma/tcgen05.mma on float types (f16, bf16, tf32, fp8, f64 ...): the hardware's
// accumulation order and rounding inside the instruction are unspecified, so no host model can
// reproduce them. Integer MMA (.s8/.u8 into .s32) is exact and allowed.
inline constexpr std::string_view rule_float_mma = "float tensor-core MMA";

struct LintReport {
    std::vector<LintFinding> findings;
    int kernels = 0;  // .entry bodies seen
    int files = 0;
};

// Lints one PTX module. `file` only names it in the findings.
LintReport lint_ptx_module(std::string_view text, std::string_view file);
std::vector<LintFinding> lint_ptx(std::string_view text, std::string_view file);

// Lints a .ptx file, or every *.ptx directly in a directory (in name order). Throws BadInput when
// a .ptx file does not exist or cannot be read, and "DIR: no PTX here (built without CUDA?)" when
// a directory is missing or holds no .ptx file.
LintReport lint_path(const std::filesystem::path& path);
LintReport lint_dir(const std::filesystem::path& dir);

// "FAIL lint <kernel> <file>:<line>: <instruction>  (<rule>)"
std::string format_finding(const LintFinding& f);

// Itanium-demangled name, or the name itself when it is not mangled (extern "C").
std::string demangle(const std::string& name);

}  // namespace bitgate
