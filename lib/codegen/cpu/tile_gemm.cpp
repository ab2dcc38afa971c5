// The register-tiled product kernel (tile_gemm.h): R x C accumulators, two vectors of b's row and
// a broadcast element of each row of a per step along k, four steps an iteration; c's last
// columns by masked loads and stores.
#include "codegen/cpu/tile_gemm.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>

#include <algorithm>
#include <vector>

#include "codegen/llvm_util.h"

namespace arrayc::detail {
namespace {

using llvm::Value;

constexpr int kVectors = 2;  // vectors of b's row per step: C = 2 vectors of lanes
constexpr int kUnroll = 4;   // steps along k per iteration of the main loop

struct Emitter {
  llvm::IRBuilder<>& b;
  llvm::Type* t;         // the element
  llvm::VectorType* vt;  // a vector of it
  int w, rows;           // lanes, R
  Value* bp = nullptr;         // the packed panel of b: k rows of C elements
  Value* a_step = nullptr;     // elements between a row's consecutive k (null: 1, rows contiguous)
  std::vector<Value*> a_row;   // each tile row's first element (the last given row past `rows`)
  std::vector<Value*> c_row;   // the same for c
  std::vector<Value*> acc;     // R x kVectors allocas, promoted to registers by -O3
  std::vector<Value*> mask;    // per vector of c's row: the lanes below `cols`

  Value* element(Value* base, Value* index) { return b.CreateGEP(t, base, index); }
  llvm::Align elem() const { return llvm::Align(t->getPrimitiveSizeInBits() / 8); }
  llvm::Align vec() const { return llvm::Align(vt->getPrimitiveSizeInBits() / 8); }
  Value* c_at(int r, int v) { return element(c_row[r], b.getInt64(v * w)); }

  // Steps p .. p + n - 1 along k.
  void steps(Value* p, int n) {
    std::vector<Value*> sum(acc.size());
    for (size_t x = 0; x < acc.size(); ++x) sum[x] = b.CreateLoad(vt, acc[x]);
    for (int u = 0; u < n; ++u) {
      Value* pu = b.CreateAdd(p, b.getInt64(u));
      Value* b_row = element(bp, b.CreateMul(pu, b.getInt64(kVectors * w)));
      Value* vb[kVectors];
      for (int v = 0; v < kVectors; ++v) vb[v] = b.CreateAlignedLoad(vt, element(b_row, b.getInt64(v * w)), vec());
      for (int r = 0; r < rows; ++r) {
        Value* va = b.CreateVectorSplat(w, b.CreateAlignedLoad(t, element(a_row[r], a_step ? b.CreateMul(pu, a_step) : pu), elem()));
        for (int v = 0; v < kVectors; ++v)
          sum[r * kVectors + v] = b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {vt}, {va, vb[v], sum[r * kVectors + v]});
      }
    }
    for (size_t x = 0; x < acc.size(); ++x) b.CreateStore(sum[x], acc[x]);
  }

  // The accumulators from +0, or from c; then the whole of k, kUnroll steps an iteration and the
  // last k % kUnroll one by one.
  void k_loop(Value* k, Value* accumulate) {
    Value* zero = llvm::Constant::getNullValue(vt);
    for (int r = 0; r < rows; ++r)
      for (int v = 0; v < kVectors; ++v) b.CreateStore(zero, acc[r * kVectors + v]);
    emit_if(b, b.CreateICmpNE(accumulate, b.getInt64(0)), [&] {
      for (int r = 0; r < rows; ++r)
        for (int v = 0; v < kVectors; ++v)
          b.CreateStore(b.CreateMaskedLoad(vt, c_at(r, v), elem(), mask[v], zero), acc[r * kVectors + v]);
    });
    Value* whole = b.CreateSub(k, b.CreateSRem(k, b.getInt64(kUnroll)));
    emit_loop(b, b.getInt64(0), whole, b.getInt64(kUnroll), [&](Value* p) { steps(p, kUnroll); });
    emit_loop(b, whole, k, b.getInt64(1), [&](Value* p) { steps(p, 1); });
  }

