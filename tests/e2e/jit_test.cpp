// jit() and fusion end to end: a traced function is reused for new data and new lengths without
// compiling again; several inputs and outputs; kernel counts of fused and unfused programs; and
// random expression programs checked fused, unfused and against the reference interpreter.
#include <cmath>
#include <functional>
#include <thread>
#include <tuple>

#include "support/data.h"
#include "support/devices.h"
#include "support/reference.h"

namespace {

using namespace arrayc;
using namespace arrayc_test;

class Jit : public DeviceTest {};
ARRAYC_DEVICE_SUITE(Jit);
class Fusion : public DeviceTest {};
ARRAYC_DEVICE_SUITE(Fusion);

Array f_body(const Array& a, const Array& b) { return arrayc::exp(a) * b + 1.0f; }

TEST_P(Jit, TracedOnceReusedForNewDataAndLengths) {
  auto f = jit([](const Array& a, const Array& b) { return f_body(a, b); });
  Array x1 = random_array(DType::Float32, {1000}, 1), y1 = random_array(DType::Float32, {1000}, 2);
  StatsDelta first = stats_delta([&] {
    Array r = f(x1, y1);
    EXPECT_TRUE(r.is_evaluated());
    EXPECT_MATCHES_REFERENCE(r, f_body(x1, y1).node());
  });
  EXPECT_EQ(first.traces, 1);
  EXPECT_EQ(f.num_traces(), 1);

  // New data, same shapes: no trace, no compile.
  Array x2 = random_array(DType::Float32, {1000}, 3), y2 = random_array(DType::Float32, {1000}, 4);
  x2.eval();
  y2.eval();
  StatsDelta same = stats_delta([&] { EXPECT_MATCHES_REFERENCE(f(x2, y2), f_body(x2, y2).node()); });
  EXPECT_EQ(same.traces, 0);
  EXPECT_EQ(same.compiles, 0);
  EXPECT_EQ(f.num_traces(), 1);

  // A new length (other than 0 and 1) has the same shape class: the Program is resized, without a
  // trace (the function reads no extent and builds an extent-blind graph: engine/extent_reads.h).
  for (int64_t n : {777, 2, 4099}) {  // not 1: an extent of 1 is part of the signature
    SCOPED_TRACE("n = " + std::to_string(n));
    Array x3 = random_array(DType::Float32, {n}, 5 + n).eval(), y3 = random_array(DType::Float32, {n}, 6 + n).eval();
    StatsDelta other = stats_delta([&] { EXPECT_MATCHES_REFERENCE(f(x3, y3), f_body(x3, y3).node()); });
    EXPECT_EQ(other.compiles, 0);
    EXPECT_EQ(other.traces, 0);
    EXPECT_EQ(other.resizes, 1);
  }

  // A new dtype is a new signature: traced again.
  Array xd = random_array(DType::Float64, {10}, 7), yd = random_array(DType::Float64, {10}, 8);
  int64_t before = f.num_traces();
  EXPECT_MATCHES_REFERENCE(f(xd, yd), f_body(xd, yd).node());
  EXPECT_EQ(f.num_traces(), before + 1);
}

TEST_P(Jit, StatsTracesMatchTheFunctionsCount) {
  auto f = jit([](const Array& a) { return a * 3; });
  int64_t stats_traces = 0;
  for (int64_t n : {10, 10, 20, 10, 30}) {
    Array x = random_array(DType::Int32, {n}, 9).eval();
    stats_traces += stats_delta([&] { EXPECT_MATCHES_REFERENCE(f(x), (x * 3).node()); }).traces;
  }
  EXPECT_EQ(stats_traces, f.num_traces());
  EXPECT_GE(f.num_traces(), 1);
  EXPECT_LE(f.num_traces(), 3);  // at most once per distinct shape
}

// A jit function keeps a bounded number of ready Programs (the 64 most recently used): a loop
// over many lengths does not keep one per length forever. The lengths share one shape class, so
// each new length is resized from the class's Program (without a trace: the function is
// extent-blind); an evicted length is resized again, compiling nothing.
TEST_P(Jit, ManyLengthsKeepTheMostRecentlyUsedPrograms) {
  auto f = jit([](const Array& a) { return a * 2 + 1; });
  std::vector<Array> xs;
  for (int64_t n = 2; n < 2 + 100; ++n) xs.push_back(random_array(DType::Float32, {n}, n).eval());
  StatsDelta all = stats_delta([&] {
    for (const Array& x : xs) f(x);
  });
  EXPECT_EQ(f.num_traces(), 1);
  EXPECT_EQ(all.resizes, 99);
  EXPECT_EQ(all.plans, 1);
  StatsDelta recent = stats_delta([&] { EXPECT_MATCHES_REFERENCE(f(xs.back()), (xs.back() * 2 + 1).node()); });
  EXPECT_EQ(recent.traces, 0);
  StatsDelta evicted = stats_delta([&] { EXPECT_MATCHES_REFERENCE(f(xs.front()), (xs.front() * 2 + 1).node()); });
  EXPECT_EQ(evicted.traces, 0);
  EXPECT_EQ(evicted.resizes, 1);
  EXPECT_EQ(evicted.plans, 0);
  EXPECT_EQ(evicted.compiles, 0);
}

TEST_P(Jit, ShapeDependentBodies) {
  // The body depends on the extents (reshape with -1, a mean's count): retraced or not, each
  // length must get its own right answer.
  auto f = jit([](const Array& a) { return arrayc::sum(reshape(a, {-1, 2}) * 2, {1}, false) + arrayc::mean(a); });
  for (int64_t n : {4, 6, 4, 10}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    Array x = random_array(DType::Float64, {n}, 40 + n);
    EXPECT_MATCHES_REFERENCE(f(x), (arrayc::sum(reshape(x, {-1, 2}) * 2, {1}, false) + arrayc::mean(x)).node());
  }
}

TEST_P(Jit, LazyInputsAreEvaluatedFirst) {
  auto f = jit([](const Array& a) { return a * a; });
  Array x = random_array(DType::Float32, {50}, 43);
  Array lazy = arrayc::exp(x) - 1.0f;
  EXPECT_MATCHES_REFERENCE(f(lazy), (lazy * lazy).node());
  EXPECT_MATCHES_REFERENCE(f(transpose(reshape(lazy, {5, 10}))),
                           (transpose(reshape(lazy, {5, 10})) * transpose(reshape(lazy, {5, 10}))).node());
}

TEST_P(Jit, LargeInputs) {
  auto f = jit([](const Array& a, const Array& b) { return arrayc::sqrt(a * a + b * b); });
  for (int64_t n : {1000003, 65}) {
    Array x = random_array(DType::Float32, {n}, 41), y = random_array(DType::Float32, {n}, 42);
    EXPECT_MATCHES_REFERENCE(f(x, y), arrayc::sqrt(x * x + y * y).node());
  }
}

TEST_P(Jit, SeveralInputsAndTupleOutputs) {
  auto f = jit([](const Array& a, const Array& b, const Array& c) {
    return std::make_tuple(a + b * c, arrayc::sum(a * a), where(a > b, a, c));
  });
  Array a = random_array(DType::Float32, {4, 5}, 10), b = random_array(DType::Float32, {5}, 11);
  Array c = random_array(DType::Float32, {4, 1}, 12);
  auto [s, t, u] = f(a, b, c);
  EXPECT_EQ(s.shape(), (Shape{4, 5}));
  EXPECT_EQ(t.shape(), Shape{});
  EXPECT_MATCHES_REFERENCE(s, (a + b * c).node());
  EXPECT_MATCHES_REFERENCE(t, arrayc::sum(a * a).node());
  EXPECT_MATCHES_REFERENCE(u, where(a > b, a, c).node());
}

TEST_P(Jit, VectorOutputsIncludingAnInputAndAConstant) {
  auto f = jit([](const Array& a) { return std::vector<Array>{a, a * 2, arrayc::cast(a, DType::Int64), full({2}, 5.0)}; });
  Array a = random_array(DType::Float32, {6}, 13);
  std::vector<Array> out = f(a);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_MATCHES_REFERENCE(out[0], a.node());
  EXPECT_MATCHES_REFERENCE(out[1], (a * 2).node());
  EXPECT_MATCHES_REFERENCE(out[2], arrayc::cast(a, DType::Int64).node());
  EXPECT_EQ(out[3].to_vector<float>(), (std::vector<float>{5, 5}));
  for (const Array& o : out) EXPECT_TRUE(o.is_evaluated());
}

TEST_P(Jit, NonContiguousAndBroadcastInputs) {
  auto f = jit([](const Array& a, const Array& b) { return a * b - a; });
  Array m = random_array(DType::Float64, {5, 7}, 14).eval();
  Array t = transpose(m);  // a strided view as an input
  Array row = random_array(DType::Float64, {1, 5}, 15);
  EXPECT_MATCHES_REFERENCE(f(t, row), (t * row - t).node());
  Array m2 = random_array(DType::Float64, {9, 3}, 16);
  Array row2 = random_array(DType::Float64, {1, 9}, 17);
  EXPECT_MATCHES_REFERENCE(f(transpose(m2), row2), (transpose(m2) * row2 - transpose(m2)).node());
}

TEST_P(Jit, ReductionsAndProductsInside) {
  auto f = jit([](const Array& x, const Array& w) { return arrayc::tanh(matmul(x, w)) - arrayc::mean(x, {1}, true); });
  for (int64_t m : {3, 8}) {
    Array x = random_array(DType::Float32, {m, 6}, 18 + m), w = random_array(DType::Float32, {6, 6}, 19);
    EXPECT_MATCHES_REFERENCE(f(x, w), (arrayc::tanh(matmul(x, w)) - arrayc::mean(x, {1}, true)).node());
  }
}

TEST_P(Jit, FusionModeIsPartOfTheKey) {
  auto f = jit([](const Array& a) { return arrayc::sin(a) * a + 2.0f; });
  Array x = random_array(DType::Float32, {100}, 20);
  Array fused = f(x);
  Array unfused;
  {
    FusionScope off(false);
    unfused = f(x);
  }
  EXPECT_MATCHES_REFERENCE(fused, (arrayc::sin(x) * x + 2.0f).node());
  EXPECT_MATCHES_REFERENCE(unfused, (arrayc::sin(x) * x + 2.0f).node());
}

// ---- Fusion -------------------------------------------------------------------------------

Array selu(const Array& x) { return 1.05 * where(x > 0, x, 1.67 * arrayc::exp(x) - 1.67); }

TEST_P(Jit, NumbersAreStaticArguments) {
  auto scale = jit([](const Array& x, double s, int k, bool neg, float f, int64_t big) {
    Array y = x * s + k + f + big;
    return neg ? -y : y;
  });
  Array x = random_array(DType::Float32, {100}, 30).eval();
  Array r = scale(x, 2.5, 3, false, 0.25f, int64_t{1});
  EXPECT_EQ(r.dtype(), DType::Float32);  // numbers type as numpy's scalars: x stays float32
  EXPECT_MATCHES_REFERENCE(r, (x * 2.5 + 3 + 0.25f + int64_t{1}).node());
  EXPECT_EQ(scale.num_traces(), 1);
  scale(x, 2.5, 3, false, 0.25f, int64_t{1});  // same values: no new trace
  EXPECT_EQ(scale.num_traces(), 1);
  Array r2 = scale(x, -1.0, 3, true, 0.25f, int64_t{1});  // a new value traces again
  EXPECT_EQ(scale.num_traces(), 2);
  EXPECT_MATCHES_REFERENCE(r2, (-(x * -1.0 + 3 + 0.25f + int64_t{1})).node());
}

// One jitted object called for the first time from 8 threads at once, with and without static
// arguments: every result right, one traced function per static value, and the kernels compiled
// once each (the kernel cache compiles a key once however many threads ask).
TEST_P(Jit, FirstCallsFromManyThreadsAtOnce) {
  auto f = jit([](const Array& x, double s) { return arrayc::exp(x * s) + 0.125; });
  Array x = random_array(DType::Float32, {1000}, 31).eval();
  std::vector<Array> results(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) threads.emplace_back([&, t] { results[t] = f(x, t % 2 ? 0.5 : 0.25); });
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < 8; ++t)
    EXPECT_MATCHES_REFERENCE(results[t], (arrayc::exp(x * (t % 2 ? 0.5 : 0.25)) + 0.125).node());
  EXPECT_GE(f.num_traces(), 2);  // concurrent first calls of one value may each trace
}

