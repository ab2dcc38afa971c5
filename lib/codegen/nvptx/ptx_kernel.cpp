// The nvptx target: the shared body inside a GPU thread structure (see ptx_kernel.h for the
// calling convention and the structure of elementwise and reduction kernels), compiled by
// ptx_compile.cpp (libdevice, O3 and the NVPTX backend).
#include "codegen/nvptx/ptx_kernel.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <algorithm>
#include <cctype>
#include <functional>

#include "codegen/llvm_util.h"
#include "codegen/loop_space.h"
#include "codegen/nvptx/ptx_compile.h"

namespace arrayc::detail {
namespace {

using llvm::Value;

constexpr unsigned kGlobal = 1, kShared = 3;
constexpr int kVectorBytes = 16;

// Elements per thread of the contiguous path, or 1 when the kernel does not qualify: rank 1,
// elementwise, every indexed operand of unit or zero stride, and some unit-stride memory operand.
int vector_width(const Kernel& k) {
  if (k.is_reduction || k.row_chain || k.rank != 1) return 1;
  for (const auto* s : stride_kinds(k))
    if ((*s)[0] == StrideKind::Any) return 1;
  int widest = 0;
  for (const KernelLeaf& lf : k.leaves)
    if (lf.op == Op::Buffer && lf.index >= 0 && lf.strides[0] == StrideKind::Unit)
      widest = std::max(widest, static_cast<int>(dtype_size(lf.dtype)));
  for (const KernelOutput& o : k.outputs)
    if (o.strides[0] == StrideKind::Unit) widest = std::max(widest, static_cast<int>(dtype_size(o.dtype)));
  if (widest == 0) return 1;
  return std::clamp(kVectorBytes / widest, 1, 4);
}

// row chains (issue 29): how many elements of a row each thread holds in registers on the
// register path (PtxKernel::elements_per_thread of a row chain; the launch picks the block size
// from it). On an H100, W10 (rows of 4096 float32) took 0.056 ms at 16 (256 threads a row,
// 61 registers), 0.058 at 32 and 0.073 at 8; capping the registers to fit more blocks per SM
// (.maxnreg 48, 40, 32) made it slower (0.062 to 0.082 ms).
constexpr int kRowChainElements = 16;

class PtxEmitter {
 public:
  PtxEmitter(const Kernel& k, llvm::Function* f, const EmitOptions& opts, int width)
      : k_(k), f_(f), ctx_(f->getContext()), b_(llvm::BasicBlock::Create(ctx_, "entry", f)),
        body_(b_, k, opts), width_(width) {}

  void emit() {
    int arg = 0;
    for (int i = 0; i < k_.num_ptrs; ++i) ptrs_.push_back(f_->getArg(arg++));
    space_ = LoopSpace::unpack(b_, k_, [&](int64_t i) -> Value* { return f_->getArg(arg + i); });
    body_.set_constants(space_.constants);
    arg += k_.num_params();
    Value* begin = f_->getArg(arg++);
    Value* end = f_->getArg(arg++);
    if (k_.row_chain) {
      row_chain(begin, end);
    } else if (k_.is_reduction) {
      Value* chunk_stride = f_->getArg(arg++);
      Value* mean_count = f_->getArg(arg++);
      reduction(begin, end, chunk_stride, mean_count);
    } else if (width_ > 1) {
      contiguous(begin, end);
    } else {
      std::vector<int> dims(k_.rank);
      for (int d = 0; d < k_.rank; ++d) dims[d] = d;
      loop(b_.CreateAdd(begin, global_id()), end, global_size(), [&](Value* i) {
        std::vector<Value*> off = space_.offsets_at(b_, dims, i, space_.offsets);
        store_outputs(body_.emit(ptrs_, off), off);
      });
    }
    b_.CreateRetVoid();
  }

 private:
  using Body = std::function<void(Value*)>;

