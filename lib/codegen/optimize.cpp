#include "codegen/optimize.h"

#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/DiagnosticPrinter.h>
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

}  // namespace

TargetAnalyses::TargetAnalyses(llvm::TargetMachine& tm) : pb(&tm) {
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
}

void optimize_module(llvm::Module& m, llvm::TargetMachine& tm) {
  m.getContext().setDiagnosticHandlerCallBack(diagnostics);
  TargetAnalyses a(tm);
  a.pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3).run(m, a.mam);
}

}  // namespace arrayc::detail
