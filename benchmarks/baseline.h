// The hand-written baselines: what a C++ programmer writes without arrayc. Elementwise workloads
// are plain loops (the C library's sinf/cosf/expf, no -ffast-math) split over arrayc's thread count by a
// small persistent thread pool; products call OpenBLAS directly. Compiled with -O3 -march=native
// (benchmarks/CMakeLists.txt). Outputs go to preallocated, already touched memory.
#pragma once
#include <cstdint>
#include <functional>

namespace bench::baseline {

int num_threads();
// Runs f(begin, end) over [0, n) on the baselines' pool, one contiguous chunk of whole cache
// lines per thread (the same chunks for the same n), and returns when all are done.
void parallel(int64_t n, const std::function<void(int64_t, int64_t)>& f);

// W1: y = cos(x)^2 + sin(x)^2
void w1(const float* x, float* y, int64_t n);
void w1(const double* x, double* y, int64_t n);
// W2: y = 1.05 * (x > 0 ? x : 1.67 * exp(x) - 1.67)
void w2(const float* x, float* y, int64_t n);
// W8: y = (x > 0 ? x*1.5 + 0.25 : exp(x) - 1) * cos(x) + sin(x)*0.5
void w8(const float* x, float* y, int64_t n);

// The same elementwise loops over vectors of the widest width -march=native gives (AVX-512, or
// else AVX2), calling glibc's vector math library libmvec (_ZGVeN16v_sinf and the like, which
// GCC calls itself only under -ffast-math, and not at all for W1 and W8, whose sin and cos it
// merges into a scalar sincosf). What a C++ programmer gets with the system's vector math.
namespace libmvec {
// false without libmvec, or when built for a CPU without AVX2: then the functions below abort
bool available();
void w1(const float* x, float* y, int64_t n);
void w1(const double* x, double* y, int64_t n);
void w2(const float* x, float* y, int64_t n);
void w8(const float* x, float* y, int64_t n);
}  // namespace libmvec

// C[m,n] = A[m,k] . op(B), row-major; op(B) = B[k,n], or B[n,k] transposed when trans_b.
void gemm(const float* a, const float* b, float* c, int64_t m, int64_t n, int64_t k, bool trans_b);
void gemm(const double* a, const double* b, double* c, int64_t m, int64_t n, int64_t k, bool trans_b);

// W7: `iters` times M = A.A (A n x n, OpenBLAS), log[i] = sum(M*M) (float products summed in
// double, rounded once); m is scratch of n*n.
void w7(const float* a, float* m, float* log, int64_t n, int iters);

}  // namespace bench::baseline
