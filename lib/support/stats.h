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
};
Counters& counters();

}  // namespace arrayc::detail
