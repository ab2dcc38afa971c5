#include "codegen/body_emitter.h"

#include <tuple>

#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/Intrinsics.h>

#include <limits>

#include "codegen/cpu/half_convert.h"
#include "codegen/cpu/vmath/vmath.h"
#include "ir/philox.h"

namespace arrayc::detail {

using llvm::Value;

llvm::Type* BodyEmitter::value_type(DType t) const {
  auto& c = b_.getContext();
  bool host = opts_.target == EmitOptions::Target::Cpu;
  switch (t) {
    case DType::Bool: return llvm::Type::getInt1Ty(c);
    case DType::Float16: return host ? llvm::Type::getFloatTy(c) : llvm::Type::getHalfTy(c);
    case DType::BFloat16: return host ? llvm::Type::getFloatTy(c) : llvm::Type::getBFloatTy(c);
    case DType::Float32: return llvm::Type::getFloatTy(c);
    case DType::Float64: return llvm::Type::getDoubleTy(c);
    default: return llvm::Type::getIntNTy(c, static_cast<unsigned>(8 * dtype_size(t)));
  }
}

llvm::Type* BodyEmitter::memory_type(DType t) const {
  auto& c = b_.getContext();
  if (t == DType::Bool) return llvm::Type::getInt8Ty(c);
  // bfloat16 is moved as i16 on the host, where the conversions are integer operations.
  if (opts_.target == EmitOptions::Target::Cpu && is_half(t))
    return t == DType::Float16 ? llvm::Type::getHalfTy(c) : llvm::Type::getInt16Ty(c);
  return value_type(t);
}

Value* BodyEmitter::load(DType t, Value* ptr, Value* offset) {
  Value* p = b_.CreateInBoundsGEP(memory_type(t), ptr, offset);
  Value* v = b_.CreateAlignedLoad(memory_type(t), p, llvm::Align(dtype_size(t)));
  if (t == DType::Bool) return b_.CreateICmpNE(v, b_.getInt8(0));
  if (is_half(t) && opts_.target == EmitOptions::Target::Cpu) return widen_half(v, t);
  return v;
}

void BodyEmitter::store(DType t, Value* v, Value* ptr, Value* offset) {
  if (t == DType::Bool) v = b_.CreateZExt(v, b_.getInt8Ty());
  if (is_half(t) && opts_.target == EmitOptions::Target::Cpu) v = half_bits(v, t);
  Value* p = b_.CreateInBoundsGEP(memory_type(t), ptr, offset);
  b_.CreateAlignedStore(v, p, llvm::Align(dtype_size(t)));
}

// ---- 16-bit floats ----
// On the host a float16/bfloat16 value is a float32 that is exactly a 16-bit value: loads widen,
// every op's result is rounded (round_half), stores narrow exactly. On NVPTX the value is a
// half/bfloat: add, subtract, multiply, compare, min/max and select are native where the GPU has
// them (sm_80+; LLVM promotes to float32 elsewhere), other ops widen to float32 and round back.

// A host value from memory (half, or bfloat16's i16) to float32, exactly.
Value* BodyEmitter::widen_half(Value* v, DType t) {
  host_half_ = true;
  if (t == DType::Float16 && use_f16c_calls(opts_.cpu_features))  // host float16 speed: half_convert.h
    return emit_f16_widen(b_, b_.CreateBitCast(v, b_.getInt16Ty()));
  if (t == DType::Float16) return b_.CreateFPExt(v, b_.getFloatTy());
  return b_.CreateBitCast(b_.CreateShl(b_.CreateZExt(v, b_.getInt32Ty()), 16), b_.getFloatTy());
}

// A host float32 that is exactly a 16-bit value to its memory form.
Value* BodyEmitter::half_bits(Value* v, DType t) {
  host_half_ = true;
  if (t == DType::Float16) return b_.CreateFPTrunc(v, b_.getHalfTy());
  return b_.CreateTrunc(b_.CreateLShr(b_.CreateBitCast(v, b_.getInt32Ty()), 16), b_.getInt16Ty());
}

// A float32 rounded to t (nearest even; overflow to inf, NaN stays NaN, subnormals kept), as a
// value of t: on the host the float32 of the rounded value, on NVPTX the half/bfloat.
Value* BodyEmitter::round_half(Value* x, DType t) {
  if (opts_.target != EmitOptions::Target::Cpu) return b_.CreateFPTrunc(x, value_type(t));
  if (t == DType::Float16 && use_f16c_calls(opts_.cpu_features)) return emit_f16_round(b_, x);  // half_convert.h
  if (t == DType::Float16) return b_.CreateFPExt(b_.CreateFPTrunc(x, b_.getHalfTy()), b_.getFloatTy());
  // bfloat16: add 0x7fff plus the kept lowest bit, drop the low half; NaN stays quiet NaN.
  auto* i32 = b_.getInt32Ty();
  Value* u = b_.CreateBitCast(x, i32);
  Value* lsb = b_.CreateAnd(b_.CreateLShr(u, 16), llvm::ConstantInt::get(i32, 1));
  Value* r = b_.CreateAdd(u, b_.CreateAdd(lsb, llvm::ConstantInt::get(i32, 0x7fff)));
  Value* nan = b_.CreateOr(u, llvm::ConstantInt::get(i32, 0x00400000));
  r = b_.CreateSelect(b_.CreateFCmpUNO(x, x), nan, r);
  return b_.CreateBitCast(b_.CreateAnd(r, llvm::ConstantInt::get(i32, 0xffff0000u)), b_.getFloatTy());
}

// numpy's maximum/minimum of two float32 values that are 16-bit values, without llvm.maximum:
// InstCombine narrows maximum(fpext a, fpext b) to a half maximum, which the x86 backend's
// promotion then gets wrong for NaN (maximum(0, NaN) gave 0 in LLVM 19). NaN propagates; of
// equal values (+0 and -0) the maximum has the sign bits and-ed, the minimum or-ed.
// numpy's maximum/minimum of floats: a NaN operand gives NaN, otherwise a when it is strictly
// greater (less), else b. Equal operands give b, so the sign of a zero result is b's:
// minimum(-0.0, 0.0) is 0.0, as numpy computes it (IEEE 754-2019's minimum, LLVM's
// llvm.minimum, would give -0.0, and atan2 or 1/x of it would differ from numpy's).
Value* BodyEmitter::float_min_max(bool max, Value* a, Value* b) {
  Value* a_wins = max ? b_.CreateFCmpOGT(a, b) : b_.CreateFCmpOLT(a, b);
  Value* r = b_.CreateSelect(a_wins, a, b);
  return b_.CreateSelect(b_.CreateFCmpUNO(a, b), b_.CreateFAdd(a, b), r);
}

// A value of t as a float32 (exact).
Value* BodyEmitter::half_to_f32(Value* v, DType t) {
  (void)t;
  return v->getType()->isFloatTy() ? v : b_.CreateFPExt(v, b_.getFloatTy());
}

// A double rounded to float32 with round-to-odd (truncate, then set the last bit when inexact):
// rounding that float32 to 16 bits gives the correctly rounded 16-bit value of the double,
// float32 having more than two bits beyond either 16-bit format.
Value* BodyEmitter::double_to_f32_odd(Value* x) {
  auto* i32 = b_.getInt32Ty();
  Value* f = b_.CreateFPTrunc(x, b_.getFloatTy());
  Value* back = b_.CreateFPExt(f, b_.getDoubleTy());
  auto fabs = [&](Value* v) { return b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, v); };
  Value* u = b_.CreateBitCast(f, i32);
  // Rounded away from zero: step back toward zero (the bits of a float are sign and magnitude).
  u = b_.CreateSelect(b_.CreateFCmpOGT(fabs(back), fabs(x)), b_.CreateSub(u, llvm::ConstantInt::get(i32, 1)), u);
  u = b_.CreateSelect(b_.CreateFCmpUNE(back, x), b_.CreateOr(u, llvm::ConstantInt::get(i32, 1)), u);
  return b_.CreateBitCast(u, b_.getFloatTy());
}

