// The tile copy of tiled host kernels (tile_copy.h): a transposing copy of 64-byte square blocks
// through registers where the source's rows are contiguous, else element by element.
#include "codegen/cpu/tile_copy.h"

#include <llvm/IR/IRBuilder.h>

#include <utility>
#include <vector>

#include "codegen/cpu/host_policy.h"
#include "codegen/llvm_util.h"

namespace arrayc::detail {
namespace {

using llvm::Value;

// The transpose of a square block of vectors v[row][col]: log2(n) rounds, each pairing vector
// i with vector i + n/2 and interleaving their low and high halves.
std::vector<Value*> transpose_block(llvm::IRBuilder<>& b, std::vector<Value*> v) {
  const int n = static_cast<int>(v.size());
  std::vector<int> lo(n), hi(n);
  for (int i = 0; i < n / 2; ++i) {
    lo[2 * i] = i;
    lo[2 * i + 1] = n + i;
    hi[2 * i] = n / 2 + i;
    hi[2 * i + 1] = n + n / 2 + i;
  }
  for (int round = 1; round < n; round *= 2) {
    std::vector<Value*> next(n);
    for (int i = 0; i < n / 2; ++i) {
      next[2 * i] = b.CreateShuffleVector(v[i], v[i + n / 2], lo);
      next[2 * i + 1] = b.CreateShuffleVector(v[i], v[i + n / 2], hi);
    }
    v = std::move(next);
  }
  return v;
}

llvm::FunctionType* tile_copy_type(llvm::LLVMContext& ctx) {
  auto* ptr = llvm::PointerType::get(ctx, 0);
  auto* i64 = llvm::Type::getInt64Ty(ctx);
  return llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr, ptr, i64, i64, i64, i64}, false);
}

}  // namespace

std::string tile_copy_symbol(int bytes) { return "arrayc_tile_copy_" + std::to_string(bytes); }

llvm::FunctionCallee tile_copy_callee(llvm::Module& m, int bytes) {
  llvm::FunctionCallee f = m.getOrInsertFunction(tile_copy_symbol(bytes), tile_copy_type(m.getContext()));
  auto* fn = llvm::cast<llvm::Function>(f.getCallee());
  fn->setDoesNotThrow();
  for (unsigned i : {0u, 1u}) fn->addParamAttr(i, llvm::Attribute::NoAlias);
  return f;
}

std::unique_ptr<llvm::Module> emit_tile_copy(int bytes, llvm::LLVMContext& ctx) {
  auto m = std::make_unique<llvm::Module>(tile_copy_symbol(bytes), ctx);
  // The declaration a kernel makes, given a body here.
  auto* f = llvm::cast<llvm::Function>(tile_copy_callee(*m, bytes).getCallee());
  Value *dst = f->getArg(0), *src = f->getArg(1), *rows = f->getArg(2), *cols = f->getArg(3);
  Value *row_stride = f->getArg(4), *col_stride = f->getArg(5);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", f));
  llvm::Type* t = b.getIntNTy(8 * bytes);
  Value* pitch = b.getInt64(kHostTileCols);
  auto scalar = [&](Value* r_from, Value* r_to, Value* c_from, Value* c_to) {
    emit_loop(b, r_from, r_to, b.getInt64(1), [&](Value* r) {
      Value* from = b.CreateMul(r, row_stride);
      Value* to = b.CreateMul(r, pitch);
      llvm::BranchInst* latch = emit_loop(b, c_from, c_to, b.getInt64(1), [&](Value* c) {
        Value* v = b.CreateLoad(t, b.CreateGEP(t, src, b.CreateAdd(from, b.CreateMul(c, col_stride))));
        b.CreateStore(v, b.CreateGEP(t, dst, b.CreateAdd(to, c)));
      });
      // Only for strides other than 1 (a tiled leaf's last one never is), where a vector copy
      // is not worth the compile time.
      set_loop_hints(latch, {{"llvm.loop.vectorize.enable", b.getFalse()}});
    });
  };
  if (bytes != 4 && bytes != 8) {
    scalar(b.getInt64(0), rows, b.getInt64(0), cols);
    b.CreateRetVoid();
    return m;
  }
  const int64_t n = kTileBlockBytes / bytes;
  auto* vt = llvm::FixedVectorType::get(t, static_cast<unsigned>(n));
  Value* r_full = b.CreateAnd(rows, b.getInt64(-n));
  Value* c_full = b.CreateAnd(cols, b.getInt64(-n));
  emit_if(
      b, b.CreateICmpEQ(row_stride, b.getInt64(1)),
      [&] {
        // A transpose: blocks of n x n elements, n columns loaded along their contiguous rows,
        // transposed in registers and stored as n rows.
        emit_loop(b, b.getInt64(0), r_full, b.getInt64(n), [&](Value* rb) {
          emit_loop(b, b.getInt64(0), c_full, b.getInt64(n), [&](Value* cb) {
            std::vector<Value*> v(n);
            for (int64_t k = 0; k < n; ++k) {
              Value* at = b.CreateAdd(rb, b.CreateMul(b.CreateAdd(cb, b.getInt64(k)), col_stride));
              v[k] = b.CreateAlignedLoad(vt, b.CreateGEP(t, src, at), llvm::Align(bytes));
            }
            v = transpose_block(b, std::move(v));
            for (int64_t j = 0; j < n; ++j) {
              Value* to = b.CreateAdd(b.CreateMul(b.CreateAdd(rb, b.getInt64(j)), pitch), cb);
              b.CreateAlignedStore(v[j], b.CreateGEP(t, dst, to), llvm::Align(kTileBlockBytes));
            }
          });
        });
        scalar(b.getInt64(0), r_full, c_full, cols);
        scalar(r_full, rows, b.getInt64(0), cols);
      },
      [&] { scalar(b.getInt64(0), rows, b.getInt64(0), cols); });
  b.CreateRetVoid();
  return m;
}

}  // namespace arrayc::detail
