// Matrix products on the GPU: a generated tiled kernel (shared-memory tiles, register blocking),
// specialized on dtype, tile shape and the memory layout of each operand.
//
// Structure (one block per output tile of bm x bn, grid-stride over tiles and batch):
//  - each k-step of bk, the block stages an A tile (bm x bk) and a B tile (bk x bn) in shared
//    memory, k-major (As[k][m], Bs[k][n]), double-buffered: the next tile's global loads are
//    issued into registers before the current tile is multiplied, and stored to the other buffer
//    after, so there is one barrier per k-step;
//  - each thread accumulates tm x tn outputs in registers; its rows (and columns) are groups of
//    up to 16 bytes spread a block-row apart, so the shared-memory reads are 16-byte vectors with
//    no bank conflicts;
//  - global loads are 16-byte vectors along an operand's unit-stride dimension when the caller
//    found it aligned (`a_vec`, `b_vec`), with per-vector bounds checks (edge tiles fall back to
//    guarded scalar loads); operands with no unit stride are read element by element.
//
// Calling convention of the entry:
//   ptr addrspace(1) a, b, c                 c is contiguous [batch, m, n]
//   i64 m, n, k, batch
//   i64 a_rs, a_cs, a_bs                      element (i, l) of product p of A: a[p*a_bs + i*a_rs + l*a_cs]
//   i64 b_rs, b_cs, b_bs                      element (l, j) of B: b[p*b_bs + l*b_rs + j*b_cs]
//   i64 group                                 the TMA kernel's tile order (gemm_tile_group); others ignore it
// Launch: block = GemmKernel::threads(); grid = gemm_grid(...) (any grid works; tiles are
// grid-strided). A `tma` kernel takes two more parameters, A's and B's tensor maps (by value,
// 128 bytes each, gemm_tma_operand's geometry over the operands' memory).
//
// Variants (issue 29):
//  - mma: products on the tensor cores (sm_80 and later; the FMA path on older GPUs): float64
//    with mma.sync.m8n8k4.f64 (exact: the same fused multiply-adds, in another order), float32
//    with mma.sync.m16n8k8.tf32 only when the caller allows TF32 (GemmProblem::tf32; operands
//    rounded to TF32's 10-bit mantissa, float32 accumulation). Each warp computes a (4 tm) x
//    (8 tn) tile as mma tiles; the block's tiles are staged by cp.async in `stages` shared-memory
//    buffers (dynamic shared memory, above 48 KiB where a tile needs it), each operand in its
//    own layout (k-major, or row-major when k is its unit-stride dim), padded so that the
//    fragment reads have no bank conflicts. ARRAYC_GEMM_TILE=.../simt forces the FMA path.
//    float64 on sm_90 and later may use Hopper's m16n8k4, m16n8k8 or m16n8k16 f64 shapes instead
//    (GemmKernel::f64_k; inline PTX, LLVM has no intrinsics for them; the same fused
//    multiply-adds per output in another order); older GPUs run the same kernel on m8n8k4.
//  - 16-bit operands (issue 29): a float32 product of float16 or bfloat16 operands (in_dtype),
//    read as they are. On sm_80+ (GemmProblem::half_mma) with mma.sync.m16n8k16 (f16 or bf16
//    inputs, float32 accumulators: each product of two 16-bit values is exact in float32); the
//    operands are staged in shared memory as 16-bit values by cp.async (16 bytes, 8 elements; an
//    operand without aligned 16-byte runs along its unit-stride dim element by element, by plain
//    loads and stores) and their fragments read by ldmatrix (.trans for an operand staged
//    k-major). Before sm_80 the FMA kernel widens each element as it loads it. Gram products
//    take the general tensor-core kernel (both triangles).
//  - wgmma (sm_90, Hopper; compiled for sm_90a): 16-bit operands whose unit-stride dims take
//    aligned 16-byte runs are multiplied by warpgroups (128 threads) with
//    wgmma.mma_async.m64nNk16, which reads both operands from shared memory through matrix
//    descriptors. A block of bm = 64 w rows has w warpgroups, each 64 rows by all bn columns;
//    bk = 64, so each staged row (K-major) or k-row of a 64-element atom (MN-major) is 128
//    bytes, stored with the 128-byte swizzle (the 16-byte chunk c of row r at chunk c ^ (r % 8))
//    that the descriptors name. cp.async fills a ring of `stages` stages S - 2 k-steps ahead;
//    each k-step is one barrier (after fence.proxy.async, so the tensor cores see the copies),
//    four wgmmas, and a wait for the previous step's. A thread's accumulators are the mma
//    kernel's (a warp's 16 rows, runs of two), so the stores and the epilogue are shared.
//    float32 on TF32 (GemmProblem::tf32) takes the same kernel with wgmma.m64nNk8.tf32 where
//    both operands run along k (the TF32 instruction has no transpose) and the TMA loads them:
//    bk = 32 (rows of 128 bytes again), and tensor maps of the TMA's tf32 element type, which
//    round each float32 to TF32 (to nearest) as they load, as cvt.rna does for mma.sync. An
//    operand along its outer dim is copied along k first (gemm_transposed_operand below).
//  - tma (with wgmma, when the driver makes tensor maps): the stages are filled by Hopper's
//    tensor memory accelerator instead of every thread's cp.async, and the block is warp
//    specialized: one more warpgroup (the producer: one thread issues the TMA loads, the others
//    give back their registers with setmaxnreg) runs ahead through a ring of `stages` stages,
//    each with two mbarriers: "full" (its loads' bytes arrived) and "empty" (every consumer
//    warpgroup's wgmmas on it are done). The consumer warpgroups never wait for each other:
//    no block-wide barrier after the start.
//    cluster 2 (where a row of A or B is no multiple of 128 bytes, or forced): blocks 2c and
//    2c + 1 form a cluster and walk pairs of tiles one above the other; each loads its half of
//    their shared B tile into both blocks' stages (TMA multicast), and a stage is released by
//    the consumers of both blocks (remote mbarrier arrivals), halving the L2 traffic of B.
//  - gram: the product of a matrix with its own transpose (m == n, square tile, batch 1). Only
//    the tiles on and below the diagonal are computed; a tile below it is stored twice, at its
//    place and mirrored. The result is exactly symmetric: a diagonal tile's (i, j) and (j, i)
//    are the same fused multiply-adds in the same order (fma(x, y, c) == fma(y, x, c)).
//  - epilogue: an elementwise kernel (kernel.h) that reads the product at each element's own
//    index runs on the register tile instead of a store of the product: the entry then takes
//    a, b, the epilogue's ptrs (the product's unused), the ten i64 above, then the epilogue's
//    params (kernel.h's calling convention). Its iteration space must be the product's,
//    collapsed to rank 1 ([batch*m*n]), 2 ([batch*m, n]) or 3 ([batch, m, n]):
//    gemm_epilogue_problem says whether a step's epilogue is of that form.
//  - reduction epilogue: a full reduction (sum, mean, max, min, prod to one float32/float64
//    value) of elementwise work on the product, read contiguously over the same space (W7's
//    sum(M * M), a mean squared error). Each thread folds its tiles' values (float32 sums in
//    double), each block combines its threads' in a fixed order and stores its partial, and
//    the last block to finish (a counter) combines the partials in block order and stores the
//    result: one launch, the same bits on every run of a kernel and grid. The entry takes one
//    more pointer after the i64s: scratch of kGemmReduceHeader bytes (its first 4 a u32 counter,
//    zero before the first launch and set back to zero by each) and then 8 bytes a block. In the
//    TMA kernel the consumer warpgroups reduce (a named barrier of theirs). Tiles of whole warps
//    only.
#pragma once
#include <array>
#include <cstdint>
#include <string>

