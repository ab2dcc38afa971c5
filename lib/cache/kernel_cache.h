// The in-memory kernel cache. The key is everything that changes the binary: the kernel's text
// form (instructions, dtypes, rank, stride kinds), the target and the emit options.
#pragma once
#include "runtime/host_jit.h"

namespace arrayc::detail {

// The compiled kernel for k on the host: compiled on first use, then shared. Thread-safe.
const CompiledKernel& host_kernel(const Kernel& k, const EmitOptions& opts);

}  // namespace arrayc::detail
