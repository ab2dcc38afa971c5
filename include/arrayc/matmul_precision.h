// The precision of float32 matrix products (issue 29).
//
// Highest (the default): float32 products are exact float32 arithmetic, each output a sum of
// float32 products accumulated in float32 with fused multiply-adds, on every device.
// High: float32 products on a GPU with tensor cores (sm_80 and later) may run on the TF32 tensor
// cores: each operand is rounded to TF32 (float32's range, a 10-bit mantissa: relative error at
// most 2^-11 per operand) and the products are accumulated in float32, several times faster than
// exact float32. Gram products (x @ x.T, one triangle mirrored), products with few columns and
// every CPU product stay exact. float64 products are always exact (their tensor-core
// instruction is float64 arithmetic).
//
// ARRAYC_MATMUL_PRECISION=highest|high sets the starting value (read at the first product or
// call of these functions; another value is an arrayc::Error). The setting applies to what is
// compiled after the call: eager expressions evaluated later,
// and jit functions (it is part of their cache key, like set_fast_math).
#pragma once

namespace arrayc {

enum class MatmulPrecision { Highest, High };

void set_matmul_precision(MatmulPrecision p);
MatmulPrecision matmul_precision();

}  // namespace arrayc
