// Host float16 speed (issue 28; kernel/half_table.h): the host's run of a kernel through a table
// of its 65536 results, looked up with one vector gather per 16 elements (8 with AVX2).
#pragma once
#include <cstdint>
#include <vector>

#include "backend/host/host_jit.h"
#include "kernel/half_table.h"
#include "kernel/kernel.h"

namespace arrayc::detail {

// Runs k's compiled function fn (of the step whose launch parameters are lp) through a table: fn
// over the 65536 patterns into the table, then the lookup over [0, lp.parallel_extent), on the
// thread pool. `stream`: the output is written with non-temporal stores (where the CPU has AVX2).
void run_half_table(const HalfTable& t, const Kernel& k, KernelFn fn, const std::vector<void*>& ptrs,
                    const LaunchParams& lp, bool stream);

}  // namespace arrayc::detail
