#include "codegen/optimize.h"

#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/DiagnosticPrinter.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Transforms/IPO/AlwaysInliner.h>
#include <llvm/Transforms/IPO/GlobalDCE.h>
#include <llvm/Transforms/InstCombine/InstCombine.h>
#include <llvm/Transforms/Scalar/EarlyCSE.h>
#include <llvm/Transforms/Scalar/SimplifyCFG.h>
#include <llvm/Transforms/Utils/ModuleUtils.h>
#include <llvm/Support/raw_ostream.h>

#include "arrayc/error.h"
#include "support/env.h"

namespace arrayc::detail {
namespace {

// LLVM's remarks and warnings (e.g. "loop not vectorized" for a loop whose vector width the
// kernel asked for) are for whoever studies the kernels: printed under ARRAYC_DEBUG >= 3 only,
// never into a user's terminal. An error is a bug of ours.
void diagnostics(const llvm::DiagnosticInfo* d, void*) {
  const llvm::DiagnosticInfo& di = *d;
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::DiagnosticPrinterRawOStream printer(os);
  di.print(printer);
  ARRAYC_INTERNAL_CHECK(di.getSeverity() != llvm::DS_Error, "LLVM: " + text);
  if (debug_level() >= 3) llvm::errs() << "arrayc: LLVM: " << text << "\n";
}

// The loop vectorizer runs after -O3's inliner, so the vector math variants it calls
// (always-inline, codegen/vmath.cpp) are inlined here, followed by the clean-up that inlining
// calls for: the sincos variant's packed i64 lanes fold away, constants are shared. The math
// functions were kept alive for the vectorizer (llvm.compiler.used); now those left without a
// call are deleted rather than compiled.
void inline_vector_math(llvm::Module& m, llvm::ModuleAnalysisManager& mam) {
  llvm::ModulePassManager mpm;
  mpm.addPass(llvm::AlwaysInlinerPass(/*InsertLifetimeIntrinsics=*/false));
  mpm.run(m, mam);
  llvm::removeFromUsedLists(m, [](llvm::Constant* c) { return c->getName().starts_with("arrayc_"); });
  mpm = llvm::ModulePassManager();
  mpm.addPass(llvm::GlobalDCEPass());
  llvm::FunctionPassManager fpm;
  fpm.addPass(llvm::InstCombinePass());
  fpm.addPass(llvm::EarlyCSEPass());
  fpm.addPass(llvm::SimplifyCFGPass());
  mpm.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(fpm)));
  mpm.run(m, mam);
}

}  // namespace

void optimize_module(llvm::Module& m, llvm::TargetMachine& tm) {
  m.getContext().setDiagnosticHandlerCallBack(diagnostics);
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3).run(m, mam);
  if (!tm.getTargetTriple().isNVPTX()) inline_vector_math(m, mam);  // GPU math is libdevice's
}

}  // namespace arrayc::detail
