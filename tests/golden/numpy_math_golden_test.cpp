// The numpy math ops (issue 28) fuse like the others: a chain of them, integer and float, is one
// kernel (tests/golden/fusion/numpy_math_chain.txt; ARRAYC_UPDATE_GOLDENS=1 rewrites it).
#include <gtest/gtest.h>

#include "arrayc/arrayc.h"
#include "support/golden.h"

namespace {

using namespace arrayc;

TEST(FusionGolden, NumpyMathChainIsOneKernel) {
  Array x = array(std::vector<float>(8, 1.5f), {8});
  Array i = array(std::vector<int32_t>(8, 7), {8});
  Array y = floor(log1p(x) * 3.0f) + erf(x) - arctan2(x, hypot(x, 2.0f)) +
            cast((i >> 1) % 7 & 3, DType::Float32) + sigmoid(tan(x)) + cast(isfinite(log10(x)), DType::Float32);
  Stages s = inspect({y});
  arrayc_test::expect_golden("fusion/numpy_math_chain", "a chain of numpy math ops is one kernel",
                             {{"graph", s.optimized}, {"fused", s.fused}});
}

}  // namespace
