// LLVM's -O3 module pipeline for a target: the target machine supplies the cost model (vector
// widths on the host) and its own passes (NVVMReflect on NVPTX, which resolves libdevice's
// __nvvm_reflect).
#pragma once
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

namespace arrayc::detail {

void optimize_module(llvm::Module& m, llvm::TargetMachine& tm);

// After optimize_module, for a host kernel compiled with EmitOptions::stream_stores: marks every
// vector store whose alignment covers its size non-temporal (on the streaming path of
// codegen/cpu/cpu_kernel.cpp, only the output's, aligned by its scalar head) and fences them at each return.
void mark_streaming_stores(llvm::Module& m);

}  // namespace arrayc::detail
