// Wrong values and internal errors that the random differential tester found, most in fused
// programs with several outputs, some on a GPU only (issue 26); run on every device. Each test builds its class over dtypes and
// shapes, evaluates the outputs together (so that requested outputs may share a kernel) and
// compares each with the reference interpreter.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "support/devices.h"
#include "support/reference.h"

namespace {

using arrayc::Array;
using arrayc::DType;
using arrayc::Shape;
using arrayc::Slice;

class SeveralOutputs : public arrayc_test::DeviceTest {};

// Evaluates `outs` in one call (one Program) and compares each with its reference.
void expect_together(const std::vector<Array>& outs) {
  std::vector<arrayc_test::HostArray> want;
  for (const Array& a : outs) want.push_back(arrayc_test::reference_of(a.node()));
  arrayc::eval(outs);
  for (size_t k = 0; k < outs.size(); ++k)
    EXPECT_TRUE(arrayc_test::matches_values(arrayc_test::values_of(outs[k]), want[k])) << "output " << k;
}

// n values of dtype t: small and large magnitudes of both signs, zeros, and (floats) the specials.
Array values(DType t, const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) v[k] = (k % 7 == 3 ? -1.0 : 1.0) * static_cast<double>((k * 37) % 101) / 4.0 - 3.0;
  if (n > 2 && arrayc::is_float(t)) v[1] = std::numeric_limits<double>::infinity();
  if (n > 5 && arrayc::is_float(t)) v[5] = std::nan("");
  return arrayc::cast(arrayc::array(v, shape), t);
}

// Requested outputs of one shape share a kernel unless one depends on another through a
// materialized node. That was decided before the nodes that the kernels later materialize were
// known: here c = (|r| > 1e4) is materialized because two kernels read it (the shared one and a
// reshape of it), and it reads r, an output of the shared kernel: "fusion produced a cycle
// between kernels". r is elementwise work or a reduction over an empty axis list.
TEST_P(SeveralOutputs, AValueTwoKernelsReadBesideTheOutputItReads) {
  for (DType t : {DType::Float32, DType::Float64, DType::Int32, DType::Int16, DType::Float16, DType::Bool}) {
    for (const Shape& shape : {Shape{}, Shape{1}, Shape{3, 4}, Shape{7, 4, 1}}) {
      for (int form = 0; form < 5; ++form) {
        SCOPED_TRACE(std::string(arrayc::dtype_name(t)) + arrayc::shape_str(shape) + " form " + std::to_string(form));
        Array x = values(t, shape);
        std::vector<int64_t> none;
        Array r = form == 0   ? arrayc::minimum(x, arrayc::cast(arrayc::full({}, 2.5, DType::Float16), t))
                  : form == 1 ? arrayc::sum(x, none, true)
                  : form == 2 ? arrayc::min(x, none, true)
                  : form == 3 ? arrayc::all(x, none, true)
                              : arrayc::var(x, none, 0.0, true);
        Array c = arrayc::greater(arrayc::abs(arrayc::cast(r, DType::Float64)), arrayc::full({}, 1e4, DType::Float64));
        Shape other = shape;
        other.insert(other.begin(), 1);
        expect_together({arrayc::logical_not(c), arrayc::reshape(c, other), arrayc::cast(r, DType::Float32),
                         arrayc::where(c, arrayc::full({}, 0.0, r.dtype()), r)});
      }
    }
  }
}

// A gather (roll, take, concatenate) whose source is another output of the same shape: both
// were computed by one kernel, which read the source at other positions while writing it. The
// GPU read unwritten memory (NaN and denormals in 7 of 9 elements of a roll, wrong integers in a
// concatenate of a uint16 cast, inf for exp(take(...)) of a uint16 value).
TEST_P(SeveralOutputs, AGatherOfAnOutputBesideIt) {
  for (DType t : {DType::Int8, DType::UInt16, DType::Float32, DType::Float64, DType::Int64}) {
    for (const Shape& shape : {Shape{2, 2, 9}, Shape{1512}, Shape{33, 40}}) {
      SCOPED_TRACE(std::string(arrayc::dtype_name(t)) + arrayc::shape_str(shape));
      Array x = values(t, shape);
      Array v = arrayc::log2(arrayc::abs(x));
      expect_together({arrayc::roll(v, -3, 0), arrayc::broadcast_to(v, shape)});
      expect_together({arrayc::roll(v, 4, -1), arrayc::transpose(v)});
      Array u = arrayc::cast(x, DType::UInt16);
      int64_t n0 = shape[0];
      std::vector<int32_t> idx(static_cast<size_t>(n0));
      for (int64_t k = 0; k < n0; ++k) idx[k] = static_cast<int32_t>((k * 5 + 1) % n0);
      Array index = arrayc::array(idx, {n0});
      expect_together({arrayc::exp(arrayc::take(u, index, 0)), u});
      expect_together({arrayc::concatenate({u[{Slice(1, arrayc::none)}], u[{Slice(0, 1)}]}, 0), u});
      expect_together({arrayc::hypot(arrayc::take(v, index, 0), arrayc::full({}, 1.5, DType::Float32)), v});
    }
  }
}

