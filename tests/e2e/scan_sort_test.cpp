// Scans and sorts end to end (issue 28): cumsum, cumprod, sort, argsort along every axis, for
// every dtype, over views, computed inputs, empty and rank-0 arrays, NaN/inf/-0.0, integer
// extremes, and rows long enough to be split between threads; checked against the interpreter.
#include <cmath>
#include <limits>

#include "backend/host/thread_pool.h"
#include "support/data.h"
#include "support/devices.h"
#include "support/errors.h"
#include "passes/schedule.h"
#include "support/pipeline.h"
#include "support/reference.h"

namespace {

using namespace arrayc;
using namespace arrayc_test;

class ScanSort : public DeviceTest {};
ARRAYC_DEVICE_SUITE(ScanSort);

using AxisFn = Array (*)(const Array&, int64_t);
struct AxisOp {
  const char* name;
  AxisFn fn;
};
Array cumsum_axis(const Array& a, int64_t axis) { return cumsum(a, axis); }
Array cumprod_axis(const Array& a, int64_t axis) { return cumprod(a, axis); }
const AxisOp kOps[] = {{"cumsum", cumsum_axis}, {"cumprod", cumprod_axis}, {"sort", arrayc::sort}, {"argsort", arrayc::argsort}};

// Values whose products stay finite for cumprod; duplicates for the sorts (stability shows).
Array input(const AxisOp& op, DType t, const Shape& s, uint64_t seed) {
  std::string name = op.name;
  if (name == "cumprod") return random_array(t, s, seed, is_float(t) ? 0.5 : -2, is_float(t) ? 1.5 : 2);
  if (name == "sort" || name == "argsort") return random_array(t, s, seed, -5, 5);
  return random_array(t, s, seed, -10, 10);
}

TEST_P(ScanSort, EveryAxisEveryDtype) {
  const Shape shapes[] = {{1}, {13}, {5, 7}, {3, 4, 5}};
  for (const AxisOp& op : kOps)
    for (DType t : kAllDTypes) {
      if (t == DType::Bool && std::string(op.name) == "cumprod") continue;  // covered below
      for (const Shape& s : shapes) {
        Array x = input(op, t, s, 3 + s.size());
        for (int64_t axis = -static_cast<int64_t>(s.size()); axis < static_cast<int64_t>(s.size()); ++axis) {
          SCOPED_TRACE(std::string(op.name) + " " + dt(t) + " " + shape_str(s) + " axis " + std::to_string(axis));
          EXPECT_MATCHES_REFERENCE(op.fn(x, axis));
        }
      }
    }
}

TEST_P(ScanSort, DtypeRules) {
  for (DType t : kAllDTypes) {
    Array x = random_array(t, {4, 3}, 1, 0, 3);
    // numpy (Linux): bool and signed ints accumulate in int64, unsigned ones in uint64.
    DType acc = is_float(t) ? t : is_unsigned(t) ? DType::UInt64 : DType::Int64;
    EXPECT_EQ(cumsum(x).dtype(), acc) << dt(t);
    EXPECT_EQ(cumprod(x, 0).dtype(), acc) << dt(t);
    EXPECT_EQ(sort(x).dtype(), t) << dt(t);
    EXPECT_EQ(argsort(x).dtype(), DType::Int64) << dt(t);
    EXPECT_MATCHES_REFERENCE(cumprod(x, 1));
  }
  // The flattened forms.
  Array m = random_array(DType::Int32, {3, 4}, 2, -5, 5);
  EXPECT_EQ(cumsum(m).shape(), (Shape{12}));
  EXPECT_MATCHES_REFERENCE(cumsum(m));
  EXPECT_MATCHES_REFERENCE(cumprod(m));
}

TEST_P(ScanSort, KnownValues) {
  Array x = array<int32_t>({3, 1, 2, 1, 3, 0});
  EXPECT_EQ(cumsum(x).to_vector<int64_t>(), (std::vector<int64_t>{3, 4, 6, 7, 10, 10}));
  EXPECT_EQ(cumprod(x).to_vector<int64_t>(), (std::vector<int64_t>{3, 3, 6, 6, 18, 0}));
  EXPECT_EQ(sort(x).to_vector<int32_t>(), (std::vector<int32_t>{0, 1, 1, 2, 3, 3}));
  // Stable: equal keys keep their order.
  EXPECT_EQ(argsort(x).to_vector<int64_t>(), (std::vector<int64_t>{5, 1, 3, 2, 0, 4}));
  Array b = array<bool>({true, false, true, false});
  EXPECT_EQ(argsort(b).to_vector<int64_t>(), (std::vector<int64_t>{1, 3, 0, 2}));
  EXPECT_EQ(cumsum(b).to_vector<int64_t>(), (std::vector<int64_t>{1, 1, 2, 2}));
}

TEST_P(ScanSort, NaNInfinitiesAndSignedZeros) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (DType t : kFloatTypes) {
    SCOPED_TRACE(dt(t));
    Array x = make_array(t, {9}, {nan, 1.0, -inf, 0.0, -0.0, inf, -nan, -2.0, 0.0});
    // NaN last in input order, -0.0 and 0.0 equal: numpy's stable argsort.
    EXPECT_EQ(argsort(x).to_vector<int64_t>(), (std::vector<int64_t>{2, 7, 3, 4, 8, 1, 5, 0, 6}));
    std::vector<double> s = sort(x).to_vector<double>();
    EXPECT_TRUE(std::signbit(s[3]));  // the -0.0 stays where the stable order puts it
    EXPECT_TRUE(std::isnan(s[7]) && std::isnan(s[8]));
    EXPECT_MATCHES_REFERENCE(sort(x), CompareOptions{.signed_zero = true});
    EXPECT_MATCHES_REFERENCE(cumsum(x));
    EXPECT_MATCHES_REFERENCE(cumprod(x));
    Array e = make_array(t, {static_cast<int64_t>(float_edge_values(t).size())}, float_edge_values(t));
    EXPECT_MATCHES_REFERENCE(sort(e), CompareOptions{.signed_zero = true});
    EXPECT_MATCHES_REFERENCE(argsort(e));
  }
}

