// LLVM helpers shared by the code generators: control flow for generated kernels (a counted
// loop and an if/else, emitted at the builder's insert point, which ends up after them), and a
// module's text and verification.
#pragma once
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <functional>
#include <initializer_list>
#include <string>
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

// The module as LLVM IR text (the stage texts of inspection, ARRAYC_DEBUG and ARRAYC_DUMP_DIR).
std::string module_text(const llvm::Module& m);

// Runs LLVM's verifier over a generated module: invalid IR is a bug of ours, an internal error
// that prints the verifier's findings and the module.
void verify_module(const llvm::Module& m);

}  // namespace arrayc::detail