#include "arrayc/dtype.h"
#include "codegen/nvptx/ptx_kernel.h"
#include "kernel/kernel.h"

namespace arrayc::detail {

struct GemmTile {
  int bm = 128, bn = 128, bk = 8;  // the block's output tile and k-step
  int tm = 8, tn = 8;              // outputs per thread
  int threads() const { return (bm / tm) * (bn / tn); }
};

// Which dimension of an operand has unit stride: none, its outer one (m of A, n of B) or k.
enum class GemmUnit : uint8_t { None, Outer, K };

struct GemmKernel {
  DType dtype = DType::Float32;
  DType in_dtype = DType::Float32;     // float16/bfloat16: the operands' dtype (see above); else unused
  GemmTile tile;
  GemmUnit a_unit = GemmUnit::None, b_unit = GemmUnit::None;
  bool a_vec = false, b_vec = false;  // 16-byte loads along the unit dimension
  bool gram = false;                   // lower-triangle tiles only, mirrored (see above)
  bool mma = false;                    // on the tensor cores (sm_80+; FMAs below), see above
  int stages = 0;                      // mma: shared-memory stages of the cp.async pipeline
  int f64_k = 0;                       // float64 mma on sm_90+: 0: m8n8k4; 4, 8, 16: m16n8k<f64_k> (see above)
  bool wgmma = false;                  // Hopper's warpgroup mma (sm_90 only; 16-bit or TF32 operands), see above
  bool tma = false;                    // wgmma with TMA loads and a producer warpgroup, see above
  int cluster = 1;                     // tma: 2: clusters of two blocks (tiles one above the other) sharing B's loads
  int max_blocks = 0;                  // launch at most this many blocks (0: one per tile); not in the text
  const Kernel* epilogue = nullptr;    // fused epilogue (the caller's; it must outlive the kernel)
  int product_leaf = -1;               // the epilogue's leaf that reads the product

