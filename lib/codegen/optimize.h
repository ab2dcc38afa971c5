// LLVM's -O3 module pipeline for a target: the target machine supplies the cost model (vector
// widths on the host) and its own passes (NVVMReflect on NVPTX, which resolves libdevice's
// __nvvm_reflect).
#pragma once
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

namespace arrayc::detail {

void optimize_module(llvm::Module& m, llvm::TargetMachine& tm);

}  // namespace arrayc::detail
