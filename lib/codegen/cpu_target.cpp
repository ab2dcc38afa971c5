// The host target: wraps the shared body in a loop nest over [begin, end) of the kernel's
// parallel space. The innermost loop walks one row with constant-stride addressing (unit
// strides become plain `base + i`), which is the loop LLVM's vectorizer widens; the thread pool
// calls the function on disjoint ranges.
#include <functional>
#include <utility>
#include <vector>

#include "codegen/emitter.h"
#include "codegen/ir_util.h"
#include "codegen/vmath.h"

namespace arrayc::detail {
namespace {

using llvm::Value;

constexpr uint64_t kStreamAlign = 64;  // bytes: a cache line, and the widest vector store

class CpuLoopEmitter {
 public:
  CpuLoopEmitter(const Kernel& k, llvm::Function* f, const EmitOptions& opts)
      : k_(k), f_(f), ctx_(f->getContext()), b_(llvm::BasicBlock::Create(ctx_, "entry", f)),
        body_(b_, k, opts), opts_(opts) {}

  void emit() {
    for (int i = 0; i < k_.num_ptrs; ++i) ptrs_.push_back(f_->getArg(i));
    Value* params = f_->getArg(k_.num_ptrs);
    Value* begin = f_->getArg(k_.num_ptrs + 1);
    Value* end = f_->getArg(k_.num_ptrs + 2);
    auto param = [&](int64_t i) {
      return b_.CreateAlignedLoad(b_.getInt64Ty(), b_.CreateConstInBoundsGEP1_64(b_.getInt64Ty(), params, i),
                                  llvm::Align(8));
    };
    for (int d = 0; d < k_.rank; ++d) extents_.push_back(param(d));
    Value* reduce_begin = param(k_.rank);
    Value* reduce_end = param(k_.rank + 1);
    Value* finalize = param(k_.rank + 2);

    std::vector<const std::vector<StrideKind>*> kinds(k_.num_indexed);
    for (const KernelLeaf& lf : k_.leaves)
      if (lf.index >= 0) kinds[lf.index] = &lf.strides;
    for (const KernelOutput& o : k_.outputs) kinds[o.index] = &o.strides;
    std::vector<Value*> offsets;
    strides_.resize(k_.num_indexed);
    for (int j = 0; j < k_.num_indexed; ++j) {
      int64_t blk = k_.param_block(j);
      offsets.push_back(param(blk));
      for (int d = 0; d < k_.rank; ++d) {
        StrideKind sk = (*kinds[j])[d];
        Value* stride = sk == StrideKind::Any ? static_cast<Value*>(param(blk + 1 + d))
                                              : b_.getInt64(sk == StrideKind::Unit ? 1 : 0);
        strides_[j].push_back(stride);
      }
    }

    std::vector<int> outer, reduced;
    for (int d = 0; d < k_.rank; ++d) (d < k_.outer_rank() ? outer : reduced).push_back(d);

    if (!k_.is_reduction) {
      range_loop(
          outer, begin, end, offsets,
          [&](const std::vector<Value*>& off) {
            std::vector<Value*> v = body_.emit(ptrs_, off);
            for (const KernelOutput& o : k_.outputs) body_.store(o.dtype, v[o.instr], ptrs_[o.ptr], off[o.index]);
          },
          opts_.stream_stores ? k_.streamed_outputs() : std::vector<int>{});
    } else {
      const KernelOutput& out = k_.outputs.at(0);
      Value* count = b_.CreateSub(reduce_end, reduce_begin);
      auto finish = [&](Value* r) {  // mean: divide once the range is the whole reduction
        if (k_.reduce_op != Op::Mean) return r;
        Value* n = b_.CreateSIToFP(count, r->getType());
        return b_.CreateSelect(b_.CreateICmpNE(finalize, b_.getInt64(0)), b_.CreateFDiv(r, n), r);
      };
      if (k_.reduces_across_rows()) {
        column_blocks(outer, reduced, begin, end, offsets, reduce_begin, reduce_end, finish);
      } else {
        llvm::IRBuilder<> eb(&f_->getEntryBlock(), f_->getEntryBlock().begin());
        llvm::AllocaInst* acc = eb.CreateAlloca(body_.value_type(out.dtype));
        range_loop(outer, begin, end, offsets, [&](const std::vector<Value*>& outer_off) {
          b_.CreateStore(body_.identity(k_.reduce_op, out.dtype), acc);
          range_loop(reduced, reduce_begin, reduce_end, outer_off, [&](const std::vector<Value*>& off) {
            std::vector<Value*> v = body_.emit(ptrs_, off);
            Value* a = b_.CreateLoad(acc->getAllocatedType(), acc);
            b_.CreateStore(body_.combine(k_.reduce_op, out.dtype, a, v[out.instr]), acc);
          });
          body_.store(out.dtype, finish(b_.CreateLoad(acc->getAllocatedType(), acc)), ptrs_[out.ptr],
                      outer_off[out.index]);
        });
      }
    }
    b_.CreateRetVoid();
  }

