// Fusion decisions as text: which kernels a program becomes and why each boundary is there, as
// inspect() prints them (the whole pipeline). Each case's graph after the passes (the numbering
// the fused text refers to) and its fused schedule are in tests/golden/fusion/<case>.txt
// (support/golden.h; ARRAYC_UPDATE_GOLDENS=1 rewrites them). The passes alone are in
// passes_golden_test.cpp.
#include <gtest/gtest.h>

#include <regex>

#include "arrayc/arrayc.h"
#include "support/golden.h"

namespace {

using namespace arrayc;
using arrayc_test::expect_golden;

std::string fused(const std::vector<Array>& outputs, bool fuse = true) { return inspect(outputs, fuse).fused; }

void expect_fused(const std::string& name, const std::string& what, const std::vector<Array>& outputs,
                  bool fuse = true) {
  Stages s = inspect(outputs, fuse);
  expect_golden("fusion/" + name, what, {{"graph", s.optimized}, {"fused", s.fused}});
}

Array vec8() { return array(std::vector<float>(8, 1.0f), {8}); }
Array mat34() { return array(std::vector<float>(12, 1.0f), {3, 4}); }

TEST(FusionGolden, SeluIsOneKernel) {
  Array x = vec8();
  expect_fused("selu", "SELU is one kernel", {1.05f * where(x > 0.0f, x, 1.67f * exp(x) - 1.67f)});
}

TEST(FusionGolden, SeluUnfusedIsOneKernelPerOp) {
  Array x = vec8();
  expect_fused("selu_unfused", "with fusion off, SELU is one kernel per op",
               {1.05f * where(x > 0.0f, x, 1.67f * exp(x) - 1.67f)}, /*fuse=*/false);
}

TEST(FusionGolden, ProducerChainFusesIntoReduction) {
  Array x = vec8();
  expect_fused("producer_into_reduction", "a producer chain fuses into the reduction that consumes it",
               {sum(x * x)});
}

TEST(FusionGolden, ReductionBoundaryAndSharedProducer) {
  Array y = exp(vec8());
  set_row_chain_fusion(false);  // row chains (issue 29) would make this one kernel (row_chains_golden_test)
  struct Restore { ~Restore() { set_row_chain_fusion(true); } } restore;
  expect_fused("reduction_and_shared_producer",
               "a reduction ends its kernel; a producer read by two kernels is materialized",
               {y - sum(y)});
}

TEST(FusionGolden, DotOperandsAreMemory) {
  Array m = mat34();
  expect_fused("dot_operands", "a computed operand of a product is materialized: BLAS reads memory",
               {dot(exp(m), transpose(m))});
}

TEST(FusionGolden, BroadcastOfComputedValueIsMaterialized) {
  Array x = vec8();
  expect_fused("broadcast_of_computed", "a computed value under an expanding broadcast is materialized",
               {reshape(exp(x), {8, 1}) + reshape(x, {1, 8})});
}

TEST(FusionGolden, OutputsOfOneShapeShareAKernel) {
  Array x = vec8();
  expect_fused("outputs_of_one_shape",
               "requested outputs of one shape share one kernel", {exp(x) + 1.0f, exp(x) * 2.0f});
}

TEST(FusionGolden, ReshapeOfTransposedComputationCopies) {
  Array m = mat34();
  expect_fused("reshape_of_transposed",
               "a reshape that strides cannot express materializes the node under it",
               {reshape(transpose(exp(m)), {12}) + 1.0f});
}

TEST(FusionGolden, ViewsOfMemoryNeedNoKernel) {
  Array m = mat34();
  expect_fused("views_of_memory",
               "outputs that are views of memory need no kernel", {transpose(m), reshape(m, {4, 3})});
}

TEST(KernelGolden, SeluKernelTextIsItsCacheKey) {
  Array x = vec8();
  Stages s = inspect({1.05f * where(x > 0.0f, x, 1.67f * exp(x) - 1.67f)});
  ASSERT_EQ(s.kernels.size(), 1u);
  expect_golden("fusion/selu_kernel", "SELU's kernel text, its cache key",
                {{"graph", s.optimized}, {"kernel", s.kernels[0].kernel}});
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
  const std::string split = "split: compile cost (its consumer's kernel is at 1024 of 1024, add adds 1)";
  EXPECT_EQ(reasons, (std::vector<std::string>{split, split, "requested output"}));
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

// ---- matrix products (issue 29) ----
TEST(FusionGolden, ProductEpilogueRunsInTheProductStep) {
  Array m = mat34();
  Array w = array(std::vector<float>(8, 0.5f), {4, 2});
  Array b = array(std::vector<float>{1.0f, -1.0f}, {2});
  expect_fused("dot_epilogue", "a product's elementwise consumers run in its step, on each panel of it",
               {maximum(dot(m, w) + b, 0.0f)});
}

TEST(FusionGolden, GramProductIsOneTriangle) {
  Array m = mat34();
  expect_fused("dot_gram", "x @ x.T: product-structure computes one triangle (syrk) and mirrors it",
               {dot(m, transpose(m)) * 2.0f});
}

TEST(KernelGolden, TransposedOperandHasGenericStrides) {
  Array m = mat34();
  Stages s = inspect({transpose(m) * 2.0f});
  ASSERT_EQ(s.kernels.size(), 1u);
  EXPECT_NE(s.kernels[0].kernel.find("load ptr0 idx0 strides=[1,s]"), std::string::npos) << s.kernels[0].kernel;
}

}  // namespace
