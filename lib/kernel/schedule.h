// The schedule: the ordered steps (compiled kernels and library calls) that compute a graph,
// with the buffers they read and write, and the fusion plan they came from. The hand-off from
// the passes (passes/schedule.h builds it) to the engine and the backends. Built for concrete
// shapes; the kernels inside are specialized on signature only, so schedules of other lengths
// share their binaries.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "ir/node.h"
#include "kernel/kernel.h"

namespace arrayc::detail {

// Fusion decisions (passes/fusion.h makes them): which nodes are materialized, with the reason
// for each, and the groups that become kernels.
struct FusionGroup {
  // Rows: an elementwise group that also computes reductions along its last axis whose results
  // it reads back broadcast (a row chain: softmax, layer norm; passes/row_chains.h).
  enum class Kind { Elementwise, Reduce, Dot, Axis, Rows } kind;
  std::vector<NodeRef> roots;  // materialized nodes; several for a multi-output kernel
  // A Dot group with an epilogue: the product computed in the group, whose elementwise
  // consumers (the roots) run on each panel of it while it is in cache, or whose consumers end
  // in a reduction (the root: a reduction epilogue, sum(M * M)). Null otherwise.
  NodeRef product;
};

struct FusionPlan {
  std::vector<NodeRef> order;                      // all nodes, producers first
  std::unordered_map<const Node*, int> group_of;   // roots and the nodes computed inline
  std::unordered_map<const Node*, std::string> root_reason;  // why each root is materialized
  std::vector<FusionGroup> groups;                 // in an order that respects dependencies

  bool is_root(const Node* n) const { return root_reason.count(n) != 0; }
};

// Where a memory operand lives: a buffer the graph captured, a jit parameter, or a slot (a
// buffer the schedule allocates for a materialized node).
struct Source {
  // Product: the product of the DotStep whose epilogue reads it (scratch memory of the step).
  enum class Kind { Storage, Param, Slot, Product } kind = Kind::Slot;
  StorageRef storage;  // Storage
  int index = -1;      // Param index or slot index
};

struct Slot {
  DType dtype;
  Shape shape;
  Device device;
};

// A step's kernel, shared by the copies of the step: the kernel never changes once scheduled,
// and a jit Program resized to a new length (engine/jit_resize.h) copies every step of its class's
// Program. Reads as a `const Kernel&`; members through `->`.
class SharedKernel {
 public:
  SharedKernel() = default;
  SharedKernel(Kernel k) : k_(std::make_shared<const Kernel>(std::move(k))) {}  // NOLINT: implicit
  const Kernel& operator*() const { return *k_; }
  const Kernel* operator->() const { return k_.get(); }
  operator const Kernel&() const { return *k_; }  // NOLINT: implicit

