#include "backend/host/tiled.h"

#include <algorithm>
#include <atomic>
#include <cstring>
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
// The packed path's rows of a over one step's depth, at most: about a quarter of a 1-2 MiB L2.
constexpr int64_t kPackedABytes = 256 << 10;
// The packed path's tasks a thread, at least, where the shape allows: every step waits for its
// last task, and on a shared 16-core host a thread is often late (docs/blas.md, "Large products":
// two a thread were 5-25% slower than four; four to eight alike).
constexpr int64_t kPackedTasksPerThread = 4;

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

// A block of cpu_alloc's, given back when it goes out of scope.
struct Scratch {
  size_t bytes;
  char* p;
  explicit Scratch(size_t n) : bytes(n), p(static_cast<char*>(cpu_alloc(n))) {}
  ~Scratch() { cpu_free(p, bytes); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
};

// a's rows [r0, r1) over k [p0, p0 + depth), contiguous: row i at ap + (i - r0) * depth. From any
// strides: along rows (memcpy), down columns (a transposed), or element by element.
void pack_a(const MatrixRef& a, int64_t elem, int64_t r0, int64_t r1, int64_t p0, int64_t depth, char* ap) {
  const char* src = static_cast<const char*>(a.data);
  if (a.col_stride == 1 || depth == 1) {
    for (int64_t i = r0; i < r1; ++i)
      std::memcpy(ap + (i - r0) * depth * elem, src + (i * a.row_stride + p0 * a.col_stride) * elem, static_cast<size_t>(depth * elem));
    return;
  }
  auto copy = [&](auto* to, const auto* from) {
    for (int64_t p = 0; p < depth; ++p) {
      const auto* col = from + (p0 + p) * a.col_stride + r0 * a.row_stride;
      for (int64_t i = 0; i < r1 - r0; ++i) to[i * depth + p] = col[i * a.row_stride];
    }
  };
  if (elem == 8) copy(reinterpret_cast<double*>(ap), reinterpret_cast<const double*>(src));
  else copy(reinterpret_cast<float*>(ap), reinterpret_cast<const float*>(src));
}

struct Job {
  TileFn fn;
  MatrixRef a, b;
  TileRead read;  // how the kernel reads a
  char* c;
  int64_t m, n, k, elem, tr, tc, depth;  // tr x tc: a tile; depth: steps of k per panel
  TileBlocks blocks;
  int64_t col_blocks;
  const TileEpilogue* epilogue;
  int64_t per = 1, a_bs = 0, b_bs = 0;  // a batch: blocks a product, and each operand's batch stride
  int64_t first = 0;                     // the product's first element in the batch's output

  // A block's buffers: b's panels, and its rows of a where a is packed.
  size_t b_bytes() const { return static_cast<size_t>((blocks.cols + tc - 1) / tc * tc * depth * elem); }
  size_t scratch_bytes() const {
    return b_bytes() + (read == TileRead::Packed ? static_cast<size_t>(blocks.rows * depth * elem) : 0);
  }

  // Blocks [begin, end) of the batch (block i: product i / per, its block i % per), with one
  // scratch buffer for all of them.
  void blocks_of(int64_t begin, int64_t end) const {
    Scratch scratch(scratch_bytes());
    for (int64_t i = begin; i < end; ++i) {
      int64_t e = i / per;
      Job one = *this;
      one.a.data = static_cast<const char*>(a.data) + e * a_bs * elem;
      one.b.data = static_cast<const char*>(b.data) + e * b_bs * elem;
      one.c += e * m * n * elem;
      one.first = e * m * n;
      one.block(i % per, scratch.p);
    }
  }

