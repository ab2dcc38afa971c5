#include "backend/host/blas_config.h"

#include <cblas.h>
#include <cpuid.h>
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "arrayc/error.h"
#include "backend/host/thread_pool.h"
#include "support/env.h"

namespace arrayc::detail {
namespace {

// ---- The CPU ------------------------------------------------------------------------------------

bool cpuid_bit(unsigned leaf, unsigned sub, int reg, int bit) {
  unsigned r[4] = {0, 0, 0, 0};
  if (!__get_cpuid_count(leaf, sub, &r[0], &r[1], &r[2], &r[3])) return false;
  return (r[reg] >> bit) & 1;
}
bool has_avx512() {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512cd");
}
bool has_avx512_bf16() { return has_avx512() && cpuid_bit(7, 1, 0, 5); }  // leaf 7.1 eax bit 5
bool has_amx() { return cpuid_bit(7, 0, 3, 24); }                          // leaf 7.0 edx bit 24: AMX-TILE
bool has_avx2() { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }
bool has_avx() { return __builtin_cpu_supports("avx"); }

// OpenBLAS's x86-64 cores that arrayc may switch to, each with what the CPU must have to run it
// (OpenBLAS runs whatever it is told, and an unknown name makes it exit).
struct Core {
  const char* name;
  bool (*runs)();
};
const Core kCores[] = {
    {"Sandybridge", has_avx}, {"Haswell", has_avx2},        {"Zen", has_avx2},
    {"SkylakeX", has_avx512}, {"Cooperlake", has_avx512_bf16},
};

// Where OpenBLAS's own pick is measured to be slower than another core on a CPU: docs/blas.md.
struct Rule {
  const char* picked;  // OpenBLAS's choice
  bool (*cpu)();
  const char* use;
  const char* why;
};
const Rule kRules[] = {
    {"Cooperlake", has_amx, "SkylakeX",
     "OpenBLAS 0.3.21 runs Sapphire Rapids (AMX) as Cooperlake; SkylakeX's kernels measured 3.9x faster on W4 "
     "there (docs/blas.md)"},
    {"Prescott", has_avx512, "SkylakeX",
     "OpenBLAS 0.3.21 runs an AVX-512 Xeon whose CPUID hides its model (a VM's 'Intel Xeon Processor') "
     "as Prescott (SSE3); SkylakeX's kernels measured 3.8x faster on W4 and 4.5x on W5 there (docs/blas.md)"},
    {"Prescott", has_avx2, "Haswell",
     "OpenBLAS 0.3.21 runs an AVX2 CPU whose CPUID hides its model as Prescott (SSE3); Haswell's kernels "
     "use AVX2 and FMA"},
};

// ---- OpenBLAS's core selection ------------------------------------------------------------------

// A function that only some builds of OpenBLAS export; null when this one does not.
template <typename F>
F optional_symbol(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
}

using VoidFn = void (*)();
struct Dynamic {
  VoidFn quit = nullptr, init = nullptr;  // null: not a DYNAMIC_ARCH build
};
const Dynamic& dynamic() {
  static const Dynamic d = [] {
    Dynamic r;
    r.quit = optional_symbol<VoidFn>("gotoblas_dynamic_quit");
    r.init = optional_symbol<VoidFn>("gotoblas_dynamic_init");
    if (!r.quit || !r.init) r = Dynamic{};
    return r;
  }();
  return d;
}

std::string corename() { return openblas_get_corename(); }

// ---- OpenBLAS's idle threads --------------------------------------------------------------------

// OpenBLAS's pthread server keeps each idle worker spinning (sched_yield in a loop) for 2^28 TSC
// cycles, about 0.1 s, after it loads and after every call, before it sleeps. arrayc's pool runs
// its jobs on the same cores meanwhile, and a job whose task a spinner delays takes up to twice as
// long (a task that waits is one the others must take on after theirs): the tiled product of
// 256x784x256 took 1.5 ms instead of 0.73 on the 2-core VM, W9's layer 0.33-0.46 ms instead of
// 0.13-0.17 on the 16-core Xeon, and with calls alternating with OpenBLAS's, the Xeon's tiled
// products ran 1.3 to 8 times slower while the workers spun (docs/blas.md, "OpenBLAS's idle
// threads"). So arrayc has them sleep at once (2^4 cycles, the least OpenBLAS takes), unless
// OPENBLAS_THREAD_TIMEOUT or GOTO_THREAD_TIMEOUT says otherwise. The price: each BLAS call wakes
// its workers one by one, 0-35% of a call of 0.3-1.5 ms alternating with arrayc's jobs on the
// Xeon, nothing measurable on the 2-core VM. OpenBLAS 0.3.21 reads the setting from its
// environment (openblas_read_env) and uses it when its server starts (blas_thread_init), which
// arrayc restarts once, before its first parallel job.
constexpr int kIdleSpinLog2 = 4;

std::string g_idle;  // BlasInfo::idle_threads

std::string quiet_idle_threads() {
  const char* user = std::getenv("OPENBLAS_THREAD_TIMEOUT") ? "OPENBLAS_THREAD_TIMEOUT"
                     : std::getenv("GOTO_THREAD_TIMEOUT")   ? "GOTO_THREAD_TIMEOUT"
                                                            : nullptr;
  if (user) return std::string("as ") + user + " says";
  if (openblas_get_parallel() != 1) return "not applicable: this OpenBLAS does not run its own thread server";
  auto read_env = optional_symbol<void (*)()>("openblas_read_env");
  auto timeout = optional_symbol<int (*)()>("openblas_thread_timeout");  // the setting read, 0 if none
  auto shutdown = optional_symbol<int (*)()>("blas_thread_shutdown_");
  auto init = optional_symbol<int (*)()>("blas_thread_init");
  if (!read_env || !timeout || !shutdown || !init)
    return "OpenBLAS's own (2^28 cycles): this OpenBLAS cannot restart its server with another";
  setenv("OPENBLAS_THREAD_TIMEOUT", std::to_string(kIdleSpinLog2).c_str(), 1);
  read_env();
  unsetenv("OPENBLAS_THREAD_TIMEOUT");  // read: not passed on to child processes
  if (timeout() != kIdleSpinLog2) return "OpenBLAS's own (2^28 cycles): this OpenBLAS did not take another";
  shutdown();  // no BLAS call is in flight: arrayc has made none yet
  init();
  return "at once (2^" + std::to_string(kIdleSpinLog2) + " cycles, arrayc's choice; OpenBLAS's own is 2^28, about 0.1 s)";
}

std::mutex g_mutex;  // guards the state below and every switch
BlasInfo g_info;
std::string g_loaded_core;           // OpenBLAS's pick when it was loaded
BlasInfo g_default;                  // arrayc's choice, before any set_blas_core
std::atomic<bool> g_configured{false};
std::atomic<int> g_threads_fixed{0};  // ARRAYC_BLAS_THREADS or set_blas_thread_count, 0 when neither
std::atomic<bool> g_was_fixed{false};  // a fixed count was applied: undo it when it goes

// Re-runs OpenBLAS's selection with OPENBLAS_CORETYPE = core ("" for its own detection). The
// variable is restored afterwards.
void switch_core(const std::string& core) {
  const char* old = std::getenv("OPENBLAS_CORETYPE");
  std::string saved = old ? old : "";
  if (core.empty()) unsetenv("OPENBLAS_CORETYPE");
  else setenv("OPENBLAS_CORETYPE", core.c_str(), 1);
  dynamic().quit();
  dynamic().init();
  if (old) setenv("OPENBLAS_CORETYPE", saved.c_str(), 1);
  else unsetenv("OPENBLAS_CORETYPE");
}

const Core* find_core(const std::string& name) {
  for (const Core& c : kCores)
    if (strcasecmp(c.name, name.c_str()) == 0) return &c;
  return nullptr;
}

std::string core_names() {
  std::string s;
  for (const Core& c : kCores) s += std::string(s.empty() ? "" : ", ") + c.name;
  return s;
}

// Checks that `name` is a core this OpenBLAS can switch to here; returns its spelling.
std::string checked_core(const std::string& name, const char* what) {
  const Core* c = find_core(name);
  if (!c)
    throw Error(std::string(what) + " must be 'openblas', " + (std::strcmp(what, "set_blas_core") == 0 ? "'default', " : "") +
                "or one of " + core_names() + ", got '" + name + "'");
  if (!dynamic().init)
    throw Error(std::string(what) + "=" + name + ": this OpenBLAS (" + openblas_get_config() +
                ") is built for one core and cannot switch");
  if (!c->runs())
    throw Error(std::string(what) + "=" + name + ": this CPU lacks the instructions OpenBLAS's " + c->name +
                " kernels use");
  return c->name;
}

void choose_core_locked() {
  g_loaded_core = corename();
  g_info.config = openblas_get_config();
  g_info.detected_core = g_loaded_core;
  std::string setting = blas_core_setting();
  if (!setting.empty() && strcasecmp(setting.c_str(), "openblas") != 0) {
    std::string core = checked_core(setting, "ARRAYC_BLAS_CORE");
    switch_core(core);
    g_info.core_reason = "ARRAYC_BLAS_CORE";
  } else if (!setting.empty()) {
    g_info.core_reason = "OpenBLAS's own choice (ARRAYC_BLAS_CORE=openblas)";
  } else if (std::getenv("OPENBLAS_CORETYPE")) {
    g_info.core_reason = "OPENBLAS_CORETYPE";
  } else if (!dynamic().init) {
    g_info.core_reason = "built into this OpenBLAS";
  } else {
    g_info.core_reason = "OpenBLAS's own choice";
    for (const Rule& r : kRules)
      if (g_loaded_core == r.picked && r.cpu()) {
        switch_core(r.use);
        g_info.core_reason = r.why;
        break;
      }
  }
  g_info.core = corename();
  g_default = g_info;
  if (std::optional<int64_t> t = blas_threads_setting()) g_threads_fixed = static_cast<int>(*t);
}

}  // namespace

void quiet_blas_idle_threads() {
  static std::once_flag once;
  std::call_once(once, [] { g_idle = quiet_idle_threads(); });
}

void configure_blas() {
  quiet_blas_idle_threads();
  if (!g_configured.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!g_configured.load(std::memory_order_relaxed)) {
      choose_core_locked();
      g_configured.store(true, std::memory_order_release);
    }
  }
  // Unless a count is fixed, OpenBLAS runs the pool's count (at most the CPUs), which the pool
  // sets when it starts or changes (thread_pool.cpp); a fixed count is restored after that.
  int pool = num_threads();
  int fixed = g_threads_fixed.load(std::memory_order_relaxed);
  if (fixed) {
    if (openblas_get_num_threads() != fixed) openblas_set_num_threads(fixed);
    g_was_fixed.store(true, std::memory_order_relaxed);
  } else if (g_was_fixed.exchange(false, std::memory_order_relaxed)) {
    openblas_set_num_threads(std::min(pool, openblas_get_num_procs()));
  }
}