Value* BodyEmitter::cast(Value* v, DType from, DType to) {
  if (from == to) return v;
  if (is_half(from) || is_half(to)) {
    Value* x = v;
    if (is_half(from)) {
      x = half_to_f32(v, from);
      from = DType::Float32;
    }
    if (!is_half(to)) return cast(x, from, to);
    x = from == DType::Float64 ? double_to_f32_odd(x) : cast(x, from, DType::Float32);
    return round_half(x, to);
  }
  llvm::Type* ty = value_type(to);
  if (to == DType::Bool)
    return is_float(from) ? b_.CreateFCmpUNE(v, llvm::ConstantFP::get(v->getType(), 0.0))
                          : b_.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
  if (from == DType::Bool) return is_float(to) ? b_.CreateUIToFP(v, ty) : b_.CreateZExt(v, ty);
  if (is_float(from) && is_float(to)) return b_.CreateFPCast(v, ty);
  if (is_float(to)) return is_unsigned(from) ? b_.CreateUIToFP(v, ty) : b_.CreateSIToFP(v, ty);
  if (is_float(from))  // saturating, NaN -> 0 (numpy leaves this undefined; we pin it down)
    return b_.CreateIntrinsic(is_unsigned(to) ? llvm::Intrinsic::fptoui_sat : llvm::Intrinsic::fptosi_sat,
                              {ty, v->getType()}, {v});
  return is_unsigned(from) ? b_.CreateZExtOrTrunc(v, ty) : b_.CreateSExtOrTrunc(v, ty);
}

