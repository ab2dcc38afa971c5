// The skinny product kernel (skinny_gemm.h): R rows of a at a time, vectors along k, one
// accumulator per row and column of b, reduced across lanes at the end of the rows.
#include "codegen/cpu/skinny_gemm.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>

#include <vector>

#include "codegen/llvm_util.h"

namespace arrayc::detail {
namespace {

using llvm::Value;

int vector_registers(int vector_bits) { return vector_bits >= 512 ? 32 : 16; }

struct Emitter {
  llvm::IRBuilder<>& b;
  llvm::Type* t;            // the element
  llvm::VectorType* vt;     // a vector of it
  int w;                    // lanes
  int nc;                   // columns of b
  Value *a = nullptr, *lda = nullptr, *bt = nullptr, *ldbt = nullptr, *c = nullptr, *ldc = nullptr, *k = nullptr;
  Value *kfull = nullptr, *tail_mask = nullptr;

  Value* element(Value* base, Value* index) { return b.CreateGEP(t, base, index); }

  // c[r + rr, j] for rr < rows and j < nc.
  void rows_at(Value* r, int rows) {
    llvm::Function* f = b.GetInsertBlock()->getParent();
    llvm::LLVMContext& ctx = b.getContext();
    std::vector<Value*> a_row(rows), b_row(nc);
    for (int rr = 0; rr < rows; ++rr)
      a_row[rr] = element(a, b.CreateMul(b.CreateAdd(r, b.getInt64(rr)), lda));
    for (int j = 0; j < nc; ++j) b_row[j] = element(bt, b.CreateMul(b.getInt64(j), ldbt));
    Value* zero = llvm::Constant::getNullValue(vt);

    llvm::BasicBlock* pre = b.GetInsertBlock();
    llvm::BasicBlock* head = llvm::BasicBlock::Create(ctx, "k.head", f);
    llvm::BasicBlock* body = llvm::BasicBlock::Create(ctx, "k.body", f);
    llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx, "k.done", f);
    b.CreateBr(head);
    b.SetInsertPoint(head);
    llvm::PHINode* i = b.CreatePHI(b.getInt64Ty(), 2, "i");
    i->addIncoming(b.getInt64(0), pre);
    std::vector<llvm::PHINode*> acc(rows * nc);
    for (auto& p : acc) {
      p = b.CreatePHI(vt, 2, "acc");
      p->addIncoming(zero, pre);
    }
    b.CreateCondBr(b.CreateICmpSLT(i, kfull), body, done);

    // One step: a vector of each row, times the same lanes of each column.
    auto step = [&](Value* at, Value* mask, std::vector<Value*> in) {
      llvm::Align elem(t->getPrimitiveSizeInBits() / 8);
      auto load = [&](Value* base, llvm::Align align) -> Value* {
        Value* p = element(base, at);
        if (mask) return b.CreateMaskedLoad(vt, p, align, mask, zero);
        return b.CreateAlignedLoad(vt, p, align);
      };
      std::vector<Value*> va(rows);
      for (int rr = 0; rr < rows; ++rr) va[rr] = load(a_row[rr], elem);
      for (int j = 0; j < nc; ++j) {
        // bt's rows start at whole vectors of a 64-byte aligned buffer.
        Value* vb = load(b_row[j], llvm::Align(std::min<uint64_t>(64, vt->getPrimitiveSizeInBits() / 8)));
        for (int rr = 0; rr < rows; ++rr)
          in[rr * nc + j] = b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {vt}, {va[rr], vb, in[rr * nc + j]});
      }
      return in;
    };

    b.SetInsertPoint(body);
    std::vector<Value*> next = step(i, nullptr, std::vector<Value*>(acc.begin(), acc.end()));
    i->addIncoming(b.CreateAdd(i, b.getInt64(w)), body);
    for (size_t x = 0; x < acc.size(); ++x) acc[x]->addIncoming(next[x], body);
    b.CreateBr(head);

