// jit at new lengths (engine/jit_resize.h): a call with new extents of a known shape class
// resizes the class's Program: no compile, no new Program planned; no trace either when the
// function read no extent and built an extent-blind graph (engine/extent_reads.h), else one trace
// that checks the graph. Every result is checked against the reference interpreter. A new
// broadcast pattern (an extent becoming 1), a zero, extents that become equal or unequal, and
// functions that use an extent in a way the sizes cannot follow (x / x.size(), reshape to n / 2)
// trace and plan again.
#include <functional>
#include <stdexcept>

#include "backend/host/host_backend.h"
#include "support/data.h"
#include "support/devices.h"
#include "support/reference.h"

namespace {

using namespace arrayc;
using namespace arrayc_test;

struct Counts {
  int64_t traces = 0, compiles = 0, plans = 0, resizes = 0, probes = 0, lookups = 0;  // lookups: kernel-cache hits
};

Counts counts(const std::function<void()>& f) {
  Stats a = stats();
  f();
  Stats b = stats();
  return {b.traces - a.traces, b.compiles - a.compiles, b.plans - a.plans, b.resizes - a.resizes,
          b.probe_traces - a.probe_traces, b.cache_hits - a.cache_hits};
}

// A call at a new length of a known class, resized: nothing compiled or planned, and no kernel
// looked up (each step's launch keeps the class's kernel, on the host and on a GPU alike:
// Backend::replan). `traces`: 0 for an extent-blind function, 1 for one whose trace is checked
// against the class's graph first.
// `may_compile`: a GPU step whose new sizes need other code (a reduction that now splits in two
// launches, a longer scan row's tile kernels) looks that code up, and compiles it once.
void expect_resized(const Counts& c, bool may_compile = false, int64_t traces = 0) {
  EXPECT_EQ(c.traces, traces);
  EXPECT_EQ(c.probes, 0);
  if (!may_compile) EXPECT_EQ(c.compiles, 0);
  if (!may_compile) EXPECT_EQ(c.lookups, 0);
  EXPECT_EQ(c.plans, 0);
  EXPECT_EQ(c.resizes, 1);
}

// A call that traced and planned again (finding its kernels in the cache).
void expect_traced(const Counts& c) {
  EXPECT_EQ(c.traces, 1);
  EXPECT_EQ(c.resizes, 0);
  EXPECT_GE(c.plans, 1);
}

class JitNewLength : public DeviceTest {};
ARRAYC_DEVICE_SUITE(JitNewLength);

Array selu(const Array& a) { return 1.05 * arrayc::where(a > 0.0, a, 1.67 * arrayc::exp(a) - 1.67); }

TEST_P(JitNewLength, ElementwiseReusesTheTraceAndThePlan) {
  auto f = jit([](const Array& a) { return selu(a); });
  Array x = random_array(DType::Float32, {1000}, 1).eval();
  Array r;
  Counts first = counts([&] { r = f(x); });
  EXPECT_MATCHES_REFERENCE(r, selu(x).node());
  EXPECT_EQ(first.traces, 1);
  EXPECT_EQ(first.probes, 2);  // the class's sizes learned at two probe lengths
  EXPECT_EQ(first.plans, 1);   // the probes are scheduled, never planned
  for (int64_t n : {500, 2, 4099, 300000}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    Array y = random_array(DType::Float32, {n}, 2 + n).eval();
    Counts c = counts([&] { r = f(y); });
    EXPECT_MATCHES_REFERENCE(r, selu(y).node());
    expect_resized(c);
    Counts again = counts([&] { r = f(y); });  // now a known exact shape
    EXPECT_EQ(again.resizes + again.traces + again.plans, 0);
  }
  EXPECT_EQ(f.num_traces(), 1);  // the first call only: SELU reads no extent
}

// What makes a function extent-blind: its traces (the first call's and the two probes') read no
// extent through Array::shape() or size() (the rank may be read: the class fixes it), and its
// graph holds only inputs, captured arrays, constants, elementwise ops, broadcasts, reshapes,
// transposes and reductions. Anything else is traced at every new length and checked.
TEST_P(JitNewLength, OnlyExtentBlindFunctionsSkipTheTrace) {
  Array w = random_array(DType::Float32, {1}, 60).eval();  // captured
  auto blind = [w](const Array& m) {
    Array t = m.ndim() == 2 ? transpose(m) : m;
    return arrayc::sum(arrayc::exp(t) * w, {0}) + arrayc::mean(t) - arrayc::max(t, {0}, false);
  };
  auto reads = [](const Array& m) { return m * static_cast<float>(m.shape().size()); };  // reads, uses the rank only
  auto counted = [](const Array& m) { return m + (m.size() > 0 ? 1.0f : 2.0f); };
  auto scan = [](const Array& m) { return arrayc::cumsum(m * 2.0f, 1); };
  auto product = [](const Array& m) { return arrayc::dot(m, transpose(m)); };
  auto fb = jit(blind);
  auto fr = jit(reads);
  auto fc = jit(counted);
  auto fs = jit(scan);
  auto fp = jit(product);
  Array r;
  bool first = true;
  for (Shape s : {Shape{30, 40}, Shape{7, 130}, Shape{301, 2}}) {
    SCOPED_TRACE(shape_str(s));
    Array m = random_array(DType::Float32, s, 61 + s[0]).eval();
    Counts c = counts([&] { r = fb(m); });
    EXPECT_MATCHES_REFERENCE(r, blind(m).node(), CompareOptions{.ulp_scale = 64});
    if (!first) expect_resized(c, on_gpu(), 0);
    c = counts([&] { r = fr(m); });
    EXPECT_MATCHES_REFERENCE(r, reads(m).node());
    if (!first) expect_resized(c, false, 1);
    c = counts([&] { r = fc(m); });
    EXPECT_MATCHES_REFERENCE(r, counted(m).node());
    if (!first) expect_resized(c, false, 1);
    c = counts([&] { r = fs(m); });
    EXPECT_MATCHES_REFERENCE(r, scan(m).node(), CompareOptions{.ulp_scale = 64});
    if (!first) expect_resized(c, on_gpu(), 1);
    c = counts([&] { r = fp(m); });
    EXPECT_MATCHES_REFERENCE(r, product(m).node(), CompareOptions{.ulp_scale = 64});
    if (!first) EXPECT_EQ(c.traces, 1);
    first = false;
  }
  EXPECT_EQ(fb.num_traces(), 1);
  EXPECT_EQ(fr.num_traces(), 3);
  EXPECT_EQ(fs.num_traces(), 3);
}

TEST_P(JitNewLength, BroadcastPatternIsPartOfTheClass) {
  auto body = [](const Array& a, const Array& b) { return a * b + arrayc::sin(a); };
  auto f = jit(body);
  auto check = [&](const Shape& sa, const Shape& sb, bool resized) {
    SCOPED_TRACE(shape_str(sa) + " x " + shape_str(sb));
    Array a = random_array(DType::Float64, sa, 3).eval(), b = random_array(DType::Float64, sb, 4).eval();
    Array r;
    Counts c = counts([&] { r = f(a, b); });
    EXPECT_MATCHES_REFERENCE(r, body(a, b).node());
    if (resized) expect_resized(c);
    else expect_traced(c);
  };
  check({30, 40}, {1, 40}, false);
  check({7, 13}, {1, 13}, true);
  check({64, 3}, {1, 3}, true);
  check({7, 13}, {7, 13}, false);   // b no longer broadcast along rows
  check({9, 5}, {9, 5}, true);
  check({9, 5}, {9, 1}, false);     // now along columns
  check({1, 5}, {1, 5}, false);     // an extent of a becomes 1
  check({12, 12}, {12, 12}, false);  // both extents equal: one symbol, another class
  check({5, 5}, {5, 5}, true);
}

TEST_P(JitNewLength, EqualExtentsShareASymbol) {
  auto f = jit([](const Array& a, const Array& b) { return a + b; });
  Array x = random_array(DType::Float32, {100}, 5).eval(), y = random_array(DType::Float32, {100}, 6).eval();
  EXPECT_MATCHES_REFERENCE(f(x, y), (x + y).node());
  Array x2 = random_array(DType::Float32, {37}, 7).eval(), y2 = random_array(DType::Float32, {37}, 8).eval();
  Array r;
  Counts c = counts([&] { r = f(x2, y2); });
  EXPECT_MATCHES_REFERENCE(r, (x2 + y2).node());
  expect_resized(c);
  // Unequal extents are another class: traced, and the function's own error comes out.
  Array y3 = random_array(DType::Float32, {38}, 9).eval();
  try {
    f(x2, y3);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "in jit-traced function: add: shapes [37] (float32) and [38] (float32) cannot be broadcast together");
  }
}