// Transcendentals: our vectorizable polynomials on the host, libdevice's __nv_* on NVPTX (the
// nvptx target links libdevice into the module). sqrt on NVPTX is llvm.sqrt, which becomes the
// correctly rounded sqrt.rn: libdevice's __nv_sqrtf picks sqrt.approx.f32 (1 ULP) unless
// __nvvm_reflect("__CUDA_PREC_SQRT") says otherwise, and LLVM's NVVMReflect answers 0.
Value* BodyEmitter::math(int fn, const std::vector<Value*>& args) {
  if (opts_.target == EmitOptions::Target::Cpu)
    return emit_math_call(b_, static_cast<MathFn>(fn), args, MathOptions{opts_.fast_math});
  if (static_cast<MathFn>(fn) == MathFn::Sqrt) return b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, args[0]);
  llvm::Type* ty = args[0]->getType();
  std::string name = std::string("__nv_") + math_fn_name(static_cast<MathFn>(fn)) + (ty->isFloatTy() ? "f" : "");
  std::vector<llvm::Type*> types(args.size(), ty);
  llvm::Module* m = b_.GetInsertBlock()->getModule();
  llvm::FunctionCallee f = m->getOrInsertFunction(name, llvm::FunctionType::get(ty, types, false));
  return b_.CreateCall(f, args);
}

Value* BodyEmitter::identity(Op reduce, DType t) {
  llvm::Type* ty = value_type(t);
  bool fl = is_float(t);
  switch (reduce) {
    case Op::Sum: case Op::Mean:
      return fl ? llvm::ConstantFP::get(ty, 0.0) : llvm::ConstantInt::get(ty, 0);
    case Op::Prod:
      return fl ? llvm::ConstantFP::get(ty, 1.0) : llvm::ConstantInt::get(ty, 1);
    case Op::Max:
      if (fl) return llvm::ConstantFP::getInfinity(ty, true);
      if (t == DType::Bool || is_unsigned(t)) return llvm::ConstantInt::get(ty, 0);
      return llvm::ConstantInt::get(ty, llvm::APInt::getSignedMinValue(ty->getIntegerBitWidth()));
    case Op::Min:
      if (fl) return llvm::ConstantFP::getInfinity(ty, false);
      if (t == DType::Bool || is_unsigned(t)) return llvm::ConstantInt::get(ty, llvm::APInt::getMaxValue(ty->getIntegerBitWidth()));
      return llvm::ConstantInt::get(ty, llvm::APInt::getSignedMaxValue(ty->getIntegerBitWidth()));
    default: ARRAYC_INTERNAL_CHECK(false, "not a reduction");
  }
  return nullptr;
}

Value* BodyEmitter::combine(Op reduce, DType t, Value* acc, Value* v) {
  bool fl = is_float(t);
  // Reassociation lets the vectorizer keep several partial sums; the result is still a fixed
  // function of the binary and the chunking, so runs are reproducible.
  llvm::FastMathFlags fmf;
  fmf.setAllowReassoc();
  llvm::IRBuilder<>::FastMathFlagGuard guard(b_);
  b_.setFastMathFlags(fmf);
  switch (reduce) {
    case Op::Sum: case Op::Mean: return fl ? b_.CreateFAdd(acc, v) : b_.CreateAdd(acc, v);
    case Op::Prod: return fl ? b_.CreateFMul(acc, v) : b_.CreateMul(acc, v);
    case Op::Max:
      if (fl) return b_.CreateBinaryIntrinsic(llvm::Intrinsic::maximum, acc, v);
      if (t == DType::Bool) return b_.CreateOr(acc, v);
      return b_.CreateBinaryIntrinsic(is_unsigned(t) ? llvm::Intrinsic::umax : llvm::Intrinsic::smax, acc, v);
    case Op::Min:
      if (fl) return b_.CreateBinaryIntrinsic(llvm::Intrinsic::minimum, acc, v);
      if (t == DType::Bool) return b_.CreateAnd(acc, v);
      return b_.CreateBinaryIntrinsic(is_unsigned(t) ? llvm::Intrinsic::umin : llvm::Intrinsic::smin, acc, v);
    default: ARRAYC_INTERNAL_CHECK(false, "not a reduction");
  }
  return nullptr;
}