    // The partial vector past the last whole one (masked: no lanes when k is whole vectors), then
    // each accumulator's lanes added up.
    b.SetInsertPoint(done);
    std::vector<Value*> out = step(kfull, tail_mask, std::vector<Value*>(acc.begin(), acc.end()));
    llvm::FastMathFlags reassoc;
    reassoc.setAllowReassoc();
    for (int rr = 0; rr < rows; ++rr) {
      Value* c_row = element(c, b.CreateMul(b.CreateAdd(r, b.getInt64(rr)), ldc));
      for (int j = 0; j < nc; ++j) {
        auto* sum = llvm::cast<llvm::CallInst>(
            b.CreateFAddReduce(llvm::ConstantFP::getNegativeZero(t), out[rr * nc + j]));
        sum->setFastMathFlags(reassoc);
        // A sum of no products is +0, as BLAS and the interpreter give.
        b.CreateStore(b.CreateFAdd(sum, llvm::ConstantFP::get(t, 0.0)), element(c_row, b.getInt64(j)));
      }
    }
  }
};

}  // namespace

int skinny_max_cols(int vector_bits) { return vector_registers(vector_bits) - 4; }

int skinny_rows_per_step(int nc, int vector_bits) {
  int regs = vector_registers(vector_bits), rows = 1;
  while (rows < 4 && nc * (rows + 1) + (rows + 1) + 1 <= regs) ++rows;
  return rows;
}

std::string skinny_symbol(DType dtype, int nc, int vector_bits) {
  return std::string("arrayc_skinny_") + (dtype == DType::Float64 ? "f64_" : "f32_") + std::to_string(nc) + "_" +
         std::to_string(vector_bits);
}

std::unique_ptr<llvm::Module> emit_skinny_gemm(DType dtype, int nc, int vector_bits, llvm::LLVMContext& ctx) {
  std::string name = skinny_symbol(dtype, nc, vector_bits);
  auto m = std::make_unique<llvm::Module>(name, ctx);
  auto* ptr = llvm::PointerType::get(ctx, 0);
  auto* i64 = llvm::Type::getInt64Ty(ctx);
  auto* fty = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr, i64, ptr, i64, ptr, i64, i64, i64, i64}, false);
  auto* f = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, name, *m);
  f->setDoesNotThrow();
  for (unsigned p : {0u, 2u, 4u}) f->addParamAttr(p, llvm::Attribute::NoAlias);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", f));
  llvm::Type* t = dtype == DType::Float64 ? b.getDoubleTy() : b.getFloatTy();
  int w = vector_bits / static_cast<int>(t->getPrimitiveSizeInBits());
  Emitter e{b, t, llvm::FixedVectorType::get(t, w), w, nc};
  e.a = f->getArg(0), e.lda = f->getArg(1), e.bt = f->getArg(2), e.ldbt = f->getArg(3);
  e.c = f->getArg(4), e.ldc = f->getArg(5), e.k = f->getArg(6);
  Value *begin = f->getArg(7), *end = f->getArg(8);
  Value* rem = b.CreateSRem(e.k, b.getInt64(w));
  e.kfull = b.CreateSub(e.k, rem);
  std::vector<llvm::Constant*> lanes;
  for (int l = 0; l < w; ++l) lanes.push_back(b.getInt64(l));
  e.tail_mask = b.CreateICmpSLT(llvm::ConstantVector::get(lanes), b.CreateVectorSplat(w, rem));

  int rows = skinny_rows_per_step(nc, vector_bits);
  Value* whole = b.CreateAdd(begin, b.CreateMul(b.CreateSDiv(b.CreateSub(end, begin), b.getInt64(rows)), b.getInt64(rows)));
  emit_loop(b, begin, whole, b.getInt64(rows), [&](Value* r) { e.rows_at(r, rows); });
  if (rows > 1) emit_loop(b, whole, end, b.getInt64(1), [&](Value* r) { e.rows_at(r, 1); });
  b.CreateRetVoid();
  return m;
}

}  // namespace arrayc::detail
