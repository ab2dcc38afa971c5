// The op-to-LLVM-IR lowering, written once. BodyEmitter turns a Kernel's instructions into IR
// at given operand offsets; each target (codegen/cpu/cpu_kernel.h, codegen/nvptx/ptx_kernel.h)
// wraps it in its own loop or thread structure.
#pragma once
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <vector>

#include "kernel/kernel.h"

namespace arrayc::detail {

struct EmitOptions {
  enum class Target { Cpu, Nvptx } target = Target::Cpu;
  bool fast_math = false;  // the vector math library's fast mode (see docs/math_accuracy.md)
  // Host only: vector stores bypass the caches (non-temporal) for the outputs that
  // streamed_outputs (codegen/cpu/host_policy.h) names, when the outputs are too large to stay
  // cached (see host_options in backend/host/host_backend.cpp).
  bool stream_stores = false;
  // Host only: the CPU that the kernel's functions are compiled for, as LLVM's "target-cpu" and
  // "target-features" (set by the host JIT; empty: the host's), which the vector math follows.
  std::string cpu, cpu_features;
  // Host only, host gather bandwidth (issue 28): with a gather whose index is read from memory
  // along the row (prefetched_gather, codegen/cpu/gather_prefetch.h), the source element this
  // many elements ahead is prefetched into L2 (0: none).
  int64_t gather_prefetch = 0;
};

class BodyEmitter {
 public:
  BodyEmitter(llvm::IRBuilder<>& b, const Kernel& k, const EmitOptions& opts)
      : b_(b), k_(k), opts_(opts) {}

  llvm::Type* value_type(DType t) const;   // i1 for bool; float for 16-bit floats on the host
  llvm::Type* memory_type(DType t) const;  // i8 for bool; half, and i16 for bfloat16, on the host

  // Emits the body for one element: ptrs are the memory operands' base pointers, offsets the
  // element offset of each indexed operand. Returns the value of every instruction.
  std::vector<llvm::Value*> emit(const std::vector<llvm::Value*>& ptrs,
                                 const std::vector<llvm::Value*>& offsets);
  // A row chain's pass (Kernel::row_chain): the row reductions' values are `known` (null where
  // not computed yet), and only the instructions that `needed` marks are emitted (all if empty).
  // Other instructions with a known value (computed for the same element by an earlier pass)
  // take it instead of being emitted again.
  std::vector<llvm::Value*> emit(const std::vector<llvm::Value*>& ptrs, const std::vector<llvm::Value*>& offsets,
                                 const std::vector<llvm::Value*>& known, const std::vector<bool>& needed);
  llvm::Value* load(DType t, llvm::Value* ptr, llvm::Value* offset);
  void store(DType t, llvm::Value* v, llvm::Value* ptr, llvm::Value* offset);

  // The reduction monoid: its identity and its combining step.
  llvm::Value* identity(Op reduce, DType t);
  llvm::Value* combine(Op reduce, DType t, llvm::Value* acc, llvm::Value* v);

  llvm::Value* cast(llvm::Value* v, DType from, DType to);

  // The constant parameters' values (LoopSpace::constants, as i64 bits), converted here, at the
  // builder's point (the kernel's entry), to the values the body uses.
  void set_constants(const std::vector<llvm::Value*>& bits);

  // Whether the body so far called the host's packed sincos (vmath.h), whose loops need their
  // vector width given explicitly.
  bool packed_sincos() const { return packed_sincos_; }
  // Whether the loop should be given 16 float lanes: the packed sincos, or 16-bit floats on the
  // host (whose conversions the vectorizer's cost model prices so that it picks 4 lanes, half
  // of float32's speed where 16 lanes run W8 at float32's).
  bool wants_float_lanes() const { return packed_sincos_ || host_half_; }

 private:
  std::vector<llvm::Value*> constants_;  // by constant parameter
  llvm::Value* op(const KernelInstr& in, const std::vector<llvm::Value*>& args);
  // One op on values of result dtype t and operand dtype at (neither a 16-bit float on the host).
  llvm::Value* scalar_op(Op op, DType t, DType at, const std::vector<llvm::Value*>& args);
  // 16-bit floats (body_emitter.cpp).
  llvm::Value* widen_half(llvm::Value* v, DType t);
  llvm::Value* half_bits(llvm::Value* v, DType t);
  llvm::Value* round_half(llvm::Value* x, DType t);
  llvm::Value* half_to_f32(llvm::Value* v, DType t);
  llvm::Value* double_to_f32_odd(llvm::Value* x);
  llvm::Value* float_min_max(bool max, llvm::Value* a, llvm::Value* b);  // numpy's rule
  llvm::Value* leaf(const KernelLeaf& lf, const std::vector<llvm::Value*>& ptrs, llvm::Value* offset);
  llvm::Value* random(const KernelLeaf& lf, llvm::Value* index);
  llvm::Value* gather(const KernelLeaf& lf, const std::vector<llvm::Value*>& ptrs,
                      const std::vector<llvm::Value*>& offsets, llvm::Value* index, DType index_dtype);
  llvm::Value* int_pow(DType t, llvm::Value* base, llvm::Value* exp);
  llvm::Value* small_power(llvm::Value* x, llvm::Value* exp);
  llvm::Value* math(int fn, const std::vector<llvm::Value*>& args);
  // The numpy math ops (issue 28; body_emitter_math.cpp); nullptr for other ops.
  llvm::Value* numpy_op(Op op, DType operand, const std::vector<llvm::Value*>& args);
  bool sincos(size_t i, std::vector<llvm::Value*>& v);

  llvm::IRBuilder<>& b_;
  const Kernel& k_;
  EmitOptions opts_;
  bool packed_sincos_ = false;
  bool host_half_ = false;
};

}  // namespace arrayc::detail
