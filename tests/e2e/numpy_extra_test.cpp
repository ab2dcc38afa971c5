// More of numpy's namespace (arrayc/numpy_extra.h) end to end: numpy's values worked out by hand,
// the reference interpreter for every dtype, the edge cases, and every error message.
#include <cmath>
#include <limits>

#include "support/data.h"
#include "support/devices.h"
#include "support/errors.h"
#include "support/indexing.h"
#include "support/reference.h"

namespace {

using namespace arrayc;
using namespace arrayc_test;

class NumpyExtra : public DeviceTest {};
ARRAYC_DEVICE_SUITE(NumpyExtra);

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();
using D = std::vector<double>;
using I = std::vector<int64_t>;
using Bv = std::vector<bool>;

D vals(const Array& a) { return a.to_vector<double>(); }
Array x_of_nan() { return array<double>({1, std::numeric_limits<double>::quiet_NaN()}); }
Bv bools(const Array& a) { return a.to_vector<bool>(); }
// Equal as numpy prints them: NaN equals NaN.
::testing::AssertionResult same_values(const D& got, const D& want) {
  bool ok = got.size() == want.size();
  for (size_t i = 0; ok && i < got.size(); ++i) ok = (std::isnan(got[i]) && std::isnan(want[i])) || got[i] == want[i];
  if (ok) return ::testing::AssertionSuccess();
  auto str = [](const D& v) {
    std::string s;
    for (double x : v) s += std::to_string(x) + " ";
    return s;
  };
  return ::testing::AssertionFailure() << "got " << str(got) << "want " << str(want);
}
#define EXPECT_VALUES(a, ...) EXPECT_TRUE(same_values(vals(a), D(__VA_ARGS__)))

TEST_P(NumpyExtra, EmptyAndCopy) {
  Array e = arrayc::empty({2, 3}, DType::Int16);
  EXPECT_EQ(e.shape(), (Shape{2, 3}));
  EXPECT_EQ(e.dtype(), DType::Int16);
  EXPECT_VALUES(e, {0, 0, 0, 0, 0, 0});
  EXPECT_EQ(arrayc::empty({0}).size(), 0);
  for (DType t : kAllDTypes) {
    SCOPED_TRACE(dt(t));
    Array x = random_array(t, {3, 5}, 1).eval();
    Array v = transpose(x)[Slice(none, none, -1)];  // a non-contiguous view
    Array c = arrayc::copy(v);
    EXPECT_EQ(c.dtype(), t);
    EXPECT_EQ(c.shape(), (Shape{5, 3}));
    EXPECT_MATCHES_REFERENCE(c);
    EXPECT_EQ(vals(c), vals(v));
  }
  EXPECT_VALUES(arrayc::copy(full({}, 2.5)), {2.5});
}

TEST_P(NumpyExtra, SquareAndReciprocal) {
  for (DType t : kAllDTypes) {
    SCOPED_TRACE(dt(t));
    Array x = random_array(t, {4, 7}, 2, -5, 5);
    EXPECT_EQ(square(x).dtype(), t == DType::Bool ? DType::Int8 : t);
    EXPECT_MATCHES_REFERENCE(square(x));
    EXPECT_MATCHES_REFERENCE(reciprocal(x));
    EXPECT_EQ(reciprocal(x).dtype(), t == DType::Bool ? DType::Int8 : t);
  }
  for (DType t : kFloatTypes) {
    std::vector<double> e = float_edge_values(t);
    Array x = make_array(t, {static_cast<int64_t>(e.size())}, e);
    CompareOptions signed_zero;
    signed_zero.signed_zero = true;
    EXPECT_MATCHES_REFERENCE(square(x), signed_zero);
    EXPECT_MATCHES_REFERENCE(reciprocal(x), signed_zero);
  }
  EXPECT_VALUES(reciprocal(make_array(DType::Float32, {4}, {2, -0.0, 0.0, -kInf})), {0.5, -kInf, kInf, -0.0});
  EXPECT_VALUES(reciprocal(make_array(DType::Int8, {6}, {-1, 0, 1, 2, -128, 127})), {-1, 0, 1, 0, 0, 0});
  EXPECT_VALUES(reciprocal(make_array(DType::UInt64, {3}, {0, 1, 2})), {0, 1, 0});
  EXPECT_VALUES(reciprocal(array<bool>({true, false})), {1, 0});
  EXPECT_VALUES(square(make_array(DType::Int8, {3}, {16, -12, 11})), {0, -112, 121});  // wraps, as numpy
  EXPECT_VALUES(square(array<bool>({true, false})), {1, 0});
  EXPECT_EQ(square(array<bool>({true, false})).dtype(), DType::Int8);
  for (DType t : kIntTypes) {
    SCOPED_TRACE(dt(t));
    std::vector<double> e = int_edge_values(t);
    Array x = make_array(t, {static_cast<int64_t>(e.size())}, e);
    EXPECT_MATCHES_REFERENCE(square(x));
    EXPECT_MATCHES_REFERENCE(reciprocal(x));
  }
  EXPECT_VALUES(square(full({}, -3.0)), {9});
  EXPECT_EQ(reciprocal(zeros({0, 2})).shape(), (Shape{0, 2}));
}

TEST_P(NumpyExtra, NanToNum) {
  EXPECT_VALUES(nan_to_num(make_array(DType::Float32, {4}, {kNaN, kInf, -kInf, -1.5})),
                {0, std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(), -1.5});
  EXPECT_VALUES(nan_to_num(make_array(DType::Float64, {3}, {kNaN, kInf, -kInf})),
                {0, std::numeric_limits<double>::max(), -std::numeric_limits<double>::max()});
  EXPECT_VALUES(nan_to_num(make_array(DType::Float16, {3}, {kNaN, kInf, -kInf})), {0, 65504, -65504});
  EXPECT_VALUES(nan_to_num(make_array(DType::BFloat16, {2}, {kInf, -kInf})), {3.3895313892515355e38, -3.3895313892515355e38});
  EXPECT_VALUES(nan_to_num(make_array(DType::Float64, {4}, {kNaN, kInf, -kInf, 2}), 7, 8, -9), {7, 8, -9, 2});
  for (DType t : kAllDTypes) {
    SCOPED_TRACE(dt(t));
    std::vector<double> e = is_float(t) ? float_edge_values(t) : int_edge_values(t);
    Array x = make_array(t, {static_cast<int64_t>(e.size())}, e);
    Array r = nan_to_num(x, -1.0);
    EXPECT_EQ(r.dtype(), t);
    EXPECT_MATCHES_REFERENCE(r);
    if (!is_float(t)) EXPECT_EQ(vals(r), vals(x));
  }
  EXPECT_VALUES(nan_to_num(transpose(make_array(DType::Float32, {2, 2}, {kNaN, 1, 2, kInf}))),
                {0, 2, 1, std::numeric_limits<float>::max()});
}

TEST_P(NumpyExtra, IscloseAllcloseArrayEqual) {
  // numpy's documentation examples.
  Array a = array<double>({1e10, 1e-7}), b = array<double>({1.00001e10, 1e-8});
  EXPECT_EQ(bools(isclose(a, b)), (Bv{true, false}));
  EXPECT_FALSE(allclose(a, b).item<bool>());
  EXPECT_TRUE(allclose(array<double>({1e10, 1e-8}), array<double>({1.00001e10, 1e-9})).item<bool>());
  EXPECT_FALSE(allclose(array<double>({1e10, 1e-8}), array<double>({1.0001e10, 1e-9})).item<bool>());
  Array n = array<double>({1.0, kNaN});
  EXPECT_EQ(bools(isclose(n, n)), (Bv{true, false}));
  EXPECT_EQ(bools(isclose(n, n, 1e-5, 1e-8, true)), (Bv{true, true}));
  EXPECT_EQ(bools(isclose(array<double>({1e-8, 1e-7}), array<double>({0.0, 0.0}))), (Bv{true, false}));
  EXPECT_EQ(bools(isclose(array<double>({1e-100, 1e-7}), array<double>({0.0, 0.0}), 1e-5, 0.0)), (Bv{false, false}));
  Array inf = array<double>({kInf, kInf, -kInf, 1e308});
  EXPECT_EQ(bools(isclose(inf, array<double>({kInf, -kInf, -kInf, kInf}))), (Bv{true, false, true, false}));
  // Integers: b computes in float64; broadcasting; a float32 b keeps float32 tolerances.
  EXPECT_EQ(bools(isclose(array<int32_t>({1, 2, INT32_MAX}), array<int64_t>({1, 3, INT32_MAX}))), (Bv{true, false, true}));
  EXPECT_EQ(bools(isclose(make_array(DType::UInt8, {2, 1}, {0, 255}), array<double>({0.0, 255.0}))),
            (Bv{true, false, false, true}));
  // float32 b: 1 + 1e-5 is 1.00001001, past the float32 tolerance 1.00001e-5 (numpy: False too).
  EXPECT_EQ(bools(isclose(array<float>({1.0f, 1.0f}), array<float>({1.0f + 5e-6f, 1.0f + 1e-5f}))), (Bv{true, false}));
  for (DType t : kAllDTypes) {
    SCOPED_TRACE(dt(t));
    Array x = random_array(t, {3, 4}, 3, -2, 2), y = random_array(t, {4}, 4, -2, 2);
    EXPECT_MATCHES_REFERENCE(isclose(x, y, 0.5, 0.25));
    EXPECT_MATCHES_REFERENCE(allclose(x, x));
    EXPECT_TRUE(allclose(x, x).item<bool>());
    EXPECT_TRUE(array_equal(x, x).item<bool>());
  }
  EXPECT_TRUE(array_equal(array<int32_t>({1, 2}), array<double>({1.0, 2.0})).item<bool>());
  EXPECT_FALSE(array_equal(array<int32_t>({1, 2}), array<int32_t>({1, 2}, {1, 2})).item<bool>());  // no broadcasting
  EXPECT_FALSE(array_equal(n, n).item<bool>());
  EXPECT_TRUE(array_equal(n, n, true).item<bool>());
  EXPECT_FALSE(array_equal(n, array<double>({kNaN, 1.0}), true).item<bool>());
  EXPECT_TRUE(array_equal(zeros({0, 3}), zeros({0, 3}, DType::Int8)).item<bool>());
  EXPECT_TRUE(allclose(zeros({0}), zeros({0})).item<bool>());
  EXPECT_EQ(isclose(full({}, 1.0), full({}, 1.0)).shape(), Shape{});
}

TEST_P(NumpyExtra, VstackHstackAppend) {
  Array a = array<int32_t>({1, 2, 3}), b = array<int32_t>({4, 5, 6});
  Array v = vstack({a, b});
  EXPECT_EQ(v.shape(), (Shape{2, 3}));
  EXPECT_EQ(ints(v), (I{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(vstack({reshape(a, {1, 3}), b, full({1, 3}, 0.5, DType::Float32)}).dtype(), DType::Float64);
  EXPECT_EQ(vstack({full({}, 1.0), full({}, 2.0)}).shape(), (Shape{2, 1}));
  Array h = hstack({a, b});
  EXPECT_EQ(h.shape(), (Shape{6}));
  EXPECT_EQ(ints(hstack({reshape(a, {3, 1}), reshape(iota({6}), {3, 2})})), (I{1, 0, 1, 2, 2, 3, 3, 4, 5}));
  EXPECT_EQ(hstack({full({}, 1.0), full({}, 2.0)}).shape(), (Shape{2}));
  EXPECT_EQ(ints(append(reshape(a, {3, 1}), b)), (I{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(ints(append(reshape(a, {1, 3}), reshape(b, {1, 3}), 0)), (I{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(append(reshape(a, {1, 3}), reshape(b, {1, 3}), 1).shape(), (Shape{1, 6}));
  for (DType t : kAllDTypes) {
    SCOPED_TRACE(dt(t));
    Array x = random_array(t, {2, 3}, 5), y = random_array(t, {4, 3}, 6);
    EXPECT_MATCHES_REFERENCE(vstack({x, transpose(random_array(t, {3, 2}, 7)), y}));
    EXPECT_MATCHES_REFERENCE(hstack({transpose(x), transpose(y)}));
    EXPECT_MATCHES_REFERENCE(append(x, y));
  }
  EXPECT_ARRAYC_ERROR(vstack({}), "concatenate: need at least one array to concatenate");
  EXPECT_ARRAYC_ERROR(hstack({}), "hstack: need at least one array to concatenate");
  EXPECT_ARRAYC_ERROR(vstack({a, array<int32_t>({1, 2})}), "concatenate: array 1 has shape [1, 2], array 0 has [1, 3]");
  EXPECT_ARRAYC_ERROR(append(reshape(a, {1, 3}), b, 0), "concatenate: array 1 has shape [3]");
}

TEST_P(NumpyExtra, DiagDiagonalTraceTrilTriu) {
  Array v = array<int64_t>({1, 2, 3});
  EXPECT_EQ(ints(diag(v)), (I{1, 0, 0, 0, 2, 0, 0, 0, 3}));
  EXPECT_EQ(diag(v, 1).shape(), (Shape{4, 4}));
  EXPECT_EQ(ints(diag(v, 1)), (I{0, 1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 3, 0, 0, 0, 0}));
  EXPECT_EQ(ints(diag(array<int64_t>({7, 8}), -1)), (I{0, 0, 0, 7, 0, 0, 0, 8, 0}));
  EXPECT_EQ(diag(zeros({0})).shape(), (Shape{0, 0}));
  Array m = iota({3, 4});  // [[0 1 2 3] [4 5 6 7] [8 9 10 11]]
  EXPECT_EQ(ints(diag(m)), (I{0, 5, 10}));
  EXPECT_EQ(ints(diag(m, 1)), (I{1, 6, 11}));
  EXPECT_EQ(ints(diag(m, 3)), (I{3}));
  EXPECT_EQ(ints(diag(m, -2)), (I{8}));
  EXPECT_EQ(diag(m, 4).shape(), (Shape{0}));
  EXPECT_EQ(diag(m, -3).shape(), (Shape{0}));
  EXPECT_EQ(ints(diag(transpose(m))), (I{0, 5, 10}));
  Array t3 = iota({2, 3, 3});
  EXPECT_EQ(diagonal(t3, 0, 1, 2).shape(), (Shape{2, 3}));
  EXPECT_EQ(ints(diagonal(t3, 0, 1, 2)), (I{0, 4, 8, 9, 13, 17}));
  EXPECT_EQ(ints(diagonal(t3, 1, -1, 1)), (I{3, 7, 12, 16}));  // rows of axis 2, columns of axis 1
  EXPECT_EQ(trace(m).item<int64_t>(), 15);
  EXPECT_EQ(trace(m, 1).item<int64_t>(), 18);
  EXPECT_EQ(trace(m, 9).item<int64_t>(), 0);
  EXPECT_EQ(trace(array<int32_t>({1, 2, 3, 4}, {2, 2})).dtype(), DType::Int64);
  EXPECT_EQ(trace(array<bool>({true, false, true, true}, {2, 2})).item<int64_t>(), 2);
  EXPECT_EQ(ints(trace(t3, 0, 1, 2)), (I{12, 39}));
  EXPECT_EQ(ints(tril(m)), (I{0, 0, 0, 0, 4, 5, 0, 0, 8, 9, 10, 0}));
  EXPECT_EQ(ints(tril(m, -1)), (I{0, 0, 0, 0, 4, 0, 0, 0, 8, 9, 0, 0}));
  EXPECT_EQ(ints(triu(m, 1)), (I{0, 1, 2, 3, 0, 0, 6, 7, 0, 0, 0, 11}));
  EXPECT_EQ(ints(triu(m, -1)), (I{0, 1, 2, 3, 4, 5, 6, 7, 0, 9, 10, 11}));
  EXPECT_EQ(ints(tril(v)), (I{1, 0, 0, 1, 2, 0, 1, 2, 3}));  // 1-D: broadcast to a square first
  for (DType t : kAllDTypes) {
    SCOPED_TRACE(dt(t));
    Array x = random_array(t, {3, 4, 5}, 8);
    EXPECT_MATCHES_REFERENCE(diag(random_array(t, {4}, 9), -2));
    EXPECT_MATCHES_REFERENCE(diagonal(x, -1, 2, 0));
    EXPECT_MATCHES_REFERENCE(trace(x, 1, 1, 2));
    EXPECT_MATCHES_REFERENCE(tril(x, 1));
    EXPECT_MATCHES_REFERENCE(triu(swapaxes(x, 0, 2), -1));
  }
  EXPECT_ARRAYC_ERROR(diag(zeros({2, 2, 2})), "diag: input must be 1-D or 2-D, got shape [2, 2, 2]");
  EXPECT_ARRAYC_ERROR(diag(full({}, 1.0)), "diag: input must be 1-D or 2-D, got shape []");
  EXPECT_ARRAYC_ERROR(diagonal(zeros({3})), "diagonal: the array must have at least two dimensions, got shape [3]");
  EXPECT_ARRAYC_ERROR(diagonal(zeros({3, 3}), 0, 1, -1), "diagonal: axis1 and axis2 cannot be the same (both 1, shape [3, 3])");
  EXPECT_ARRAYC_ERROR(diagonal(zeros({3, 3}), 0, 0, 2), "diagonal: axis 2 is out of range for an array of rank 2 (shape [3, 3])");
  EXPECT_ARRAYC_ERROR(trace(zeros({3})), "trace: the array must have at least two dimensions, got shape [3]");
  EXPECT_ARRAYC_ERROR(tril(full({}, 1.0)), "tril: the array must have at least one dimension, got a scalar");
  EXPECT_ARRAYC_ERROR(triu(full({}, 1.0)), "triu: the array must have at least one dimension");
}

TEST_P(NumpyExtra, MeshgridLogspace) {
  Array x = array<int64_t>({1, 2, 3}), y = array<int64_t>({4, 5});
  std::vector<Array> g = meshgrid({x, y});
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(ints(g[0]), (I{1, 2, 3, 1, 2, 3}));
  EXPECT_EQ(ints(g[1]), (I{4, 4, 4, 5, 5, 5}));
  std::vector<Array> ij = meshgrid({x, y}, "ij");
  EXPECT_EQ(ij[0].shape(), (Shape{3, 2}));
  EXPECT_EQ(ints(ij[0]), (I{1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(ints(ij[1]), (I{4, 5, 4, 5, 4, 5}));
  std::vector<Array> g3 = meshgrid({x, y, reshape(array<int64_t>({6, 7, 8, 9}), {2, 2})});
  EXPECT_EQ(g3[2].shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(ints(g3[2][{1, 2}]), (I{6, 7, 8, 9}));
  EXPECT_EQ(ints(g3[0][{_, _, 3}]), (I{1, 2, 3, 1, 2, 3}));
  EXPECT_EQ(meshgrid({x})[0].shape(), (Shape{3}));
  EXPECT_TRUE(meshgrid({}).empty());
  EXPECT_ARRAYC_ERROR(meshgrid({x}, "yx"), "meshgrid: indexing must be \"xy\" or \"ij\", not \"yx\"");
  EXPECT_VALUES(logspace(0, 3, 4, true, 10.0, DType::Float64), {1, 10, 100, 1000});
  EXPECT_VALUES(logspace(0, 4, 4, false, 2.0, DType::Float64), {1, 2, 4, 8});
  EXPECT_VALUES(logspace(1, -1, 3, true, 10.0, DType::Float64), {10, 1, 0.1});
  EXPECT_EQ(logspace(0, 1).shape(), (Shape{50}));
  EXPECT_EQ(logspace(0, 1).dtype(), DType::Float32);
  EXPECT_VALUES(logspace(0, 2, 3, true, 10.0, DType::Int32), {1, 10, 100});
  EXPECT_EQ(logspace(0, 1, 0).shape(), (Shape{0}));
  EXPECT_MATCHES_REFERENCE(logspace(-3, 5, 17, true, 3.0, DType::Float16));
  EXPECT_ARRAYC_ERROR(logspace(0, 1, -1), "linspace: number of samples, -1, must be non-negative");
}

TEST_P(NumpyExtra, AverageNansumNanmeanCountNonzero) {
  EXPECT_VALUES(average(array<int32_t>({1, 2, 3, 4}), array<int32_t>({4, 3, 2, 1})), {2.0});
  EXPECT_EQ(average(array<int32_t>({1, 2}), array<int32_t>({1, 1})).dtype(), DType::Float64);
  EXPECT_EQ(average(array<float>({1, 2}), array<float>({1, 1})).dtype(), DType::Float32);
  EXPECT_EQ(average(make_array(DType::Float16, {2}, {1, 2}), array<bool>({true, true})).dtype(), DType::Float16);
  Array m = reshape(array<double>({0, 1, 2, 3, 4, 5}), {3, 2});
  EXPECT_VALUES(average(m, array<double>({0.25, 0.75}), 1), {0.75, 2.75, 4.75});  // numpy's docstring example
  EXPECT_EQ(average(m, array<double>({0.25, 0.75}), 1, true).shape(), (Shape{3, 1}));
  EXPECT_VALUES(average(m, array<double>({1, 2, 3}), 0), {(0 + 4 + 12) / 6.0, (1 + 6 + 15) / 6.0});
  EXPECT_VALUES(average(m), {2.5});
  EXPECT_VALUES(average(m, {0}), {2, 3});
  EXPECT_VALUES(average(array<double>({1, 2}), array<double>({1, -1})), {-kInf});  // weights sum to 0
  for (DType t : kAllDTypes) {
    SCOPED_TRACE(dt(t));
    Array x = random_array(t, {4, 5}, 10), w = random_array(t, {5}, 11, 1, 4);
    EXPECT_MATCHES_REFERENCE(average(x, broadcast_to(w, {4, 5})));
    EXPECT_MATCHES_REFERENCE(average(x, w, -1));
    EXPECT_MATCHES_REFERENCE(nansum(x, {0}));
    EXPECT_MATCHES_REFERENCE(nanmean(x));
    EXPECT_MATCHES_REFERENCE(count_nonzero(x, {1}, true));
    EXPECT_EQ(count_nonzero(x).dtype(), DType::Int64);
    if (t != DType::Bool) {
      EXPECT_EQ(nansum(x).dtype(), sum(x).dtype());
      EXPECT_EQ(nanmean(x).dtype(), mean(x).dtype());
    }
  }
  EXPECT_ARRAYC_ERROR(average(m, array<double>({1, 2})),
                      "average: axis must be specified when the shapes of a [3, 2] and weights [2] differ");
  EXPECT_ARRAYC_ERROR(average(m, zeros({3, 1}), 0),
                      "average: 1-D weights expected when the shapes of a [3, 2] and weights [3, 1] differ");
  EXPECT_ARRAYC_ERROR(average(m, zeros({2}), 0), "average: the length of weights [2] is not that of axis 0 of a [3, 2]");
  EXPECT_ARRAYC_ERROR(average(m, zeros({2}), 2), "average: axis 2 is out of range for an array of rank 2 (shape [3, 2])");
  for (DType t : kFloatTypes) {
    SCOPED_TRACE(dt(t));
    Array n = make_array(t, {2, 3}, {1, kNaN, 3, kNaN, kNaN, kNaN});
    EXPECT_VALUES(nansum(n), {4});
    EXPECT_VALUES(nansum(n, {1}), {4, 0});
    EXPECT_VALUES(nanmean(n, {1}), {2, kNaN});
    EXPECT_VALUES(nanmean(n, {0}, true), {1, kNaN, 3});
    EXPECT_EQ(nanmean(n).dtype(), t);
    EXPECT_VALUES(nanmean(n), {2});
    EXPECT_VALUES(nansum(make_array(t, {3}, {kInf, kNaN, 1})), {kInf});
    EXPECT_VALUES(count_nonzero(make_array(t, {6}, {0, -0.0, kNaN, kInf, 1e-3, 0})), {3});
  }
  EXPECT_VALUES(nansum(zeros({0})), {0});
  EXPECT_VALUES(nanmean(zeros({0})), {kNaN});
  EXPECT_VALUES(nansum(array<int32_t>({INT32_MAX, 1})), {2147483648.0});  // int64 accumulation, as sum
  EXPECT_EQ(count_nonzero(array<bool>({true, false, true}, {3, 1}), {0}).to_vector<int64_t>(), (I{2}));
  EXPECT_EQ(count_nonzero(make_array(DType::Int8, {4}, {-128, 0, 127, 0})).item<int64_t>(), 2);
  EXPECT_EQ(count_nonzero(full({}, 5.0)).item<int64_t>(), 1);
  EXPECT_ARRAYC_ERROR(count_nonzero(m, {2}), "sum: axis 2 is out of range");
}

TEST_P(NumpyExtra, Diff) {
  Array x = array<int64_t>({1, 2, 4, 7, 0});
  EXPECT_EQ(ints(diff(x)), (I{1, 2, 3, -7}));
  EXPECT_EQ(ints(diff(x, 2)), (I{1, 1, -10}));
  EXPECT_EQ(diff(x, 5).shape(), (Shape{0}));
  EXPECT_EQ(diff(x, 7).shape(), (Shape{0}));
  EXPECT_EQ(ints(diff(x, 0)), ints(x));
  EXPECT_EQ(ints(diff(make_array(DType::UInt8, {2}, {5, 3}))), (I{254}));  // wraps, as numpy
  EXPECT_EQ(diff(array<bool>({true, true, false})).dtype(), DType::Bool);
  EXPECT_EQ(bools(diff(array<bool>({true, true, false}))), (Bv{false, true}));
  Array m = reshape(array<int64_t>({1, 3, 6, 10, 0, 5, 6, 8}), {2, 4});
  EXPECT_EQ(ints(diff(m)), (I{2, 3, 4, 5, 1, 2}));
  EXPECT_EQ(ints(diff(m, 1, 0)), (I{-1, 2, 0, -2}));
  EXPECT_VALUES(diff(array<double>({1, kInf, kInf, kNaN})), {kInf, kNaN, kNaN});
  for (DType t : kAllDTypes) {
    SCOPED_TRACE(dt(t));
    Array y = random_array(t, {3, 6}, 12);
    EXPECT_MATCHES_REFERENCE(diff(y, 2));
    EXPECT_MATCHES_REFERENCE(diff(transpose(y), 1, 1));
  }
  EXPECT_ARRAYC_ERROR(diff(full({}, 1.0)), "diff: diff requires input that is at least one dimensional (got a scalar)");
  EXPECT_ARRAYC_ERROR(diff(x, -1), "diff: order must be non-negative but got -1");
  EXPECT_ARRAYC_ERROR(diff(x, 1, 1), "diff: axis 1 is out of range for an array of rank 1 (shape [5])");
}

TEST_P(NumpyExtra, MedianQuantilePercentile) {
  EXPECT_VALUES(median(array<int32_t>({3, 1, 2})), {2});
  EXPECT_EQ(median(array<int32_t>({3, 1, 2})).dtype(), DType::Float64);
  EXPECT_VALUES(median(array<int64_t>({4, 1, 3, 2})), {2.5});
  EXPECT_VALUES(median(array<int64_t>({INT64_MAX, INT64_MAX})), {9223372036854775807.0});
  Array m = reshape(array<float>({10, 7, 4, 3, 2, 1}), {2, 3});  // numpy's docstring example
  EXPECT_VALUES(median(m), {3.5});
  EXPECT_EQ(median(m).dtype(), DType::Float32);
  EXPECT_VALUES(median(m, 0), {6.5, 4.5, 2.5});
  EXPECT_VALUES(median(m, 1), {7, 2});
  EXPECT_EQ(median(m, 1, true).shape(), (Shape{2, 1}));
  EXPECT_VALUES(median(array<double>({1, kNaN, 3})), {kNaN});
  EXPECT_VALUES(median(reshape(array<double>({1, kNaN, 3, 4}), {2, 2}), 1), {kNaN, 3.5});
  EXPECT_VALUES(median(array<double>({-kInf, kInf, 1})), {1});
  EXPECT_VALUES(median(zeros({0})), {kNaN});
  EXPECT_VALUES(median(array<bool>({true, false, true})), {1});
  EXPECT_VALUES(median(full({}, 4.0)), {4});
  EXPECT_VALUES(quantile(m, 0.5), {3.5});
  EXPECT_VALUES(quantile(m, 0.5, 0), {6.5, 4.5, 2.5});
  EXPECT_EQ(quantile(m, 0.5, 1, true).shape(), (Shape{2, 1}));
  Array r = array<int64_t>({1, 2, 3, 4});
  EXPECT_VALUES(quantile(r, 0.25), {1.75});  // index 0.75: 1 + (2 - 1) * 0.75
  EXPECT_VALUES(quantile(r, std::vector<double>{0, 1, 0.5}), {1, 4, 2.5});
  EXPECT_EQ(quantile(m, std::vector<double>{0.1, 0.9}, 1).shape(), (Shape{2, 2}));
  EXPECT_VALUES(percentile(array<int64_t>({10, 20, 30, 40, 50}), 40), {26});  // index 1.6
  EXPECT_VALUES(percentile(m, 50, 1), {7, 2});
  EXPECT_VALUES(percentile(m, std::vector<double>{0, 100}), {1, 10});
  EXPECT_VALUES(quantile(array<double>({1, kInf}), 1.0), {kInf});
  EXPECT_VALUES(quantile(array<double>({2, kNaN, 1}), 0.0), {kNaN});
  EXPECT_VALUES(quantile(full({}, 3.0), 0.3), {3});
  for (DType t : kAllDTypes) {
    SCOPED_TRACE(dt(t));
    Array x = random_array(t, {4, 7}, 13);
    EXPECT_MATCHES_REFERENCE(median(x));
    EXPECT_MATCHES_REFERENCE(median(x, 0, true));
    EXPECT_MATCHES_REFERENCE(quantile(transpose(x), std::vector<double>{0, 0.3, 0.5, 0.77, 1}, 1));
    EXPECT_MATCHES_REFERENCE(percentile(x, 12.5, -1));
    EXPECT_EQ(median(x).dtype(), is_float(t) ? t : DType::Float64);
  }
  EXPECT_ARRAYC_ERROR(quantile(r, 1.5), "quantile: quantiles must be in the range [0, 1], got 1.5");
  EXPECT_ARRAYC_ERROR(quantile(r, kNaN), "quantile: quantiles must be in the range [0, 1]");
  EXPECT_ARRAYC_ERROR(percentile(r, -1), "percentile: percentiles must be in the range [0, 100], got -1");
  EXPECT_ARRAYC_ERROR(quantile(zeros({2, 0}), 0.5, 1), "quantile: cannot take a quantile of an empty axis (shape [2, 0])");
  EXPECT_ARRAYC_ERROR(median(m, 2), "median: axis 2 is out of range for an array of rank 2 (shape [2, 3])");
  EXPECT_ARRAYC_ERROR(quantile(m, 0.5, -3), "quantile: axis -3 is out of range");
}

TEST_P(NumpyExtra, Searchsorted) {
  Array a = array<int64_t>({1, 2, 2, 3, 5});
  Array v = array<double>({0, 1, 2, 2.5, 3, 5, 6});
  EXPECT_EQ(ints(searchsorted(a, v)), (I{0, 0, 1, 3, 3, 4, 5}));
  EXPECT_EQ(ints(searchsorted(a, v, "right")), (I{0, 1, 3, 3, 4, 5, 5}));
  Array n = array<double>({1, 2, kNaN});
  EXPECT_EQ(ints(searchsorted(n, array<double>({kNaN, 3, -kInf}))), (I{2, 2, 0}));
  EXPECT_EQ(ints(searchsorted(n, array<double>({kNaN, 3, -kInf}), "right")), (I{3, 2, 0}));
  EXPECT_EQ(searchsorted(a, reshape(v[Slice(0, 6)], {2, 3})).shape(), (Shape{2, 3}));
  EXPECT_EQ(searchsorted(a, full({}, 2.0)).item<int64_t>(), 1);
  EXPECT_EQ(ints(searchsorted(zeros({0}), array<double>({1, 2}))), (I{0, 0}));
  EXPECT_EQ(searchsorted(a, zeros({0})).shape(), (Shape{0}));
  EXPECT_EQ(ints(searchsorted(array<uint64_t>({0, UINT64_MAX}), array<uint64_t>({UINT64_MAX}))), (I{1}));
  // Every length up to 17 against a count done here.
  for (DType t : kAllDTypes) {
    SCOPED_TRACE(dt(t));
    for (int64_t len : {1, 2, 3, 7, 8, 9, 16, 17}) {
      Array s = sort(random_array(t, {len}, 14 + len, -3, 3)).eval();
      Array q = random_array(t, {9}, 30 + len, -4, 4).eval();
      std::vector<double> sv = vals(s), qv = vals(q);
      for (std::string side : {"left", "right"}) {
        I want;
        for (double x : qv) {
          int64_t c = 0;
          for (double e : sv) c += side == "left" ? (e < x) : (e <= x);
          want.push_back(c);
        }
        EXPECT_EQ(ints(searchsorted(s, q, side)), want) << side << " " << len;
      }
    }
  }
  auto f = jit([](const Array& s, const Array& q) { return searchsorted(s, q); });
  EXPECT_EQ(ints(f(a, v)), (I{0, 0, 1, 3, 3, 4, 5}));
  EXPECT_ARRAYC_ERROR(searchsorted(zeros({2, 2}), v), "searchsorted: a must be 1-D, got shape [2, 2]");
  EXPECT_ARRAYC_ERROR(searchsorted(a, v, "middle"), "searchsorted: side must be \"left\" or \"right\", not \"middle\"");
}

TEST_P(NumpyExtra, OuterInner) {
  Array a = array<int32_t>({1, 2, 3}), b = array<int32_t>({4, 5});
  Array o = outer(a, b);
  EXPECT_EQ(o.shape(), (Shape{3, 2}));
  EXPECT_EQ(ints(o), (I{4, 5, 8, 10, 12, 15}));
  EXPECT_EQ(outer(reshape(a, {3, 1}), reshape(iota({2, 2}), {2, 2})).shape(), (Shape{3, 4}));
  EXPECT_EQ(bools(outer(array<bool>({true, false}), array<bool>({true, true}))), (Bv{true, true, false, false}));
  EXPECT_EQ(outer(zeros({0}), b).shape(), (Shape{0, 2}));
  EXPECT_EQ(inner(a, a).item<int64_t>(), 14);
  EXPECT_EQ(inner(a, a).dtype(), DType::Int32);
  EXPECT_EQ(ints(inner(full({}, int64_t{2}, DType::Int64), a)), (I{2, 4, 6}));
  Array x = reshape(iota({6}), {2, 3}), y = reshape(iota({12}), {4, 3});
  EXPECT_EQ(inner(x, y).shape(), (Shape{2, 4}));
  EXPECT_EQ(ints(inner(x, y)), (I{5, 14, 23, 32, 14, 50, 86, 122}));
  EXPECT_EQ(inner(iota({2, 2, 3}), iota({3})).shape(), (Shape{2, 2}));
  EXPECT_EQ(bools(inner(array<bool>({false, true}, {1, 2}), array<bool>({true, false, false, true}, {2, 2}))),
            (Bv{false, true}));
  EXPECT_VALUES(inner(zeros({2, 0}), zeros({3, 0})), {0, 0, 0, 0, 0, 0});
  for (DType t : kNumericTypes) {
    SCOPED_TRACE(dt(t));
    Array p = random_array(t, {3, 4}, 15), q = random_array(t, {2, 4}, 16);
    EXPECT_MATCHES_REFERENCE(outer(p, q));
    EXPECT_MATCHES_REFERENCE(inner(p, transpose(transpose(q))));
    EXPECT_MATCHES_REFERENCE(inner(transpose(random_array(t, {4, 3}, 17)), q));
  }
  EXPECT_ARRAYC_ERROR(inner(x, iota({2, 2})), "inner: the last dimensions of [2, 3] and [2, 2] differ");
}

TEST_P(NumpyExtra, Einsum) {
  Array a = random_array(DType::Float32, {3, 4}, 18), b = random_array(DType::Float32, {4, 5}, 19);
  Array sq = random_array(DType::Float32, {4, 4}, 20);
  EXPECT_MATCHES_REFERENCE(einsum("ij,jk->ik", {a, b}));
  EXPECT_EQ(einsum("ij,jk->ik", {a, b}).shape(), (Shape{3, 5}));
  EXPECT_MATCHES_REFERENCE(einsum("ij,jk", {a, b}));  // implicit: ik
  EXPECT_EQ(einsum("ba", {a}).shape(), (Shape{4, 3}));  // implicit: ab, a transpose
  EXPECT_EQ(vals(einsum("ba", {a})), vals(transpose(a)));
  EXPECT_EQ(vals(einsum("ij->ji", {a})), vals(transpose(a)));
  EXPECT_MATCHES_REFERENCE(einsum("ii->", {sq}));
  EXPECT_EQ(einsum("ii", {sq}).shape(), Shape{});
  EXPECT_EQ(vals(einsum("ii->i", {sq})), vals(diagonal(sq)));
  EXPECT_MATCHES_REFERENCE(einsum("ij->", {a}));
  EXPECT_MATCHES_REFERENCE(einsum("ij->j", {a}));
  EXPECT_MATCHES_REFERENCE(einsum("i,i->", {a[0], a[1]}));
  EXPECT_MATCHES_REFERENCE(einsum("i,j->ij", {a[0], b[0]}));
  EXPECT_MATCHES_REFERENCE(einsum("ij,ij->i", {a, a}));
  EXPECT_MATCHES_REFERENCE(einsum("ij,ij->ij", {a, a}));
  EXPECT_MATCHES_REFERENCE(einsum("bij,bjk->bik", {random_array(DType::Float64, {2, 3, 4}, 21), random_array(DType::Float64, {2, 4, 2}, 22)}));
  EXPECT_MATCHES_REFERENCE(einsum("ij,jk,kl->il", {a, b, random_array(DType::Float32, {5, 2}, 23)}));
  EXPECT_MATCHES_REFERENCE(einsum("ij,kj->ik", {a, transpose(b)}));
  EXPECT_MATCHES_REFERENCE(einsum("ijk->kji", {random_array(DType::Float32, {2, 3, 4}, 24)}));
  EXPECT_MATCHES_REFERENCE(einsum("i,i,i->i", {a[0], a[1], a[2]}));
  EXPECT_MATCHES_REFERENCE(einsum("i j , j k -> i k", {a, b}));
  Array ia = array<int32_t>({1, 2, 3, 4}, {2, 2});
  EXPECT_EQ(einsum("ij,jk->ik", {ia, ia}).dtype(), DType::Int32);
  EXPECT_EQ(ints(einsum("ij,jk->ik", {ia, ia})), (I{7, 10, 15, 22}));
  EXPECT_EQ(ints(einsum("ii", {ia})), (I{5}));
  EXPECT_EQ(einsum("ii", {ia}).dtype(), DType::Int32);
  EXPECT_EQ(ints(einsum("i->", {make_array(DType::Int8, {2}, {100, 100})})), (I{-56}));  // accumulates in int8 (wraps)
  EXPECT_EQ(einsum("ij,jk->ik", {ia, array<float>({1, 1}, {2, 1})}).dtype(), DType::Float64);
  Array bl = array<bool>({true, false, false, false}, {2, 2});
  EXPECT_EQ(bools(einsum("ij,jk->ik", {bl, bl})), (Bv{true, false, false, false}));
  EXPECT_EQ(einsum("ij->", {zeros({0, 3})}).item<float>(), 0.0f);
  for (DType t : kNumericTypes) {
    SCOPED_TRACE(dt(t));
    EXPECT_MATCHES_REFERENCE(einsum("ij,kj->ki", {random_array(t, {3, 4}, 25), random_array(t, {2, 4}, 26)}));
  }
  EXPECT_ARRAYC_ERROR(einsum("...ij->ij", {a}),
                      "einsum: \"...\" (an ellipsis) is not supported; write every axis out (subscripts \"...ij->ij\")");
  EXPECT_ARRAYC_ERROR(einsum("ij,jk->ik", {a}), "einsum: 1 operands given, but the subscripts name 2 (subscripts \"ij,jk->ik\")");
  EXPECT_ARRAYC_ERROR(einsum("ijk", {a}), "einsum: operand 0 has shape [3, 4] but its subscripts \"ijk\" name 3 axes");
  EXPECT_ARRAYC_ERROR(einsum("ij,ij->i", {a, b}), "einsum: axis 'i' has extent 3 and 4");
  EXPECT_ARRAYC_ERROR(einsum("ij->k", {a}), "einsum: output subscript 'k' is not among the inputs'");
  EXPECT_ARRAYC_ERROR(einsum("ij->ii", {a}), "einsum: output subscript 'i' appears more than once");
  EXPECT_ARRAYC_ERROR(einsum("i1->i", {a}), "einsum: '1' is not a subscript letter");
  EXPECT_ARRAYC_ERROR(einsum("", {}), "einsum: no operands given");
}

TEST_P(NumpyExtra, NonzeroArgwhereUniqueBincount) {
  Array m = reshape(array<int32_t>({0, 3, 0, 0, 5, 6}), {2, 3});
  std::vector<Array> nz = nonzero(m);
  ASSERT_EQ(nz.size(), 2u);
  EXPECT_EQ(ints(nz[0]), (I{0, 1, 1}));
  EXPECT_EQ(ints(nz[1]), (I{1, 1, 2}));
  EXPECT_EQ(nz[0].dtype(), DType::Int64);
  EXPECT_EQ(ints(nonzero(array<double>({0, kNaN, -0.0, 2}))[0]), (I{1, 3}));
  EXPECT_EQ(ints(nonzero(transpose(m))[0]), (I{1, 1, 2}));
  EXPECT_EQ(nonzero(zeros({2, 0}))[1].shape(), (Shape{0}));
  Array w = argwhere(m);
  EXPECT_EQ(w.shape(), (Shape{3, 2}));
  EXPECT_EQ(ints(w), (I{0, 1, 1, 1, 1, 2}));
  EXPECT_EQ(argwhere(zeros({2, 3})).shape(), (Shape{0, 2}));
  EXPECT_EQ(argwhere(full({}, 1.0)).shape(), (Shape{1, 0}));
  EXPECT_EQ(argwhere(full({}, 0.0)).shape(), (Shape{0, 0}));
  EXPECT_EQ(ints(unique(array<int64_t>({3, 1, 3, INT64_MIN, 1, 2}))), (I{INT64_MIN, 1, 2, 3}));
  EXPECT_VALUES(unique(reshape(array<double>({kNaN, 1, kNaN, -kInf, 1, kInf}), {2, 3})), {-kInf, 1, kInf, kNaN});
  EXPECT_EQ(unique(zeros({0}, DType::Int8)).dtype(), DType::Int8);
  EXPECT_EQ(unique(zeros({0}, DType::Int8)).shape(), (Shape{0}));
  EXPECT_VALUES(unique(full({}, 2.0)), {2});
  for (DType t : kAllDTypes) {
    SCOPED_TRACE(dt(t));
    Array x = random_array(t, {5, 6}, 27, -3, 3);
    Array u = unique(x);
    EXPECT_EQ(u.dtype(), t);
    std::vector<double> v = vals(x), want;
    std::sort(v.begin(), v.end());
    for (double e : v)
      if (want.empty() || want.back() != e) want.push_back(e);
    EXPECT_EQ(vals(u), want);
    EXPECT_EQ(argwhere(x).shape(), (Shape{count_nonzero(x).item<int64_t>(), 2}));
  }
  EXPECT_EQ(ints(bincount(array<int32_t>({0, 1, 1, 3, 2, 1, 7}))), (I{1, 3, 1, 1, 0, 0, 0, 1}));
  EXPECT_EQ(ints(bincount(array<int64_t>({1, 1}), 4)), (I{0, 2, 0, 0}));
  EXPECT_EQ(ints(bincount(array<bool>({true, false, true}))), (I{1, 2}));
  EXPECT_EQ(bincount(zeros({0}, DType::Int64)).shape(), (Shape{0}));
  Array bw = bincount(array<int32_t>({0, 1, 1, 2, 2, 2}), array<double>({0.3, 0.5, 0.2, 0.7, 1.0, -0.6}));
  EXPECT_EQ(bw.dtype(), DType::Float64);
  EXPECT_VALUES(bw, {0.3, 0.7, (0.7 + 1.0) - 0.6});
  EXPECT_ARRAYC_ERROR(nonzero(full({}, 1.0)),
                      "nonzero: calling nonzero on 0-d arrays is not allowed; use nonzero(reshape(x, [1])) instead");
  EXPECT_ARRAYC_ERROR(bincount(zeros({2, 2}, DType::Int32)), "bincount: x must be 1-D, got shape [2, 2]");
  EXPECT_ARRAYC_ERROR(bincount(zeros({2})), "bincount: x must hold integers, got float32 [2]");
  EXPECT_ARRAYC_ERROR(bincount(array<int32_t>({1, -2})), "bincount: x must have no negative elements, got -2");
  EXPECT_ARRAYC_ERROR(bincount(array<int32_t>({1}), -1), "bincount: minlength must not be negative, got -1");
  EXPECT_ARRAYC_ERROR(bincount(array<int32_t>({1}), zeros({2})), "bincount: weights [2] and x [1] must have the same shape");
  EXPECT_ARRAYC_ERROR(bincount(array<uint64_t>({UINT64_MAX})), "bincount: value 18446744073709551615 is too large");
}

TEST_P(NumpyExtra, Histogram) {
  std::vector<Array> h = histogram(array<int32_t>({1, 2, 1}), 3, 0, 3);  // numpy's docstring examples
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(ints(h[0]), (I{0, 2, 1}));
  EXPECT_EQ(h[0].dtype(), DType::Int64);
  EXPECT_VALUES(h[1], {0, 1, 2, 3});
  EXPECT_EQ(h[1].dtype(), DType::Float64);
  EXPECT_EQ(ints(histogram(reshape(arange(4), {2, 2}), 3)[0]), (I{1, 1, 2}));  // the last bin holds its right edge
  EXPECT_VALUES(histogram(reshape(arange(4), {2, 2}), 3)[1], {0, 1, 2, 3});
  std::vector<Array> f = histogram(array<float>({0.1f, 0.2f, 0.2f, 0.9f, 1.0f, -1.0f, 2.0f}), 4, 0, 1);
  EXPECT_EQ(ints(f[0]), (I{3, 0, 0, 2}));  // -1 and 2 are outside the range
  EXPECT_EQ(f[1].dtype(), DType::Float32);
  EXPECT_VALUES(histogram(array<double>({5, 5}), 2)[1], {4.5, 5, 5.5});  // one value: widened by 0.5
  EXPECT_EQ(ints(histogram(array<double>({5, 5}), 2)[0]), (I{0, 2}));
  EXPECT_EQ(ints(histogram(zeros({0}), 2)[0]), (I{0, 0}));
  EXPECT_VALUES(histogram(zeros({0}), 2)[1], {0, 0.5, 1});
  EXPECT_EQ(ints(histogram(array<double>({0.1, kNaN, 0.7}), 2, 0, 1)[0]), (I{1, 1}));  // NaN is not counted
  // A value on an inner edge goes to the bin on its right, for edges that are not exact binary
  // fractions too.
  Array tenths = linspace(0, 1, 11, true, DType::Float64);
  EXPECT_EQ(ints(histogram(tenths, 10, 0, 1)[0]), (I{1, 1, 1, 1, 1, 1, 1, 1, 1, 2}));
  for (DType t : kAllDTypes) {
    SCOPED_TRACE(dt(t));
    Array x = random_array(t, {50}, 29);
    std::vector<Array> r = histogram(x, 7);
    EXPECT_EQ(r[1].dtype(), is_float(t) ? t : DType::Float64);
    EXPECT_EQ(sum(r[0]).item<int64_t>(), 50);  // every value is inside its own range
    std::vector<double> v = vals(x), e = vals(r[1]);
    I want(7, 0);
    for (double y : v) {
      size_t i = 0;
      while (i + 1 < 7 && y >= e[i + 1]) ++i;
      ++want[i];
    }
    EXPECT_EQ(ints(r[0]), want);
  }
  EXPECT_ARRAYC_ERROR(histogram(x_of_nan(), 2), "histogram: autodetected range of [nan, nan] is not finite");
  EXPECT_ARRAYC_ERROR(histogram(array<double>({1, kInf}), 2), "histogram: autodetected range of [1.0, inf] is not finite");
  EXPECT_ARRAYC_ERROR(histogram(array<double>({1}), 2, 1, kInf), "histogram: supplied range of [1.0, inf] is not finite");
  EXPECT_ARRAYC_ERROR(histogram(array<double>({1}), 2, 2, 1), "histogram: max must be larger than min in range parameter (got [2.0, 1.0])");
  EXPECT_ARRAYC_ERROR(histogram(array<double>({1}), 0), "histogram: bins must be positive, got 0");
}

TEST_P(NumpyExtra, GradAndVmapThroughTheCompositions) {
  Array x = array<double>({0.5, -1.0, 2.0, 3.0, -0.25, 1.5}, {2, 3});
  // d/dx sum(square(x)) = 2x; trace(outer(v, v)) = sum(v^2); einsum("ij,ij->", x, x) too.
  EXPECT_VALUES(grad([](const Array& a) { return sum(square(a)); })(x), {1, -2, 4, 6, -0.5, 3});
  EXPECT_VALUES(grad([](const Array& a) { return einsum("ij,ij->", {a, a}); })(x), {1, -2, 4, 6, -0.5, 3});
  EXPECT_VALUES(grad([](const Array& a) { return trace(outer(a, a)); })(x), {1, -2, 4, 6, -0.5, 3});
  // median of 6 values: the mean of the middle two (0.5 and 1.5).
  EXPECT_VALUES(grad([](const Array& a) { return median(a); })(x), {0.5, 0, 0, 0, 0, 0.5});
  EXPECT_VALUES(grad([](const Array& a) { return sum(diff(a)); })(x), {-1, 0, 1, -1, 0, 1});
  Array v = vmap([](const Array& row) { return diff(row); })(x);
  EXPECT_VALUES(v, {-1.5, 3, -3.25, 1.75});
  Array q = vmap([](const Array& row) { return quantile(row, 0.5); })(x);
  EXPECT_VALUES(q, {0.5, 1.5});
}

TEST_P(NumpyExtra, DataDependentShapesInsideJitSayWhatToUse) {
  Array x = random_array(DType::Float32, {6}, 28);
  auto nz = jit([](const Array& a) { return nonzero(a)[0]; });
  EXPECT_TRUE(raises_exactly([&] { nz(x); },
                             "in jit-traced function: nonzero: the result's shape depends on the values of the input [6], "
                             "which jit cannot trace; use where(x != 0, ...) or a mask reduction instead"));
  auto aw = jit([](const Array& a) { return argwhere(a); });
  EXPECT_ARRAYC_ERROR(aw(x), "argwhere: the result's shape depends on the values of the input [6], which jit cannot trace");
  auto un = jit([](const Array& a) { return unique(a); });
  EXPECT_ARRAYC_ERROR(un(x), "unique: the result's shape depends on the values", "use sort(x) instead");
  auto bc = jit([](const Array& a) { return bincount(a); });
  EXPECT_ARRAYC_ERROR(bc(array<int32_t>({1, 2})), "bincount: the result's shape depends on the values",
                      "use sum(x[:, None] == arange(n), 0) with a known n instead");
  auto hg = jit([](const Array& a) { return histogram(a, 3)[0]; });
  EXPECT_ARRAYC_ERROR(hg(x), "histogram: the bins are counted on the host from the values of the input [6], which jit cannot trace",
                      "with a known range, use sum(where(...)) over bins instead");
  auto bw = jit([](const Array& w) { return bincount(array<int32_t>({0, 1}), w); });
  EXPECT_ARRAYC_ERROR(bw(array<double>({1, 2})), "bincount: the result's shape depends on the values");
  // The static-shape ones work inside jit.
  auto g = jit([](const Array& a) { return median(a) + quantile(a, 0.25) + trace(outer(a, a)) + nansum(a); });
  EXPECT_MATCHES_REFERENCE(g(x), (median(x) + quantile(x, 0.25) + trace(outer(x, x)) + nansum(x)).node());
}

}  // namespace
