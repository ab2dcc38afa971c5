#include "backend/host/blas.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "backend/host/cpu_allocator.h"
#include "backend/host/thread_pool.h"

namespace arrayc::detail {
namespace {

// How a test matrix is laid out in its buffer.
enum class Layout {
  RowMajor,    // row_stride = cols, col_stride = 1
  Padded,      // row-major with row_stride > cols
  Transposed,  // row_stride = 1 (column-major): BLAS reads it with the transpose flag
  Strided,     // neither stride is 1: must be copied
  Reversed,    // negative row stride: must be copied
};

std::string layout_name(Layout l) {
  switch (l) {
    case Layout::RowMajor: return "row-major";
    case Layout::Padded: return "padded";
    case Layout::Transposed: return "transposed";
    case Layout::Strided: return "strided";
    case Layout::Reversed: return "reversed";
  }
  return "?";
}

// A rows x cols matrix of random values inside a buffer whose unused slots hold NaN, so that
// reading a wrong element shows up in the result. Holds `batch` matrices, `batch_stride` apart.
template <typename T>
struct TestMatrix {
  std::vector<T> buffer;
  MatrixRef ref{};
  int64_t batch_stride = 0;

  TestMatrix(int64_t rows, int64_t cols, Layout layout, std::mt19937& rng, int64_t batch = 1) {
    int64_t rs = cols, cs = 1, offset = 0;
    switch (layout) {
      case Layout::RowMajor: break;
      case Layout::Padded: rs = cols + 3; break;
      case Layout::Transposed: rs = 1; cs = rows; break;
      case Layout::Strided: rs = 3 * cols + 1; cs = 3; break;
      case Layout::Reversed: rs = -cols; offset = (rows - 1) * cols; break;
    }
    int64_t span = std::max<int64_t>(1, (rows - 1) * std::abs(rs) + (cols - 1) * cs + 1);
    batch_stride = span + 5;
    buffer.assign(batch * batch_stride, std::numeric_limits<T>::quiet_NaN());
    std::uniform_real_distribution<double> value(-1, 1);
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c)
          buffer[b * batch_stride + offset + r * rs + c * cs] = static_cast<T>(value(rng));
    ref = {buffer.data() + offset, rows, cols, rs, cs};
  }

  T at(int64_t b, int64_t r, int64_t c) const {
    const T* base = static_cast<const T*>(ref.data) + b * batch_stride;
    return base[r * ref.row_stride + c * ref.col_stride];
  }
};

// Checks c (batch of m x n) against a naive triple loop in double precision.
template <typename T>
void expect_product(const TestMatrix<T>& a, int64_t a_batch_stride, const TestMatrix<T>& b,
                    int64_t b_batch_stride, const std::vector<T>& c, int64_t batch) {
  int64_t m = a.ref.rows, k = a.ref.cols, n = b.ref.cols;
  double tolerance = std::is_same_v<T, float> ? 1e-5 : 1e-13;
  for (int64_t i = 0; i < batch; ++i) {
    int64_t ab = a_batch_stride == 0 ? 0 : i, bb = b_batch_stride == 0 ? 0 : i;
    for (int64_t r = 0; r < m; ++r) {
      for (int64_t col = 0; col < n; ++col) {
        double expected = 0;
        for (int64_t p = 0; p < k; ++p)
          expected += double(a.at(ab, r, p)) * double(b.at(bb, p, col));
        double got = c[(i * m + r) * n + col];
        ASSERT_NEAR(got, expected, tolerance * (std::abs(expected) + k))
            << "batch " << i << " at (" << r << ", " << col << ")";
      }
    }
  }
}

template <typename T>
void check_gemm(int64_t m, int64_t n, int64_t k, Layout la, Layout lb) {
  SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(k) + " . " + std::to_string(k) + "x" +
               std::to_string(n) + ", a " + layout_name(la) + ", b " + layout_name(lb));
  std::mt19937 rng(static_cast<unsigned>(m * 1000 + n * 100 + k));
  TestMatrix<T> a(m, k, la, rng), b(k, n, lb, rng);
  std::vector<T> c(m * n, std::numeric_limits<T>::quiet_NaN());  // stale garbage must not leak
  int64_t allocs = cpu_alloc_stats().allocs;
  gemm(dtype_of<T>(), a.ref, b.ref, c.data());
  bool copies = la == Layout::Strided || la == Layout::Reversed || lb == Layout::Strided ||
                lb == Layout::Reversed;
  if (!copies) {
    EXPECT_EQ(cpu_alloc_stats().allocs, allocs) << "a view BLAS can read was copied";
  }
  expect_product(a, 0, b, 0, c, 1);
}

constexpr Layout kAllLayouts[] = {Layout::RowMajor, Layout::Padded, Layout::Transposed,
                                  Layout::Strided, Layout::Reversed};

TEST(Blas, MatchesNaiveProductForEveryLayout) {
  for (Layout la : kAllLayouts) {
    for (Layout lb : kAllLayouts) {
      check_gemm<float>(5, 7, 3, la, lb);
      check_gemm<double>(17, 9, 33, la, lb);
    }
  }
}

