// numpy's elementwise math beyond ops.h: rounding, float classes, more transcendentals, integer
// division and remainders, bitwise operations and shifts (numpy 2 names and semantics; NEP 50
// promotion: an integer array in a float function gives float64, float32 stays float32, bool
// computes in float32). All fuse with their neighbours like the ops of ops.h. Accuracy of the
// float functions: docs/math_accuracy.md.
//
// Integer division is defined for every input (numpy's results, which it reaches with a
// warning; C would trap): x // 0 == 0, x % 0 == 0, fmod(x, 0) == 0, MIN // -1 == MIN (wraps) and
// MIN % -1 == 0. Shifts by a negative amount or by the width or more shift every bit out:
// left_shift gives 0, right_shift 0 or -1 by the sign (numpy's rule).
#pragma once
#include "arrayc/ops.h"

namespace arrayc {

// ---- Rounding and sign: integers keep their dtype (and value), bool computes in float32 ------
Array floor(const Array& a);
Array ceil(const Array& a);
Array round(const Array& a);  // to nearest, ties to even (numpy's round with decimals=0)
Array trunc(const Array& a);
Array sign(const Array& a);  // -1, 0 or 1 in a's dtype; NaN stays NaN; bool is not accepted
// minimum(maximum(a, lo), hi) (a composition that fuses; NaN in any operand gives NaN), in the
// dtype of all three.
Array clip(const Array& a, const Array& lo, const Array& hi);

// ---- Float classes: bool results (integers are finite, never NaN or inf) ---------------------
Array isnan(const Array& a);
Array isinf(const Array& a);
Array isfinite(const Array& a);

// ---- Transcendentals ------------------------------------------------------------------------
Array log1p(const Array& a);
Array expm1(const Array& a);
Array log2(const Array& a);
Array log10(const Array& a);
Array exp2(const Array& a);
Array tan(const Array& a);
Array arcsin(const Array& a);
Array arccos(const Array& a);
Array arctan(const Array& a);
Array arctan2(const Array& y, const Array& x);
Array sinh(const Array& a);
Array cosh(const Array& a);
Array arcsinh(const Array& a);
Array erf(const Array& a);
Array sigmoid(const Array& a);  // 1 / (1 + exp(-a)) (scipy.special.expit)
Array hypot(const Array& a, const Array& b);

// ---- Division and remainders (integers and floats; bool is not accepted) ---------------------
Array fmod(const Array& a, const Array& b);          // C's fmod: the sign of a
Array floor_divide(const Array& a, const Array& b);  // floor(a / b), numpy's for floats
Array remainder(const Array& a, const Array& b);     // Python's %: the sign of b
inline Array mod(const Array& a, const Array& b) { return remainder(a, b); }

// ---- Bits (integers and bool; shifts integers only) and logical xor ---------------------------
Array bitwise_and(const Array& a, const Array& b);
Array bitwise_or(const Array& a, const Array& b);
Array bitwise_xor(const Array& a, const Array& b);
Array invert(const Array& a);  // ~a; on bool, logical not
inline Array bitwise_not(const Array& a) { return invert(a); }
Array left_shift(const Array& a, const Array& b);
Array right_shift(const Array& a, const Array& b);  // arithmetic (sign-filling)
Array logical_xor(const Array& a, const Array& b);  // any dtypes: (a != 0) != (b != 0)

// ---- Operators --------------------------------------------------------------------------------
inline Array operator%(const Array& a, const Array& b) { return remainder(a, b); }
inline Array operator&(const Array& a, const Array& b) { return bitwise_and(a, b); }
inline Array operator|(const Array& a, const Array& b) { return bitwise_or(a, b); }
inline Array operator^(const Array& a, const Array& b) { return bitwise_xor(a, b); }
inline Array operator~(const Array& a) { return invert(a); }
inline Array operator<<(const Array& a, const Array& b) { return left_shift(a, b); }
inline Array operator>>(const Array& a, const Array& b) { return right_shift(a, b); }

// Arrays with C++ scalars, which combine as numpy's Python scalars do (ops.h).
#define ARRAYC_MATH_SCALAR_OPERATOR(op, fn)                                                   \
  template <Scalar S> Array op(const Array& a, S s) { return fn(a, scalar_for(s, a, #fn)); } \
  template <Scalar S> Array op(S s, const Array& a) { return fn(scalar_for(s, a, #fn), a); }
ARRAYC_MATH_SCALAR_OPERATOR(operator%, remainder)
ARRAYC_MATH_SCALAR_OPERATOR(operator&, bitwise_and)
ARRAYC_MATH_SCALAR_OPERATOR(operator|, bitwise_or)
ARRAYC_MATH_SCALAR_OPERATOR(operator^, bitwise_xor)
ARRAYC_MATH_SCALAR_OPERATOR(operator<<, left_shift)
ARRAYC_MATH_SCALAR_OPERATOR(operator>>, right_shift)
ARRAYC_MATH_SCALAR_OPERATOR(fmod, fmod)
ARRAYC_MATH_SCALAR_OPERATOR(floor_divide, floor_divide)
ARRAYC_MATH_SCALAR_OPERATOR(remainder, remainder)
ARRAYC_MATH_SCALAR_OPERATOR(mod, remainder)
ARRAYC_MATH_SCALAR_OPERATOR(arctan2, arctan2)
ARRAYC_MATH_SCALAR_OPERATOR(hypot, hypot)
ARRAYC_MATH_SCALAR_OPERATOR(bitwise_and, bitwise_and)
ARRAYC_MATH_SCALAR_OPERATOR(bitwise_or, bitwise_or)
ARRAYC_MATH_SCALAR_OPERATOR(bitwise_xor, bitwise_xor)
ARRAYC_MATH_SCALAR_OPERATOR(left_shift, left_shift)
ARRAYC_MATH_SCALAR_OPERATOR(right_shift, right_shift)
ARRAYC_MATH_SCALAR_OPERATOR(logical_xor, logical_xor)
#undef ARRAYC_MATH_SCALAR_OPERATOR

template <Scalar L, Scalar H> Array clip(const Array& a, L lo, H hi) {
  return clip(a, scalar_for(lo, a, "clip"), scalar_for(hi, a, "clip"));
}

}  // namespace arrayc
