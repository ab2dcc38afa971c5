// What the vector math families (exp_log.cpp, trig.cpp, tanh_pow.cpp) and the functions that
// instantiate them (variants.cpp) share: Ctx, arithmetic over one value type, and helpers built
// on it (lane tests, 16-entry table lookups, Taylor coefficients). Internal to vmath/; vmath.h is
// the interface.
#pragma once
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

namespace arrayc::detail::vmath {

using llvm::Value;

// Arithmetic over one value type: float/double or a vector of them, with the integer type of
// the same shape for bit manipulation.
struct Ctx {
  llvm::IRBuilder<>& b;
  llvm::Type* ft;
  llvm::Type* it;
  bool f64;
  int mbits;  // explicit mantissa bits
  int bias;

  Ctx(llvm::IRBuilder<>& b, llvm::Type* t) : b(b), ft(t) {
    f64 = t->getScalarType()->isDoubleTy();
    mbits = f64 ? 52 : 23;
    bias = f64 ? 1023 : 127;
    it = t->getWithNewType(b.getIntNTy(f64 ? 64 : 32));
  }
  // The same shape with double elements (f32 functions that compute in double).
  Ctx as_double() const { return Ctx(b, ft->getWithNewType(b.getDoubleTy())); }

  Value* c(double v) const { return llvm::ConstantFP::get(ft, v); }
  Value* ci(int64_t v) const { return llvm::ConstantInt::get(it, v, true); }
  Value* add(Value* x, Value* y) const { return b.CreateFAdd(x, y); }
  Value* sub(Value* x, Value* y) const { return b.CreateFSub(x, y); }
  Value* mul(Value* x, Value* y) const { return b.CreateFMul(x, y); }
  Value* div(Value* x, Value* y) const { return b.CreateFDiv(x, y); }
  Value* neg(Value* x) const { return b.CreateFNeg(x); }
  Value* fma(Value* x, Value* y, Value* z) const {
    return b.CreateIntrinsic(llvm::Intrinsic::fma, {ft}, {x, y, z});
  }
  Value* fabs(Value* x) const { return b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x); }
  Value* copysign(Value* mag, Value* sgn) const {
    return b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, mag, sgn);
  }
  Value* sel(Value* cond, Value* x, Value* y) const { return b.CreateSelect(cond, x, y); }
  Value* bits(Value* x) const { return b.CreateBitCast(x, it); }
  Value* abs_bits(Value* x) const { return b.CreateAnd(bits(x), ci(f64 ? INT64_MAX : 0x7fffffff)); }
  // The bit pattern of v rounded to the element type.
  int64_t bits_of(double v) const {
    if (f64) return std::bit_cast<int64_t>(v);
    return std::bit_cast<uint32_t>(static_cast<float>(v));
  }
  Value* flt(Value* i) const { return b.CreateBitCast(i, ft); }
  Value* lt(Value* x, Value* y) const { return b.CreateFCmpOLT(x, y); }
  Value* gt(Value* x, Value* y) const { return b.CreateFCmpOGT(x, y); }
  Value* eq(Value* x, Value* y) const { return b.CreateFCmpOEQ(x, y); }
  Value* isnan(Value* x) const { return b.CreateFCmpUNO(x, x); }
  Value* inf() const { return c(INFINITY); }
  // x limited to at most hi (to [lo, hi]) by ordered compares: NaN passes through.
  Value* at_most(Value* x, double hi) const { return sel(gt(x, c(hi)), c(hi), x); }
  Value* clamp(Value* x, double lo, double hi) const {
    x = at_most(x, hi);
    return sel(lt(x, c(lo)), c(lo), x);
  }
  Value* nan() const { return c(NAN); }

  // c[0] + c[1]*x + c[2]*x^2 + ... by Horner's rule: the fewest multiplies and FMAs, which is
  // what a loop of math functions runs out of (Estrin's scheme, a shorter dependency chain, costs
  // a multiply per power of x; the loops have independent iterations to fill the latency).
  Value* horner(Value* x, const std::vector<double>& coef) const {
    Value* acc = c(coef.back());
    for (size_t i = coef.size() - 1; i-- > 0;) acc = fma(acc, x, c(coef[i]));
    return acc;
  }
  // 2^n for an integer n in the normal exponent range.
  Value* pow2i(Value* n) const {
    return flt(b.CreateShl(b.CreateAdd(n, ci(bias)), ci(mbits)));
  }
  // Rounds x*scale to the nearest integer: returns it as float (nd) and integer (result).
  // NaN/inf give garbage integers but never poison.
  // raw (optional): the bits of x*scale + magic, whose low bits are those of the integer. A
  // lookup that reads only low bits takes them (LLVM does not see that the permute ignores the
  // subtraction of the magic's bits, and would keep it).
  Value* round_int(Value* x, double scale, Value*& nd, Value** raw = nullptr) const {
    double magic = f64 ? 0x1.8p52 : 0x1.8p23;
    Value* kd = fma(x, c(scale), c(magic));
    nd = sub(kd, c(magic));
    if (raw) *raw = bits(kd);
    return b.CreateSub(bits(kd), bits(c(magic)));
  }
};

// Taylor coefficients sign * 1/k! for k = first, first+step, ..., last; the sign alternates
// when asked.
std::vector<double> inv_factorials(int first, int last, int step, bool alternate, double sign = 1);

// Attributes that decide code generation and the vector calling convention; callee and
// caller must agree on them.
void copy_target_attrs(llvm::Function* like, llvm::Function* to);

// Whether mask holds in every lane (a scalar mask as it is).
Value* all_lanes(const Ctx& e, Value* mask);
// Every lane of x has |x| < bound (an unsigned compare of the bits: NaN and inf fail).
Value* all_below(const Ctx& e, Value* x, double bound);
// Every lane of x positive, normal and finite (one unsigned compare of the bits).
Value* all_positive_normal(const Ctx& e, Value* x);

// tab[idx mod 16] in each lane (idx: e's integer type; tab: 32-bit words, returned as floats).
// One vpermps for 16 lanes with AVX-512, two and a blend per 8 lanes with AVX2; else a
// load (a gather for a vector) from a constant array `name` of the module.
Value* lookup16(const Ctx& e, const char* name, const std::array<uint32_t, 16>& tab, Value* idx);
// tab[idx mod 16] in each lane of a double context (idx: e's i64 type): one vpermi2pd over the
// table in two registers per 8 lanes with AVX-512; else as lookup16.
Value* lookup16_f64(const Ctx& e, const char* name, const std::array<double, 16>& tab, Value* idx);

}  // namespace arrayc::detail::vmath
