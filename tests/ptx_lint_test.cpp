// The PTX lint: each rule fires on the instruction it names and on nothing the contract allows;
// the parser finds kernels, lines and instructions in real nvcc output; the real kernels pass.
#include <CLI/CLI.hpp>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli_lint.hpp"
#include "errors.hpp"
#include "ptx_lint.hpp"

namespace fs = std::filesystem;
using bitgate::BadInput;
using bitgate::lint_ptx;
using bitgate::lint_ptx_module;
using bitgate::LintFinding;

namespace {

// A module with one kernel, `void k(float*)`, whose body holds `body` from line 8 on.
std::string module(const std::string& body) {
    return ".version 8.0\n"
           ".target sm_90\n"
           ".address_size 64\n"
           "\n"
           ".visible .entry _Z1kPf(\n"
           "\t.param .u64 _Z1kPf_param_0\n"
           ")\n"
           "{\n" +
           body +
           "\n\tret;\n"
           "}\n";
}

std::vector<LintFinding> lint_one(const std::string& instruction) {
    return lint_ptx(module("\t" + instruction + ";"), "t.ptx");
}

std::string describe(const std::vector<LintFinding>& fs) {
    std::string s;
    for (const auto& f : fs) s += bitgate::format_finding(f) + "\n";
    return s.empty() ? "(no findings)" : s;
}

void expect_rule(const std::string& instruction, std::string_view rule) {
    const auto f = lint_one(instruction);
    ASSERT_EQ(f.size(), 1u) << instruction << "\n" << describe(f);
    EXPECT_NE(f[0].rule.find(rule), std::string::npos) << instruction << ": rule was " << f[0].rule;
    EXPECT_EQ(f[0].instruction, instruction);
    EXPECT_EQ(f[0].line, 9);
    EXPECT_EQ(f[0].kernel, "k(float*)");
}

// ---- each rule fires ------------------------------------------------------------------------------

TEST(PtxLintRules, Approximations) {
    for (const char* i : {"ex2.approx.f32 %f2, %f1", "ex2.approx.ftz.f32 %f2, %f1", "lg2.approx.f32 %f2, %f1",
                          "sin.approx.f32 %f2, %f1", "cos.approx.f32 %f2, %f1", "tanh.approx.f32 %f2, %f1",
                          "rsqrt.approx.f32 %f2, %f1", "rsqrt.approx.ftz.f64 %fd2, %fd1", "rcp.approx.f32 %f2, %f1",
                          "rcp.approx.ftz.f64 %fd2, %fd1", "div.approx.f32 %f3, %f1, %f2", "sqrt.approx.f32 %f2, %f1",
                          "ex2.approx.f16 %rs2, %rs1", "tanh.approx.bf16x2 %r2, %r1"})
        expect_rule(i, bitgate::rule_approx);
}

TEST(PtxLintRules, FlushToZero) {
    for (const char* i : {"add.rn.ftz.f32 %f3, %f1, %f2", "fma.rn.ftz.f32 %f4, %f1, %f2, %f3", "max.ftz.f32 %f3, %f1, %f2",
                          "abs.ftz.f32 %f2, %f1", "cvt.rzi.ftz.s32.f32 %r1, %f1", "setp.lt.ftz.f32 %p1, %f1, %f2",
                          "sqrt.rn.ftz.f32 %f2, %f1"})
        expect_rule(i, bitgate::rule_ftz);
    // Both rules, one line.
    const auto f = lint_one("ex2.approx.ftz.f32 %f2, %f1");
    ASSERT_EQ(f.size(), 1u);
    EXPECT_EQ(f[0].rule, std::string(bitgate::rule_approx) + ", " + std::string(bitgate::rule_ftz));
}

TEST(PtxLintRules, DivFull) { expect_rule("div.full.f32 %f3, %f1, %f2", bitgate::rule_div_full); }

TEST(PtxLintRules, FloatAtomics) {
    for (const char* i : {"atom.global.add.f32 %f2, [%rd1], %f1", "red.global.add.f32 [%rd1], %f1",
                          "atom.shared.add.f64 %fd2, [%rd1], %fd1", "red.global.add.noftz.f16 [%rd1], %rs1",
                          "atom.global.add.noftz.bf16x2 %r2, [%rd1], %r1", "atom.global.v2.f32.add {%f3, %f4}, [%rd1], {%f1, %f2}",
                          "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%rd1], [%r1], 256"})
        expect_rule(i, bitgate::rule_float_atomic);
}

TEST(PtxLintRules, ContractibleArithmetic) {
    for (const char* i : {"add.f32 %f3, %f1, %f2", "sub.f32 %f3, %f1, %f2", "mul.f32 %f3, %f1, %f2", "add.sat.f32 %f3, %f1, %f2",
                          "add.f64 %fd3, %fd1, %fd2", "mul.f64 %fd3, %fd1, %fd2", "add.f16 %rs3, %rs1, %rs2",
                          "mul.f16x2 %r3, %r1, %r2", "sub.bf16 %rs3, %rs1, %rs2", "add.bf16x2 %r3, %r1, %r2"})
        expect_rule(i, bitgate::rule_no_rounding);
}

// ---- and nothing the contract allows ----------------------------------------------------------------

TEST(PtxLintRules, AllowedInstructionsPass) {
    for (const char* i :
         {"add.rn.f32 %f3, %f1, %f2", "sub.rz.f32 %f3, %f1, %f2", "mul.rm.f32 %f3, %f1, %f2", "add.rp.f64 %fd3, %fd1, %fd2",
          "add.rn.f16 %rs3, %rs1, %rs2", "mul.rn.f16x2 %r3, %r1, %r2", "add.rn.bf16 %rs3, %rs1, %rs2",
          "add.rz.f32 %f4, %f1, %f3", "fma.rn.f32 %f4, %f1, %f2, %f3", "fma.rn.f64 %fd4, %fd1, %fd2, %fd3",
          "div.rn.f32 %f3, %f1, %f2", "rcp.rn.f32 %f2, %f1", "sqrt.rn.f32 %f2, %f1", "sqrt.rn.f64 %fd2, %fd1",
          "add.s32 %r3, %r1, %r2", "add.u64 %rd3, %rd1, %rd2", "sub.s64 %rd3, %rd1, %rd2", "mul.lo.s32 %r3, %r1, %r2",
          "mul.wide.s32 %rd1, %r1, 4", "mul.hi.u32 %r3, %r1, %r2", "mad.lo.s32 %r4, %r1, %r2, %r3",
          "cvt.rn.f16.f32 %rs1, %f1", "cvt.rni.f32.f32 %f2, %f1", "cvt.rzi.s32.f32 %r1, %f1", "cvt.f32.f16 %f1, %rs1",
          "max.f32 %f3, %f1, %f2", "min.f32 %f3, %f1, %f2", "abs.f32 %f2, %f1", "neg.f32 %f2, %f1",
          "copysign.f32 %f3, %f1, %f2", "setp.eq.f32 %p1, %f1, 0f00000000", "selp.f32 %f3, %f1, %f2, %p1",
          "ld.global.nc.f32 %f1, [%rd1]", "st.global.f32 [%rd1], %f1", "mov.b32 %f1, %r1",
          "atom.global.add.u32 %r2, [%rd1], %r1", "red.global.add.u32 [%rd1], %r1", "atom.global.exch.b32 %r2, [%rd1], %r1",
          "atom.global.cas.b32 %r3, [%rd1], %r1, %r2", "shfl.sync.bfly.b32 %r2|%p1, %r1, 16, 31, -1",
          "dp4a.s32.s32 %r4, %r1, %r2, %r3", "bra.uni $L__BB0_2", "bar.sync 0",
          "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%r1, %r2, %r3, %r4}, {%r5, %r6, %r7, %r8}, {%r9, %r10}, "
          "{%r11, %r12, %r13, %r14}"})
        EXPECT_TRUE(lint_one(i).empty()) << i << "\n" << describe(lint_one(i));
}

// ---- the parser -------------------------------------------------------------------------------------

TEST(PtxLintParser, LinesKernelsAndScopes) {
    const std::string text =
        ".version 8.0\n"                                                         // 1
        ".target sm_90\n"                                                        // 2
        ".global .align 4 .b8 table[8] = {1, 2, 3, 4, 5, 6, 7, 8};\n"            // 3
        ".extern .func (.param .b32 func_retval0) vprintf\n"                     // 4
        "(\n\t.param .b64 vprintf_param_0\n)\n;\n"                               // 5-8
        ".visible .func (.param .b32 func_retval0) _ZN2ns6helperEff(\n"          // 9
        "\t.param .b32 a, .param .b32 b)\n"                                      // 10
        "{\n"                                                                    // 11
        "\tmul.f32 %f3, %f1, %f2; // mul.f32 in a comment is not code\n"         // 12
        "\tret;\n"                                                               // 13
        "}\n"                                                                    // 14
        ".visible .entry _Z3twoPfi(\n"                                           // 15
        "\t.param .u64 p, .param .u32 n\n"                                       // 16
        ")\n"                                                                    // 17
        ".maxntid 256, 1, 1\n"                                                   // 18
        "{\n"                                                                    // 19
        "\t.reg .f32 %f<9>;\n"                                                   // 20
        "\tld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1];\n"                     // 21
        "\t@%p1 add.f32 %f5, %f1, %f2;\n"                                        // 22
        "$L__BB1_2:\n"                                                           // 23
        "\t{add.f16 %rs3,%rs1,%rs2;\n"                                           // 24
        "\t}\n"                                                                  // 25
        "\t/* ex2.approx.f32 %f1, %f1;\n"                                        // 26
        "\t   still a comment */ sub.rn.f32 %f6, %f1, %f2; sub.f32 %f7, %f1, %f2;\n"  // 27
        "\t.pragma \"nounroll; {\";\n"                                           // 28
        "$L__BB1_3: { cvt.rn.f16.f32 %rs4, %f1;}\n"                              // 29
        "\t@!%p2 bra\n"                                                          // 30
        "\t\t$L__BB1_2;\n"                                                       // 31
        "\tmul.f32\n"                                                            // 32
        "\t\t%f8, %f1, %f2;\n"                                                   // 33
        "\tret;\n"                                                               // 34
        "}\n";                                                                   // 35
    const auto r = lint_ptx_module(text, "m.ptx");
    EXPECT_EQ(r.kernels, 1);
    ASSERT_EQ(r.findings.size(), 5u) << describe(r.findings);
    const std::vector<std::pair<int, std::string>> want = {
        {12, "mul.f32 %f3, %f1, %f2"}, {22, "@%p1 add.f32 %f5, %f1, %f2"}, {24, "add.f16 %rs3,%rs1,%rs2"},
        {27, "sub.f32 %f7, %f1, %f2"}, {32, "mul.f32 %f8, %f1, %f2"}};
    for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(r.findings[i].line, want[i].first) << describe(r.findings);
        EXPECT_EQ(r.findings[i].instruction, want[i].second);
        EXPECT_EQ(r.findings[i].kernel, i == 0 ? "ns::helper(float, float)" : "two(float*, int)");
        EXPECT_EQ(r.findings[i].file, "m.ptx");
    }
}

