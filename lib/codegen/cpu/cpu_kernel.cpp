// The host target: wraps the shared body in a loop nest over [begin, end) of the kernel's
// parallel space. The innermost loop walks one row with constant-stride addressing (unit
// strides become plain `base + i`), which is the loop LLVM's vectorizer widens; the thread pool
// calls the function on disjoint ranges.
#include "codegen/cpu/cpu_kernel.h"

#include <functional>
#include <utility>
#include <vector>

#include "codegen/cpu/gather_prefetch.h"  // host gather bandwidth (issue 28)
#include "codegen/cpu/host_policy.h"
#include "codegen/cpu/tile_copy.h"
#include "codegen/cpu/vmath/vmath.h"
#include "codegen/llvm_util.h"
#include "codegen/loop_space.h"

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
    space_ = LoopSpace::unpack(b_, k_, [&](int64_t i) -> Value* {
      return b_.CreateAlignedLoad(b_.getInt64Ty(), b_.CreateConstInBoundsGEP1_64(b_.getInt64Ty(), params, i),
                                  llvm::Align(8));
    });
    body_.set_constants(space_.constants);
    const std::vector<Value*>& offsets = space_.offsets;
    Value* reduce_begin = space_.reduce_begin;
    Value* reduce_end = space_.reduce_end;

    std::vector<int> outer, reduced;
    for (int d = 0; d < k_.rank; ++d) (d < k_.outer_rank() ? outer : reduced).push_back(d);

    if (k_.row_chain) {
      row_chain(begin, end, offsets);
    } else if (!k_.is_reduction) {
      Body elementwise = [&](const std::vector<Value*>& off) {
        std::vector<Value*> v = body_.emit(ptrs_, off);
        for (const KernelOutput& o : k_.outputs) body_.store(o.dtype, v[o.instr], ptrs_[o.ptr], off[o.index]);
      };
      if (std::vector<int> tiled = tiled_leaves(k_); !tiled.empty()) {
        tiled_range(outer, begin, end, offsets, elementwise, tiled);
      } else {
        range_loop(outer, begin, end, offsets, elementwise,
                   opts_.stream_stores ? streamed_outputs(k_) : std::vector<int>{});
      }
    } else {
      const KernelOutput& out = k_.outputs.at(0);
      Value* count = b_.CreateSub(reduce_end, reduce_begin);
      auto finish = [&](Value* r) { return space_.finish(b_, k_, r, count); };
      if (k_.reduces_across_rows()) {
        column_blocks(outer, reduced, begin, end, offsets, reduce_begin, reduce_end, finish);
      } else {
        llvm::IRBuilder<> eb(&f_->getEntryBlock(), f_->getEntryBlock().begin());
        llvm::Type* at = body_.value_type(out.dtype);
        const bool blocked = blocked_sum(out.dtype);
        llvm::Type* tt = blocked ? total_type(at) : at;
        llvm::AllocaInst* acc = eb.CreateAlloca(tt);
        llvm::AllocaInst* part = eb.CreateAlloca(at);
        // The terms of [rb, re) combined into `into`, in the loop the vectorizer widens.
        auto accumulate = [&](llvm::AllocaInst* into, Value* rb, Value* re, const std::vector<Value*>& outer_off) {
          range_loop(reduced, rb, re, outer_off, [&](const std::vector<Value*>& off) {
            std::vector<Value*> v = body_.emit(ptrs_, off);
            Value* a = b_.CreateLoad(at, into);
            b_.CreateStore(body_.combine(k_.reduce_op, out.dtype, a, v[out.instr]), into);
          });
        };
        range_loop(outer, begin, end, offsets, [&](const std::vector<Value*>& outer_off) {
          if (blocked) {
            // Float sums in blocks of kSumBlock terms, each summed on its own (in the vector
            // lanes' partial sums) and then added to a total kept in double: no chain of rounded
            // float additions is longer than kSumBlock / lanes, whatever n.
            b_.CreateStore(llvm::ConstantFP::get(tt, 0.0), acc);
            emit_loop(b_, reduce_begin, reduce_end, b_.getInt64(kSumBlock), [&](Value* rb) {
              b_.CreateStore(body_.identity(k_.reduce_op, out.dtype), part);
              accumulate(part, rb, smin(b_.CreateAdd(rb, b_.getInt64(kSumBlock)), reduce_end), outer_off);
              b_.CreateStore(add_to_total(b_.CreateLoad(tt, acc), b_.CreateLoad(at, part)), acc);
            });
          } else {
            b_.CreateStore(body_.identity(k_.reduce_op, out.dtype), acc);
            accumulate(acc, reduce_begin, reduce_end, outer_off);
          }
          body_.store(out.dtype, finish(b_.CreateFPCast(b_.CreateLoad(tt, acc), at)), ptrs_[out.ptr],
                      outer_off[out.index]);
        });
      }
    }
    b_.CreateRetVoid();
  }

 private:
  using Body = std::function<void(const std::vector<Value*>&)>;

  // Float sums (sum, mean) are summed in blocks of this many terms, into a total of
  // total_type (see emit()): along a row, where the vector lanes split a block's terms between
  // them, and across rows, where each output's block is one chain.
  static constexpr int64_t kSumBlock = 512;
  static constexpr int64_t kColumnSumBlock = 64;
  bool blocked_sum(DType t) const {
    return (k_.reduce_op == Op::Sum || k_.reduce_op == Op::Mean) && is_float(t);
  }
  llvm::Type* total_type(llvm::Type* value_type) {
    return value_type->isFloatTy() ? b_.getDoubleTy() : value_type;
  }
  Value* add_to_total(Value* total, Value* part) { return b_.CreateFAdd(total, b_.CreateFPCast(part, total->getType())); }

  // The counted loop c in [from, to) of one row: body gets each operand's offset
  // row_base[j] + c * stride_j. Returns the latch, for loop metadata.
  llvm::BranchInst* row_loop(Value* from, Value* to, const std::vector<Value*>& row_base, int last, const Body& body) {
    return emit_loop(b_, from, to, b_.getInt64(1), [&](Value* c) { body(at_column(row_base, c, last)); });
  }

  // Each operand's offset at column c of dim `last`: base[j] + c * stride_j.
  std::vector<Value*> at_column(const std::vector<Value*>& base, Value* c, int last) {
    std::vector<Value*> off(base.size());
    for (size_t j = 0; j < off.size(); ++j) off[j] = b_.CreateAdd(base[j], b_.CreateMul(c, space_.strides[j][last]));
    return off;
  }

  // One row with streaming stores (streamed_outputs): scalar iterations up to the first
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
    Value* mid = smin(b_.CreateAdd(col, b_.CreateLShr(gap, shift)), col_end);
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

  // host gather bandwidth (issue 28): a row in blocks of kGatherPrefetchBlock elements; before
  // each block, a scalar loop prefetches into L2 the source elements that the gather will read
  // gather_prefetch elements ahead (their indices are read once more, from cache later; a
  // negative one wraps, none is clamped: a prefetch never faults). Returns the last block
  // loop's latch.
  llvm::BranchInst* prefetched_row(Value* col, Value* col_end, const std::vector<Value*>& row_base, int last,
                                   const Body& body, const std::vector<int>& streamed) {
    const KernelLeaf& g = k_.leaves[prefetch_->gather_leaf];
    const KernelLeaf& ix = k_.leaves[prefetch_->index_leaf];
    Value* dist = b_.getInt64(opts_.gather_prefetch);
    llvm::BranchInst* latch = nullptr;
    emit_loop(b_, col, col_end, b_.getInt64(kGatherPrefetchBlock), [&](Value* c0) {
      Value* c1 = smin(b_.CreateAdd(c0, b_.getInt64(kGatherPrefetchBlock)), col_end);
      Value* p0 = smin(b_.CreateAdd(c0, dist), col_end);
      Value* p1 = smin(b_.CreateAdd(c1, dist), col_end);
      llvm::BranchInst* ahead = emit_loop(b_, p0, p1, b_.getInt64(1), [&](Value* c) {
        std::vector<Value*> off = at_column(row_base, c, last);
        Value* i = body_.cast(body_.load(ix.dtype, ptrs_[ix.ptr], off[ix.index]), ix.dtype, DType::Int64);
        i = b_.CreateSelect(b_.CreateICmpSLT(i, b_.getInt64(0)), b_.CreateAdd(i, off[g.aux + 1]), i);
        Value* at = b_.CreateGEP(body_.memory_type(g.dtype), ptrs_[g.ptr], b_.CreateAdd(off[g.index], b_.CreateMul(i, off[g.aux])));
        b_.CreateIntrinsic(llvm::Intrinsic::prefetch, {at->getType()}, {at, b_.getInt32(0), b_.getInt32(2), b_.getInt32(1)});
      });
      set_loop_hints(ahead, {{"llvm.loop.vectorize.enable", b_.getFalse()}});
      latch = streamed.empty() ? row_loop(c0, c1, row_base, last, body) : streamed_row(c0, c1, row_base, last, body, streamed);
    });
    return latch;
  }

  // row chains (issue 29): a row reduction's result as the body reads it (a Mean divided by the
  // row's length).
  Value* finish_row(Op op, Value* r, Value* count) {
    return op == Op::Mean ? b_.CreateFDiv(r, b_.CreateSIToFP(count, r->getType())) : r;
  }

  // A row chain (Kernel::row_chain): for each row of [begin, end), one loop along the row per
  // pass of row_passes() folding that pass's reductions together (float32 sums in blocks of
  // kSumBlock into a double total, as a reduction kernel's), then the loop that stores the
  // outputs, streaming when the kernel streams. Each loop is one the vectorizer widens; the row
  // is read again from cache by each.
  void row_chain(Value* begin, Value* end, const std::vector<Value*>& offsets) {
    std::vector<int> outer;
    for (int d = 0; d < k_.rank - 1; ++d) outer.push_back(d);
    const int last = k_.rank - 1;
    const std::vector<std::vector<int>> passes = k_.row_passes();
    llvm::IRBuilder<> eb(&f_->getEntryBlock(), f_->getEntryBlock().begin());
    std::vector<llvm::AllocaInst*> acc(k_.body.size(), nullptr), part(k_.body.size(), nullptr);
    auto blocked = [&](int i) {
      Op op = k_.body[i].op;
      return (op == Op::Sum || op == Op::Mean) && body_.value_type(k_.body[i].dtype)->isFloatTy();
    };
    for (const std::vector<int>& pass : passes)
      for (int i : pass) {
        llvm::Type* at = body_.value_type(k_.body[i].dtype);
        acc[i] = eb.CreateAlloca(blocked(i) ? b_.getDoubleTy() : at);
        part[i] = blocked(i) ? eb.CreateAlloca(at) : acc[i];
      }
    Value* count = b_.CreateSub(space_.reduce_end, space_.reduce_begin);
    const std::vector<int> streamed = opts_.stream_stores ? streamed_outputs(k_) : std::vector<int>{};
    range_loop(outer, begin, end, offsets, [&](const std::vector<Value*>& row_base) {
      std::vector<Value*> known(k_.body.size(), nullptr);
      for (const std::vector<int>& pass : passes) {
        std::vector<int> args;
        bool any_blocked = false;
        for (int i : pass) {
          args.push_back(k_.body[i].args[0]);
          any_blocked = any_blocked || blocked(i);
          b_.CreateStore(blocked(i) ? llvm::ConstantFP::get(b_.getDoubleTy(), 0.0) : body_.identity(k_.body[i].op, k_.body[i].dtype), acc[i]);
        }
        const std::vector<bool> need = k_.instrs_needed(args);
        auto fold = [&](Value* from, Value* to) {
          ++loops_;
          row_loop(from, to, row_base, last, [&](const std::vector<Value*>& off) {
            std::vector<Value*> v = body_.emit(ptrs_, off, known, need);
            for (int i : pass) {
              const KernelInstr& in = k_.body[i];
              Value* a = b_.CreateLoad(part[i]->getAllocatedType(), part[i]);
              b_.CreateStore(body_.combine(in.op, in.dtype, a, v[in.args[0]]), part[i]);
            }
          });
        };
        if (any_blocked) {
          emit_loop(b_, space_.reduce_begin, space_.reduce_end, b_.getInt64(kSumBlock), [&](Value* rb) {
            for (int i : pass)
              if (blocked(i)) b_.CreateStore(body_.identity(k_.body[i].op, k_.body[i].dtype), part[i]);
            fold(rb, smin(b_.CreateAdd(rb, b_.getInt64(kSumBlock)), space_.reduce_end));
            for (int i : pass)
              if (blocked(i))
                b_.CreateStore(add_to_total(b_.CreateLoad(b_.getDoubleTy(), acc[i]),
                                            b_.CreateLoad(part[i]->getAllocatedType(), part[i])), acc[i]);
          });
        } else {
          fold(space_.reduce_begin, space_.reduce_end);
        }
        for (int i : pass) {
          llvm::Type* at = body_.value_type(k_.body[i].dtype);
          known[i] = finish_row(k_.body[i].op, b_.CreateFPCast(b_.CreateLoad(acc[i]->getAllocatedType(), acc[i]), at), count);
        }
      }
      std::vector<int> stored;
      for (const KernelOutput& o : k_.outputs) stored.push_back(o.instr);
      const std::vector<bool> need = k_.instrs_needed(stored);
      Body store = [&](const std::vector<Value*>& off) {
        std::vector<Value*> v = body_.emit(ptrs_, off, known, need);
        for (const KernelOutput& o : k_.outputs) body_.store(o.dtype, v[o.instr], ptrs_[o.ptr], off[o.index]);
      };
      ++loops_;
      llvm::BranchInst* latch = streamed.empty()
                                    ? row_loop(space_.reduce_begin, space_.reduce_end, row_base, last, store)
                                    : streamed_row(space_.reduce_begin, space_.reduce_end, row_base, last, store, streamed);
      if (body_.wants_float_lanes()) set_loop_hints(latch, {{"llvm.loop.vectorize.width", b_.getInt32(kSincosWidth)}});
    });
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
    auto block_array = [&](llvm::Type* t) {
      llvm::AllocaInst* a = eb.CreateAlloca(llvm::ArrayType::get(t, kColumnBlock));
      a->setAlignment(llvm::Align(64));
      return a;
    };
    // Float sums: each block of kColumnSumBlock reduced indices is summed into `part` first, then added
    // to `acc`, of total_type (as in emit()).
    const bool blocked = blocked_sum(out.dtype);
    llvm::Type* tt = blocked ? total_type(at) : at;
    llvm::AllocaInst* acc = block_array(tt);
    llvm::AllocaInst* part = blocked ? block_array(at) : acc;
    int last = outer.back();
    auto slot_in = [&](llvm::AllocaInst* a, Value* c, Value* c0) {
      return b_.CreateInBoundsGEP(a->getAllocatedType()->getArrayElementType(), a, b_.CreateSub(c, c0));
    };
    auto slot = [&](Value* c, Value* c0) { return slot_in(acc, c, c0); };
    auto init = [&](llvm::AllocaInst* a, Value* c0, Value* c1) {
      llvm::Type* t = a->getAllocatedType()->getArrayElementType();
      emit_loop(b_, c0, c1, b_.getInt64(1), [&](Value* c) {
        b_.CreateStore(t == at ? body_.identity(k_.reduce_op, out.dtype) : llvm::ConstantFP::get(t, 0.0),
                       slot_in(a, c, c0));
      });
    };
    RowBody rows = [&](Value* col, Value* col_end, const std::vector<Value*>& row_base) {
      return emit_loop(b_, col, col_end, b_.getInt64(kColumnBlock), [&](Value* c0) {
        Value* c1 = smin(b_.CreateAdd(c0, b_.getInt64(kColumnBlock)), col_end);
        init(acc, c0, c1);
        // The terms of reduced indices [rb, re) combined into part.
        auto accumulate = [&](Value* rb, Value* re) {
          range_loop(reduced, rb, re, row_base, [&](const std::vector<Value*>& off) {
            // The row of the block at this reduced index.
            emit_loop(b_, c0, c1, b_.getInt64(1), [&](Value* c) {
              std::vector<Value*> v = body_.emit(ptrs_, at_column(off, c, last));
              Value* a = b_.CreateLoad(at, slot_in(part, c, c0));
              b_.CreateStore(body_.combine(k_.reduce_op, out.dtype, a, v[out.instr]), slot_in(part, c, c0));
            });
          });
        };
        if (blocked) {
          emit_loop(b_, reduce_begin, reduce_end, b_.getInt64(kColumnSumBlock), [&](Value* rb) {
            init(part, c0, c1);
            accumulate(rb, smin(b_.CreateAdd(rb, b_.getInt64(kColumnSumBlock)), reduce_end));
            emit_loop(b_, c0, c1, b_.getInt64(1), [&](Value* c) {
              b_.CreateStore(add_to_total(b_.CreateLoad(tt, slot(c, c0)), b_.CreateLoad(at, slot_in(part, c, c0))),
                             slot(c, c0));
            });
          });
        } else {
          accumulate(reduce_begin, reduce_end);
        }
        emit_loop(b_, c0, c1, b_.getInt64(1), [&](Value* c) {
          Value* r = finish(b_.CreateFPCast(b_.CreateLoad(tt, slot(c, c0)), at));
          body_.store(out.dtype, r, ptrs_[out.ptr], at_column(row_base, c, last)[out.index]);
        });
      });
    };
    range_loop(outer, begin, end, offsets, nullptr, {}, &rows);
  }

  // An elementwise kernel with tiled leaves (tiled_leaves: a + transpose(a), say). Row
  // after row, such a leaf is read one element per cache line (and per page, for rows of 4 KiB or
  // more), and its loads keep the row loop from vectorizing, math included: a + transpose(a) of
  // 4000 x 4000 floats took 28 ms, five times a * 2, and exp(transpose(a)) 30 ms. Instead the
  // space is walked in tiles of up to kHostTileRows rows by kHostTileCols columns (never across a
  // boundary of the second-to-last dim); each tiled leaf's tile is first copied into a stack
  // buffer (copy_tile), and then each row of the tile runs the usual row loop with the tiled
  // leaves read from their buffers at unit stride. Partial first and last rows of [begin, end)
  // copy whole tile rows and compute only their part. Rows shorter than a tile's, or fewer of
  // them than a transposed block's, are walked one after another as without tiles (their lines
  // stay cached from row to row; nothing would vectorize), in a scalar loop.
  void tiled_range(const std::vector<int>& dims, Value* begin, Value* end, const std::vector<Value*>& base,
                   const Body& body, const std::vector<int>& tiled) {
    const int last = dims.back();
    Value* e = space_.extents[last];
    Value* e2 = space_.extents[dims[dims.size() - 2]];
    Value* cols = b_.getInt64(kHostTileCols);
    llvm::IRBuilder<> eb(&f_->getEntryBlock(), f_->getEntryBlock().begin());
    std::vector<llvm::AllocaInst*> bufs;
    for (int l : tiled) {
      bufs.push_back(eb.CreateAlloca(
          llvm::ArrayType::get(body_.memory_type(k_.leaves[l].dtype), kHostTileRows * kHostTileCols)));
      bufs.back()->setAlignment(llvm::Align(64));
    }
    Value* use_tiles = b_.CreateAnd(b_.CreateICmpSGE(e, cols), b_.CreateICmpSGE(e2, b_.getInt64(kTileBlockBytes / 4)));
    emit_if(
        b_, b_.CreateAnd(use_tiles, b_.CreateICmpSLT(begin, end)),
        [&] {
          // Rows [row_begin, row_end) hold [begin, end); row r is (o, i) = (r / e2, r % e2).
          Value* row_begin = b_.CreateUDiv(begin, e);
          Value* row_end = ceil_div(end, e);
          Value* o_end = ceil_div(row_end, e2);
          emit_loop(b_, b_.CreateUDiv(row_begin, e2), o_end, b_.getInt64(1), [&](Value* o) {
            Value* first = b_.CreateMul(o, e2);
            Value* i_begin = smax(b_.getInt64(0), b_.CreateSub(row_begin, first));
            Value* i_end = smin(e2, b_.CreateSub(row_end, first));
            emit_loop(b_, i_begin, i_end, b_.getInt64(kHostTileRows), [&](Value* i0) {
              Value* r0 = b_.CreateAdd(first, i0);
              Value* r1 = b_.CreateAdd(first, smin(b_.CreateAdd(i0, b_.getInt64(kHostTileRows)), i_end));
              emit_loop(b_, b_.getInt64(0), e, cols, [&](Value* c0) {
                Tile t{r0, r1, c0, smin(b_.CreateAdd(c0, cols), e)};
                for (size_t j = 0; j < tiled.size(); ++j) copy_tile(dims, base, k_.leaves[tiled[j]], bufs[j], t);
                compute_tile(dims, begin, end, base, body, tiled, bufs, t);
              });
            });
          });
        },
        [&] {
          RowBody scalar_rows = [&](Value* col, Value* col_end, const std::vector<Value*>& row_base) {
            llvm::BranchInst* latch = row_loop(col, col_end, row_base, last, body);
            set_loop_hints(latch, {{"llvm.loop.vectorize.enable", b_.getFalse()}});
            return latch;
          };
          range_loop(dims, begin, end, base, nullptr, {}, &scalar_rows);
        });
  }

  // Rows [r0, r1) by columns [c0, c1) of the space.
  struct Tile {
    Value *r0, *r1, *c0, *c1;
  };
  // A tiled leaf's tile in its buffer: (r, c) at (r - r0) * kHostTileCols + c - c0.
  Value* in_buffer(const Tile& t, Value* r, Value* c) {
    return b_.CreateAdd(b_.CreateMul(b_.CreateSub(r, t.r0), b_.getInt64(kHostTileCols)), b_.CreateSub(c, t.c0));
  }

  // Copies leaf lf's tile into buf by the shared helper of its element size (emit_tile_copy):
  // within a tile the rows share every index but the second-to-last, so the tile is a 2-D block
  // of lf's memory, rows apart by its stride along that dim, columns by its stride along the last.
  void copy_tile(const std::vector<int>& dims, const std::vector<Value*>& base, const KernelLeaf& lf,
                 llvm::AllocaInst* buf, const Tile& t) {
    llvm::Type* mt = body_.memory_type(lf.dtype);
    const std::vector<Value*>& s = space_.strides[lf.index];
    Value* at = b_.CreateAdd(row_offsets(dims, t.r0, base)[lf.index], b_.CreateMul(t.c0, s[dims.back()]));
    llvm::FunctionCallee copy = tile_copy_callee(*f_->getParent(), static_cast<int>(dtype_size(lf.dtype)));
    b_.CreateCall(copy, {buf, b_.CreateGEP(mt, ptrs_[lf.ptr], at), b_.CreateSub(t.r1, t.r0), b_.CreateSub(t.c1, t.c0),
                         s[dims[dims.size() - 2]], s[dims.back()]});
  }

  // Each row of the tile within [begin, end), by the row loop, the tiled leaves read from their
  // buffers.
  void compute_tile(const std::vector<int>& dims, Value* begin, Value* end, const std::vector<Value*>& base,
                    const Body& body, const std::vector<int>& tiled, const std::vector<llvm::AllocaInst*>& bufs,
                    const Tile& t) {
    const int last = dims.back();
    emit_loop(b_, t.r0, t.r1, b_.getInt64(1), [&](Value* r) {
      Value* start = b_.CreateMul(r, space_.extents[last]);
      Value* lo = smax(t.c0, b_.CreateSub(begin, start));
      Value* hi = smin(t.c1, b_.CreateSub(end, start));
      std::vector<Value*> row = row_offsets(dims, r, base);
      std::vector<Value*> ptrs = ptrs_;
      std::vector<std::vector<Value*>> strides = space_.strides;
      for (size_t j = 0; j < tiled.size(); ++j) {
        const KernelLeaf& lf = k_.leaves[tiled[j]];
        row[lf.index] = in_buffer(t, r, b_.getInt64(0));
        ptrs_[lf.ptr] = bufs[j];
        space_.strides[lf.index][last] = b_.getInt64(1);
      }
      llvm::BranchInst* latch = row_loop(lo, hi, row, last, body);
      ptrs_ = std::move(ptrs);
      space_.strides = std::move(strides);
      if (body_.wants_float_lanes()) set_loop_hints(latch, {{"llvm.loop.vectorize.width", b_.getInt32(kSincosWidth)}});
    });
  }

  Value* smin(Value* a, Value* b) { return b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, a, b); }
  Value* smax(Value* a, Value* b) { return b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, a, b); }
  Value* ceil_div(Value* a, Value* b) { return b_.CreateUDiv(b_.CreateAdd(a, b_.CreateSub(b, b_.getInt64(1))), b); }

  // Each operand's offset at the start of row `row` of the space spanned by `dims`, whose last
  // dim the row walks: the offsets at index `row` of the other dims.
  std::vector<Value*> row_offsets(const std::vector<int>& dims, Value* row, const std::vector<Value*>& base) {
    return space_.offsets_at(b_, std::vector<int>(dims.begin(), dims.end() - 1), row, base);
  }

  // Visits the linear indices [begin, end) of the space spanned by `dims` (last fastest), row by
  // row: rows begin / e to ceil(end / e) of e = the last dim's extent, each row's per-operand
  // base offsets from its index alone (row_offsets), and an inner counted loop over the row's
  // part of [begin, end). No row waits for the one before: stepping a linear index by each
  // row's length instead put a division on the loop's critical path (rows of 4 floats took 17
  // cycles each, 28 where the division's operands were spilled).
  // rows, when given, emits each row's loop in place of the element loop calling body.
  using RowBody = std::function<llvm::BranchInst*(Value* col, Value* col_end, const std::vector<Value*>& row_base)>;
  void range_loop(const std::vector<int>& dims, Value* begin, Value* end, const std::vector<Value*>& base,
                  const Body& body, const std::vector<int>& streamed = {}, const RowBody* rows = nullptr) {
    if (dims.empty()) {
      emit_if(b_, b_.CreateICmpSLT(begin, end), [&] { body(base); });
      return;
    }
    const int last = dims.back();
    auto walk_row = [&](Value* col, Value* col_end, const std::vector<Value*>& row_base) {
      int loops_before = ++loops_;
      llvm::BranchInst* latch;
      if (rows) {
        latch = (*rows)(col, col_end, row_base);
      } else if (prefetch_ && opts_.gather_prefetch > 0) {  // host gather bandwidth (issue 28)
        latch = prefetched_row(col, col_end, row_base, last, body, streamed);
      } else if (streamed.empty()) {
        latch = row_loop(col, col_end, row_base, last, body);
      } else {
        latch = streamed_row(col, col_end, row_base, last, body, streamed);
      }
      // An innermost elementwise row with the packed sincos (an i64 per lane): ask for its 16
      // float lanes, or the vectorizer would size its vectors by the i64 and halve them. Not for
      // reductions, whose in-order float sums are not vectorized (forcing would only warn).
      if (loops_ == loops_before && body_.wants_float_lanes() && !k_.is_reduction && !rows)
        set_loop_hints(latch, {{"llvm.loop.vectorize.width", b_.getInt32(kSincosWidth)}});
    };
    if (dims.size() == 1) {
      walk_row(begin, end, base);
      return;
    }
    Value* e = space_.extents[last];
    emit_loop(b_, b_.CreateUDiv(begin, e), ceil_div(end, e), b_.getInt64(1), [&](Value* r) {
      Value* start = b_.CreateMul(r, e);
      Value* col = smax(b_.getInt64(0), b_.CreateSub(begin, start));
      Value* col_end = smin(e, b_.CreateSub(end, start));
      walk_row(col, col_end, row_offsets(dims, r, base));
    });
  }

  const Kernel& k_;
  llvm::Function* f_;
  llvm::LLVMContext& ctx_;
  llvm::IRBuilder<> b_;
  BodyEmitter body_;
  EmitOptions opts_;
  std::vector<Value*> ptrs_;
  LoopSpace space_;  // extents, offsets and strides (compute_tile redirects tiled leaves' strides)
  int loops_ = 0;  // row loops emitted so far (to tell the innermost)
  std::optional<PrefetchedGather> prefetch_ = prefetched_gather(k_);  // host gather bandwidth (issue 28)
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
  if (!opts.cpu.empty()) {
    body->addFnAttr("target-cpu", opts.cpu);
    body->addFnAttr("target-features", opts.cpu_features);
  }
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