TEST_P(JitNewLength, ReductionsWhoseSplitDependsOnTheLength) {
  auto body = [](const Array& m) {
    return arrayc::sum(m, {0}) + arrayc::max(m, {0}) * 2.0f + arrayc::mean(m);
  };
  auto f = jit(body);
  Array r;
  Array m0 = random_array(DType::Float32, {40, 30}, 10).eval();
  EXPECT_MATCHES_REFERENCE(f(m0), body(m0).node());
  // Long columns: the host splits the reduced range between threads (per-chunk partials), and a
  // GPU splits a long reduction in two launches; both decided from the new sizes.
  for (Shape s : {Shape{3000, 200}, Shape{200000, 2}, Shape{5, 7}}) {
    SCOPED_TRACE(shape_str(s));
    Array m = random_array(DType::Float32, s, 11 + s[0]).eval();
    Counts c = counts([&] { r = f(m); });
    EXPECT_MATCHES_REFERENCE(r, body(m).node(), CompareOptions{.ulp_scale = 64});
    expect_resized(c, on_gpu());
  }
  auto full = jit([](const Array& x) { return arrayc::sum(x * x); });
  Array x0 = random_array(DType::Float64, {1000}, 12).eval();
  EXPECT_MATCHES_REFERENCE(full(x0), arrayc::sum(x0 * x0).node());
  Array x1 = random_array(DType::Float64, {400000}, 13).eval();
  Counts c = counts([&] { r = full(x1); });
  EXPECT_MATCHES_REFERENCE(r, arrayc::sum(x1 * x1).node(), CompareOptions{.ulp_scale = 64});
  expect_resized(c, on_gpu());
}

