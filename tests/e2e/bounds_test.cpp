// Bounded compile time and memory (issue 26; docs/bounds.md): fusion splits kernels by estimated
// compile cost, the kernel cache is bounded with LRU, jit and eager loops keep bounded
// structures, and large lazy graphs evaluate themselves. No timing and no RSS is asserted here:
// arrayc-compile-bench and arrayc-memory-bench measure those.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "arrayc/arrayc.h"
#include "ir/node.h"
#include "support/reference.h"

using namespace arrayc;

namespace {

Array vec8() { return array(std::vector<float>(8, 0.5f), {8}); }

// The reason after each "materializes ...: " of a fused listing, in order.
std::vector<std::string> reasons_of(const std::string& fused) {
  std::vector<std::string> reasons;
  for (size_t at = fused.find("materializes"); at != std::string::npos; at = fused.find("materializes", at + 1)) {
    size_t from = fused.find(": ", at) + 2;
    reasons.push_back(fused.substr(from, fused.find('\n', at) - from));
  }
  return reasons;
}

// How many nodes each kernel of a fused listing computes (its "(%1 sin, %2 mul, ...)" list).
std::vector<int> kernel_sizes(const std::string& fused) {
  std::vector<int> sizes;
  size_t at = 0;
  while ((at = fused.find(" (%", at)) != std::string::npos) {
    size_t end = fused.find(")\n", at);
    int n = 1;
    for (size_t c = at; c < end; ++c) n += fused[c] == ',';
    sizes.push_back(n);
    at = end;
  }
  return sizes;
}

// Runs one test of this binary in a child process with extra environment variables (a fresh
// process: the kernel cache's bound and the auto-evaluation size are read once); its output
// comes back for the failure message.
::testing::AssertionResult child_passes(const std::string& test, const std::string& env) {
  std::string log = ::testing::TempDir() + "arrayc-bounds-" + std::to_string(::getpid()) + ".log";
  std::string cmd = "env -u GTEST_TOTAL_SHARDS -u GTEST_SHARD_INDEX BOUNDS_CHILD=1 " + env + " /proc/" +
                    std::to_string(::getpid()) + "/exe --gtest_filter=" + test + " >'" + log + "' 2>&1";
  int status = std::system(cmd.c_str());
  std::ifstream in(log);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  std::remove(log.c_str());
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && text.find("[  PASSED  ] 1 test") != std::string::npos)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << test << " failed in a child process:\n" << text;
}

bool in_child() { return std::getenv("BOUNDS_CHILD") != nullptr; }

}  // namespace

// ---- compile cost ----

TEST(CompileCost, ASinMulChainSplitsWhereItsCostPassesTheBudget) {
  // 140 (sin, mul) pairs: from the output back, the kernel takes nodes while its cost stays
  // within 1024 (mul 1, sin 8): the output's kernel holds 113 pairs and the output (227 nodes,
  // cost 1018), and the sin that would bring it to 1026 starts the producer's kernel (53 nodes).
  Array y = vec8();
  for (int i = 0; i < 140; ++i) y = arrayc::sin(y) * 0.999f;
  Stages st = inspect({y});
  EXPECT_EQ(reasons_of(st.fused),
            (std::vector<std::string>{"split: compile cost (its consumer's kernel is at 1018 of 1024, sin adds 8)",
                                      "requested output"}))
      << st.fused;
  EXPECT_EQ(kernel_sizes(st.fused), (std::vector<int>{53, 227})) << st.fused;
  EXPECT_TRUE(arrayc_test::matches_reference(y));
}

TEST(CompileCost, CheapOpsSplitAt1024Nodes) {
  // 2500 adds: kernels of 1024 nodes (the bound before compile costs: an add weighs 1).
  Array x = vec8();
  Array y = x;
  for (int i = 0; i < 2500; ++i) y = y + x;
  Stages st = inspect({y});
  std::string split = "split: compile cost (its consumer's kernel is at 1024 of 1024, add adds 1)";
  EXPECT_EQ(reasons_of(st.fused), (std::vector<std::string>{split, split, "requested output"})) << st.fused;
  EXPECT_EQ(kernel_sizes(st.fused), (std::vector<int>{452, 1024, 1024}));
}

TEST(CompileCost, LongMathKernelsCallTheirFunctionsOutOfLine) {
  // Past 16 calls of vector math in one kernel, the calls stay calls (the register allocator's
  // time on one loop of many inlined bodies grows faster than quadratically); a few are inlined.
  if (default_device().kind != Device::Kind::CPU) GTEST_SKIP();
  auto opt_of = [](int n) {
    Array y = array(std::vector<float>(64, 0.5f), {64});
    for (int i = 0; i < n; ++i) y = arrayc::sin(y) * 0.999f;
    Stages st = inspect({y});
    EXPECT_EQ(st.kernels.size(), 1u);
    return st.kernels.at(0).opt;
  };
  std::string few = opt_of(4), many = opt_of(40);
  // The vector variant's name appears only where it is defined and called: not at all when inlined.
  EXPECT_EQ(few.find("@arrayc_sin_f32_v"), std::string::npos) << few;
  EXPECT_NE(many.find("define internal <"), std::string::npos) << many;
  EXPECT_NE(many.find("call <"), std::string::npos) << many;
}

