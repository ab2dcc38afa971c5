// The memory-bandwidth ceiling, measured in the same run: STREAM-like copy (c = a) and triad
// (a = b + 3c) over arrays of doubles far larger than the caches, one contiguous slice per thread
// on every core (std::thread), best of N. Bytes counted as STREAM does: read + written, without
// the write-allocate traffic. Compiled with -O3 -march=native.
#include <barrier>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <thread>
#include <vector>

#include "baseline.h"
#include "bench.h"

namespace bench {

Ceiling measure_ceiling(bool quick) {
  const int threads = baseline::num_threads();
  const int64_t n = int64_t{1} << (quick ? 25 : 26);  // 256 or 512 MiB per array
  const int reps = quick ? 5 : 10;
  struct Free {
    void operator()(double* p) const { std::free(p); }
  };
  auto alloc = [&] {
    return std::unique_ptr<double[], Free>(static_cast<double*>(std::aligned_alloc(64, n * sizeof(double))));
  };
  auto a = alloc(), b = alloc(), c = alloc();
  double best_copy = 1e30, best_triad = 1e30;
  std::barrier sync(threads);
  using Clock = std::chrono::steady_clock;

  auto body = [&](int t) {
    int64_t lo = n * t / threads, hi = n * (t + 1) / threads;
    double *pa = a.get(), *pb = b.get(), *pc = c.get();
    for (int64_t i = lo; i < hi; ++i) pa[i] = 1, pb[i] = 2, pc[i] = 0;  // first touch by its user
    for (int r = 0; r < reps; ++r) {
      sync.arrive_and_wait();
      auto t0 = Clock::now();
      for (int64_t i = lo; i < hi; ++i) pc[i] = pa[i];
      sync.arrive_and_wait();
      auto t1 = Clock::now();
      for (int64_t i = lo; i < hi; ++i) pa[i] = pb[i] + 3.0 * pc[i];
      sync.arrive_and_wait();
      auto t2 = Clock::now();
      if (t == 0) {
        best_copy = std::min(best_copy, std::chrono::duration<double>(t1 - t0).count());
        best_triad = std::min(best_triad, std::chrono::duration<double>(t2 - t1).count());
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(body, t);
  body(0);
  for (auto& th : pool) th.join();

  Ceiling c_out;
  c_out.copy_gbps = 2.0 * n * sizeof(double) / best_copy / 1e9;
  c_out.triad_gbps = 3.0 * n * sizeof(double) / best_triad / 1e9;
  c_out.threads = threads;
  c_out.array_mb = n * sizeof(double) / 1048576.0;
  c_out.best_of = reps;
  return c_out;
}

}  // namespace bench
