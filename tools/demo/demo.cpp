// arrayc-demo: the reference workloads W1 and W2 (see benchmarks/ and docs/) through
// arrayc::jit, once with fusion and once without, showing for each
//   - a check of the result against what it must be,
//   - the first call (trace + compile + run) and the median of later calls,
//   - what the engine did (arrayc::stats()) on the first call, on the later calls, and on calls
//     at three new lengths (n/2, n/2 - 1, n/2 - 2: each resizes the first call's program, with no
//     trace and no compile), timed one by one: their median, and the first of them;
//   - then W2's first call again in a new process, which loads the kernels this one compiled from
//     the disk cache instead of compiling them (`arrayc-demo --first-call` is that process).
// Exits with status 1 when a result is wrong.
#include <arrayc/arrayc.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

namespace {

using arrayc::Array;
using arrayc::DType;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

arrayc::Stats operator-(const arrayc::Stats& a, const arrayc::Stats& b) {
  arrayc::Stats d;
  d.traces = a.traces - b.traces;
  d.compiles = a.compiles - b.compiles;
  d.cache_hits = a.cache_hits - b.cache_hits;
  d.kernel_launches = a.kernel_launches - b.kernel_launches;
  d.compile_ms = a.compile_ms - b.compile_ms;
  d.disk_hits = a.disk_hits - b.disk_hits;
  return d;
}

// One row of the per-workload table.
void print_row(const char* mode, const std::string& what, double ms, const char* ms_note,
               const arrayc::Stats& s) {
  std::printf("  %-8s %-22s %10.4f ms %-7s %7lld %9lld %11lld %10lld %9lld %11.1f\n", mode, what.c_str(),
              ms, ms_note, static_cast<long long>(s.traces), static_cast<long long>(s.compiles),
              static_cast<long long>(s.cache_hits), static_cast<long long>(s.disk_hits),
              static_cast<long long>(s.kernel_launches), s.compile_ms);
}

void print_header() {
  std::printf("  %-8s %-22s %13s %-7s %7s %9s %11s %10s %9s %11s\n", "mode", "calls", "time", "",
              "traces", "compiles", "cache hits", "disk hits", "launches", "compile ms");
}

struct Outcome {
  Array result;           // of the first call, on the full-size input
  double later_ms = 0;    // median of the later calls
  int64_t launches_per_call = 0;
};

// Runs a fresh jit of f with fusion on or off: the first call, `repeats` later calls, and one call
// on each of `news` (the same signature at lengths not seen before). Prints one table row for each
// kind.
template <typename F>
Outcome run_mode(bool fused, F f, const Array& x, const std::vector<Array>& news, int repeats) {
  arrayc::set_fusion(fused);
  const char* mode = fused ? "fused" : "unfused";
  auto g = arrayc::jit(f);  // a fresh jit object: nothing traced yet
  Outcome out;

  arrayc::Stats s0 = arrayc::stats();
  auto t0 = Clock::now();
  out.result = g(x);
  out.result.eval();
  double first_ms = ms_since(t0);
  arrayc::Stats s1 = arrayc::stats();
  print_row(mode, "first call", first_ms, "", s1 - s0);

  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    auto t = Clock::now();
    Array y = g(x);
    y.eval();
    times.push_back(ms_since(t));
  }
  arrayc::Stats s2 = arrayc::stats();
  out.later_ms = median(times);
  out.launches_per_call = (s2 - s1).kernel_launches / repeats;
  print_row("", "next " + std::to_string(repeats) + " calls", out.later_ms, "median", s2 - s1);

  std::vector<double> new_ms;
  for (const Array& in : news) {
    auto t1 = Clock::now();
    Array y = g(in);
    y.eval();
    new_ms.push_back(ms_since(t1));
  }
  print_row("", "3 new lengths ~n/2", median(new_ms), "median", arrayc::stats() - s2);
  std::printf("  %-8s %-22s %10.4f ms (the first of the 3)\n", "", "", new_ms.front());
  return out;
}