// ---- the kernel cache's bound (ARRAYC_KERNEL_CACHE_MAX) ----

// Run by KernelCacheBound.EvictsTheLeastRecentlyUsedAndProgramsKeepTheirs with a bound of 4.
TEST(BoundsChild, SmallKernelCache) {
  if (!in_child()) GTEST_SKIP() << "runs in a child process";
  ASSERT_EQ(bounds_info().kernel_cache_max, 4);
  auto f = jit([](const Array& a) { return arrayc::sin(a) * 2.0f + 1.0f; });
  Array x = arange(0.0, 100.0, 1.0, DType::Float32);
  std::vector<float> first = f(x).to_vector<float>();
  // Ten other kernels: the jit function's one leaves the cache.
  Array y = x;
  for (int i = 0; i < 10; ++i) {
    y = arrayc::exp(y * 0.01f) - 1.0f;
    y.eval();
    x.eval();
    Array z = x;
    for (int j = 0; j <= i; ++j) z = arrayc::cos(z) + 0.5f;  // i + 1 distinct kernels
    z.eval();
  }
  EXPECT_LE(bounds_info().kernel_cache_entries, 4);
  EXPECT_GE(stats().kernel_cache_evictions, 6);
  // The Program of f's first call still holds its kernel: it runs, with no compile.
  reset_stats();
  EXPECT_EQ(f(x).to_vector<float>(), first);
  EXPECT_EQ(stats().compiles, 0);
  // A new length is resized from the class's Program, whose launch holds the kernel: no compile.
  Array x2 = arange(0.0, 37.0, 1.0, DType::Float32);
  x2.eval();
  reset_stats();
  Array r2 = f(x2);
  EXPECT_TRUE(arrayc_test::matches_reference(r2, (arrayc::sin(x2) * 2.0f + 1.0f).node()));
  EXPECT_EQ(stats().compiles, 0);
  // The same kernel asked for by an eager expression is no longer cached: it compiles once more
  // (under another name while the first copy is held), and both copies give the same values.
  reset_stats();
  Array e2 = arrayc::sin(x2) * 2.0f + 1.0f;
  EXPECT_EQ(e2.to_vector<float>(), r2.to_vector<float>());
  EXPECT_EQ(stats().compiles, 1);
  EXPECT_EQ(f(x).to_vector<float>(), first);
  EXPECT_LE(bounds_info().kernel_cache_entries, 4);
}

TEST(KernelCacheBound, EvictsTheLeastRecentlyUsedAndProgramsKeepTheirs) {
  if (in_child()) GTEST_SKIP();
  if (default_device().kind != Device::Kind::CPU) GTEST_SKIP() << "the child runs on the CPU";
  EXPECT_TRUE(child_passes("BoundsChild.SmallKernelCache", "ARRAYC_KERNEL_CACHE_MAX=4"));
}

TEST(KernelCacheBound, TheDefaultIsDocumented) {
  if (in_child()) GTEST_SKIP();
  EXPECT_EQ(bounds_info().kernel_cache_max, 4096);
  EXPECT_EQ(bounds_info().auto_eval_nodes, 100000);
  EXPECT_LE(bounds_info().kernel_cache_entries, 4096);
}

// ---- flat structures in long loops ----

TEST(FlatLoops, AJitFunctionOverManyLengthsKeepsBoundedPrograms) {
  // Random lengths: one kernel compiled, and the Programs alive stay bounded (jit keeps its most
  // recently used ones; the bound is jit's, arrayc/jit.h).
  auto f = jit([](const Array& a) { return arrayc::sum(a * 0.5f + 1.0f); });
  std::mt19937 g(26);
  std::uniform_int_distribution<int64_t> len(1, 5000);
  Array warm = ones({3}, DType::Float32);
  f(warm).eval();
  int64_t programs = bounds_info().programs, entries = bounds_info().kernel_cache_entries;
  reset_stats();
  for (int i = 0; i < 300; ++i) {
    int64_t n = len(g);
    Array x = ones({n}, DType::Float32);
    ASSERT_EQ(f(x).item<float>(), 1.5f * static_cast<float>(n)) << "length " << n;
    EXPECT_LE(bounds_info().programs, programs + 64) << "after " << i + 1 << " lengths";
  }
  EXPECT_EQ(stats().compiles, 0);
  EXPECT_EQ(bounds_info().kernel_cache_entries, entries);
}

TEST(FlatLoops, AnEagerLoopOverScalarValuesCompilesOnce) {
  // sum(x * s + 1) for 300 values of s: the scalar is a kernel parameter, so one compile, and
  // nothing accumulates (cache entries, Programs). (Multiples of 0.5 up to 16 are compiled into
  // the code instead, kernel/kernel.h's constant_is_inlined: none here.)
  Array x = arange(0.0, 1000.0, 1.0, DType::Float32);
  x.eval();
  int64_t programs = bounds_info().programs;
  reset_stats();
  int64_t entries = 0;
  for (int i = 0; i < 300; ++i) {
    float s = 0.3f + static_cast<float>(i) * 0.0137f;
    float got = arrayc::sum(x * s + 1.0f).item<float>();
    float want = s * 499500.0f + 1000.0f;
    ASSERT_NEAR(got, want, 1e-5 * std::abs(want) + 1e-3) << "s = " << s;
    if (i == 0) entries = bounds_info().kernel_cache_entries;
  }
  EXPECT_LE(stats().compiles, 1);
  EXPECT_EQ(bounds_info().kernel_cache_entries, entries);
  EXPECT_EQ(bounds_info().programs, programs);
}