// Philox-4x32-10 on (index, seed), then the mapping of lib/ir/philox.h.
Value* BodyEmitter::random(const KernelLeaf& lf, Value* index) {
  auto* i32 = b_.getInt32Ty();
  auto* i64 = b_.getInt64Ty();
  Value* x[4] = {b_.CreateTrunc(index, i32), b_.CreateTrunc(b_.CreateLShr(index, 32), i32),
                 b_.getInt32(0), b_.getInt32(0)};
  // The seed is a constant parameter (issue 26): one kernel for every seed.
  Value* seed = constants_.at(lf.param);
  Value* k0 = b_.CreateTrunc(seed, i32);
  Value* k1 = b_.CreateTrunc(b_.CreateLShr(seed, 32), i32);
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 = b_.CreateAdd(k0, b_.getInt32(kPhiloxW0));
      k1 = b_.CreateAdd(k1, b_.getInt32(kPhiloxW1));
    }
    Value* p0 = b_.CreateMul(b_.CreateZExt(x[0], i64), b_.getInt64(kPhiloxM0));
    Value* p1 = b_.CreateMul(b_.CreateZExt(x[2], i64), b_.getInt64(kPhiloxM1));
    Value* hi0 = b_.CreateTrunc(b_.CreateLShr(p0, 32), i32);
    Value* lo0 = b_.CreateTrunc(p0, i32);
    Value* hi1 = b_.CreateTrunc(b_.CreateLShr(p1, 32), i32);
    Value* lo1 = b_.CreateTrunc(p1, i32);
    Value* n0 = b_.CreateXor(b_.CreateXor(hi1, x[1]), k0);
    Value* n2 = b_.CreateXor(b_.CreateXor(hi0, x[3]), k1);
    x[0] = n0;
    x[1] = lo1;
    x[2] = n2;
    x[3] = lo0;
  }
  bool f32 = lf.dtype == DType::Float32;
  llvm::Type* ft = value_type(lf.dtype);
  auto bits53 = [&](Value* hi, Value* lo) {
    Value* w = b_.CreateOr(b_.CreateShl(b_.CreateZExt(hi, i64), 32), b_.CreateZExt(lo, i64));
    return b_.CreateLShr(w, 11);
  };
  Value* scale = llvm::ConstantFP::get(ft, f32 ? kTwoPow24Inv : kTwoPow53Inv);
  if (lf.op == Op::RandUniform) {
    Value* bits = f32 ? b_.CreateLShr(x[0], 8) : bits53(x[0], x[1]);
    return b_.CreateFMul(b_.CreateUIToFP(bits, ft), scale);
  }
  Value *u1, *u2;
  if (f32) {
    u1 = b_.CreateFMul(b_.CreateUIToFP(b_.CreateAdd(b_.CreateLShr(x[0], 8), b_.getInt32(1)), ft), scale);
    u2 = b_.CreateFMul(b_.CreateUIToFP(b_.CreateLShr(x[1], 8), ft), scale);
  } else {
    u1 = b_.CreateFMul(b_.CreateUIToFP(b_.CreateAdd(bits53(x[0], x[1]), b_.getInt64(1)), ft), scale);
    u2 = b_.CreateFMul(b_.CreateUIToFP(bits53(x[2], x[3]), ft), scale);
  }
  Value* r = math(static_cast<int>(MathFn::Sqrt),
                  {b_.CreateFMul(llvm::ConstantFP::get(ft, -2.0), math(static_cast<int>(MathFn::Log), {u1}))});
  Value* two_pi = llvm::ConstantFP::get(ft, f32 ? 6.2831853f : 6.283185307179586);
  return b_.CreateFMul(r, math(static_cast<int>(MathFn::Cos), {b_.CreateFMul(two_pi, u2)}));
}

void BodyEmitter::set_constants(const std::vector<Value*>& bits) {
  constants_.assign(k_.num_constants, nullptr);
  for (const KernelLeaf& lf : k_.leaves) {
    if (lf.param < 0) continue;
    Value* v = bits.at(lf.param);
    llvm::Type* ty = value_type(lf.dtype);
    bool seed = lf.op == Op::RandUniform || lf.op == Op::RandNormal;  // its 64 bits as they are
    if (!seed && is_float(lf.dtype)) v = b_.CreateFPCast(b_.CreateBitCast(v, b_.getDoubleTy()), ty);
    else if (!seed) v = b_.CreateTrunc(v, ty);  // bool never is a parameter (constant_is_inlined)
    constants_[lf.param] = v;
  }
}

