// argmax/argmin, any/all, var/std, logsumexp and the creation helpers (linspace, eye, *_like,
// arange's length rule) end to end (issue 28), against the interpreter and numpy's known values.
#include <cmath>
#include <limits>

#include "support/data.h"
#include "support/devices.h"
#include "support/errors.h"
#include "support/reference.h"

namespace {

using namespace arrayc;
using namespace arrayc_test;

class NumpyReductions : public DeviceTest {};
ARRAYC_DEVICE_SUITE(NumpyReductions);

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

TEST_P(NumpyReductions, ArgmaxArgminEveryDtypeAndAxis) {
  for (DType t : kAllDTypes) {
    for (const Shape& s : {Shape{1}, Shape{17}, Shape{4, 9}, Shape{3, 4, 5}}) {
      Array x = random_array(t, s, 21 + s.size(), -3, 3);  // small range: ties, first one wins
      SCOPED_TRACE(dt(t) + " " + shape_str(s));
      EXPECT_MATCHES_REFERENCE(argmax(x));
      EXPECT_MATCHES_REFERENCE(argmin(x));
      EXPECT_EQ(argmax(x).dtype(), DType::Int64);
      for (int64_t axis = -static_cast<int64_t>(s.size()); axis < static_cast<int64_t>(s.size()); ++axis) {
        EXPECT_MATCHES_REFERENCE(argmax(x, axis));
        EXPECT_MATCHES_REFERENCE(argmin(x, axis, true));
      }
    }
  }
}

TEST_P(NumpyReductions, ArgmaxKnownValuesNaNAndTies) {
  Array x = array<float>({1, 5, 5, -2, 5, -2});
  EXPECT_EQ(argmax(x).item<int64_t>(), 1);  // the first of the ties
  EXPECT_EQ(argmin(x).item<int64_t>(), 3);
  for (DType t : kFloatTypes) {
    Array n = make_array(t, {6}, {1, kNaN, 7, kNaN, -kInf, kInf});
    EXPECT_EQ(argmax(n).item<int64_t>(), 1);  // numpy: the first NaN wins both ways
    EXPECT_EQ(argmin(n).item<int64_t>(), 1);
    Array inf = make_array(t, {4}, {-kInf, kInf, 3, kInf});
    EXPECT_EQ(argmax(inf).item<int64_t>(), 1);
    EXPECT_EQ(argmin(inf).item<int64_t>(), 0);
    Array m = make_array(t, {2, 3}, {0, kNaN, 2, 5, 4, 3});
    EXPECT_EQ(argmax(m, 1).to_vector<int64_t>(), (std::vector<int64_t>{1, 0}));
    EXPECT_EQ(argmin(m, 0).to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 0}));
  }
  Array i = array<int64_t>({INT64_MIN, INT64_MAX, INT64_MAX, INT64_MIN});
  EXPECT_EQ(argmax(i).item<int64_t>(), 1);
  EXPECT_EQ(argmin(i).item<int64_t>(), 0);
  EXPECT_EQ(argmax(full({}, 3.0)).item<int64_t>(), 0);  // rank 0, as numpy
  EXPECT_MATCHES_REFERENCE(argmax(transpose(random_array(DType::Float32, {5, 8}, 3)), 1));
  // A computed input is computed once for both passes: the result is that of its values.
  Array e = exp(random_array(DType::Float32, {5, 1001}, 4)) - 1.0f;
  Array values = array<float>(e.to_vector<float>(), e.shape());
  EXPECT_EQ(argmin(e, 1).to_vector<int64_t>(), argmin(values, 1).to_vector<int64_t>());
  EXPECT_EQ(argmax(e).item<int64_t>(), argmax(values).item<int64_t>());
}

TEST_P(NumpyReductions, ArgmaxErrors) {
  EXPECT_ARRAYC_ERROR(argmax(zeros({0})), "argmax", "attempt to get argmax of an empty sequence");
  EXPECT_ARRAYC_ERROR(argmin(zeros({3, 0}), 1), "argmin", "empty sequence", "[3, 0]");
  EXPECT_EQ(argmax(zeros({0, 3}), 1).shape(), (Shape{0}));  // empty result, not an error
  EXPECT_ARRAYC_ERROR(argmax(zeros({2, 3}), 2), "argmax", "axis 2 is out of range", "[2, 3]");
  EXPECT_ARRAYC_ERROR(argmax(full({}, 1.0), 0), "argmax", "axis 0", "rank 0");
}

