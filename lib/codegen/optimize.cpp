#include "codegen/optimize.h"

#include <llvm/Analysis/AssumptionCache.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ScalarEvolution.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/DiagnosticPrinter.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Transforms/IPO/AlwaysInliner.h>
#include <llvm/Transforms/IPO/GlobalDCE.h>
#include <llvm/Transforms/InstCombine/InstCombine.h>
#include <llvm/Transforms/Scalar/EarlyCSE.h>
#include <llvm/Transforms/Scalar/JumpThreading.h>
#include <llvm/Transforms/Scalar/SimplifyCFG.h>
#include <llvm/Transforms/Utils/ModuleUtils.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/TargetParser/Triple.h>

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
// (always-inline, codegen/cpu/vmath/vmath.cpp) are inlined here, followed by the clean-up that inlining
// calls for: the sincos variant's packed i64 lanes fold away, constants are shared, and where
// two functions of one argument test the same range (f32 exp, sin and cos: every lane below
// 16), the tests merge and jump threading sends the second function straight to its path. The
// math functions were kept alive for the vectorizer (llvm.compiler.used); now those left without a
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
  fpm.addPass(llvm::JumpThreadingPass());
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

void mark_streaming_stores(llvm::Module& m) {
  if (!llvm::Triple(m.getTargetTriple()).isX86()) return;
  const llvm::DataLayout& dl = m.getDataLayout();
  llvm::LLVMContext& cx = m.getContext();
  llvm::TargetLibraryInfoImpl tlii(llvm::Triple(m.getTargetTriple()));
  for (llvm::Function& f : m) {
    // The alignment assumptions (codegen/cpu/cpu_kernel.cpp's aligned row starts): where, which pointer,
    // to how many bytes.
    struct Aligned {
      llvm::AssumeInst* assume;
      llvm::Value* ptr;
      uint64_t bytes;
    };
    std::vector<Aligned> aligned;
    for (llvm::Instruction& i : llvm::instructions(f))
      if (auto* a = llvm::dyn_cast<llvm::AssumeInst>(&i))
        for (unsigned b = 0; b < a->getNumOperandBundles(); ++b)
          if (llvm::OperandBundleUse u = a->getOperandBundleAt(b); u.getTagName() == "align" && u.Inputs.size() == 2)
            if (auto* n = llvm::dyn_cast<llvm::ConstantInt>(u.Inputs[1]))
              aligned.push_back({a, u.Inputs[0], n->getZExtValue()});
    if (aligned.empty()) continue;
    llvm::DominatorTree dt(f);
    llvm::LoopInfo li(dt);
    llvm::AssumptionCache ac(f);
    llvm::TargetLibraryInfo tli(tlii, &f);
    llvm::ScalarEvolution se(f, tli, ac, dt, li);
    // A vector store at (pointer aligned to A) + (a multiple of 2^k), dominated by the
    // assumption, is aligned to min(A, 2^k); when that covers its size, it becomes a
    // non-temporal store.
    auto provably_aligned = [&](llvm::StoreInst* st, uint64_t size) {
      const llvm::SCEV* p = se.getSCEV(st->getPointerOperand());
      for (const Aligned& a : aligned) {
        if (a.bytes < size || !dt.dominates(a.assume, st)) continue;
        const llvm::SCEV* d = se.getMinusSCEV(p, se.getSCEV(a.ptr));
        if (!llvm::isa<llvm::SCEVCouldNotCompute>(d) && se.getMinTrailingZeros(d) >= llvm::Log2_64(size)) return true;
      }
      return false;
    };
    bool marked = false;
    for (llvm::Instruction& i : llvm::instructions(f)) {
      auto* st = llvm::dyn_cast<llvm::StoreInst>(&i);
      if (!st || !st->getValueOperand()->getType()->isVectorTy()) continue;
      uint64_t size = dl.getTypeStoreSize(st->getValueOperand()->getType());
      if (size < 16 || size > 64 || !llvm::isPowerOf2_64(size) || !provably_aligned(st, size)) continue;
      st->setAlignment(llvm::Align(size));
      st->setMetadata(llvm::LLVMContext::MD_nontemporal,
                      llvm::MDNode::get(cx, llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(cx), 1))));
      marked = true;
    }
    if (!marked) continue;
    // Non-temporal stores are weakly ordered: fence them before the function returns, so that
    // whoever learns that the kernel finished sees its results.
    for (llvm::BasicBlock& bb : f)
      if (auto* ret = llvm::dyn_cast<llvm::ReturnInst>(bb.getTerminator()))
        llvm::IRBuilder<>(ret).CreateIntrinsic(llvm::Intrinsic::x86_sse_sfence, {}, {});
  }
}

}  // namespace arrayc::detail
