#include "backend/host/tiled.h"

#include <algorithm>
#include <atomic>
#include <optional>

#include "arrayc/error.h"
#include "backend/host/cpu_allocator.h"
#include "backend/host/host_jit.h"
#include "backend/host/thread_pool.h"
#include "codegen/cpu/tile_gemm.h"
#include "kernel/schedule.h"
#include "support/env.h"

namespace arrayc::detail {
namespace {

using TileFn = void (*)(const void* a, int64_t lda, const void* bp, void* c, int64_t ldc, int64_t k, int64_t rows,
                        int64_t cols, int64_t accumulate);

// A block's rows of a and columns of b over one panel depth, at most: about half a 2 MiB L2.
constexpr int64_t kBlockBytes = 1 << 20;
// Multiply-adds per pool chunk, at least: smaller products run on the calling thread.
constexpr int64_t kChunkWork = 1 << 20;

// b's rows [p0, p0 + depth) and columns [c0, c1) as panels of tc columns (zero past c1), each
// `depth` rows of tc elements, panel s at bp + s * depth * tc. Along b's unit stride.
template <typename T>
void pack(const MatrixRef& b, int64_t p0, int64_t depth, int64_t c0, int64_t c1, int64_t tc, T* bp) {
  const T* src = static_cast<const T*>(b.data);
  for (int64_t s = 0, j0 = c0; j0 < c1; ++s, j0 += tc) {
    T* panel = bp + s * depth * tc;
    int64_t cols = std::min(tc, c1 - j0);
    if (cols < tc) std::fill(panel, panel + depth * tc, T(0));
    if (b.col_stride == 1 || b.row_stride != 1) {
      for (int64_t p = 0; p < depth; ++p) {
        const T* row = src + (p0 + p) * b.row_stride + j0 * b.col_stride;
        for (int64_t j = 0; j < cols; ++j) panel[p * tc + j] = row[j * b.col_stride];
      }
    } else {  // b's columns contiguous (a transpose): down each column
      for (int64_t j = 0; j < cols; ++j) {
        const T* col = src + p0 + (j0 + j) * b.col_stride;
        for (int64_t p = 0; p < depth; ++p) panel[p * tc + j] = col[p];
      }
    }
  }
}

struct Job {
  TileFn fn;
  const char* a;
  MatrixRef b;
  char* c;
  int64_t lda, m, n, k, elem, tr, tc, depth;  // tr x tc: a tile; depth: steps of k per panel
  TileBlocks blocks;
  int64_t col_blocks;
  const TileEpilogue* epilogue;