// The inputs of the new-length calls: lengths n/2, n/2 - 1 and n/2 - 2, evaluated before timing.
template <typename Make> std::vector<Array> new_lengths(int64_t n, Make make) {
  std::vector<Array> v;
  for (int64_t i = 0; i < 3; ++i) v.push_back(make(n / 2 - i));
  arrayc::eval(v);
  return v;
}

void print_summary(const Outcome& fused, const Outcome& unfused) {
  std::printf("  kernels per call: fused %lld, unfused %lld;  later calls: fused %.3f ms, unfused "
              "%.3f ms (%.2fx)\n",
              static_cast<long long>(fused.launches_per_call),
              static_cast<long long>(unfused.launches_per_call), fused.later_ms, unfused.later_ms,
              fused.later_ms > 0 ? unfused.later_ms / fused.later_ms : 0.0);
}

// W1: cos(x)^2 + sin(x)^2 on x = arange(n). Every element must be 1.
bool workload_w1(DType dtype, int64_t n, int repeats) {
  std::printf("\nW1 %s: cos(x)*cos(x) + sin(x)*sin(x),  x = arange(%lld)\n",
              arrayc::dtype_name(dtype), static_cast<long long>(n));
  std::printf("   transcendental-heavy elementwise chain; large x stresses argument reduction\n\n");
  Array x = arrayc::arange(0.0, static_cast<double>(n), 1.0, dtype);
  std::vector<Array> news = new_lengths(n, [dtype](int64_t m) { return arrayc::arange(0.0, static_cast<double>(m), 1.0, dtype); });
  x.eval();  // inputs ready before timing

  auto f = [](const Array& a) {
    Array c = arrayc::cos(a);
    Array s = arrayc::sin(a);
    return c * c + s * s;
  };
  print_header();
  Outcome fused = run_mode(true, f, x, news, repeats);
  Outcome unfused = run_mode(false, f, x, news, repeats);
  arrayc::set_fusion(true);
  print_summary(fused, unfused);

  const double tol = dtype == DType::Float32 ? 1e-5 : 1e-12;
  bool ok = true;
  for (const auto& [name, out] : {std::pair<const char*, const Outcome*>{"fused", &fused},
                                  std::pair<const char*, const Outcome*>{"unfused", &unfused}}) {
    std::vector<double> v = out->result.to_vector<double>();
    double sum = 0, max_err = 0;
    for (double e : v) {
      sum += e;
      max_err = std::max(max_err, std::fabs(e - 1.0));  // NaN fails the test below
    }
    double mean = v.empty() ? 0 : sum / static_cast<double>(v.size());
    bool good = static_cast<int64_t>(v.size()) == n && max_err <= tol && std::fabs(mean - 1) <= tol;
    std::printf("  check %-8s mean = %.9f  max |y - 1| = %.3g  (tolerance %.0e)  %s\n", name,
                mean, max_err, tol, good ? "ok" : "WRONG");
    ok = ok && good;
  }
  return ok;
}

// W2's function: SELU.
auto w2_function() {
  return [](const Array& a) { return 1.05 * arrayc::where(a > 0.0, a, 1.67 * arrayc::exp(a) - 1.67); };
}

double selu_reference(double x) { return 1.05 * (x > 0 ? x : 1.67 * std::exp(x) - 1.67); }

