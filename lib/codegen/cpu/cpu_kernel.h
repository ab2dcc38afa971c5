// The host (cpu) target: a Kernel (kernel/kernel.h) as one LLVM function that wraps the shared
// body (body_emitter.h) in a loop nest over a range of the kernel's parallel space; the host JIT
// (backend/host/host_jit.cpp) optimizes and links it, and the thread pool calls it on disjoint
// ranges.
#pragma once
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <memory>
#include <string>

#include "codegen/body_emitter.h"
#include "kernel/kernel.h"

namespace arrayc::detail {

// One function `name` with the calling convention of kernel.h,
//   void name(void* const* ptrs, const int64_t* params, int64_t begin, int64_t end).
std::unique_ptr<llvm::Module> emit_cpu_kernel(const Kernel& k, const std::string& name,
                                              llvm::LLVMContext& ctx, const EmitOptions& opts);

}  // namespace arrayc::detail
