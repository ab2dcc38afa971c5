#include "codegen/cpu/host_passes.h"

#include <llvm/Analysis/AssumptionCache.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ScalarEvolution.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/Transforms/IPO/AlwaysInliner.h>
#include <llvm/Transforms/IPO/GlobalDCE.h>
#include <llvm/Transforms/InstCombine/InstCombine.h>
#include <llvm/Transforms/Scalar/EarlyCSE.h>
#include <llvm/Transforms/Scalar/JumpThreading.h>
#include <llvm/Transforms/Scalar/SimplifyCFG.h>
#include <llvm/Transforms/Utils/ModuleUtils.h>
#include <llvm/TargetParser/Triple.h>

#include <vector>

#include "codegen/cpu/half_convert.h"
#include "codegen/optimize.h"

namespace arrayc::detail {

namespace {

// Compile time (issue 26): past this many calls of vector math in one module, none is inlined.
// Each inlined body adds its blocks and its long-lived constants to the one vector loop, and
// the greedy register allocator's time on that loop grows faster than quadratically with them
// (a fused chain of 100 sin and 100 mul: 1.08 s of register allocation inlined, 4 ms with the
// calls kept). Out of line, each function is compiled once per module and called per vector.
constexpr int kMaxInlinedMathCalls = 16;

// The vector math variants (always-inline until here) and how many calls they have.
void keep_math_calls_out_of_line_past_the_budget(llvm::Module& m) {
  std::vector<llvm::Function*> math;
  int calls = 0;
  for (llvm::Function& f : m) {
    if (f.isDeclaration() || !f.hasFnAttribute(llvm::Attribute::AlwaysInline) || !f.getName().starts_with("arrayc_"))
      continue;
    math.push_back(&f);
    for (const llvm::User* u : f.users()) calls += llvm::isa<llvm::CallBase>(u);
  }
  if (calls <= kMaxInlinedMathCalls) return;
  for (llvm::Function* f : math) {
    f->removeFnAttr(llvm::Attribute::AlwaysInline);
    f->addFnAttr(llvm::Attribute::NoInline);
  }
}

}  // namespace

void inline_vector_math(llvm::Module& m, llvm::TargetMachine& tm) {
  TargetAnalyses a(tm);
  keep_math_calls_out_of_line_past_the_budget(m);
  // The scalar float16 conversions (half_convert.h) go inline too, now that loops are vectorized.
  for (llvm::Function& f : m)
    if (is_f16_scalar_fn(f)) {
      f.removeFnAttr(llvm::Attribute::NoInline);
      f.addFnAttr(llvm::Attribute::AlwaysInline);
    }
  llvm::ModulePassManager mpm;
  mpm.addPass(llvm::AlwaysInlinerPass(/*InsertLifetimeIntrinsics=*/false));
  mpm.run(m, a.mam);
  llvm::removeFromUsedLists(m, [](llvm::Constant* c) { return c->getName().starts_with("arrayc_"); });
  mpm = llvm::ModulePassManager();
  mpm.addPass(llvm::GlobalDCEPass());
  llvm::FunctionPassManager fpm;
  fpm.addPass(llvm::InstCombinePass());
  fpm.addPass(llvm::EarlyCSEPass());
  fpm.addPass(llvm::JumpThreadingPass());
  fpm.addPass(llvm::SimplifyCFGPass());
  mpm.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(fpm)));
  mpm.run(m, a.mam);
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

void optimize_host_module(llvm::Module& m, llvm::TargetMachine& tm, bool stream_stores) {
  optimize_module(m, tm);
  inline_vector_math(m, tm);
  if (stream_stores) mark_streaming_stores(m);
}

}  // namespace arrayc::detail
