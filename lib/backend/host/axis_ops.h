// Scans and sorts along one axis on the host (ops.def's Axis kind: cumsum, cumprod, sort,
// argsort), over the thread pool. Rows (the other axes) run in parallel; a few long rows are
// split instead: a scan in blocks shared by the threads (each block totalled, then scanned from
// cache with the carry of the blocks before it: the row is read once, and the result depends on
// the block length only), a sort as a parallel LSD radix sort (8-bit digits, a pass skipped when
// every key shares its digit; chunk boundaries depend on the length and the thread count only).
// Results repeat run after run.
#pragma once
#include "kernel/schedule.h"

namespace arrayc::detail {

// `in` points at the step's input element 0 (in_offset applied), `out` at its output slot.
// Memory on the host. (GPUs run kernels of their own: backend/cuda/axis_launch.h.)
void run_axis_step(const AxisStep& a, const void* in, void* out);

}  // namespace arrayc::detail