Value* BodyEmitter::leaf(const KernelLeaf& lf, const std::vector<Value*>& ptrs, Value* offset) {
  switch (lf.op) {
    case Op::Buffer: return load(lf.dtype, ptrs[lf.ptr], offset);
    case Op::Constant: {
      if (lf.param >= 0) return constants_.at(lf.param);
      llvm::Type* ty = value_type(lf.dtype);
      if (is_float(lf.dtype)) return llvm::ConstantFP::get(ty, lf.value.f);
      return llvm::ConstantInt::get(ty, static_cast<uint64_t>(lf.value.i), true);
    }
    case Op::Iota: return cast(offset, DType::Int64, lf.dtype);
    case Op::RandUniform: case Op::RandNormal: return random(lf, offset);
    default: ARRAYC_INTERNAL_CHECK(false, "not a kernel leaf");
  }
  return nullptr;
}

// Indexing: ops.def's Gather. The index counts from the end when negative and is clamped into
// [0, n), so no index reads outside the source.
Value* BodyEmitter::gather(const KernelLeaf& lf, const std::vector<Value*>& ptrs, const std::vector<Value*>& offsets,
                           Value* index, DType index_dtype) {
  Value* i = cast(index, index_dtype, DType::Int64);
  Value* stride = offsets[lf.aux];
  Value* n = offsets[lf.aux + 1];
  i = b_.CreateSelect(b_.CreateICmpSLT(i, b_.getInt64(0)), b_.CreateAdd(i, n), i);
  i = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, i, b_.getInt64(0));
  i = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, i, b_.CreateSub(n, b_.getInt64(1)));
  return load(lf.dtype, ptrs[lf.ptr], b_.CreateAdd(offsets[lf.index], b_.CreateMul(i, stride)));
}

// Integer power by squaring, in a small internal function; a negative exponent gives 0, except
// for bases 1 and -1 (numpy raises instead; a kernel cannot).
Value* BodyEmitter::int_pow(DType t, Value* base, Value* exp) {
  llvm::Module* m = b_.GetInsertBlock()->getModule();
  llvm::Type* ty = value_type(t);
  std::string name = std::string("arrayc_ipow_") + dtype_name(t);
  llvm::Function* f = m->getFunction(name);
  if (!f) {
    f = llvm::Function::Create(llvm::FunctionType::get(ty, {ty, ty}, false),
                               llvm::Function::InternalLinkage, name, m);
    llvm::IRBuilder<> fb(llvm::BasicBlock::Create(m->getContext(), "entry", f));
    Value* x = f->getArg(0);
    Value* e = f->getArg(1);
    auto* neg = llvm::BasicBlock::Create(m->getContext(), "neg", f);
    auto* loop = llvm::BasicBlock::Create(m->getContext(), "loop", f);
    auto* done = llvm::BasicBlock::Create(m->getContext(), "done", f);
    llvm::Constant* zero = llvm::ConstantInt::get(ty, 0);
    llvm::Constant* one = llvm::ConstantInt::get(ty, 1);
    fb.CreateCondBr(is_unsigned(t) ? fb.getFalse() : fb.CreateICmpSLT(e, zero), neg, loop);
    fb.SetInsertPoint(neg);
    Value* odd = fb.CreateICmpNE(fb.CreateAnd(e, one), zero);
    Value* minus_one = fb.CreateSelect(odd, llvm::ConstantInt::get(ty, -1, true), one);
    Value* r = fb.CreateSelect(fb.CreateICmpEQ(x, one), one,
                               fb.CreateSelect(fb.CreateICmpEQ(x, llvm::ConstantInt::get(ty, -1, true)), minus_one, zero));
    fb.CreateRet(r);
    auto* entry = &f->getEntryBlock();
    fb.SetInsertPoint(loop);
    llvm::PHINode* acc = fb.CreatePHI(ty, 2);
    llvm::PHINode* b = fb.CreatePHI(ty, 2);
    llvm::PHINode* k = fb.CreatePHI(ty, 2);
    acc->addIncoming(one, entry);
    b->addIncoming(x, entry);
    k->addIncoming(e, entry);
    Value* is_zero = fb.CreateICmpEQ(k, zero);
    auto* body = llvm::BasicBlock::Create(m->getContext(), "body", f);
    fb.CreateCondBr(is_zero, done, body);
    fb.SetInsertPoint(body);
    Value* bit = fb.CreateICmpNE(fb.CreateAnd(k, one), zero);
    Value* acc2 = fb.CreateSelect(bit, fb.CreateMul(acc, b), acc);
    Value* b2 = fb.CreateMul(b, b);
    Value* k2 = fb.CreateLShr(k, one);
    acc->addIncoming(acc2, body);
    b->addIncoming(b2, body);
    k->addIncoming(k2, body);
    fb.CreateBr(loop);
    fb.SetInsertPoint(done);
    fb.CreateRet(acc);
  }
  return b_.CreateCall(f, {base, exp});
}

