// The reference semantics of the numpy math ops (ops.def's "numpy math" block), one element at a
// time, for the interpreter (interpreter.cpp). Floats compute in their dtype with the C library
// (float32 with the float functions), which the tests take as the truth within op_ulps;
// integers and bool are exact, with numpy's rules for division by zero and out-of-range shifts.
#pragma once
#include <cstdint>

#include "ir/node.h"

namespace arrayc::detail {

// op on float operands of dtype t (a, and b for binary ops). False when op is not one of these.
// Ops with a bool result (isnan, isinf, isfinite, logical_xor) give 0 or 1.
bool numpy_math_float(Op op, DType t, double a, double b, double& r);

// A bound on how far op's result can move when its operands move by up to ea and eb (the
// extremes of the operands' intervals are tried; +inf when undecidable).
double numpy_math_float_spread(Op op, DType t, double a, double ea, double b, double eb, double r);

// op on bool or integer operands of dtype t, as int64 values (bool 0 or 1); the result is not
// yet wrapped to the result's dtype. False when op is not one of these.
bool numpy_math_int(Op op, DType t, int64_t a, int64_t b, uint64_t& r);

// Whether op gives bool from its operands (isnan, isinf, isfinite, logical_xor).
bool numpy_math_gives_bool(Op op);

}  // namespace arrayc::detail
