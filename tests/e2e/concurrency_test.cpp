// Many threads using the library at once (issue 26): calls of one jit function shared by all
// threads and of each thread's own, new shapes mixed in (traces while others run compiled
// programs), eager ops alongside, and copies of one unevaluated Array read from every thread.
// Every result is checked. scripts/tsan.sh runs it under ThreadSanitizer with
// ARRAYC_CONCURRENCY_CALLS=1000 (calls per thread); the suite runs fewer.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "arrayc/arrayc.h"

namespace {

using arrayc::Array;

int calls_per_thread() {
  const char* v = std::getenv("ARRAYC_CONCURRENCY_CALLS");
  return v ? std::max(1, std::atoi(v)) : 60;
}

std::vector<float> ramp(int64_t n, float scale) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) v[static_cast<size_t>(k)] = scale * static_cast<float>(k % 17) - 3.0f;
  return v;
}

bool near(double got, double want) { return std::fabs(got - want) <= 1e-5 * (1 + std::fabs(want)); }

TEST(Concurrency, EightThreadsMixJitEagerAndSharedArrays) {
  constexpr int kThreads = 8;
  constexpr int kPerRound = 20;  // calls per thread between two shared unevaluated arrays
  const int calls = calls_per_thread();
  auto shared_fn = arrayc::jit([](const Array& x) { return arrayc::sin(x) * 2.0f + 1.0f; });
  auto shared_sum = arrayc::jit([](const Array& a, const Array& b) { return arrayc::sum(a * b); });
  std::atomic<int> bad{0};
  std::vector<std::string> first_error(kThreads);

  for (int round = 0; round * kPerRound < calls; ++round) {
    // One lazy array per round, copied into every thread, which all read it at once.
    Array lazy = arrayc::sum(arrayc::cast(arrayc::arange(1000 + round), arrayc::DType::Float64) * 2.0);
    const double lazy_want = static_cast<double>(999 + round) * (1000 + round);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t, lazy] {
        auto own = arrayc::jit([t](const Array& x) { return arrayc::exp(x * 0.25f) - static_cast<float>(t); });
        auto fail = [&](const std::string& what) {
          ++bad;
          if (first_error[static_cast<size_t>(t)].empty()) first_error[static_cast<size_t>(t)] = what;
        };
        try {
          if (!near(lazy.item<double>(), lazy_want)) fail("shared lazy array: " + std::to_string(lazy.item<double>()));
          for (int i = 0; i < kPerRound && round * kPerRound + i < calls; ++i) {
            int call = round * kPerRound + i;
            int64_t n = 1 + (call * 7 + t * 3) % 41;  // lengths recur, and new ones appear
            std::vector<float> xs = ramp(n, 0.5f + 0.1f * static_cast<float>(t));
            Array x = arrayc::array(xs, {n});
            switch ((call + t) % 4) {
              case 0: {
                std::vector<float> got = shared_fn(x).to_vector<float>();
                for (int64_t k = 0; k < n; ++k)
                  if (!near(got[k], std::sin(xs[k]) * 2.0f + 1.0f)) { fail("shared jit, n " + std::to_string(n)); break; }
                break;
              }
              case 1: {
                double want = 0;
                for (float v : xs) want += static_cast<double>(v) * v;
                double got = shared_sum(x, x).item<double>();
                if (std::fabs(got - want) > 1e-4 * (1 + std::fabs(want))) fail("shared jit sum, n " + std::to_string(n));
                break;
              }
              case 2: {
                std::vector<float> got = own(x).to_vector<float>();
                for (int64_t k = 0; k < n; ++k)
                  if (!near(got[k], std::exp(xs[k] * 0.25f) - static_cast<float>(t))) { fail("own jit, n " + std::to_string(n)); break; }
                break;
              }
              default: {
                Array y = arrayc::maximum(x, 0.0f) + static_cast<float>(t);  // eager, a kernel per shape signature
                std::vector<float> got = y.to_vector<float>();
                for (int64_t k = 0; k < n; ++k)
                  if (got[k] != std::max(xs[k], 0.0f) + static_cast<float>(t)) { fail("eager, n " + std::to_string(n)); break; }
                break;
              }
            }
          }
        } catch (const std::exception& e) {
          fail(std::string("raised: ") + e.what());
        }
      });
    }
    for (std::thread& th : threads) th.join();
  }
  std::string errors;
  for (const std::string& e : first_error)
    if (!e.empty()) errors += "\n  " + e;
  EXPECT_EQ(bad.load(), 0) << errors;
}

}  // namespace