  // Row r of the tile into c, when r < rows (row 0 always is).
  void store(Value* rows_given) {
    for (int r = 0; r < rows; ++r) {
      auto row = [&, r] {
        for (int v = 0; v < kVectors; ++v)
          b.CreateMaskedStore(b.CreateLoad(vt, acc[r * kVectors + v]), c_at(r, v), elem(), mask[v]);
      };
      if (r == 0) row();
      else emit_if(b, b.CreateICmpSLT(b.getInt64(r), rows_given), row);
    }
  }
};

}  // namespace

int tile_rows(int vector_bits) {
  // 32 vector registers with AVX-512: 12 x 2 accumulators, 2 of b, 1 broadcast; 16 otherwise: 6 x 2.
  return vector_bits >= 512 ? 12 : 6;
}

int tile_cols(DType dtype, int vector_bits) { return kVectors * vector_bits / (dtype == DType::Float64 ? 64 : 32); }

int64_t tile_depth(DType dtype, int vector_bits) {
  int64_t panel_row = tile_cols(dtype, vector_bits) * static_cast<int64_t>(dtype_size(dtype));
  return std::max<int64_t>(64, 20 * 1024 / panel_row / 4 * 4);
}

std::string tile_symbol(DType dtype, int vector_bits, bool a_columns) {
  return std::string("arrayc_tile_") + (dtype == DType::Float64 ? "f64_" : "f32_") + std::to_string(tile_rows(vector_bits)) +
         "x" + std::to_string(tile_cols(dtype, vector_bits)) + "_" + std::to_string(vector_bits) + (a_columns ? "_at" : "");
}

std::unique_ptr<llvm::Module> emit_tile_gemm(DType dtype, int vector_bits, llvm::LLVMContext& ctx, bool a_columns) {
  std::string name = tile_symbol(dtype, vector_bits, a_columns);
  auto m = std::make_unique<llvm::Module>(name, ctx);
  auto* ptr = llvm::PointerType::get(ctx, 0);
  auto* i64 = llvm::Type::getInt64Ty(ctx);
  auto* fty = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr, i64, ptr, ptr, i64, i64, i64, i64, i64}, false);
  auto* f = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, name, *m);
  f->setDoesNotThrow();
  for (unsigned p : {0u, 2u, 3u}) f->addParamAttr(p, llvm::Attribute::NoAlias);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", f));
  llvm::Type* t = dtype == DType::Float64 ? b.getDoubleTy() : b.getFloatTy();
  int w = vector_bits / static_cast<int>(t->getPrimitiveSizeInBits());
  Emitter e{b, t, llvm::FixedVectorType::get(t, w), w, tile_rows(vector_bits), f->getArg(2), {}, {}, {}, {}};
  Value *a = f->getArg(0), *lda = f->getArg(1), *c = f->getArg(3), *ldc = f->getArg(4), *k = f->getArg(5);
  Value *rows = f->getArg(6), *cols = f->getArg(7), *accumulate = f->getArg(8);
  for (int x = 0; x < e.rows * kVectors; ++x) e.acc.push_back(b.CreateAlloca(e.vt));
  if (a_columns) e.a_step = lda;
  // Rows past `rows` read the last given row (their sums are not stored).
  Value* last = b.CreateSub(rows, b.getInt64(1));
  for (int r = 0; r < e.rows; ++r) {
    Value* row = b.CreateSelect(b.CreateICmpSLT(b.getInt64(r), rows), b.getInt64(r), last);
    e.a_row.push_back(e.element(a, a_columns ? row : b.CreateMul(row, lda)));
    e.c_row.push_back(e.element(c, b.CreateMul(row, ldc)));
  }
  std::vector<llvm::Constant*> lanes;
  for (int l = 0; l < w; ++l) lanes.push_back(b.getInt64(l));
  for (int v = 0; v < kVectors; ++v)
    e.mask.push_back(b.CreateICmpSLT(b.CreateAdd(llvm::ConstantVector::get(lanes), b.CreateVectorSplat(w, b.getInt64(v * w))),
                                     b.CreateVectorSplat(w, cols)));
  e.k_loop(k, accumulate);
  e.store(rows);
  b.CreateRetVoid();
  return m;
}

}  // namespace arrayc::detail
