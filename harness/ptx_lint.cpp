#include "ptx_lint.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>

#include "errors.hpp"
#include "files.hpp"

namespace bitgate {

namespace {

// What the rules need to know about one instruction: "fma.rn.ftz.f32" -> base "fma", the rest.
struct Opcode {
    std::string_view base;
    std::vector<std::string_view> mods;
    bool has(std::string_view m) const { return std::find(mods.begin(), mods.end(), m) != mods.end(); }
    bool has_any(std::initializer_list<std::string_view> ms) const {
        return std::any_of(ms.begin(), ms.end(), [&](std::string_view m) { return has(m); });
    }
};

Opcode split_opcode(std::string_view op) {
    Opcode o;
    size_t dot = op.find('.');
    o.base = op.substr(0, dot);
    while (dot != std::string_view::npos) {
        const size_t next = op.find('.', dot + 1);
        o.mods.push_back(op.substr(dot + 1, next == std::string_view::npos ? next : next - dot - 1));
        dot = next;
    }
    return o;
}

bool float_typed(const Opcode& o) {
    return o.has_any({"f16", "f16x2", "bf16", "bf16x2", "f32", "f32x2", "f64", "tf32"});
}

// The operations whose result the contract pins: their float forms must name a rounding mode,
// because without one the PTX ISA lets the code generator fuse a mul/add sequence into an FMA
// (what -fmad=false asks cicc not to do, but ptxas may still do to an unrounded add.f32).
bool rounded_op(std::string_view base) {
    static constexpr std::array<std::string_view, 8> ops = {"add", "sub", "mul", "fma", "mad", "div", "sqrt", "rcp"};
    return std::find(ops.begin(), ops.end(), base) != ops.end();
}

// Opcodes that exist only as MUFU approximations.
bool mufu_only(std::string_view base) {
    static constexpr std::array<std::string_view, 6> ops = {"rsqrt", "sin", "cos", "lg2", "ex2", "tanh"};
    return std::find(ops.begin(), ops.end(), base) != ops.end();
}

bool float_atomic(const Opcode& o) {
    const bool reduces = o.base == "atom" || o.base == "red" || (o.base == "cp" && o.has("reduce")) ||
                         (o.base == "multimem" && o.has_any({"red", "ld_reduce"}));
    return reduces && float_typed(o);
}

// A matrix instruction whose operand or accumulator types include a float type. The types are
// modifiers of the opcode (mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32), or for tcgen05 the
// `kind::` modifier (kind::f16, kind::tf32, kind::f8f6f4, kind::mxf4; kind::i8 is integer).
bool float_mma(const Opcode& o) {
    const bool matrix = o.base == "mma" || o.base == "wgmma" || o.base == "wmma" ||
                        (o.base == "tcgen05" && o.has("mma"));
    if (!matrix) return false;
    if (o.base == "wmma" && !o.has("mma")) return false;  // wmma.load/store move bits only
    static constexpr std::array<std::string_view, 13> floats = {
        "f16", "f16x2", "bf16", "bf16x2", "tf32", "f32", "f64", "e4m3", "e5m2", "e2m1", "e3m2", "e2m3", "ue8m0"};
    for (const auto m : o.mods) {
        if (std::find(floats.begin(), floats.end(), m) != floats.end()) return true;
        if (m.starts_with("kind::") && m != "kind::i8") return true;
    }
    return false;
}

std::string rules_broken(std::string_view opcode) {
    const Opcode o = split_opcode(opcode);
    std::vector<std::string_view> why;
    if (float_mma(o)) why.push_back(rule_float_mma);
    const bool approx = o.has("approx") || mufu_only(o.base);
    if (approx) why.push_back(rule_approx);
    if (o.has("ftz")) why.push_back(rule_ftz);
    const bool full = o.base == "div" && o.has("full");
    if (full) why.push_back(rule_div_full);
    if (float_atomic(o)) why.push_back(rule_float_atomic);
    if (rounded_op(o.base) && float_typed(o) && !approx && !full &&
        !o.has_any({"rn", "rz", "rm", "rp", "rna", "rs"}))
        why.push_back(rule_no_rounding);
    std::string out;
    for (const auto w : why) {
        if (!out.empty()) out += ", ";
        out += w;
    }
    return out;
}

bool ident_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$' ||
           c == '%' || c == '.';
}
bool space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

std::string collapse(std::string_view s) {
    std::string out;
    bool gap = false;
    for (const char c : s) {
        if (space(c)) {
            gap = !out.empty();
            continue;
        }
        if (gap) out += ' ';
        gap = false;
        out += c;
    }
    return out;
}

// The name a function header declares: ".visible .entry NAME(" or ".func (.param .b32 r) NAME(".
// Empty when the header declares no function (a global with an initializer).
std::string function_name(std::string_view header, bool& is_entry) {
    const auto word_at = [&](size_t p, std::string_view w) {
        return header.compare(p, w.size(), w) == 0 && (p + w.size() == header.size() || !ident_char(header[p + w.size()])) &&
               (p == 0 || !ident_char(header[p - 1]));
    };
    size_t p = std::string_view::npos;
    for (size_t i = 0; i < header.size(); ++i) {
        if (word_at(i, ".entry")) { is_entry = true; p = i + 6; break; }
        if (word_at(i, ".func")) { is_entry = false; p = i + 5; break; }
    }
    if (p == std::string_view::npos) return {};
    while (p < header.size() && space(header[p])) ++p;
    if (p < header.size() && header[p] == '(') {  // return parameters
        int level = 0;
        for (; p < header.size(); ++p) {
            if (header[p] == '(') ++level;
            if (header[p] == ')' && --level == 0) { ++p; break; }
        }
        while (p < header.size() && space(header[p])) ++p;
    }
    size_t e = p;
    while (e < header.size() && ident_char(header[e])) ++e;
    return std::string(header.substr(p, e - p));
}

// Labels ("$L__BB0_2:", "prototype_0 : .callprototype ...") that precede an instruction.
std::string without_labels(std::string_view stmt) {
    std::string text = collapse(stmt);
    // A label is a plain identifier (no '.', unlike an opcode) and one ':' (not "shared::cta").
    const auto label_char = [](char c) { return ident_char(c) && c != '.' && c != '%'; };
    for (;;) {
        size_t e = 0;
        while (e < text.size() && label_char(text[e])) ++e;
        size_t c = e;
        while (c < text.size() && text[c] == ' ') ++c;
        if (e == 0 || c >= text.size() || text[c] != ':' || (c + 1 < text.size() && text[c + 1] == ':')) return text;
        text.erase(0, c + 1);
        while (!text.empty() && text.front() == ' ') text.erase(0, 1);
    }
}

// One statement inside a function body (text between separators) -> a finding when it breaks a rule.
void check_statement(std::string_view stmt, int line, const std::string& kernel, std::string_view file,
                     std::vector<LintFinding>& out) {
    const std::string text = without_labels(stmt);
    if (text.empty() || text.front() == '.') return;  // a directive (.reg, .loc, .pragma), not an instruction
    size_t op = 0;
    if (text.front() == '@') {  // guard predicate
        op = text.find(' ');
        if (op == std::string::npos) return;
        ++op;
    }
    const size_t op_end = text.find(' ', op);
    const std::string_view opcode = std::string_view(text).substr(op, op_end == std::string::npos ? op_end : op_end - op);
    std::string why = rules_broken(opcode);
    if (!why.empty()) out.push_back({std::string(file), demangle(kernel), line, text, std::move(why)});
}

}  // namespace

