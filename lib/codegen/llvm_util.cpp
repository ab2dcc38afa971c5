#include "codegen/llvm_util.h"

#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <vector>

#include "arrayc/error.h"

namespace arrayc::detail {

llvm::BranchInst* emit_loop(llvm::IRBuilder<>& b, llvm::Value* start, llvm::Value* end, llvm::Value* step,
                            const std::function<void(llvm::Value*)>& body) {
  llvm::LLVMContext& ctx = b.getContext();
  llvm::Function* f = b.GetInsertBlock()->getParent();
  llvm::BasicBlock* pre = b.GetInsertBlock();
  auto* header = llvm::BasicBlock::Create(ctx, "loop", f);
  auto* body_bb = llvm::BasicBlock::Create(ctx, "loop.body", f);
  auto* exit = llvm::BasicBlock::Create(ctx, "loop.exit", f);
  b.CreateBr(header);
  b.SetInsertPoint(header);
  llvm::PHINode* i = b.CreatePHI(b.getInt64Ty(), 2, "i");
  i->addIncoming(start, pre);
  b.CreateCondBr(b.CreateICmpSLT(i, end), body_bb, exit);
  b.SetInsertPoint(body_bb);
  body(i);
  i->addIncoming(b.CreateAdd(i, step), b.GetInsertBlock());
  llvm::BranchInst* latch = b.CreateBr(header);
  b.SetInsertPoint(exit);
  return latch;
}

void emit_if(llvm::IRBuilder<>& b, llvm::Value* cond, const std::function<void()>& then,
             const std::function<void()>& otherwise) {
  llvm::LLVMContext& ctx = b.getContext();
  llvm::Function* f = b.GetInsertBlock()->getParent();
  auto* then_bb = llvm::BasicBlock::Create(ctx, "then", f);
  auto* else_bb = otherwise ? llvm::BasicBlock::Create(ctx, "else", f) : nullptr;
  auto* done = llvm::BasicBlock::Create(ctx, "endif", f);
  b.CreateCondBr(cond, then_bb, else_bb ? else_bb : done);
  b.SetInsertPoint(then_bb);
  then();
  b.CreateBr(done);
  if (else_bb) {
    b.SetInsertPoint(else_bb);
    otherwise();
    b.CreateBr(done);
  }
  b.SetInsertPoint(done);
}

void set_loop_hints(llvm::BranchInst* latch,
                    std::initializer_list<std::pair<const char*, llvm::Constant*>> hints) {
  llvm::LLVMContext& ctx = latch->getContext();
  std::vector<llvm::Metadata*> ops{nullptr};
  for (auto& [name, value] : hints) {
    llvm::Metadata* n = llvm::MDString::get(ctx, name);
    ops.push_back(value ? llvm::MDNode::get(ctx, {n, llvm::ConstantAsMetadata::get(value)}) : llvm::MDNode::get(ctx, n));
  }
  llvm::MDNode* id = llvm::MDNode::getDistinct(ctx, ops);
  id->replaceOperandWith(0, id);
  latch->setMetadata(llvm::LLVMContext::MD_loop, id);
}

std::string module_text(const llvm::Module& m) {
  std::string s;
  llvm::raw_string_ostream os(s);
  m.print(os, nullptr);
  return s;
}

void verify_module(const llvm::Module& m) {
  std::string verify;
  llvm::raw_string_ostream vs(verify);
  ARRAYC_INTERNAL_CHECK(!llvm::verifyModule(m, &vs), "invalid kernel IR: " + verify + "\n" + module_text(m));
}

}  // namespace arrayc::detail