TEST_P(JitNewLength, ProductsAndTheirEpilogues) {
  auto body = [](const Array& a, const Array& b) { return arrayc::exp(arrayc::dot(a, b) * 0.01) + 1.0; };
  auto gram = [](const Array& a) { return arrayc::dot(a, transpose(a)); };
  auto f = jit(body);
  auto g = jit(gram);
  Array r;
  bool first = true;
  for (auto [m, k, n] : {std::tuple<int64_t, int64_t, int64_t>{20, 30, 40}, {64, 17, 5}, {300, 200, 100}}) {
    SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n));
    Array a = random_array(DType::Float64, {m, k}, 14 + m).eval(), b = random_array(DType::Float64, {k, n}, 15 + n).eval();
    Counts c = counts([&] { r = f(a, b); });
    EXPECT_MATCHES_REFERENCE(r, body(a, b).node());
    Counts cg = counts([&] { EXPECT_MATCHES_REFERENCE(g(a), gram(a).node()); });
    if (!first) {
      EXPECT_EQ(c.traces + cg.traces, 2);
      EXPECT_EQ(c.resizes + cg.resizes, 2);
      // A GPU product's tile is chosen from its shape: a new shape may compile a new tile. The
      // host's epilogue kernel is the class's: not looked up again.
      if (!on_gpu()) EXPECT_EQ(c.compiles + cg.compiles + c.lookups + cg.lookups, 0);
    }
    first = false;
  }
}