TEST_P(ScanSort, IntegerExtremesWrap) {
  for (DType t : kIntTypes) {
    SCOPED_TRACE(dt(t));
    std::vector<double> v = int_edge_values(t);
    Array x = make_array(t, {static_cast<int64_t>(v.size())}, v);
    EXPECT_MATCHES_REFERENCE(cumsum(x));
    EXPECT_MATCHES_REFERENCE(cumprod(x));
    EXPECT_MATCHES_REFERENCE(sort(x));
    EXPECT_MATCHES_REFERENCE(argsort(x));
  }
  Array big = array<int64_t>({INT64_MAX, 1});
  EXPECT_EQ(cumsum(big).to_vector<int64_t>(), (std::vector<int64_t>{INT64_MAX, INT64_MIN}));
}

TEST_P(ScanSort, EmptyAndRankZero) {
  for (const AxisOp& op : kOps) {
    SCOPED_TRACE(op.name);
    for (const Shape& s : {Shape{0}, Shape{0, 3}, Shape{3, 0}, Shape{2, 0, 4}}) {
      Array x = zeros(s, DType::Float32);
      for (int64_t axis = 0; axis < static_cast<int64_t>(s.size()); ++axis) {
        Array y = op.fn(x, axis);
        EXPECT_EQ(y.shape(), s);
        EXPECT_EQ(y.to_vector<double>().size(), 0u);
      }
    }
    EXPECT_ARRAYC_ERROR(op.fn(full({}, 2.0), -1), op.name, "axis -1 is out of range", "rank 0");
    EXPECT_ARRAYC_ERROR(op.fn(zeros({2, 3}), 2), op.name, "axis 2", "shape [2, 3]");
  }
  // Without an axis a rank-0 array is flattened, as numpy.
  EXPECT_EQ(cumsum(full({}, 2.0, DType::Float64)).to_vector<double>(), std::vector<double>{2.0});
}

