// The schedule: the ordered steps (compiled kernels and library calls) that compute a graph,
// with the buffers they read and write. Built for concrete shapes; the kernels inside are
// specialized on signature only, so schedules of other lengths share their binaries.
#pragma once
#include <string>
#include <variant>
#include <vector>

#include "kernel/kernel.h"
#include "ir/graph.h"
#include "passes/fusion.h"

namespace arrayc::detail {

// Where a memory operand lives: a buffer the graph captured, a jit parameter, or a slot (a
// buffer the schedule allocates for a materialized node).
struct Source {
  enum class Kind { Storage, Param, Slot } kind = Kind::Slot;
  StorageRef storage;  // Storage
  int index = -1;      // Param index or slot index
};

struct Slot {
  DType dtype;
  Shape shape;
  Device device;
};

struct KernelStep {
  Kernel kernel;
  std::vector<Source> inputs;  // memory inputs, ptrs[0 .. inputs.size())
  std::vector<int> outputs;    // slots, ptrs[inputs.size() ..)
  LaunchParams launch;
};

// A strided matrix (or batch of matrices) in memory, for BLAS.
struct MatrixOperand {
  Source src;
  int64_t offset = 0;
  int64_t rows = 0, cols = 0, row_stride = 0, col_stride = 0;
  int64_t batch_stride = 0;
};

struct DotStep {
  DType dtype;
  int64_t batch = 1;  // 1 for a plain 2-D product
  MatrixOperand a, b;
  int output;  // slot, contiguous [batch, m, n]
};

struct Step {
  std::variant<KernelStep, DotStep> op;
  std::string label;        // the kernel's name or "dot"
  std::vector<int> release; // slots whose last reader is this step
};

// How a requested output is read: a strided view of a source.
struct OutputView {
  Source src;
  DType dtype;
  Shape shape;
  int64_t offset = 0;
  std::vector<int64_t> strides;
};

struct Schedule {
  std::vector<Slot> slots;
  std::vector<Step> steps;
  std::vector<OutputView> outputs;
  FusionPlan plan;
};

// Lowers a graph to a schedule: fusion decisions, then one kernel per fused group. Param leaves
// become Param sources (jit); Buffer leaves become Storage sources.
Schedule build_schedule(const Graph& g, const FusionOptions& opts);

// Text of the fused graph: each step with the nodes it computes, its inputs and outputs, and
// the reason every materialized node ends its kernel.
std::string print_schedule(const Schedule& s);

}  // namespace arrayc::detail
