// arrayc::interrupt(): a long evaluation stops at the next chunk or kernel with
// arrayc::Interrupted, the arrays that existed keep their values, and a request made while
// nothing runs is dropped when the next evaluation starts.
#include <arrayc/arrayc.h>
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace {

using namespace arrayc;

TEST(Interrupt, StopsALongEvaluationAndLeavesOtherArraysAlone) {
  Array keep = arange(5).eval();
  Array lazy = arange(3) * 2;
  Array big = sum(sin(arange(0.0, 4e9)));  // seconds of work on any CPU
  auto t0 = std::chrono::steady_clock::now();
  std::thread stopper([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    arrayc::interrupt();
  });
  EXPECT_THROW(big.eval(), Interrupted);
  stopper.join();
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(s, 60.0);
  EXPECT_FALSE(big.is_evaluated());
  EXPECT_EQ(keep.to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(lazy.to_vector<int64_t>(), (std::vector<int64_t>{0, 2, 4}));  // the next one runs
}

TEST(Interrupt, ARequestWhileNothingRunsIsDropped) {
  arrayc::interrupt();
  EXPECT_EQ(sum(arange(4)).item<int64_t>(), 6);
  auto f = jit([](const Array& x) { return x + 1; });
  arrayc::interrupt();
  EXPECT_EQ(f(arange(2)).to_vector<int64_t>(), (std::vector<int64_t>{1, 2}));
}

TEST(Interrupt, InterruptedIsAnError) {
  try {
    throw Interrupted();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "interrupted");
  }
}

}  // namespace