std::vector<std::string> blas_core_candidates() {
  std::vector<std::string> out;
  if (!dynamic().init) return out;
  for (const Core& c : kCores)
    if (c.runs()) out.push_back(c.name);
  return out;
}

void set_blas_core(const std::string& core) {
  configure_blas();
  std::lock_guard<std::mutex> lock(g_mutex);
  if (strcasecmp(core.c_str(), "default") == 0) {
    if (dynamic().init) switch_core(g_default.core);
    g_info = g_default;
    return;
  }
  if (strcasecmp(core.c_str(), "openblas") == 0) {
    if (dynamic().init) switch_core(g_loaded_core);
    g_info.core_reason = "set_blas_core(openblas)";
  } else {
    switch_core(checked_core(core, "set_blas_core"));
    g_info.core_reason = "set_blas_core";
  }
  g_info.core = corename();
}

void set_blas_thread_count(int threads) {
  configure_blas();
  std::lock_guard<std::mutex> lock(g_mutex);
  g_threads_fixed = threads > 0 ? threads : static_cast<int>(blas_threads_setting().value_or(0));
  configure_blas();
}

}  // namespace arrayc::detail

namespace arrayc {

BlasInfo blas_info() {
  detail::configure_blas();
  std::lock_guard<std::mutex> lock(detail::g_mutex);
  BlasInfo info = detail::g_info;
  info.threads = openblas_get_num_threads();
  info.idle_threads = detail::g_idle;
  info.threads_reason = detail::g_threads_fixed ? "ARRAYC_BLAS_THREADS"
                                                : "the thread pool's, at most the CPUs (ARRAYC_NUM_THREADS)";
  return info;
}

std::string BlasInfo::str() const {
  return config + "; core " + core + " (" + core_reason + (core != detected_core ? "; OpenBLAS chose " + detected_core : "") +
         "); " + std::to_string(threads) + " threads (" + threads_reason + "); idle threads sleep " + idle_threads;
}

}  // namespace arrayc
