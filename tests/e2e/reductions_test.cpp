// Reductions end to end: sum, prod, max, min, mean over all elements and over every combination
// of axes for ranks 0 to 4, with and without keepdims, for every dtype (bool and int sums
// promote to int64), over views and fused expressions, and over empty axes.
#include <cmath>
#include <cstring>
#include <limits>

#include "support/data.h"
#include "support/devices.h"
#include "support/errors.h"
#include "support/reference.h"

namespace {

using namespace arrayc;
using namespace arrayc_test;

class Reductions : public DeviceTest {};
ARRAYC_DEVICE_SUITE(Reductions);

using AllFn = Array (*)(const Array&);
using AxesFn = Array (*)(const Array&, const std::vector<int64_t>&, bool);
struct Reduction {
  const char* name;
  AllFn all;
  AxesFn axes;
};
const Reduction kReductions[] = {{"sum", arrayc::sum, arrayc::sum},
                                 {"prod", arrayc::prod, arrayc::prod},
                                 {"max", arrayc::max, arrayc::max},
                                 {"min", arrayc::min, arrayc::min},
                                 {"mean", arrayc::mean, arrayc::mean}};

// Values whose products stay finite: in [0.5, 1.5] for prod, wider for the rest.
Array input(const Reduction& r, DType t, const Shape& s, uint64_t seed) {
  if (std::string(r.name) == "prod") return random_array(t, s, seed, is_float(t) ? 0.5 : -2, is_float(t) ? 1.5 : 2);
  return random_array(t, s, seed, -10, 10);
}

std::string axes_str(const std::vector<int64_t>& a) { return "axes " + shape_str(a); }

TEST_P(Reductions, EveryAxisCombinationRanks0To4) {
  const Shape shapes[] = {{}, {13}, {5, 7}, {3, 4, 5}, {2, 3, 4, 5}};
  for (const Shape& s : shapes) {
    int64_t rank = static_cast<int64_t>(s.size());
    for (const Reduction& r : kReductions) {
      Array x = input(r, DType::Float32, s, 1 + rank);
      SCOPED_TRACE(std::string(r.name) + " of " + shape_str(s));
      EXPECT_MATCHES_REFERENCE(r.all(x));
      for (int64_t mask = 0; mask < (int64_t{1} << rank); ++mask) {
        std::vector<int64_t> axes;
        for (int64_t d = 0; d < rank; ++d)
          if (mask & (int64_t{1} << d)) axes.push_back(d);
        for (bool keep : {false, true}) {
          SCOPED_TRACE(axes_str(axes) + (keep ? " keepdims" : ""));
          Array y = r.axes(x, axes, keep);
          if (keep) {
            EXPECT_EQ(y.ndim(), rank);
          }
          EXPECT_MATCHES_REFERENCE(y);
        }
      }
    }
  }
}

TEST_P(Reductions, EveryDtype) {
  for (const Reduction& r : kReductions)
    for (DType t : kAllDTypes) {
      SCOPED_TRACE(std::string(r.name) + " " + dt(t));
      Array x = input(r, t, {6, 35}, 7);
      Array all = r.all(x);
      EXPECT_MATCHES_REFERENCE(all);
      EXPECT_MATCHES_REFERENCE(r.axes(x, {0}, false));
      EXPECT_MATCHES_REFERENCE(r.axes(x, {-1}, true));
      std::string name = r.name;
      if (name == "sum" || name == "prod")
        EXPECT_EQ(all.dtype(), is_float(t) ? t : is_unsigned(t) ? DType::UInt64 : DType::Int64);  // numpy 2
      else if (name == "mean")
        EXPECT_EQ(all.dtype(), is_float(t) ? t : DType::Float64);
      else
        EXPECT_EQ(all.dtype(), t);
    }
}

TEST_P(Reductions, IntegerSumsPromoteAndWrap) {
  Array big = arrayc::array(std::vector<int32_t>(1000, std::numeric_limits<int32_t>::max()));
  Array s = sum(big);
  EXPECT_EQ(s.dtype(), DType::Int64);
  EXPECT_EQ(s.item<int64_t>(), int64_t{1000} * std::numeric_limits<int32_t>::max());
  EXPECT_MATCHES_REFERENCE(sum(big));
  Array b = random_array(DType::Bool, {1000}, 8);
  EXPECT_MATCHES_REFERENCE(sum(b));
  EXPECT_MATCHES_REFERENCE(sum(b > false));
  Array wrap = arrayc::array(std::vector<int64_t>{std::numeric_limits<int64_t>::max(), 1, 1});
  EXPECT_MATCHES_REFERENCE(sum(wrap));
  EXPECT_MATCHES_REFERENCE(prod(arrayc::array(std::vector<int64_t>{1 << 30, 1 << 30, 1 << 30})));
}

TEST_P(Reductions, NaNAndInfinities) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (DType t : kFloatTypes) {
    SCOPED_TRACE(dt(t));
    Array x = make_array(t, {3, 4}, {1, nan, 3, 4, 5, 6, -inf, 8, inf, 10, 11, -0.0});
    for (const Reduction& r : kReductions) {
      SCOPED_TRACE(r.name);
      EXPECT_MATCHES_REFERENCE(r.all(x));
      EXPECT_MATCHES_REFERENCE(r.axes(x, {0}, false));
      EXPECT_MATCHES_REFERENCE(r.axes(x, {1}, false));
    }
  }
}