// A product's reduction epilogue at new shapes (W7's sum(M * M), a mean squared error): the
// class's step resized, down to an empty product, whose mean is NaN.
TEST_P(JitNewLength, ProductsReducedInTheirStep) {
  auto w7 = [](const Array& a) {
    Array m = arrayc::dot(a, a);
    return arrayc::sum(m * m);
  };
  auto mse = [](const Array& x, const Array& w, const Array& y) {
    Array d = arrayc::dot(x, w) - y;
    return arrayc::mean(d * d);
  };
  auto f = jit(w7);
  auto g = jit(mse);
  for (auto [m, k, n] : {std::tuple<int64_t, int64_t, int64_t>{20, 30, 40}, {64, 17, 5}, {300, 200, 100}, {0, 7, 9}}) {
    SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n));
    Array a = random_array(DType::Float32, {k, k}, 30 + k).eval();
    Array x = random_array(DType::Float32, {m, k}, 31 + m).eval(), w = random_array(DType::Float32, {k, n}, 32 + n).eval();
    Array y = random_array(DType::Float32, {m, n}, 33 + m).eval();
    EXPECT_MATCHES_REFERENCE(f(a), w7(a).node());
    EXPECT_MATCHES_REFERENCE(g(x, w, y), mse(x, w, y).node());
  }
}

TEST_P(JitNewLength, TransposedViewsAndNonContiguousInputs) {
  auto body = [](const Array& a) { return arrayc::exp(transpose(a)) + transpose(a) * 2; };
  auto f = jit(body);
  Array r;
  Array a0 = random_array(DType::Float32, {33, 65}, 16).eval();
  EXPECT_MATCHES_REFERENCE(f(a0), body(a0).node());
  for (Shape s : {Shape{128, 64}, Shape{3, 1000}}) {
    SCOPED_TRACE(shape_str(s));
    Array a = random_array(DType::Float32, s, 17 + s[0]).eval();
    Counts c = counts([&] { r = f(a); });
    EXPECT_MATCHES_REFERENCE(r, body(a).node());
    expect_resized(c);
  }
  Array t = transpose(random_array(DType::Float32, {20, 50}, 18).eval());  // copied contiguously first
  EXPECT_MATCHES_REFERENCE(f(t), body(t).node());
}

TEST_P(JitNewLength, ScansAndSorts) {
  auto body = [](const Array& x) { return arrayc::cumsum(x * 2) + arrayc::sort(x); };
  auto f = jit(body);
  Array r;
  Array x0 = random_array(DType::Float64, {100}, 19).eval();
  EXPECT_MATCHES_REFERENCE(f(x0), body(x0).node());
  Array x1 = random_array(DType::Float64, {5001}, 20).eval();
  Counts c = counts([&] { r = f(x1); });
  EXPECT_MATCHES_REFERENCE(r, body(x1).node(), CompareOptions{.ulp_scale = 64});
  // On a GPU a longer row takes other kernels (tiles rather than a thread per row), compiled once.
  // A scan is not extent-blind: checked first.
  expect_resized(c, /*may_compile=*/on_gpu(), 1);
  // A GPU step keeps the kernels it loaded at 5001 that 7003 needs too; others (the H100 looked
  // up two) come from the kernel cache.
  Array x2 = random_array(DType::Float64, {7003}, 21).eval();
  c = counts([&] { r = f(x2); });
  EXPECT_MATCHES_REFERENCE(r, body(x2).node(), CompareOptions{.ulp_scale = 64});
  expect_resized(c, /*may_compile=*/on_gpu(), 1);
}

// A new length launches the class's kernels with new sizes: on a GPU, new grids and launch
// parameters for the same loaded kernels, a long reduction's two launches included (its combine
// kernel depends on the kernel, not on the length). Nothing is compiled or looked up.
TEST_P(JitNewLength, ANewLengthLaunchesTheClassKernelsWithNewSizes) {
  auto body = [](const Array& x) { return arrayc::sum(x * x); };
  auto rows = [](const Array& m) { return arrayc::exp(m) * 2.0f + arrayc::max(m, {1}, true); };
  auto f = jit(body);
  auto g = jit(rows);
  Array r;
  Array x0 = random_array(DType::Float64, {400000}, 50).eval();
  EXPECT_MATCHES_REFERENCE(f(x0), body(x0).node(), CompareOptions{.ulp_scale = 64});
  Array m0 = random_array(DType::Float32, {64, 300}, 51).eval();
  EXPECT_MATCHES_REFERENCE(g(m0), rows(m0).node());
  for (int64_t n : {800000, 1200001, 300007}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    Array x = random_array(DType::Float64, {n}, 52 + n).eval();
    Counts c = counts([&] { r = f(x); });
    EXPECT_MATCHES_REFERENCE(r, body(x).node(), CompareOptions{.ulp_scale = 64});
    expect_resized(c);
    Array m = random_array(DType::Float32, {n / 1000, 257}, 53 + n).eval();
    c = counts([&] { r = g(m); });
    EXPECT_MATCHES_REFERENCE(r, rows(m).node());
    expect_resized(c);
  }
}

