// Skinny float products on the host (issue 29; docs/blas.md, "Skinny products"): c = a . b with
// few columns of b, by the LLVM-generated kernel of codegen/cpu/skinny_gemm.h, for the host's
// vector width, rows of a spread over the thread pool. a is read once, straight from memory;
// b is packed (its columns as rows) into a buffer that stays in L1/L2. The products pass
// (passes/products.h) chooses it per shape; this runs it.
#pragma once
#include <vector>

#include "arrayc/dtype.h"
#include "backend/host/blas.h"

namespace arrayc::detail {

// Whether the kernel can read a in place: its rows contiguous (unit column stride, or one
// column). Otherwise the caller uses BLAS (gemm), which reads transposed operands in place.
bool skinny_reads(const MatrixRef& a);

// The column chunks of b that skinny_gemm runs one kernel each over, left to right: as few as
// the kernel's width at `bits`-bit vectors allows, of near-equal widths.
std::vector<int64_t> skinny_column_chunks(int64_t n, int bits);

// c = a (m x k) . b (k x n), c contiguous row-major m x n, not aliasing a or b; dtype Float32 or
// Float64; skinny_reads(a); b any strides. k == 0 gives zeros.
void skinny_gemm(DType dtype, const MatrixRef& a, const MatrixRef& b, void* c);

}  // namespace arrayc::detail
