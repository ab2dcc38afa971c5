// arrayc-memory-bench: resident memory over long loops (issue 26, "unbounded growth"). Prints
// the process's RSS at intervals, with what the bounded structures hold (arrayc/bounds.h) and the
// compiles so far, so that flat memory shows as equal rows.
//
//   arrayc-memory-bench jit [calls [max_length]]   a jitted function called with random lengths
//                                                  (default 1000000 calls, lengths 1..100000)
//   arrayc-memory-bench eager [values]             sum(x * float(i) + 1) for i < values
//                                                  (default 3000)
//   arrayc-memory-bench lazy [steps]               y = y * 0.999 + x, never evaluated by the loop
//                                                  (default 1000000): auto-evaluation bounds it
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>

#include "arrayc/arrayc.h"

namespace {

double rss_mib() {
  std::ifstream f("/proc/self/statm");
  long pages = 0, resident = 0;
  f >> pages >> resident;
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

auto t0 = std::chrono::steady_clock::now();

void row(const char* what, long long i) {
  arrayc::BoundsInfo b = arrayc::bounds_info();
  arrayc::Stats s = arrayc::stats();
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%-6s %10lld %9.1f %8lld %9lld %9lld %10lld %8.1f\n", what, i, rss_mib(),
              static_cast<long long>(b.programs), static_cast<long long>(b.kernel_cache_entries),
              static_cast<long long>(s.compiles), static_cast<long long>(s.auto_evals), secs);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  setenv("ARRAYC_CACHE", "0", 1);
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode != "jit" && mode != "eager" && mode != "lazy") {
    std::fprintf(stderr, "usage: arrayc-memory-bench jit [calls [max_length]] | eager [values] | lazy [steps]\n");
    return 2;
  }
  std::printf("%-6s %10s %9s %8s %9s %9s %10s %8s\n", "loop", "iteration", "rss_mib", "programs", "kernels",
              "compiles", "auto_evals", "seconds");
  if (mode == "jit") {
    long long calls = argc > 2 ? std::atoll(argv[2]) : 1000000;
    long long max_len = argc > 3 ? std::atoll(argv[3]) : 100000;
    auto f = arrayc::jit([](const arrayc::Array& a) { return arrayc::sum(arrayc::sin(a) * 0.5f + a); });
    std::mt19937_64 g(26);
    std::uniform_int_distribution<int64_t> len(1, max_len);
    double check = 0;
    for (long long i = 0; i < calls; ++i) {
      arrayc::Array x = arrayc::full({len(g)}, 0.0, arrayc::DType::Float32);
      check += f(x).item<float>();
      if (i % (calls / 10 > 0 ? calls / 10 : 1) == 0) row("jit", i);
    }
    row("jit", calls);
    if (check != 0) std::printf("wrong result: %g\n", check);
  } else if (mode == "eager") {
    long long values = argc > 2 ? std::atoll(argv[2]) : 3000;
    arrayc::Array x = arrayc::arange(0.0, 1000.0, 1.0, arrayc::DType::Float32);
    x.eval();
    long long before = arrayc::stats().compiles;  // x's own kernel
    for (long long i = 0; i < values; ++i) {
      float s = static_cast<float>(i);  // the loop: every value a parameter, 0 and 1 too (1 compile)
      (void)arrayc::sum(x * s + 1.0f).item<float>();
      if (i % (values / 10 > 0 ? values / 10 : 1) == 0) row("eager", i);
    }
    row("eager", values);
    std::printf("the loop over %lld values compiled %lld kernel(s)\n", values, static_cast<long long>(arrayc::stats().compiles) - before);
  } else {
    long long steps = argc > 2 ? std::atoll(argv[2]) : 1000000;
    arrayc::Array x = arrayc::arange(0.0, 1000.0, 1.0, arrayc::DType::Float32) * 0.001f;
    x.eval();
    arrayc::Array y = x;
    for (long long i = 0; i < steps; ++i) {
      y = y * 0.999f + x;
      if (i % (steps / 10 > 0 ? steps / 10 : 1) == 0) row("lazy", i);
    }
    y.eval();
    row("lazy", steps);
  }
  return 0;
}