TEST(PtxLintParser, ExternCKernelsKeepTheirNames) {
    const auto f = lint_ptx(".visible .entry k_plain(.param .u64 p)\n{\n\tmul.f32 %f3, %f1, %f2;\n}\n", "p.ptx");
    ASSERT_EQ(f.size(), 1u);
    EXPECT_EQ(f[0].kernel, "k_plain");
    EXPECT_EQ(bitgate::demangle("_ZN7bitgate4cuda12_GLOBAL__N_16kernelEPKfPfl"),
              "bitgate::cuda::(anonymous namespace)::kernel(float const*, float*, long)");
}

TEST(PtxLintParser, FindingLine) {
    const auto f = lint_one("add.f32 %f3, %f1, %f2");
    ASSERT_EQ(f.size(), 1u);
    EXPECT_EQ(bitgate::format_finding(f[0]),
              "FAIL lint k(float*) t.ptx:9: add.f32 %f3, %f1, %f2  (no rounding modifier, contractible)");
}

// ---- files, directories and the verb ------------------------------------------------------------

class PtxLintFiles : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("bitgate_lint_" + std::to_string(getpid()) + "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    std::string put(const std::string& name, const std::string& text) {
        std::ofstream(dir_ / name) << text;
        return (dir_ / name).string();
    }
    // Runs `bitgate lint ARGS...` through the verb; returns rc, fills out.
    int run(std::vector<std::string> args, std::string& out) {
        CLI::App app("bitgate");
        int rc = -1;
        bitgate::add_lint_verb(app, rc);
        args.insert(args.begin(), "lint");
        std::reverse(args.begin(), args.end());  // CLI11 takes a reversed vector
        ::testing::internal::CaptureStdout();
        try {
            app.parse(args);
        } catch (...) {
            out = ::testing::internal::GetCapturedStdout();
            throw;
        }
        out = ::testing::internal::GetCapturedStdout();
        return rc;
    }
    fs::path dir_;
};

