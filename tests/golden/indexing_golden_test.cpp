// Fusion decisions of the indexing ops as text (support/golden.h; ARRAYC_UPDATE_GOLDENS=1
// rewrites them): a slice is a view that the elementwise kernel reads through one strided
// access, and a gather runs in the kernel of its consumers and of its index's producers.
#include <gtest/gtest.h>

#include "arrayc/arrayc.h"
#include "support/golden.h"

namespace {

using namespace arrayc;
using arrayc_test::expect_golden;

void expect_fused(const std::string& name, const std::string& what, const std::vector<Array>& outputs) {
  Stages s = inspect(outputs);
  std::vector<std::pair<std::string, std::string>> parts{{"graph", s.optimized}, {"fused", s.fused}};
  for (const auto& k : s.kernels) parts.push_back({"kernel", k.kernel});
  expect_golden("fusion/" + name, what, parts);
}

Array mat46() { return reshape(array(std::vector<float>(24, 1.0f), {24}), {4, 6}).eval(); }

TEST(IndexingGolden, SliceAndElementwiseAreOneKernel) {
  Array m = mat46();
  expect_fused("slice_elementwise", "a reversed, strided slice and the math on it are one kernel",
               {exp(m[{Slice(none, none, -1), Slice(1, none, 2)}]) * 2.0f + m[{Slice(0, 4), Slice(0, 3)}]});
}

TEST(IndexingGolden, TakeAndElementwiseAreOneKernel) {
  Array v = ravel(mat46());
  Array i = array<int64_t>({3, 0, -1}, {3});
  expect_fused("take_elementwise", "a gather, its index arithmetic and its consumers are one kernel",
               {exp(take(v, i + int64_t{1})) * 2.0f});
}

TEST(IndexingGolden, GatherOfAComputedSourceMaterializesTheSource) {
  Array m = mat46();
  Array i = array<int64_t>({3, 0, -1}, {3});
  expect_fused("take_of_computed", "a gather's computed source is materialized; the gather fuses with its consumers",
               {take(m * 3.0f, i, 0) + 1.0f});
}

TEST(IndexingGolden, ConcatenateIsOneKernel) {
  Array m = mat46();
  expect_fused("concatenate", "concatenate picks its source per region in one kernel",
               {concatenate({m, m[{_, Slice(none, none, -1)}]}, 1)});
}

}  // namespace
