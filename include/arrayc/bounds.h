// Bounded memory and compile time (issue 26; docs/bounds.md). What arrayc keeps grows to a
// bound, not with the length of a program or of a loop:
//  - the in-memory kernel cache keeps at most ARRAYC_KERNEL_CACHE_MAX compiled kernels (default
//    4096), dropping the least recently used (stats().kernel_cache_evictions);
//  - a jit function keeps its most recently used Programs, one per input shape (arrayc/jit.h);
//  - a lazy array whose graph reaches ARRAYC_AUTO_EVAL_NODES nodes (default 100000) is
//    evaluated by the op that builds it (stats().auto_evals), except while jit traces;
//  - fusion ends a kernel at an estimated compile cost (1024 adds, or 128 transcendentals), so
//    that compile time grows linearly with a program's length.
#pragma once
#include <cstdint>

namespace arrayc {

struct BoundsInfo {
  int64_t kernel_cache_entries = 0;  // compiled kernels the in-memory cache holds now
  int64_t kernel_cache_max = 0;      // its bound (ARRAYC_KERNEL_CACHE_MAX)
  int64_t programs = 0;              // compiled Programs alive (kept by jit functions, or running)
  int64_t auto_eval_nodes = 0;       // ARRAYC_AUTO_EVAL_NODES (0: never)
};
BoundsInfo bounds_info();

}  // namespace arrayc
