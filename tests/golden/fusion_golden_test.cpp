// Fusion decisions as text: which kernels a program becomes and why each boundary is there.
#include <gtest/gtest.h>

#include <regex>

#include "arrayc/arrayc.h"

namespace {

using namespace arrayc;

std::string fused(const std::vector<Array>& outputs, bool fuse = true) { return inspect(outputs, fuse).fused; }

Array vec8() { return array(std::vector<float>(8, 1.0f), {8}); }
Array mat34() { return array(std::vector<float>(12, 1.0f), {3, 4}); }

TEST(FusionGolden, SeluIsOneKernel) {
  Array x = vec8();
  EXPECT_EQ(fused({1.05f * where(x > 0.0f, x, 1.67f * exp(x) - 1.67f)}),
            "kernel 0: fused_gt_exp_mul_sub_where (%3 gt, %5 exp, %6 mul, %7 sub, %8 where, %9 mul)\n"
            "  materializes %9 float32[8]: requested output\n");
}

TEST(FusionGolden, SeluUnfusedIsOneKernelPerOp) {
  Array x = vec8();
  EXPECT_EQ(fused({1.05f * where(x > 0.0f, x, 1.67f * exp(x) - 1.67f)}, false),
            "kernel 0: exp (%5 exp)\n  materializes %5 float32[8]: fusion disabled\n"
            "kernel 1: mul (%6 mul)\n  materializes %6 float32[8]: fusion disabled\n"
            "kernel 2: sub (%7 sub)\n  materializes %7 float32[8]: fusion disabled\n"
            "kernel 3: gt (%3 gt)\n  materializes %3 bool[8]: fusion disabled\n"
            "kernel 4: where (%8 where)\n  materializes %8 float32[8]: fusion disabled\n"
            "kernel 5: mul (%9 mul)\n  materializes %9 float32[8]: requested output\n");
}

TEST(FusionGolden, ProducerChainFusesIntoReduction) {
  Array x = vec8();
  EXPECT_EQ(fused({sum(x * x)}), "kernel 0: fused_sum_mul (%1 mul, %2 sum)\n  materializes %2 float32[]: requested output\n");
}

TEST(FusionGolden, ReductionBoundaryAndSharedProducer) {
  Array y = exp(vec8());
  EXPECT_EQ(fused({y - sum(y)}),
            "kernel 0: exp (%1 exp)\n  materializes %1 float32[8]: used by 2 kernels\n"
            "kernel 1: sum (%2 sum)\n  materializes %2 float32[]: reduction\n"
            "kernel 2: sub (%5 sub)\n  materializes %5 float32[8]: requested output\n");
}

TEST(FusionGolden, DotOperandsAreMemory) {
  Array m = mat34();
  EXPECT_EQ(fused({dot(exp(m), transpose(m))}),
            "kernel 0: exp (%1 exp)\n  materializes %1 float32[3, 4]: operand of dot: BLAS reads memory\n"
            "kernel 1: dot (%3 dot)\n  materializes %3 float32[3, 3]: requested output\n");
}

TEST(FusionGolden, BroadcastOfComputedValueIsMaterialized) {
  Array x = vec8();
  EXPECT_EQ(fused({reshape(exp(x), {8, 1}) + reshape(x, {1, 8})}),
            "kernel 0: exp (%1 exp)\n  materializes %1 float32[8]: broadcast of a computed value "
            "(materialized, not recomputed per element)\n"
            "kernel 1: add (%6 add)\n  materializes %6 float32[8, 8]: requested output\n");
}

TEST(FusionGolden, OutputsOfOneShapeShareAKernel) {
  Array x = vec8();
  EXPECT_EQ(fused({exp(x) + 1.0f, exp(x) * 2.0f}),
            "kernel 0: fused_exp_add_mul (%1 exp, %3 add, %5 mul)\n"
            "  materializes %3 float32[8]: requested output\n  materializes %5 float32[8]: requested output\n");
}

TEST(FusionGolden, ReshapeOfTransposedComputationCopies) {
  Array m = mat34();
  EXPECT_EQ(fused({reshape(transpose(exp(m)), {12}) + 1.0f}),
            "kernel 0: exp (%1 exp, %2 transpose)\n"
            "  materializes %2 float32[4, 3]: reshape of a strided view needs a contiguous copy\n"
            "kernel 1: add (%5 add)\n  materializes %5 float32[12]: requested output\n");
}

TEST(FusionGolden, ViewsOfMemoryNeedNoKernel) {
  Array m = mat34();
  EXPECT_EQ(fused({transpose(m), reshape(m, {4, 3})}), "");
}

TEST(KernelGolden, SeluKernelTextIsItsCacheKey) {
  Array x = vec8();
  Stages s = inspect({1.05f * where(x > 0.0f, x, 1.67f * exp(x) - 1.67f)});
  ASSERT_EQ(s.kernels.size(), 1u);
  EXPECT_EQ(s.kernels[0].kernel,
            "kernel fused_gt_exp_mul_sub_where rank=1 ptrs=2 indexed=2\n"
            "  %0 = const 1.04999995 : float32\n"
            "  %1 = load ptr0 idx0 strides=[1] : float32\n"
            "  %2 = const 0 : float32\n"
            "  %3 = gt %1, %2 : bool\n"
            "  %4 = const 1.66999996 : float32\n"
            "  %5 = exp %1 : float32\n"
            "  %6 = mul %4, %5 : float32\n"
            "  %7 = sub %6, %4 : float32\n"
            "  %8 = where %3, %1, %7 : float32\n"
            "  %9 = mul %0, %8 : float32\n"
            "  store ptr1 idx1 strides=[1] = %9 : float32\n");
  // The loop is vectorized: <16 x float> with AVX-512, <8 x float> with AVX2, ...
  EXPECT_TRUE(std::regex_search(s.kernels[0].opt, std::regex("<(4|8|16) x float>"))) << s.kernels[0].opt;
}

TEST(FusionGolden, LongChainsSplitAtTheKernelSizeLimit) {
  // 2500 adds of one chain: kernels of 1024 nodes, each boundary saying why.
  Array x = vec8();
  Array y = x;
  for (int i = 0; i < 2500; ++i) y = y + x;
  std::string f = fused({y});
  std::vector<std::string> reasons;
  for (size_t at = f.find("materializes"); at != std::string::npos; at = f.find("materializes", at + 1))
    reasons.push_back(f.substr(f.find(": ", at) + 2, f.find('\n', at) - f.find(": ", at) - 2));
  EXPECT_EQ(reasons, (std::vector<std::string>{"kernel size limit (1024 ops)", "kernel size limit (1024 ops)",
                                               "requested output"}));
  EXPECT_EQ(y.to_vector<float>(), std::vector<float>(8, 2501.0f));
}

TEST(FusionGolden, ChainsFarPastTheLimitRun) {
  // 100000 adds: the kernel builder recursed once per fused node and overflowed the stack at
  // about 37000, and LLVM took 10 s on one 32000-node loop body. Now 98 kernels, about a second.
  Array x = vec8();
  Array y = x;
  for (int i = 0; i < 100000; ++i) y = y + x;
  EXPECT_EQ(y.to_vector<float>(), std::vector<float>(8, 100001.0f));
}

TEST(KernelGolden, TransposedOperandHasGenericStrides) {
  Array m = mat34();
  Stages s = inspect({transpose(m) * 2.0f});
  ASSERT_EQ(s.kernels.size(), 1u);
  EXPECT_NE(s.kernels[0].kernel.find("load ptr0 idx0 strides=[1,s]"), std::string::npos) << s.kernels[0].kernel;
}

}  // namespace