  Value* sreg(llvm::Intrinsic::ID id) { return read_sreg(b_, id); }
  Value* global_id() {
    return b_.CreateAdd(b_.CreateMul(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x),
                                     sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x)),
                        sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x));
  }
  Value* global_size() {
    return b_.CreateMul(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x),
                        sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x));
  }

  // for (i = start; i < end; i += step) body(i), unrolled `unroll` times (1: not at all). The
  // grid-stride loops are not: their chunks already give each thread 16 bytes in flight, and
  // the PTX keeps one copy of the body per path. Reductions' row loops are, so that each
  // thread has several loads in flight (their adds chain; the loads do not).
  void loop(Value* start, Value* end, Value* step, const Body& body, int unroll = 1) {
    llvm::BranchInst* latch = emit_loop(b_, start, end, step, body);
    if (unroll == 1) set_loop_hints(latch, {{"llvm.loop.unroll.disable", nullptr}});
    else set_loop_hints(latch, {{"llvm.loop.unroll.count", b_.getInt32(unroll)}});
  }

  void if_then(Value* cond, const std::function<void()>& body) { emit_if(b_, cond, body); }

  void store_outputs(const std::vector<Value*>& v, const std::vector<Value*>& off) {
    for (const KernelOutput& o : k_.outputs) body_.store(o.dtype, v[o.instr], ptrs_[o.ptr], off[o.index]);
  }

  // Rank 1, unit or zero strides. Vector path over chunks of width_ elements when aligned, then
  // a scalar loop for the rest (the tail, or everything when misaligned).
  void contiguous(Value* begin, Value* end) {
    auto unit = [&](int index) { return (*stride_kinds(k_)[index])[0] == StrideKind::Unit; };
    struct Mem { DType dtype; int ptr, index; bool output; int instr; };
    std::vector<Mem> mem;  // unit-stride memory operands
    for (const KernelLeaf& lf : k_.leaves)
      if (lf.op == Op::Buffer && lf.index >= 0 && unit(lf.index)) mem.push_back({lf.dtype, lf.ptr, lf.index, false, -1});
    for (const KernelOutput& o : k_.outputs)
      if (unit(o.index)) mem.push_back({o.dtype, o.ptr, o.index, true, o.instr});

    Value* aligned = b_.getTrue();
    for (const Mem& m : mem) {
      Value* p = b_.CreateInBoundsGEP(body_.memory_type(m.dtype), ptrs_[m.ptr], b_.CreateAdd(space_.offsets[m.index], begin));
      uint64_t mask = static_cast<uint64_t>(width_) * dtype_size(m.dtype) - 1;
      Value* low = b_.CreateAnd(b_.CreatePtrToInt(p, b_.getInt64Ty()), b_.getInt64(mask));
      aligned = b_.CreateAnd(aligned, b_.CreateICmpEQ(low, b_.getInt64(0)));
    }
    Value* n = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, b_.CreateSub(end, begin), b_.getInt64(0));
    Value* w = b_.getInt64(width_);
    Value* chunks = b_.CreateSelect(aligned, b_.CreateUDiv(n, w), b_.getInt64(0));
    auto offsets_for = [&](Value* i) {
      std::vector<Value*> off = space_.offsets;
      for (int j = 0; j < k_.num_indexed; ++j)
        if (unit(j)) off[j] = b_.CreateAdd(off[j], i);
      return off;
    };

    // Inputs read through their own pointer and index only are loaded as one vector per chunk
    // into a private array that the body then reads (SROA turns it into registers): all loads
    // come first, even when the body branches (f64 math). Others get an alignment assumption,
    // which lets the backend's load/store vectorizer merge their scalar loads.
    //
    // The vector loads run one chunk ahead (`next`): a thread issues the load of its next
    // grid-stride chunk before it computes the current one, so its 16 bytes stay in flight
    // during the math. Without this, a kernel with heavy math per byte (W8) spent most of its
    // cycles waiting on its own load with nothing else outstanding (docs/cuda.md).
    std::vector<int> ptr_uses(k_.num_ptrs, 0), index_uses(k_.num_indexed, 0);
    for (const KernelLeaf& lf : k_.leaves) {
      if (lf.ptr >= 0) ++ptr_uses[lf.ptr];
      if (lf.index >= 0) ++index_uses[lf.index];
    }
    for (const KernelOutput& o : k_.outputs) ++ptr_uses[o.ptr], ++index_uses[o.index];
    llvm::IRBuilder<> eb(&f_->getEntryBlock(), f_->getEntryBlock().begin());
    std::vector<llvm::AllocaInst*> local(k_.num_ptrs, nullptr), next(k_.num_ptrs, nullptr);
    for (const Mem& m : mem)
      if (!m.output && ptr_uses[m.ptr] == 1 && index_uses[m.index] == 1) {
        llvm::Type* vt = llvm::FixedVectorType::get(body_.memory_type(m.dtype), width_);
        local[m.ptr] = eb.CreateAlloca(vt);
        next[m.ptr] = eb.CreateAlloca(vt);
      }
    // Loads chunk c of every vector-loaded input into `next`.
    auto load_next = [&](Value* c) {
      Value* i0 = b_.CreateAdd(begin, b_.CreateMul(c, w));
      for (const Mem& m : mem) {
        llvm::AllocaInst* a = next[m.ptr];  // null for outputs and unvectorized inputs
        if (!a) continue;
        Value* p = b_.CreateInBoundsGEP(body_.memory_type(m.dtype), ptrs_[m.ptr], b_.CreateAdd(space_.offsets[m.index], i0));
        b_.CreateStore(b_.CreateAlignedLoad(a->getAllocatedType(), p, llvm::Align(width_ * dtype_size(m.dtype))), a);
      }
    };
    Value* first = global_id();
    if_then(b_.CreateICmpULT(first, chunks), [&] { load_next(first); });

    loop(first, chunks, global_size(), [&](Value* c) {
      Value* i0 = b_.CreateAdd(begin, b_.CreateMul(c, w));
      for (const Mem& m : mem)
        if (llvm::AllocaInst* a = local[m.ptr])
          b_.CreateStore(b_.CreateLoad(a->getAllocatedType(), next[m.ptr]), a);
      // The next chunk, or this thread's last one again (a valid address, no branch). The grid
      // size and the last chunk are recomputed here rather than kept live across the loop: two
      // more 64-bit values held through W8's body made it 3% slower on an H200.
      Value* last = b_.CreateSub(chunks, b_.getInt64(1));
      load_next(b_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, b_.CreateAdd(c, global_size()), last));
      std::vector<Value*> ptrs = ptrs_;
      std::vector<int> local_index;
      for (const Mem& m : mem) {
        if (m.output) continue;
        Value* p = b_.CreateInBoundsGEP(body_.memory_type(m.dtype), ptrs_[m.ptr], b_.CreateAdd(space_.offsets[m.index], i0));
        if (llvm::AllocaInst* a = local[m.ptr]) {
          ptrs[m.ptr] = a;
          local_index.push_back(m.index);
        } else {
          b_.CreateAlignmentAssumption(f_->getParent()->getDataLayout(), p, width_ * dtype_size(m.dtype));
        }
      }
      std::vector<std::vector<Value*>> values, offs;
      for (int e = 0; e < width_; ++e) {
        offs.push_back(offsets_for(b_.CreateAdd(i0, b_.getInt64(e))));
        std::vector<Value*> off = offs.back();
        for (int j : local_index) off[j] = b_.getInt64(e);
        values.push_back(body_.emit(ptrs, off));
      }
      for (const KernelOutput& o : k_.outputs) {
        if (!unit(o.index)) {  // zero stride: every element writes the same place; keep the last
          body_.store(o.dtype, values.back()[o.instr], ptrs_[o.ptr], offs.back()[o.index]);
          continue;
        }
        llvm::Type* et = body_.memory_type(o.dtype);
        Value* vec = llvm::PoisonValue::get(llvm::FixedVectorType::get(et, width_));
        for (int e = 0; e < width_; ++e) {
          Value* v = values[e][o.instr];
          if (o.dtype == DType::Bool) v = b_.CreateZExt(v, et);
          vec = b_.CreateInsertElement(vec, v, b_.getInt64(e));
        }
        Value* p = b_.CreateInBoundsGEP(et, ptrs_[o.ptr], offs[0][o.index]);
        b_.CreateAlignedStore(vec, p, llvm::Align(width_ * dtype_size(o.dtype)));
      }
    });
    Value* rest = b_.CreateAdd(begin, b_.CreateMul(chunks, w));
    loop(b_.CreateAdd(rest, global_id()), end, global_size(), [&](Value* i) {
      std::vector<Value*> off = offsets_for(i);
      store_outputs(body_.emit(ptrs_, off), off);
    });
  }

  Value* shuffle(Value* v, int lane_mask) { return shuffle_xor(b_, v, lane_mask); }

  Value* warp_reduce(Value* v, DType t, Op op) {
    for (int m = 16; m >= 1; m /= 2) v = body_.combine(op, t, v, shuffle(v, m));
    return v;
  }
  // A reduction kernel's partials, combined as its accumulator is (acc_combine: double for float sums).
  Value* warp_reduce(Value* v, DType t) {
    for (int m = 16; m >= 1; m /= 2) v = acc_combine(t, v, shuffle(v, m));
    return v;
  }

  // row chains (issue 29). A block per row (grid-stride over the rows of [begin, end)). Two
  // paths, chosen per launch (the same for every row): a row of at most blockDim.x *
  // kRowChainElements elements takes the register path (register_row): each thread reads its
  // part of the row once, in 16-byte vectors where the row is aligned, keeps it in registers
  // through every pass, and stores from there. Longer rows take strided_row, which reads the row
  // from memory once per pass (the later reads mostly from L1 or L2). The launch
  // (launch_plan.cpp) gives a row that fits the fewest warps that hold it.
  struct RowSetup {
    std::vector<int> outer, row;
    std::vector<std::vector<int>> passes;
    std::vector<llvm::GlobalVariable*> slots;  // per row reduction: the warps' partials
    std::vector<llvm::AllocaInst*> acc;        // per row reduction (strided_row)
    std::vector<int> stored;
    Value* count;
  };

  void row_chain(Value* begin, Value* end) {
    RowSetup rs;
    for (int d = 0; d < k_.rank - 1; ++d) rs.outer.push_back(d);
    rs.row = {k_.rank - 1};
    rs.passes = k_.row_passes();
    llvm::IRBuilder<> eb(&f_->getEntryBlock(), f_->getEntryBlock().begin());
    rs.acc.assign(k_.body.size(), nullptr);
    rs.slots.assign(k_.body.size(), nullptr);
    for (const std::vector<int>& pass : rs.passes)
      for (int i : pass) {
        DType t = k_.body[i].dtype;
        rs.acc[i] = eb.CreateAlloca(body_.value_type(t));
        auto* ty = llvm::ArrayType::get(t == DType::Bool ? b_.getInt8Ty() : body_.value_type(t), 32);
        rs.slots[i] = new llvm::GlobalVariable(*f_->getParent(), ty, false, llvm::GlobalValue::InternalLinkage,
                                               llvm::UndefValue::get(ty), f_->getName() + ".row" + std::to_string(i),
                                               nullptr, llvm::GlobalValue::NotThreadLocal, kShared);
      }
    rs.count = b_.CreateSub(space_.reduce_end, space_.reduce_begin);
    for (const KernelOutput& o : k_.outputs) rs.stored.push_back(o.instr);
    auto rows = [&](void (PtxEmitter::*row_body)(const RowSetup&, const std::vector<Value*>&)) {
      loop(b_.CreateAdd(begin, sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x)), end,
           sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x),
           [&](Value* o) { (this->*row_body)(rs, space_.offsets_at(b_, rs.outer, o, space_.offsets)); });
    };
    Value* capacity = b_.CreateMul(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x), b_.getInt64(kRowChainElements));
    Value* fits = b_.CreateAnd(b_.CreateICmpSGE(rs.count, b_.getInt64(1)), b_.CreateICmpSLE(rs.count, capacity));
    if_else(fits, [&] { rows(&PtxEmitter::register_row); }, [&] { rows(&PtxEmitter::strided_row); });
  }

  void if_else(Value* cond, const std::function<void()>& then, const std::function<void()>& otherwise) {
    emit_if(b_, cond, then, otherwise);
  }

  // The threads fold the row at a stride of the block into their own accumulators for each pass
  // of row_passes(), each reduction is combined across the block (block_reduce), then the threads
  // store the outputs.
  void strided_row(const RowSetup& rs, const std::vector<Value*>& outer_off) {
    Value* tid = sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
    Value* ntid = sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x);
    std::vector<Value*> known(k_.body.size(), nullptr);
    for (const std::vector<int>& pass : rs.passes) {
      std::vector<int> args;
      for (int i : pass) {
        args.push_back(k_.body[i].args[0]);
        b_.CreateStore(body_.identity(k_.body[i].op, k_.body[i].dtype), rs.acc[i]);
      }
      const std::vector<bool> need = k_.instrs_needed(args);
      strided(b_.CreateAdd(space_.reduce_begin, tid), space_.reduce_end, ntid, [&](Value* c) {
        std::vector<Value*> v = body_.emit(ptrs_, space_.offsets_at(b_, rs.row, c, outer_off), known, need);
        for (int i : pass) {
          const KernelInstr& in = k_.body[i];
          b_.CreateStore(body_.combine(in.op, in.dtype, b_.CreateLoad(rs.acc[i]->getAllocatedType(), rs.acc[i]), v[in.args[0]]), rs.acc[i]);
        }
      });
      for (int i : pass) {
        const KernelInstr& in = k_.body[i];
        Value* r = block_reduce(in.op, in.dtype, b_.CreateLoad(rs.acc[i]->getAllocatedType(), rs.acc[i]), rs.slots[i]);
        known[i] = in.op == Op::Mean ? b_.CreateFDiv(r, b_.CreateSIToFP(rs.count, r->getType())) : r;
      }
    }
    const std::vector<bool> need = k_.instrs_needed(rs.stored);
    strided(b_.CreateAdd(space_.reduce_begin, tid), space_.reduce_end, ntid, [&](Value* c) {
      std::vector<Value*> off = space_.offsets_at(b_, rs.row, c, outer_off);
      store_outputs(body_.emit(ptrs_, off, known, need), off);
    });
  }

  // The register path's memory operands along the row: inputs read through their own pointer and
  // index only (loaded as vectors into a private array the body reads, as contiguous() does) and
  // outputs, each of unit stride along the row; and the vector width they share (elements).
  struct RowMem { DType dtype; int ptr, index; bool output; };
  std::vector<RowMem> row_mem() const {
    std::vector<int> ptr_uses(k_.num_ptrs, 0), index_uses(k_.num_indexed, 0);
    for (const KernelLeaf& lf : k_.leaves) {
      if (lf.ptr >= 0) ++ptr_uses[lf.ptr];
      if (lf.index >= 0) ++index_uses[lf.index];
    }
    for (const KernelOutput& o : k_.outputs) ++ptr_uses[o.ptr], ++index_uses[o.index];
    std::vector<RowMem> mem;
    const int last = k_.rank - 1;
    for (const KernelLeaf& lf : k_.leaves)
      if (lf.op == Op::Buffer && lf.index >= 0 && lf.ptr >= 0 && lf.strides[last] == StrideKind::Unit &&
          ptr_uses[lf.ptr] == 1 && index_uses[lf.index] == 1)
        mem.push_back({lf.dtype, lf.ptr, lf.index, false});
    for (const KernelOutput& o : k_.outputs)
      if (o.strides[last] == StrideKind::Unit) mem.push_back({o.dtype, o.ptr, o.index, true});
    return mem;
  }
  int row_width() const {
    int widest = 0;
    for (const RowMem& m : row_mem()) widest = std::max(widest, static_cast<int>(dtype_size(m.dtype)));
    return widest == 0 ? 1 : std::clamp(kVectorBytes / widest, 1, 4);
  }

  // Thread t holds the row's elements q = (j * blockDim.x + t) * W + e (e < W), chunk j <
  // kRowChainElements / W: each chunk one coalesced vector access across the block. W is the
  // vector width where every vector operand's row start is aligned to it and the row is a
  // multiple of it, else 1 (one element per chunk). A chunk past the row's end reads the row's
  // first chunk instead (a valid address), is left out of the reductions and is not stored.
  // Each element's values of one pass are kept for the next, so the body is computed once per
  // element (exp once in softmax).
  void register_row(const RowSetup& rs, const std::vector<Value*>& outer_off) {
    const int W = row_width();
    const std::vector<RowMem> mem = row_mem();
    std::vector<Value*> start = space_.offsets_at(b_, rs.row, space_.reduce_begin, outer_off);
    std::vector<Value*> base(k_.num_ptrs, nullptr);
    Value* vectors = W > 1 ? b_.CreateICmpEQ(b_.CreateSRem(rs.count, b_.getInt64(W)), b_.getInt64(0)) : nullptr;
    for (const RowMem& m : mem) {
      base[m.ptr] = b_.CreateInBoundsGEP(body_.memory_type(m.dtype), ptrs_[m.ptr], start[m.index]);
      if (!vectors) continue;
      Value* low = b_.CreateAnd(b_.CreatePtrToInt(base[m.ptr], b_.getInt64Ty()),
                                b_.getInt64(static_cast<uint64_t>(W) * dtype_size(m.dtype) - 1));
      vectors = b_.CreateAnd(vectors, b_.CreateICmpEQ(low, b_.getInt64(0)));
    }
    if (vectors)
      if_else(vectors, [&] { register_row_at(rs, outer_off, mem, base, W); },
              [&] { register_row_at(rs, outer_off, mem, base, 1); });
    else
      register_row_at(rs, outer_off, mem, base, 1);
  }

  // threadIdx.x read where it is used, by an asm statement the optimizer keeps in place: from the
  // special register, the chunks' positions are loop invariants of the row loop, and hoisted out
  // of it they held a register pair each for the whole kernel (115 registers at 16 elements).
  Value* tid_here() {
    auto* fty = llvm::FunctionType::get(b_.getInt32Ty(), false);
    Value* t = b_.CreateCall(llvm::InlineAsm::get(fty, "mov.u32 $0, %tid.x;", "=r", /*hasSideEffects=*/true), {});
    return b_.CreateZExt(t, b_.getInt64Ty());
  }

  void register_row_at(const RowSetup& rs, const std::vector<Value*>& outer_off, const std::vector<RowMem>& mem,
                       const std::vector<Value*>& base, int W) {
    const int J = kRowChainElements / W;
    // Whether chunk j is in the row, and its position (0 when not). Recomputed in each phase
    // (load, each pass, store) from a fresh threadIdx.x, so that J positions are not held in
    // registers from the loads to the stores (89 registers at 16 elements of one each).
    std::vector<Value*> in(J), at(J);
    auto positions = [&] {
      Value* tid = tid_here();
      Value* ntid = sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x);
      for (int j = 0; j < J; ++j) {
        Value* q = b_.CreateMul(b_.CreateAdd(b_.CreateMul(b_.getInt64(j), ntid), tid), b_.getInt64(W));
        in[j] = b_.CreateICmpSLT(q, rs.count);
        at[j] = b_.CreateSelect(in[j], q, b_.getInt64(0));
      }
    };
    positions();
    llvm::IRBuilder<> eb(&f_->getEntryBlock(), f_->getEntryBlock().begin());
    std::vector<std::vector<Value*>> chunk_ptrs(J, ptrs_);
    for (int j = 0; j < J; ++j) {
      for (const RowMem& m : mem) {
        if (m.output) continue;
        llvm::Type* et = body_.memory_type(m.dtype);
        auto* vt = llvm::FixedVectorType::get(et, W);
        llvm::AllocaInst* local = eb.CreateAlloca(vt);
        Value* p = b_.CreateInBoundsGEP(et, base[m.ptr], at[j]);
        b_.CreateStore(b_.CreateAlignedLoad(vt, p, llvm::Align(W * dtype_size(m.dtype))), local);
        chunk_ptrs[j][m.ptr] = local;
      }
    }
    // The body of element (j, e), given what earlier passes computed for it (vals) and the row
    // reductions known so far; operands other than the vector inputs are read through offsets.
    std::vector<std::vector<Value*>> vals(J * W, std::vector<Value*>(k_.body.size(), nullptr));
    std::vector<Value*> known_row(k_.body.size(), nullptr);
    auto emit_elem = [&](int j, int e, const std::vector<bool>& need) {
      std::vector<Value*>& mine = vals[j * W + e];
      std::vector<Value*> known = mine;
      for (size_t i = 0; i < known.size(); ++i)
        if (known_row[i]) known[i] = known_row[i];
      Value* c = b_.CreateAdd(space_.reduce_begin, b_.CreateAdd(at[j], b_.getInt64(e)));
      std::vector<Value*> off = space_.offsets_at(b_, rs.row, c, outer_off);
      for (const RowMem& m : mem)
        if (!m.output) off[m.index] = b_.getInt64(e);
      std::vector<Value*> v = body_.emit(chunk_ptrs[j], off, known, need);
      for (size_t i = 0; i < v.size(); ++i)
        if (v[i] && !known_row[i]) mine[i] = v[i];
      return v;
    };
    for (const std::vector<int>& pass : rs.passes) {
      std::vector<int> args;
      std::vector<Value*> acc;
      for (int i : pass) {
        args.push_back(k_.body[i].args[0]);
        acc.push_back(body_.identity(k_.body[i].op, k_.body[i].dtype));
      }
      const std::vector<bool> need = k_.instrs_needed(args);
      positions();
      for (int j = 0; j < J; ++j) {
        std::vector<Value*> chunk = acc;  // the chunk's elements in order, then into the total
        for (int e = 0; e < W; ++e) {
          std::vector<Value*> v = emit_elem(j, e, need);
          for (size_t a = 0; a < pass.size(); ++a) {
            const KernelInstr& ki = k_.body[pass[a]];
            chunk[a] = body_.combine(ki.op, ki.dtype, chunk[a], v[ki.args[0]]);
          }
        }
        for (size_t a = 0; a < pass.size(); ++a) acc[a] = b_.CreateSelect(in[j], chunk[a], acc[a]);
      }
      for (size_t a = 0; a < pass.size(); ++a) {
        const KernelInstr& ki = k_.body[pass[a]];
        Value* r = block_reduce(ki.op, ki.dtype, acc[a], rs.slots[pass[a]]);
        known_row[pass[a]] = ki.op == Op::Mean ? b_.CreateFDiv(r, b_.CreateSIToFP(rs.count, r->getType())) : r;
      }
    }
    const std::vector<bool> need = k_.instrs_needed(rs.stored);
    positions();
    for (int j = 0; j < J; ++j) {
      std::vector<std::vector<Value*>> values;
      for (int e = 0; e < W; ++e) values.push_back(emit_elem(j, e, need));
      if_then(in[j], [&] {
        for (const KernelOutput& o : k_.outputs) {
          llvm::Type* et = body_.memory_type(o.dtype);
          if (!base[o.ptr]) {  // not unit stride along the row: element by element
            for (int e = 0; e < W; ++e) {
              Value* c = b_.CreateAdd(space_.reduce_begin, b_.CreateAdd(at[j], b_.getInt64(e)));
              body_.store(o.dtype, values[e][o.instr], ptrs_[o.ptr], space_.offsets_at(b_, rs.row, c, outer_off)[o.index]);
            }
            continue;
          }
          Value* vec = llvm::PoisonValue::get(llvm::FixedVectorType::get(et, W));
          for (int e = 0; e < W; ++e) {
            Value* v = values[e][o.instr];
            if (o.dtype == DType::Bool) v = b_.CreateZExt(v, et);
            else if (v->getType() != et) v = b_.CreateFPCast(v, et);
            vec = b_.CreateInsertElement(vec, v, b_.getInt64(e));
          }
          b_.CreateAlignedStore(vec, b_.CreateInBoundsGEP(et, base[o.ptr], at[j]), llvm::Align(W * dtype_size(o.dtype)));
        }
      });
    }
  }

  // body(c) for c = first, first + step, ... below end, counted and unrolled 4 times (as fold()),
  // so that each thread has 4 loads in flight.
  void strided(Value* first, Value* end, Value* step, const Body& body) {
    Value* left = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, b_.CreateSub(end, first), b_.getInt64(0));
    Value* iters = b_.CreateUDiv(b_.CreateAdd(left, b_.CreateSub(step, b_.getInt64(1))), step);
    loop(b_.getInt64(0), iters, b_.getInt64(1), [&](Value* i) { body(b_.CreateAdd(first, b_.CreateMul(i, step))); }, 4);
  }

  // v combined across the block, in warp order, every thread getting the result (one warp's
  // shuffles, then the warps' partials through 32 shared slots).
  Value* block_reduce(Op op, DType t, Value* v, llvm::GlobalVariable* slots) {
    llvm::Type* slot_ty = slots->getValueType()->getArrayElementType();
    Value* tid = sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
    Value* warp = b_.CreateLShr(tid, 5);
    Value* warps = b_.CreateLShr(b_.CreateAdd(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x), b_.getInt64(31)), 5);
    auto slot = [&](Value* w) { return b_.CreateInBoundsGEP(slots->getValueType(), slots, {b_.getInt64(0), w}); };
    Value* partial = warp_reduce(v, t, op);
    if_then(b_.CreateICmpEQ(b_.CreateAnd(tid, b_.getInt64(31)), b_.getInt64(0)), [&] {
      b_.CreateStore(t == DType::Bool ? b_.CreateZExt(partial, slot_ty) : partial, slot(warp));
    });
    barrier();
    llvm::IRBuilder<> eb(&f_->getEntryBlock(), f_->getEntryBlock().begin());
    llvm::AllocaInst* r = eb.CreateAlloca(body_.value_type(t));
    b_.CreateStore(body_.identity(op, t), r);
    loop(b_.getInt64(0), warps, b_.getInt64(1), [&](Value* w) {
      Value* s = b_.CreateLoad(slot_ty, slot(w));
      if (t == DType::Bool) s = b_.CreateICmpNE(s, b_.getInt8(0));
      b_.CreateStore(body_.combine(op, t, b_.CreateLoad(r->getAllocatedType(), r), s), r);
    });
    Value* result = b_.CreateLoad(r->getAllocatedType(), r);
    barrier();  // the slots are reused by the next row
    return result;
  }

  // Float sums (sum, mean) of float32, float16 and bfloat16 accumulate in double: each thread's
  // terms, the warps' and the blocks' partials; the result is rounded once to the output's
  // dtype (a split reduction's partials once each). A float32 chain of a few hundred terms per
  // thread was off by 3.7e-5 relative for 6.4e7 tenths (issue 26); the host blocks its sums
  // into a double total for the same reason (cpu_kernel.cpp).
  bool wide_sum(DType t) const {
    return gpu_sums_in_double(k_.reduce_op, t);
  }
  llvm::Type* acc_type(DType t) { return wide_sum(t) ? b_.getDoubleTy() : body_.value_type(t); }
  Value* acc_identity(DType t) {
    return wide_sum(t) ? llvm::ConstantFP::get(b_.getDoubleTy(), 0.0) : body_.identity(k_.reduce_op, t);
  }
  Value* acc_combine(DType t, Value* acc, Value* v) {
    return wide_sum(t) ? b_.CreateFAdd(acc, v) : body_.combine(k_.reduce_op, t, acc, v);
  }
  Value* widen(DType t, Value* v) { return wide_sum(t) ? b_.CreateFPExt(v, b_.getDoubleTy()) : v; }
  Value* narrow(DType t, Value* v) { return wide_sum(t) ? b_.CreateFPTrunc(v, body_.value_type(t)) : v; }

  // acc = combine(acc, the body at reduced index r) for r = first, first + step, ... below end.
  // Counted (0 .. iters) and unrolled 4 times, so that the copies share one block and their
  // loads can all be in flight before the combines need them.
  void fold(Value* first, Value* end, Value* step, const std::vector<int>& reduced, const std::vector<Value*>& outer_off,
            llvm::AllocaInst* acc) {
    const KernelOutput& out = k_.outputs.at(0);
    Value* left = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, b_.CreateSub(end, first), b_.getInt64(0));
    Value* iters = b_.CreateUDiv(b_.CreateAdd(left, b_.CreateSub(step, b_.getInt64(1))), step);
    loop(b_.getInt64(0), iters, b_.getInt64(1), [&](Value* i) {
      Value* r = b_.CreateAdd(first, b_.CreateMul(i, step));
      std::vector<Value*> v = body_.emit(ptrs_, space_.offsets_at(b_, reduced, r, outer_off));
      Value* a = b_.CreateLoad(acc->getAllocatedType(), acc);
      b_.CreateStore(acc_combine(out.dtype, a, widen(out.dtype, v[out.instr])), acc);
    }, 4);
  }

  // A reduction across memory rows (Kernel::reduces_across_rows, sum(m, 0) of a row-major m):
  // block-per-output would have a warp read 32 rows of one column, 4 bytes of each 32-byte
  // sector. Here a block takes kTile adjacent outputs, one per lane, and its warps take every
  // warps-th reduced index, so that a warp reads kTile adjacent elements of one row. The warps'
  // partials meet in shared memory and are combined in warp order: each output's terms are
  // combined in a fixed order (per warp in order of the reduced index, then warp by warp).
  static constexpr int kTile = 32, kMaxWarps = 32;
  // What reduction() sets up for either scheme.
  struct ReduceSetup {
    llvm::Type *ty, *slot_ty;
    llvm::ArrayType* smem_ty;
    llvm::GlobalVariable* smem;
    llvm::AllocaInst* acc;
    std::vector<int> outer, reduced;
    Value *lane, *warp, *warps, *y, *chunk_begin, *chunk_end, *count;
  };
  void tiled_reduction(const ReduceSetup& rs, Value* begin, Value* end, Value* chunk_stride) {
    const KernelOutput& out = k_.outputs.at(0);
    auto slot = [&](Value* w) {
      Value* i = b_.CreateAdd(b_.CreateMul(w, b_.getInt64(kTile)), rs.lane);
      return b_.CreateInBoundsGEP(rs.smem_ty, rs.smem, {b_.getInt64(0), i});
    };
    Value* tiles = b_.CreateUDiv(b_.CreateAdd(b_.CreateSub(end, begin), b_.getInt64(kTile - 1)), b_.getInt64(kTile));
    loop(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x), tiles, sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x),
         [&](Value* t) {
           Value* o = b_.CreateAdd(begin, b_.CreateAdd(b_.CreateMul(t, b_.getInt64(kTile)), rs.lane));
           Value* valid = b_.CreateICmpSLT(o, end);
           std::vector<Value*> outer_off = space_.offsets_at(b_, rs.outer, b_.CreateSelect(valid, o, begin), space_.offsets);
           b_.CreateStore(acc_identity(out.dtype), rs.acc);
           if_then(valid, [&] { fold(b_.CreateAdd(rs.chunk_begin, rs.warp), rs.chunk_end, rs.warps, rs.reduced, outer_off, rs.acc); });
           Value* mine = b_.CreateLoad(rs.ty, rs.acc);
           b_.CreateStore(out.dtype == DType::Bool ? b_.CreateZExt(mine, rs.slot_ty) : mine, slot(rs.warp));
           barrier();
           if_then(b_.CreateAnd(b_.CreateICmpEQ(rs.warp, b_.getInt64(0)), valid), [&] {
             b_.CreateStore(acc_identity(out.dtype), rs.acc);
             loop(b_.getInt64(0), rs.warps, b_.getInt64(1), [&](Value* w) {
               Value* s = b_.CreateLoad(rs.slot_ty, slot(w));
               if (out.dtype == DType::Bool) s = b_.CreateICmpNE(s, b_.getInt8(0));
               b_.CreateStore(acc_combine(out.dtype, b_.CreateLoad(rs.ty, rs.acc), s), rs.acc);
             });
             Value* result = narrow(out.dtype, space_.finish(b_, k_, b_.CreateLoad(rs.ty, rs.acc), rs.count));
             body_.store(out.dtype, result, ptrs_[out.ptr], b_.CreateAdd(outer_off[out.index], b_.CreateMul(rs.y, chunk_stride)));
           });
           barrier();  // the slots are reused by the next tile
         });
  }

  void barrier() { b_.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {}); }

  void reduction(Value* begin, Value* end, Value* chunk_stride, Value* mean_count) {
    const KernelOutput& out = k_.outputs.at(0);
    llvm::Type* ty = acc_type(out.dtype);
    llvm::Type* slot_ty = out.dtype == DType::Bool ? b_.getInt8Ty() : ty;
    const bool tiled = k_.reduces_across_rows();
    auto* smem_ty = llvm::ArrayType::get(slot_ty, tiled ? kTile * kMaxWarps : 32);
    auto* smem = new llvm::GlobalVariable(*f_->getParent(), smem_ty, false, llvm::GlobalValue::InternalLinkage,
                                          llvm::UndefValue::get(smem_ty), f_->getName() + ".partials", nullptr,
                                          llvm::GlobalValue::NotThreadLocal, kShared);
    llvm::IRBuilder<> eb(&f_->getEntryBlock(), f_->getEntryBlock().begin());
    llvm::AllocaInst* acc = eb.CreateAlloca(ty);

    std::vector<int> outer, reduced;
    for (int d = 0; d < k_.rank; ++d) (d < k_.outer_rank() ? outer : reduced).push_back(d);
    Value* tid = sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
    Value* ntid = sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x);
    Value* lane = b_.CreateAnd(tid, b_.getInt64(31));
    Value* warp = b_.CreateLShr(tid, 5);
    Value* warps = b_.CreateLShr(b_.CreateAdd(ntid, b_.getInt64(31)), 5);
    // This block's chunk of the reduced range (the whole range unless gridDim.y > 1).
    Value* y = sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y);
    Value* ny = sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_y);
    Value* len = b_.CreateSub(space_.reduce_end, space_.reduce_begin);
    Value* per = b_.CreateUDiv(b_.CreateAdd(len, b_.CreateSub(ny, b_.getInt64(1))), ny);
    Value* chunk_begin = b_.CreateAdd(space_.reduce_begin, b_.CreateMul(y, per));
    Value* chunk_end = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b_.CreateAdd(chunk_begin, per), space_.reduce_end);
    Value* count = b_.CreateSelect(b_.CreateICmpSGT(mean_count, b_.getInt64(0)), mean_count, len);
    if (tiled) {
      tiled_reduction({ty, slot_ty, smem_ty, smem, acc, outer, reduced, lane, warp, warps, y, chunk_begin, chunk_end, count},
                      begin, end, chunk_stride);
      return;
    }
    auto slot = [&](Value* i) { return b_.CreateInBoundsGEP(smem_ty, smem, {b_.getInt64(0), i}); };

    loop(b_.CreateAdd(begin, sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x)), end,
         sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x), [&](Value* o) {
           std::vector<Value*> outer_off = space_.offsets_at(b_, outer, o, space_.offsets);
           b_.CreateStore(acc_identity(out.dtype), acc);
           fold(b_.CreateAdd(chunk_begin, tid), chunk_end, ntid, reduced, outer_off, acc);
           Value* partial = warp_reduce(b_.CreateLoad(ty, acc), out.dtype);
           if_then(b_.CreateICmpEQ(lane, b_.getInt64(0)), [&] {
             Value* s = out.dtype == DType::Bool ? b_.CreateZExt(partial, slot_ty) : partial;
             b_.CreateStore(s, slot(warp));
           });
           barrier();
           if_then(b_.CreateICmpEQ(warp, b_.getInt64(0)), [&] {
             Value* s = b_.CreateLoad(slot_ty, slot(lane));
             if (out.dtype == DType::Bool) s = b_.CreateICmpNE(s, b_.getInt8(0));
             s = b_.CreateSelect(b_.CreateICmpULT(lane, warps), s, acc_identity(out.dtype));
             Value* r = warp_reduce(s, out.dtype);
             if_then(b_.CreateICmpEQ(lane, b_.getInt64(0)), [&] {
               Value* result = narrow(out.dtype, space_.finish(b_, k_, r, count));
               Value* at = b_.CreateAdd(outer_off[out.index], b_.CreateMul(y, chunk_stride));
               body_.store(out.dtype, result, ptrs_[out.ptr], at);
             });
           });
           barrier();  // the slots are reused by the next output
         });
  }

  const Kernel& k_;
  llvm::Function* f_;
  llvm::LLVMContext& ctx_;
  llvm::IRBuilder<> b_;
  BodyEmitter body_;
  int width_;
  std::vector<Value*> ptrs_;
  LoopSpace space_;
};