TEST_P(JitNewLength, ZeroExtents) {
  auto body = [](const Array& m) { return arrayc::sum(m * 3.0f, {1}); };
  auto f = jit(body);
  Array r;
  Array m0 = random_array(DType::Float32, {0, 4}, 21).eval();
  EXPECT_MATCHES_REFERENCE(f(m0), body(m0).node());
  Array m1 = random_array(DType::Float32, {0, 9}, 22).eval();
  Counts c = counts([&] { r = f(m1); });
  EXPECT_EQ(r.shape(), (Shape{0}));
  EXPECT_MATCHES_REFERENCE(r, body(m1).node());
  expect_resized(c);
  Array m2 = random_array(DType::Float32, {6, 9}, 23).eval();  // no longer empty: another class
  Counts c2 = counts([&] { r = f(m2); });
  EXPECT_MATCHES_REFERENCE(r, body(m2).node());
  expect_traced(c2);
  Array m3 = random_array(DType::Float32, {6, 0}, 24).eval();  // empty rows: sums of nothing
  EXPECT_MATCHES_REFERENCE(f(m3), body(m3).node());
}

TEST_P(JitNewLength, FunctionsOfTheExtentsTraceAgainWhenSizesCannotFollow) {
  auto scaled = [](const Array& x) { return x / static_cast<double>(x.size()); };  // a constant 1 / n
  auto halves = [](const Array& x) { return arrayc::sum(reshape(x, {2, -1}), {0}); };  // n / 2
  auto ramp = [](const Array& x) { return x * arrayc::arange(x.size(), DType::Float64, x.device()); };  // sizes n
  auto fs = jit(scaled);
  auto fh = jit(halves);
  auto fr = jit(ramp);
  Array r;
  for (int64_t n : {10, 24, 10, 1000}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    Array x = random_array(DType::Float64, {n}, 25 + n).eval();
    bool seen = n == 10 && fs.num_traces() > 0;
    Counts c = counts([&] { r = fs(x); });
    EXPECT_MATCHES_REFERENCE(r, scaled(x).node());
    if (!seen) expect_traced(c);
    c = counts([&] { r = fh(x); });
    EXPECT_MATCHES_REFERENCE(r, halves(x).node());
    if (!seen) expect_traced(c);
    c = counts([&] { r = fr(x); });
    EXPECT_MATCHES_REFERENCE(r, ramp(x).node());
    if (n == 24 || n == 1000) expect_resized(c, false, 1);  // arange(n): sizes that follow n; read: checked
  }
  EXPECT_EQ(fr.num_traces(), 3);
}

// A function that branches on an extent: the probes (2x and 3x the first length) take the first
// call's branch, so the class's sizes fit; a length on the other side of the branch traces another
// graph and is planned anew, never resized into the first branch's Program.
TEST_P(JitNewLength, ABranchOnAnExtentIsPlannedAnewNotResized) {
  auto body = [](const Array& x) { return x.size() > 1000 ? x * 2.0f : x * 3.0f + 1.0f; };
  auto f = jit(body);
  Array r;
  for (int64_t n : {2000, 50, 3000, 20, 50}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    Array x = random_array(DType::Float32, {n}, 40 + n).eval();
    Counts c = counts([&] { r = f(x); });
    EXPECT_MATCHES_REFERENCE(r, body(x).node());
    if (n == 3000) expect_resized(c, false, 1);  // it reads x.size(): checked, then resized
    if (n == 20) expect_traced(c);
  }
}

