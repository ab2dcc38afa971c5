// Integers exact end to end: int64 values above 2^53 in full, scalars and arange do not pass
// through double; an integer scalar outside an int32 array's range raises (numpy 2, NEP 50);
// reading floats as integers (item, to_vector) follows the cast op's rule; integer powers with
// a negative constant exponent raise as numpy does; arange refuses more elements than int64.
#include <cmath>
#include <limits>

#include "support/data.h"
#include "support/devices.h"
#include "support/errors.h"
#include "support/reference.h"

namespace {

using namespace arrayc;
using namespace arrayc_test;

class Integers : public DeviceTest {};
ARRAYC_DEVICE_SUITE(Integers);

// Values that double cannot hold (and their neighbours that it can).
const int64_t kBig[] = {(int64_t{1} << 53) + 1, -((int64_t{1} << 53) + 1), (int64_t{1} << 62) + 3,
                        std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min(),
                        std::numeric_limits<int64_t>::max() - 1, 9007199254740993, int64_t{1} << 53};

TEST_P(Integers, Int64ValuesAreExactInFullScalarsAndArange) {
  for (int64_t v : kBig) {
    SCOPED_TRACE(v);
    EXPECT_EQ(full({3}, v, DType::Int64).to_vector<int64_t>(), std::vector<int64_t>(3, v));
    EXPECT_EQ(full({}, v, DType::Int64).item<int64_t>(), v);
    EXPECT_EQ((zeros({2}, DType::Int64) + v).to_vector<int64_t>(), std::vector<int64_t>(2, v));
    EXPECT_EQ((v - zeros({2}, DType::Int64)).to_vector<int64_t>(), std::vector<int64_t>(2, v));
    EXPECT_EQ(maximum(full({1}, v, DType::Int64), v).item<int64_t>(), v);
    EXPECT_EQ(where(full({1}, true, DType::Bool), v, zeros({1}, DType::Int64)).item<int64_t>(), v);
    EXPECT_TRUE((full({1}, v, DType::Int64) == v).item<bool>());
    // A bool array with an integer is int64, as numpy's default integer.
    EXPECT_EQ((zeros({1}, DType::Bool) + v).item<int64_t>(), v);
    // arange's int64 indices plus a big offset, evaluated and interpreted.
    if (v <= std::numeric_limits<int64_t>::max() - 5) {
      Array a = arange(5) + v;
      EXPECT_EQ(a.to_vector<int64_t>(), (std::vector<int64_t>{v, v + 1, v + 2, v + 3, v + 4}));
      EXPECT_MATCHES_REFERENCE(a);
    }
    // To a float dtype: one rounding, not two through double.
    EXPECT_EQ(full({1}, v, DType::Float32).item<float>(), static_cast<float>(v));
    EXPECT_EQ(full({1}, v, DType::Float64).item<double>(), static_cast<double>(v));
    EXPECT_EQ((zeros({1}, DType::Float32) + v).item<float>(), static_cast<float>(v));
  }
  // 2^60 + 2^36 + 1: through double it is a tie that rounds down; directly it rounds up.
  int64_t tie = (int64_t{1} << 60) + (int64_t{1} << 36) + 1;
  EXPECT_EQ(full({1}, tie, DType::Float32).item<float>(), 0x1.000002p60f);
}

TEST_P(Integers, ScalarsOutsideInt32RaiseBesideAnInt32Array) {
  Array x = full({3}, 7, DType::Int32);
  for (int64_t v : {int64_t{1} << 40, int64_t{2147483648}, int64_t{-2147483649}, std::numeric_limits<int64_t>::min()}) {
    SCOPED_TRACE(v);
    std::string bad = "the integer " + std::to_string(v) + " is out of bounds for int32";
    EXPECT_ARRAYC_ERROR(x + v, "add: " + bad);
    EXPECT_ARRAYC_ERROR(v - x, "subtract: " + bad);
    EXPECT_ARRAYC_ERROR(x * v, "multiply: " + bad);
    EXPECT_ARRAYC_ERROR(x == v, "equal: " + bad);
    EXPECT_ARRAYC_ERROR(maximum(x, v), "maximum: " + bad);
    EXPECT_ARRAYC_ERROR(where(x > 0, x, v), "where: " + bad);
    EXPECT_ARRAYC_ERROR(full({2}, v, DType::Int32), "full: " + bad);
  }
  // The edges fit, and stay int32.
  for (int64_t v : {int64_t{2147483647}, int64_t{-2147483648}}) {
    Array y = zeros({2}, DType::Int32) + v;
    EXPECT_EQ(y.dtype(), DType::Int32);
    EXPECT_EQ(y.to_vector<int64_t>(), std::vector<int64_t>(2, v));
  }
  // A float array takes any integer (rounded), an int64 array any int64.
  EXPECT_EQ((zeros({1}, DType::Float32) + (int64_t{1} << 40)).dtype(), DType::Float32);
  EXPECT_EQ((zeros({1}, DType::Int64) + (int64_t{1} << 40)).item<int64_t>(), int64_t{1} << 40);
}

// item and to_vector read floats into integer types by the cast op's rule: truncate, saturate,
// NaN -> 0 (a C++ conversion of those is undefined).
TEST_P(Integers, ReadingFloatsAsIntegersFollowsTheCastRule) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> v = {std::nan(""), inf, -inf, 1e30, -1e30, 3.7, -3.7, 2147483647.5, -2147483648.5,
                           9.3e18, -9.3e18, 0.0, -0.0};
  for (DType t : {DType::Float32, DType::Float64}) {
    SCOPED_TRACE(dtype_name(t));
    Array x = cast(array(v, {static_cast<int64_t>(v.size())}), t).eval();
    EXPECT_EQ(x.to_vector<int32_t>(), cast(x, DType::Int32).to_vector<int32_t>());
    EXPECT_EQ(x.to_vector<int64_t>(), cast(x, DType::Int64).to_vector<int64_t>());
    std::vector<int32_t> i32 = x.to_vector<int32_t>();
    EXPECT_EQ(i32[0], 0);
    EXPECT_EQ(i32[1], INT32_MAX);
    EXPECT_EQ(i32[2], INT32_MIN);
    EXPECT_EQ(i32[5], 3);
    EXPECT_EQ(i32[6], -3);
    for (size_t k = 0; k < v.size(); ++k) {
      SCOPED_TRACE(v[k]);
      EXPECT_EQ(x.to_vector<int64_t>()[k], full({}, v[k], t).item<int64_t>());
    }
  }
}

