#include "baseline.h"

#include <cblas.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "arrayc/products.h"
#include "backend/host/thread_pool.h"

namespace bench::baseline {
namespace {

// A persistent pool: the caller runs chunk 0, workers the others; workers sleep between jobs
// (no spinning, so they take no time from the other variants).
class Pool {
 public:
  // As many threads as arrayc's own pool (ARRAYC_NUM_THREADS, else the CPUs this process may
  // run on), so that baselines and the ceiling compare like with like under a limit or taskset.
  Pool() : n_(arrayc::detail::num_threads()) {
    for (int t = 1; t < n_; ++t) workers_.emplace_back([this, t] { work(t); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
      ++generation_;
    }
    start_.notify_all();
    for (auto& w : workers_) w.join();
  }
  int size() const { return n_; }

  // Runs f(begin, end) over [0, n) in one contiguous chunk per thread.
  void run(int64_t n, const std::function<void(int64_t, int64_t)>& f) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      job_ = &f;
      total_ = n;
      pending_ = n_ - 1;
      ++generation_;
    }
    start_.notify_all();
    chunk(0, f, n);
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, [this] { return pending_ == 0; });
  }

 private:
  void chunk(int t, const std::function<void(int64_t, int64_t)>& f, int64_t n) {
    int64_t per = (n + n_ - 1) / n_;
    per = (per + 63) / 64 * 64;  // whole cache lines per thread
    int64_t b = std::min<int64_t>(n, per * t), e = std::min<int64_t>(n, b + per);
    if (b < e) f(b, e);
  }
  void work(int t) {
    uint64_t seen = 0;
    for (;;) {
      const std::function<void(int64_t, int64_t)>* job;
      int64_t n;
      {
        std::unique_lock<std::mutex> lock(mu_);
        start_.wait(lock, [&] { return generation_ != seen; });
        seen = generation_;
        if (stop_) return;
        job = job_;
        n = total_;
      }
      chunk(t, *job, n);
      std::lock_guard<std::mutex> lock(mu_);
      if (--pending_ == 0) done_.notify_one();
    }
  }

  int n_;
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable start_, done_;
  const std::function<void(int64_t, int64_t)>* job_ = nullptr;
  int64_t total_ = 0;
  int pending_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
};

Pool& pool() {
  static Pool p;
  return p;
}

template <typename T> void w1_impl(const T* x, T* y, int64_t n) {
  pool().run(n, [=](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      T c = std::cos(x[i]), s = std::sin(x[i]);
      y[i] = c * c + s * s;
    }
  });
}

}  // namespace

int num_threads() { return pool().size(); }

void parallel(int64_t n, const std::function<void(int64_t, int64_t)>& f) { pool().run(n, f); }

void w1(const float* x, float* y, int64_t n) { w1_impl(x, y, n); }
void w1(const double* x, double* y, int64_t n) { w1_impl(x, y, n); }

void w2(const float* x, float* y, int64_t n) {
  pool().run(n, [=](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      float v = x[i];
      y[i] = 1.05f * (v > 0 ? v : 1.67f * std::exp(v) - 1.67f);
    }
  });
}

void w8(const float* x, float* y, int64_t n) {
  pool().run(n, [=](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      float v = x[i];
      float w = v > 0 ? v * 1.5f + 0.25f : std::exp(v) - 1.0f;
      y[i] = w * std::cos(v) + std::sin(v) * 0.5f;
    }
  });
}

// OpenBLAS as arrayc configures it (its core and thread count, docs/blas.md), whether or not
// arrayc's own products in this process called it: a product that arrayc computes with its own
// kernel leaves OpenBLAS on its detected core, which on a VM can be a far slower one (Prescott).
static void configure_like_arrayc() {
  static const bool once = (arrayc::blas_info(), true);
  (void)once;
}

void gemm(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k, bool trans_b) {
  configure_like_arrayc();
  cblas_sgemm(CblasRowMajor, CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, static_cast<int>(m),
              static_cast<int>(n), static_cast<int>(k), 1.0f, a, static_cast<int>(k), b,
              static_cast<int>(trans_b ? k : n), 0.0f, c, static_cast<int>(n));
}

void gemm(const double* a, const double* b, double* c, int64_t m, int64_t n, int64_t k, bool trans_b) {
  configure_like_arrayc();
  cblas_dgemm(CblasRowMajor, CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, static_cast<int>(m),
              static_cast<int>(n), static_cast<int>(k), 1.0, a, static_cast<int>(k), b,
              static_cast<int>(trans_b ? k : n), 0.0, c, static_cast<int>(n));
}

void w7(const float* a, float* m, float* log, int64_t n, int iters) {
  for (int it = 0; it < iters; ++it) {
    gemm(a, a, m, n, n, n, false);
    // Float products summed in double and rounded once, like the reference; eight independent
    // partial sums, so that the compiler can vectorize without reassociating (no -ffast-math).
    double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int64_t i = 0, nn = n * n;
    for (; i + 8 <= nn; i += 8)
      for (int l = 0; l < 8; ++l) acc[l] += static_cast<double>(m[i + l] * m[i + l]);
    for (; i < nn; ++i) acc[0] += static_cast<double>(m[i] * m[i]);
    double s = 0;
    for (double a : acc) s += a;
    log[it] = static_cast<float>(s);
  }
}