TEST_P(Reductions, Empty) {
  for (DType t : {DType::Float32, DType::Int32, DType::Bool}) {
    SCOPED_TRACE(dt(t));
    Array e = random_array(t, {0, 3}, 9);
    EXPECT_MATCHES_REFERENCE(sum(e));
    EXPECT_MATCHES_REFERENCE(prod(e));
    EXPECT_MATCHES_REFERENCE(sum(e, {0}, false));
    EXPECT_MATCHES_REFERENCE(prod(e, {0}, true));
    EXPECT_MATCHES_REFERENCE(mean(e, {0}, false));  // NaN, as 0/0
    EXPECT_MATCHES_REFERENCE(sum(e, {1}, false));   // shape [0]
    EXPECT_MATCHES_REFERENCE(max(e, {1}, false));   // nothing to reduce over an empty output
    EXPECT_EQ(sum(e, {0}, false).to_vector<double>(), (std::vector<double>{0, 0, 0}));
    EXPECT_EQ(prod(e, {0}, false).to_vector<double>(), (std::vector<double>{1, 1, 1}));
  }
  EXPECT_TRUE(std::isnan(mean(random_array(DType::Float64, {0}, 10)).item<double>()));
  EXPECT_EQ(sum(random_array(DType::Float32, {0}, 10)).item<float>(), 0.0f);
}

// A zero extent in any position of a materialized (Buffer) input, for every op and every subset
// of axes: an int32 [8, 0] summed whole died with SIGFPE (the kernel divided by the empty row's
// length). Max and min of an empty axis are errors (no identity), checked by message.
TEST_P(Reductions, ZeroExtentInAnyPositionOfAnEvaluatedArray) {
  std::vector<Shape> shapes;
  for (int64_t rank = 1; rank <= 4; ++rank)
    for (int64_t zero = 0; zero < rank; ++zero)
      for (int64_t other : {1, 3}) {
        Shape s(rank, other);
        s[zero] = 0;
        if (rank > 1) s[(zero + 1) % rank] = 8;  // a nonzero extent on either side
        shapes.push_back(s);
      }
  for (const Shape& s : shapes) {
    int64_t rank = static_cast<int64_t>(s.size());
    for (DType t : {DType::Int32, DType::Float32, DType::Float64, DType::Bool}) {
      Array x = random_array(t, s, 3, -5, 5).eval();
      for (const Reduction& r : kReductions) {
        SCOPED_TRACE(std::string(r.name) + " of " + dt(t) + " " + shape_str(s));
        bool no_identity = r.name == std::string("max") || r.name == std::string("min");
        if (no_identity) EXPECT_ARRAYC_ERROR(r.all(x), r.name, "zero-size axis", "has no identity");
        else EXPECT_MATCHES_REFERENCE(r.all(x));
        for (int64_t mask = 1; mask < (int64_t{1} << rank); ++mask) {
          std::vector<int64_t> axes;
          bool empty_axis = false;
          for (int64_t d = 0; d < rank; ++d)
            if (mask & (int64_t{1} << d)) axes.push_back(d), empty_axis |= s[d] == 0;
          SCOPED_TRACE(axes_str(axes));
          if (no_identity && empty_axis) EXPECT_ARRAYC_ERROR(r.axes(x, axes, false), "has no identity");
          else EXPECT_MATCHES_REFERENCE(r.axes(x, axes, mask % 2 == 1));
        }
      }
    }
  }
}

