// Row chains as text (issue 29): the fused schedule of softmax and layer norm (one kernel each,
// its reductions listed as "row chain"), the kernel text the cache keys on, and the variants
// that stay apart with their reasons. Files: tests/golden/fusion/row_chain_*.txt.
#include <gtest/gtest.h>

#include "arrayc/arrayc.h"
#include "support/golden.h"

namespace {

using namespace arrayc;
using arrayc_test::expect_golden;

Array mat() { return array(std::vector<float>(12, 1.0f), {3, 4}); }

Array softmax(const Array& x, int64_t axis) {
  Array e = exp(x - max(x, {axis}, true));
  return e / sum(e, {axis}, true);
}

void expect_rows(const std::string& name, const std::string& what, const std::vector<Array>& outputs) {
  Stages s = inspect(outputs);
  expect_golden("fusion/" + name, what,
                {{"graph", s.optimized}, {"fused", s.fused}, {"kernel", s.all(&KernelStages::kernel)}});
}

TEST(RowChainsGolden, SoftmaxIsOneRowKernel) {
  expect_rows("row_chain_softmax", "softmax along rows: max and sum computed in one kernel, two passes before the store",
              {softmax(mat(), 1)});
}

TEST(RowChainsGolden, LayerNormNestsTwoPasses) {
  Array x = mat();
  Array d = x - mean(x, {1}, true);
  Array y = d / sqrt(mean(d * d, {1}, true) + 1e-5f);
  expect_rows("row_chain_layer_norm", "layer norm: the variance's mean needs the mean's pass first; sqrt(var + eps) is per row",
              {y});
}

TEST(RowChainsGolden, ColumnsAndCrossedReadsStayApart) {
  Array x = mat();
  Array sq = array(std::vector<float>(16, 1.0f), {4, 4});
  expect_rows("row_chain_refused",
              "softmax along columns is not a row chain; a row's max that numpy broadcasts down the columns is "
              "materialized; so is a row reduction of another shape",
              {softmax(x, 0), sq - max(sq, {1}), x + max(transpose(x), {1})});
}

}  // namespace