TEST_F(PtxLintFiles, VerbPrintsFindingsAndSummary) {
    put("a.ptx", module("\tadd.rn.f32 %f3, %f1, %f2;"));
    const std::string b = put("b.ptx", module("\tmul.f32 %f3, %f1, %f2;\n\tex2.approx.f32 %f4, %f3;"));
    std::string out;
    EXPECT_EQ(run({"--ptx", dir_.string()}, out), 1);
    EXPECT_EQ(out, "FAIL lint k(float*) " + b + ":9: mul.f32 %f3, %f1, %f2  (no rounding modifier, contractible)\n" +
                       "FAIL lint k(float*) " + b + ":10: ex2.approx.f32 %f4, %f3  (approximation)\n" +
                       "lint: 2 kernels in 2 files, 2 findings\n");
    EXPECT_EQ(run({"--ptx", (dir_ / "a.ptx").string()}, out), 0);
    EXPECT_EQ(out, "lint: 1 kernels in 1 files, 0 findings\n");
}

TEST_F(PtxLintFiles, MissingOrEmptyPtxIsBadInput) {
    std::string out;
    try {
        run({"--ptx", dir_.string()}, out);
        ADD_FAILURE() << "an empty directory was linted";
    } catch (const BadInput& e) {
        EXPECT_EQ(std::string(e.what()), dir_.string() + ": no PTX here (built without CUDA?)");
    }
    try {
        run({"--ptx", (dir_ / "absent").string()}, out);
        ADD_FAILURE() << "a missing directory was linted";
    } catch (const BadInput& e) {
        EXPECT_EQ(std::string(e.what()), (dir_ / "absent").string() + ": no PTX here (built without CUDA?)");
    }
    try {
        run({"--ptx", (dir_ / "absent.ptx").string()}, out);
        ADD_FAILURE() << "a missing file was linted";
    } catch (const BadInput& e) {
        EXPECT_EQ(std::string(e.what()), (dir_ / "absent.ptx").string() + ": no such PTX file");
    }
}