// x^3 and x^4 for a constant float exponent (GELU's x**3; the simplify pass has already made
// 0, 1, 2, -1 and 0.5 cheaper ops). From the exact square x*x = h + l, l = fma(x, x, -h):
// x^3 = fma(h, x, l*x) and x^4 = fma(h, h, 2h*l) round once, after errors below 2^-46 of the
// result (l*x's rounding; l*l dropped), so they are within 0.5 ULP + 2^-22 ULP of the exact
// power: as close as a correctly rounded pow but for near-ties, in 4-6 operations where pow
// takes about fifty. Results within 2^24 (f64: 2^53) of underflow get up to 1 ULP, the small
// term rounding on the subnormal grid. Where the result is not finite, the plain product h*x or h*h is taken:
// x infinite or NaN, or x*x overflowed, make l infinite or NaN and the sum NaN; past overflow
// 2h*l may overflow with l's sign. Returns nullptr for other exponents.
Value* BodyEmitter::small_power(Value* x, Value* exp) {
  auto* c = llvm::dyn_cast<llvm::ConstantFP>(exp);
  if (!c) return nullptr;
  bool lost = false;
  llvm::APFloat v = c->getValueAPF();
  v.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven, &lost);
  double n = v.convertToDouble();
  if (n != 3 && n != 4) return nullptr;
  auto fma = [&](Value* a, Value* b, Value* c) { return b_.CreateIntrinsic(llvm::Intrinsic::fma, {a->getType()}, {a, b, c}); };
  Value* h = b_.CreateFMul(x, x);
  Value* l = fma(x, x, b_.CreateFNeg(h));
  Value* compensated = n == 3 ? fma(h, x, b_.CreateFMul(l, x)) : fma(h, h, b_.CreateFMul(b_.CreateFAdd(h, h), l));
  Value* plain = b_.CreateFMul(h, n == 3 ? x : h);
  Value* finite = b_.CreateFCmpOLT(b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, compensated),
                                   llvm::ConstantFP::getInfinity(h->getType()));
  return b_.CreateSelect(finite, compensated, plain);
}

Value* BodyEmitter::op(const KernelInstr& in, const std::vector<Value*>& a) {
  DType t = in.dtype;
  DType at = in.args.empty() ? t : k_.body[in.args[0]].dtype;  // operand dtype
  if (in.op == Op::Cast) return cast(a[0], at, t);
  if (!is_half(t) && !is_half(at)) return scalar_op(in.op, t, at, a);
  // 16-bit floats (see round_half). Exact ops need no rounding; on NVPTX they and +, -, * are
  // native.
  bool exact = in.op == Op::Neg || in.op == Op::Abs || in.op == Op::Maximum || in.op == Op::Minimum ||
               in.op == Op::Where || t == DType::Bool;
  bool host = opts_.target == EmitOptions::Target::Cpu;
  if (host && (in.op == Op::Maximum || in.op == Op::Minimum)) return float_min_max(in.op == Op::Maximum, a[0], a[1]);
  if (exact || (!host && (in.op == Op::Add || in.op == Op::Sub || in.op == Op::Mul)))
    return scalar_op(in.op, host && is_half(t) ? DType::Float32 : t, host && is_half(at) ? DType::Float32 : at, a);
  std::vector<Value*> wide;
  for (size_t i = 0; i < a.size(); ++i) {
    DType d = k_.body[in.args[i]].dtype;
    wide.push_back(is_half(d) ? half_to_f32(a[i], d) : a[i]);
  }
  Value* r = scalar_op(in.op, is_half(t) ? DType::Float32 : t, is_half(at) ? DType::Float32 : at, wide);
  return is_half(t) ? round_half(r, t) : r;
}