// ---- libmvec: the same loops over glibc's vector functions -------------------------------------

namespace libmvec {
namespace {

// GCC vector types of the widest width this file is compiled for, and libmvec's entry points
// for them (x86-64 vector ABI names: ISA 'e' AVX-512 or 'd' AVX2, N lanes, one vector argument).
#define ARRAYC_BENCH_LIBMVEC(isa, nf, nd)                                       \
  extern "C" VF _ZGV##isa##N##nf##v_expf(VF);                                   \
  extern "C" VF _ZGV##isa##N##nf##v_sinf(VF);                                   \
  extern "C" VF _ZGV##isa##N##nf##v_cosf(VF);                                   \
  extern "C" VD _ZGV##isa##N##nd##v_sin(VD);                                    \
  extern "C" VD _ZGV##isa##N##nd##v_cos(VD);                                    \
  VF vexp(VF x) { return _ZGV##isa##N##nf##v_expf(x); }                         \
  VF vsin(VF x) { return _ZGV##isa##N##nf##v_sinf(x); }                         \
  VF vcos(VF x) { return _ZGV##isa##N##nf##v_cosf(x); }                         \
  VD vsin(VD x) { return _ZGV##isa##N##nd##v_sin(x); }                          \
  VD vcos(VD x) { return _ZGV##isa##N##nd##v_cos(x); }                          \
  constexpr bool kAvailable = true;
#if defined(ARRAYC_BENCH_NO_LIBMVEC)
#define ARRAYC_BENCH_LIBMVEC_NONE
#elif defined(__AVX512F__)
using VF = __m512;
using VD = __m512d;
ARRAYC_BENCH_LIBMVEC(e, 16, 8)
#elif defined(__AVX2__)
using VF = __m256;
using VD = __m256d;
ARRAYC_BENCH_LIBMVEC(d, 8, 4)
#else
#define ARRAYC_BENCH_LIBMVEC_NONE
#endif
#ifdef ARRAYC_BENCH_LIBMVEC_NONE
using VF = float __attribute__((vector_size(16)));
using VD = double __attribute__((vector_size(16)));
template <typename V> V unavailable(V) {
  std::fputs("arrayc-bench: the libmvec baseline needs glibc's libmvec and AVX2\n", stderr);
  std::abort();
}
VF vexp(VF x) { return unavailable(x); }
VF vsin(VF x) { return unavailable(x); }
VF vcos(VF x) { return unavailable(x); }
VD vsin(VD x) { return unavailable(x); }
VD vcos(VD x) { return unavailable(x); }
constexpr bool kAvailable = false;
#endif

// y[i] = f(x[i]) a vector at a time on the pool; the last partial vector goes through a
// zero-padded copy, so every element takes the same code.
template <typename T, typename V, typename F> void vector_loop(const T* x, T* y, int64_t n, F f) {
  constexpr int64_t kW = sizeof(V) / sizeof(T);
  pool().run(n, [=](int64_t b, int64_t e) {
    int64_t i = b;
    for (; i + kW <= e; i += kW) {
      V v, r;
      std::memcpy(&v, x + i, sizeof v);
      r = f(v);
      std::memcpy(y + i, &r, sizeof r);
    }
    if (i < e) {
      T buf[kW] = {};
      std::memcpy(buf, x + i, static_cast<size_t>(e - i) * sizeof(T));
      V v, r;
      std::memcpy(&v, buf, sizeof v);
      r = f(v);
      std::memcpy(buf, &r, sizeof r);
      std::memcpy(y + i, buf, static_cast<size_t>(e - i) * sizeof(T));
    }
  });
}

template <typename T, typename V> void w1_impl(const T* x, T* y, int64_t n) {
  vector_loop<T, V>(x, y, n, [](V v) {
    V c = vcos(v), s = vsin(v);
    return c * c + s * s;
  });
}

}  // namespace

bool available() { return kAvailable; }

void w1(const float* x, float* y, int64_t n) { w1_impl<float, VF>(x, y, n); }
void w1(const double* x, double* y, int64_t n) { w1_impl<double, VD>(x, y, n); }

void w2(const float* x, float* y, int64_t n) {
  vector_loop<float, VF>(x, y, n, [](VF v) { return 1.05f * (v > 0 ? v : 1.67f * vexp(v) - 1.67f); });
}

void w8(const float* x, float* y, int64_t n) {
  vector_loop<float, VF>(x, y, n, [](VF v) {
    VF w = v > 0 ? v * 1.5f + 0.25f : vexp(v) - 1.0f;
    return w * vcos(v) + vsin(v) * 0.5f;
  });
}

}  // namespace libmvec

}  // namespace bench::baseline
