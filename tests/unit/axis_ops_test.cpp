// The host routines of the scans and sorts (backend/host/axis_ops.h), called directly on
// hand-made steps: strided rows in and out, sizes around the small-sort threshold and the
// thread split, and keys with many ties, against std::stable_sort and a plain loop.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include "backend/host/axis_ops.h"
#include "backend/host/host_backend.h"
#include "backend/host/thread_pool.h"

namespace {

using namespace arrayc;
using namespace arrayc::detail;

// A step over `rows` rows of n: input row r at r * in_row + i * in_step, output likewise.
AxisStep step(Op op, DType in, DType out, int64_t rows, int64_t n, int64_t in_row, int64_t in_step,
              int64_t out_row, int64_t out_step) {
  AxisStep a;
  a.op = op;
  a.in_dtype = in;
  a.out_dtype = out;
  a.shape = {rows, n};
  a.in_strides = {in_row, in_step};
  a.out_strides = {out_row, out_step};
  a.output = 0;
  return a;
}

bool numpy_less(double x, double y) { return !std::isnan(x) && (std::isnan(y) || x < y); }

TEST(AxisOps, StableArgsortMatchesStdStableSortWithTies) {
  std::mt19937_64 rng(7);
  for (int64_t n : {1, 2, 255, 256, 257, 5000, 200000}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    std::vector<double> x(static_cast<size_t>(n));
    for (double& v : x) {
      uint64_t r = rng() % 100;
      v = r < 3 ? std::numeric_limits<double>::quiet_NaN() : r < 6 ? -0.0 : r < 9 ? 0.0 : static_cast<double>(r % 17) - 8;
    }
    std::vector<int64_t> want(x.size());
    std::iota(want.begin(), want.end(), 0);
    std::stable_sort(want.begin(), want.end(), [&](int64_t a, int64_t b) { return numpy_less(x[a], x[b]); });
    std::vector<int64_t> got(x.size());
    run_axis_step(step(Op::Argsort, DType::Float64, DType::Int64, 1, n, n, 1, n, 1), x.data(), got.data());
    EXPECT_EQ(got, want);
  }
}

TEST(AxisOps, StridedRowsInAndOut) {
  // A [4, 6] int64 input sorted and scanned along its first axis: rows of 4 with stride 6.
  std::vector<int64_t> x = {5, 1, 9, 3, 3, 0, 2, 8, 1, 7, 3, 4, 6, 2, 2, 1, 3, 9, 1, 5, 0, 0, 3, 2};
  std::vector<int64_t> sorted(24), sums(24);
  run_axis_step(step(Op::Sort, DType::Int64, DType::Int64, 6, 4, 1, 6, 1, 6), x.data(), sorted.data());
  run_axis_step(step(Op::Cumsum, DType::Int64, DType::Int64, 6, 4, 1, 6, 1, 6), x.data(), sums.data());
  for (int c = 0; c < 6; ++c) {
    std::vector<int64_t> col, s;
    int64_t acc = 0;
    for (int r = 0; r < 4; ++r) col.push_back(x[r * 6 + c]);
    std::vector<int64_t> want = col;
    std::stable_sort(want.begin(), want.end());
    for (int r = 0; r < 4; ++r) {
      EXPECT_EQ(sorted[r * 6 + c], want[r]) << r << "," << c;
      acc += col[r];
      EXPECT_EQ(sums[r * 6 + c], acc) << r << "," << c;
    }
  }
}

TEST(AxisOps, LongScanSplitBetweenThreadsIsExactForIntegers) {
  int saved = num_threads();
  set_num_threads(2);
  int64_t n = (int64_t{1} << 19) + 3;
  std::vector<int64_t> x(static_cast<size_t>(n));
  std::mt19937_64 rng(9);
  for (int64_t& v : x) v = static_cast<int64_t>(rng());  // wraps: the scan is modulo 2^64
  std::vector<int64_t> got(x.size()), prod(x.size());
  run_axis_step(step(Op::Cumsum, DType::Int64, DType::Int64, 1, n, n, 1, n, 1), x.data(), got.data());
  run_axis_step(step(Op::Cumprod, DType::Int64, DType::Int64, 1, n, n, 1, n, 1), x.data(), prod.data());
  set_num_threads(saved);
  uint64_t acc = 0, p = 1;
  for (int64_t i = 0; i < n; ++i) {
    acc += static_cast<uint64_t>(x[i]);
    p *= static_cast<uint64_t>(x[i]);
    ASSERT_EQ(static_cast<uint64_t>(got[i]), acc) << i;
    ASSERT_EQ(static_cast<uint64_t>(prod[i]), p) << i;
  }
}

TEST(AxisOps, FloatKeysOrderEveryClass) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x = {nan, inf, -inf, 1e-45f, -1e-45f, 0.0f, -0.0f, 3.4e38f, -3.4e38f, -nan, 1.0f, -1.0f};
  std::vector<int64_t> idx(x.size());
  int64_t n = static_cast<int64_t>(x.size());
  run_axis_step(step(Op::Argsort, DType::Float32, DType::Int64, 1, n, n, 1, n, 1), x.data(), idx.data());
  EXPECT_EQ(idx, (std::vector<int64_t>{2, 8, 11, 4, 5, 6, 3, 10, 7, 1, 0, 9}));
}

}  // namespace

namespace {

// Streaming stores (outputs past ARRAYC_STREAM_BYTES) start their blocks of 8 at a 16-byte
// boundary, so the float roundings may differ from plain stores; both stay within the Sum
// reduction's bound of the exact prefix sums, from an output off a 16-byte boundary too.
TEST(AxisOps, StreamedScanGivesTheSameBits) {
  int64_t saved = arrayc::detail::stream_threshold_bytes();
  int threads = arrayc::detail::num_threads();
  arrayc::detail::set_num_threads(2);
  int64_t n = (int64_t{1} << 19) + 5;
  std::vector<float> x(static_cast<size_t>(n) + 1);
  std::mt19937 rng(3);
  for (float& v : x) v = static_cast<float>(rng() % 2001) / 1000.0f - 1.0f;
  for (bool offset : {false, true}) {
    std::vector<float> plain(x.size()), streamed(x.size());
    arrayc::detail::AxisStep a = step(arrayc::detail::Op::Cumsum, arrayc::DType::Float32, arrayc::DType::Float32, 1, n, n, 1, n, 1);
    arrayc::detail::set_stream_threshold_bytes(int64_t{1} << 60);
    run_axis_step(a, x.data() + offset, plain.data() + offset);
    arrayc::detail::set_stream_threshold_bytes(0);
    run_axis_step(a, x.data() + offset, streamed.data() + offset);
    double exact = 0, sq = 0;
    for (int64_t i = 0; i < n; ++i) {
      exact += x[i + offset];
      sq += double(x[i + offset]) * x[i + offset];
      double bound = 2 * 0x1p-23 * std::sqrt(double(i + 1)) * (std::sqrt(sq) + std::fabs(exact));
      ASSERT_LE(std::fabs(plain[i + offset] - exact), bound) << i;
      ASSERT_LE(std::fabs(streamed[i + offset] - exact), bound) << i << " offset " << offset;
    }
  }
  arrayc::detail::set_stream_threshold_bytes(saved);
  arrayc::detail::set_num_threads(threads);
}

}  // namespace
