// The Axis ops' GPU kernels (see axis_kernels.h for what each does and its arguments). Loops
// over a thread's elements are unrolled here, at emission, so that its values stay in registers.
#include "codegen/nvptx/axis_kernels.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <algorithm>
#include <functional>
#include <vector>

#include "arrayc/error.h"
#include "codegen/llvm_util.h"

namespace arrayc::detail {
namespace {

using llvm::Value;
using Kind = AxisKernel::Kind;

constexpr unsigned kGlobal = 1, kShared = 3;
constexpr int kWarps = kAxisThreads / 32;
constexpr int kScanItems = static_cast<int>(kScanTile / kAxisThreads);  // 16

bool is_scan(Kind k) { return k == Kind::ScanTotals || k == Kind::ScanTiles || k == Kind::ScanRows; }
bool is_strided(Kind k) { return is_scan(k) || k == Kind::SortLoad || k == Kind::SortStore || k == Kind::ScatterCopy; }
bool is_scatter(Kind k) { return k == Kind::ScatterCopy || k == Kind::ScatterMark || k == Kind::ScatterApply; }
int pointer_args(Kind k) {
  switch (k) {
    case Kind::SortPass: return 7;
    case Kind::ScatterMark: case Kind::ScatterApply: return 4;
    default: return 3;
  }
}

class AxisEmitter {
 public:
  AxisEmitter(const AxisKernel& k, llvm::Module& m) : k_(k), m_(m), ctx_(m.getContext()), b_(ctx_) {}

  void emit(const std::string& entry) {
    auto* gptr = llvm::PointerType::get(ctx_, kGlobal);
    int ptrs = pointer_args(k_.kind), ints = 0;
    switch (k_.kind) {
      case Kind::ScanTotals: case Kind::ScanTiles: case Kind::ScanRows: case Kind::SortLoad: case Kind::SortStore:
      case Kind::ScatterCopy:
        ints = 6 + 3 * (k_.rank - 1);
        break;
      case Kind::SortHist: case Kind::SortScan: ints = 2; break;
      case Kind::SortPass: ints = 6; break;
      case Kind::ScatterMark: case Kind::ScatterApply: ints = 5 + 2 * (k_.rank - 1); break;
    }
    std::vector<llvm::Type*> args(ptrs, gptr);
    args.insert(args.end(), ints, b_.getInt64Ty());
    f_ = declare_ptx_kernel(m_, entry, args, ptrs);
    annotate_ptx_kernel(*f_, "maxntidx", kAxisThreads);
    // ptxas keeps the registers low enough for this many blocks an SM
    if (k_.min_blocks > 0) annotate_ptx_kernel(*f_, "minctasm", k_.min_blocks);
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", f_));
    for (int i = 0; i < ptrs + ints; ++i) arg_.push_back(f_->getArg(i));
    tid_ = sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
    lane_ = b_.CreateAnd(tid_, i64(31));
    warp_ = b_.CreateLShr(tid_, 5);
    ty_ = is_scatter(k_.kind) ? scatter_elem(k_.dtype) : k_.kind == Kind::SortScan ? b_.getInt64Ty() : elem(k_.dtype);
    switch (k_.kind) {
      case Kind::ScanTotals: scan_totals(); break;
      case Kind::ScanTiles: scan_tiles(); break;
      case Kind::ScanRows: scan_rows(); break;
      case Kind::SortLoad: case Kind::SortStore: load_store(); break;
      case Kind::SortHist: sort_hist(); break;
      case Kind::SortPass: sort_pass(); break;
      case Kind::SortScan: sort_scan(); break;
      case Kind::ScatterCopy: load_store(); break;
      case Kind::ScatterMark: scatter_mark(); break;
      case Kind::ScatterApply: scatter_apply(); break;
    }
    b_.CreateRetVoid();
  }