TEST_P(Jit, AnIntegerAndAFloatOfOneValueTraceApart) {
  auto add = jit([](const Array& x, auto s) { return x + s; });
  Array x = arrayc::arange(int64_t{5}).eval();
  EXPECT_EQ(add(x, 1).dtype(), DType::Int64);
  EXPECT_EQ(add(x, 1.0).dtype(), DType::Float64);
  EXPECT_EQ(add.num_traces(), 2);
}

TEST_P(Jit, NestedJitFunctionsAreInlinedIntoOneKernel) {
  auto sq = jit([](const Array& a) { return a * a; });
  auto total = jit([&](const Array& a) { return arrayc::sum(sq(a)); });
  Array x = random_array(DType::Float32, {100000}, 31).eval();
  FusionScope on(true);
  StatsDelta d = stats_delta([&] { EXPECT_MATCHES_REFERENCE(total(x), arrayc::sum(x * x).node()); });
  EXPECT_EQ(d.kernel_launches, 1);
  EXPECT_EQ(d.traces, 1);
  EXPECT_EQ(sq.num_traces(), 0);  // run inline, never traced on its own
  EXPECT_EQ(total.inspect(x).kernels.size(), 1u);
}

TEST_P(Jit, ErrorsInsideATraceSayWhereTheyCameFrom) {
  auto bad = jit([](const Array& a) { return a + arrayc::zeros({3}, a.dtype(), a.device()); });
  Array x = random_array(DType::Float32, {4}, 32).eval();
  try {
    bad(x);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("in jit-traced function: add: shapes [4]", 0), 0u) << e.what();
  }
}

