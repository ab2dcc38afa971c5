// Full reductions split between chunks on the host: with one thread too, once the range passes
// one chunk's 2^24 elements (so that arrayc::interrupt() is prompt; tests/e2e/interrupt_test.cpp),
// and in rounds of detail::split_round() reduced indices, whose partials combine per round
// (bounded memory however long the range). Values against exact integer sums and the reference
// interpreter, for several thread counts and round lengths.
#include <arrayc/arrayc.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "backend/host/host_backend.h"
#include "backend/host/thread_pool.h"
#include "support/reference.h"

namespace {

using namespace arrayc;

// Restores the thread count and the round length.
class SplitScope {
 public:
  SplitScope() : threads_(detail::num_threads()), round_(detail::split_round()) {}
  ~SplitScope() {
    detail::set_num_threads(threads_);
    detail::set_split_round(round_);
  }
  SplitScope(const SplitScope&) = delete;
  SplitScope& operator=(const SplitScope&) = delete;

 private:
  int threads_;
  int64_t round_;
};

constexpr int64_t kN = (int64_t{1} << 25) + 12345;  // more than two chunks of 2^24 on one thread

template <typename F> void for_threads_and_rounds(F f) {
  SplitScope scope;
  for (int threads : {1, 2, 5}) {
    detail::set_num_threads(threads);
    for (int64_t round : {int64_t{1} << 36, int64_t{3} << 22, int64_t{1000003}}) {
      detail::set_split_round(round);
      SCOPED_TRACE("threads " + std::to_string(threads) + ", round " + std::to_string(round));
      f();
    }
  }
}

TEST(SplitRounds, IntegerReductionsAreExact) {
  for_threads_and_rounds([] {
    EXPECT_EQ(sum(arange(kN)).item<int64_t>(), kN * (kN - 1) / 2);
    // min and max away from the range's ends: i*7 mod 1000003, shifted
    Array r = remainder(arange(kN) * 7, full({}, 1000003.0, DType::Int64)) - 5;
    EXPECT_EQ(min(r).item<int64_t>(), -5);
    EXPECT_EQ(max(r).item<int64_t>(), 999997);
    // int32 sums accumulate in int64, as numpy's do
    Array ones32 = full({kN}, 70000.0, DType::Int32);
    EXPECT_EQ(sum(ones32).item<int64_t>(), kN * 70000);
  });
}

TEST(SplitRounds, FloatReductionsMatchTheReference) {
  // Each graph is interpreted once (slow at this length), then evaluated on every layout.
  Array x = arange(0.0, static_cast<double>(kN), 1.0, DType::Float64) * 1e-3;
  std::vector<Array> graphs = {mean(x), sum(x), sum(full({kN}, 0.1, DType::Float32))};
  std::vector<arrayc_test::HostArray> want;
  for (const Array& g : graphs) want.push_back(arrayc_test::reference_of(g.node()));
  Array i = arange(kN);
  for_threads_and_rounds([&] {
    for (size_t k = 0; k < graphs.size(); ++k) {
      Array fresh(graphs[k].node());  // unevaluated: runs again on this layout
      EXPECT_TRUE(arrayc_test::matches_values(arrayc_test::values_of(fresh), want[k])) << k;
    }
    // a NaN in the last round makes max NaN; -inf in the first makes min -inf
    Array y = where(i == kN - 7, full({}, std::nan(""), DType::Float32), cast(i, DType::Float32));
    EXPECT_TRUE(std::isnan(max(y).item<float>()));
    Array z = where(i == 3, full({}, -INFINITY, DType::Float32), cast(i, DType::Float32));
    EXPECT_EQ(min(z).item<float>(), -std::numeric_limits<float>::infinity());
  });
}

}  // namespace
