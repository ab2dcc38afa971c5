// The counters behind arrayc::stats(): bumped by the cache, the executor and jit.
#pragma once
#include <atomic>
#include <cstdint>

namespace arrayc::detail {

struct Counters {
  std::atomic<int64_t> traces{0};
  std::atomic<int64_t> compiles{0};
  std::atomic<int64_t> cache_hits{0};
  std::atomic<int64_t> kernel_launches{0};
  std::atomic<int64_t> compile_us{0};
  std::atomic<int64_t> disk_hits{0};        // binaries loaded from the disk cache
  std::atomic<int64_t> disk_misses{0};      // units the disk cache did not have
  std::atomic<int64_t> disk_writes{0};
  std::atomic<int64_t> disk_evictions{0};
  std::atomic<int64_t> disk_bad_entries{0}; // corrupt, truncated or foreign entries, recompiled
  std::atomic<int64_t> disk_load_us{0};
  // jit's new-length path (engine/jit_resize.h)
  std::atomic<int64_t> plans{0};         // Programs prepared: scheduled, every step planned
  std::atomic<int64_t> resizes{0};       // jit Programs resized to a new length instead
  std::atomic<int64_t> probe_traces{0};  // runs of a jitted function at probe lengths
  // bounded memory (issue 26)
  std::atomic<int64_t> kernel_cache_evictions{0};
  std::atomic<int64_t> auto_evals{0};
  std::atomic<int64_t> programs_alive{0};  // a gauge, not reset: Programs that exist now
};
Counters& counters();

// A member of Program that counts the Programs alive (Counters::programs_alive).
struct ProgramCount {
  ProgramCount() { counters().programs_alive++; }
  ~ProgramCount() { counters().programs_alive--; }
  ProgramCount(const ProgramCount&) = delete;
  ProgramCount& operator=(const ProgramCount&) = delete;
};

}  // namespace arrayc::detail