TEST_P(JitNewLength, AFunctionThatFailsAtAProbeLengthIsTracedPerLength) {
  auto body = [](const Array& x) {
    if (x.size() % 10 != 0) throw std::invalid_argument("wants a multiple of 10");
    return x + 1.0f;
  };
  auto f = jit(body);
  Array r;
  Array x = random_array(DType::Float32, {20}, 26).eval();
  Counts c = counts([&] { r = f(x); });  // probes at 40 and 60 succeed
  EXPECT_MATCHES_REFERENCE(r, (x + 1.0f).node());
  EXPECT_EQ(c.probes, 2);
  auto g = jit([](const Array& x) {
    if (x.size() != 7) throw std::invalid_argument("wants 7");
    return x * 2.0f;
  });
  Array y = random_array(DType::Float32, {7}, 27).eval();
  c = counts([&] { r = g(y); });  // the first probe fails: not the caller's error
  EXPECT_MATCHES_REFERENCE(r, (y * 2.0f).node());
  EXPECT_EQ(c.traces, 1);
  EXPECT_EQ(c.probes, 1);
  Array y2 = random_array(DType::Float32, {8}, 28).eval();
  EXPECT_THROW(g(y2), std::invalid_argument);  // traced at 8, as the function says
}

TEST_P(JitNewLength, ScalarsAndSizeOneShapesHaveOneShapePerClass) {
  auto f = jit([](const Array& a, const Array& b) { return a * b + 1.0f; });
  Array s = random_array(DType::Float32, {}, 29).eval(), t = random_array(DType::Float32, {1, 1}, 30).eval();
  Counts c = counts([&] { EXPECT_MATCHES_REFERENCE(f(s, t), (s * t + 1.0f).node()); });
  EXPECT_EQ(c.traces, 1);
  EXPECT_EQ(c.probes, 0);  // nothing to learn
}

// A loop over many lengths keeps one class and its 64 most recently used Programs: one trace in all.
TEST_P(JitNewLength, ManyLengthsAndTheProgramCache) {
  auto f = jit([](const Array& a) { return a * 2 + 1; });
  std::vector<Array> xs;
  for (int64_t n = 2; n < 2 + 100; ++n) xs.push_back(random_array(DType::Float32, {n}, n).eval());
  Counts all = counts([&] {
    for (const Array& x : xs) f(x);
  });
  EXPECT_EQ(all.traces, 1);  // the first call's: a * 2 + 1 is extent-blind
  EXPECT_EQ(all.resizes, 99);
  EXPECT_EQ(all.plans, 1);
  EXPECT_EQ(f.num_traces(), 1);
  Counts evicted = counts([&] { EXPECT_MATCHES_REFERENCE(f(xs.front()), (xs.front() * 2 + 1).node()); });
  expect_resized(evicted);  // its Program was evicted: resized again
  Counts recent = counts([&] { EXPECT_MATCHES_REFERENCE(f(xs.back()), (xs.back() * 2 + 1).node()); });
  EXPECT_EQ(recent.resizes + recent.traces, 0);
}

// Whether a host kernel streams its stores depends on its output's size: a new length that
// crosses the threshold takes (and compiles, once) the other variant, without tracing.
TEST(JitNewLengthHost, StreamingChoiceFollowsTheNewSize) {
  int64_t saved = detail::stream_threshold_bytes();
  detail::set_stream_threshold_bytes(64 << 10);
  auto f = jit([](const Array& a) { return a * 3.0f - 2.0f; });
  Array small = random_array(DType::Float32, {1000}, 31).eval();
  Array big = random_array(DType::Float32, {100000}, 32).eval();
  Array small2 = random_array(DType::Float32, {2000}, 33).eval();
  Array r;
  f(small);
  Counts c = counts([&] { r = f(big); });
  EXPECT_MATCHES_REFERENCE(r, (big * 3.0f - 2.0f).node());
  EXPECT_EQ(c.plans, 0);
  EXPECT_EQ(c.resizes, 1);
  c = counts([&] { r = f(small2); });
  EXPECT_MATCHES_REFERENCE(r, (small2 * 3.0f - 2.0f).node());
  EXPECT_EQ(c.compiles + c.plans, 0);
  detail::set_stream_threshold_bytes(saved);
}

}  // namespace