TEST_P(ScanSort, ViewsAndComputedInputs) {
  Array m = random_array(DType::Float32, {6, 40}, 11);
  for (const AxisOp& op : kOps) {
    SCOPED_TRACE(op.name);
    std::string name = op.name;
    Array base = name == "cumprod" ? random_array(DType::Float32, {6, 40}, 12, 0.5, 1.5) : m;
    EXPECT_MATCHES_REFERENCE(op.fn(transpose(base), 0));
    EXPECT_MATCHES_REFERENCE(op.fn(transpose(base), -1));
    EXPECT_MATCHES_REFERENCE(op.fn(broadcast_to(reshape(base, {1, 6, 40}), {3, 6, 40}), 1));
    EXPECT_MATCHES_REFERENCE(op.fn(base * 2.0f + 1.0f, 1));   // a computed input is materialized
    EXPECT_MATCHES_REFERENCE(op.fn(arange(50, DType::Int64), 0));  // a generated one too
    EXPECT_MATCHES_REFERENCE(op.fn(full({7}, 0.5, DType::Float64), 0));
    EXPECT_MATCHES_REFERENCE(exp(op.fn(base, 1)) + 1.0f);   // and its result is read by a kernel
  }
}

// Rows long enough to be split between threads (the two-pass scan, the parallel radix sort), and
// many short rows run in parallel.
TEST_P(ScanSort, LongRowsCrossTheThreadSplit) {
  for (int64_t n : {int64_t{1} << 17, (int64_t{1} << 18) + 77}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    for (DType t : {DType::Float32, DType::Float64, DType::Int32, DType::Int64}) {
      SCOPED_TRACE(dt(t));
      Array x = random_array(t, {n}, 5, -1000, 1000);
      EXPECT_MATCHES_REFERENCE(cumsum(x));
      EXPECT_MATCHES_REFERENCE(sort(x));
      EXPECT_MATCHES_REFERENCE(argsort(x));
    }
    Array p = random_array(DType::Float64, {n}, 6, 0.99999, 1.00001);
    EXPECT_MATCHES_REFERENCE(cumprod(p));
    Array two = random_array(DType::Float32, {2, n}, 7, -3, 3);
    EXPECT_MATCHES_REFERENCE(cumsum(two, 1));
    EXPECT_MATCHES_REFERENCE(argsort(two, 1));
    EXPECT_MATCHES_REFERENCE(cumsum(transpose(two), 0));  // a strided long row
  }
  Array many = random_array(DType::Float32, {3000, 33}, 8);
  EXPECT_MATCHES_REFERENCE(cumsum(many, 1));
  EXPECT_MATCHES_REFERENCE(argsort(many, 1));
  EXPECT_MATCHES_REFERENCE(sort(many, 0));
}

// The GPU kernels' boundaries (backend/cuda/axis_launch.h): rows around the 32-element
// thread-per-row limit and the 4096-element tile, rows of several tiles whose totals are scanned
// again (4096^2 + 1 elements: three levels), sorts of tiles that end mid-warp, of more rows than
// one digit of row numbers holds (257 and 70000: two and three row passes), keys that share
// digits (passes skipped), and every integer width. The same checks run on the CPU.
TEST_P(ScanSort, TileAndSegmentBoundaries) {
  for (int64_t n : {32, 33, 4095, 4096, 4097, 8192 + 1, 3 * 4096 + 17}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    Array x = random_array(DType::Float64, {3, n}, 21, -10, 10);
    EXPECT_MATCHES_REFERENCE(cumsum(x, 1));
    EXPECT_MATCHES_REFERENCE(cumsum(transpose(x), 0));
    Array i = random_array(DType::Int32, {n}, 22, -100, 100);
    EXPECT_MATCHES_REFERENCE(cumsum(i));
    EXPECT_MATCHES_REFERENCE(cumprod(i));  // wraps as numpy's int64
    EXPECT_MATCHES_REFERENCE(argsort(i));
    EXPECT_MATCHES_REFERENCE(sort(random_array(DType::Float32, {2, n}, 23, -3, 3), 0));
  }
  Array ones = full({(int64_t{1} << 24) + 1}, 1.0, DType::Int64);
  std::vector<int64_t> c = cumsum(ones).to_vector<int64_t>();
  bool exact = true;
  for (size_t k = 0; k < c.size(); ++k) exact &= c[k] == static_cast<int64_t>(k + 1);
  EXPECT_TRUE(exact);
  for (int64_t rows : {257, 70000}) {
    SCOPED_TRACE("rows = " + std::to_string(rows));
    Array m = random_array(DType::Float32, {rows, 5}, 24, -2, 2);
    EXPECT_MATCHES_REFERENCE(argsort(m, 1));
    EXPECT_MATCHES_REFERENCE(sort(m, 1));
    EXPECT_MATCHES_REFERENCE(cumsum(m, 1));
    EXPECT_MATCHES_REFERENCE(argsort(m, 0));
  }
  for (DType t : kAllDTypes) {
    SCOPED_TRACE(dt(t));
    Array x = random_array(t, {5000}, 25, 0, 3);  // few distinct keys: most digits shared
    EXPECT_MATCHES_REFERENCE(sort(x));
    EXPECT_MATCHES_REFERENCE(argsort(x));
    EXPECT_MATCHES_REFERENCE(cumsum(x));
  }
  std::vector<uint64_t> big = {~uint64_t{0}, uint64_t{1} << 63, 0, 5, (uint64_t{1} << 63) - 1, 5};
  EXPECT_EQ(argsort(array<uint64_t>(big)).to_vector<int64_t>(), (std::vector<int64_t>{2, 3, 5, 4, 1, 0}));
}

