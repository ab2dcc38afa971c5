// The sparse scatter on the host (ops.def's ScatterSet/ScatterAdd; issue 28): x.at(indices)
// .set(v) / .add(v) in O(k) after a copy of x, not the dense O(rows x k) compare.
#pragma once
#include <vector>

#include "kernel/schedule.h"

namespace arrayc::detail {

// ptrs: x's element 0 (offset applied), the output slot (contiguous, x's shape), the index
// operand and the update operand (offsets applied); the views are in the step (AxisStep::more).
// The output is x; then, for j in order, row idx[j] (negative from the end; outside [-n, n)
// skipped) is set to, or increased by, v[j]. Rows are split among the threads: each thread walks
// every index and applies those in its rows, in index order, so the result is the sequential one
// (last update wins for set; adds accumulate in index order) at any thread count.
void run_scatter_step(const AxisStep& a, const std::vector<void*>& ptrs);

}  // namespace arrayc::detail