 private:
  // ---- helpers ----
  Value* i64(int64_t v) { return b_.getInt64(v); }
  Value* i32(int64_t v) { return b_.getInt32(static_cast<uint32_t>(v)); }
  Value* sreg(llvm::Intrinsic::ID id) { return read_sreg(b_, id); }
  Value* gid() {
    return b_.CreateAdd(b_.CreateMul(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x), i64(kAxisThreads)), tid_);
  }
  Value* gsize() { return b_.CreateMul(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x), i64(kAxisThreads)); }
  void barrier() { b_.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {}); }
  void warp_sync() { b_.CreateIntrinsic(llvm::Intrinsic::nvvm_bar_warp_sync, {}, {i32(0xffffffff)}); }
  void loop(Value* s, Value* e, Value* step, const std::function<void(Value*)>& body) {
    llvm::BranchInst* latch = emit_loop(b_, s, e, step, body);
    set_loop_hints(latch, {{"llvm.loop.unroll.disable", nullptr}});
  }
  // The blocks' loop over `count` work items (tiles, or (row, tile) pairs).
  void block_loop(Value* count, const std::function<void(Value*)>& body) {
    loop(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x), count, sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x), body);
  }
  void if_then(Value* c, const std::function<void()>& f) { emit_if(b_, c, f); }

  llvm::Type* elem(DType t) {
    switch (t) {
      case DType::Bool: return b_.getInt8Ty();
      case DType::Int32: return b_.getInt32Ty();
      case DType::Int64: case DType::UInt64: return b_.getInt64Ty();
      case DType::Float32: return b_.getFloatTy();
      case DType::Float64: return b_.getDoubleTy();
      default: ARRAYC_INTERNAL_CHECK(false, std::string("GPU axis kernel of dtype ") + dtype_name(t));
    }
    return nullptr;
  }
  // Scatters: the element as stored (the copy moves integers of its width).
  llvm::Type* scatter_elem(DType t) {
    if (k_.kind == Kind::ScatterCopy) return b_.getIntNTy(static_cast<unsigned>(8 * dtype_size(t)));
    switch (t) {
      case DType::Float16: return b_.getHalfTy();
      case DType::BFloat16: return b_.getBFloatTy();
      case DType::Float32: return b_.getFloatTy();
      case DType::Float64: return b_.getDoubleTy();
      default: return b_.getIntNTy(static_cast<unsigned>(8 * dtype_size(t)));
    }
  }
  llvm::Type* pay_ty() { return k_.payload == 4 ? b_.getInt32Ty() : b_.getInt64Ty(); }
  Value* at(llvm::Type* t, Value* p, Value* i) { return b_.CreateInBoundsGEP(t, p, i); }
  Value* load(llvm::Type* t, Value* p, Value* i) { return b_.CreateLoad(t, at(t, p, i)); }
  void store(Value* v, Value* p, Value* i) { b_.CreateStore(v, at(v->getType(), p, i)); }

  llvm::GlobalVariable* smem(const char* name, llvm::Type* t, int64_t count) {
    auto* ty = llvm::ArrayType::get(t, static_cast<uint64_t>(count));
    auto* gv = new llvm::GlobalVariable(m_, ty, false, llvm::GlobalValue::InternalLinkage, llvm::UndefValue::get(ty), name,
                                        nullptr, llvm::GlobalValue::NotThreadLocal, kShared);
    gv->setAlignment(llvm::Align(16));
    return gv;
  }

  // Shuffles of any 32- or 64-bit value, as 32-bit pieces.
  Value* shfl(llvm::Intrinsic::ID id, Value* v, Value* lane_arg, int c) {
    auto one = [&](Value* x) { return b_.CreateIntrinsic(id, {}, {i32(0xffffffff), x, lane_arg, i32(c)}); };
    llvm::Type* t = v->getType();
    unsigned bits = t->getPrimitiveSizeInBits();
    Value* x = t->isIntegerTy() ? v : b_.CreateBitCast(v, b_.getIntNTy(bits));
    Value* r;
    if (bits == 32) {
      r = one(x);
    } else {
      Value* lo = one(b_.CreateTrunc(x, b_.getInt32Ty()));
      Value* hi = one(b_.CreateTrunc(b_.CreateLShr(x, 32), b_.getInt32Ty()));
      r = b_.CreateOr(b_.CreateShl(b_.CreateZExt(hi, b_.getInt64Ty()), 32), b_.CreateZExt(lo, b_.getInt64Ty()));
    }
    return t->isIntegerTy() ? r : b_.CreateBitCast(r, t);
  }
  Value* shfl_up(Value* v, int delta) { return shfl(llvm::Intrinsic::nvvm_shfl_sync_up_i32, v, i32(delta), 0); }
  Value* shfl_xor(Value* v, int mask) { return shfl(llvm::Intrinsic::nvvm_shfl_sync_bfly_i32, v, i32(mask), 31); }

  // ---- strided rows ----
  // The integer arguments after the pointers: n, rows, ntiles, has_carry, in_axis_stride,
  // out_axis_stride, then (extent, in_stride, out_stride) per outer dim.
  Value* iarg(int i) { return arg_[pointer_args(k_.kind) + i]; }
  std::pair<Value*, Value*> row_offsets(Value* r) {
    Value *in = i64(0), *out = i64(0);
    for (int d = k_.rank - 2; d >= 0; --d) {
      Value* ext = iarg(6 + 3 * d);
      Value* coord = d == 0 ? r : b_.CreateURem(r, ext);
      if (d > 0) r = b_.CreateUDiv(r, ext);
      in = b_.CreateAdd(in, b_.CreateMul(coord, iarg(7 + 3 * d)));
      out = b_.CreateAdd(out, b_.CreateMul(coord, iarg(8 + 3 * d)));
    }
    return {in, out};
  }

  // ---- scans ----
  bool fl() const { return k_.dtype == DType::Float32 || k_.dtype == DType::Float64; }
  Value* ident() {
    double v = k_.product ? 1 : 0;
    return fl() ? llvm::ConstantFP::get(ty_, v) : llvm::ConstantInt::get(ty_, static_cast<uint64_t>(v));
  }
  // a (+) b, a before b.
  Value* comb(Value* a, Value* b) {
    if (k_.product) return fl() ? b_.CreateFMul(a, b) : b_.CreateMul(a, b);
    return fl() ? b_.CreateFAdd(a, b) : b_.CreateAdd(a, b);
  }
  // Shared tile index with one pad word per 32 elements: a thread's 16 consecutive elements
  // fall in different banks.
  Value* pad(Value* i) { return b_.CreateAdd(i, b_.CreateLShr(i, 5)); }

  void scan_totals() {
    Value *in = arg_[0], *out = arg_[1];
    Value *n = iarg(0), *rows = iarg(1), *ntiles = iarg(2), *is = iarg(4);
    llvm::GlobalVariable* wsum = smem("wsum", ty_, kWarps);
    block_loop(b_.CreateMul(rows, ntiles), [&](Value* p) {
      Value* row = b_.CreateUDiv(p, ntiles);
      Value* start = b_.CreateMul(b_.CreateURem(p, ntiles), i64(kScanTile));
      Value* ioff = row_offsets(row).first;
      Value* acc = ident();
      for (int k = 0; k < kScanItems; ++k) {
        Value* idx = b_.CreateAdd(start, b_.CreateAdd(i64(k * kAxisThreads), tid_));
        Value* valid = b_.CreateICmpSLT(idx, n);
        Value* v = load(ty_, in, b_.CreateAdd(ioff, b_.CreateMul(b_.CreateSelect(valid, idx, i64(0)), is)));
        acc = comb(acc, b_.CreateSelect(valid, v, ident()));
      }
      for (int m = 16; m >= 1; m /= 2) acc = comb(acc, shfl_xor(acc, m));
      if_then(b_.CreateICmpEQ(lane_, i64(0)), [&] { store(acc, wsum, warp_); });
      barrier();
      if_then(b_.CreateICmpEQ(tid_, i64(0)), [&] {
        Value* r = load(ty_, wsum, i64(0));
        for (int w = 1; w < kWarps; ++w) r = comb(r, load(ty_, wsum, i64(w)));
        store(r, out, p);
      });
      barrier();
    });
  }

  void scan_tiles() {
    Value *in = arg_[0], *out = arg_[1], *carry = arg_[2];
    Value *n = iarg(0), *rows = iarg(1), *ntiles = iarg(2), *has_carry = iarg(3), *is = iarg(4), *os = iarg(5);
    llvm::GlobalVariable* tile = smem("tile", ty_, kScanTile + kScanTile / 32);
    llvm::GlobalVariable* wsum = smem("wsum", ty_, kWarps);
    llvm::IRBuilder<> eb(&f_->getEntryBlock(), f_->getEntryBlock().begin());
    llvm::AllocaInst* carry_slot = eb.CreateAlloca(ty_);
    block_loop(b_.CreateMul(rows, ntiles), [&](Value* p) {
      Value* row = b_.CreateUDiv(p, ntiles);
      Value* t = b_.CreateURem(p, ntiles);
      Value* start = b_.CreateMul(t, i64(kScanTile));
      auto [ioff, ooff] = row_offsets(row);
      // Coalesced loads into the shared tile.
      for (int k = 0; k < kScanItems; ++k) {
        Value* j = b_.CreateAdd(i64(k * kAxisThreads), tid_);
        Value* idx = b_.CreateAdd(start, j);
        Value* valid = b_.CreateICmpSLT(idx, n);
        Value* v = load(ty_, in, b_.CreateAdd(ioff, b_.CreateMul(b_.CreateSelect(valid, idx, i64(0)), is)));
        store(b_.CreateSelect(valid, v, ident()), tile, pad(j));
      }
      barrier();
      // Each thread's 16 consecutive elements, scanned.
      Value* base = b_.CreateMul(tid_, i64(kScanItems));
      std::vector<Value*> s(kScanItems);
      for (int j = 0; j < kScanItems; ++j) {
        Value* x = load(ty_, tile, pad(b_.CreateAdd(base, i64(j))));
        s[j] = j == 0 ? x : comb(s[j - 1], x);
      }
      // The threads' totals: inclusive within the warp, then the warps before.
      Value* incl = s[kScanItems - 1];
      for (int d = 1; d < 32; d *= 2) {
        Value* o = shfl_up(incl, d);
        incl = b_.CreateSelect(b_.CreateICmpUGE(lane_, i64(d)), comb(o, incl), incl);
      }
      Value* ex = shfl_up(incl, 1);
      ex = b_.CreateSelect(b_.CreateICmpEQ(lane_, i64(0)), ident(), ex);
      if_then(b_.CreateICmpEQ(lane_, i64(31)), [&] { store(incl, wsum, warp_); });
      b_.CreateStore(ident(), carry_slot);
      if_then(b_.CreateAnd(b_.CreateICmpNE(has_carry, i64(0)), b_.CreateICmpUGT(t, i64(0))),
              [&] { b_.CreateStore(load(ty_, carry, b_.CreateSub(p, i64(1))), carry_slot); });
      barrier();
      Value* wpre = ident();
      for (int w = 0; w < kWarps - 1; ++w)
        wpre = b_.CreateSelect(b_.CreateICmpUGT(warp_, i64(w)), comb(wpre, load(ty_, wsum, i64(w))), wpre);
      Value* pre = comb(b_.CreateLoad(ty_, carry_slot), comb(wpre, ex));
      for (int j = 0; j < kScanItems; ++j) store(comb(pre, s[j]), tile, pad(b_.CreateAdd(base, i64(j))));
      barrier();
      for (int k = 0; k < kScanItems; ++k) {
        Value* j = b_.CreateAdd(i64(k * kAxisThreads), tid_);
        Value* idx = b_.CreateAdd(start, j);
        if_then(b_.CreateICmpSLT(idx, n),
                [&] { store(load(ty_, tile, pad(j)), out, b_.CreateAdd(ooff, b_.CreateMul(idx, os))); });
      }
      barrier();  // the tile and wsum are reused by the next pair
    });
  }

  void scan_rows() {
    Value *in = arg_[0], *out = arg_[1];
    Value *n = iarg(0), *rows = iarg(1), *is = iarg(4), *os = iarg(5);
    llvm::IRBuilder<> eb(&f_->getEntryBlock(), f_->getEntryBlock().begin());
    llvm::AllocaInst* acc = eb.CreateAlloca(ty_);
    loop(gid(), rows, gsize(), [&](Value* r) {
      auto [ioff, ooff] = row_offsets(r);
      b_.CreateStore(ident(), acc);
      loop(i64(0), n, i64(1), [&](Value* i) {
        Value* a = comb(b_.CreateLoad(ty_, acc), load(ty_, in, b_.CreateAdd(ioff, b_.CreateMul(i, is))));
        b_.CreateStore(a, acc);
        store(a, out, b_.CreateAdd(ooff, b_.CreateMul(i, os)));
      });
    });
  }

  // ---- sorts ----
  // The order-preserving unsigned key of a value, as i64 (axis_ops.cpp's Keys).
  Value* key(Value* v) {
    llvm::Type* i64t = b_.getInt64Ty();
    switch (k_.dtype) {
      case DType::Bool: return b_.CreateZExt(b_.CreateICmpNE(v, b_.getInt8(0)), i64t);
      case DType::Int32: return b_.CreateZExt(b_.CreateXor(v, i32(0x80000000u)), i64t);
      case DType::Int64: return b_.CreateXor(v, i64(INT64_MIN));
      case DType::UInt64: return v;
      default: break;
    }
    unsigned bits = ty_->getPrimitiveSizeInBits();
    llvm::IntegerType* it = b_.getIntNTy(bits);
    Value* sign = llvm::ConstantInt::get(it, llvm::APInt::getSignMask(bits));
    Value* ones = llvm::ConstantInt::get(it, llvm::APInt::getAllOnes(bits));
    Value* x = b_.CreateBitCast(v, it);
    x = b_.CreateSelect(b_.CreateICmpEQ(x, sign), llvm::ConstantInt::get(it, 0), x);  // -0.0 -> 0.0
    Value* neg = b_.CreateICmpNE(b_.CreateAnd(x, sign), llvm::ConstantInt::get(it, 0));
    Value* k = b_.CreateXor(x, b_.CreateSelect(neg, ones, sign));
    k = b_.CreateSelect(b_.CreateFCmpUNO(v, v), ones, k);  // every NaN the largest key
    return bits == 64 ? k : b_.CreateZExt(k, i64t);
  }
  // The 8-bit digit at `shift` of the key, or of the row (position / n) when seg != 0; i32.
  Value* digit(Value* v, Value* pos, Value* shift, Value* seg, Value* n) {
    Value* src = key(v);
    if (k_.payload) {
      Value* row = b_.CreateUDiv(b_.CreateZExt(pos, b_.getInt64Ty()), n);
      src = b_.CreateSelect(b_.CreateICmpNE(seg, i64(0)), row, src);
    }
    return b_.CreateTrunc(b_.CreateAnd(b_.CreateLShr(src, shift), i64(255)), b_.getInt32Ty());
  }

  void load_store() {
    bool is_load = k_.kind == Kind::SortLoad || k_.kind == Kind::ScatterCopy;
    Value *vals = arg_[is_load ? 1 : 0], *pay = arg_[is_load ? 2 : 1], *strided = arg_[is_load ? 0 : 2];
    Value *n = iarg(0), *rows = iarg(1), *is = iarg(4), *os = iarg(5);
    loop(gid(), b_.CreateMul(rows, n), gsize(), [&](Value* j) {
      Value* r = b_.CreateUDiv(j, n);
      Value* i = b_.CreateSub(j, b_.CreateMul(r, n));
      auto [ioff, ooff] = row_offsets(r);
      if (is_load) {
        store(load(ty_, strided, b_.CreateAdd(ioff, b_.CreateMul(i, is))), vals, j);
        if (k_.payload) store(b_.CreateTrunc(j, pay_ty()), pay, j);
        return;
      }
      Value* o = b_.CreateAdd(ooff, b_.CreateMul(i, os));
      if (k_.argsort) {
        Value* pos = b_.CreateZExt(load(pay_ty(), pay, j), b_.getInt64Ty());
        store(b_.CreateSub(pos, b_.CreateMul(r, n)), strided, o);
      } else {
        store(load(ty_, vals, j), strided, o);
      }
    });
  }

  void sort_hist() {
    Value *vals = arg_[0], *hist = arg_[1], *status = arg_[2], *total = iarg(0);
    loop(gid(), iarg(1), gsize(), [&](Value* j) { store(i64(0), status, j); });
    const int digits = sort_key_bytes(k_.dtype);
    llvm::GlobalVariable* h = smem("hist", b_.getInt32Ty(), 256 * digits);
    for (int d = 0; d < digits; ++d) store(i32(0), h, b_.CreateAdd(tid_, i64(256 * d)));
    barrier();
    // kHistLoads elements a thread at a time, their loads issued together.
    constexpr int kHistLoads = 4;
    Value* gs = gsize();
    loop(gid(), total, b_.CreateMul(gs, i64(kHistLoads)), [&](Value* j0) {
      std::vector<std::pair<Value*, Value*>> got;
      for (int u = 0; u < kHistLoads; ++u) {
        Value* j = b_.CreateAdd(j0, b_.CreateMul(gs, i64(u)));
        Value* valid = b_.CreateICmpSLT(j, total);
        got.push_back({valid, load(ty_, vals, b_.CreateSelect(valid, j, i64(0)))});
      }
      for (auto [valid, v] : got)
        if_then(valid, [&] {
          Value* k = key(v);
          for (int d = 0; d < digits; ++d) {
            Value* bin = b_.CreateAdd(b_.CreateAnd(b_.CreateLShr(k, i64(8 * d)), i64(255)), i64(256 * d));
            b_.CreateAtomicRMW(llvm::AtomicRMWInst::Add, at(b_.getInt32Ty(), h, bin), i32(1), llvm::MaybeAlign(4),
                               llvm::AtomicOrdering::Monotonic);
          }
        });
    });
    barrier();
    for (int d = 0; d < digits; ++d) {
      Value* bin = b_.CreateAdd(tid_, i64(256 * d));
      Value* c = load(b_.getInt32Ty(), h, bin);
      if_then(b_.CreateICmpNE(c, i32(0)), [&] {
        b_.CreateAtomicRMW(llvm::AtomicRMWInst::Add, at(b_.getInt64Ty(), hist, bin), b_.CreateZExt(c, b_.getInt64Ty()),
                           llvm::MaybeAlign(8), llvm::AtomicOrdering::Monotonic);
      });
    }
  }

  // The exclusive scan of x (an integer, one per thread) over the block; `wsum` holds kWarps
  // values of x's type. Ends with a barrier.
  Value* block_exclusive_scan(Value* x, llvm::GlobalVariable* wsum) {
    Value* incl = x;
    for (int d = 1; d < 32; d *= 2) {
      Value* o = shfl_up(incl, d);
      incl = b_.CreateSelect(b_.CreateICmpUGE(lane_, i64(d)), b_.CreateAdd(o, incl), incl);
    }
    if_then(b_.CreateICmpEQ(lane_, i64(31)), [&] { store(incl, wsum, warp_); });
    barrier();
    Value* pre = b_.CreateSub(incl, x);
    for (int w = 0; w < kWarps - 1; ++w)
      pre = b_.CreateSelect(b_.CreateICmpUGT(warp_, i64(w)), b_.CreateAdd(pre, load(x->getType(), wsum, i64(w))), pre);
    barrier();
    return pre;
  }

  void sort_scan() {
    Value *hist = arg_[0], *offsets = arg_[1];
    llvm::GlobalVariable* wsum = smem("wsum", b_.getInt64Ty(), kWarps);
    loop(i64(0), iarg(0), i64(1), [&](Value* d) {
      Value* bin = b_.CreateAdd(b_.CreateMul(d, i64(256)), tid_);
      store(block_exclusive_scan(load(b_.getInt64Ty(), hist, bin), wsum), offsets, bin);
    });
  }

  // ---- scatters ----
  // The row of update j: idx[j * stride], negative from the end; outside [0, n) when dropped.
  Value* scatter_row(Value* j) {
    Value* r = load(b_.getInt64Ty(), arg_[1], b_.CreateMul(j, iarg(3)));
    return b_.CreateSelect(b_.CreateICmpSLT(r, i64(0)), b_.CreateAdd(r, iarg(1)), r);
  }

  void scatter_mark() {
    Value* winner = arg_[3];
    loop(gid(), iarg(0), gsize(), [&](Value* j) {
      Value* r = scatter_row(j);
      if_then(b_.CreateICmpULT(r, iarg(1)), [&] {
        b_.CreateAtomicRMW(llvm::AtomicRMWInst::UMax, at(b_.getInt64Ty(), winner, r), b_.CreateAdd(j, i64(1)),
                           llvm::MaybeAlign(8), llvm::AtomicOrdering::Monotonic);
      });
    });
  }

  void scatter_apply() {
    Value *out = arg_[0], *v = arg_[2], *winner = arg_[3];
    Value *k = iarg(0), *n = iarg(1), *row = iarg(2), *vs0 = iarg(4);
    llvm::IRBuilder<> eb(&f_->getEntryBlock(), f_->getEntryBlock().begin());
    llvm::AllocaInst* jslot = eb.CreateAlloca(b_.getInt64Ty());
    loop(gid(), b_.CreateMul(k, row), gsize(), [&](Value* t) {
      // Update j, element e of its row (no division for rows of one element).
      b_.CreateStore(t, jslot);
      if_then(b_.CreateICmpNE(row, i64(1)), [&] { b_.CreateStore(b_.CreateUDiv(t, row), jslot); });
      Value* j = b_.CreateLoad(b_.getInt64Ty(), jslot);
      Value* e = b_.CreateSub(t, b_.CreateMul(j, row));
      Value* r = scatter_row(j);
      if_then(b_.CreateICmpULT(r, n), [&] {
        Value* voff = b_.CreateMul(j, vs0);
        Value* rest = e;
        for (int d = k_.rank - 2; d >= 0; --d) {
          Value* ext = iarg(5 + 2 * d);
          Value* coord = d == 0 ? rest : b_.CreateURem(rest, ext);
          if (d > 0) rest = b_.CreateUDiv(rest, ext);
          voff = b_.CreateAdd(voff, b_.CreateMul(coord, iarg(6 + 2 * d)));
        }
        Value* val = load(ty_, v, voff);
        Value* dst = at(ty_, out, b_.CreateAdd(b_.CreateMul(r, row), e));
        if (!k_.add) {  // the row's last update in index order writes it
          Value* w = load(b_.getInt64Ty(), winner, r);
          if_then(b_.CreateICmpEQ(w, b_.CreateAdd(j, i64(1))), [&] { b_.CreateStore(val, dst); });
        } else if (k_.dtype == DType::Bool) {  // or: a true update stores true
          if_then(b_.CreateICmpNE(val, b_.getInt8(0)), [&] { b_.CreateStore(b_.getInt8(1), dst); });
        } else {
          auto op = ty_->isFloatingPointTy() ? llvm::AtomicRMWInst::FAdd : llvm::AtomicRMWInst::Add;
          b_.CreateAtomicRMW(op, dst, val, llvm::MaybeAlign(dtype_size(k_.dtype)), llvm::AtomicOrdering::Monotonic);
        }
      });
    });
  }

  // The lanes of the warp whose d (9 bits: a digit, or 256) equals this lane's, by one ballot a bit.
  Value* ballot_peers(Value* d) {
    Value* peers = i32(0xffffffff);
    for (int bit = 0; bit < 9; ++bit) {
      Value* set = b_.CreateICmpNE(b_.CreateAnd(d, i32(1 << bit)), i32(0));
      Value* bal = b_.CreateIntrinsic(llvm::Intrinsic::nvvm_vote_ballot_sync, {}, {i32(0xffffffff), set});
      peers = b_.CreateAnd(peers, b_.CreateSelect(set, bal, b_.CreateNot(bal)));
    }
    return peers;
  }

  void sort_pass() {
    Value *vals = arg_[0], *pay = arg_[1], *vals_out = arg_[2], *pay_out = arg_[3], *status = arg_[4];
    Value *offsets = arg_[5], *ctr = arg_[6];
    Value *total = iarg(0), *shift = iarg(2), *seg = iarg(3), *n = iarg(4), *epoch = iarg(5);
    const int64_t tile = sort_tile(k_);
    const int rounds = k_.items;
    llvm::Type *i32t = b_.getInt32Ty(), *i64t = b_.getInt64Ty();
    llvm::GlobalVariable* cnt = smem("counts", i32t, kWarps * 256);
    llvm::GlobalVariable* keys = smem("keys", ty_, tile);
    llvm::GlobalVariable* pays = k_.payload ? smem("pays", pay_ty(), tile) : nullptr;
    llvm::GlobalVariable* delta = smem("delta", i64t, 256);
    llvm::GlobalVariable* lstart = smem("lstart", i32t, 256);
    llvm::GlobalVariable* wsum = smem("wsum", i32t, kWarps);
    llvm::GlobalVariable* tslot = smem("tile", i64t, 1);
    // The tile's number, in the order blocks start.
    if_then(b_.CreateICmpEQ(tid_, i64(0)), [&] {
      Value* t = b_.CreateAtomicRMW(llvm::AtomicRMWInst::Add, ctr, i32(1), llvm::MaybeAlign(4), llvm::AtomicOrdering::Monotonic);
      store(b_.CreateZExt(t, i64t), tslot, i64(0));
    });
    for (int w = 0; w < kWarps; ++w) store(i32(0), cnt, b_.CreateAdd(tid_, i64(256 * w)));
    barrier();
    Value* t = load(i64t, tslot, i64(0));
    Value* tstart = b_.CreateMul(t, i64(tile));
    // Each warp ranks its 32 x rounds consecutive elements, 32 at a time, by digit: the place of
    // each in the warp's run of its bin.
    struct Item { Value *valid, *v, *pos, *d, *peers, *rank; };
    std::vector<Item> items;
    Value* lt = b_.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_lanemask_lt, {}, {});
    Value* wbase = b_.CreateMul(warp_, i64(256));
    Value* first = b_.CreateAdd(tstart, b_.CreateMul(warp_, i64(32 * rounds)));
    // Every load of the thread first, so that they are in flight together.
    for (int k = 0; k < rounds; ++k) {
      Value* idx = b_.CreateAdd(first, b_.CreateAdd(i64(32 * k), lane_));
      Value* valid = b_.CreateICmpSLT(idx, total);
      Value* safe = b_.CreateSelect(valid, idx, i64(0));
      Value* v = load(ty_, vals, safe);
      Value* pos = k_.payload ? load(pay_ty(), pay, safe) : nullptr;
      items.push_back({valid, v, pos, nullptr, nullptr, nullptr});
    }
    // Every element's digit and peers (the lanes with its digit), independent of one another.
    for (Item& item : items) {
      item.d = b_.CreateSelect(item.valid, digit(item.v, item.pos, shift, seg, n), i32(256));
      item.peers = k_.ballot ? ballot_peers(item.d)
                             : b_.CreateIntrinsic(llvm::Intrinsic::nvvm_match_any_sync_i32, {}, {i32(0xffffffff), item.d});
    }
    // Then the warp's bin counters, 32 elements at a time.
    for (Item& item : items) {
      Value *valid = item.valid, *d = item.d, *peers = item.peers;
      Value* below = b_.CreateAnd(peers, lt);
      Value* rank = b_.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, below);
      Value* slot = b_.CreateAdd(wbase, b_.CreateZExt(b_.CreateAnd(d, i32(255)), i64t));
      Value* before = load(i32t, cnt, slot);
      warp_sync();
      if_then(b_.CreateAnd(valid, b_.CreateICmpEQ(below, i32(0))), [&] {
        store(b_.CreateAdd(before, b_.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, peers)), cnt, slot);
      });
      warp_sync();
      item.rank = b_.CreateAdd(before, rank);
    }
    barrier();
    // Per bin (a thread each): the warps' runs of it, one after another; the tile's count.
    Value* c = i32(0);
    for (int w = 0; w < kWarps; ++w) {
      Value* s = b_.CreateAdd(tid_, i64(256 * w));
      Value* x = load(i32t, cnt, s);
      store(c, cnt, s);
      c = b_.CreateAdd(c, x);
    }
    // Publish the count (inclusive for tile 0), then look back over the earlier tiles' words.
    Value* tag = b_.CreateShl(epoch, i64(48));
    Value* inc_bit = i64(int64_t{1} << 47);
    Value* word_at = at(i64t, status, b_.CreateAdd(b_.CreateMul(t, i64(256)), tid_));
    Value* c64 = b_.CreateZExt(c, i64t);
    Value* t0 = b_.CreateICmpEQ(t, i64(0));
    b_.CreateStore(b_.CreateOr(b_.CreateOr(tag, c64), b_.CreateSelect(t0, inc_bit, i64(0))), word_at)->setVolatile(true);
    Value* lpre = block_exclusive_scan(c, wsum);
    llvm::IRBuilder<> eb(&f_->getEntryBlock(), f_->getEntryBlock().begin());
    llvm::AllocaInst* excl = eb.CreateAlloca(i64t);
    llvm::AllocaInst* j = eb.CreateAlloca(i64t);
    b_.CreateStore(i64(0), excl);
    b_.CreateStore(b_.CreateSub(t, i64(1)), j);
    if_then(b_.CreateNot(t0), [&] {
      llvm::BasicBlock* spin = llvm::BasicBlock::Create(ctx_, "lookback", f_);
      llvm::BasicBlock* got = llvm::BasicBlock::Create(ctx_, "lookback_got", f_);
      llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx_, "lookback_done", f_);
      b_.CreateBr(spin);
      b_.SetInsertPoint(spin);
      Value* jj = b_.CreateLoad(i64t, j);
      auto* w = b_.CreateLoad(i64t, at(i64t, status, b_.CreateAdd(b_.CreateMul(jj, i64(256)), tid_)));
      w->setVolatile(true);
      b_.CreateCondBr(b_.CreateICmpEQ(b_.CreateLShr(w, i64(48)), epoch), got, spin);  // not yet published
      b_.SetInsertPoint(got);
      b_.CreateStore(b_.CreateAdd(b_.CreateLoad(i64t, excl), b_.CreateAnd(w, i64((int64_t{1} << 47) - 1))), excl);
      b_.CreateStore(b_.CreateSub(jj, i64(1)), j);
      b_.CreateCondBr(b_.CreateICmpNE(b_.CreateAnd(w, inc_bit), i64(0)), done, spin);
      b_.SetInsertPoint(done);
      Value* e = b_.CreateLoad(i64t, excl);
      b_.CreateStore(b_.CreateOr(b_.CreateOr(tag, inc_bit), b_.CreateAdd(e, c64)), word_at)->setVolatile(true);
    });
    // Where the bin's run of this tile goes, less its start within the tile.
    Value* goff = b_.CreateAdd(load(i64t, offsets, tid_), b_.CreateLoad(i64t, excl));
    store(b_.CreateSub(goff, b_.CreateZExt(lpre, i64t)), delta, tid_);
    store(lpre, lstart, tid_);
    barrier();
    // The tile in its sorted order, in shared memory.
    for (const Item& it : items)
      if_then(it.valid, [&] {
        Value* d = b_.CreateZExt(it.d, i64t);
        Value* place = b_.CreateAdd(b_.CreateAdd(load(i32t, lstart, d), load(i32t, cnt, b_.CreateAdd(wbase, d))), it.rank);
        Value* p = b_.CreateZExt(place, i64t);
        store(it.v, keys, p);
        if (k_.payload) store(it.pos, pays, p);
      });
    barrier();
    // Out, a run of each bin after another: consecutive threads write consecutive places.
    Value* count = b_.CreateSub(total, tstart);
    for (int k = 0; k < rounds; ++k) {
      Value* i = b_.CreateAdd(i64(k * kAxisThreads), tid_);
      if_then(b_.CreateICmpSLT(i, count), [&] {
        Value* v = load(ty_, keys, i);
        Value* pos = k_.payload ? load(pay_ty(), pays, i) : nullptr;
        Value* d = b_.CreateZExt(digit(v, pos, shift, seg, n), i64t);
        Value* dest = b_.CreateAdd(load(i64t, delta, d), i);
        store(v, vals_out, dest);
        if (k_.payload) store(pos, pay_out, dest);
      });
    }
  }

  const AxisKernel& k_;
  llvm::Module& m_;
  llvm::LLVMContext& ctx_;
  llvm::IRBuilder<> b_;
  llvm::Function* f_ = nullptr;
  std::vector<Value*> arg_;
  Value *tid_ = nullptr, *lane_ = nullptr, *warp_ = nullptr;
  llvm::Type* ty_ = nullptr;
};

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::ScanTotals: return "scan_totals";
    case Kind::ScanTiles: return "scan_tiles";
    case Kind::ScanRows: return "scan_rows";
    case Kind::SortLoad: return "sort_load";
    case Kind::SortHist: return "sort_hist";
    case Kind::SortPass: return "sort_pass";
    case Kind::SortStore: return "sort_store";
    case Kind::SortScan: return "sort_scan";
    case Kind::ScatterCopy: return "scatter_copy";
    case Kind::ScatterMark: return "scatter_mark";
    case Kind::ScatterApply: return "scatter_apply";
  }
  return "?";
}

}  // namespace