TEST_P(Integers, NegativeConstantExponentsOfIntegersRaise) {
  for (DType t : {DType::Int32, DType::Int64, DType::Bool}) {
    SCOPED_TRACE(dtype_name(t));
    Array x = random_array(t, {4}, 3, -3, 3);
    for (int64_t e : {int64_t{-1}, int64_t{-2}, int64_t{-7}, std::numeric_limits<int64_t>::min()}) {
      if (t == DType::Int32 && e < INT32_MIN) continue;
      EXPECT_ARRAYC_ERROR(pow(x, e), "pow: Integers to negative integer powers are not allowed");
      EXPECT_ARRAYC_ERROR(pow(x, full({4}, e, t == DType::Bool ? DType::Int64 : t)), "pow: Integers to negative");
    }
    // A float exponent gives a float result; a non-negative one an exact integer power.
    EXPECT_MATCHES_REFERENCE(pow(x, -2.0));
    if (t != DType::Bool) EXPECT_MATCHES_REFERENCE(pow(x, 3));
  }
  // An exponent array's negative elements: 1/x^|e| truncated (1, +-1 or 0), as documented.
  Array base = array(std::vector<int64_t>{1, -1, -1, 2, -3, 0}, {6});
  Array ex = array(std::vector<int64_t>{-5, -3, -2, -1, -2, 2}, {6});
  EXPECT_EQ(pow(base, ex).to_vector<int64_t>(), (std::vector<int64_t>{1, -1, 1, 0, 0, 0}));
  EXPECT_MATCHES_REFERENCE(pow(base, ex));
}

TEST_P(Integers, ArangeOfTooManyElements) {
  for (auto [start, stop, step] : {std::tuple{0.0, 1e300, 1.0}, std::tuple{0.0, 1e19, 1.0}, std::tuple{-1e300, 1e300, 1e-300},
                                   std::tuple{1e19, 0.0, -1.0}}) {
    SCOPED_TRACE(std::to_string(start) + " " + std::to_string(stop) + " " + std::to_string(step));
    EXPECT_ARRAYC_ERROR(arange(start, stop, step), "arange: too many elements");
  }
  EXPECT_EQ(arange(5.0, 0.0).size(), 0);  // empty, not an error
  EXPECT_EQ(arange(0.0, 3.0, 0.5).to_vector<double>(), (std::vector<double>{0, 0.5, 1, 1.5, 2, 2.5}));
}

}  // namespace
