// arrayc::interrupt(): a long evaluation stops at the next chunk or kernel with
// arrayc::Interrupted, the arrays that existed keep their values, and a request made while
// nothing runs is dropped when the next evaluation starts.
#include <arrayc/arrayc.h>
#include <gtest/gtest.h>

#include <thread>

#include "backend/host/thread_pool.h"

namespace {

using namespace arrayc;

// The request comes once the evaluation's first kernel has started (not after a fixed sleep),
// and the evaluation has 50 unfused steps, so that the executor's check before the next step
// stops it whatever the thread count (with one thread a kernel is one chunk) and the machine's
// speed.
TEST(Interrupt, StopsALongEvaluationAndLeavesOtherArraysAlone) {
  Array keep = arange(5).eval();
  Array lazy = arange(3) * 2;
  Array big = arange(10000000, DType::Float32);
  for (int i = 0; i < 50; ++i) big = arrayc::sin(big);
  const bool fused = fusion_enabled();
  set_fusion(false);  // one kernel per op: a step boundary after each
  const int64_t launches = stats().kernel_launches;
  std::thread stopper([launches] {
    while (stats().kernel_launches == launches) std::this_thread::yield();
    arrayc::interrupt();
  });
  EXPECT_THROW(big.eval(), Interrupted);
  stopper.join();
  set_fusion(fused);
  EXPECT_FALSE(big.is_evaluated());
  EXPECT_EQ(keep.to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(lazy.to_vector<int64_t>(), (std::vector<int64_t>{0, 2, 4}));  // the next one runs
}

// A full reduction of 1e17 elements, never in memory. With one thread it was one chunk, which no
// interrupt could stop (the evaluator fuzzer's 2 s watchdog waited in vain); with several it
// asked for 45 GB of per-chunk partials. Now it is split like any long range, in rounds of
// bounded partials (tests/unit/split_rounds_test.cpp), and stops between chunks.
TEST(Interrupt, StopsAHugeFullReductionOnAnyThreadCount) {
  const int saved = detail::num_threads();
  for (int threads : {1, 4}) {
    detail::set_num_threads(threads);
    Array big = sum(arange(0.0, 1e17, 1.0, DType::Float64));
    const int64_t launches = stats().kernel_launches;
    std::thread stopper([launches] {
      while (stats().kernel_launches == launches) std::this_thread::yield();
      arrayc::interrupt();
    });
    EXPECT_THROW(big.eval(), Interrupted) << threads << " thread(s)";
    stopper.join();
  }
  detail::set_num_threads(saved);
}

TEST(Interrupt, ARequestWhileNothingRunsIsDropped) {
  arrayc::interrupt();
  EXPECT_EQ(sum(arange(4)).item<int64_t>(), 6);
  auto f = jit([](const Array& x) { return x + 1; });
  arrayc::interrupt();
  EXPECT_EQ(f(arange(2)).to_vector<int64_t>(), (std::vector<int64_t>{1, 2}));
}

// A request that comes while a call traces or compiles stops it before the next kernel compiles
// (it is not dropped when the run starts); the next call traces and compiles as usual.
TEST(Interrupt, ARequestDuringTheTraceStopsTheCallBeforeItCompiles) {
  bool first = true;
  auto f = jit([&first](const Array& x) {
    if (first) arrayc::interrupt();  // as a Ctrl-C while the function is traced
    first = false;
    return x * 5 + 3;
  });
  Array x = arange(7).eval();
  const int64_t compiles = stats().compiles;
  EXPECT_THROW(f(x), Interrupted);
  EXPECT_EQ(stats().compiles, compiles);
  EXPECT_EQ(f(x).to_vector<int64_t>(), (std::vector<int64_t>{3, 8, 13, 18, 23, 28, 33}));
  // inspect() likewise: an old request is dropped, and it shows the stages.
  arrayc::interrupt();
  EXPECT_FALSE(inspect({x * 2}).kernels.empty());
}

TEST(Interrupt, InterruptedIsAnError) {
  try {
    throw Interrupted();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "interrupted");
  }
}

}  // namespace