TEST_P(Reductions, LargeAndOddSizes) {
  for (int64_t n : {1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33, 63, 64, 65, 67, 1000, 4099, 1000003}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    Array x = random_array(DType::Float32, {n}, 11 + n, -1, 1);
    EXPECT_MATCHES_REFERENCE(sum(x));
    EXPECT_MATCHES_REFERENCE(max(x));
    EXPECT_MATCHES_REFERENCE(mean(x * x));
  }
  Array m = random_array(DType::Float64, {1001, 999}, 12);
  EXPECT_MATCHES_REFERENCE(sum(m, {0}, false));
  EXPECT_MATCHES_REFERENCE(sum(m, {1}, false));
  EXPECT_MATCHES_REFERENCE(min(m, {0}, true));
  // Summation order matters: 4e6 copies of 0.1f summed one by one in float drift by ~1%, and
  // by 0.06% in 16 lanes' partial sums. Along a row and across rows (each column's sum).
  EXPECT_MATCHES_REFERENCE(sum(full({4000000}, 0.1, DType::Float32)));
  Array tenths = (zeros({4000000}, DType::Float32) + 0.1f).eval();
  EXPECT_MATCHES_REFERENCE(sum(tenths));
  EXPECT_MATCHES_REFERENCE(sum(reshape(tenths, {1000000, 4}), {0}, false));
  EXPECT_MATCHES_REFERENCE(mean(reshape(tenths, {4, 1000000}), {1}, false));
  EXPECT_MATCHES_REFERENCE(mean(ones({1000, 1000}, DType::Float32), {0}, false));
  // Positive data: no cancellation, so the bound is tight relative to the result.
  Array p = random_array(DType::Float32, {1000003}, 13, 0, 1);
  EXPECT_MATCHES_REFERENCE(sum(p));
}

// A float32 sum of 6.4e7 tenths, along a row and down columns, within 1e-6 of the exact sum:
// no long chain of rounded float additions on any thread count (ctest runs this suite on 1, 2
// and 16 threads) or vector width.
TEST_P(Reductions, Float32SumOf64MillionTenthsIsWithinOneInAMillion) {
  Array m = (zeros({64000000}, DType::Float32) + 0.1f).eval();
  const double want = 64000000 * static_cast<double>(0.1f);
  // The host blocks its float32 sums (cpu_kernel.cpp); the GPU accumulates them in double
  // (ptx_kernel.cpp). Both within 1e-6.
  const double bound = 1e-6;
  EXPECT_NEAR(sum(m).item<float>(), want, bound * want);
  EXPECT_NEAR(mean(m).item<float>(), 0.1f, bound * 0.1);
  for (float c : sum(reshape(m, {16000000, 4}), {0}, false).to_vector<float>())
    EXPECT_NEAR(c, want / 4, bound * want / 4);
}

// Reductions across memory rows (sum(m, 0) of a row-major m): the host kernel accumulates up to
// 8192 outputs row by row, and the executor splits the reduced range between threads once the
// work is large. Every op and dtype, kept extents on both sides of a block, several reduced dims,
// sizes past the split threshold; each result against the reference and bitwise the same when
// evaluated again.
TEST_P(Reductions, AcrossRowsEveryOpDtypeAndSplit) {
  struct Case {
    Shape shape;
    std::vector<int64_t> axes;
  };
  const Case cases[] = {{{40, 8193}, {0}}, {{3000, 50}, {0}}, {{7, 3, 9000}, {0, 1}}, {{5, 600, 70}, {1}}, {{2, 3}, {0}}};
  for (const Case& c : cases)
    for (const Reduction& r : kReductions)
      for (DType t : kAllDTypes) {
        if (t == DType::Bool && std::string(r.name) != "max" && std::string(r.name) != "min") continue;
        SCOPED_TRACE(std::string(r.name) + " " + dt(t) + " " + shape_str(c.shape) + " " + axes_str(c.axes));
        Array x = input(r, t, c.shape, 41);
        Array once = r.axes(x, c.axes, false);
        EXPECT_MATCHES_REFERENCE(once);
        Array again = r.axes(x, c.axes, false);
        if (is_float(once.dtype())) {
          std::vector<double> a = once.to_vector<double>(), b = again.to_vector<double>();
          EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(double)));
        } else {
          EXPECT_EQ(once.to_vector<int64_t>(), again.to_vector<int64_t>());
        }
      }
}

TEST_P(Reductions, OverViewsAndExpressions) {
  Array x = random_array(DType::Float32, {4, 5, 6}, 14);
  EXPECT_MATCHES_REFERENCE(sum(transpose(x, {2, 0, 1}), {1}, false));
  EXPECT_MATCHES_REFERENCE(max(reshape(x, {20, 6}), {0}, false));
  EXPECT_MATCHES_REFERENCE(sum(arrayc::exp(x) * 2.0f - x, {0, 2}, true));
  EXPECT_MATCHES_REFERENCE(mean(broadcast_to(reshape(x, {4, 1, 5, 6}), {4, 3, 5, 6}), {1, 3}, false));
  EXPECT_MATCHES_REFERENCE(sum(x, {1}, false) / max(x, {1}, false));  // two reductions in one graph
  EXPECT_MATCHES_REFERENCE(sum(sum(x, {2}, false) * 2.0f));            // reduction of a reduction
  EXPECT_MATCHES_REFERENCE(sum(x * x));
  EXPECT_MATCHES_REFERENCE(x - mean(x, {-1}, true));                    // normalization pattern
  EXPECT_MATCHES_REFERENCE(sum(x > 0.0f, {0, 1}, false));
  EXPECT_MATCHES_REFERENCE(sum(x, {-1, 0}, false));
}

}  // namespace