Value* BodyEmitter::scalar_op(Op op, DType t, DType at, const std::vector<Value*>& a) {
  bool fl = is_float(at);
  bool boolean = at == DType::Bool;
  bool unsigned_order = boolean || is_unsigned(at);
  using P = llvm::CmpInst::Predicate;
  auto cmp = [&](P fp, P sp, P up) -> Value* {
    if (fl) return b_.CreateFCmp(fp, a[0], a[1]);
    return b_.CreateICmp(unsigned_order ? up : sp, a[0], a[1]);
  };
  switch (op) {
    case Op::Neg: return fl ? b_.CreateFNeg(a[0]) : b_.CreateNeg(a[0]);
    case Op::Not: return b_.CreateNot(a[0]);
    case Op::Abs: {
      if (unsigned_order) return a[0];
      if (fl) return b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, a[0]);
      // GPU wrong values (issue 26): abs(int16 -32768) compared as 32768 on an H100 (numpy:
      // -32768): PTX's abs.s16 result is not narrowed before setp.s16 reads it. LLVM turns any
      // 32-bit form back into abs.s16, so the 32-bit abs and the narrowing cvt are written in PTX.
      // int32 likewise through a cast: cvt.rn.f64.s32 of abs.s32(-2^31) gave +2^31 on an H100
      // (ptxas takes abs's result as non-negative), so abs is taken in 64 bits and narrowed.
      // int8 goes through the 16-bit form.
      const unsigned bits = a[0]->getType()->getIntegerBitWidth();
      if (opts_.target == EmitOptions::Target::Nvptx && bits >= 8 && bits <= 32) {
        const bool narrow = bits <= 16;  // int8 as int16
        llvm::Type* ty = narrow ? b_.getInt16Ty() : b_.getInt32Ty();
        auto* fn = llvm::FunctionType::get(ty, {ty}, false);
        auto* asm_abs = llvm::InlineAsm::get(
            fn,
            narrow ? "{ .reg .s32 t; cvt.s32.s16 t, $1; abs.s32 t, t; cvt.s16.s32 $0, t; }"
                   : "{ .reg .s64 t; cvt.s64.s32 t, $1; abs.s64 t, t; cvt.u32.u64 $0, t; }",
            narrow ? "=h,h" : "=r,r", false);
        Value* r = b_.CreateCall(fn, asm_abs, {b_.CreateSExt(a[0], ty)});  // a no-op but for int8
        return b_.CreateTrunc(r, a[0]->getType());
      }
      return b_.CreateBinaryIntrinsic(llvm::Intrinsic::abs, a[0], b_.getFalse());
    }
    case Op::Exp: return math(static_cast<int>(MathFn::Exp), a);
    case Op::Log: return math(static_cast<int>(MathFn::Log), a);
    case Op::Sin: return math(static_cast<int>(MathFn::Sin), a);
    case Op::Cos: return math(static_cast<int>(MathFn::Cos), a);
    case Op::Tanh: return math(static_cast<int>(MathFn::Tanh), a);
    case Op::Sqrt: return math(static_cast<int>(MathFn::Sqrt), a);
    case Op::Add: return fl ? b_.CreateFAdd(a[0], a[1]) : b_.CreateAdd(a[0], a[1]);
    case Op::Sub: return fl ? b_.CreateFSub(a[0], a[1]) : b_.CreateSub(a[0], a[1]);
    case Op::Mul: return fl ? b_.CreateFMul(a[0], a[1]) : b_.CreateMul(a[0], a[1]);
    case Op::Div: return b_.CreateFDiv(a[0], a[1]);
    case Op::Pow:
      if (!fl) return int_pow(t, a[0], a[1]);
      if (Value* r = small_power(a[0], a[1])) return r;
      return math(static_cast<int>(MathFn::Pow), a);
    case Op::Maximum:
      if (fl) return float_min_max(true, a[0], a[1]);
      return b_.CreateBinaryIntrinsic(unsigned_order ? llvm::Intrinsic::umax : llvm::Intrinsic::smax, a[0], a[1]);
    case Op::Minimum:
      if (fl) return float_min_max(false, a[0], a[1]);
      return b_.CreateBinaryIntrinsic(unsigned_order ? llvm::Intrinsic::umin : llvm::Intrinsic::smin, a[0], a[1]);
    case Op::Eq: return cmp(P::FCMP_OEQ, P::ICMP_EQ, P::ICMP_EQ);
    case Op::Ne: return cmp(P::FCMP_UNE, P::ICMP_NE, P::ICMP_NE);
    case Op::Lt: return cmp(P::FCMP_OLT, P::ICMP_SLT, P::ICMP_ULT);
    case Op::Le: return cmp(P::FCMP_OLE, P::ICMP_SLE, P::ICMP_ULE);
    case Op::Gt: return cmp(P::FCMP_OGT, P::ICMP_SGT, P::ICMP_UGT);
    case Op::Ge: return cmp(P::FCMP_OGE, P::ICMP_SGE, P::ICMP_UGE);
    case Op::And: return b_.CreateAnd(a[0], a[1]);
    case Op::Or: return b_.CreateOr(a[0], a[1]);
    case Op::Where: return b_.CreateSelect(a[0], a[1], a[2]);
    default:
      if (Value* r = numpy_op(op, at, a)) return r;  // numpy math (issue 28): body_emitter_math.cpp
      ARRAYC_INTERNAL_CHECK(false, std::string("no lowering for ") + op_name(op));
  }
  return nullptr;
}