  DType operands() const { return is_half(in_dtype) ? in_dtype : dtype; }
  int threads() const { return tile.threads() + (tma ? 128 : 0); }  // the block (tma: and the producer)
  std::string name() const;  // e.g. gemm_f32_128x128x8_8x8_ak4_bk4 (k: unit dim, 4: elements per load)
  std::string str() const;   // text form: the cache key
};

// One product (or a batch of them) as the kernel sees it; addresses only matter for alignment.
struct GemmProblem {
  DType dtype = DType::Float32;
  int64_t batch = 1, m = 0, n = 0, k = 0;
  uintptr_t a_addr = 0, b_addr = 0;  // address of element (0, 0) of the first product
  bool gram = false;                  // b is a's transpose (ProductForm::Gram): one triangle
  bool tf32 = false;                  // float32 may run on the TF32 tensor cores (set_matmul_precision)
  DType in_dtype = DType::Float32;    // float16/bfloat16: the operands' dtype (DotStep::in_dtype); else unused
  bool half_mma = false;              // 16-bit operands may run on the tensor cores (sm_80+)
  bool wgmma = false;                 // ... and on Hopper's warpgroup mma (sm_90 exactly: sm_90a code)
  bool tma = false;                   // ... with TMA loads (the driver makes tensor maps)
  bool clusters = false;              // ... in clusters of two blocks (the driver launches clusters)
  int64_t a_rs = 0, a_cs = 0, a_bs = 0, b_rs = 0, b_cs = 0, b_bs = 0;
};

// The kernel for a problem on a GPU with `multiprocessors` SMs: layouts and vector loads from
// the strides and alignment; the tile from the shape (big tiles when there are enough of them to
// fill the GPU, smaller ones otherwise, narrow ones for products with few columns).
// ARRAYC_GEMM_TILE=BMxBNxBK/TMxTN[/sS][/simt][/wg[/cp|/c1|/c2]] forces a tile (for tuning; /sS:
// S pipeline stages on the tensor cores; /wg: the warpgroup kernel, BMxBNxBK/4x(BN/8) with BK 64
// (16-bit) or 32 (TF32), with TMA loads where the problem allows them, /cp: with cp.async
// (16-bit only), /c1, /c2: TMA in single blocks, in clusters of two); an invalid one is an
// arrayc::Error.
GemmKernel choose_gemm(const GemmProblem& p, int multiprocessors);

// Blocks to launch for p with kernel g (the tiles, capped).
unsigned gemm_grid(const GemmKernel& g, const GemmProblem& p);

// The entry's i64 parameters before an epilogue's: m, n, k, batch, the six strides, group.
constexpr int kGemmParams = 11;

// A reduction epilogue's scratch (see above): the counter's bytes before the block partials.
constexpr int64_t kGemmReduceHeader = 256;
// Bytes of a reduction epilogue's scratch for a launch of `blocks` blocks.
inline size_t gemm_reduce_scratch(unsigned blocks) { return kGemmReduceHeader + size_t{8} * blocks; }

// The TMA kernel's blocks resident at once on a GPU of `multiprocessors` SMs (shared memory
// allows so many a multiprocessor): the persistent grid, and gemm_tile_group's measure.
int resident_blocks(const GemmKernel& g, int multiprocessors);

// The order in which the TMA kernel walks p's output tiles: units (tiles, or pairs one above the
// other in clusters) go row by row in groups of `group` rows, down each column of the group
// before the next column; 1 is plain row order. The units resident at once read the k-slabs of
// as many rows of A and columns of B as they cover, and that region should be square-ish: in
// row order a wide product's resident tiles cover few rows but every column, so all of B streams
// through L2 for each few rows of A. A group is taken when it cuts the elements read by a third
// or more (docs/cuda.md, "Tile order"). On an H100, float16 8192^3 took 1.779-1.786 ms in groups
// of 16 rows of 128x256 tiles against 1.861-1.862 in row order. ARRAYC_GEMM_GROUP=G forces G
// (for tuning; 1: row order); an invalid one is an arrayc::Error.
int64_t gemm_tile_group(const GemmKernel& g, const GemmProblem& p, int multiprocessors);

// Bytes of dynamic shared memory a launch of g on sm_<sm> needs (0: its shared memory is static).
unsigned gemm_dynamic_shared(const GemmKernel& g, int sm);

// Why `epilogue` (reading its product through input `product_ptr`) cannot run inside the product
// kernel of p, or "" when it can: it must read the product only at each element's own index, and
// its collapsed space must be one of the forms above. `leaf` is set to the product's leaf.
std::string gemm_epilogue_problem(const Kernel& epilogue, const LaunchParams& launch, int product_ptr,
                                  const GemmProblem& p, int& leaf);

// A tma kernel's view of one operand (is_a: A, else B) of p as a rank-3 tensor map: dims
// innermost first (the unit-stride dim, then the other, then the batch: 1 when the operand is
// shared by every product), byte strides of dims 1 and 2, and the box one TMA load reads (64
// elements of the unit dim: 128 bytes, the swizzle's row).
struct TmaOperand {
  std::array<uint64_t, 3> dims{};
  std::array<uint64_t, 2> strides{};
  std::array<uint32_t, 3> box{};
};
TmaOperand gemm_tma_operand(const GemmKernel& g, const GemmProblem& p, bool is_a);

// The kernel as PTX for sm_<sm>.
PtxKernel emit_gemm_ptx(const GemmKernel& g, int sm);

// TF32 products on the warpgroup kernel read both operands along k, which `x @ w` (w
// row-major) and `x.T @ dy` (a weight's gradient) do not. Such a product copies each operand that
// runs along its outer dim transposed into scratch memory first ([batch][n][k] for B,
// [batch][m][k] for A, one matrix where every product shares it) by a tiled transpose kernel,
// where each copy is read often enough to pay for it: by at least kTransposeMinOther rows (m,
// for B) or columns (n, for A). On an H100 the copy of a 4096^2 operand (128 MB moved) takes
// about 0.05 ms; TF32 on mma.sync spends about 0.6 ms more than on wgmma per 4096^3 product,
// so the break-even is near 350 rows.
constexpr int64_t kTransposeMinOther = 512;
// The operands p copies transposed first, as bits: 1 (A), 2 (B); 0: none.
int gemm_transposed_operand(const GemmProblem& p, int multiprocessors);
// p with the operands of `which` (bits: 1 A, 2 B) read from their transposed copies, contiguous
// along k (address 0: scratch memory is aligned).
GemmProblem gemm_transposed_problem(const GemmProblem& p, int which);

// The transpose kernel (emit_transpose_ptx) copies in[p][x][y] = src[p * batch_stride +
// x * x_stride + y * y_stride] to out[(p * x + x) * y + y] (contiguous, y innermost), 32-bit
// elements. Entry args: ptr src, ptr out, i64 x, y, batch, x_stride, y_stride, batch_stride;
// 256 threads a block, any grid (tiles of 64 x 64 grid-strided). Reads are coalesced where x
// has unit stride, which is the operand's outer dim.
struct GemmTranspose {
  int64_t x = 0, y = 0, batch = 1, x_stride = 0, y_stride = 0, batch_stride = 0;
  int64_t tiles() const { return (x + 63) / 64 * ((y + 63) / 64) * batch; }
};
GemmTranspose gemm_transpose(const GemmProblem& p, int which);  // which: 1 (A) or 2 (B)
PtxKernel emit_transpose_ptx(int sm);

}  // namespace arrayc::detail
