// Float matrix products through OpenBLAS, for the engine's dot kernels. Integer dtypes never come
// here: the engine generates loops for them.
//
// Operands are strided views. A view BLAS can read as it is (unit column stride, or unit row
// stride, which is passed as a transposed matrix) is never copied; any other view (no unit stride,
// non-positive strides, overlapping rows) is first copied into a contiguous temporary.
#pragma once
#include <cstdint>

#include "arrayc/dtype.h"

namespace arrayc::detail {

// A matrix in memory: element (r, c) is at data + (r * row_stride + c * col_stride) elements.
struct MatrixRef {
  const void* data;
  int64_t rows, cols, row_stride, col_stride;
};

// c = a (m x k) . b (k x n), c contiguous row-major m x n, not aliasing a or b. dtype is Float32
// or Float64. Uses gemv when m == 1 or n == 1; k == 0 gives zeros. `gram`: b is a's transpose
// (the same memory read across): syrk computes the upper triangle, which is then mirrored.
void gemm(DType dtype, const MatrixRef& a, const MatrixRef& b, void* c, bool gram = false);

// `batch` products; product i reads a at a.data + i * a_batch_stride elements (likewise b; a
// batch stride of 0 reuses one operand for every product) and writes c + i * m * n elements.
void gemm_batched(DType dtype, int64_t batch, const MatrixRef& a, int64_t a_batch_stride,
                  const MatrixRef& b, int64_t b_batch_stride, void* c, bool gram = false);

}  // namespace arrayc::detail