// Rows of many more tiles than the GPU holds blocks at once (its sort passes look back over the
// tiles before them, in the order blocks start), with few distinct keys so that stability shows
// through argsort, and 8-byte values (2048-element tiles) beside 4-byte ones.
TEST_P(ScanSort, ManyTilesWithDuplicates) {
  Array f = random_array(DType::Float32, {3'000'001}, 31, -20, 20);
  Array d = floor(f);  // 40 distinct keys
  EXPECT_MATCHES_REFERENCE(argsort(d));
  EXPECT_MATCHES_REFERENCE(sort(f));
  Array g = cast(d, DType::Float64);
  EXPECT_MATCHES_REFERENCE(argsort(g));
  EXPECT_MATCHES_REFERENCE(sort(cast(f, DType::Int64)));
  EXPECT_MATCHES_REFERENCE(argsort(reshape(d[{Slice(0, 3'000'000)}], {3, 1'000'000}), 1));
}

// Results do not depend on the thread count: integers exactly, sorts exactly, and float scans to
// the bit (a long row is scanned in blocks of a fixed length whatever the threads: one thread, a
// row per thread, or one row across the threads, 7 of them on fewer cores).
TEST_P(ScanSort, SameResultAtEveryThreadCount) {
  if (on_gpu()) GTEST_SKIP() << "host thread counts";
  int saved = detail::num_threads();
  Array x = random_array(DType::Int64, {300001}, 9, -1e6, 1e6);
  Array f = random_array(DType::Float32, {300001}, 10, -1e6, 1e6);
  Array d = random_array(DType::Float64, {300001}, 11, -1, 1);
  Array rows = stack({f, f, f, f}, 0);
  auto bits = [](const Array& a) { return cast(a, DType::Float64).to_vector<double>(); };
  std::vector<std::vector<int64_t>> ints;
  std::vector<std::vector<double>> floats;
  for (int threads : {1, 3, 7}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    detail::set_num_threads(threads);
    ints.push_back(cumsum(x).to_vector<int64_t>());
    ints.push_back(argsort(f).to_vector<int64_t>());
    floats.push_back(bits(cumsum(f)));
    floats.push_back(bits(cumsum(d)));
    floats.push_back(bits(cumprod(d * 1e-6 + 1.0)));
    Array r = cumsum(rows, 1);
    for (int64_t k = 0; k < 4; ++k) EXPECT_EQ(bits(r[k]), floats[floats.size() - 3]) << "row " << k;
  }
  detail::set_num_threads(saved);
  for (size_t k = 2; k < ints.size(); ++k) EXPECT_EQ(ints[k], ints[k % 2]) << k;
  for (size_t k = 3; k < floats.size(); ++k) EXPECT_EQ(floats[k], floats[k % 3]) << k;
}

TEST_P(ScanSort, IsAFusionBoundary) {
  Array x = random_array(DType::Float32, {100}, 4);
  detail::Graph g;
  g.outputs = {cumsum(exp(x) + 1.0f, 0).node()};
  std::string sched = detail::print_schedule(detail::schedule_graph(g, detail::CompileOptions{}));
  EXPECT_NE(sched.find("operand of cumsum: read from memory"), std::string::npos) << sched;
  EXPECT_NE(sched.find("kernel 1: cumsum"), std::string::npos) << sched;
}

}  // namespace