// ---- nvcc's own output (CUDA builds) --------------------------------------------------------------

const fs::path kFixturePtx = fs::path(BITGATE_BINARY_DIR) / "ptx_fixtures";
const fs::path kKernelPtx = fs::path(BITGATE_BINARY_DIR) / "ptx";

#define REQUIRE_PTX(path)                                                                              \
    do {                                                                                               \
        if (!fs::exists(path))                                                                         \
            GTEST_SKIP() << (path).string() << " does not exist: this build has no CUDA compiler, so " \
                         << "there is no PTX to lint (the host-only build)";                           \
    } while (0)

std::string line_of(const fs::path& file, int n) {
    std::ifstream in(file);
    std::string line;
    for (int i = 0; i < n && std::getline(in, line); ++i) {
    }
    return line;
}

TEST(PtxLintNvcc, FastMathFixtureFails) {
    REQUIRE_PTX(kFixturePtx / "fastmath.ptx");
    const auto r = bitgate::lint_path(kFixturePtx / "fastmath.ptx");
    EXPECT_EQ(r.kernels, 1);
    ASSERT_FALSE(r.findings.empty());
    bool rcp = false, ftz = false;
    for (const auto& f : r.findings) {
        EXPECT_EQ(f.kernel, "bitgate::lint_fixture::scale_fastmath(float const*, float*, float, int)");
        EXPECT_NE(line_of(kFixturePtx / "fastmath.ptx", f.line).find(f.instruction.substr(0, f.instruction.find(' '))),
                  std::string::npos)
            << "line " << f.line << " does not hold " << f.instruction;
        rcp |= f.instruction.rfind("rcp.approx.ftz.f32 ", 0) == 0;
        ftz |= f.rule.find(bitgate::rule_ftz) != std::string::npos;
    }
    EXPECT_TRUE(rcp) << describe(r.findings);
    EXPECT_TRUE(ftz) << describe(r.findings);
}

