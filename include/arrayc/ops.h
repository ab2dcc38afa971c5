// The numpy-like operations. Each builds a graph node and checks its arguments at once: a shape,
// dtype or device mistake raises arrayc::Error here, naming the op, never later inside LLVM.
//
// Scalars combine with arrays as numpy's scalars do: `x * 1.5` keeps float32 x float32, an
// integer scalar keeps an integer array's dtype, and a float scalar with an integer array gives
// float64.
#pragma once
#include <cstdint>
#include <type_traits>
#include <vector>

#include "arrayc/array.h"

namespace arrayc {

// ---- Creation -----------------------------------------------------------------------------
// Host data, row-major; data.size() must equal the number of elements of shape.
template <typename T>
Array array(const std::vector<T>& data, const Shape& shape, Device device = default_device());
template <typename T> Array array(const std::vector<T>& data) {
  return array(data, Shape{static_cast<int64_t>(data.size())});
}
Array zeros(const Shape& shape, DType dtype = DType::Float32, Device device = default_device());
Array ones(const Shape& shape, DType dtype = DType::Float32, Device device = default_device());
Array full(const Shape& shape, double value, DType dtype = DType::Float32,
           Device device = default_device());
// An integer value is exact (all 64 bits, not through double); one outside an integer dtype's
// range raises arrayc::Error (as numpy 2 does); to a float dtype it rounds once.
namespace detail {
Array full_integer(const Shape& shape, int64_t value, DType dtype, Device device);
Array full_unsigned(const Shape& shape, uint64_t value, DType dtype, Device device);  // exact (issue 26)
}
template <typename I>
  requires(std::is_integral_v<I> && !std::is_same_v<I, bool>)
Array full(const Shape& shape, I value, DType dtype = DType::Float32, Device device = default_device()) {
  if constexpr (std::is_unsigned_v<I> && sizeof(I) >= sizeof(int64_t))
    if (value > static_cast<I>(INT64_MAX)) return detail::full_unsigned(shape, value, dtype, device);
  return detail::full_integer(shape, static_cast<int64_t>(value), dtype, device);
}
// numpy's arange: [start, stop) in steps of step. arange(n) is int64 unless dtype is given.
Array arange(int64_t stop, DType dtype = DType::Int64, Device device = default_device());
Array arange(double start, double stop, double step = 1.0, DType dtype = DType::Float64,
             Device device = default_device());
// Counter-based (Philox-4x32-10) random numbers: element i depends only on (seed, i), so the
// same seed gives the same numbers on any device and any thread count.
Array uniform(const Shape& shape, uint64_t seed, double low = 0.0, double high = 1.0,
              DType dtype = DType::Float32, Device device = default_device());
Array normal(const Shape& shape, uint64_t seed, double mean = 0.0, double stddev = 1.0,
             DType dtype = DType::Float32, Device device = default_device());

// A scalar of the given value, typed the way numpy types a Python scalar next to `like`.
// An integral value beside an integer array must fit its dtype, as below (`op` names the op in
// the error).
Array scalar_like(double value, bool integral, const Array& like, const char* op = "scalar");
// The same for an integer, exact in all 64 bits (numpy 2, NEP 50): beside an int32 array a value
// outside int32 raises arrayc::Error naming `op`, where it used to saturate.
Array scalar_like(int64_t value, const Array& like, const char* op);
// An unsigned integer past int64 (beside a uint64 or float array; any other dtype raises).
Array scalar_like_unsigned(uint64_t value, const Array& like, const char* op);
// A C++ scalar next to `like` in the op `op` (the scalar operators below). Integers are weak as
// Python's (NEP 50): one that `like`'s integer dtype cannot hold raises (uint8 array + 300).
template <typename S> Array scalar_for(S s, const Array& like, const char* op) {
  if constexpr (std::is_integral_v<S> && !std::is_same_v<S, bool> && std::is_unsigned_v<S> &&
                sizeof(S) >= sizeof(int64_t))
    return scalar_like_unsigned(static_cast<uint64_t>(s), like, op);
  else if constexpr (std::is_integral_v<S> && !std::is_same_v<S, bool>)
    return scalar_like(static_cast<int64_t>(s), like, op);
  else
    return scalar_like(static_cast<double>(s), std::is_integral_v<S>, like);
}

// ---- Elementwise ----------------------------------------------------------------------------
Array add(const Array& a, const Array& b);
Array subtract(const Array& a, const Array& b);
Array multiply(const Array& a, const Array& b);
Array divide(const Array& a, const Array& b);  // true division: integers give float64
Array pow(const Array& a, const Array& b);
Array maximum(const Array& a, const Array& b);
Array minimum(const Array& a, const Array& b);
Array equal(const Array& a, const Array& b);
Array not_equal(const Array& a, const Array& b);
Array less(const Array& a, const Array& b);
Array less_equal(const Array& a, const Array& b);
Array greater(const Array& a, const Array& b);
Array greater_equal(const Array& a, const Array& b);
Array logical_and(const Array& a, const Array& b);
Array logical_or(const Array& a, const Array& b);
Array logical_not(const Array& a);
Array negative(const Array& a);
Array abs(const Array& a);
Array exp(const Array& a);
Array log(const Array& a);
Array sin(const Array& a);
Array cos(const Array& a);
Array tanh(const Array& a);
Array sqrt(const Array& a);
Array where(const Array& cond, const Array& a, const Array& b);
Array cast(const Array& a, DType dtype);

// ---- Views (no copies) ----------------------------------------------------------------------
Array reshape(const Array& a, const Shape& shape);  // one dimension may be -1
Array transpose(const Array& a);                     // reverses the axes
Array transpose(const Array& a, const std::vector<int64_t>& perm);
Array broadcast_to(const Array& a, const Shape& shape);
Array expand_dims(const Array& a, int64_t axis);

// ---- Reductions: over all axes, or the given ones (negative counts from the end) -------------
Array sum(const Array& a);
Array sum(const Array& a, const std::vector<int64_t>& axes, bool keepdims = false);
Array prod(const Array& a);
Array prod(const Array& a, const std::vector<int64_t>& axes, bool keepdims = false);
Array max(const Array& a);
Array max(const Array& a, const std::vector<int64_t>& axes, bool keepdims = false);
Array min(const Array& a);
Array min(const Array& a, const std::vector<int64_t>& axes, bool keepdims = false);
Array mean(const Array& a);
Array mean(const Array& a, const std::vector<int64_t>& axes, bool keepdims = false);

// ---- Matrix products, with numpy's semantics --------------------------------------------------
Array dot(const Array& a, const Array& b);     // 1-D and 2-D operands
Array matmul(const Array& a, const Array& b);  // also batched: (..., m, k) x (..., k, n)

// ---- Operators --------------------------------------------------------------------------------
template <typename S>
concept Scalar = std::is_arithmetic_v<S>;

inline Array operator+(const Array& a, const Array& b) { return add(a, b); }
inline Array operator-(const Array& a, const Array& b) { return subtract(a, b); }
inline Array operator*(const Array& a, const Array& b) { return multiply(a, b); }
inline Array operator/(const Array& a, const Array& b) { return divide(a, b); }
inline Array operator==(const Array& a, const Array& b) { return equal(a, b); }
inline Array operator!=(const Array& a, const Array& b) { return not_equal(a, b); }
inline Array operator<(const Array& a, const Array& b) { return less(a, b); }
inline Array operator<=(const Array& a, const Array& b) { return less_equal(a, b); }
inline Array operator>(const Array& a, const Array& b) { return greater(a, b); }
inline Array operator>=(const Array& a, const Array& b) { return greater_equal(a, b); }
inline Array operator&&(const Array& a, const Array& b) { return logical_and(a, b); }
inline Array operator||(const Array& a, const Array& b) { return logical_or(a, b); }
inline Array operator!(const Array& a) { return logical_not(a); }
inline Array operator-(const Array& a) { return negative(a); }

#define ARRAYC_SCALAR_OPERATOR(op, fn)                                                         \
  template <Scalar S> Array op(const Array& a, S s) {                                           \
    return fn(a, scalar_for(s, a, #fn));                                                        \
  }                                                                                             \
  template <Scalar S> Array op(S s, const Array& a) {                                           \
    return fn(scalar_for(s, a, #fn), a);                                                        \
  }
ARRAYC_SCALAR_OPERATOR(operator+, add)
ARRAYC_SCALAR_OPERATOR(operator-, subtract)
ARRAYC_SCALAR_OPERATOR(operator*, multiply)
ARRAYC_SCALAR_OPERATOR(operator/, divide)
ARRAYC_SCALAR_OPERATOR(operator==, equal)
ARRAYC_SCALAR_OPERATOR(operator!=, not_equal)
ARRAYC_SCALAR_OPERATOR(operator<, less)
ARRAYC_SCALAR_OPERATOR(operator<=, less_equal)
ARRAYC_SCALAR_OPERATOR(operator>, greater)
ARRAYC_SCALAR_OPERATOR(operator>=, greater_equal)
ARRAYC_SCALAR_OPERATOR(pow, pow)
ARRAYC_SCALAR_OPERATOR(maximum, maximum)
ARRAYC_SCALAR_OPERATOR(minimum, minimum)
#undef ARRAYC_SCALAR_OPERATOR

template <Scalar S> Array where(const Array& c, const Array& a, S s) {
  return where(c, a, scalar_for(s, a, "where"));
}
template <Scalar S> Array where(const Array& c, S s, const Array& b) {
  return where(c, scalar_for(s, b, "where"), b);
}

}  // namespace arrayc