// W2: SELU on n float32 samples of normal(0, 1), checked against a host evaluation in double.
bool workload_w2(int64_t n, int repeats) {
  std::printf("\nW2 float32: SELU  1.05 * where(x > 0, x, 1.67*exp(x) - 1.67),  x ~ normal(0, 1), "
              "n = %lld\n",
              static_cast<long long>(n));
  std::printf("   short fused chain: compile latency and cached-call overhead\n\n");
  Array x = arrayc::normal({n}, /*seed=*/42);
  std::vector<Array> news = new_lengths(n, [](int64_t m) { return arrayc::normal({m}, /*seed=*/7 + m); });
  x.eval();

  auto f = w2_function();
  print_header();
  Outcome fused = run_mode(true, f, x, news, repeats);
  Outcome unfused = run_mode(false, f, x, news, repeats);
  arrayc::set_fusion(true);
  print_summary(fused, unfused);

  std::vector<double> xv = x.to_vector<double>();
  bool ok = true;
  for (const auto& [name, out] : {std::pair<const char*, const Outcome*>{"fused", &fused},
                                  std::pair<const char*, const Outcome*>{"unfused", &unfused}}) {
    std::vector<double> v = out->result.to_vector<double>();
    bool good = v.size() == xv.size();
    double sum = 0, max_err = 0;
    for (size_t i = 0; good && i < v.size(); ++i) {
      sum += v[i];
      double ref = selu_reference(static_cast<float>(xv[i]));
      double err = std::fabs(v[i] - ref) / std::max(1.0, std::fabs(ref));
      if (!(err <= 1e-5)) good = false;  // also catches NaN
      max_err = std::max(max_err, err);
    }
    std::printf("  check %-8s sum = %.4f  max rel. error vs host reference = %.3g  %s\n", name,
                sum, max_err, good ? "ok" : "WRONG");
    ok = ok && good;
  }
  std::printf("  first values:");
  std::vector<double> y = fused.result.to_vector<double>();
  for (size_t i = 0; i < 4 && i < y.size(); ++i) std::printf("  selu(%.4f) = %.4f", xv[i], y[i]);
  std::printf("\n");
  return ok;
}

// `arrayc-demo --first-call`: W2's first call (fused) in this new process, one line.
int first_call_only() {
  Array x = arrayc::normal({1'000'000}, /*seed=*/42);
  x.eval();
  auto g = arrayc::jit(w2_function());
  arrayc::Stats s0 = arrayc::stats();
  auto t0 = Clock::now();
  Array y = g(x);
  y.eval();
  double ms = ms_since(t0);
  arrayc::Stats s = arrayc::stats() - s0;
  std::printf("  W2 fused, first call in a new process: %.3f ms, %lld kernels loaded from the disk cache, %lld "
              "compiled\n",
              ms, static_cast<long long>(s.disk_hits), static_cast<long long>(s.compiles));
  return 0;
}

// Runs `arrayc-demo --first-call` and prints what it printed.
void second_process() {
  std::printf("\nThe next process: compiled kernels are kept on disk (docs/env_vars.md, ARRAYC_CACHE)\n");
  arrayc::DiskCacheInfo c = arrayc::disk_cache_info();
  if (!c.enabled) {
    std::printf("  the disk cache is off (ARRAYC_CACHE=0): a new process compiles again\n");
    return;
  }
  std::printf("  disk cache %s: %lld entries, %lld bytes\n", c.dir.c_str(), static_cast<long long>(c.entries),
              static_cast<long long>(c.bytes));
  std::fflush(stdout);
  char self[4096];
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) return;
  self[len] = '\0';
  std::string cmd = "'" + std::string(self) + "' --first-call";  // the path has no quote: it is our build's
  std::unique_ptr<FILE, int (*)(FILE*)> p(popen(cmd.c_str(), "r"), pclose);
  char line[512];
  while (p && std::fgets(line, sizeof line, p.get())) std::fputs(line, stdout);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc > 1 && std::string(argv[1]) == "--first-call") return first_call_only();
    std::printf("arrayc demo: numpy-style expressions, traced and JIT-compiled by arrayc::jit\n");
    std::printf("device: %s;  fused = elementwise chains compiled into one kernel, unfused = one "
                "kernel per op\n",
                arrayc::default_device().str().c_str());
    std::printf("columns: time of the calls, then what arrayc::stats() counted during them\n");

    bool ok = true;
    ok = workload_w1(DType::Float32, 10'000'000, 10) && ok;
    ok = workload_w1(DType::Float64, 10'000'000, 10) && ok;
    ok = workload_w2(1'000'000, 20) && ok;
    second_process();

    std::printf("\n%s\n", ok ? "all results checked: ok" : "SOME RESULTS ARE WRONG (see above)");
    return ok ? 0 : 1;
  } catch (const arrayc::Error& e) {
    std::fprintf(stderr, "arrayc error: %s\n", e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
  }
  return 1;
}