 private:
  using Body = std::function<void(const std::vector<Value*>&)>;

  // The counted loop c in [from, to) of one row: body gets each operand's offset
  // row_base[j] + c * stride_j. Returns the latch, for loop metadata.
  llvm::BranchInst* row_loop(Value* from, Value* to, const std::vector<Value*>& row_base, int last, const Body& body) {
    return emit_loop(b_, from, to, b_.getInt64(1), [&](Value* c) { body(at_column(row_base, c, last)); });
  }

  // Each operand's offset at column c of dim `last`: base[j] + c * stride_j.
  std::vector<Value*> at_column(const std::vector<Value*>& base, Value* c, int last) {
    std::vector<Value*> off(base.size());
    for (size_t j = 0; j < off.size(); ++j) off[j] = b_.CreateAdd(base[j], b_.CreateMul(c, strides_[j][last]));
    return off;
  }

  // One row with streaming stores (Kernel::streamed_outputs): scalar iterations up to the first
  // 64-byte boundary of the first streamed output, then the loop the vectorizer widens, with the
  // streamed outputs addressed from that column (alignment assumptions the optimizer carries to
  // the vector stores; see mark_streaming_stores). The other streamed outputs are aligned at the
  // same column when their buffers are aligned alike, as the executor's fresh, 64-byte aligned
  // outputs of one shape are; if one is not, the vector loop runs no iteration and the rest of
  // the row takes a scalar loop (correct, slow, and never the case for the executor's outputs).
  // Returns the vector loop's latch.
  llvm::BranchInst* streamed_row(Value* col, Value* col_end, const std::vector<Value*>& row_base, int last,
                                 const Body& body, const std::vector<int>& streamed) {
    auto at = [&](const KernelOutput& o, Value* c) {
      return b_.CreateGEP(body_.memory_type(o.dtype), ptrs_[o.ptr], b_.CreateAdd(row_base[o.index], c));
    };
    auto scalar_loop = [&](Value* from, Value* to) {
      set_loop_hints(row_loop(from, to, row_base, last, body), {{"llvm.loop.vectorize.enable", b_.getFalse()}});
    };
    const KernelOutput& first = k_.outputs[streamed[0]];
    unsigned shift = llvm::Log2_64(dtype_size(first.dtype));
    Value* gap = b_.CreateAnd(b_.CreateNeg(b_.CreatePtrToInt(at(first, col), b_.getInt64Ty())), b_.getInt64(kStreamAlign - 1));
    Value* mid = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b_.CreateAdd(col, b_.CreateLShr(gap, shift)), col_end);
    // Each streamed output's pointer at mid, and whether the others are aligned there. Theirs go
    // through llvm.ptrmask: the same pointer when aligned, else rounded down within the same
    // buffer (the loop then runs no iteration), so that what is assumed holds and the outputs
    // stay apart for the optimizer.
    const llvm::DataLayout& dl = f_->getParent()->getDataLayout();
    std::vector<Value*> from_aligned = row_base, aligned = ptrs_;
    Value* all_aligned = b_.getTrue();
    for (size_t i = 0; i < streamed.size(); ++i) {
      const KernelOutput& o = k_.outputs[streamed[i]];
      Value* p = at(o, mid);
      if (i > 0) {
        Value* low = b_.CreateAnd(b_.CreatePtrToInt(p, b_.getInt64Ty()), b_.getInt64(kStreamAlign - 1));
        all_aligned = b_.CreateAnd(all_aligned, b_.CreateICmpEQ(low, b_.getInt64(0)));
        p = b_.CreateIntrinsic(llvm::Intrinsic::ptrmask, {p->getType(), b_.getInt64Ty()},
                               {p, b_.getInt64(~(kStreamAlign - 1))});
      }
      b_.CreateAlignmentAssumption(dl, p, kStreamAlign);
      aligned[o.ptr] = p;
      from_aligned[o.index] = b_.CreateNeg(mid);
    }
    scalar_loop(col, mid);
    // The vector loop starts at mid itself (what the stores' alignment is proven from); the
    // body reads the pointers from ptrs_.
    Value* vec_end = streamed.size() == 1 ? col_end : b_.CreateSelect(all_aligned, col_end, mid);
    std::swap(ptrs_, aligned);
    llvm::BranchInst* latch = row_loop(mid, vec_end, from_aligned, last, body);
    std::swap(ptrs_, aligned);
    if (streamed.size() > 1) scalar_loop(vec_end, col_end);
    return latch;
  }

