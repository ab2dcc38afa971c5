// stats() and reset_stats(): the engine's counters (support/stats.h) as the public API shows them;
// disk_cache_info() and clear_disk_cache().
#include "arrayc/jit.h"
#include "engine/disk_cache.h"
#include "support/stats.h"

namespace arrayc {

Stats stats() {
  auto& c = detail::counters();
  Stats s;
  s.traces = c.traces;
  s.compiles = c.compiles;
  s.cache_hits = c.cache_hits;
  s.kernel_launches = c.kernel_launches;
  s.compile_ms = static_cast<double>(c.compile_us) / 1000.0;
  s.disk_hits = c.disk_hits;
  s.disk_misses = c.disk_misses;
  s.disk_writes = c.disk_writes;
  s.disk_evictions = c.disk_evictions;
  s.disk_bad_entries = c.disk_bad_entries;
  s.disk_load_ms = static_cast<double>(c.disk_load_us) / 1000.0;
  s.plans = c.plans;
  s.resizes = c.resizes;
  s.probe_traces = c.probe_traces;
  s.kernel_cache_evictions = c.kernel_cache_evictions;
  s.auto_evals = c.auto_evals;
  return s;
}

void reset_stats() {
  auto& c = detail::counters();
  for (auto* counter : {&c.traces, &c.compiles, &c.cache_hits, &c.kernel_launches, &c.compile_us, &c.disk_hits,
                        &c.disk_misses, &c.disk_writes, &c.disk_evictions, &c.disk_bad_entries, &c.disk_load_us,
                        &c.plans, &c.resizes, &c.probe_traces,
                        &c.kernel_cache_evictions, &c.auto_evals})
    *counter = 0;
}

DiskCacheInfo disk_cache_info() {
  DiskCacheInfo info;
  detail::DiskCache* c = detail::process_disk_cache();
  if (!c) return info;
  info.enabled = true;
  info.writable = c->writable();
  info.dir = c->dir();
  info.max_bytes = c->max_bytes();
  detail::DiskCache::Usage u = c->usage();
  info.entries = u.entries;
  info.bytes = u.bytes;
  return info;
}

void clear_disk_cache() {
  if (detail::DiskCache* c = detail::process_disk_cache()) c->clear();
}

}  // namespace arrayc
