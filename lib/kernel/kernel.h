// A Kernel is one compiled unit: a loop nest over an iteration space whose body is a small
// list of scalar instructions. It is specialized on everything that changes the machine code
// (instructions, dtypes, loop rank, and per operand and dimension whether the stride is 0, 1
// or something else) and on nothing else: extents, strides, offsets and pointers are runtime
// parameters, so a new array length reuses the binary. Its text form (str()) is the cache key.
//
// Runtime calling convention (both targets):
//   ptrs[k]      base pointer of memory operand k (inputs first, then outputs)
//   params       [extent_0 .. extent_{rank-1},
//                 reduce_begin, reduce_end, finalize,
//                 then for every indexed operand j: offset_j, stride_j_0 .. stride_j_{rank-1},
//                 then every constant parameter c: its value (an integer's int64, a float's
//                 double, as bits)]
//   [begin, end) the range of linear indices of the parallel space this call computes: the whole
//                iteration space for an elementwise kernel, the outer (kept) dims for a reduction.
// A reduction folds the linear range [reduce_begin, reduce_end) of its reduced dims (the last
// reduce_rank loop dims); with finalize = 1 a Mean divides by the number of reduced elements.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ir/node.h"

namespace arrayc::detail {

enum class StrideKind : uint8_t { Zero, Unit, Any };

// A value the body reads: a memory operand, or one generated from the index alone.
struct KernelLeaf {
  Op op;  // Buffer (memory), Constant, Iota, RandUniform, RandNormal
  DType dtype;
  std::vector<StrideKind> strides;  // per loop dim; empty for Constant
  Scalar value;                     // Constant
  uint64_t seed = 0;                // random leaves (passed at launch as constant parameter `param`)
  int ptr = -1;                     // memory operands: index into ptrs
  int index = -1;                   // indexed operands: which offset/stride block of params
  // Gather (indexing; its instruction's one arg is the index value): `index` is the position
  // view without the gathered axis; the indexed operands aux and aux + 1 have zero strides,
  // and their offsets are the axis's stride and extent in the source.
  int aux = -1;
  std::vector<StrideKind> aux_strides;  // the kinds of aux and aux + 1 (all Zero)
  int param = -1;                   // Constant passed at launch, or a random leaf's seed: which constant parameter
};

// Whether a constant is compiled into the kernel's code rather than passed at launch as a
// parameter, so that a new value (a learning rate, a loop's scale) reuses the binary. Compiled in:
// the values whose code differs. Integers in [-16, 16] (division by a constant, shifts); NaN and
// the infinities; and a float exponent of pow that is a small integer or half (x ** 3 is two
// multiplies and an fma: body_emitter's small_power). Every other float is a parameter, 0 and 1
// included: the simplify pass has already folded where they pay (x * 1, x ** 1).
bool constant_is_inlined(const Scalar& v, bool pow_exponent);
// A constant parameter's value in params.
int64_t constant_param_bits(const Scalar& v);

struct KernelInstr {
  Op op;  // an elementwise op, or Buffer to mean "the value of leaf `leaf`"
  DType dtype;
  std::vector<int> args;  // indices of earlier instructions
  int leaf = -1;  // also set for Gather, with args = {the index}
};

struct KernelOutput {
  int instr;
  DType dtype;
  std::vector<StrideKind> strides;
  int ptr;
  int index;
};

struct Kernel {
  std::string name;  // readable: the ops it fuses, e.g. "fused_gt_exp_mul_sub_where"
  int rank = 0;      // loop dims
  int reduce_rank = 0;
  Op reduce_op = Op::Sum;  // when reduce_rank > 0 (or a full reduction with rank 0 outer dims)
  bool is_reduction = false;
  // Row chains (issue 29): an elementwise kernel over [rows..., row] whose body also holds
  // reductions along the row (instructions whose op is a Reduce op, one arg: its value is that
  // arg folded over the whole row, then finished, as a Mean's division). The calling convention
  // is a reduction's (reduce_rank = 1: [begin, end) are rows, [reduce_begin, reduce_end) the
  // row); each row is walked once per level of nested reductions, then once more to store (the
  // GPU's register path walks registers after one read, codegen/nvptx/ptx_kernel.cpp).
  bool row_chain = false;
  std::vector<KernelLeaf> leaves;
  std::vector<KernelInstr> body;
  std::vector<KernelOutput> outputs;
  int num_ptrs = 0;
  int num_indexed = 0;
  int num_constants = 0;  // constant parameters

  int outer_rank() const { return rank - reduce_rank; }
  // A row chain's reductions in the order they are computed: passes[p] holds the row reductions
  // whose arguments need only those of passes before p.
  std::vector<std::vector<int>> row_passes() const;
  // The instructions that computing `wanted` needs, in a row chain's pass: each marked with its
  // arguments, down to the leaves and the row reductions (whose values are known by then).
  std::vector<bool> instrs_needed(const std::vector<int>& wanted) const;
  // A reduction across memory rows: some load is contiguous along the last kept dim and none
  // along the last reduced one (sum(m, 0) of a row-major m). The host kernel then accumulates a
  // block of outputs row by row, and the executor splits the reduced range between threads.
  bool reduces_across_rows() const;
  int64_t num_params() const { return param_block(num_indexed) + num_constants; }
  // Where indexed operand j's offset sits in the params, its rank strides after it.
  int64_t param_block(int64_t j) const { return rank + 3 + j * (rank + 1); }
  // Where constant parameter c sits in the params.
  int64_t constant_param(int64_t c) const { return param_block(num_indexed) + c; }
  // The text form: every field that changes the binary, nothing else.
  std::string str() const;
};

// Whether the GPU's folds of `reduce` over values of dtype t accumulate in double: float sums and
// means of float32, float16 and bfloat16 (the result rounded once), as the reduction kernels
// (codegen/nvptx/ptx_kernel.cpp) and a product's reduction epilogue (codegen/nvptx/gemm.cpp) do.
inline bool gpu_sums_in_double(Op reduce, DType t) {
  return (reduce == Op::Sum || reduce == Op::Mean) && is_float(t) && t != DType::Float64;
}

// The runtime half of a launch: what the calling convention above passes.
struct LaunchParams {
  std::vector<int64_t> params;
  int64_t parallel_extent = 0;  // the [begin, end) space: product of the outer extents
  int64_t reduce_extent = 0;    // product of the reduced extents
};

}  // namespace arrayc::detail