TEST_P(NumpyReductions, AnyAll) {
  for (DType t : kAllDTypes) {
    SCOPED_TRACE(dt(t));
    Array x = random_array(t, {5, 6}, 31, 0, 1.2);  // mostly zeros for the integers
    EXPECT_MATCHES_REFERENCE(any(x));
    EXPECT_MATCHES_REFERENCE(all(x));
    EXPECT_MATCHES_REFERENCE(any(x, {0}));
    EXPECT_MATCHES_REFERENCE(all(x, {-1}, true));
    EXPECT_EQ(any(x).dtype(), DType::Bool);
  }
  Array n = array<double>({0.0, kNaN});
  EXPECT_TRUE(any(n).item<bool>());  // NaN is true
  EXPECT_FALSE(all(n).item<bool>());
  EXPECT_FALSE(any(zeros({0})).item<bool>());  // numpy: any of nothing is false, all true
  EXPECT_TRUE(all(zeros({0})).item<bool>());
  EXPECT_EQ(any(zeros({2, 0}), {1}).to_vector<bool>(), (std::vector<bool>{false, false}));
  EXPECT_EQ(all(zeros({2, 0}), {1}, true).shape(), (Shape{2, 1}));
  EXPECT_TRUE(all(full({}, -0.5)).item<bool>());
  EXPECT_ARRAYC_ERROR(any(zeros({2}), {1}), "any", "axis 1 is out of range");
}

TEST_P(NumpyReductions, VarStd) {
  for (DType t : kAllDTypes) {
    SCOPED_TRACE(dt(t));
    Array x = random_array(t, {6, 7}, 41, -5, 5);
    DType want = is_float(t) ? t : DType::Float64;
    EXPECT_EQ(var(x).dtype(), want);
    EXPECT_MATCHES_REFERENCE(var(x));
    EXPECT_MATCHES_REFERENCE(arrayc::std(x, 1));
    EXPECT_MATCHES_REFERENCE(var(x, {0}, 1, true));
    EXPECT_MATCHES_REFERENCE(arrayc::std(x, {-1}));
  }
  Array x = array<double>({1, 2, 3, 4});
  EXPECT_DOUBLE_EQ(var(x).item<double>(), 1.25);
  EXPECT_DOUBLE_EQ(var(x, 1).item<double>(), 5.0 / 3.0);
  EXPECT_DOUBLE_EQ(arrayc::std(x).item<double>(), std::sqrt(1.25));
  EXPECT_TRUE(std::isnan(var(array<double>({2.0}), 1).item<double>()));  // n - ddof = 0: 0/0
  EXPECT_TRUE(std::isinf(var(array<double>({2.0, 3.0}), 2).item<double>()));  // n - ddof < 0: x/0
  EXPECT_TRUE(std::isnan(var(zeros({0}, DType::Float64)).item<double>()));
  EXPECT_TRUE(std::isnan(arrayc::std(array<double>({1, kNaN})).item<double>()));
  // Large offset: the two-pass form keeps the digits numpy keeps.
  Array off = array<double>({1e9 + 1, 1e9 + 2, 1e9 + 3});
  EXPECT_NEAR(var(off).item<double>(), 2.0 / 3.0, 1e-6);
  EXPECT_MATCHES_REFERENCE(var(transpose(random_array(DType::Float32, {8, 5}, 42)), {1}));
}

TEST_P(NumpyReductions, LogSumExp) {
  for (DType t : kAllDTypes) {
    SCOPED_TRACE(dt(t));
    Array x = random_array(t, {5, 8}, 51, -3, 3);
    EXPECT_MATCHES_REFERENCE(logsumexp(x));
    EXPECT_MATCHES_REFERENCE(logsumexp(x, {1}));
    EXPECT_MATCHES_REFERENCE(logsumexp(x, {0}, true));
  }
  // Stable where the naive form overflows or underflows.
  Array big = array<float>({1000, 1000});
  EXPECT_NEAR(logsumexp(big).item<float>(), 1000 + std::log(2.0), 1e-3);
  Array tiny = array<double>({-1000, -1000});
  EXPECT_NEAR(logsumexp(tiny).item<double>(), -1000 + std::log(2.0), 1e-9);
  Array rows = make_array(DType::Float64, {3, 2}, {-kInf, -kInf, kInf, 1, kNaN, 0});
  std::vector<double> r = logsumexp(rows, {1}).to_vector<double>();
  EXPECT_EQ(r[0], -kInf);  // a row of -inf
  EXPECT_EQ(r[1], kInf);
  EXPECT_TRUE(std::isnan(r[2]));
  EXPECT_EQ(logsumexp(zeros({0})).item<float>(), -kInf);
  EXPECT_EQ(logsumexp(zeros({2, 0}), {1}, true).shape(), (Shape{2, 1}));
  EXPECT_MATCHES_REFERENCE(logsumexp(rows, {1}));
}