TEST_P(Fusion, SeluIsOneKernelFusedAndSixUnfused) {
  const int64_t n = 1000000;
  std::vector<double> data = random_values(n, 21, -3, 3);
  Array x = make_array(DType::Float32, {n}, data).eval();
  Array y = selu(x);
  // The graph's non-leaf, non-view nodes: gt, exp, mul (1.67 *), sub, where, mul (1.05 *).
  EXPECT_EQ(count_compute_nodes(y.node()), 6);
  EXPECT_EQ(y.dtype(), DType::Float32);
  StatsDelta fused;
  {
    FusionScope on(true);  // whatever ARRAYC_FUSION says
    fused = stats_delta([&] { EXPECT_MATCHES_REFERENCE(y); });
  }
  EXPECT_EQ(fused.kernel_launches, 1);

  Array x2 = make_array(DType::Float32, {n}, data).eval();  // other buffer: nothing is shared
  Array y2 = selu(x2);
  FusionScope off(false);
  StatsDelta unfused = stats_delta([&] { EXPECT_MATCHES_REFERENCE(y2); });
  EXPECT_EQ(unfused.kernel_launches, 6);
  EXPECT_EQ(y.to_vector<float>(), y2.to_vector<float>());
}

TEST_P(Fusion, SumOfSquaresIsOneKernel) {
  Array x = random_array(DType::Float32, {1000000}, 22).eval();
  Array s = arrayc::sum(x * x);
  FusionScope on(true);
  StatsDelta d = stats_delta([&] { EXPECT_MATCHES_REFERENCE(s); });
  EXPECT_EQ(d.kernel_launches, 1);
}

