#include "backend/host/blas.h"

#include <cblas.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <string>

#include "arrayc/error.h"
#include "backend/host/blas_config.h"
#include "backend/host/cpu_allocator.h"
#include "backend/host/thread_pool.h"

namespace arrayc::detail {
namespace {

constexpr int64_t kBlasIntMax = std::numeric_limits<blasint>::max();

// Batches of products at most this many multiply-adds each run side by side on our pool.
// OpenBLAS runs products this small single-threaded (its cutoffs are higher), so our workers
// never enter its thread server at the same time; larger products run one after another and
// OpenBLAS threads each of them.
constexpr int64_t kSmallGemm = 65536;
constexpr int64_t kSmallGemv = 8192;
// Multiply-adds per pool chunk, so that tiny products are handed out in bunches.
constexpr int64_t kChunkWork = 65536;

// How BLAS reads an operand: as row-major storage of the matrix (trans false) or of its
// transpose (trans true), with leading dimension ld.
struct Layout {
  bool trans;
  int64_t ld;
};

// The layout BLAS can read x through in place, if there is one.
std::optional<Layout> blas_layout(const MatrixRef& x) {
  // The stride of a dimension of size 1 is never used, so any value will do for it.
  bool unit_col = x.cols == 1 || x.col_stride == 1;
  bool unit_row = x.rows == 1 || x.row_stride == 1;
  if (unit_col) {
    int64_t ld = x.rows == 1 ? std::max<int64_t>(1, x.cols) : x.row_stride;
    if (ld >= std::max<int64_t>(1, x.cols) && ld <= kBlasIntMax) return Layout{false, ld};
  }
  if (unit_row) {
    int64_t ld = x.cols == 1 ? std::max<int64_t>(1, x.rows) : x.col_stride;
    if (ld >= std::max<int64_t>(1, x.rows) && ld <= kBlasIntMax) return Layout{true, ld};
  }
  return std::nullopt;
}

// A temporary from cpu_alloc, freed when it goes out of scope.
class Temp {
 public:
  explicit Temp(size_t bytes) : data_(cpu_alloc(bytes)), bytes_(bytes) {}
  Temp(const Temp&) = delete;
  Temp& operator=(const Temp&) = delete;
  ~Temp() { cpu_free(data_, bytes_); }
  void* data() const { return data_; }

