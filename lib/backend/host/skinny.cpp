#include "backend/host/skinny.h"

#include <algorithm>
#include <vector>

#include "arrayc/error.h"
#include "backend/host/cpu_allocator.h"
#include "backend/host/host_jit.h"
#include "backend/host/thread_pool.h"
#include "codegen/cpu/skinny_gemm.h"

namespace arrayc::detail {
namespace {

using SkinnyFn = void (*)(const void* a, int64_t lda, const void* bt, int64_t ldbt, void* c, int64_t ldc, int64_t k,
                          int64_t row_begin, int64_t row_end);

SkinnyFn kernel(DType dtype, int nc, int bits) {
  return reinterpret_cast<SkinnyFn>(host_module_function(
      skinny_symbol(dtype, nc, bits), [&](llvm::LLVMContext& ctx) { return emit_skinny_gemm(dtype, nc, bits, ctx); }));
}

// Rows of a per block: each block's rows go through every column chunk of b while they are in
// L1 (about 16 KiB of them).
constexpr int64_t kBlockBytes = 16 * 1024;
// Multiply-adds per pool chunk, at least: smaller products run on the calling thread.
constexpr int64_t kChunkWork = 1 << 17;

struct Chunk {
  int64_t col0, cols;
  SkinnyFn fn;
};

struct Job {
  const char* a;
  int64_t lda;
  const char* bt;
  int64_t ldbt;
  char* c;
  int64_t n, k, elem, block_rows;
  std::vector<Chunk> chunks;

  void rows(int64_t begin, int64_t end) const {
    for (int64_t r0 = begin; r0 < end; r0 += block_rows) {
      int64_t r1 = std::min(end, r0 + block_rows);
      for (const Chunk& ch : chunks)
        ch.fn(a, lda, bt + ch.col0 * ldbt * elem, ldbt, c + ch.col0 * elem, n, k, r0, r1);
    }
  }
};

template <typename T>
void pack_columns(const MatrixRef& b, T* bt, int64_t ldbt) {
  const T* src = static_cast<const T*>(b.data);
  for (int64_t j = 0; j < b.cols; ++j) {
    T* row = bt + j * ldbt;
    for (int64_t i = 0; i < b.rows; ++i) row[i] = src[i * b.row_stride + j * b.col_stride];
    std::fill(row + b.rows, row + ldbt, T(0));
  }
}

}  // namespace

std::vector<int64_t> skinny_column_chunks(int64_t n, int bits) {
  int64_t max_cols = skinny_max_cols(bits), nchunks = (n + max_cols - 1) / max_cols;
  std::vector<int64_t> widths;
  for (int64_t i = 0, col = 0; i < nchunks; ++i) {
    widths.push_back((n - col) / (nchunks - i));
    col += widths.back();
  }
  return widths;
}

bool skinny_reads(const MatrixRef& a) { return a.cols <= 1 || a.col_stride == 1; }

void skinny_gemm(DType dtype, const MatrixRef& a, const MatrixRef& b, void* c) {
  ARRAYC_INTERNAL_CHECK(dtype == DType::Float32 || dtype == DType::Float64, "skinny_gemm: dtype must be float32 or float64");
  ARRAYC_INTERNAL_CHECK(a.cols == b.rows && skinny_reads(a), "skinny_gemm: operands it cannot read");
  int64_t m = a.rows, k = a.cols, n = b.cols;
  int64_t elem = dtype == DType::Float64 ? 8 : 4;
  if (m == 0 || n == 0) return;
  if (k == 0) {
    std::fill(static_cast<char*>(c), static_cast<char*>(c) + m * n * elem, 0);
    return;
  }
  int bits = host_vector_bits();
  int64_t lanes = bits / (8 * elem);
  int64_t ldbt = (k + lanes - 1) / lanes * lanes;
  size_t bt_bytes = static_cast<size_t>(n * ldbt * elem);
  void* bt = cpu_alloc(bt_bytes);
  if (dtype == DType::Float64) pack_columns(b, static_cast<double*>(bt), ldbt);
  else pack_columns(b, static_cast<float*>(bt), ldbt);

  Job job{static_cast<const char*>(a.data), a.row_stride, static_cast<const char*>(bt), ldbt, static_cast<char*>(c),
          n, k, elem, std::max<int64_t>(1, kBlockBytes / (k * elem)), {}};
  int64_t col = 0;
  for (int64_t cols : skinny_column_chunks(n, bits)) {
    job.chunks.push_back({col, cols, nullptr});
    col += cols;
  }
  try {
    for (Chunk& ch : job.chunks) ch.fn = kernel(dtype, static_cast<int>(ch.cols), bits);
    parallel_for(
        m, std::max<int64_t>(1, kChunkWork / (k * n)),
        [](void* p, int64_t begin, int64_t end) { static_cast<const Job*>(p)->rows(begin, end); }, &job);
  } catch (...) {
    cpu_free(bt, bt_bytes);
    throw;
  }
  cpu_free(bt, bt_bytes);
}

}  // namespace arrayc::detail
