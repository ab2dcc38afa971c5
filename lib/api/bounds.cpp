// bounds_info(): what the bounded structures hold now (arrayc/bounds.h).
#include "arrayc/bounds.h"

#include "engine/kernel_cache.h"
#include "support/env.h"
#include "support/stats.h"

namespace arrayc {

BoundsInfo bounds_info() {
  BoundsInfo b;
  b.kernel_cache_entries = detail::kernel_cache_size();
  b.kernel_cache_max = detail::kernel_cache_max_setting();
  b.programs = detail::counters().programs_alive;
  b.auto_eval_nodes = detail::auto_eval_nodes_setting();
  return b;
}

}  // namespace arrayc
