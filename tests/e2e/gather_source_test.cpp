// Requested outputs of one shape share a kernel unless one reads another from memory. A gather
// reads its source at computed positions, so from memory: an output that gathers from another
// output is computed by a later kernel, after the first is written (issue 26: grad of x.at(i).add
// read its own kernel's output before it was written once x * 1.0 stopped being folded away).
#include "support/data.h"
#include "support/devices.h"
#include "support/reference.h"

namespace {

using namespace arrayc;
using namespace arrayc_test;

class GatherSource : public DeviceTest {};
ARRAYC_DEVICE_SUITE(GatherSource);

TEST_P(GatherSource, AnOutputGatheredByAnotherOutputIsWrittenFirst) {
  for (int64_t n : {1, 5, 64, 1000}) {
    for (DType t : {DType::Float32, DType::Float64, DType::Int32}) {
      SCOPED_TRACE(std::to_string(n) + " " + dtype_name(t));
      Array x = random_array(t, {n}, 3 + n).eval();
      Array i = random_array(DType::Int64, {n}, 4 + n, -static_cast<double>(n), static_cast<double>(n) - 1).eval();
      Array y = x * full({}, 3.0, t, device()) + full({}, 1.0, t, device());
      Array z = take(y, i) * full({}, 2.0, t, device());  // negative indices count from the end
      Array w = take(y, i, 0) + y;                        // reads y both ways
      Stages st = inspect({y, z, w});
      EXPECT_GE(st.kernels.size(), 2u) << st.fused;
      eval({y, z, w});
      EXPECT_MATCHES_REFERENCE(y);
      EXPECT_MATCHES_REFERENCE(z);
      EXPECT_MATCHES_REFERENCE(w);
    }
  }
}

// The case that showed it: the gradients of an indexed add, through grad.
TEST_P(GatherSource, GradientOfAnIndexedAddByAScaledWeight) {
  Array x = zeros({5}, DType::Float32, device());
  Array i = array<int64_t>({1, 3, 1, -1, 7}, {5}, device());  // 7 is dropped
  Array v = array<float>({1, 2, 3, 4, 5}, {5}, device());
  for (float s : {1.0f, 2.0f}) {
    Array w = array<float>({10, 20, 30, 40, 50}, {5}, device()) * s;
    auto add = [&](const Array& x, const Array& v) { return sum(w * x.at(i).add(v)); };
    std::vector<Array> g = grad(add, {0, 1})(x, v);
    EXPECT_EQ(g[0].to_vector<float>(), (std::vector<float>{10 * s, 20 * s, 30 * s, 40 * s, 50 * s}));
    EXPECT_EQ(g[1].to_vector<float>(), (std::vector<float>{20 * s, 40 * s, 20 * s, 50 * s, 0}));
  }
}

}  // namespace