  // Reduction across rows (Kernel::reduces_across_rows; one output at a time would walk its
  // input with a stride, one element per cache line, in a serial chain: sum(m, 0) of 10000 x
  // 2000 floats took 35 ms, 12x numpy). The kept space is walked row by row in blocks of up to
  // kColumnBlock outputs (a whole row of most matrices, so each thread reads memory in order),
  // whose accumulators live in a stack array; for each reduced index the block's inputs are read
  // along the row (a loop the vectorizer widens) and combined into the accumulators. Each output
  // still combines its terms in order of the reduced index, so results do not depend on the
  // block size.
  static constexpr int64_t kColumnBlock = 8192;
  void column_blocks(const std::vector<int>& outer, const std::vector<int>& reduced, Value* begin, Value* end,
                     const std::vector<Value*>& offsets, Value* reduce_begin, Value* reduce_end,
                     const std::function<Value*(Value*)>& finish) {
    const KernelOutput& out = k_.outputs.at(0);
    llvm::Type* at = body_.value_type(out.dtype);
    llvm::IRBuilder<> eb(&f_->getEntryBlock(), f_->getEntryBlock().begin());
    llvm::AllocaInst* acc = eb.CreateAlloca(llvm::ArrayType::get(at, kColumnBlock));
    acc->setAlignment(llvm::Align(64));
    int last = outer.back();
    auto slot = [&](Value* c, Value* c0) { return b_.CreateInBoundsGEP(at, acc, b_.CreateSub(c, c0)); };
    RowBody rows = [&](Value* col, Value* col_end, const std::vector<Value*>& row_base) {
      return emit_loop(b_, col, col_end, b_.getInt64(kColumnBlock), [&](Value* c0) {
        Value* c1 = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b_.CreateAdd(c0, b_.getInt64(kColumnBlock)), col_end);
        emit_loop(b_, c0, c1, b_.getInt64(1), [&](Value* c) {
          b_.CreateStore(body_.identity(k_.reduce_op, out.dtype), slot(c, c0));
        });
        range_loop(reduced, reduce_begin, reduce_end, row_base, [&](const std::vector<Value*>& off) {
          // The row of the block at this reduced index.
          emit_loop(b_, c0, c1, b_.getInt64(1), [&](Value* c) {
            std::vector<Value*> v = body_.emit(ptrs_, at_column(off, c, last));
            Value* a = b_.CreateLoad(at, slot(c, c0));
            b_.CreateStore(body_.combine(k_.reduce_op, out.dtype, a, v[out.instr]), slot(c, c0));
          });
        });
        emit_loop(b_, c0, c1, b_.getInt64(1), [&](Value* c) {
          Value* r = finish(b_.CreateLoad(at, slot(c, c0)));
          body_.store(out.dtype, r, ptrs_[out.ptr], at_column(row_base, c, last)[out.index]);
        });
      });
    };
    range_loop(outer, begin, end, offsets, nullptr, {}, &rows);
  }

  // Visits the linear indices [begin, end) of the space spanned by `dims` (last fastest), row by
  // row: for each row, the per-operand base offsets come from a div/mod decomposition, and an
  // inner counted loop walks the row.
  // rows, when given, emits each row's loop in place of the element loop calling body.
  using RowBody = std::function<llvm::BranchInst*(Value* col, Value* col_end, const std::vector<Value*>& row_base)>;
  void range_loop(const std::vector<int>& dims, Value* begin, Value* end, const std::vector<Value*>& base,
                  const Body& body, const std::vector<int>& streamed = {}, const RowBody* rows = nullptr) {
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    auto* exit = llvm::BasicBlock::Create(ctx_, "exit", f_);
    if (dims.empty()) {
      auto* once = llvm::BasicBlock::Create(ctx_, "once", f_);
      b_.CreateCondBr(b_.CreateICmpSLT(begin, end), once, exit);
      b_.SetInsertPoint(once);
      body(base);
      b_.CreateBr(exit);
      b_.SetInsertPoint(exit);
      return;
    }
    auto* header = llvm::BasicBlock::Create(ctx_, "rows", f_);
    auto* row_bb = llvm::BasicBlock::Create(ctx_, "row", f_);
    b_.CreateBr(header);
    b_.SetInsertPoint(header);
    llvm::PHINode* idx = b_.CreatePHI(b_.getInt64Ty(), 2, "idx");
    idx->addIncoming(begin, pre);
    b_.CreateCondBr(b_.CreateICmpSLT(idx, end), row_bb, exit);

    b_.SetInsertPoint(row_bb);
    int last = dims.back();
    Value* e_last = extents_[last];
    Value *row = nullptr, *col = idx;
    if (dims.size() > 1) {
      row = b_.CreateUDiv(idx, e_last);
      col = b_.CreateSub(idx, b_.CreateMul(row, e_last));
    }
    Value* n = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b_.CreateSub(e_last, col), b_.CreateSub(end, idx));
    Value* col_end = b_.CreateAdd(col, n);
    std::vector<Value*> row_base = base;
    Value* r = row;
    for (size_t i = dims.size() - 1; i-- > 0;) {
      int d = dims[i];
      Value* id = i == 0 ? r : b_.CreateURem(r, extents_[d]);
      if (i > 0) r = b_.CreateUDiv(r, extents_[d]);
      for (size_t j = 0; j < row_base.size(); ++j)
        row_base[j] = b_.CreateAdd(row_base[j], b_.CreateMul(id, strides_[j][d]));
    }

