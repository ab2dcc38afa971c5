// Tiled float products on the host (issue 29; docs/blas.md, "Tiled products"): c = a . b for a
// general product small enough that OpenBLAS's packing and thread start-up outweigh its kernel,
// by the LLVM-generated register-tiled kernel of codegen/cpu/tile_gemm.h at the host's vector
// width. The output is cut into blocks of whole tiles, one pool task each; a is read in place
// where its rows are contiguous (else packed by each task), b packed by each task into panels
// that stay in L1 (any strides). Large products go a step of k
// at a time instead, both operands packed (tiled_packs). An epilogue fused into the
// product runs on each block's rows as soon as the block is done, while it is in cache, in the
// same task. The host backend chooses it per shape (tiled_takes); this runs it.
#pragma once
#include <cstdint>
#include <string>

#include "arrayc/dtype.h"
#include "backend/host/blas.h"

namespace arrayc::detail {

// Whether this host takes the kernel for a 2-D general float m x k . k x n product, where it was
// measured faster than OpenBLAS (docs/blas.md): from kTiledMinWork to kTiledMaxWork multiply-adds
// (kernel/schedule.h) where its vectors are 512 bits wide (AVX-512: 32 registers, 12 x 32 float32
// tiles), and above that, by the packed path, products of kTiledPackedMinOutputs outputs or more;
// below kTiledNarrowMaxWork with 256-bit vectors (16 registers, 6 x 16 tiles), above which
// OpenBLAS's kernels were as fast or faster. ARRAYC_TILED_PRODUCTS=1 takes the kernel for every
// such product in its bounds on any host (and below kTiledMinWork), 0 for none.
bool tiled_takes(int64_t m, int64_t n, int64_t k);
// The same for a batch of such products, m x k . k x n each: more than kTiledBatchMinWork and at
// most kTiledBatchMaxWork multiply-adds a product, on hosts with 256- or 512-bit vectors
// (ARRAYC_TILED_PRODUCTS=1: any batch up to kTiledMaxWork a product; 0 none).
bool tiled_takes_batched(int64_t m, int64_t n, int64_t k);
// Tests: 1 as ARRAYC_TILED_PRODUCTS=1, -1 as =0, 0 back to the setting and the rule.
void set_tiled_on_host(int policy);

// How the blocks' kernel reads a: in place by rows (its rows contiguous, or one column), in place
// by columns (a transposed: the kernel's "_at" variant), or packed by each task a panel of k at a
// time (neither stride 1). The packed path packs a whatever its strides.
enum class TileRead { Rows, Columns, Packed };
TileRead tile_read(const MatrixRef& a);

// A block of the output: rows [row0, row1) by columns [col0, col1).
struct TileBlocks {
  int64_t rows, cols;  // of a block; the last ones in each direction may be smaller
  int64_t count(int64_t m, int64_t n) const { return ((m + rows - 1) / rows) * ((n + cols - 1) / cols); }
};
// The blocks tiled_gemm cuts an m x n product with inner dimension k into for `threads` threads
// (whole tiles of the kernel at `bits`-bit vectors): at least `threads` of them where the tiles
// allow, each small enough that its rows of a and columns of b over one panel's depth stay in L2.
TileBlocks tile_blocks(DType dtype, int64_t m, int64_t n, int64_t k, int threads, int bits);

// Products above kTiledMaxWork multiply-adds take the packed path (docs/blas.md, "Large products"):
// k in steps of one panel's depth, each step's b packed once for all tasks, each task's rows of a
// packed for the step. A task is `rows` rows of the output by `panels` panels of its columns, at
// least four a thread where the shape allows.
struct TilePackedPlan {
  int64_t rows, panels;
  int64_t row_blocks, col_blocks;  // the tasks of a step: row_blocks x col_blocks
  int64_t tasks() const { return row_blocks * col_blocks; }
};
bool tiled_packs(int64_t m, int64_t n, int64_t k);
TilePackedPlan tile_packed_plan(DType dtype, int64_t m, int64_t n, int64_t k, int threads, int bits);
// Tests and benchmarks: 1 takes the packed path for every product (k > 0), -1 never, 0 the rule.
void set_tiled_packed(int policy);

// The threads each product of a batch gets, for tile_blocks: all of them for one product.
int tile_threads_per_product(int64_t batch);

// Called on contiguous ranges [begin, end) of the output's elements (row-major m x n) once their
// products are in c.
struct TileEpilogue {
  void (*fn)(void* ctx, int64_t begin, int64_t end);
  void* ctx;
};

// c = a (m x k) . b (k x n), c contiguous row-major m x n, not aliasing a or b; dtype Float32 or
// Float64; a and b any strides. k == 0 gives zeros. With `epilogue`, each block's rows are passed
// to it as they are done, in the block's task.
void tiled_gemm(DType dtype, const MatrixRef& a, const MatrixRef& b, void* c, const TileEpilogue* epilogue = nullptr);

// `batch` such products: product e reads a and b at e times their batch strides (in elements; 0
// broadcasts) and writes c's e-th m x n matrix. Their blocks share the pool (tile_blocks for the
// threads a product gets). With `epilogue`, each block's rows are passed to it as they are done,
// as element ranges of the whole batch's output.
void tiled_gemm_batched(DType dtype, int64_t batch, const MatrixRef& a, int64_t a_batch_stride, const MatrixRef& b,
                        int64_t b_batch_stride, void* c, const TileEpilogue* epilogue = nullptr);

}  // namespace arrayc::detail