TEST(PtxLintNvcc, ExpIntrinsicFixtureFails) {
    REQUIRE_PTX(kFixturePtx / "expf.ptx");
    const auto r = bitgate::lint_path(kFixturePtx / "expf.ptx");
    ASSERT_EQ(r.findings.size(), 1u) << describe(r.findings);
    const auto& f = r.findings[0];
    EXPECT_EQ(f.kernel, "bitgate::lint_fixture::exp_intrinsic(float const*, float*, int)");
    EXPECT_EQ(f.instruction.rfind("ex2.approx.f32 ", 0), 0u) << f.instruction;
    EXPECT_EQ(f.rule, bitgate::rule_approx);
    EXPECT_NE(line_of(kFixturePtx / "expf.ptx", f.line).find("ex2.approx.f32"), std::string::npos);
}

TEST(PtxLintNvcc, CleanFixturePasses) {
    REQUIRE_PTX(kFixturePtx / "clean.ptx");
    const auto r = bitgate::lint_path(kFixturePtx / "clean.ptx");
    EXPECT_EQ(r.kernels, 1);
    EXPECT_TRUE(r.findings.empty()) << describe(r.findings);
    // The fixture exercises what it claims to: IEEE division, reciprocal and square root are there.
    std::ifstream in(kFixturePtx / "clean.ptx");
    std::stringstream s;
    s << in.rdbuf();
    for (const char* op : {"div.rn.f32", "rcp.rn.f32", "sqrt.rn.f32", "fma.rn.f32", "cvt.rn.f16.f32", "dp4a", "shfl.sync"})
        EXPECT_NE(s.str().find(op), std::string::npos) << op;
}

// The contract-breaking mutants: rms_norm's rsqrtf and swiglu's __expf are caught by the lint
// too, not only by the device diff.
void expect_caught(const fs::path& ptx, const std::string& op) {
    const auto r = bitgate::lint_path(ptx);
    bool found = false;
    for (const auto& f : r.findings) found |= f.instruction.rfind(op, 0) == 0 && f.rule.find(bitgate::rule_approx) != std::string::npos;
    EXPECT_TRUE(found) << op << " not reported in " << ptx << ": " << describe(r.findings);
}

TEST(PtxLintNvcc, RsqrtfMutantFails) {
    REQUIRE_PTX(kFixturePtx / "rms_norm_mutants.ptx");
    expect_caught(kFixturePtx / "rms_norm_mutants.ptx", "rsqrt.approx");
}

TEST(PtxLintNvcc, ExpfMutantFails) {
    REQUIRE_PTX(kFixturePtx / "swiglu_mutants.ptx");
    expect_caught(kFixturePtx / "swiglu_mutants.ptx", "ex2.approx");
}

TEST(PtxLintNvcc, EveryKernelPasses) {
    REQUIRE_PTX(kKernelPtx);
    const auto r = bitgate::lint_dir(kKernelPtx);
    size_t sources = 0;
    for (const auto& e : fs::directory_iterator(fs::path(BITGATE_SOURCE_DIR) / "kernels"))
        sources += e.path().extension() == ".cu";
#if defined(BITGATE_HAVE_SM90A)
    // The sm_90a kernels are linted too where they are built (cmake/sm90a.cmake).
    for (const auto& e : fs::directory_iterator(fs::path(BITGATE_SOURCE_DIR) / "kernels" / "sm90a"))
        sources += e.path().extension() == ".cu";
#endif
    EXPECT_EQ(size_t(r.files), sources) << "one .ptx per kernels/*.cu (and kernels/sm90a/*.cu where built)";
    EXPECT_GE(r.kernels, 1);
    EXPECT_TRUE(r.findings.empty()) << describe(r.findings);
}

}  // namespace