std::string entry_name(const Kernel& k) {
  std::string s = "arrayc_" + k.name;
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
  return s;
}

void emit_kernel(const Kernel& k, const std::string& name, llvm::Module& m, const EmitOptions& opts, int width) {
  llvm::LLVMContext& ctx = m.getContext();
  auto* i64 = llvm::Type::getInt64Ty(ctx);
  std::vector<llvm::Type*> args(k.num_ptrs, llvm::PointerType::get(ctx, kGlobal));
  args.insert(args.end(), k.num_params() + 2 + (k.is_reduction ? 2 : 0), i64);
  llvm::Function* f = declare_ptx_kernel(m, name, args, k.num_ptrs);
  // row chains (issue 29): blocks of up to 1024 threads must launch (64 registers)
  if (k.row_chain) annotate_ptx_kernel(*f, "maxntidx", 1024);
  PtxEmitter(k, f, opts, width).emit();
}

}  // namespace

PtxKernel emit_ptx(const Kernel& k, int sm, const EmitOptions& opts) {
  EmitOptions gpu_opts = opts;
  gpu_opts.target = EmitOptions::Target::Nvptx;
  int width = vector_width(k);
  std::string entry = entry_name(k);
  PtxKernel out = compile_ptx(entry, sm, [&](llvm::Module& m) { emit_kernel(k, entry, m, gpu_opts, width); });
  out.elements_per_thread = k.row_chain ? kRowChainElements : width;
  return out;
}

}  // namespace arrayc::detail