TEST(Blas, VectorShapesUseGemv) {
  for (Layout la : kAllLayouts) {
    for (Layout lb : kAllLayouts) {
      check_gemm<float>(1, 13, 9, la, lb);
      check_gemm<double>(11, 1, 6, la, lb);
      check_gemm<double>(1, 1, 20, la, lb);
      check_gemm<float>(4, 5, 1, la, lb);
    }
  }
}

TEST(Blas, SizeOneDimensionsIgnoreTheirStride) {
  std::mt19937 rng(7);
  for (int64_t odd_stride : {0, -4, 1, 1000}) {
    // A single row with a meaningless row stride, and a single column likewise.
    TestMatrix<double> a(1, 6, Layout::RowMajor, rng), b(6, 1, Layout::RowMajor, rng);
    a.ref.row_stride = odd_stride;
    b.ref.col_stride = odd_stride;
    std::vector<double> c(1);
    int64_t allocs = cpu_alloc_stats().allocs;
    gemm(DType::Float64, a.ref, b.ref, c.data());
    EXPECT_EQ(cpu_alloc_stats().allocs, allocs);
    expect_product(a, 0, b, 0, c, 1);
  }
  // A row vector with a non-unit column stride is read in place, as a transposed matrix.
  TestMatrix<float> row(1, 8, Layout::Strided, rng), b(8, 5, Layout::RowMajor, rng);
  std::vector<float> c(5);
  int64_t allocs = cpu_alloc_stats().allocs;
  gemm(DType::Float32, row.ref, b.ref, c.data());
  EXPECT_EQ(cpu_alloc_stats().allocs, allocs);
  expect_product(row, 0, b, 0, c, 1);
}

TEST(Blas, BroadcastRowsAreCopied) {
  std::mt19937 rng(8);
  TestMatrix<float> a(4, 3, Layout::RowMajor, rng), b(3, 5, Layout::RowMajor, rng);
  a.ref.row_stride = 0;  // every row is the first row
  std::vector<float> c(4 * 5);
  gemm(DType::Float32, a.ref, b.ref, c.data());
  expect_product(a, 0, b, 0, c, 1);
}

TEST(Blas, EmptyInnerDimensionGivesZeros) {
  std::mt19937 rng(9);
  TestMatrix<double> a(3, 0, Layout::RowMajor, rng), b(0, 4, Layout::RowMajor, rng);
  std::vector<double> c(12, std::numeric_limits<double>::quiet_NaN());
  gemm(DType::Float64, a.ref, b.ref, c.data());
  for (double v : c) EXPECT_EQ(v, 0.0);
}

TEST(Blas, EmptyOutputWritesNothing) {
  std::mt19937 rng(10);
  TestMatrix<float> a(0, 5, Layout::RowMajor, rng), b(5, 4, Layout::RowMajor, rng);
  gemm(DType::Float32, a.ref, b.ref, nullptr);
  TestMatrix<float> a2(3, 5, Layout::RowMajor, rng), b2(5, 0, Layout::RowMajor, rng);
  gemm(DType::Float32, a2.ref, b2.ref, nullptr);
  gemm_batched(DType::Float32, 0, a2.ref, 1, b.ref, 1, nullptr);
}

template <typename T>
void check_batched(int64_t batch, int64_t m, int64_t n, int64_t k, Layout la, Layout lb,
                   bool broadcast_a, bool broadcast_b) {
  SCOPED_TRACE("batch " + std::to_string(batch) + " of " + std::to_string(m) + "x" +
               std::to_string(k) + " . " + std::to_string(k) + "x" + std::to_string(n) + ", a " +
               layout_name(la) + (broadcast_a ? " broadcast" : "") + ", b " + layout_name(lb) +
               (broadcast_b ? " broadcast" : ""));
  std::mt19937 rng(static_cast<unsigned>(batch + m + n + k));
  TestMatrix<T> a(m, k, la, rng, broadcast_a ? 1 : batch);
  TestMatrix<T> b(k, n, lb, rng, broadcast_b ? 1 : batch);
  int64_t asb = broadcast_a ? 0 : a.batch_stride, bsb = broadcast_b ? 0 : b.batch_stride;
  std::vector<T> c(batch * m * n, std::numeric_limits<T>::quiet_NaN());
  gemm_batched(dtype_of<T>(), batch, a.ref, asb, b.ref, bsb, c.data());
  expect_product(a, asb, b, bsb, c, batch);
}

TEST(Blas, BatchedWithBroadcastOperands) {
  for (Layout layout : {Layout::RowMajor, Layout::Transposed, Layout::Strided}) {
    for (auto [ba, bb] : {std::pair{false, false}, {true, false}, {false, true}}) {
      check_batched<float>(5, 6, 4, 7, layout, Layout::RowMajor, ba, bb);
      check_batched<double>(5, 6, 4, 7, Layout::Padded, layout, ba, bb);
      check_batched<double>(4, 1, 9, 5, layout, layout, ba, bb);
      check_batched<float>(3, 40, 50, 60, layout, Layout::Transposed, ba, bb);
    }
  }
}

TEST(Blas, LargeBatchOfSmallProductsRunsOnThePool) {
  int saved = num_threads();
  set_num_threads(4);
  check_batched<float>(3000, 4, 4, 4, Layout::RowMajor, Layout::Transposed, false, true);
  check_batched<double>(500, 1, 8, 16, Layout::Strided, Layout::RowMajor, false, false);
  set_num_threads(saved);
}

}  // namespace
}  // namespace arrayc::detail
