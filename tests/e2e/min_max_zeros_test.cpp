// maximum and minimum of equal operands give the second one, as numpy's do, so the sign of a zero
// result is that operand's: minimum(-0.0, 0.0) is 0.0 and maximum(0.0, -0.0) is -0.0 (IEEE
// 754-2019's minimum and maximum, which the kernels used before, order -0.0 below 0.0). The
// random differential tester found it through arctan2 of a minimum (seed 2001, program 2585):
// arctan2 tells the zeros apart. Every float dtype, fused and unfused, checked with signed zeros.
#include <cmath>

#include "support/devices.h"
#include "support/reference.h"

namespace {

using namespace arrayc;
using namespace arrayc_test;

class MinMaxZeros : public DeviceTest {};
ARRAYC_DEVICE_SUITE(MinMaxZeros);

TEST_P(MinMaxZeros, EqualOperandsGiveTheSecondOneWithItsSignOfZero) {
  const double nan = std::nan("");
  // Every pair of these, as a row against a column: zeros of both signs, ties, NaN, infinities.
  const std::vector<double> v = {0.0, -0.0, 1.0, -1.0, nan, INFINITY, -INFINITY, 0.0, -0.0};
  const int64_t n = static_cast<int64_t>(v.size());
  CompareOptions signed_zero;
  signed_zero.signed_zero = true;
  for (DType t : {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64}) {
    for (bool fused : {true, false}) {
      SCOPED_TRACE(std::string(dtype_name(t)) + (fused ? " fused" : " unfused"));
      FusionScope scope(fused);
      Array a = cast(array<double>(v, {n, 1}, device()), t).eval();
      Array b = cast(array<double>(v, {1, n}, device()), t).eval();
      Array lo = minimum(a, b), hi = maximum(a, b);
      EXPECT_TRUE(matches_reference(lo, signed_zero));
      EXPECT_TRUE(matches_reference(hi, signed_zero));
      // and through a consumer that tells the zeros apart, fused with them
      EXPECT_TRUE(matches_reference(arctan2(minimum(a, b), minimum(a, b)), signed_zero));
      EXPECT_TRUE(matches_reference(arctan2(maximum(b, a), maximum(b, a)), signed_zero));
    }
  }
}

}  // namespace
