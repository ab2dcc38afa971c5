// The memory-bandwidth ceiling, measured in the same run: STREAM-like copy (c = a) and triad
// (a = b + 3c) over arrays of doubles far larger than the caches, one contiguous slice per thread
// with as many threads as arrayc's pool (std::thread), best of N. Bytes counted as STREAM does:
// read + written, without the write-allocate traffic. Compiled with -O3 -march=native. The copy
// runs twice: with plain stores (each destination line is read before it is written) and with
// non-temporal stores (no such read; what memcpy does for large blocks, and arrayc's kernels for
// outputs larger than the last-level cache). The ceiling is the faster of the two.
// On a GPU: device-to-device copy of one 1 GiB buffer into another (cuda::copy_device), each copy
// timed on the host from before the copy is queued to after cuda::synchronize returns (the same
// wall-clock method as the GPU rows), bytes = 2 x size (read + written), best of N.
#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "baseline.h"
#include "bench.h"
#include "backend/cuda/cuda_driver.h"

namespace bench {
namespace {

// c[lo, hi) = a[lo, hi) with non-temporal stores from the first 64-byte boundary on.
void copy_streaming(const double* a, double* c, int64_t lo, int64_t hi) {
#if defined(__SSE2__)
  int64_t i = lo;
  for (; i < hi && reinterpret_cast<uintptr_t>(c + i) % 64 != 0; ++i) c[i] = a[i];
#if defined(__AVX512F__)
  for (; i + 8 <= hi; i += 8) _mm512_stream_pd(c + i, _mm512_loadu_pd(a + i));
#elif defined(__AVX__)
  for (; i + 4 <= hi; i += 4) _mm256_stream_pd(c + i, _mm256_loadu_pd(a + i));
#else
  for (; i + 2 <= hi; i += 2) _mm_stream_pd(c + i, _mm_loadu_pd(a + i));
#endif
  for (; i < hi; ++i) c[i] = a[i];
  _mm_sfence();
#else
  for (int64_t i = lo; i < hi; ++i) c[i] = a[i];
#endif
}

}  // namespace

std::function<void()> make_copy(double bytes, bool nontemporal) {
  struct Buffers {
    int64_t n = 0;
    std::unique_ptr<double[], void (*)(void*)> a{nullptr, std::free}, c{nullptr, std::free};
  };
  auto st = std::make_shared<Buffers>();
  st->n = std::max<int64_t>(1, static_cast<int64_t>(bytes / 2 / sizeof(double)));
  size_t size = (static_cast<size_t>(st->n) * sizeof(double) + 63) / 64 * 64;
  st->a.reset(static_cast<double*>(std::aligned_alloc(64, size)));
  st->c.reset(static_cast<double*>(std::aligned_alloc(64, size)));
  if (!st->a || !st->c) throw std::runtime_error("copy: out of memory");
  // First touch by the thread that copies the slice: the pool gives the same chunks each time.
  baseline::parallel(st->n, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) st->a[i] = 1, st->c[i] = 0;
  });
  return [st, nontemporal] {
    double *pa = st->a.get(), *pc = st->c.get();
    baseline::parallel(st->n, [=](int64_t lo, int64_t hi) {
      if (nontemporal) copy_streaming(pa, pc, lo, hi);
      else
        for (int64_t i = lo; i < hi; ++i) pc[i] = pa[i];
    });
  };
}

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
  std::barrier sync(threads);
  using Clock = std::chrono::steady_clock;
  // Each thread stamps when it starts and ends each kernel of each round; a kernel's time is from
  // the first thread's start to the last one's end. (Timing from one thread's return from the
  // barrier counts the time by which the others may have started before it: that made a plain
  // copy look faster than memory on a 16-core VM, 179 against 130 GB/s non-temporal.)
  constexpr int kKernels = 3;  // copy, triad, non-temporal copy
  std::vector<Clock::time_point> start(static_cast<size_t>(threads) * reps * kKernels), end(start.size());
  auto body = [&](int t) {
    int64_t lo = n * t / threads, hi = n * (t + 1) / threads;
    double *pa = a.get(), *pb = b.get(), *pc = c.get();
    for (int64_t i = lo; i < hi; ++i) pa[i] = 1, pb[i] = 2, pc[i] = 0;  // first touch by its user
    for (int r = 0; r < reps; ++r) {
      for (int k = 0; k < kKernels; ++k) {
        size_t at = (static_cast<size_t>(r) * kKernels + k) * threads + t;
        sync.arrive_and_wait();
        start[at] = Clock::now();
        if (k == 0)
          for (int64_t i = lo; i < hi; ++i) pc[i] = pa[i];
        else if (k == 1)
          for (int64_t i = lo; i < hi; ++i) pa[i] = pb[i] + 3.0 * pc[i];
        else
          copy_streaming(pa, pc, lo, hi);
        end[at] = Clock::now();
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(body, t);
  body(0);
  for (auto& th : pool) th.join();
  double best[kKernels] = {1e30, 1e30, 1e30};
  for (int r = 0; r < reps; ++r)
    for (int k = 0; k < kKernels; ++k) {
      size_t at = (static_cast<size_t>(r) * kKernels + k) * threads;
      auto first = *std::min_element(start.begin() + at, start.begin() + at + threads);
      auto last = *std::max_element(end.begin() + at, end.begin() + at + threads);
      best[k] = std::min(best[k], std::chrono::duration<double>(last - first).count());
    }
  const double best_copy = best[0], best_triad = best[1], best_copy_nt = best[2];

  Ceiling c_out;
  c_out.copy_plain_gbps = 2.0 * n * sizeof(double) / best_copy / 1e9;
  c_out.copy_nt_gbps = 2.0 * n * sizeof(double) / best_copy_nt / 1e9;
  c_out.copy_gbps = std::max(c_out.copy_plain_gbps, c_out.copy_nt_gbps);
  c_out.triad_gbps = 3.0 * n * sizeof(double) / best_triad / 1e9;
  c_out.threads = threads;
  c_out.array_mb = n * sizeof(double) / 1048576.0;
  c_out.best_of = reps;
  return c_out;
}

GpuCeiling measure_gpu_ceiling(int dev, bool quick) {
  namespace cuda = arrayc::detail::cuda;
  using Clock = std::chrono::steady_clock;
  GpuCeiling g;
  g.device = "gpu:" + std::to_string(dev);
  const cuda::DeviceInfo& info = cuda::device_info(dev);
  g.name = info.name;
  g.sm = info.sm();
  g.multiprocessors = info.multiprocessors;
  g.memory_gib = static_cast<double>(info.total_memory) / (1 << 30);
  const size_t bytes = size_t{1} << 30;  // 1 GiB per buffer, far beyond any cache (H200 L2: 60 MiB)
  const int reps = quick ? 10 : 20;
  void* a = cuda::alloc(dev, bytes);
  void* b = nullptr;
  try {
    b = cuda::alloc(dev, bytes);
    for (int i = 0; i < 3; ++i) cuda::copy_device(dev, b, a, bytes);  // warm-up (contents irrelevant)
    cuda::synchronize(dev);
    std::vector<double> s;
    for (int r = 0; r < reps; ++r) {
      auto t0 = Clock::now();
      cuda::copy_device(dev, b, a, bytes);
      cuda::synchronize(dev);
      s.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    }
    std::sort(s.begin(), s.end());
    double med = reps % 2 ? s[reps / 2] : 0.5 * (s[reps / 2 - 1] + s[reps / 2]);
    g.copy_gbps = 2.0 * static_cast<double>(bytes) / s.front() / 1e9;
    g.median_gbps = 2.0 * static_cast<double>(bytes) / med / 1e9;
  } catch (...) {
    cuda::free(dev, b, bytes);
    cuda::free(dev, a, bytes);
    throw;
  }
  cuda::free(dev, b, bytes);
  cuda::free(dev, a, bytes);
  cuda::release_cache(dev);
  g.buffer_mib = static_cast<double>(bytes) / 1048576.0;
  g.best_of = reps;
  return g;
}

}  // namespace bench