    int loops_before = ++loops_;
    llvm::BranchInst* latch;
    if (rows) {
      latch = (*rows)(col, col_end, row_base);
    } else if (streamed.empty()) {
      latch = row_loop(col, col_end, row_base, last, body);
    } else {
      latch = streamed_row(col, col_end, row_base, last, body, streamed);
    }
    // An innermost elementwise row with the packed sincos (an i64 per lane): ask for its 16
    // float lanes, or the vectorizer would size its vectors by the i64 and halve them. Not for
    // reductions, whose in-order float sums are not vectorized (forcing would only warn).
    if (loops_ == loops_before && body_.packed_sincos() && !k_.is_reduction)
      set_loop_hints(latch, {{"llvm.loop.vectorize.width", b_.getInt32(kSincosWidth)}});

    Value* idx_next = b_.CreateAdd(idx, n);
    idx->addIncoming(idx_next, b_.GetInsertBlock());
    b_.CreateBr(header);
    b_.SetInsertPoint(exit);
  }

  const Kernel& k_;
  llvm::Function* f_;
  llvm::LLVMContext& ctx_;
  llvm::IRBuilder<> b_;
  BodyEmitter body_;
  EmitOptions opts_;
  std::vector<Value*> ptrs_;
  std::vector<Value*> extents_;
  std::vector<std::vector<Value*>> strides_;
  int loops_ = 0;  // row loops emitted so far (to tell the innermost)
};

}  // namespace

std::unique_ptr<llvm::Module> emit_cpu_kernel(const Kernel& k, const std::string& name,
                                              llvm::LLVMContext& ctx, const EmitOptions& opts) {
  auto m = std::make_unique<llvm::Module>(name, ctx);
  auto* ptr = llvm::PointerType::get(ctx, 0);
  auto* i64 = llvm::Type::getInt64Ty(ctx);
  auto* void_ty = llvm::Type::getVoidTy(ctx);

  // The body takes each memory operand as its own noalias argument, so that the vectorizer
  // needs no runtime alias checks; the exported entry unpacks the pointer array into it.
  std::vector<llvm::Type*> body_args(k.num_ptrs, ptr);
  body_args.insert(body_args.end(), {ptr, i64, i64});
  auto* body = llvm::Function::Create(llvm::FunctionType::get(void_ty, body_args, false),
                                      llvm::Function::InternalLinkage, name + ".body", m.get());
  body->addFnAttr(llvm::Attribute::AlwaysInline);
  body->addFnAttr(llvm::Attribute::NoUnwind);
  for (int i = 0; i < k.num_ptrs; ++i) body->addParamAttr(i, llvm::Attribute::NoAlias);
  CpuLoopEmitter(k, body, opts).emit();

  auto* entry = llvm::Function::Create(llvm::FunctionType::get(void_ty, {ptr, ptr, i64, i64}, false),
                                       llvm::Function::ExternalLinkage, name, m.get());
  entry->addFnAttr(llvm::Attribute::NoUnwind);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", entry));
  std::vector<Value*> args;
  for (int i = 0; i < k.num_ptrs; ++i)
    args.push_back(b.CreateAlignedLoad(ptr, b.CreateConstInBoundsGEP1_64(ptr, entry->getArg(0), i), llvm::Align(8)));
  args.insert(args.end(), {entry->getArg(1), entry->getArg(2), entry->getArg(3)});
  b.CreateCall(body, args);
  b.CreateRetVoid();
  return m;
}

}  // namespace arrayc::detail
