// Control flow for generated kernels, shared by the code generators: a counted loop and an
// if/else, emitted at the builder's insert point (which ends up after them).
#pragma once
#include <llvm/IR/IRBuilder.h>

#include <functional>
#include <initializer_list>
#include <utility>

namespace arrayc::detail {

// for (i = start; i < end; i += step) body(i), with signed i64 compares. Returns the latch
// branch, for loop metadata (unrolling hints).
llvm::BranchInst* emit_loop(llvm::IRBuilder<>& b, llvm::Value* start, llvm::Value* end, llvm::Value* step,
                            const std::function<void(llvm::Value*)>& body);

// Hints for the loop whose latch branch is `latch` (llvm.loop.* properties: a name with a value,
// or a name alone where the value is nullptr), as its distinct, self-referential loop ID.
void set_loop_hints(llvm::BranchInst* latch,
                    std::initializer_list<std::pair<const char*, llvm::Constant*>> hints);

// if (cond) then(); else otherwise();  (no else block when otherwise is empty)
void emit_if(llvm::IRBuilder<>& b, llvm::Value* cond, const std::function<void()>& then,
             const std::function<void()>& otherwise = nullptr);

}  // namespace arrayc::detail