int sort_key_bytes(DType t) {
  switch (t) {
    case DType::Bool: return 1;
    case DType::Int32: case DType::Float32: return 4;
    default: return 8;
  }
}

int64_t sort_tile(const AxisKernel& k) { return int64_t{kAxisThreads} * k.items; }

int sort_items_max(DType t, int payload) {
  // Beside the tile: the warps' bin counters, the bins' deltas and starts, the warp sums, the tile number.
  constexpr int64_t kOther = kWarps * 256 * 4 + 256 * 8 + 256 * 4 + kWarps * 4 + 8;
  const int64_t per = kAxisThreads * static_cast<int64_t>(dtype_size(t) + static_cast<size_t>(payload));
  return static_cast<int>(std::min<int64_t>(32, (48 * 1024 - kOther) / per));
}

std::string AxisKernel::name() const {
  if (kind == Kind::ScatterMark) return "scatter_mark";
  std::string s = std::string(kind_name(kind));
  if (kind != Kind::SortScan) s += std::string("_") + dtype_name(dtype);
  if (is_scan(kind)) s += product ? "_prod" : "_sum";
  if (kind == Kind::ScatterApply) s += add ? "_add" : "_set";
  if (is_strided(kind) || kind == Kind::ScatterApply) s += "_r" + std::to_string(rank);
  if (!is_scan(kind) && !is_scatter(kind) && kind != Kind::SortScan) s += "_p" + std::to_string(payload);
  if (kind == Kind::SortStore && argsort) s += "_arg";
  if (kind == Kind::SortPass) s += "_i" + std::to_string(items) + (ballot ? "_ballot" : "");
  if (kind == Kind::SortPass && min_blocks > 0) s += "_b" + std::to_string(min_blocks);
  return s;
}

std::string AxisKernel::str() const { return "kernel " + name() + "\n"; }

PtxKernel emit_axis_ptx(const AxisKernel& k, int sm) {
  std::string entry = "arrayc_" + k.name();
  return compile_ptx(entry, sm, [&](llvm::Module& m) { AxisEmitter(k, m).emit(entry); });
}

}  // namespace arrayc::detail