  void block(int64_t index, char* scratch) const {
    int64_t r0 = index / col_blocks * blocks.rows, c0 = index % col_blocks * blocks.cols;
    int64_t r1 = std::min(m, r0 + blocks.rows), c1 = std::min(n, c0 + blocks.cols);
    // a in place where its rows or its columns are contiguous; else the block's rows packed a
    // panel at a time
    const bool packs = read == TileRead::Packed;
    const int64_t lda = read == TileRead::Columns ? a.col_stride : a.row_stride;  // along the read
    char* bp = scratch;
    char* ap = scratch + b_bytes();
    // Panels of k outside: each panel of b stays in L1 while the block's rows of a pass it.
    for (int64_t p0 = 0; p0 < std::max<int64_t>(k, 1); p0 += depth) {
      int64_t d = std::min(depth, k - p0);
      if (elem == 8) pack(b, p0, d, c0, c1, tc, reinterpret_cast<double*>(bp));
      else pack(b, p0, d, c0, c1, tc, reinterpret_cast<float*>(bp));
      if (packs && d > 0) pack_a(a, elem, r0, r1, p0, d, ap);
      for (int64_t j = c0, s = 0; j < c1; j += tc, ++s)
        for (int64_t i = r0; i < r1; i += tr)
          fn(packs ? ap + (i - r0) * d * elem
                   : static_cast<const char*>(a.data) + (read == TileRead::Rows ? i * lda + p0 : i + p0 * lda) * elem,
             packs ? d : lda, bp + s * d * tc * elem, c + (i * n + j) * elem, n, d, std::min(tr, r1 - i),
             std::min(tc, c1 - j), p0 > 0);
    }
    if (epilogue)
      for (int64_t i = r0; i < r1; ++i) epilogue->fn(epilogue->ctx, first + i * n + c0, first + i * n + c1);
  }
};

// ---- The packed path, for products too large for the blocks above to keep in cache ----
//
// As GotoBLAS and BLIS block a product: k in steps of one panel's depth; each step's rows of b
// packed once into panels shared by every task (while a step computes, its tasks pack the next
// step's, into the other of two buffers, so that a step is one parallel call); each task's rows
// of a packed contiguous for that step (their rows no longer a power of two apart, whose
// addresses share L1 sets), then every column panel of its block passes them.
struct Packed {
  TileFn fn;
  MatrixRef a, b;
  char* c;
  int64_t m, n, k, elem, tr, tc, depth, steps;
  TilePackedPlan plan;
  int64_t panels;  // of b's columns in a step
  char* bp[2];                             // a step's panels, in turns
  const TileEpilogue* epilogue;

  int64_t step_depth(int64_t s) const { return std::min(depth, k - s * depth); }
  // Column panels [q0, q1) of step s's b into its buffer.
  void pack_b(int64_t s, int64_t q0, int64_t q1) const {
    if (q0 >= q1) return;
    int64_t d = step_depth(s);
    char* to = bp[s % 2] + q0 * d * tc * elem;
    int64_t c0 = q0 * tc, c1 = std::min(n, q1 * tc);
    if (elem == 8) pack(b, s * depth, d, c0, c1, tc, reinterpret_cast<double*>(to));
    else pack(b, s * depth, d, c0, c1, tc, reinterpret_cast<float*>(to));
  }
  // Task t of step s: its share of step s + 1's panels, then its block of step s.
  void task(int64_t s, int64_t t) const {
    int64_t tasks = plan.tasks();
    if (s + 1 < steps) pack_b(s + 1, panels * t / tasks, panels * (t + 1) / tasks);
    int64_t r0 = t / plan.col_blocks * plan.rows, q0 = t % plan.col_blocks * plan.panels;
    int64_t r1 = std::min(m, r0 + plan.rows), q1 = std::min(panels, q0 + plan.panels);
    int64_t d = step_depth(s), p0 = s * depth;
    Scratch ap(static_cast<size_t>((r1 - r0) * d * elem));
    pack_a(a, elem, r0, r1, p0, d, ap.p);
    for (int64_t q = q0; q < q1; ++q)
      for (int64_t i = r0; i < r1; i += tr)
        fn(ap.p + (i - r0) * d * elem, d, bp[s % 2] + q * d * tc * elem, c + (i * n + q * tc) * elem, n, d,
           std::min(tr, r1 - i), std::min(tc, n - q * tc), s > 0);
    if (epilogue && s + 1 == steps)
      for (int64_t i = r0; i < r1; ++i) epilogue->fn(epilogue->ctx, i * n + q0 * tc, i * n + std::min(n, q1 * tc));
  }
};

struct PackedStep {
  const Packed* job;
  int64_t step;
};

void packed_gemm(const Packed& job) {
  // Step 0's panels first, then one parallel call a step.
  parallel_for(
      job.panels, 1, [](void* p, int64_t begin, int64_t end) { static_cast<const Packed*>(p)->pack_b(0, begin, end); },
      const_cast<Packed*>(&job));
  for (int64_t s = 0; s < job.steps; ++s) {
    PackedStep ps{&job, s};
    parallel_for(
        job.plan.tasks(), 1,
        [](void* p, int64_t begin, int64_t end) {
          auto* ps = static_cast<PackedStep*>(p);
          for (int64_t t = begin; t < end; ++t) ps->job->task(ps->step, t);
        },
        &ps);
  }
}

std::atomic<int> g_tiled_policy{0};  // 0: the setting, else the rule; 1 always; -1 never
std::atomic<int> g_packed_policy{0};  // 0: the rule; 1 always; -1 never

}  // namespace