// sin(x) and cos(x) of one x are computed together: the argument reduction, the costly part,
// is shared. On NVPTX through libdevice's sincos; on the host, for float32, through vmath's
// packed sincos, for float64 through vmath's pair functions (MathOptions::pair), whose inlined
// bodies share their reduction and polynomials. Both reduce modulo pi/2 and evaluate both
// polynomials; sin or cos alone reduces modulo pi and evaluates one (float32: below 2^10), so the
// two can differ by an ulp or two, both within docs/math_accuracy.md's bounds.
// Returns false when `i` has no such partner.
bool BodyEmitter::sincos(size_t i, std::vector<Value*>& v) {
  const KernelInstr& in = k_.body[i];
  if (in.op != Op::Sin && in.op != Op::Cos) return false;
  bool cpu = opts_.target == EmitOptions::Target::Cpu;
  // 16-bit floats: on the host the float32 pair, each rounded; on NVPTX one by one in float32.
  if (is_half(in.dtype) && !cpu) return false;
  Op partner = in.op == Op::Sin ? Op::Cos : Op::Sin;
  size_t j = i + 1;
  while (j < k_.body.size() && !(k_.body[j].op == partner && k_.body[j].args == in.args)) ++j;
  if (j == k_.body.size()) return false;
  Value* x = v[in.args[0]];
  Value *sv, *cv;
  if (cpu && in.dtype == DType::Float64) {
    MathOptions o{.fast = opts_.fast_math, .pair = true};
    sv = emit_math_call(b_, MathFn::Sin, {x}, o);
    cv = emit_math_call(b_, MathFn::Cos, {x}, o);
  } else if (cpu) {
    std::tie(sv, cv) = emit_sincos_f32(b_, x, MathOptions{opts_.fast_math});
    packed_sincos_ = true;
  } else {
    llvm::Type* ty = x->getType();
    llvm::Function* f = b_.GetInsertBlock()->getParent();
    llvm::IRBuilder<> entry(&f->getEntryBlock(), f->getEntryBlock().begin());
    llvm::AllocaInst* s_out = entry.CreateAlloca(ty);
    llvm::AllocaInst* c_out = entry.CreateAlloca(ty);
    std::string name = std::string("__nv_sincos") + (ty->isFloatTy() ? "f" : "");
    auto* ptr = llvm::PointerType::get(b_.getContext(), 0);
    llvm::FunctionCallee fn = b_.GetInsertBlock()->getModule()->getOrInsertFunction(
        name, llvm::FunctionType::get(b_.getVoidTy(), {ty, ptr, ptr}, false));
    b_.CreateCall(fn, {x, s_out, c_out});
    sv = b_.CreateLoad(ty, s_out);
    cv = b_.CreateLoad(ty, c_out);
  }
  if (is_half(in.dtype)) {
    sv = round_half(sv, in.dtype);
    cv = round_half(cv, in.dtype);
  }
  v[i] = in.op == Op::Sin ? sv : cv;
  v[j] = in.op == Op::Sin ? cv : sv;
  return true;
}

std::vector<Value*> BodyEmitter::emit(const std::vector<Value*>& ptrs, const std::vector<Value*>& offsets) {
  return emit(ptrs, offsets, {}, {});
}

std::vector<Value*> BodyEmitter::emit(const std::vector<Value*>& ptrs, const std::vector<Value*>& offsets,
                                      const std::vector<Value*>& known, const std::vector<bool>& needed) {
  std::vector<Value*> v(k_.body.size());
  for (size_t i = 0; i < k_.body.size(); ++i) {
    const KernelInstr& in = k_.body[i];
    if (v[i]) continue;  // computed with its sincos partner
    // row chains (issue 29): a value an earlier pass computed for this element (the GPU's
    // register path keeps them) is given, not recomputed.
    if (!known.empty() && known[i] && !(in.leaf < 0 && op_kind(in.op) == OpKind::Reduce)) {
      v[i] = known[i];
      continue;
    }
    // row chains (issue 29): a row reduction's value is given; what is not needed is left out.
    if (in.leaf < 0 && op_kind(in.op) == OpKind::Reduce) {
      v[i] = known.empty() ? nullptr : known[i];
      continue;
    }
    if (!needed.empty() && !needed[i]) continue;
    if (sincos(i, v)) continue;
    if (in.op == Op::Gather) {
      v[i] = gather(k_.leaves[in.leaf], ptrs, offsets, v[in.args[0]], k_.body[in.args[0]].dtype);
    } else if (in.leaf >= 0) {
      const KernelLeaf& lf = k_.leaves[in.leaf];
      v[i] = leaf(lf, ptrs, lf.index >= 0 ? offsets[lf.index] : nullptr);
    } else {
      std::vector<Value*> args;
      for (int a : in.args) args.push_back(v[a]);
      v[i] = op(in, args);
    }
  }
  return v;
}

}  // namespace arrayc::detail
