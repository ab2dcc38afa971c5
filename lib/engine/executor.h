// The executor: runs a schedule's steps in order on buffers it allocates, frees each
// intermediate after its last reader, and returns the outputs as Buffer nodes.
#pragma once
#include <vector>

#include "engine/kernel_cache.h"
#include "passes/schedule.h"

namespace arrayc::detail {

// A schedule with its kernels compiled (or found in the cache): ready to run many times.
struct Program {
  Schedule schedule;
  std::vector<const CompiledKernel*> kernels;  // per step on the host; null otherwise
  std::vector<const GpuKernel*> gpu_kernels;   // per step on a GPU; null otherwise
};

Program prepare(Schedule s, const EmitOptions& opts);

// The options a step's kernel is compiled with: the user's, plus streaming (non-temporal) stores
// for an elementwise kernel on the host whose outputs take at least stream_threshold_bytes():
// lines that large are evicted before anyone reads them back, and a plain store reads each line
// before writing it, a third of a copy's memory traffic. prepare and the stage dumps use it.
EmitOptions kernel_options(const KernelStep& ks, const Schedule& s, const EmitOptions& user);
int64_t output_bytes(const KernelStep& ks, const Schedule& s);  // of all its outputs
// ARRAYC_STREAM_BYTES (arrayc::Error if it is not an integer >= 0), else the last-level cache's
// size, else 32 MiB. Read at the first call.
int64_t stream_threshold_bytes();
// Overrides it (tests and benchmarks). Kernels already prepared keep their stores.
void set_stream_threshold_bytes(int64_t bytes);

// The code-generation options the user chose (arrayc::set_fast_math).
EmitOptions user_emit_options();

// The data bound to a jit parameter: contiguous, starting `offset` elements into storage.
struct ParamBinding {
  StorageRef storage;
  int64_t offset = 0;  // in elements of dtype
  DType dtype = DType::Float32;
};

// A product step as the GPU matrix-product kernel sees it (a_addr, b_addr: where its operands
// start, for alignment; 0 when not known).
GemmProblem gemm_problem(const DotStep& d, uintptr_t a_addr, uintptr_t b_addr);

std::vector<NodeRef> run(const Program& p, const std::vector<ParamBinding>& params = {});

}  // namespace arrayc::detail