void set_tiled_on_host(int policy) { g_tiled_policy.store(policy, std::memory_order_relaxed); }

namespace {

// The tests' policy, else ARRAYC_TILED_PRODUCTS (read once, at the first product); nullopt: the
// host's rule.
std::optional<bool> tiled_forced() {
  int p = g_tiled_policy.load(std::memory_order_relaxed);
  if (p != 0) return p > 0;
  static const std::optional<int64_t> setting = tiled_products_setting();
  if (setting) return *setting != 0;
  return std::nullopt;
}

}  // namespace

bool tiled_takes(int64_t m, int64_t n, int64_t k) {
  int64_t work = product_work(m, n, k);
  if (work > kTiledMaxWork && product_work(m, n, 1) < kTiledPackedMinOutputs) return false;
  if (std::optional<bool> forced = tiled_forced()) return *forced;
  int bits = host_vector_bits();
  if (work > kTiledMaxWork) return bits >= 512;
  return work >= kTiledMinWork && (bits >= 512 || (bits >= 256 && work < kTiledNarrowMaxWork));
}

bool tiled_takes_batched(int64_t m, int64_t n, int64_t k) {
  if (product_work(m, n, k) > kTiledMaxWork) return false;
  if (std::optional<bool> forced = tiled_forced()) return *forced;
  return tiled_batch_bounds(m, n, k) && host_vector_bits() >= 256;
}

TileRead tile_read(const MatrixRef& a) {
  if (a.cols <= 1 || a.col_stride == 1) return TileRead::Rows;
  if (a.rows <= 1 || a.row_stride == 1) return TileRead::Columns;
  return TileRead::Packed;
}

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

int tile_threads_per_product(int64_t batch) {
  return static_cast<int>(std::max<int64_t>(1, (num_threads() + batch - 1) / std::max<int64_t>(1, batch)));
}

void set_tiled_packed(int policy) { g_packed_policy.store(policy, std::memory_order_relaxed); }

bool tiled_packs(int64_t m, int64_t n, int64_t k) {
  int p = g_packed_policy.load(std::memory_order_relaxed);
  if (p != 0) return p > 0 && k > 0;
  return product_work(m, n, k) > kTiledMaxWork;
}

TilePackedPlan tile_packed_plan(DType dtype, int64_t m, int64_t n, int64_t k, int threads, int bits) {
  int64_t tr = tile_rows(bits), tc = tile_cols(dtype, bits), elem = static_cast<int64_t>(dtype_size(dtype));
  int64_t depth = std::min(std::max<int64_t>(k, 1), tile_depth(dtype, bits));
  int64_t rt = std::max<int64_t>(1, (m + tr - 1) / tr), panels = std::max<int64_t>(1, (n + tc - 1) / tc);
  // Rows of a within about a quarter of L2 over a step's depth, and kPackedTasksPerThread tasks a
  // thread where the rows allow, else columns split too.
  int64_t br = std::max<int64_t>(1, std::min(rt, (kPackedABytes / (depth * elem)) / tr));
  int64_t want = kPackedTasksPerThread * threads;
  while (br > 1 && ((rt + br - 1) / br) < want) br = (br + 1) / 2;
  int64_t bq = panels;
  while (bq > 1 && ((rt + br - 1) / br) * ((panels + bq - 1) / bq) < want) bq = (bq + 1) / 2;
  return {br * tr, bq, (rt + br - 1) / br, (panels + bq - 1) / bq};
}