 private:
  void* data_;
  size_t bytes_;
};

// One side of the product, ready for BLAS: product i reads data + i * batch_stride.
template <typename T>
struct Operand {
  const T* data;
  int64_t batch_stride;
  Layout layout;
};

// Uses x in place when BLAS can read it; otherwise copies it (once if broadcast over the batch,
// else every product's matrix) into `temp`, contiguous and row-major.
template <typename T>
Operand<T> prepare(const MatrixRef& x, int64_t batch, int64_t batch_stride,
                   std::optional<Temp>& temp) {
  const T* src = static_cast<const T*>(x.data);
  if (std::optional<Layout> layout = blas_layout(x)) return {src, batch_stride, *layout};
  int64_t copies = batch_stride == 0 ? 1 : batch;
  int64_t size = x.rows * x.cols;
  T* dst = static_cast<T*>(temp.emplace(copies * size * sizeof(T)).data());
  for (int64_t i = 0; i < copies; ++i) {
    const T* from = src + i * batch_stride;
    T* to = dst + i * size;
    for (int64_t r = 0; r < x.rows; ++r)
      for (int64_t c = 0; c < x.cols; ++c)
        to[r * x.cols + c] = from[r * x.row_stride + c * x.col_stride];
  }
  return {dst, copies == 1 ? 0 : size, Layout{false, x.cols}};
}

CBLAS_TRANSPOSE transpose_flag(bool trans) { return trans ? CblasTrans : CblasNoTrans; }

// c = op(a) . op(b), row-major; c has leading dimension n.
void blas_gemm(bool trans_a, bool trans_b, blasint m, blasint n, blasint k, const float* a,
               blasint lda, const float* b, blasint ldb, float* c) {
  cblas_sgemm(CblasRowMajor, transpose_flag(trans_a), transpose_flag(trans_b), m, n, k, 1.0f, a,
              lda, b, ldb, 0.0f, c, n);
}
void blas_gemm(bool trans_a, bool trans_b, blasint m, blasint n, blasint k, const double* a,
               blasint lda, const double* b, blasint ldb, double* c) {
  cblas_dgemm(CblasRowMajor, transpose_flag(trans_a), transpose_flag(trans_b), m, n, k, 1.0, a,
              lda, b, ldb, 0.0, c, n);
}

// c (n x n, upper triangle) = op(a) . op(a)^T: op(a) is n x k, stored row-major (trans false)
// or as its transpose (k x n, trans true).
void blas_syrk(bool trans, blasint n, blasint k, const float* a, blasint lda, float* c) {
  cblas_ssyrk(CblasRowMajor, CblasUpper, transpose_flag(trans), n, k, 1.0f, a, lda, 0.0f, c, n);
}
void blas_syrk(bool trans, blasint n, blasint k, const double* a, blasint lda, double* c) {
  cblas_dsyrk(CblasRowMajor, CblasUpper, transpose_flag(trans), n, k, 1.0, a, lda, 0.0, c, n);
}

// Copies the upper triangle of the n x n matrix c to the lower, in square blocks of kMirror
// (a block's reads and writes stay in cache), block rows spread over the pool.
constexpr int64_t kMirror = 64;
template <typename T>
struct Mirror {
  T* c;
  int64_t n;
  void rows(int64_t bi_begin, int64_t bi_end) const {
    for (int64_t bi = bi_begin; bi < bi_end; ++bi) {
      int64_t i0 = bi * kMirror, i1 = std::min(n, i0 + kMirror);
      for (int64_t j0 = 0; j0 <= i0; j0 += kMirror) {  // blocks left of the diagonal, and on it
        int64_t j1 = std::min(n, j0 + kMirror);
        for (int64_t i = i0; i < i1; ++i)
          for (int64_t j = j0; j < std::min(j1, i); ++j) c[i * n + j] = c[j * n + i];
      }
    }
  }
};
template <typename T>
void mirror_upper(T* c, int64_t n) {
  Mirror<T> m{c, n};
  int64_t blocks = (n + kMirror - 1) / kMirror;
  parallel_for(
      blocks, std::max<int64_t>(1, 32768 / (kMirror * std::max<int64_t>(1, n))),
      [](void* p, int64_t begin, int64_t end) { static_cast<const Mirror<T>*>(p)->rows(begin, end); }, &m);
}

// y = op(a) . x for a stored row-major as rows x cols; y contiguous.
void blas_gemv(bool trans, blasint rows, blasint cols, const float* a, blasint lda,
               const float* x, blasint incx, float* y) {
  cblas_sgemv(CblasRowMajor, transpose_flag(trans), rows, cols, 1.0f, a, lda, x, incx, 0.0f, y, 1);
}
void blas_gemv(bool trans, blasint rows, blasint cols, const double* a, blasint lda,
               const double* x, blasint incx, double* y) {
  cblas_dgemv(CblasRowMajor, transpose_flag(trans), rows, cols, 1.0, a, lda, x, incx, 0.0, y, 1);
}

template <typename T>
struct BatchedProduct {
  int64_t m, n, k;
  Operand<T> a, b;
  T* c;
  bool gram;  // b is a's transpose: syrk, then mirror

  // Products [begin, end) of the batch.
  void run(int64_t begin, int64_t end) const {
    for (int64_t i = begin; i < end; ++i)
      multiply(a.data + i * a.batch_stride, b.data + i * b.batch_stride, c + i * m * n);
  }