  void block(int64_t index) const {
    int64_t r0 = index / col_blocks * blocks.rows, c0 = index % col_blocks * blocks.cols;
    int64_t r1 = std::min(m, r0 + blocks.rows), c1 = std::min(n, c0 + blocks.cols);
    size_t bytes = static_cast<size_t>((c1 - c0 + tc - 1) / tc * tc * depth * elem);
    void* bp = cpu_alloc(bytes);
    // Panels of k outside: each panel of b stays in L1 while the block's rows of a pass it.
    for (int64_t p0 = 0; p0 < std::max<int64_t>(k, 1); p0 += depth) {
      int64_t d = std::min(depth, k - p0);
      if (elem == 8) pack(b, p0, d, c0, c1, tc, static_cast<double*>(bp));
      else pack(b, p0, d, c0, c1, tc, static_cast<float*>(bp));
      for (int64_t j = c0, s = 0; j < c1; j += tc, ++s)
        for (int64_t i = r0; i < r1; i += tr)
          fn(a + (i * lda + p0) * elem, lda, static_cast<char*>(bp) + s * d * tc * elem, c + (i * n + j) * elem, n, d,
             std::min(tr, r1 - i), std::min(tc, c1 - j), p0 > 0);
    }
    cpu_free(bp, bytes);
    if (epilogue)
      for (int64_t i = r0; i < r1; ++i) epilogue->fn(epilogue->ctx, i * n + c0, i * n + c1);
  }
};

std::atomic<int> g_tiled_policy{0};  // 0: the setting, else the rule; 1 always; -1 never

}  // namespace

void set_tiled_on_host(int policy) { g_tiled_policy.store(policy, std::memory_order_relaxed); }

bool tiled_takes(int64_t work) {
  if (work > kTiledMaxWork) return false;
  int p = g_tiled_policy.load(std::memory_order_relaxed);
  if (p != 0) return p > 0;
  static const std::optional<int64_t> setting = tiled_products_setting();  // read once, at the first product
  if (setting) return *setting != 0;
  int bits = host_vector_bits();
  return work >= kTiledMinWork && (bits >= 512 || (bits >= 256 && work < kTiledNarrowMaxWork));
}

bool tile_reads(const MatrixRef& a) { return a.cols <= 1 || a.col_stride == 1; }

TileBlocks tile_blocks(DType dtype, int64_t m, int64_t n, int64_t k, int threads, int bits) {
  int64_t tr = tile_rows(bits), tc = tile_cols(dtype, bits), elem = static_cast<int64_t>(dtype_size(dtype));
  k = std::min(k, tile_depth(dtype, bits));  // per panel
  int64_t rt = std::max<int64_t>(1, (m + tr - 1) / tr), ct = std::max<int64_t>(1, (n + tc - 1) / tc);
  int64_t br = rt, bc = ct;  // a block, in tiles
  auto blocks = [&] { return ((rt + br - 1) / br) * ((ct + bc - 1) / bc); };
  auto halve = [&] {  // the longer side, in elements
    if (bc == 1 || (br > 1 && br * tr >= bc * tc)) br = (br + 1) / 2;
    else bc = (bc + 1) / 2;
  };
  // A block a thread at least, and each block's operands within about half of L2.
  while ((br > 1 || bc > 1) && (blocks() < threads || (br * tr + bc * tc) * k * elem > kBlockBytes)) halve();
  return {br * tr, bc * tc};
}

void tiled_gemm(DType dtype, const MatrixRef& a, const MatrixRef& b, void* c, const TileEpilogue* epilogue) {
  ARRAYC_INTERNAL_CHECK(dtype == DType::Float32 || dtype == DType::Float64, "tiled_gemm: dtype must be float32 or float64");
  ARRAYC_INTERNAL_CHECK(a.cols == b.rows && tile_reads(a), "tiled_gemm: operands it cannot read");
  int64_t m = a.rows, k = a.cols, n = b.cols;
  if (m == 0 || n == 0) return;
  int bits = host_vector_bits();
  auto fn = reinterpret_cast<TileFn>(host_module_function(
      tile_symbol(dtype, bits), [&](llvm::LLVMContext& ctx) { return emit_tile_gemm(dtype, bits, ctx); }));
  int64_t elem = static_cast<int64_t>(dtype_size(dtype));
  TileBlocks blocks = tile_blocks(dtype, m, n, k, num_threads(), bits);
  int64_t tc = tile_cols(dtype, bits), max_depth = tile_depth(dtype, bits);
  int64_t panels = std::max<int64_t>(1, (k + max_depth - 1) / max_depth);
  Job job{fn, static_cast<const char*>(a.data), b, static_cast<char*>(c), a.row_stride, m, n, k, elem, tile_rows(bits), tc,
          std::max<int64_t>(1, (k + panels - 1) / panels), blocks, (n + blocks.cols - 1) / blocks.cols, epilogue};
  int64_t count = blocks.count(m, n), work = blocks.rows * blocks.cols * std::max<int64_t>(1, k);
  parallel_for(
      count, std::max<int64_t>(1, kChunkWork / work),
      [](void* p, int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) static_cast<const Job*>(p)->block(i);
      },
      &job);
}

}  // namespace arrayc::detail
