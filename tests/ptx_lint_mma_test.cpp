// The PTX lint's no-float-MMA rule: tensor-core MMA on float types fails it, naming kernel and
// instruction; integer MMA with s32 accumulation passes. And the lint reads only regular files.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "errors.hpp"
#include "ptx_lint.hpp"

namespace {

std::vector<bitgate::LintFinding> lint_one(const std::string& instruction) {
    const std::string text = ".version 8.0\n.target sm_90a\n.address_size 64\n\n.visible .entry _Z1kPf(\n"
                             "\t.param .u64 _Z1kPf_param_0\n)\n{\n\t" + instruction + ";\n\tret;\n}\n";
    return bitgate::lint_ptx(text, "t.ptx");
}

// 1-based line of the first line of `file` containing `needle`, found by plain text search.
int line_containing(const std::string& file, const std::string& needle) {
    std::ifstream in(file);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n)
        if (line.find(needle) != std::string::npos) return n;
    return 0;
}

const std::string kFixture = std::string(BITGATE_SOURCE_DIR) + "/tests/lint_fixtures/float_mma.ptx";

}  // namespace

TEST(PtxLintFloatMma, FloatTypesFail) {
    for (const char* i : {
             "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%f5, %f6, %f7, %f8}",
             "mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16 {%r1, %r2}, {%r3, %r4}, {%r5}, {%r6, %r7}",
             "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%f5, %f6, %f7, %f8}",
             "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%f5, %f6, %f7, %f8}",
             "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, %r4}, {%r5, %r6}, {%f5, %f6, %f7, %f8}",
             "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%fd1, %fd2}, {%fd3}, {%fd4}, {%fd5, %fd6}",
             "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}, %rd1, %rd2, 1, 1, 1, 0, 0",
             "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%f1, %f2, %f3, %f4}, %rd1, %rd2, 1, 1, 1, 0, 0",
             "wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 {%f1, %f2, %f3, %f4}, %rd1, %rd2, 1, 1, 1",
             "wgmma.mma_async.sync.aligned.m64n8k32.f16.e4m3.e4m3 {%r1, %r2}, %rd1, %rd2, 1, 1, 1",
             "wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32 {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8}, {%r1}, {%r2}, {%f9}",
             "tcgen05.mma.cta.kind::f16 [%r1], %rd1, %rd2, %r2, %p1",
             "tcgen05.mma.cta.kind::tf32 [%r1], %rd1, %rd2, %r2, %p1"}) {
        const auto f = lint_one(i);
        ASSERT_EQ(f.size(), 1u) << i;
        EXPECT_EQ(f[0].rule, bitgate::rule_float_mma) << i;
        EXPECT_EQ(f[0].instruction, i);
        EXPECT_EQ(f[0].kernel, "k(float*)");
    }
}

TEST(PtxLintFloatMma, IntegerMmaAndFencesPass) {
    for (const char* i : {
             "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%r1, %r2, %r3, %r4}, {%r5, %r6, %r7, %r8}, {%r9, %r10}, {%r11, %r12, %r13, %r14}",
             "mma.sync.aligned.m16n8k32.row.col.satfinite.s32.u8.s8.s32 {%r1, %r2, %r3, %r4}, {%r5, %r6, %r7, %r8}, {%r9, %r10}, {%r11, %r12, %r13, %r14}",
             "wgmma.mma_async.sync.aligned.m64n8k32.s32.s8.s8 {%r1, %r2, %r3, %r4}, %rd1, %rd2, 1",
             "tcgen05.mma.cta.kind::i8 [%r1], %rd1, %rd2, %r2, %p1",
             "wgmma.fence.sync.aligned", "wgmma.commit_group.sync.aligned", "wgmma.wait_group.sync.aligned 0",
             "wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {%r1}, [%rd1]",
             "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r1, %r2, %r3, %r4}, [%r5]"})
        EXPECT_TRUE(lint_one(i).empty()) << i;
}

TEST(PtxLintFloatMma, FixtureNamesKernelsAndInstructions) {
    const bitgate::LintReport r = bitgate::lint_path(kFixture);
    EXPECT_EQ(r.kernels, 3);
    ASSERT_EQ(r.findings.size(), 2u);
    EXPECT_EQ(r.findings[0].kernel, "bitgate::lint_fixture::mma_f16(unsigned int const*, float*)");
    EXPECT_EQ(r.findings[0].line, line_containing(kFixture, "mma.sync.aligned.m16n8k16.row.col.f32.f16"));
    EXPECT_EQ(r.findings[0].instruction.rfind("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 ", 0), 0u);
    EXPECT_EQ(r.findings[1].kernel, "bitgate::lint_fixture::wgmma_bf16(float*)");
    EXPECT_EQ(r.findings[1].line, line_containing(kFixture, "wgmma.mma_async"));
    EXPECT_EQ(r.findings[1].instruction.rfind("wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 ", 0), 0u);
    for (const auto& f : r.findings) EXPECT_EQ(f.rule, bitgate::rule_float_mma);
    const std::string line = bitgate::format_finding(r.findings[0]);
    EXPECT_NE(line.find("(float tensor-core MMA)"), std::string::npos) << line;
}

TEST(PtxLintFloatMma, DevicesAreNotRead) {
    try {
        bitgate::lint_path("/dev/zero");
        ADD_FAILURE() << "/dev/zero was linted";
    } catch (const bitgate::BadInput& e) {
        EXPECT_EQ(std::string(e.what()), "/dev/zero: PTX file is not a regular file (a character device)");
    }
}
