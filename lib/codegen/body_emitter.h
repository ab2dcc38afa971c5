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
};

class BodyEmitter {
 public:
  BodyEmitter(llvm::IRBuilder<>& b, const Kernel& k, const EmitOptions& opts)
      : b_(b), k_(k), opts_(opts) {}

  llvm::Type* value_type(DType t) const;   // i1 for bool
  llvm::Type* memory_type(DType t) const;  // i8 for bool

  // Emits the body for one element: ptrs are the memory operands' base pointers, offsets the
  // element offset of each indexed operand. Returns the value of every instruction.
  std::vector<llvm::Value*> emit(const std::vector<llvm::Value*>& ptrs,
                                 const std::vector<llvm::Value*>& offsets);
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

 private:
  std::vector<llvm::Value*> constants_;  // by constant parameter
  llvm::Value* op(const KernelInstr& in, const std::vector<llvm::Value*>& args);
  llvm::Value* leaf(const KernelLeaf& lf, const std::vector<llvm::Value*>& ptrs, llvm::Value* offset);
  llvm::Value* random(const KernelLeaf& lf, llvm::Value* index);
  llvm::Value* int_pow(DType t, llvm::Value* base, llvm::Value* exp);
  llvm::Value* small_power(llvm::Value* x, llvm::Value* exp);
  llvm::Value* math(int fn, const std::vector<llvm::Value*>& args);
  bool sincos(size_t i, std::vector<llvm::Value*>& v);

  llvm::IRBuilder<>& b_;
  const Kernel& k_;
  EmitOptions opts_;
  bool packed_sincos_ = false;
};

}  // namespace arrayc::detail