 private:
  std::shared_ptr<const Kernel> k_;
};

struct KernelStep {
  SharedKernel kernel;
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

// How a product is computed, from the structure of its operands (passes/products.h decides).
enum class ProductForm {
  General,  // gemm
  Gram,     // x @ x.T: b is a's transpose; one triangle (syrk on the CPU), mirrored
  MatVec,   // m == 1 or n == 1: gemv
  Skinny,   // CPU, few columns of b (skinny products): the generated kernel of backend/host/skinny.h
};

// A CPU General product of kTiledMinWork to kTiledMaxWork multiply-adds (m n k) runs the generated
// register-tiled kernel where the host takes it (backend/host/tiled.h); there OpenBLAS's packing
// and thread start-up cost more than its kernel saves (docs/blas.md, "Tiled products"). Above
// kTiledMaxWork, a product of kTiledPackedMinOutputs outputs (m n) or more runs the kernel's packed
// path on hosts with 512-bit vectors ("Large products"); one with fewer outputs, OpenBLAS. Decided
// from the step's shapes when it is planned, so that a jit class's new length keeps its schedule.
constexpr int64_t kTiledMinWork = int64_t{1} << 21;
constexpr int64_t kTiledMaxWork = int64_t{1} << 30;
// Hosts with 256-bit vectors (AVX2) take the kernel below this many multiply-adds only.
constexpr int64_t kTiledNarrowMaxWork = int64_t{1} << 22;
constexpr int64_t kTiledPackedMinOutputs = int64_t{1} << 20;
// A batch of general products of more than kTiledBatchMinWork and at most kTiledBatchMaxWork
// multiply-adds each runs the tiled kernel on hosts with 256- or 512-bit vectors, the blocks of
// all its products sharing the pool (OpenBLAS computes such a batch one threaded call a product).
constexpr int64_t kTiledBatchMinWork = int64_t{1} << 16;
constexpr int64_t kTiledBatchMaxWork = int64_t{1} << 27;

// m n k, or INT64_MAX where that overflows.
inline int64_t product_work(int64_t m, int64_t n, int64_t k) {
  int64_t mn = 0, work = 0;
  if (__builtin_mul_overflow(m, n, &mn) || __builtin_mul_overflow(mn, k, &work)) return INT64_MAX;
  return work;
}
// Whether an m x k . k x n product is in the tiled kernel's bounds: from kTiledMinWork
// multiply-adds, and above kTiledMaxWork with kTiledPackedMinOutputs outputs or more.
inline bool tiled_bounds(int64_t m, int64_t n, int64_t k) {
  int64_t work = product_work(m, n, k);
  return work >= kTiledMinWork && (work <= kTiledMaxWork || product_work(m, n, 1) >= kTiledPackedMinOutputs);
}
// The same for each product of a batch: more than kTiledBatchMinWork, at most kTiledBatchMaxWork.
inline bool tiled_batch_bounds(int64_t m, int64_t n, int64_t k) {
  int64_t work = product_work(m, n, k);
  return work > kTiledBatchMinWork && work <= kTiledBatchMaxWork;
}

struct DotStep {
  DType dtype;
  int64_t batch = 1;  // 1 for a plain 2-D product
  MatrixOperand a, b;
  // The operands' dtype: dtype, or float16/bfloat16 read as they are by a GPU product of float32
  // (issue 29; passes/products.h, widened_half_operands).
  DType in_dtype = DType::Float32;
  int output;  // slot, contiguous [batch, m, n]; -1 when an epilogue consumes the product
  ProductForm form = ProductForm::General;
  // Consumers of the product fused into this step: a kernel whose input Source::Kind::Product
  // is the product, contiguous: elementwise over the product's iteration space, or a reduction
  // (Kernel::is_reduction) of elementwise work on it. ptrs: a, b, output (null with an
  // epilogue), then the epilogue's inputs (the product's null) and outputs.
  bool has_epilogue = false;
  KernelStep epilogue;
  // Whether the epilogue reads the product element for element at its own index, so that it
  // can run on each panel of rows as soon as BLAS has computed it.
  bool epilogue_by_rows = false;
};

// Which of d's epilogue inputs are the product: one or more (two where it reads the product in
// two layouts, as p + p.T does); an internal error when none is.
std::vector<int> product_inputs(const DotStep& d);

// A scan or sort along one axis (ops.def's Axis kind): the input viewed with that axis last,
// rows = the other axes. Input element (row r, i) sits at in_offset + row_offset(r, in_strides)
// + i * in_strides.back() of its source; the output slot is contiguous in the node's shape, and
// out_strides are its strides in the same axis-last order.
struct AxisStep {
  Op op;
  DType in_dtype, out_dtype;
  Source src;
  int64_t in_offset = 0;
  Shape shape;  // axis last
  std::vector<int64_t> in_strides, out_strides;
  int output;
  // A sparse scatter (ops.def's ScatterSet/ScatterAdd; issue 28): shape and in_strides are x's
  // own (not axis-last), and `more` holds the index and update operands, each a strided view of
  // memory in its node's dim order. Empty for scans and sorts.
  struct Operand {
    Source src;
    DType dtype;
    int64_t offset = 0;
    Shape shape;
    std::vector<int64_t> strides;
  };
  std::vector<Operand> more;
};

struct Step {
  std::variant<KernelStep, DotStep, AxisStep> op;
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

// The device a step runs on: that of its (first) output.
inline Device step_device(const Step& step, const Schedule& s) {
  if (const auto* ks = std::get_if<KernelStep>(&step.op)) return s.slots[ks->outputs.at(0)].device;
  if (const auto* as = std::get_if<AxisStep>(&step.op)) return s.slots[as->output].device;
  const DotStep& d = std::get<DotStep>(step.op);
  return s.slots[d.has_epilogue ? d.epilogue.outputs.at(0) : d.output].device;
}

}  // namespace arrayc::detail
