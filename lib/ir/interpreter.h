// The reference interpreter: a plain scalar evaluator of the graph, no LLVM. It is the oracle of
// the end-to-end tests, so it favours being obviously right over being fast.
//
// Semantics, per op (ops.def documents them; these are the details the tests rely on):
//  - float32 ops compute in float with the C float functions (expf, logf, ...), float64 in
//    double. Sum, Prod and Mean of floats accumulate in double (compensated) and round once to
//    the dtype at the end, so the oracle is more accurate than any summation order the JIT picks.
//    Dot accumulates in its dtype (float for float32, double for float64), in k order.
//  - Integer arithmetic wraps at the dtype's width (two's complement); abs and neg of the
//    minimum wrap too; unsigned dtypes compare unsigned (uint64 is held as its bit pattern).
//  - float16 and bfloat16 ops compute in float (as float32's) and round the result to 16 bits,
//    which is numpy's rule and what a native 16-bit add, multiply or divide gives.
//  - Pow on integers: exponentiation by squaring (wrapping); a negative exponent gives 0, except
//    for base 1 (1) and base -1 (1 or -1 by the exponent's parity).
//  - Maximum, Minimum and the Max, Min reductions propagate NaN.
//  - Cast float -> int saturates to the int range, NaN -> 0; float -> bool and int -> bool are
//    x != 0 (NaN -> true); int -> narrower int wraps; bool -> anything is 0 or 1; int ->
//    float16/bfloat16 goes through float32 (node.h's int_to_float).
//  - Sum over nothing is 0, Prod 1, Mean 0/0 = NaN.
//  - Iota: the row-major linear index converted to the dtype; RandUniform and RandNormal: see
//    philox.h.
//
// Optionally it also computes, for every element, a bound on how far a correct implementation
// may be from the interpreted value (forward error analysis: each op adds the ULPs it is allowed
// and passes on the error of its inputs, scaled by the op's sensitivity; a sum or dot of n terms
// t adds ulps * eps * sqrt(n) * (sqrt(sum t^2) + |sum t|), the typical rounding error of any
// summation order). The tests use it as
// their tolerance, so expressions with cancellation or ill-conditioned ops are judged fairly.
// An infinite bound means "undecidable" (e.g. a comparison of two values closer than their
// errors): such elements are not checked.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "ir/node.h"

namespace arrayc::detail {

// Values of one array on the host, row-major and contiguous.
struct HostArray {
  DType dtype = DType::Float32;
  Shape shape;
  std::vector<double> f;   // float dtypes (float32 values are exactly representable)
  std::vector<int64_t> i;  // bool (0/1) and integer dtypes
  // Per-element error bounds (absolute, in the value's units); empty unless asked for.
  std::vector<double> err;

  int64_t numel() const { return shape_numel(shape); }
  double as_double(int64_t k) const {
    return is_float(dtype) ? f[static_cast<size_t>(k)] : int_value(dtype, i[static_cast<size_t>(k)]);
  }
};

// Host data of the given dtype and shape (values converted to the dtype with Cast's rules).
HostArray host_array(DType dtype, const Shape& shape, const std::vector<double>& values);

struct InterpretOptions {
  // When set, error bounds are computed (HostArray::err): the ULPs an implementation may be off
  // by for one application of `op` producing `dtype`, beyond the error of its inputs.
  std::function<double(Op op, DType dtype)> op_ulps;
};

// Evaluates `node`; Param nodes take params[index] (its dtype and shape must match). Shared
// subgraphs are evaluated once.
HostArray interpret(const NodeRef& node, const std::vector<HostArray>& params = {});
HostArray interpret(const NodeRef& node, const std::vector<HostArray>& params,
                    const InterpretOptions& options);

// The spacing of `dtype` at |x| (its unit in the last place); 0 for infinities and NaN.
double ulp_of(double x, DType dtype);

}  // namespace arrayc::detail