namespace {

TileFn tile_function(DType dtype, int bits, TileRead read) {
  const bool columns = read == TileRead::Columns;
  return reinterpret_cast<TileFn>(host_module_function(tile_symbol(dtype, bits, columns), [&](llvm::LLVMContext& ctx) {
    return emit_tile_gemm(dtype, bits, ctx, columns);
  }));
}

// The blocks of `batch` products (c's contiguous one after the other), a pool task each: for one
// product, at least one a thread; for a batch, the threads shared among its products.
void run_blocks(DType dtype, int64_t batch, const MatrixRef& a, int64_t a_bs, const MatrixRef& b, int64_t b_bs, void* c,
                const TileEpilogue* epilogue, TileFn fn, TileRead read, int bits) {
  int64_t m = a.rows, k = a.cols, n = b.cols, elem = static_cast<int64_t>(dtype_size(dtype));
  TileBlocks blocks = tile_blocks(dtype, m, n, k, tile_threads_per_product(batch), bits);
  int64_t tc = tile_cols(dtype, bits), max_depth = tile_depth(dtype, bits);
  int64_t panels = std::max<int64_t>(1, (k + max_depth - 1) / max_depth);
  Job job{fn, a, b, read, static_cast<char*>(c), m, n, k, elem, tile_rows(bits), tc,
          std::max<int64_t>(1, (k + panels - 1) / panels), blocks, (n + blocks.cols - 1) / blocks.cols, epilogue};
  job.per = blocks.count(m, n);
  job.a_bs = a_bs;
  job.b_bs = b_bs;
  int64_t work = blocks.rows * blocks.cols * std::max<int64_t>(1, k);
  parallel_for(
      batch * job.per, std::max<int64_t>(1, kChunkWork / work),
      [](void* p, int64_t begin, int64_t end) {
        static_cast<const Job*>(p)->blocks_of(begin, end);
      },
      &job);
}

}  // namespace

void tiled_gemm(DType dtype, const MatrixRef& a, const MatrixRef& b, void* c, const TileEpilogue* epilogue) {
  ARRAYC_INTERNAL_CHECK(dtype == DType::Float32 || dtype == DType::Float64, "tiled_gemm: dtype must be float32 or float64");
  ARRAYC_INTERNAL_CHECK(a.cols == b.rows, "tiled_gemm: a's columns must be b's rows");
  int64_t m = a.rows, k = a.cols, n = b.cols;
  if (m == 0 || n == 0) return;
  int bits = host_vector_bits();
  const bool packed = tiled_packs(m, n, k);
  // The packed path reads a as it packs it, by rows; the blocks read it in place where they can.
  const TileRead read = packed ? TileRead::Packed : tile_read(a);
  TileFn fn = tile_function(dtype, bits, read);
  int64_t elem = static_cast<int64_t>(dtype_size(dtype));
  if (packed) {
    int64_t tc = tile_cols(dtype, bits), depth = tile_depth(dtype, bits), steps = (k + depth - 1) / depth;
    TilePackedPlan plan = tile_packed_plan(dtype, m, n, k, num_threads(), bits);
    int64_t panels = (n + tc - 1) / tc;
    Packed job{fn,   a,  b, static_cast<char*>(c), m, n, k, elem, tile_rows(bits), tc, depth, steps, plan,
               panels, {nullptr, nullptr}, epilogue};
    size_t bytes = static_cast<size_t>(panels * tc * std::min(k, depth) * elem);
    Scratch even(bytes), odd(bytes);
    job.bp[0] = even.p;
    job.bp[1] = odd.p;
    packed_gemm(job);
    return;
  }
  run_blocks(dtype, 1, a, 0, b, 0, c, epilogue, fn, read, bits);
}

void tiled_gemm_batched(DType dtype, int64_t batch, const MatrixRef& a, int64_t a_batch_stride, const MatrixRef& b,
                        int64_t b_batch_stride, void* c, const TileEpilogue* epilogue) {
  ARRAYC_INTERNAL_CHECK(dtype == DType::Float32 || dtype == DType::Float64, "tiled_gemm_batched: dtype must be float32 or float64");
  ARRAYC_INTERNAL_CHECK(a.cols == b.rows && batch >= 0, "tiled_gemm_batched: a's columns must be b's rows");
  if (batch == 0 || a.rows == 0 || b.cols == 0) return;
  int bits = host_vector_bits();
  const TileRead read = tile_read(a);
  run_blocks(dtype, batch, a, a_batch_stride, b, b_batch_stride, c, epilogue, tile_function(dtype, bits, read), read, bits);
}

}  // namespace arrayc::detail
