#include "codegen/nvptx/half_lookup.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <string>
#include <vector>

#include "codegen/llvm_util.h"

namespace arrayc::detail {

HalfLookupShape half_lookup_shape(int out_bytes) {
  // On an H100, float16 W8 of 1e8 took 0.160-0.165 ms with each of 1024 threads x 1, 2 or 4
  // vectors, 768 x 4, 512 x 4 and 1024 x 4 with 8 elements a thread for the rest: the shape is
  // not what bounds it.
  if (out_bytes <= 2) return {1024, 16, 4, static_cast<unsigned>(65536 * out_bytes)};
  return {256, 8, 0, 0};
}

PtxKernel emit_half_lookup_ptx(int out_bytes, int sm) {
  const std::string entry = "arrayc_half_lookup_" + std::to_string(8 * out_bytes);
  const HalfLookupShape shape = half_lookup_shape(out_bytes);
  return compile_ptx(entry, sm, [&](llvm::Module& m) {
    llvm::LLVMContext& ctx = m.getContext();
    llvm::IRBuilder<> b(ctx);
    auto* gptr = llvm::PointerType::get(ctx, 1);
    std::vector<llvm::Type*> args{gptr, gptr, gptr, b.getInt64Ty(), b.getInt64Ty(), b.getInt64Ty()};
    // The table is noalias (read-only loads); the input and output may be one buffer.
    llvm::Function* f = declare_ptx_kernel(m, entry, args, 1);
    annotate_ptx_kernel(*f, "maxntidx", shape.threads);
    b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", f));
    llvm::Value *table = f->getArg(0), *in = f->getArg(1), *out = f->getArg(2), *n = f->getArg(3);
    llvm::Value *in_off = f->getArg(4), *out_off = f->getArg(5);
    llvm::Type* i16 = b.getInt16Ty();
    llvm::Type* elem = b.getIntNTy(8 * out_bytes);
    auto i64 = [&](int64_t v) { return b.getInt64(v); };
    auto sreg = [&](llvm::Intrinsic::ID id) { return read_sreg(b, id); };
    llvm::Value* tid = sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
    if (shape.shared_bytes) {  // the table into shared memory, 16 bytes a thread at a time
      auto* ty = llvm::ArrayType::get(elem, 0);
      auto* shared = new llvm::GlobalVariable(m, ty, false, llvm::GlobalValue::ExternalLinkage, nullptr, "half_table",
                                              nullptr, llvm::GlobalValue::NotThreadLocal, 3);
      shared->setAlignment(llvm::Align(16));
      llvm::Type* v4 = llvm::FixedVectorType::get(b.getInt32Ty(), 4);
      const int chunks = static_cast<int>(shape.shared_bytes / 16);
      for (int c = 0; c < chunks / shape.threads; ++c) {
        llvm::Value* at = b.CreateAdd(tid, i64(c * shape.threads));
        llvm::Value* v = b.CreateAlignedLoad(v4, b.CreateInBoundsGEP(v4, table, at), llvm::Align(16));
        b.CreateAlignedStore(v, b.CreateInBoundsGEP(v4, shared, at), llvm::Align(16));
      }
      b.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});
      table = shared;
    }
    llvm::Value* start = b.CreateMul(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x), i64(shape.run()));
    llvm::Value* step = b.CreateMul(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x), i64(shape.run()));
    auto lookup = [&](llvm::Value* run, bool guarded) {
      std::vector<llvm::Value*> at, ok, x;
      for (int j = 0; j < shape.per_thread; ++j) {  // every input first
        at.push_back(b.CreateAdd(run, b.CreateAdd(tid, i64(static_cast<int64_t>(j) * shape.threads))));
        ok.push_back(guarded ? b.CreateICmpSLT(at[j], n) : b.getTrue());
        llvm::Value* i = b.CreateAdd(in_off, guarded ? b.CreateSelect(ok[j], at[j], i64(0)) : at[j]);
        x.push_back(b.CreateAlignedLoad(i16, b.CreateInBoundsGEP(i16, in, i), llvm::Align(2)));
      }
      std::vector<llvm::Value*> v;
      for (int j = 0; j < shape.per_thread; ++j)
        v.push_back(b.CreateAlignedLoad(elem, b.CreateInBoundsGEP(elem, table, b.CreateZExt(x[j], b.getInt64Ty())),
                                        llvm::Align(out_bytes)));
      for (int j = 0; j < shape.per_thread; ++j) {
        auto store = [&] {
          b.CreateAlignedStore(v[j], b.CreateInBoundsGEP(elem, out, b.CreateAdd(out_off, at[j])), llvm::Align(out_bytes));
        };
        if (guarded) emit_if(b, ok[j], store);
        else store();
      }
    };
    // Vectors of 8 elements (16 bytes of input) where the input and the output start aligned to
    // them: whole runs of threads x vectors x 8 elements, grid-strided; the rest element by element.
    llvm::Value* tail = i64(0);
    if (shape.vectors) {
      const int64_t vrun = int64_t{shape.threads} * shape.vectors * 8;
      llvm::Value* in_at = b.CreatePtrToInt(b.CreateInBoundsGEP(i16, in, in_off), b.getInt64Ty());
      llvm::Value* out_at = b.CreatePtrToInt(b.CreateInBoundsGEP(elem, out, out_off), b.getInt64Ty());
      llvm::Value* aligned = b.CreateICmpEQ(b.CreateOr(b.CreateAnd(in_at, i64(15)), b.CreateAnd(out_at, i64(8 * out_bytes - 1))), i64(0));
      llvm::Value* whole = b.CreateMul(b.CreateUDiv(n, i64(vrun)), i64(vrun));
      llvm::Type* vin = llvm::FixedVectorType::get(i16, 8);
      llvm::Type* vout = llvm::FixedVectorType::get(elem, 8);
      emit_if(b, aligned, [&] {
        emit_loop(b, b.CreateMul(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x), i64(vrun)), whole,
                  b.CreateMul(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x), i64(vrun)), [&](llvm::Value* run) {
                    std::vector<llvm::Value*> at, x;
                    for (int j = 0; j < shape.vectors; ++j) {  // every input first
                      at.push_back(b.CreateAdd(run, b.CreateMul(b.CreateAdd(tid, i64(int64_t{j} * shape.threads)), i64(8))));
                      x.push_back(b.CreateAlignedLoad(vin, b.CreateInBoundsGEP(i16, in, b.CreateAdd(in_off, at[j])), llvm::Align(16)));
                    }
                    for (int j = 0; j < shape.vectors; ++j) {
                      llvm::Value* v = llvm::UndefValue::get(vout);
                      for (int e = 0; e < 8; ++e) {
                        llvm::Value* k = b.CreateZExt(b.CreateExtractElement(x[j], e), b.getInt64Ty());
                        v = b.CreateInsertElement(
                            v, b.CreateAlignedLoad(elem, b.CreateInBoundsGEP(elem, table, k), llvm::Align(out_bytes)), e);
                      }
                      b.CreateAlignedStore(v, b.CreateInBoundsGEP(elem, out, b.CreateAdd(out_off, at[j])),
                                           llvm::Align(8 * out_bytes));
                    }
                  });
      });
      tail = b.CreateSelect(aligned, whole, i64(0));
    }
    emit_loop(b, b.CreateAdd(tail, start), n, step, [&](llvm::Value* run) {
      emit_if(b, b.CreateICmpSLE(b.CreateAdd(run, i64(shape.run())), n), [&] { lookup(run, false); },
              [&] { lookup(run, true); });
    });
    b.CreateRetVoid();
  });
}

}  // namespace arrayc::detail
