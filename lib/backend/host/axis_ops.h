// Scans and sorts along one axis on the host (ops.def's Axis kind: cumsum, cumprod, sort,
// argsort), over the thread pool. Rows (the other axes) run in parallel; a few long rows are
// split instead: a scan in two passes (each chunk's total, then each chunk's scan from the
// carry of the chunks before it), a sort as a parallel LSD radix sort (8-bit digits, a pass
// skipped when every key shares its digit). Chunk boundaries depend on the length and the
// thread count only, so results repeat run after run.
#pragma once
#include "kernel/schedule.h"

namespace arrayc::detail {

// `in` points at the step's input element 0 (in_offset applied), `out` at its output slot.
// Memory on the host. (GPUs run kernels of their own: backend/cuda/axis_launch.h.)
void run_axis_step(const AxisStep& a, const void* in, void* out);

}  // namespace arrayc::detail