std::string demangle(const std::string& name) {
    int status = 0;
    std::unique_ptr<char, void (*)(void*)> d(abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), std::free);
    return status == 0 && d ? std::string(d.get()) : name;
}

LintReport lint_ptx_module(std::string_view text, std::string_view file) {
    LintReport r;
    r.files = 1;
    // A character-level scan: PTX statements end in ';', scopes are '{' '}' where a statement would
    // start, and braces after a statement has started are operands ({%f1, %f2}) or initializers.
    int scope = 0;            // function body and inline-asm scopes
    int operand_braces = 0;   // braces inside the current statement
    bool in_body = false;
    std::string kernel;
    std::string stmt;         // current statement (or, outside bodies, the current top-level header)
    bool stmt_blank = true;
    int stmt_line = 0;
    int line = 1;
    bool line_comment = false, block_comment = false, in_string = false;

    const auto flush = [&] {
        if (in_body) check_statement(stmt, stmt_line, kernel, file, r.findings);
        stmt.clear();
        stmt_blank = true;
        operand_braces = 0;
    };

    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        const char n = i + 1 < text.size() ? text[i + 1] : '\0';
        if (c == '\n') ++line;
        if (line_comment) {
            if (c == '\n') line_comment = false;
            else continue;
        }
        if (block_comment) {
            if (c == '*' && n == '/') { block_comment = false; ++i; }
            continue;
        }
        if (in_string) {
            stmt += c;
            if (c == '"') in_string = false;
            continue;
        }
        if (c == '/' && n == '/') { line_comment = true; ++i; continue; }
        if (c == '/' && n == '*') { block_comment = true; ++i; continue; }

        // A '{' where an instruction could start opens a scope; after an opcode it is an operand.
        const auto opens_scope = [&] { return operand_braces == 0 && (!in_body || without_labels(stmt).empty()); };
        if (c == '"') in_string = true;
        else if (c == ';' && operand_braces == 0) { flush(); continue; }
        else if (c == '{' && opens_scope()) {
            if (in_body) {  // an inline-asm scope (a label before it stays behind)
                flush();
                ++scope;
                continue;
            }
            bool is_entry = false;
            const std::string name = function_name(stmt, is_entry);
            if (!name.empty()) {
                in_body = true;
                kernel = name;
                scope = 1;
                if (is_entry) ++r.kernels;
                stmt.clear();
                stmt_blank = true;
                continue;
            }
            ++operand_braces;  // a global's initializer
        } else if (c == '{') {
            ++operand_braces;
        } else if (c == '}' && operand_braces > 0) {
            --operand_braces;
        } else if (c == '}' && in_body) {
            flush();
            if (--scope == 0) in_body = false;
            continue;
        }
        if (!space(c) && stmt_blank) {
            stmt_line = line;
            stmt_blank = false;
        }
        stmt += c;
    }
    flush();
    return r;
}

