// A kernel's iteration space as its calling convention (kernel/kernel.h) passes it, unpacked
// once for both targets: the extents, the reduced range and Mean's finalize flag, and each
// indexed operand's offset and strides, where a stride of kind Zero or Unit is the constant 0
// or 1 and only Any reads its parameter (the specialization on signature). The cpu target reads
// the parameters from its params array, the nvptx target takes them as arguments; both compute
// operand offsets and finish a Mean from here.
#pragma once
#include <llvm/IR/IRBuilder.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "kernel/kernel.h"

namespace arrayc::detail {

// The stride kinds of every indexed operand, by index.
std::vector<const std::vector<StrideKind>*> stride_kinds(const Kernel& k);

struct LoopSpace {
  std::vector<llvm::Value*> extents;  // per loop dim
  llvm::Value* reduce_begin = nullptr;
  llvm::Value* reduce_end = nullptr;
  llvm::Value* finalize = nullptr;
  std::vector<llvm::Value*> offsets;               // per indexed operand
  std::vector<std::vector<llvm::Value*>> strides;  // per indexed operand, per loop dim
  std::vector<llvm::Value*> constants;             // per constant parameter: its i64 bits

  // Reads k's parameters in the order of the calling convention; param(i) gives params[i]
  // (emitting a load, or returning an argument).
  static LoopSpace unpack(llvm::IRBuilder<>& b, const Kernel& k,
                          const std::function<llvm::Value*(int64_t)>& param);

  // Each operand's offset at linear index idx of the space spanned by dims (the last fastest):
  // base[j] plus, for every dim d of dims, idx's coordinate along d times operand j's stride.
  std::vector<llvm::Value*> offsets_at(llvm::IRBuilder<>& b, const std::vector<int>& dims, llvm::Value* idx,
                                       std::vector<llvm::Value*> base) const;

  // A reduction's result r as stored: a Mean divides by count once the range is the whole
  // reduction (finalize != 0); other reductions store r.
  llvm::Value* finish(llvm::IRBuilder<>& b, const Kernel& k, llvm::Value* r, llvm::Value* count) const;
};

}  // namespace arrayc::detail