// A reduction along the last axis that a row chain computes in its kernel, whose view is also a
// requested output: the output read a buffer that no kernel wrote ("reading a node that is not
// in memory").
TEST_P(SeveralOutputs, AViewOfARowChainsReductionAsAnOutput) {
  for (DType t : {DType::Float32, DType::Float64, DType::Int32, DType::Bool}) {
    for (const Shape& shape : {Shape{4, 9}, Shape{2, 3, 5}, Shape{3, 2}, Shape{6, 1}}) {
      SCOPED_TRACE(std::string(arrayc::dtype_name(t)) + arrayc::shape_str(shape));
      Array x = values(t, shape);
      int64_t last = static_cast<int64_t>(shape.size()) - 1;
      Array s = arrayc::sum(x, {last}, true);
      expect_together({arrayc::greater(x, s), arrayc::reshape(s, {-1})});
      Array m = arrayc::max(x, {last}, true);
      expect_together({arrayc::where(arrayc::less(x, m), m, x), m[{arrayc::newaxis}], arrayc::ravel(m)});
    }
  }
  // The tester's case: the argmax of a float64 scalar, its max, reshapes of both.
  Array a = arrayc::argmax(arrayc::full({}, 5.0, DType::Float64));
  Array top = arrayc::max(a);
  expect_together({arrayc::all(top[{arrayc::newaxis}], std::vector<int64_t>{}, true), arrayc::reshape(a, {1, -1, 1, 1})});
}

// GPU: abs of int16 -32768 is -32768 (numpy wraps), also where a comparison reads it; the H100
// compared it as 32768. And where a cast to a float reads it: the H100 converted int32 abs(-2^31)
// to +2^31 (the GPU differential tester: a remainder by it).
TEST_P(SeveralOutputs, AbsOfTheMostNegativeIntegerInAComparison) {
  for (DType t : {DType::Int8, DType::Int16, DType::Int32, DType::Int64}) {
    SCOPED_TRACE(arrayc::dtype_name(t));
    Array lo = arrayc::full({}, 0.0, t);
    Array min = arrayc::full({}, 1.0, t) << arrayc::full({}, 8.0 * static_cast<double>(arrayc::dtype_size(t)) - 1, t);
    Array x = arrayc::concatenate({arrayc::broadcast_to(min[{arrayc::newaxis}], {3}),
                                   arrayc::cast(arrayc::array(std::vector<int32_t>{-5, -1, 0, 1, 6}, {5}), t)}, 0);
    Array y = arrayc::cast(arrayc::array(std::vector<int32_t>{6, 0, -1, 6, 0, -1, 6, 0}, {8}), t);
    Array ax = arrayc::abs(x);
    expect_together({arrayc::greater(ax, y), arrayc::less(ax, lo + y), ax, arrayc::negative(x), arrayc::equal(ax, x)});
    Array three = arrayc::full({}, 3.0, DType::Float64);
    expect_together({arrayc::cast(ax, DType::Float64), arrayc::cast(ax, DType::Float32),
                     arrayc::remainder(three, arrayc::cast(ax, DType::Float64))});
    EXPECT_MATCHES_REFERENCE(arrayc::remainder(three, ax));
  }
}
// GPU: libdevice's hypot overflowed to inf for an operand near the largest finite value, where
// the result is finite (NaN after a multiplication by 0, 0 for a division by it).
TEST_P(SeveralOutputs, HypotNearTheLargestFiniteValue) {
  for (DType t : {DType::Float64, DType::Float32}) {
    SCOPED_TRACE(arrayc::dtype_name(t));
    double top = t == DType::Float64 ? std::numeric_limits<double>::max() : std::numeric_limits<float>::max();
    Array x = arrayc::cast(arrayc::array(std::vector<double>{-top, top / 1.5, 3.0, top, 0x1p120, -0.0, top, 1e-30}, {8}), t);
    Array y = arrayc::cast(arrayc::array(std::vector<double>{2.66, top / 2, 4.0, top, 0x1p120, 1e-30, 1.0, top / 3}, {8}), t);
    Array h = arrayc::hypot(x, arrayc::broadcast_to(y[{arrayc::newaxis}], {3, 8}));
    expect_together({h, arrayc::multiply(h, arrayc::full({}, 0.0, t)), arrayc::divide(arrayc::full({}, 2.0, t), h)});
  }
}
ARRAYC_DEVICE_SUITE(SeveralOutputs);

}  // namespace