std::vector<LintFinding> lint_ptx(std::string_view text, std::string_view file) {
    return lint_ptx_module(text, file).findings;
}

namespace {

// The largest PTX file the lint reads (the biggest kernel module here is a few MiB); a device such
// as /dev/zero or a directory named like a file is bad input, not a read until memory runs out.
constexpr uint64_t kMaxPtxBytes = uint64_t(1) << 30;

LintReport lint_file(const std::filesystem::path& p) {
    return lint_ptx_module(read_regular_file(p.string(), kMaxPtxBytes, "PTX file"), p.string());
}

void add(LintReport& into, LintReport&& r) {
    into.kernels += r.kernels;
    into.files += r.files;
    for (auto& f : r.findings) into.findings.push_back(std::move(f));
}

}  // namespace

LintReport lint_dir(const std::filesystem::path& dir) {
    std::error_code ec;
    std::vector<std::filesystem::path> files;
    if (std::filesystem::is_directory(dir, ec))
        for (const auto& e : std::filesystem::directory_iterator(dir, ec))
            if (e.path().extension() == ".ptx" && e.is_regular_file(ec)) files.push_back(e.path());
    if (files.empty()) throw BadInput(dir.string() + ": no PTX here (built without CUDA?)");
    std::sort(files.begin(), files.end());
    LintReport r;
    for (const auto& f : files) add(r, lint_file(f));
    return r;
}

LintReport lint_path(const std::filesystem::path& path) {
    std::error_code ec;
    // A missing path that does not name a .ptx file is taken for a PTX directory that was never built.
    if (std::filesystem::is_directory(path, ec) || (!std::filesystem::exists(path, ec) && path.extension() != ".ptx"))
        return lint_dir(path);
    if (!std::filesystem::exists(path, ec)) throw BadInput(path.string() + ": no such PTX file");
    return lint_file(path);
}

std::string format_finding(const LintFinding& f) {
    return "FAIL lint " + f.kernel + " " + f.file + ":" + std::to_string(f.line) + ": " + f.instruction + "  (" +
           f.rule + ")";
}

}  // namespace bitgate
