#include "codegen/nvptx/bool_to_float.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>

#include <vector>

namespace arrayc::detail {

int rewrite_bool_sitofp(llvm::Module& m) {
  std::vector<llvm::SIToFPInst*> found;
  for (llvm::Function& f : m)
    for (llvm::BasicBlock& bb : f)
      for (llvm::Instruction& i : bb)
        if (auto* c = llvm::dyn_cast<llvm::SIToFPInst>(&i))
          if (c->getOperand(0)->getType()->getScalarType()->isIntegerTy(1)) found.push_back(c);
  for (llvm::SIToFPInst* c : found) {
    llvm::IRBuilder<> b(c);
    llvm::Type* ty = c->getType();
    llvm::Value* v = b.CreateSelect(c->getOperand(0), llvm::ConstantFP::get(ty, -1.0), llvm::ConstantFP::get(ty, 0.0));
    c->replaceAllUsesWith(v);
    v->takeName(c);
    c->eraseFromParent();
  }
  return static_cast<int>(found.size());
}

}  // namespace arrayc::detail