TEST_P(Fusion, SeveralOutputsOfOneShapeShareAKernel) {
  Array x = random_array(DType::Float32, {5000}, 23).eval();
  Array a = arrayc::exp(x) + 1.0f, b = x * x - 2.0f;
  HostArray want_a = reference_of(a.node()), want_b = reference_of(b.node());
  FusionScope on(true);
  StatsDelta d = stats_delta([&] { arrayc::eval({a, b}); });
  EXPECT_EQ(d.kernel_launches, 1);
  EXPECT_TRUE(matches_values(values_of(a), want_a));
  EXPECT_TRUE(matches_values(values_of(b), want_b));
}

TEST_P(Fusion, SharedSubexpressionComputedOnce) {
  Array x = random_array(DType::Float64, {300}, 24).eval();
  Array e = arrayc::exp(arrayc::sin(x));
  Array r = e * e + e;  // e appears three times
  EXPECT_MATCHES_REFERENCE(r);
}

// ---- Random programs: fused vs unfused vs the interpreter ------------------------------------

struct Rng {
  uint64_t s;
  uint64_t next() {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return s >> 33;
  }
  int pick(int n) { return static_cast<int>(next() % static_cast<uint64_t>(n)); }
};

// A random expression over `leaves`, tame enough that most elements stay finite.
Array random_expr(Rng& g, const std::vector<Array>& leaves, int depth) {
  if (depth == 0 || g.pick(5) == 0) return leaves[g.pick(static_cast<int>(leaves.size()))];
  Array a = random_expr(g, leaves, depth - 1);
  switch (g.pick(16)) {
    case 0: return a + random_expr(g, leaves, depth - 1);
    case 1: return a - random_expr(g, leaves, depth - 1);
    case 2: return a * random_expr(g, leaves, depth - 1);
    case 3: { Array b = random_expr(g, leaves, depth - 1); return a / (b * b + 1); }
    case 4: return maximum(a, random_expr(g, leaves, depth - 1));
    case 5: return minimum(a, random_expr(g, leaves, depth - 1));
    case 6: return arrayc::exp(arrayc::tanh(a));
    case 7: return arrayc::log(a * a + 1);
    case 8: return arrayc::sqrt(arrayc::abs(a));
    case 9: return arrayc::sin(a);
    case 10: return arrayc::cos(a) * 2;
    case 11: return where(a > random_expr(g, leaves, depth - 1), a, -a);
    case 12: return -a;
    case 13: return arrayc::cast(arrayc::cast(a, DType::Float64), a.dtype());
    case 14: return arrayc::pow(arrayc::abs(a) + 0.5, 2);
    default: return a * 0.5 + 1;
  }
}

TEST_P(Fusion, RandomProgramsFusedEqualsUnfused) {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    SCOPED_TRACE("program seed " + std::to_string(seed));
    std::vector<double> vx = random_values(4 * 33, seed * 3), vr = random_values(33, seed * 3 + 1),
                        vc = random_values(4, seed * 3 + 2);
    auto build = [&](bool with_reduction) {
      std::vector<Array> leaves = {make_array(DType::Float32, {4, 33}, vx), make_array(DType::Float32, {33}, vr),
                                   make_array(DType::Float32, {4, 1}, vc)};
      Rng g{seed};
      Array e = random_expr(g, leaves, 5);
      if (with_reduction) e = arrayc::sum(e, {static_cast<int64_t>(seed) % e.ndim()}, false);
      return e;
    };
    for (bool reduce : {false, true}) {
      SCOPED_TRACE(reduce ? "with a reduction" : "elementwise");
      Array fused = build(reduce);
      {
        FusionScope on(true);
        EXPECT_MATCHES_REFERENCE(fused);
      }
      Array unfused = build(reduce);  // fresh buffers: a separate graph
      {
        FusionScope off(false);
        EXPECT_MATCHES_REFERENCE(unfused);
      }
    }
  }
}

}  // namespace
