// Scans, sorts and sparse scatters (ops.def's Axis kind) on a GPU: the launches of the kernels of
// codegen/nvptx/axis_kernels.h for one AxisStep.
//
// - cumsum/cumprod: reduce-then-scan over tiles of 4096 elements of a row; a row of several
//   tiles has its tiles' totals scanned first (the same scan, recursively, over [rows, tiles]),
//   whose result carries into each tile. Rows of at most 32 elements are scanned a thread each.
//   Reads the input twice and writes the output once.
// - sort/argsort: the input gathered into a contiguous buffer (with positions when argsort or
//   several rows), one histogram pass over every key digit, scanned on the device into the bins'
//   starts (integer keys: also read back, so that digits every key shares are skipped), then a
//   onesweep pass per digit (rank, look back, stable scatter); several rows are then sorted by
//   more digit passes over the row number (a stable LSD sort over (row, key)); finally the sorted
//   buffer to the strided output. ARRAYC_SORT_TUNE / ARRAYC_SORT_PROFILE: docs/env_vars.md.
// - x.at(indices).set/add (a step with AxisStep::more): a copy of x, then (set) each row's last
//   update marked with an atomic max, and a thread per updated element (atomic adds).
// Scratch memory comes from the device's caching allocator and goes back on the stream.
#pragma once
#include <functional>
#include <memory>
#include <string>

#include "backend/backend.h"
#include "backend/cuda/cuda_driver.h"
#include "codegen/nvptx/axis_kernels.h"
#include "kernel/schedule.h"

namespace arrayc::detail {

// The sort pass kernel's tuning, from ARRAYC_SORT_TUNE=RANK/ITEMS[/bN] (RANK match or ballot;
// ITEMS 1 to 32 elements a thread; bN: registers for N blocks an SM, 1 to 8, else no bound).
// Empty: ballot/16/b3, the fastest measured on an H100 (docs/cuda.md). arrayc::Error otherwise.
struct SortTune {
  bool ballot = true;
  int items = 16, min_blocks = 3;
};
SortTune parse_sort_tune(const std::string& setting);

// Compiles (through the kernel cache) and loads one kernel on the step's device.
using AxisKernelLoader = std::function<const cuda::Function&(const AxisKernel&)>;

// The kernels the step needs (each once), in the order it first launches them.
std::vector<AxisKernel> gpu_axis_kernels(const AxisStep& a);

// The launch of a step on GPU `dev`; its kernels are loaded here, when planned. Null when the
// step has no elements.
std::unique_ptr<Launch> plan_gpu_axis(int dev, const AxisStep& a, int multiprocessors, const AxisKernelLoader& load);

}  // namespace arrayc::detail