  void multiply(const T* pa, const T* pb, T* pc) const {
    if (gram && m > 1) {
      blas_syrk(a.layout.trans, m, k, pa, a.layout.ld, pc);
      mirror_upper(pc, m);
      return;
    }
    if (m != 1 && n != 1) {
      blas_gemm(a.layout.trans, b.layout.trans, m, n, k, pa, a.layout.ld, pb, b.layout.ld, pc);
      return;
    }
    // A matrix-vector product. y starts at zero so that nothing stale in c (NaN bit patterns
    // from a reused buffer) can leak in, whatever the BLAS does with beta == 0.
    std::fill(pc, pc + m * n, T(0));
    if (m == 1) {
      // c^T = b^T . a^T, with a's only row as the vector.
      blasint inc = a.layout.trans ? a.layout.ld : 1;
      if (b.layout.trans) blas_gemv(false, n, k, pb, b.layout.ld, pa, inc, pc);
      else blas_gemv(true, k, n, pb, b.layout.ld, pa, inc, pc);
    } else {
      // c = a . b, with b's only column as the vector.
      blasint inc = b.layout.trans ? 1 : b.layout.ld;
      if (a.layout.trans) blas_gemv(true, k, m, pa, a.layout.ld, pb, inc, pc);
      else blas_gemv(false, m, k, pa, a.layout.ld, pb, inc, pc);
    }
  }
};

template <typename T>
void gemm_batched_typed(int64_t batch, const MatrixRef& a, int64_t a_batch_stride,
                        const MatrixRef& b, int64_t b_batch_stride, T* c, bool gram) {
  int64_t m = a.rows, k = a.cols, n = b.cols;
  if (batch == 0 || m == 0 || n == 0) return;
  if (k == 0) {
    std::fill(c, c + batch * m * n, T(0));
    return;
  }
  for (int64_t dim : {m, n, k}) {
    if (dim > kBlasIntMax)
      throw Error("dot: matrix dimension " + std::to_string(dim) + " exceeds BLAS's limit of " +
                  std::to_string(kBlasIntMax));
  }
  configure_blas();
  std::optional<Temp> a_temp, b_temp;
  Operand<T> pa = prepare<T>(a, batch, a_batch_stride, a_temp);
  // A Gram product reads a alone (b is its transpose), so only a is ever copied.
  Operand<T> pb = gram ? Operand<T>{nullptr, 0, Layout{false, 0}} : prepare<T>(b, batch, b_batch_stride, b_temp);
  BatchedProduct<T> product{m, n, k, pa, pb, c, gram};
  int64_t work = m * n * k;
  if (batch > 1 && work <= (m == 1 || n == 1 ? kSmallGemv : kSmallGemm)) {
    parallel_for(
        batch, std::max<int64_t>(1, kChunkWork / work),
        [](void* p, int64_t begin, int64_t end) {
          static_cast<const BatchedProduct<T>*>(p)->run(begin, end);
        },
        &product);
  } else {
    product.run(0, batch);
  }
}

}  // namespace

void gemm(DType dtype, const MatrixRef& a, const MatrixRef& b, void* c, bool gram) {
  gemm_batched(dtype, 1, a, 0, b, 0, c, gram);
}

void gemm_batched(DType dtype, int64_t batch, const MatrixRef& a, int64_t a_batch_stride,
                  const MatrixRef& b, int64_t b_batch_stride, void* c, bool gram) {
  ARRAYC_INTERNAL_CHECK(!gram || (a.rows == b.cols && a.cols == b.rows && a.data == b.data &&
                                  a.row_stride == b.col_stride && a.col_stride == b.row_stride),
                        "gemm: a Gram product whose b is not a's transpose");
  ARRAYC_INTERNAL_CHECK(is_float(dtype), "gemm: dtype must be float32 or float64");
  ARRAYC_INTERNAL_CHECK(a.cols == b.rows, "gemm: inner dimensions differ");
  ARRAYC_INTERNAL_CHECK(batch >= 0 && a.rows >= 0 && a.cols >= 0 && b.cols >= 0,
                        "gemm: negative extent");
  if (dtype == DType::Float32)
    gemm_batched_typed(batch, a, a_batch_stride, b, b_batch_stride, static_cast<float*>(c), gram);
  else
    gemm_batched_typed(batch, a, a_batch_stride, b, b_batch_stride, static_cast<double*>(c), gram);
}

}  // namespace arrayc::detail
