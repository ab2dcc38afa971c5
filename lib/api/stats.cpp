// stats() and reset_stats(): the engine's counters (support/stats.h) as the public API shows them.
#include "arrayc/jit.h"
#include "support/stats.h"

namespace arrayc {
Stats stats() {
  auto& c = detail::counters();
  return Stats{c.traces.load(), c.compiles.load(), c.cache_hits.load(), c.kernel_launches.load(),
               static_cast<double>(c.compile_us.load()) / 1000.0};
}

void reset_stats() {
  auto& c = detail::counters();
  c.traces = 0;
  c.compiles = 0;
  c.cache_hits = 0;
  c.kernel_launches = 0;
  c.compile_us = 0;
}

}  // namespace arrayc