// ---- automatic evaluation of large lazy graphs (ARRAYC_AUTO_EVAL_NODES) ----

// Run by AutoEval.ALongLazyChainEvaluatesItself with a bound of 1000 nodes.
TEST(BoundsChild, AutoEval) {
  if (!in_child()) GTEST_SKIP() << "runs in a child process";
  ASSERT_EQ(bounds_info().auto_eval_nodes, 1000);
  reset_stats();
  // y = y * 0.999 + x, 3000 times, never evaluated by the loop: the graph would hold about 12000
  // nodes (each step adds a multiply, an add and their constants' broadcasts).
  Array x = arange(0.0, 64.0, 1.0, DType::Float32) * 0.01f;
  x.eval();
  Array y = x;
  std::vector<float> want(64);
  for (int k = 0; k < 64; ++k) want[k] = k * 0.01f;
  for (int i = 0; i < 3000; ++i) {
    y = y * 0.999f + x;
    for (int k = 0; k < 64; ++k) want[k] = want[k] * 0.999f + k * 0.01f;
    ASSERT_LT(y.node()->tree_nodes, 1000 + 8) << "step " << i;
  }
  int64_t autos = stats().auto_evals;
  EXPECT_GE(autos, 3000 * 2 / 1000) << "each step adds at least two nodes";
  EXPECT_LE(autos, 3000);
  std::vector<float> got = y.to_vector<float>();
  for (int k = 0; k < 64; ++k) EXPECT_NEAR(got[k], want[k], 1e-4 * std::abs(want[k]) + 1e-6) << k;
  // Never while jit traces: the traced chain stays one graph (its Params cannot be evaluated).
  reset_stats();
  auto f = jit([](const Array& a) {
    Array r = a;
    for (int i = 0; i < 2000; ++i) r = r * 0.999f + a;
    return r;
  });
  std::vector<float> traced = f(x).to_vector<float>();
  EXPECT_EQ(stats().auto_evals, 0);
  std::vector<float> want2(64);
  for (int k = 0; k < 64; ++k) {
    float v = k * 0.01f, r = v;
    for (int i = 0; i < 2000; ++i) r = r * 0.999f + v;
    want2[k] = r;
  }
  for (int k = 0; k < 64; ++k) EXPECT_NEAR(traced[k], want2[k], 1e-4 * std::abs(want2[k]) + 1e-6) << k;
}

TEST(AutoEval, ALongLazyChainEvaluatesItself) {
  if (in_child()) GTEST_SKIP();
  if (default_device().kind != Device::Kind::CPU) GTEST_SKIP() << "the child runs on the CPU";
  EXPECT_TRUE(child_passes("BoundsChild.AutoEval", "ARRAYC_AUTO_EVAL_NODES=1000"));
}

TEST(AutoEval, ZeroTurnsItOff) {
  if (in_child()) GTEST_SKIP();
  if (default_device().kind != Device::Kind::CPU) GTEST_SKIP() << "the child runs on the CPU";
  EXPECT_TRUE(child_passes("BoundsChild.AutoEvalOff", "ARRAYC_AUTO_EVAL_NODES=0"));
}

TEST(BoundsChild, AutoEvalOff) {
  if (!in_child()) GTEST_SKIP() << "runs in a child process";
  reset_stats();
  Array x = vec8();
  Array y = x;
  for (int i = 0; i < 3000; ++i) y = y + x;
  EXPECT_FALSE(y.is_evaluated());
  EXPECT_GT(y.node()->tree_nodes, 3000);
  EXPECT_EQ(y.to_vector<float>(), std::vector<float>(8, 0.5f * 3001));
  EXPECT_EQ(stats().auto_evals, 0);
}

TEST(AutoEval, ABadSettingIsAnError) {
  if (in_child()) GTEST_SKIP();
  if (default_device().kind != Device::Kind::CPU) GTEST_SKIP() << "the child runs on the CPU";
  EXPECT_TRUE(child_passes("BoundsChild.BadSettings", "ARRAYC_AUTO_EVAL_NODES=-1 ARRAYC_KERNEL_CACHE_MAX=0"));
}

TEST(BoundsChild, BadSettings) {
  if (!in_child()) GTEST_SKIP() << "runs in a child process";
  try {
    bounds_info();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "ARRAYC_KERNEL_CACHE_MAX must be an integer >= 1 (compiled kernels), got '0'");
  }
  try {
    Array x = vec8() + 1.0f;
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "ARRAYC_AUTO_EVAL_NODES must be an integer >= 0 (graph nodes; 0: never), got '-1'");
  }
}
