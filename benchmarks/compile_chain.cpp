// arrayc-compile-bench: compile time of long fused chains (issue 26, "unbounded growth").
// For each length n it builds a chain alternating sin and multiply, n ops in all, over a float32
// vector, evaluates it once in a fresh process (fork) and prints the LLVM time
// (stats().compile_ms), the wall time and this thread's CPU time of the first evaluation, the
// kernels the chain was split into and how many of them compiled (equal pieces compile once).
// A second table ("mixed") makes every seventh sin a cos, so that the pieces differ. The disk
// cache is off.
//
//   arrayc-compile-bench [max_n [step]]       default: 1000 100
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "arrayc/arrayc.h"

// CPU time of this thread (the compile runs on the calling thread): less sensitive than the wall
// clock to other processes on a shared machine.
static double thread_cpu_ms() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

// One chain of n ops, compiled and run once; prints its row.
// mixed: every seventh sin is a cos, so that the pieces of a split chain differ (each compiles).
static void measure(int n, bool mixed) {
  arrayc::Array x = arrayc::arange(0.0, 4096.0, 1.0, arrayc::DType::Float32) * 0.001f;
  x.eval();  // the JIT's start-up is not the chain's compile time
  arrayc::reset_stats();
  auto t0 = std::chrono::steady_clock::now();
  double c0 = thread_cpu_ms();
  arrayc::Array y = x;
  for (int i = 0; i < n; i += 2) {
    y = mixed && (i / 2) % 7 == 3 ? arrayc::cos(y) : arrayc::sin(y);
    if (i + 1 < n) y = y * 0.999f;
  }
  y.eval();
  double wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  double cpu = thread_cpu_ms() - c0;
  arrayc::Stats s = arrayc::stats();
  std::printf("%-6s %6d %10.0f %10.0f %10.0f %8lld %9lld %10.2f\n", mixed ? "mixed" : "sin", n, s.compile_ms, wall,
              cpu, static_cast<long long>(s.kernel_launches), static_cast<long long>(s.compiles), cpu / n);
  std::fflush(stdout);
}

int main(int argc, char** argv) {
  setenv("ARRAYC_CACHE", "0", 1);  // measure compiles, not disk loads
  int max_n = argc > 1 ? std::atoi(argv[1]) : 1000;
  int step = argc > 2 ? std::atoi(argv[2]) : 100;
  if (max_n < 2 || step < 2) {
    std::fprintf(stderr, "usage: arrayc-compile-bench [max_n >= 2 [step >= 2]]\n");
    return 2;
  }
  std::printf("%-6s %6s %10s %10s %10s %8s %9s %10s\n", "chain", "ops", "llvm_ms", "wall_ms", "cpu_ms", "kernels",
              "compiles", "cpu_ms/op");
  std::fflush(stdout);
  for (int mixed = 0; mixed < 2; ++mixed)
  for (int n = step; n <= max_n; n += step) {
    // Each length in a fresh process: the pieces of a split chain are the same kernels at every
    // length (the factor is a kernel parameter), and would be found in the cache.
    pid_t pid = fork();
    if (pid < 0) {
      std::perror("fork");
      return 1;
    }
    if (pid == 0) {
      measure(n, mixed);
      std::_Exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "arrayc-compile-bench: the run of %d ops failed\n", n);
      return 1;
    }
  }
  return 0;
}
