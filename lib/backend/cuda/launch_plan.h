// How a PTX kernel (codegen/nvptx/ptx_kernel.h) is launched: the grid, the split of a long
// reduction into two launches, and cuLaunchKernel's argument array. Launch policy, kept out of
// the code generator: the CUDA backend decides it when a Program is prepared.
#pragma once
#include <cstdint>
#include <vector>

#include "codegen/nvptx/ptx_kernel.h"
#include "kernel/kernel.h"

namespace arrayc::detail {

// cuLaunchKernel's kernelParams for the convention above. Owns the values it points at, so it
// must outlive the launch call (not the kernel: the driver copies the values at launch).
class PtxArgs {
 public:
  PtxArgs(const Kernel& k, const std::vector<void*>& ptrs, const std::vector<int64_t>& params, int64_t begin,
          int64_t end, int64_t chunk_stride = 0, int64_t mean_count = 0);
  PtxArgs(const PtxArgs&) = delete;
  PtxArgs& operator=(const PtxArgs&) = delete;
  void** data() { return args_.data(); }

 private:
  std::vector<void*> ptrs_;
  std::vector<int64_t> values_;
  std::vector<void*> args_;
};

// Launch shape: block 256; elementwise grid = min(ceil(n / (256 * elements_per_thread)),
// 32 * multiprocessors); reductions one block per output up to 32 * multiprocessors, and
// chunks > 1 when there are too few outputs to fill the GPU and enough elements per output.
// split: the step runs as a split reduction (split_reduction): chunks > 1, or a single-output
// reduction whose work needs rounds (gpu_round_work below), with chunks = 1 then.
struct PtxLaunchConfig {
  unsigned grid = 1, block = 256;
  int64_t chunks = 1;
  bool split = false;
};
PtxLaunchConfig ptx_launch_config(const Kernel& k, const PtxKernel& p, const LaunchParams& lp, int multiprocessors);

// A reduction with few outputs and long reduced ranges, in two launches:
//   1. k with grid_y = chunks, its output pointer replaced by a scratch buffer of
//      partial_bytes (contiguous [chunks, outputs]), params = first, chunk_stride = outputs,
//      mean_count = 0 (first has finalize = 0: Mean's partials are sums);
//   2. combine (a reduction of the partials; ptrs = {scratch, the real output}) with
//      params = second, chunk_stride = 0, mean_count = mean_count, grid_y = 1.
// Requires the output to be a contiguous buffer (schedule slots are).
struct ReductionSplit {
  int64_t chunks = 1, outputs = 1;
  size_t partial_bytes = 0;
  LaunchParams first;
  Kernel combine;
  LaunchParams second;
  int64_t mean_count = 0;
};
ReductionSplit split_reduction(const Kernel& k, const LaunchParams& lp, int64_t chunks);

// A reduction whose work (outputs x reduced indices) passes gpu_round_work() runs as a split
// reduction in rounds of at most that much work: each round's partials fold into a running
// result, and arrayc::interrupt() is checked after each round (one GPU launch cannot be stopped:
// sum(arange(1e15)) on a GPU was one launch of minutes). The default, 2^34, is some tens of
// milliseconds of a cheap body on an H100. Settable for tests.
int64_t gpu_round_work();
void set_gpu_round_work(int64_t work);
// The reduced indices of one round for a reduction of `outputs` outputs: at least 1.
int64_t round_length(int64_t outputs);

}  // namespace arrayc::detail