TEST_P(NumpyReductions, Linspace) {
  std::vector<double> a = linspace(0, 1, 5, true, DType::Float64).to_vector<double>();
  EXPECT_EQ(a, (std::vector<double>{0, 0.25, 0.5, 0.75, 1}));
  std::vector<double> b = linspace(0, 1, 4, false, DType::Float64).to_vector<double>();
  EXPECT_EQ(b, (std::vector<double>{0, 0.25, 0.5, 0.75}));
  // numpy: start + i * step, the last one exactly stop.
  std::vector<double> c = linspace(0.1, 0.7, 7, true, DType::Float64).to_vector<double>();
  double step = (0.7 - 0.1) / 6;
  for (int i = 0; i < 6; ++i) EXPECT_EQ(c[i], i * step + 0.1) << i;
  EXPECT_EQ(c[6], 0.7);
  EXPECT_EQ(linspace(3, 9, 1).to_vector<float>(), std::vector<float>{3});
  EXPECT_EQ(linspace(3, 9, 0).size(), 0);
  EXPECT_EQ(linspace(5, 1, 3, true, DType::Int32).to_vector<int32_t>(), (std::vector<int32_t>{5, 3, 1}));
  EXPECT_EQ(linspace(0, 1, 3).dtype(), DType::Float32);
  EXPECT_EQ(linspace(0, 1, 3).device(), device());
  EXPECT_ARRAYC_ERROR(linspace(0, 1, -1), "linspace", "-1", "must be non-negative");
  EXPECT_ARRAYC_ERROR(linspace(0, kInf, 3), "linspace", "finite");
}

TEST_P(NumpyReductions, Eye) {
  EXPECT_EQ(eye(3).to_vector<float>(), (std::vector<float>{1, 0, 0, 0, 1, 0, 0, 0, 1}));
  EXPECT_EQ(eye(2, 3, 1, DType::Int32).to_vector<int32_t>(), (std::vector<int32_t>{0, 1, 0, 0, 0, 1}));
  EXPECT_EQ(eye(3, 2, -1, DType::Bool).to_vector<bool>(), (std::vector<bool>{false, false, true, false, false, true}));
  EXPECT_EQ(eye(2, 2, 5).to_vector<float>(), (std::vector<float>{0, 0, 0, 0}));
  EXPECT_EQ(eye(0).shape(), (Shape{0, 0}));
  EXPECT_EQ(eye(4, 0).shape(), (Shape{4, 0}));
  EXPECT_MATCHES_REFERENCE(eye(5, 7, -2, DType::Float64));
  EXPECT_ARRAYC_ERROR(eye(-1), "eye", "negative");
}

TEST_P(NumpyReductions, Like) {
  Array x = random_array(DType::Int32, {2, 3}, 61);
  for (const Array& y : {zeros_like(x), ones_like(x), full_like(x, 7.9)}) {
    EXPECT_EQ(y.shape(), x.shape());
    EXPECT_EQ(y.dtype(), DType::Int32);
    EXPECT_EQ(y.device(), device());
  }
  EXPECT_EQ(full_like(x, 7.9).to_vector<int32_t>(), std::vector<int32_t>(6, 7));  // numpy truncates too
  EXPECT_EQ(ones_like(x, DType::Float64).dtype(), DType::Float64);
  EXPECT_EQ(zeros_like(full({}, 2.0), DType::Bool).shape(), Shape{});
  EXPECT_EQ(full_like(x, 2.5, DType::Float32).to_vector<float>(), std::vector<float>(6, 2.5f));
}

TEST_P(NumpyReductions, ArangeLengthIsNumpys) {
  // numpy: ceil((stop - start) / step) elements.
  EXPECT_EQ(arange(0.0, 1.0, 0.1).size(), 10);
  EXPECT_EQ(arange(1.0, 1.3, 0.1).size(), 4);  // (1.3 - 1) / 0.1 = 3.0000000000000004: numpy gives 4 too
  EXPECT_EQ(arange(0.0, 1.0, 0.3).size(), 4);
  EXPECT_EQ(arange(5.0, 1.0, -1.5).size(), 3);
  EXPECT_EQ(arange(1.0, 5.0, -1.0).size(), 0);
  EXPECT_EQ(arange(0.0, 0.0, 1.0).size(), 0);
  EXPECT_EQ(arange(-3.5, 2.0, 1.0).to_vector<double>(), (std::vector<double>{-3.5, -2.5, -1.5, -0.5, 0.5, 1.5}));
}

}  // namespace
