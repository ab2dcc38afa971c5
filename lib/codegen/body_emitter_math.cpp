// The lowering of the numpy math ops (ops.def's "numpy math" block, issue 28), shared by both
// targets: rounding by LLVM's intrinsics, float classes by compares, integer division and
// shifts with numpy's defined results where C's are undefined (no input traps), floor division
// and remainder of floats by numpy's npy_divmod on top of fmod, and the transcendentals through
// BodyEmitter::math (vmath's vector functions on the host, libdevice on NVPTX).
#include <cmath>

#include <llvm/IR/Intrinsics.h>

#include "codegen/body_emitter.h"
#include "codegen/cpu/vmath/vmath.h"

namespace arrayc::detail {

using llvm::Value;

namespace {

MathFn transcendental(Op op) {
  switch (op) {
    case Op::Log1p: return MathFn::Log1p;
    case Op::Expm1: return MathFn::Expm1;
    case Op::Log2: return MathFn::Log2;
    case Op::Log10: return MathFn::Log10;
    case Op::Exp2: return MathFn::Exp2;
    case Op::Tan: return MathFn::Tan;
    case Op::Arcsin: return MathFn::Asin;
    case Op::Arccos: return MathFn::Acos;
    case Op::Arctan: return MathFn::Atan;
    case Op::Arctan2: return MathFn::Atan2;
    case Op::Sinh: return MathFn::Sinh;
    case Op::Cosh: return MathFn::Cosh;
    case Op::Arcsinh: return MathFn::Asinh;
    case Op::Erf: return MathFn::Erf;
    case Op::Sigmoid: return MathFn::Sigmoid;
    case Op::Hypot: return MathFn::Hypot;
    default: return MathFn::Exp;  // not one
  }
}

}  // namespace

Value* BodyEmitter::numpy_op(Op op, DType at, const std::vector<Value*>& a) {
  bool fl = is_float(at);
  bool uns = is_unsigned(at);  // unsigned integers: logical shifts, unsigned division
  llvm::Type* ty = a[0]->getType();
  auto& b = b_;
  auto fconst = [&](double v) { return llvm::ConstantFP::get(ty, v); };
  auto iconst = [&](int64_t v) { return llvm::ConstantInt::get(ty, v, true); };
  auto unary = [&](llvm::Intrinsic::ID id) { return b.CreateUnaryIntrinsic(id, a[0]); };
  auto fmod = [&]() { return math(static_cast<int>(MathFn::Fmod), {a[0], a[1]}); };
  switch (op) {
    case Op::Floor: return fl ? unary(llvm::Intrinsic::floor) : a[0];
    case Op::Ceil: return fl ? unary(llvm::Intrinsic::ceil) : a[0];
    case Op::Round: return fl ? unary(llvm::Intrinsic::roundeven) : a[0];
    case Op::Trunc: return fl ? unary(llvm::Intrinsic::trunc) : a[0];
    case Op::Sign:
      if (fl) {  // -0.0 gives +0.0 and NaN stays NaN, as numpy
        Value* r = b.CreateSelect(b.CreateFCmpOEQ(a[0], fconst(0)), fconst(0), a[0]);
        r = b.CreateSelect(b.CreateFCmpOLT(a[0], fconst(0)), fconst(-1), r);
        return b.CreateSelect(b.CreateFCmpOGT(a[0], fconst(0)), fconst(1), r);
      }
      if (uns) return b.CreateZExt(b.CreateICmpNE(a[0], iconst(0)), ty);
      return b.CreateSub(b.CreateZExt(b.CreateICmpSGT(a[0], iconst(0)), ty),
                         b.CreateZExt(b.CreateICmpSLT(a[0], iconst(0)), ty));
    case Op::IsNan: return fl ? b.CreateFCmpUNO(a[0], a[0]) : b.getFalse();
    case Op::IsInf:
      return fl ? b.CreateFCmpOEQ(unary(llvm::Intrinsic::fabs), llvm::ConstantFP::getInfinity(ty)) : b.getFalse();
    case Op::IsFinite:
      return fl ? b.CreateFCmpOLT(unary(llvm::Intrinsic::fabs), llvm::ConstantFP::getInfinity(ty)) : b.getTrue();
    case Op::Invert: return b.CreateNot(a[0]);
    case Op::BitAnd: return b.CreateAnd(a[0], a[1]);
    case Op::BitOr: return b.CreateOr(a[0], a[1]);
    case Op::BitXor: case Op::Xor: return b.CreateXor(a[0], a[1]);
    case Op::Shl: case Op::Shr: {
      // An amount outside [0, bits) (negative ones compare as huge) shifts everything out:
      // 0, or for right shifts the sign (numpy's npy_lshift / npy_rshift).
      unsigned bits = ty->getIntegerBitWidth();
      Value* in_range = b.CreateICmpULT(a[1], iconst(bits));
      Value* amount = b.CreateSelect(in_range, a[1], iconst(0));
      if (op == Op::Shl || uns)
        return b.CreateSelect(in_range, op == Op::Shl ? b.CreateShl(a[0], amount) : b.CreateLShr(a[0], amount),
                              iconst(0));
      return b.CreateSelect(in_range, b.CreateAShr(a[0], amount), b.CreateAShr(a[0], iconst(bits - 1)));
    }
    case Op::Fmod: case Op::FloorDiv: case Op::Mod: {
      if (uns) {  // x / 0 and x % 0 give 0; no negative operands, so floor is truncation
        Value* zero = b.CreateICmpEQ(a[1], iconst(0));
        Value* d = b.CreateSelect(zero, iconst(1), a[1]);
        Value* r = b.CreateSelect(zero, iconst(0), op == Op::FloorDiv ? b.CreateUDiv(a[0], d) : b.CreateURem(a[0], d));
        return r;
      }
      if (!fl) {
        // x / 0 and x % 0 give 0, MIN / -1 wraps to MIN (numpy's results): the division runs on
        // a divisor of 1 in those lanes, so it never traps.
        Value* zero = b.CreateICmpEQ(a[1], iconst(0));
        Value* minus_one = b.CreateICmpEQ(a[1], iconst(-1));
        Value* d = b.CreateSelect(b.CreateOr(zero, minus_one), iconst(1), a[1]);
        Value* q = b.CreateSDiv(a[0], d);
        Value* r = b.CreateSRem(a[0], d);
        q = b.CreateSelect(minus_one, b.CreateNeg(a[0]), q);
        q = b.CreateSelect(zero, iconst(0), q);
        if (op != Op::Fmod) {  // floor: a remainder of the divisor's sign
          Value* adjust = b.CreateAnd(b.CreateICmpNE(r, iconst(0)),
                                      b.CreateICmpSLT(b.CreateXor(r, a[1]), iconst(0)));
          q = b.CreateSub(q, b.CreateZExt(adjust, ty));
          r = b.CreateSelect(adjust, b.CreateAdd(r, a[1]), r);
        }
        return op == Op::FloorDiv ? q : r;
      }
      if (op == Op::Fmod) return fmod();
      // numpy's npy_divmod, step by step (the interpreter's floor_divmod).
      Value* zero = fconst(0);
      Value* mod = fmod();
      Value* div = b.CreateFDiv(b.CreateFSub(a[0], mod), a[1]);
      Value* mod_nz = b.CreateFCmpUNE(mod, zero);
      Value* adjust = b.CreateAnd(mod_nz, b.CreateICmpNE(b.CreateFCmpOLT(a[1], zero), b.CreateFCmpOLT(mod, zero)));
      Value* mod2 = b.CreateSelect(adjust, b.CreateFAdd(mod, a[1]), mod);
      Value* div2 = b.CreateSelect(adjust, b.CreateFSub(div, fconst(1)), div);
      auto copysign = [&](Value* m, Value* s) { return b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, m, s); };
      mod2 = b.CreateSelect(mod_nz, mod2, copysign(zero, a[1]));
      Value* b_zero = b.CreateFCmpOEQ(a[1], zero);
      if (op == Op::Mod) return b.CreateSelect(b_zero, mod, mod2);
      Value* quotient = b.CreateFDiv(a[0], a[1]);
      Value* fdiv = b.CreateUnaryIntrinsic(llvm::Intrinsic::floor, div2);
      fdiv = b.CreateSelect(b.CreateFCmpOGT(b.CreateFSub(div2, fdiv), fconst(0.5)), b.CreateFAdd(fdiv, fconst(1)), fdiv);
      fdiv = b.CreateSelect(b.CreateFCmpUNE(div2, zero), fdiv, copysign(zero, quotient));
      return b.CreateSelect(b_zero, quotient, fdiv);
    }
    case Op::Sigmoid:
      if (opts_.target == EmitOptions::Target::Nvptx) {  // libdevice has none: 1 / (1 + exp(-x))
        Value* e = math(static_cast<int>(MathFn::Exp), {b.CreateFNeg(unary(llvm::Intrinsic::fabs))});
        Value* num = b.CreateSelect(b.CreateFCmpOGE(a[0], fconst(0)), fconst(1), e);
        return b.CreateSelect(b.CreateFCmpUNO(a[0], a[0]), a[0], b.CreateFDiv(num, b.CreateFAdd(fconst(1), e)));
      }
      return math(static_cast<int>(MathFn::Sigmoid), a);
    case Op::Hypot:
      // GPU wrong values (issue 26): libdevice's hypot gives inf for an operand near the largest
      // finite value (hypot(-1.8e308, 2.66) on an H100), where the result is finite; halving the
      // operands did not help there. The host's formula instead (vmath's hypot_any): float
      // operands square exactly in double; doubles are scaled by 2^-k, k the larger one's
      // exponent, so that the squares neither overflow nor underflow.
      if (opts_.target == EmitOptions::Target::Nvptx) {
        llvm::Type* f64 = b.getDoubleTy();
        llvm::Type* i64 = b.getInt64Ty();
        auto d = [&](double v) { return llvm::ConstantFP::get(f64, v); };
        auto i = [&](int64_t v) { return llvm::ConstantInt::get(i64, v, true); };
        Value* ax = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, b.CreateFPExt(a[0], f64));
        Value* ay = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, b.CreateFPExt(a[1], f64));
        auto fma = [&](Value* x, Value* y, Value* z) { return b.CreateIntrinsic(llvm::Intrinsic::fma, {f64}, {x, y, z}); };
        Value* r;
        if (!ty->isDoubleTy()) {
          r = b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, fma(ax, ax, b.CreateFMul(ay, ay)));
        } else {
          Value* big = b.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, ax, ay);
          Value* k = b.CreateSub(b.CreateLShr(b.CreateBitCast(big, i64), i(52)), i(1023));
          k = b.CreateSelect(b.CreateICmpSGT(k, i(1020)), i(1020), k);
          k = b.CreateSelect(b.CreateICmpSLT(k, i(-1020)), i(-1020), k);
          auto pow2 = [&](Value* e) { return b.CreateBitCast(b.CreateShl(b.CreateAdd(e, i(1023)), i(52)), f64); };
          Value* down = pow2(b.CreateNeg(k));
          Value* xs = b.CreateFMul(ax, down);
          Value* ys = b.CreateFMul(ay, down);
          r = b.CreateFMul(b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, fma(xs, xs, b.CreateFMul(ys, ys))), pow2(k));
        }
        Value* inf = b.CreateOr(b.CreateFCmpOEQ(ax, d(INFINITY)), b.CreateFCmpOEQ(ay, d(INFINITY)));
        r = b.CreateSelect(inf, d(INFINITY), r);
        return ty->isDoubleTy() ? r : b.CreateFPTrunc(r, ty);
      }
      break;
    default: break;
  }
  MathFn fn = transcendental(op);
  if (fn == MathFn::Exp) return nullptr;
  return math(static_cast<int>(fn), a);
}

}  // namespace arrayc::detail
