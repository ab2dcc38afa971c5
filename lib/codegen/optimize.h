// LLVM's -O3 module pipeline for a target: the target machine supplies the cost model (vector
// widths on the host) and its own passes (NVVMReflect on NVPTX, which resolves libdevice's
// __nvvm_reflect). Host-only passes that run after it are in codegen/cpu/host_passes.h.
#pragma once
#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Target/TargetMachine.h>

namespace arrayc::detail {

// The new pass manager's analyses for one target machine (its cost model, its passes),
// registered and cross-linked, ready for a pass manager's run over one module.
struct TargetAnalyses {
  explicit TargetAnalyses(llvm::TargetMachine& tm);

  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb;
};

void optimize_module(llvm::Module& m, llvm::TargetMachine& tm);

}  // namespace arrayc::detail
