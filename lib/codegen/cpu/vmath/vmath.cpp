// Vectorizable exp/log/sin/cos/tanh/pow as LLVM IR.
//
// Every function body is written once against a value type that is either a scalar or a
// vector (LLVM arithmetic and constants splat over vectors), then instantiated as a scalar
// function plus vector variants. The scalar call carries the "vector-function-abi-variant"
// attribute naming the variants, so the loop vectorizer replaces it by a call of the right width.
// exp, log and pow branch once per vector to a lean path when every lane allows it (exp: every
// lane below the fast bound; log, pow: every x positive, normal and finite, pow's y finite); the
// other lanes' paths give in-range lanes the same bits. sin/cos variants check "any lane huge" and
// reduce those lanes one by one with an exact (Payne-Hanek) reduction; f32 sin/cos first check
// "every lane below 16" (exp's bound, so that exp, sin and cos of one x test it once), then
// "below 2^10" and "below 2^22", and then compute in float instead of double. sin or cos alone
// (f64; f32 below 2^10) reduces modulo pi and evaluates one polynomial; sin and cos of one x
// (the f32 packed sincos, f64 MathOptions::pair) share a reduction modulo pi/2 and both
// polynomials.
// Algorithms and measured errors are in docs/math_accuracy.md.
#include "codegen/cpu/vmath/vmath.h"

#include "codegen/llvm_util.h"

#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/Transforms/Utils/ModuleUtils.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

namespace arrayc::detail {
namespace {

using llvm::Value;

// |x| above which sin/cos leave the Cody-Waite reduction for the exact one.
constexpr double kHugeTrigF32 = 0x1p40;
constexpr double kHugeTrigF64 = 0x1p30;

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
std::vector<double> inv_factorials(int first, int last, int step, bool alternate,
                                   double sign = 1) {
  std::vector<double> out;
  for (int k = first; k <= last; k += step) {
    long double f = 1;
    for (int i = 2; i <= k; ++i) f *= i;
    out.push_back(static_cast<double>(sign / f));
    if (alternate) sign = -sign;
  }
  return out;
}

// Attributes that decide code generation and the vector calling convention; callee and
// caller must agree on them.
void copy_target_attrs(llvm::Function* like, llvm::Function* to) {
  for (const char* k : {"target-cpu", "target-features", "tune-cpu", "prefer-vector-width",
                        "min-legal-vector-width"}) {
    if (like->hasFnAttribute(k)) to->addFnAttr(like->getFnAttribute(k));
  }
}

// Splits of ln 2: hi has few enough bits that n*hi is exact for the exponents involved.
double ln2_hi(const Ctx& e) { return e.f64 ? 0x1.62e42fee00000p-1 : 0x1.62e4p-1; }
double ln2_lo(const Ctx& e) { return e.f64 ? 0x1.a39ef35793c76p-33 : 0x1.7f7d1cp-20; }
constexpr double kLog2e = 0x1.71547652b82fep+0;
constexpr double kLn2 = 0x1.62e42fefa39efp-1;

// exp(r) - 1 for |r| <= ln2/2, as r + r^2*Q(r).
Value* expm1_poly(const Ctx& e, Value* r) {
  auto q = inv_factorials(2, e.f64 ? 13 : 7, 1, false);
  return e.fma(e.mul(r, r), e.horner(r, q), r);
}

// exp(x + xlo) where xlo (optional) is a small correction. exp(x) = 2^n * exp(r),
// r = x - n*ln2 (Cody-Waite). The scaling is split in two so that results near overflow and
// subnormal results are formed with a single rounding.
Value* exp_core(const Ctx& e, Value* x, Value* xlo) {
  double hi = e.f64 ? 710 : 89;     // exp(hi) overflows
  double lo = e.f64 ? -746 : -104;  // exp(lo) rounds to zero
  Value* xc = e.clamp(x, lo, hi);
  Value* nd;
  Value* n = e.round_int(xc, kLog2e, nd);
  Value* r = e.fma(e.neg(nd), e.c(ln2_hi(e)), xc);
  r = e.fma(e.neg(nd), e.c(ln2_lo(e)), r);
  if (xlo) r = e.add(r, xlo);
  Value* s = e.add(e.c(1), expm1_poly(e, r));
  Value* n1 = e.b.CreateAShr(n, e.ci(1));
  Value* n2 = e.b.CreateSub(n, n1);
  return e.mul(e.mul(s, e.pow2i(n1)), e.pow2i(n2));
}

// The permute instructions of the CPU that a function is compiled for: its "target-features"
// attribute when it has one (copy_target_attrs passes the caller's on), else the host's.
struct Permutes {
  bool avx2 = false, avx512f = false;
};
Permutes target_permutes(const llvm::Function& f) {
  Permutes p;
#if defined(__x86_64__) || defined(__i386__)
  if (f.hasFnAttribute("target-features")) {
    llvm::SmallVector<llvm::StringRef, 64> feats;
    f.getFnAttribute("target-features").getValueAsString().split(feats, ',');
    for (llvm::StringRef ft : feats) {
      if (ft == "+avx2") p.avx2 = true;
      if (ft == "+avx512f") p.avx512f = true;
    }
    return p;
  }
  static const Permutes host = [] {
    llvm::StringMap<bool> f = llvm::sys::getHostCPUFeatures();
    return Permutes{f.lookup("avx2"), f.lookup("avx512f")};
  }();
  p = host;
#endif
  return p;
}

// elems[idx mod 16] in each lane read from the module's constant array `name` (defined on first
// use): a load for one lane, a gather for a vector. The fallback of the lookups below.
Value* lookup16_memory(const Ctx& e, const char* name, const std::vector<llvm::Constant*>& elems, Value* idx) {
  llvm::IRBuilder<>& b = e.b;
  llvm::Type* st = e.ft->getScalarType();
  llvm::Align align(st->getPrimitiveSizeInBits() / 8);
  llvm::Module& mod = *b.GetInsertBlock()->getModule();
  llvm::GlobalVariable* g = mod.getNamedGlobal(name);
  if (!g) {
    auto* at = llvm::ArrayType::get(st, elems.size());
    g = new llvm::GlobalVariable(mod, at, true, llvm::GlobalValue::PrivateLinkage, llvm::ConstantArray::get(at, elems), name);
    g->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  }
  Value* ptr = b.CreateGEP(st, g, b.CreateAnd(idx, e.ci(15)));
  if (!e.ft->isVectorTy()) return b.CreateAlignedLoad(st, ptr, align);
  return b.CreateMaskedGather(e.ft, ptr, align);
}

// f applied to each 8-lane half of the 16-lane idx, the results joined again.
Value* by_halves(llvm::IRBuilder<>& b, Value* idx, const std::function<Value*(Value*)>& f) {
  auto part = [&](int from) {
    llvm::SmallVector<int, 8> m;
    for (int i = 0; i < 8; ++i) m.push_back(from + i);
    return f(b.CreateShuffleVector(idx, m));
  };
  llvm::SmallVector<int, 16> all;
  for (int i = 0; i < 16; ++i) all.push_back(i);
  return b.CreateShuffleVector(part(0), part(8), all);
}

// tab[idx mod 16] in each lane (idx: e's integer type; tab: 32-bit words, returned as floats).
// One vpermps for 16 lanes with AVX-512, two and a blend per 8 lanes with AVX2; else
// lookup16_memory.
Value* lookup16(const Ctx& e, const char* name, const std::array<uint32_t, 16>& tab, Value* idx) {
  llvm::IRBuilder<>& b = e.b;
  auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(e.ft);
  unsigned n = vt ? vt->getNumElements() : 1;
  auto words = [&](unsigned from, unsigned count) {
    std::vector<llvm::Constant*> c;
    for (unsigned i = 0; i < count; ++i)
      c.push_back(llvm::ConstantExpr::getBitCast(b.getInt32(tab[from + i]), b.getFloatTy()));
    return llvm::ConstantVector::get(c);
  };
  Permutes cpu = target_permutes(*b.GetInsertBlock()->getParent());
  if (n == 16 && cpu.avx512f)
    return b.CreateIntrinsic(llvm::Intrinsic::x86_avx512_permvar_sf_512, {}, {words(0, 16), idx});
  if (n == 8 && cpu.avx2) {
    Value* lo = b.CreateIntrinsic(llvm::Intrinsic::x86_avx2_permps, {}, {words(0, 8), idx});
    Value* hi = b.CreateIntrinsic(llvm::Intrinsic::x86_avx2_permps, {}, {words(8, 8), idx});
    return e.sel(b.CreateICmpNE(b.CreateAnd(idx, e.ci(8)), e.ci(0)), hi, lo);
  }
  if (n == 16 && cpu.avx2) {
    // Two halves of 8 lanes, each as above.
    Ctx half(b, llvm::FixedVectorType::get(b.getFloatTy(), 8));
    return by_halves(b, idx, [&](Value* i) { return lookup16(half, name, tab, i); });
  }
  std::vector<llvm::Constant*> elems;
  for (uint32_t w : tab) elems.push_back(llvm::ConstantExpr::getBitCast(b.getInt32(w), b.getFloatTy()));
  return lookup16_memory(e, name, elems, idx);
}

// tab[idx mod 16] in each lane of a double context (idx: e's i64 type): one vpermi2pd over the
// table in two registers per 8 lanes with AVX-512; else lookup16_memory.
Value* lookup16_f64(const Ctx& e, const char* name, const std::array<double, 16>& tab, Value* idx) {
  llvm::IRBuilder<>& b = e.b;
  auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(e.ft);
  unsigned n = vt ? vt->getNumElements() : 1;
  Permutes cpu = target_permutes(*b.GetInsertBlock()->getParent());
  if (n == 8 && cpu.avx512f) {
    auto half = [&](unsigned from) {
      std::vector<llvm::Constant*> c;
      for (unsigned i = 0; i < 8; ++i) c.push_back(llvm::ConstantFP::get(b.getDoubleTy(), tab[from + i]));
      return llvm::ConstantVector::get(c);
    };
    return b.CreateIntrinsic(llvm::Intrinsic::x86_avx512_vpermi2var_pd_512, {}, {half(0), idx, half(8)});
  }
  if (n == 16 && cpu.avx512f) {
    // Two halves of 8 lanes (f32 functions that compute in double: pow).
    Ctx half(b, llvm::FixedVectorType::get(b.getDoubleTy(), 8));
    return by_halves(b, idx, [&](Value* i) { return lookup16_f64(half, name, tab, i); });
  }
  std::vector<llvm::Constant*> elems;
  for (double v : tab) elems.push_back(llvm::ConstantFP::get(b.getDoubleTy(), v));
  return lookup16_memory(e, name, elems, idx);
}

// exp with a 16-entry table: x = (16k + j + f) ln2/16, exp(x) = 2^k 2^(j/16) exp(r) with
// r = x - (16k + j) ln2/16 (|r| <= ln2/32, Cody-Waite with FMA), exp(r) - 1 by a Taylor
// polynomial p (f32: degree 3, truncation error 0.08 ULP; f64: degree 7, 2^-59), 2^(j/16) from
// the table and one rounding in fma(s, p, s). f32: the table rounded to float (0.5 ULP). f64:
// 2^(j/16) = T (1 + c) from two tables, T rounded to double and c its relative error, added to
// p. z = 16x/ln2 + 1.5*2^m (m: mantissa bits) holds 16k + j in its low bits: the lookup reads j
// from them and z << (m - 4) puts k in the exponent field, with j << (m - 4) below it, which
// each table word has subtracted in advance. Every lane below kExpTableFast (the "fast" path:
// results normal, s formed by an integer add); otherwise x is clamped and 2^k applied in two
// halves (subnormal and overflowing results), with the same rounding of the in-range lanes, so
// a lane's result never depends on its neighbours.
constexpr float kExpTableFastF32 = 87.0f;
constexpr double kExpTableFastF64 = 708.0;
//
// f32 lanes below kModerateF32 reduce in one step, r = x - nd*float(ln2/16) (FMA): float(ln2/16)
// is 1.2e-10 off, so r is off by at most 370 * 1.2e-10 = 4.4e-8, 0.74 ULP of the result at
// worst (measured over every float below 16: max 1.45 ULP in all, against 1.06 with two
// steps), and the second step's FMA is saved. Every lane below it (moderate = true): that step
// alone; otherwise each lane picks its own (a compare and a blend), so a lane's result never
// depends on its neighbours. Such vectors pay one compare more than before (exp of x in
// [-30, 30] or [-80, 0]: 11-13% more time in cache). f32 sin/cos test the same bound first (kFloatTrigTiers),
// so that a fused loop of exp, sin and cos of one x tests it once (LLVM merges the identical
// compares and threads the second branch): W8 10% faster.
constexpr double kModerateF32 = 16.0;
//
// for_float (f64 contexts only; f32 pow): enough for a float result. |x| <= 200 and an error of
// 2^-34 relative suffice, so ln2/16 is one double (r off by n 2^-57 <= 2^-44), the polynomial
// has degree 4 (truncation 2^-34.6) and the correction table is dropped (T's 2^-53).
Value* exp_table(const Ctx& e, Value* x, bool fast_path, bool for_float = false, bool moderate = false) {
  const int shift = e.mbits - 4;
  struct Tables {
    std::array<uint32_t, 16> f32;
    std::array<double, 16> f64, f64_err;  // f64: the words of T as doubles
  };
  static const Tables tabs = [] {
    Tables r;
    for (uint32_t j = 0; j < 16; ++j) {
      float v = static_cast<float>(std::exp2(j / 16.0));
      std::memcpy(&r.f32[j], &v, 4);
      r.f32[j] -= j << 19;
      long double exact = std::exp2l(j / 16.0L);
      double t = static_cast<double>(exact);
      r.f64_err[j] = static_cast<double>((exact - t) / t);
      uint64_t bits;
      std::memcpy(&bits, &t, 8);
      bits -= static_cast<uint64_t>(j) << 48;
      std::memcpy(&r.f64[j], &bits, 8);
    }
    return r;
  }();
  // ln2/16 in two parts. f64: from ln2_hi (33 significant bits: nd*step_hi is exact for
  // |nd| < 2^20) and ln2_lo; f32: the float nearest ln2/16 and the rest.
  double step_hi = e.f64 ? ln2_hi(e) / 16 : static_cast<float>(kLn2 / 16);
  double step_lo = e.f64 ? ln2_lo(e) / 16 : static_cast<float>(kLn2 / 16 - step_hi);
  Value* xc = fast_path ? x : e.clamp(x, e.f64 ? -746 : -104, e.f64 ? 710 : 89);
  Value* nd;
  Value* zbits;                                         // low bits: those of m
  Value* m = e.round_int(xc, 16 / kLn2, nd, &zbits);  // 16k + j
  Value* r = e.fma(nd, e.c(for_float ? -(kLn2 / 16) : -step_hi), xc);
  if (!for_float && !moderate) {
    Value* r2 = e.fma(nd, e.c(-step_lo), r);
    if (e.f64) {
      r = r2;
    } else {
      // Written as "above", the form LLVM gives all_below's compare, so that the two merge.
      Value* above = e.b.CreateICmpUGT(e.abs_bits(x), e.ci(e.bits_of(kModerateF32) - 1));
      r = e.sel(above, r2, r);
    }
  }
  Value *p, *t;
  if (for_float) {
    p = e.fma(e.mul(r, r), e.horner(r, inv_factorials(2, 4, 1, false)), r);
    t = e.bits(lookup16_f64(e, "arrayc_exp2_sixteenths_f64", tabs.f64, zbits));
  } else if (e.f64) {
    p = e.fma(e.mul(r, r), e.horner(r, inv_factorials(2, 7, 1, false)), r);
    p = e.add(p, lookup16_f64(e, "arrayc_exp2_sixteenths_f64_err", tabs.f64_err, zbits));
    t = e.bits(lookup16_f64(e, "arrayc_exp2_sixteenths_f64", tabs.f64, zbits));
  } else {
    p = e.fma(e.mul(r, r), e.fma(r, e.c(1.0 / 6), e.c(0.5)), r);
    t = e.bits(lookup16(e, "arrayc_exp2_sixteenths", tabs.f32, zbits));
  }
  if (fast_path) {
    Value* s = e.flt(e.b.CreateAdd(t, e.b.CreateShl(m, e.ci(shift))));
    return e.fma(s, p, s);
  }
  Value* s = e.flt(e.b.CreateAdd(t, e.b.CreateShl(e.b.CreateAnd(m, e.ci(15)), e.ci(shift))));
  Value* k = e.b.CreateAShr(m, e.ci(4));
  Value* k1 = e.b.CreateAShr(k, e.ci(1));
  Value* k2 = e.b.CreateSub(k, k1);
  return e.mul(e.mul(e.fma(s, p, s), e.pow2i(k1)), e.pow2i(k2));
}

// Whether mask holds in every lane (a scalar mask as it is).
Value* all_lanes(const Ctx& e, Value* mask) {
  return e.ft->isVectorTy() ? e.b.CreateAndReduce(mask) : mask;
}

// Every lane of x has |x| < bound (an unsigned compare of the bits: NaN and inf fail).
Value* all_below(const Ctx& e, Value* x, double bound) {
  return all_lanes(e, e.b.CreateICmpULT(e.abs_bits(x), e.ci(e.bits_of(bound))));
}

// Every lane of x positive, normal and finite (one unsigned compare of the bits).
Value* all_positive_normal(const Ctx& e, Value* x) {
  int64_t min_normal = int64_t{1} << e.mbits, inf_bits = int64_t{2 * e.bias + 1} << e.mbits;
  return all_lanes(e, e.b.CreateICmpULT(e.b.CreateSub(e.bits(x), e.ci(min_normal)), e.ci(inf_bits - min_normal)));
}

// expm1(a) for 0 <= a <= 30 (what tanh needs): 2^n*p + (2^n - 1) with one rounding.
Value* expm1_nonneg(const Ctx& e, Value* a) {
  Value* nd;
  Value* n = e.round_int(a, kLog2e, nd);
  Value* r = e.fma(e.neg(nd), e.c(ln2_hi(e)), a);
  r = e.fma(e.neg(nd), e.c(ln2_lo(e)), r);
  Value* p = expm1_poly(e, r);
  Value* t = e.pow2i(n);
  return e.fma(t, p, e.sub(t, e.c(1)));
}

// Positive x with subnormals scaled up into the normal range (xs), and the exponent that
// scaling added, negated (kadj: 0 for normal x).
void scale_subnormal(const Ctx& e, Value* x, Value*& xs, Value*& kadj) {
  int up = e.f64 ? 54 : 24;
  Value* sub = e.lt(x, e.c(e.f64 ? 0x1p-1022 : 0x1p-126));
  xs = e.sel(sub, e.mul(x, e.c(std::ldexp(1.0, up))), x);
  kadj = e.sel(sub, e.ci(-up), e.ci(0));
}

// Splits positive x into x = m * 2^k with m in [sqrt(1/2), sqrt(2)); subnormals are scaled up
// first. Returns f = m - 1 (exact) and k as a float.
void log_reduce(const Ctx& e, Value* x, Value*& f, Value*& kd) {
  Value *xs, *kadj;
  scale_subnormal(e, x, xs, kadj);
  int64_t sqrt_half = e.f64 ? 0x3FE6A09E667F3BCD : 0x3F3504F3;
  Value* t = e.b.CreateSub(e.bits(xs), e.ci(sqrt_half));
  Value* k = e.b.CreateAdd(e.b.CreateAShr(t, e.ci(e.mbits)), kadj);
  int64_t mant_mask = (int64_t{1} << e.mbits) - 1;
  Value* m = e.flt(e.b.CreateAdd(e.b.CreateAnd(t, e.ci(mant_mask)), e.ci(sqrt_half)));
  f = e.sub(m, e.c(1));
  kd = e.b.CreateSIToFP(k, e.ft);
}

// log(x) for positive finite x by a 16-entry table, without a division. x = 2^k z with z in
// [0.699, 1.398) (subnormals scaled first): the bits of x minus those of kLogOff give k above the
// mantissa and the subinterval j of z in the mantissa's top 4 bits. log(x) = k ln2 + log(c_j)
// + log1p(r) with r = z/c_j - 1 = fma(z, 1/c_j, -1). Each 1/c_j has at most 7 significant bits,
// chosen so that every r of its subinterval is exact (abs(r) < 2^(1-bits); abs(r) < 0.044) and
// as small as that allows; 1/c_j = 1 in the subinterval of 1. log1p(r) = r + r^2 P(r) by Taylor's
// series (f32: degree 6, f64: 12; truncation below 0.03 ULP). -log(1/c_j) = hi + lo from two
// tables, hi on the grid of ln2_hi so that k ln2_hi + hi is exact; (k ln2_hi + hi) + r is summed
// as a two-sum and the small terms (lo, k ln2_lo, r^2 P, the two-sum's error) added last.
struct LogTables {
  std::array<uint32_t, 16> inv32, hi32, lo32;  // float words
  std::array<double, 16> inv64, hi64, lo64;
};
constexpr uint32_t kLogOffF32 = 0x3f330000;             // 0.69921875
constexpr uint64_t kLogOffF64 = 0x3fe6600000000000ull;  // the same value
constexpr double kLn2HiF32 = 45426.0 / 65536;           // ln2 on a 2^-16 grid: k ln2_hi exact
const LogTables& log_tables() {
  static const LogTables t = [] {
    LogTables r;
    auto word = [](float v) { return std::bit_cast<uint32_t>(v); };
    for (int j = 0; j < 16; ++j) {
      // The subinterval [lo, hi) of z, from the f32 layout (the f64 one is the same in value).
      uint32_t lo_bits = kLogOffF32 + (uint32_t(j) << 19), hi_bits = lo_bits + (1u << 19);
      float lo = std::bit_cast<float>(lo_bits), hi = std::bit_cast<float>(hi_bits);
      double inv = 1, best = 1;  // 1/c_j and its largest abs(r)
      if (!(lo <= 1.0f && 1.0f < hi)) {
        double ideal = 2.0 / (double(lo) + hi);
        for (int bits = 5; bits <= 7; ++bits) {
          double step = std::ldexp(1.0, std::ilogb(ideal) - bits + 1);
          for (double m = std::floor(ideal / step) - 2; m <= std::floor(ideal / step) + 3; ++m) {
            double rmax = std::max(std::fabs(lo * m * step - 1), std::fabs(hi * m * step - 1));
            if (rmax < std::ldexp(1.0, 1 - bits) && rmax < best) best = rmax, inv = m * step;
          }
        }
      }
      long double lc = -std::log(static_cast<long double>(inv));
      for (int f64 = 0; f64 < 2; ++f64) {
        long double grid = f64 ? 0x1p-33L : 0x1p-16L;  // the grid of ln2_hi
        long double h = std::nearbyint(lc / grid) * grid;
        if (f64) {
          r.inv64[j] = inv;
          r.hi64[j] = static_cast<double>(h);
          r.lo64[j] = static_cast<double>(lc - h);
        } else {
          r.inv32[j] = word(static_cast<float>(inv));
          r.hi32[j] = word(static_cast<float>(h));
          r.lo32[j] = word(static_cast<float>(lc - h));
        }
      }
    }
    return r;
  }();
  return t;
}

// normal_only: every x is known to be normal (define_fn's "normal" path), so subnormals need no
// scaling. for_float (f64 contexts only; f32 pow): log1p to degree 8 (truncation below 2^-37
// relative to r) and one sum in double, an absolute error below 2^-50 + 2^-52 |log x|.
Value* log_core(const Ctx& e, Value* x, bool normal_only = false, bool for_float = false) {
  const LogTables& t = log_tables();
  Value* xs = x;
  Value* kadj = e.ci(0);
  if (!normal_only) scale_subnormal(e, x, xs, kadj);
  Value* tmp = e.b.CreateSub(e.bits(xs), e.ci(e.f64 ? static_cast<int64_t>(kLogOffF64) : kLogOffF32));
  Value* j = e.b.CreateLShr(tmp, e.ci(e.mbits - 4));  // the lookups read its low 4 bits
  Value* k = e.b.CreateAShr(tmp, e.ci(e.mbits));
  Value* z = e.flt(e.b.CreateSub(e.bits(xs), e.b.CreateShl(k, e.ci(e.mbits))));
  Value* kd = e.b.CreateSIToFP(e.b.CreateAdd(k, kadj), e.ft);
  Value *inv, *lc_hi, *lc_lo;
  if (e.f64) {
    inv = lookup16_f64(e, "arrayc_log_inv_f64", t.inv64, j);
    lc_hi = lookup16_f64(e, "arrayc_log_hi_f64", t.hi64, j);
    lc_lo = lookup16_f64(e, "arrayc_log_lo_f64", t.lo64, j);
  } else {
    inv = lookup16(e, "arrayc_log_inv", t.inv32, j);
    lc_hi = lookup16(e, "arrayc_log_hi", t.hi32, j);
    lc_lo = lookup16(e, "arrayc_log_lo", t.lo32, j);
  }
  double l2hi = e.f64 ? ln2_hi(e) : kLn2HiF32;
  double l2lo = e.f64 ? ln2_lo(e) : static_cast<double>(static_cast<float>(kLn2 - kLn2HiF32));
  Value* r = e.fma(z, inv, e.c(-1));
  if (for_float) {
    std::vector<double> coef;
    for (int i = 2; i <= 8; ++i) coef.push_back((i % 2 ? 1.0 : -1.0) / i);
    Value* lc = e.add(e.fma(kd, e.c(kLn2), lc_hi), lc_lo);
    return e.add(lc, e.fma(e.mul(r, r), e.horner(r, coef), r));
  }
  Value* w = e.fma(kd, e.c(l2hi), lc_hi);  // exact
  Value* hi = e.add(w, r);
  Value* lo = e.add(e.sub(w, hi), r);  // exact: |w| >= |r| (the tables make it so) or w = 0
  std::vector<double> coef;  // log1p(r) = r + r^2 (-1/2 + r/3 - r^2/4 ...)
  for (int i = 2; i <= (e.f64 ? 12 : 6); ++i) coef.push_back((i % 2 ? 1.0 : -1.0) / i);
  Value* small = e.fma(e.mul(r, r), e.horner(r, coef), e.fma(kd, e.c(l2lo), lc_lo));
  return e.add(hi, e.add(lo, small));
}

Value* log_fn(const Ctx& e, Value* x) {
  Value* res = log_core(e, x);
  res = e.sel(e.b.CreateFCmpOGE(x, e.c(0)), res, e.nan());  // negative or NaN
  res = e.sel(e.eq(x, e.c(0)), e.neg(e.inf()), res);
  return e.sel(e.eq(x, e.inf()), e.inf(), res);
}

// log(x) of a double (or double vector) as hi + lo with about 2^-66 relative error, for pow.
// Same reduction; 2*atanh(s) = 2s + (2/3)s^3 + s^5*P(s^2), where s and the s^3 term are
// carried in double-double.
void log_dd(const Ctx& e, Value* x, Value*& hi, Value*& lo) {
  Value *f, *kd;
  log_reduce(e, x, f, kd);
  Value* t_hi = e.add(e.c(2), f);
  Value* t_lo = e.sub(f, e.sub(t_hi, e.c(2)));
  Value* s_hi = e.div(f, t_hi);
  Value* err = e.sub(e.fma(e.neg(s_hi), t_hi, f), e.mul(s_hi, t_lo));
  Value* s_lo = e.div(err, t_hi);
  Value* z_hi = e.mul(s_hi, s_hi);
  Value* z_lo = e.fma(s_hi, s_hi, e.neg(z_hi));
  Value* c_hi = e.mul(s_hi, z_hi);
  Value* c_lo = e.add(e.fma(s_hi, z_hi, e.neg(c_hi)), e.mul(s_hi, z_lo));
  constexpr double k23_hi = 0x1.5555555555555p-1, k23_lo = 0x1.5555555555555p-55;  // 2/3
  Value* m_hi = e.mul(e.c(k23_hi), c_hi);
  Value* m_lo = e.fma(e.c(k23_hi), c_hi, e.neg(m_hi));
  m_lo = e.add(m_lo, e.fma(e.c(k23_hi), c_lo, e.mul(e.c(k23_lo), c_hi)));
  m_lo = e.fma(e.mul(e.c(2), z_hi), s_lo, m_lo);  // 3 * (2/3) * s^2 * s_lo
  std::vector<double> coef;
  for (int j = 5; j <= 23; j += 2) coef.push_back(2.0 / j);
  Value* tail = e.mul(e.mul(c_hi, z_hi), e.horner(z_hi, coef));
  Value* two_s = e.mul(e.c(2), s_hi);
  Value* h = e.add(two_s, m_hi);
  Value* l = e.add(e.sub(two_s, h), m_hi);
  l = e.add(l, e.add(e.fma(e.c(2), s_lo, m_lo), tail));
  Value* a = e.mul(kd, e.c(ln2_hi(e)));  // exact
  hi = e.add(a, h);
  lo = e.add(e.add(e.sub(a, hi), h), e.fma(kd, e.c(ln2_lo(e)), l));
}

// f32 tanh in two pieces, blended per lane. |x| < 0.625: x + t P(z) with z = x^2 and t = x z + 0
// (so that tanh(-0) = -0), P the minimax polynomial of degree 4 in z (tanh of degree 11,
// `scripts/minimax.py`: 0.14 ULP with its coefficients rounded to float). Above: 1 - 2/(E + 1)
// with E = exp(2|x|) by exp's table path, reduced in one step (its error grows with 2|x|, but
// 2/(E + 1) shrinks faster), |x| clamped at 9.1, where tanh rounds to 1; then x's sign.
// Against em/(em + 2) with em = expm1(2|x|) (f64's tanh below), whose Taylor polynomial, division
// and corrections form one long chain: two short independent ones, and fewer operations.
const std::vector<double> kTanhPolyF32 = {-0x1.555532p-2, 0x1.110726p-3, -0x1.b83c5ap-5,
                                          0x1.52269cp-6, -0x1.75e1cep-8};

Value* tanh_f32(const Ctx& e, Value* x) {
  Value* z = e.mul(x, x);
  Value* small = e.fma(e.fma(x, z, e.c(0)), e.horner(z, kTanhPolyF32), x);
  Value* a = e.fabs(x);
  Value* ac = e.at_most(a, 9.1);
  Value* big = exp_table(e, e.add(ac, ac), /*fast_path=*/true, false, /*moderate=*/true);
  big = e.copysign(e.sub(e.c(1), e.div(e.c(2), e.add(big, e.c(1)))), x);
  return e.sel(e.lt(a, e.c(0.625)), small, big);
}

// tanh(x) = sign(x) * em/(em + 2), em = expm1(2|x|); |x| is clamped where tanh rounds to 1.
// The rounding errors of em + 2 and of the division are corrected once, leaving em's error.
Value* tanh_fn(const Ctx& e, Value* x) {
  if (!e.f64) return tanh_f32(e, x);
  double sat = e.f64 ? 20 : 10;
  Value* a = e.fabs(x);
  a = e.at_most(a, sat);
  Value* em = expm1_nonneg(e, e.add(a, a));
  Value* d = e.add(em, e.c(2));
  Value* em_part = e.sub(d, e.c(2));  // two-sum: d + d_lo = em + 2 exactly
  Value* d_lo = e.add(e.sub(em, em_part), e.sub(e.c(2), e.sub(d, em_part)));
  Value* rd = e.div(e.c(1), d);  // the one division
  Value* q = e.mul(em, rd);
  Value* resid = e.fma(e.neg(q), d_lo, e.fma(e.neg(q), d, em));  // em - q*(d + d_lo)
  return e.copysign(e.fma(resid, rd, q), x);
}

// sin(x) and cos(x) for x = r + q*pi/2 from sinp = sin r and cosp = cos r (e's type; q its
// integer type; only q mod 4 matters). sin r has the sign of r (|r| < pi); the polynomials' sums
// lose it only for r = -0 (x = -0: the reductions keep that sign, their parts of pi/2 are all
// positive), so it is or-ed back in: sin(-0) = -0. sin(x) = +-sinp or +-cosp by q mod 4;
// cos(x) = sin(x + pi/2), i.e. q + 1. Odd q swaps the two; bit 1 of q (of q + 1 for cos) is the
// sign, moved to the top bit and xored in. On Zen 4 the shifts, xors and blends issue beside the
// FMAs; the test of bit 0 (a compare into a mask register) takes an FMA's slot, as any compare
// does (benchmarks/port_probe.cpp).
// sin_signed: sinp already has r's sign when r = -0 (else it gets r's sign bit or-ed in).
void apply_quadrant(const Ctx& e, Value* r, Value* q, Value* sinp, Value* cosp, Value*& sin_out,
                    Value*& cos_out, bool sin_signed = false) {
  int top = e.f64 ? 63 : 31;
  Value* sign_bit = e.ci(static_cast<int64_t>(uint64_t{1} << top));
  if (!sin_signed) sinp = e.flt(e.b.CreateOr(e.bits(sinp), e.b.CreateAnd(e.bits(r), sign_bit)));
  Value* swap = e.b.CreateICmpNE(e.b.CreateAnd(q, e.ci(1)), e.ci(0));
  auto sign = [&](Value* qq) { return e.b.CreateAnd(e.b.CreateShl(qq, e.ci(top - 1)), sign_bit); };
  sin_out = e.flt(e.b.CreateXor(e.bits(e.sel(swap, cosp, sinp)), sign(q)));
  cos_out = e.flt(e.b.CreateXor(e.bits(e.sel(swap, sinp, cosp)), sign(e.b.CreateAdd(q, e.ci(1)))));
}

// Minimax polynomials of the f64 sin and cos on |r| <= pi/4 + 2^-20 (`scripts/minimax.py`, a Remez
// exchange for the relative error): sin r = r + r^3 S(z), cos r = 1 - z/2 + z^2 C(z), z = r^2,
// degrees 13 and 14, relative errors 0.10 and 0.04 ULP with the coefficients rounded to double.
// They replaced Taylor polynomials of degrees 17 and 16 (three FMAs more for both).
const std::vector<double> kSinPolyF64 = {-0x1.5555555555548p-3, 0x1.111111110f7dp-7,
                                         -0x1.a01a019bfdedbp-13, 0x1.71de3567d24cp-19,
                                         -0x1.ae5e5a90bfb45p-26, 0x1.5d8fd1716495p-33};
const std::vector<double> kCosPolyF64 = {0x1.5555555555539p-5, -0x1.6c16c16c13ba6p-10,
                                         0x1.a01a019b2d82ep-16, -0x1.27e4f72b71f03p-22,
                                         0x1.1ee96cc58c3c7p-29, -0x1.8f754371b1247p-37};

// sin and cos of r + q*pi/2 for |r| <= ~pi/4 (d is a double context; q its integer type): the
// polynomials once (Horner's rule: the fewest multiplies and FMAs), then the quadrant.
void trig_eval_both(const Ctx& d, Value* r, Value* q, Value*& sin_out, Value*& cos_out) {
  Value* z = d.mul(r, r);
  Value* sinp = d.fma(d.mul(r, z), d.horner(z, kSinPolyF64), r);
  // cos r = w + ((1 - w) - z/2 + z^2 C(z)) with w = 1 - z/2: the rounding error of w comes back.
  Value* hz = d.mul(d.c(0.5), z);
  Value* w = d.sub(d.c(1), hz);
  Value* cos_tail = d.mul(d.mul(z, z), d.horner(z, kCosPolyF64));
  Value* cosp = d.add(w, d.add(d.sub(d.sub(d.c(1), w), hz), cos_tail));
  apply_quadrant(d, r, q, sinp, cosp, sin_out, cos_out);
}

Value* trig_eval(const Ctx& d, Value* r, Value* q, Value* cos_offset) {
  Value *s, *c;
  trig_eval_both(d, r, q, s, c);
  // cos_offset is 0 (sin) or 1 (cos), as a constant or (the exact reduction) a value.
  return d.sel(d.b.CreateICmpNE(cos_offset, d.ci(0)), c, s);
}

// pi/2 = kPio2A + kPio2B + kPio2C, each the nearest double to what is left.
constexpr double kPio2A = 0x1.921fb54442d18p+0, kPio2B = 0x1.1a62633145c07p-54,
                 kPio2C = -0x1.f1976b7ed8fbcp-110;
// The same with every part positive (kPio2A is below pi/2 already; B rounded down): every FMA
// step x - q*part of a reduction with q = +0 then adds -0, and a -0 of x survives it.
constexpr double kPio2BDown = 0x1.1a62633145c06p-54, kPio2CRest = 0x1.c1cd129024e09p-107;
constexpr double kTwoOverPi = 0x1.45f306dc9c883p-1;

// pi/2 = p[0] + p[1] + p[2] + p[3] (floats), peeled off the double-double kPio2A + kPio2B, each
// part rounded to nearest or (toward_zero) down. Parts rounded down are all positive: then every
// step fma(q, -p[i], r) of a reduction with q = +0 adds -0, and a -0 of x survives it. The
// nearest parts keep a long reduction (many q bits, four steps) 0.5 ULP more accurate.
std::array<float, 4> pio2_floats(bool toward_zero) {
  std::array<float, 4> p;
  double h = kPio2A, l = kPio2B + kPio2C;
  for (float& part : p) {
    part = static_cast<float>(h + l);
    if (toward_zero && part > h + l) part = std::nextafter(part, 0.0f);
    double d = h - part;  // exact: part is within a factor 2 of h
    h = d + l;            // two-sum (h, l) = d + l
    double bv = h - d;
    l = (d - (h - bv)) + (l - bv);
  }
  return p;
}

// sin(x) and cos(x) in float from x's reduction r (+ r_lo, when r is a rounded double: then
// r_lo = r - float(r)) and quadrant q (e's integer type; only q mod 4 matters), with minimax
// polynomials on |r| <= pi/4: sin of degree 7 (Cephes sinf's coefficients), cos of degree 6
// (scripts/minimax.py: relative error 0.74 ULP after rounding the coefficients to float; one
// FMA fewer than Cephes cosf's degree 8, whose error is 0.003 ULP).
void trig_poly_f32(const Ctx& e, Value* r, Value* r_lo, Value* q, Value*& sin_out, Value*& cos_out) {
  // Horner's rule: eight multiplies and FMAs for both, the fewest on Zen 4's two FMA pipes.
  Value* z = e.mul(r, r);
  Value* sin_poly = e.horner(z, {-1.6666654611e-1, 8.3321608736e-3, -1.9515295891e-4});
  Value* cos_poly = e.horner(z, {-0x1.ffffb2p-2, 0x1.553e78p-5, -0x1.644c22p-10});
  Value *sinp, *cosp;
  if (!r_lo) {
    // sin r = r + r w with w = z P(z) + 0: for r = +-0, w = +0 (P < 0 makes z P = -0), and
    // r w + r keeps r's sign, which saves or-ing it in.
    sinp = e.fma(r, e.fma(sin_poly, z, e.c(0)), r);
    cosp = e.fma(z, cos_poly, e.c(1));
  } else {
    // sin(r + r_lo) = sin r + r_lo cos r ~ r + (r_lo + r z P(z)); cos(r + r_lo) ~ cos r - r r_lo.
    sinp = e.add(r, e.fma(e.mul(r, z), sin_poly, r_lo));
    cosp = e.fma(e.neg(r), r_lo, e.fma(z, cos_poly, e.c(1)));
  }
  apply_quadrant(e, r, q, sinp, cosp, sin_out, cos_out, /*sin_signed=*/!r_lo);
}

// Cody-Waite sin and cos, valid below the huge-argument thresholds. Computed in double for both
// element types (float inputs are exact in double and the reduction then needs no care).
void trig_fast_both(const Ctx& e, Value* x, Value*& sin_out, Value*& cos_out) {
  Ctx d = e.as_double();
  Value* xd = e.f64 ? x : e.b.CreateFPExt(x, d.ft);
  Value* qd;
  Value* q = d.round_int(xd, kTwoOverPi, qd);
  Value* r = d.fma(d.neg(qd), d.c(kPio2A), xd);
  r = d.fma(d.neg(qd), d.c(kPio2BDown), r);
  r = d.fma(d.neg(qd), d.c(kPio2CRest), r);
  if (!e.f64) {
    // A float result needs no double polynomials: r as two floats, then the float ones (half
    // the vector registers of the double ones).
    Value* r_hi = e.b.CreateFPTrunc(r, e.ft);
    Value* r_lo = e.b.CreateFPTrunc(d.sub(r, e.b.CreateFPExt(r_hi, d.ft)), e.ft);
    trig_poly_f32(e, r_hi, r_lo, e.b.CreateTrunc(q, e.it), sin_out, cos_out);
    return;
  }
  trig_eval_both(d, r, q, sin_out, cos_out);
}

// sin or cos alone (no partner in the kernel: W1 and W8 take both, and then the shared
// reduction and both polynomials cost less than two of these). x = q pi + r with |r| <= pi/2
// (cos: x = (q + 1/2) pi + r), sin x = (-1)^q sin r (cos x = (-1)^(q+1) sin r): one polynomial,
// no quadrant swap, and the sign from q's low bit. Against the shared path's both polynomials and
// quadrant selects this is two thirds of the vector operations (f64: about 24 against 36 per 8
// lanes; f32: 15 against 20 per 16): on Zen 4, whose 512-bit operations take two of its four
// 256-bit pipes, a loop of these is bound by the count of all its vector operations, not only its
// FMAs. q = rint(x/pi) with the magic constant, whose low mantissa bit is then q's (cos:
// rint(x/pi - 1/2), then + 1/2); r = x - q pi with pi in three positive parts (twice those of
// pi/2: the first step is exact, and a -0 of x survives). sin r = r + t S(z) with z = r^2 and
// t = r z + 0 (+0 for r = +-0, so that t S + r keeps r's sign), S the minimax polynomial on
// |r| <= pi/2 + 2^-20 (f64) or + 2^-12 (f32) of `scripts/minimax.py`: f64 degree 7 in z (sin of
// degree 17), 0.05 ULP with its coefficients rounded to double; f32 degree 3 (sin of degree 9),
// 0.26 ULP rounded to float. (As r + r (z S(z)) instead, the rounding of z S(z), carried by r,
// gave f32 2.0 ULP and two floats a result of 1 + 2^-23; t's rounding is carried by S, 0.15 of
// its size: every float below 2^10 gives at most 1.9 ULP and none above 1.)
// f64: every finite x below the huge bound (q < 2^29). f32: the float tiers below kTinyTrigF32
// (q < 2^9; float(1/pi) and the FMA's rounding put x/pi within 2^-15.5 of the true quotient, so
// q is one off only where |r| stays below pi/2 + 2^-14).
const std::vector<double> kSinHalfPiPolyF64 = {
    -0x1.5555555555555p-3, 0x1.11111111110c1p-7,  -0x1.a01a01a0148bcp-13, 0x1.71de3a5287c59p-19,
    -0x1.ae6454cb5687bp-26, 0x1.6123cb28d3ffp-33, -0x1.ae431d8c8731p-41, 0x1.8829a1b747a6cp-49};
const std::vector<double> kSinHalfPiPolyF32 = {-0x1.55554cp-3, 0x1.110ed2p-7, -0x1.9f6fe4p-13,
                                               0x1.5dbc58p-19};
constexpr double kOneOverPi = kTwoOverPi / 2;

Value* trig_one(const Ctx& e, Value* x, bool is_cos) {
  Value *qd, *qbits;  // qbits: the rounding's raw bits, q in the low ones
  if (is_cos) {
    e.round_int(e.fma(x, e.c(kOneOverPi), e.c(-0.5)), 1, qd, &qbits);
    qd = e.add(qd, e.c(0.5));
  } else {
    e.round_int(x, kOneOverPi, qd, &qbits);
  }
  std::array<double, 3> pio2 = {kPio2A, kPio2BDown, kPio2CRest};
  if (!e.f64) {
    std::array<float, 4> p = pio2_floats(true);
    pio2 = {p[0], p[1], p[2]};
  }
  Value* r = x;
  for (double part : pio2) r = e.fma(e.neg(qd), e.c(2 * part), r);
  Value* z = e.mul(r, r);
  Value* t = e.fma(r, z, e.c(0));
  Value* y = e.fma(t, e.horner(z, e.f64 ? kSinHalfPiPolyF64 : kSinHalfPiPolyF32), r);
  int top = e.f64 ? 63 : 31;
  Value* sign = e.b.CreateShl(qbits, e.ci(top));
  if (is_cos) sign = e.b.CreateXor(sign, e.ci(static_cast<int64_t>(uint64_t{1} << top)));
  Value* res = e.flt(e.b.CreateXor(e.bits(y), sign));
  if (!e.f64) return res;
  // f64 near |r| = pi/2 (cos of small x, sin near its peaks): the polynomial and its rounding
  // carry y one ulp past 1 (14099 sines and 19529 cosines of 100 million arguments near their
  // peaks), and cos(1e-9) would be 1.0000000000000002. Clamped by a min and a max, which let NaN
  // through (AVX-512's one-instruction vrangepd would turn NaN into +-1). f32 needs none: every
  // float argument of the tiers gives |y| <= 1 (checked exhaustively, docs/math_accuracy.md).
  return e.clamp(res, -1, 1);
}

// Fast mode has no exact reduction: lanes above the huge threshold give NaN rather than an
// unreduced (garbage, even infinite) result.
Value* nan_if_huge(const Ctx& e, Value* x, Value* res) {
  return e.sel(e.gt(e.fabs(x), e.c(e.f64 ? kHugeTrigF64 : kHugeTrigF32)), e.nan(), res);
}

Value* trig_fast(const Ctx& e, Value* x, bool is_cos) {
  Value *s, *c;
  trig_fast_both(e, x, s, c);
  return is_cos ? c : s;
}

// f32 sin/cos in float arithmetic, used by a variant when every lane has |x| < kSmallTrigF32
// (NaN and inf lanes fail that test and take the double path). q = rint(2x/pi),
// r = x - q*pi/2 with pi/2 split into four floats (FMA; the first step is exact),
// the minimax polynomials of trig_poly_f32.
constexpr double kSmallTrigF32 = 0x1p22;

// f32 sin/cos when every lane has |x| < kTinyTrigF32 (W8's normal inputs, anything of moderate
// size): q = rint(x * 2/pi) in one FMA with the magic constant 1.5 * 2^23 (whose low mantissa
// bits then hold q), r = x - q*pi/2 in three FMA steps (q < 2^10: the first is exact and the
// third part leaves an error below 2^-60), the same polynomials. float(2/pi) and
// the one rounding put x*2/pi within 2^-13 of the true product, so q can be one off only where
// 2x/pi is that close to a half-integer: |r| <= pi/4 + 2^-12, where the polynomials keep their
// accuracy. This saves the small path's two-float product, its rounding and conversion, and
// its one-off correction.
constexpr double kTinyTrigF32 = 0x1p10;

void trig_tiny_f32_both(const Ctx& e, Value* x, Value*& sin_out, Value*& cos_out) {
  std::array<float, 4> p = pio2_floats(true);
  Value* qf;  // q, exact; +0 near 0, so that r keeps a -0 of x
  Value* q = e.round_int(x, kTwoOverPi, qf);
  Value* r = e.fma(qf, e.c(-p[0]), x);
  for (int i = 1; i < 3; ++i) r = e.fma(qf, e.c(-p[i]), r);
  trig_poly_f32(e, r, nullptr, q, sin_out, cos_out);
}

// Both sin(x) and cos(x): the reduction and both polynomials are shared.
void trig_small_f32_both(const Ctx& e, Value* x, Value*& sin_out, Value*& cos_out) {
  std::array<float, 4> p = pio2_floats(false);
  // 2/pi as two floats: v = x*2/pi with one rounding (error < 0.5 while v < 2^23).
  float two_pi_hi = static_cast<float>(kTwoOverPi);
  float two_pi_lo = static_cast<float>(kTwoOverPi - two_pi_hi);
  Value* v = e.fma(x, e.c(two_pi_hi), e.mul(x, e.c(two_pi_lo)));
  Value* qd;  // q = rint(v) by the magic constant (v < 2^22)
  Value* q = e.round_int(v, 1, qd);
  Value* r = e.fma(qd, e.c(-p[0]), x);
  for (int i = 1; i < 4; ++i) r = e.fma(qd, e.c(-p[i]), r);
  // v carries one rounding (up to 1/8 below the bound), so q can be one off when 2x/pi is near
  // a half-integer (|r| up to ~pi/4 + 0.2): move such r back by pi/2 (r - p[0] is exact; p[2],
  // p[3] do not matter at |r| > 0.5).
  // (The sign arithmetic is integer shifts and logic, which issue beside the FMAs on Zen 4.)
  Value* off = e.b.CreateICmpUGT(e.abs_bits(r), e.ci(e.bits_of(0x1.921fb6p-1)));  // |r| > pi/4
  Value* s = e.b.CreateOr(e.b.CreateAShr(e.bits(r), e.ci(31)), e.ci(1));  // sign of r: -1 or 1
  Value* ns = e.flt(e.b.CreateXor(e.bits(e.c(-1)), e.b.CreateAnd(e.bits(r), e.ci(0x80000000))));
  Value* rc = e.fma(ns, e.c(p[1]), e.fma(ns, e.c(p[0]), r));
  r = e.sel(off, rc, r);
  q = e.b.CreateAdd(q, e.sel(off, s, e.ci(0)));
  trig_poly_f32(e, r, nullptr, q, sin_out, cos_out);
  sin_out = e.sel(e.eq(x, e.c(0)), x, sin_out);  // p[1] < 0 turns a -0 of r into +0
}

// The float paths of f32 sin/cos, tried in order, each taken when every lane is below its bound
// (all_below: NaN and inf lanes fail it). The packed sincos takes `both`; the separate functions
// take `one` where the tier has it (below 2^10: trig_one, the reduction modulo pi), else
// `both`. The first bound is exp's (kModerateF32), so that exp, sin and cos of one x test it
// once; below 2^10 it is the same path.
struct FloatTrigTier {
  double bound;
  const char* name;
  void (*both)(const Ctx&, Value*, Value*&, Value*&);
  Value* (*one)(const Ctx&, Value*, bool is_cos);
};
constexpr FloatTrigTier kFloatTrigTiers[] = {{kModerateF32, "tiny", trig_tiny_f32_both, trig_one},
                                             {kTinyTrigF32, "tiny", trig_tiny_f32_both, trig_one},
                                             {kSmallTrigF32, "small", trig_small_f32_both, nullptr}};

// Emits the tiers' tests at b's insertion point, each branching to its path; consecutive tiers
// of one path share its block (emitted once, by ret(tier), which ends it with a return). Leaves
// b past the last test.
void float_trig_tiers(llvm::IRBuilder<>& b, const Ctx& e, Value* x, const std::function<void(const FloatTrigTier&)>& ret) {
  llvm::Function* f = b.GetInsertBlock()->getParent();
  const size_t n = std::size(kFloatTrigTiers);
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && kFloatTrigTiers[j].both == kFloatTrigTiers[i].both) ++j;
    auto* taken = llvm::BasicBlock::Create(b.getContext(), kFloatTrigTiers[i].name, f);
    for (size_t k = i; k < j; ++k) {
      auto* rest = llvm::BasicBlock::Create(b.getContext(), "rest", f);
      b.CreateCondBr(all_below(e, x, kFloatTrigTiers[k].bound), taken, rest);
      b.SetInsertPoint(rest);
    }
    llvm::BasicBlock* rest = b.GetInsertBlock();
    b.SetInsertPoint(taken);
    ret(kFloatTrigTiers[i]);
    b.SetInsertPoint(rest);
    i = j;
  }
}

// Lanes that need the exact reduction: threshold < |x| < inf, one unsigned compare of the bits
// (NaN fails it).
Value* trig_huge_mask(const Ctx& e, Value* x) {
  int64_t lo = e.bits_of(e.f64 ? kHugeTrigF64 : kHugeTrigF32) + 1, inf = e.bits_of(INFINITY);
  return e.b.CreateICmpULT(e.b.CreateSub(e.abs_bits(x), e.ci(lo)), e.ci(inf - lo));
}

// Bits of 2/pi, 64 per word, preceded by one zero word: word i holds bits 64(i-1)+1 ..
// 64i of the binary fraction 2/pi = 0.101000101111... Computed with Machin's formula in integer
// arithmetic.
constexpr uint64_t kTwoOverPiBits[] = {
    0x0000000000000000, 0xa2f9836e4e441529, 0xfc2757d1f534ddc0, 0xdb6295993c439041,
    0xfe5163abdebbc561, 0xb7246e3a424dd2e0, 0x06492eea09d1921c, 0xfe1deb1cb129a73e,
    0xe88235f52ebb4484, 0xe99c7026b45f7e41, 0x3991d639835339f4, 0x9c845f8bbdf9283b,
    0x1ff897ffde05980f, 0xef2f118b5a0a6d1f, 0x6d367ecf27cb09b7, 0x4f463f669e5fea2d,
    0x7527bac7ebe5f17b, 0x3d0739f78a5292ea, 0x6bfb5fb11f8d5d08, 0x56033046fc7b6bab,
};

// double arrayc_trig_huge(double x, i1 is_cos): sin or cos of a finite x with |x| >= 2^-9,
// reducing exactly modulo pi/2 (Payne-Hanek). With x = m*2^k (m a 53-bit integer), the
// 192-bit window W = (2^k * 2/pi) mod 4 of the 2/pi bits gives x*2/pi mod 4 = m*W mod 4.
llvm::Function* get_trig_huge(llvm::Module& mod, llvm::Function* like) {
  const char* name = "arrayc_trig_huge";
  if (auto* f = mod.getFunction(name)) return f;
  llvm::LLVMContext& cx = mod.getContext();
  llvm::IRBuilder<> b(cx);
  auto* fty = llvm::FunctionType::get(b.getDoubleTy(), {b.getDoubleTy(), b.getInt1Ty()}, false);
  auto* fn = llvm::Function::Create(fty, llvm::Function::InternalLinkage, name, mod);
  copy_target_attrs(like, fn);
  b.SetInsertPoint(llvm::BasicBlock::Create(cx, "entry", fn));

  auto* i64 = b.getInt64Ty();
  auto* i128 = b.getInt128Ty();
  auto* words_ty = llvm::ArrayType::get(i64, std::size(kTwoOverPiBits));
  auto* table = new llvm::GlobalVariable(
      mod, words_ty, true, llvm::GlobalValue::PrivateLinkage,
      llvm::ConstantDataArray::get(cx, llvm::ArrayRef<uint64_t>(kTwoOverPiBits)),
      "arrayc_two_over_pi_bits");
  table->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);

  Value* x = fn->getArg(0);
  Value* is_cos = fn->getArg(1);
  Ctx d(b, b.getDoubleTy());
  Value* xbits = d.bits(d.fabs(x));
  Value* k = b.CreateSub(b.CreateLShr(xbits, 52), b.getInt64(1075));
  Value* m = b.CreateOr(b.CreateAnd(xbits, b.getInt64((uint64_t{1} << 52) - 1)),
                        b.getInt64(uint64_t{1} << 52));
  // The window's top bit (weight 2) is fraction bit k-1, i.e. bit k+62 of the padded table.
  Value* j0 = b.CreateAdd(k, b.getInt64(62));
  Value* idx = b.CreateLShr(j0, 6);
  Value* sh = b.CreateAnd(j0, 63);
  Value* t[4];
  for (int i = 0; i < 4; ++i) {
    Value* p = b.CreateInBoundsGEP(words_ty, table,
                                   {b.getInt64(0), b.CreateAdd(idx, b.getInt64(i))});
    t[i] = b.CreateLoad(i64, p);
  }
  auto fshl = [&](Value* hi, Value* lo) {
    return b.CreateIntrinsic(llvm::Intrinsic::fshl, {i64}, {hi, lo, sh});
  };
  Value* w0 = fshl(t[0], t[1]);
  Value* w1 = fshl(t[1], t[2]);
  Value* w2 = fshl(t[2], t[3]);
  // Low 192 bits of m*W as words r0:r1:(r2, dropped).
  Value* m128 = b.CreateZExt(m, i128);
  Value* p2 = b.CreateMul(m128, b.CreateZExt(w2, i128));
  Value* p1 = b.CreateMul(m128, b.CreateZExt(w1, i128));
  Value* mid = b.CreateAdd(b.CreateLShr(p2, 64), b.CreateAnd(p1, b.getIntN(128, ~uint64_t{0})));
  Value* r1 = b.CreateTrunc(mid, i64);
  Value* r0 = b.CreateAdd(b.CreateAdd(b.CreateTrunc(b.CreateLShr(p1, 64), i64), b.CreateMul(m, w0)),
                          b.CreateTrunc(b.CreateLShr(mid, 64), i64));
  // y = r0:r1 with the binary point below bit 126; round to the nearest quadrant.
  Value* y = b.CreateOr(b.CreateShl(b.CreateZExt(r0, i128), 64), b.CreateZExt(r1, i128));
  llvm::APInt half = llvm::APInt::getOneBitSet(128, 125);
  Value* yr = b.CreateAdd(y, b.getInt(half));
  Value* q = b.CreateTrunc(b.CreateLShr(yr, 126), i64);
  Value* frac = b.CreateSub(b.CreateAnd(yr, b.getInt(llvm::APInt::getLowBitsSet(128, 126))),
                            b.getInt(half));
  Value* negf = b.CreateICmpSLT(frac, b.getIntN(128, 0));
  Value* mag = b.CreateSelect(negf, b.CreateNeg(frac), frac);
  // mag * 2^-126 as a double-double (dhi, dlo), then times pi/2.
  Value* lz = b.CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, mag, b.getFalse());
  Value* top = b.CreateTrunc(b.CreateLShr(b.CreateShl(mag, lz), 64), i64);
  Value* lz64 = b.CreateTrunc(lz, i64);
  Value* scale = d.flt(b.CreateShl(b.CreateSub(b.getInt64(1023 - 62), lz64), 52));
  Value* dhi = d.mul(b.CreateUIToFP(b.CreateAnd(top, b.getInt64(~uint64_t{0x7ff})), d.ft), scale);
  Value* dlo = d.mul(b.CreateUIToFP(b.CreateAnd(top, b.getInt64(0x7ff)), d.ft), scale);
  Value* rhi = d.mul(dhi, d.c(kPio2A));
  Value* rlo = d.add(d.fma(dhi, d.c(kPio2A), d.neg(rhi)),
                     d.fma(dlo, d.c(kPio2A), d.mul(dhi, d.c(kPio2B))));
  Value* r = d.add(rhi, rlo);
  r = d.sel(negf, d.neg(r), r);
  Value* res = trig_eval(d, r, q, b.CreateZExt(is_cos, i64));
  // sin is odd, cos even; the reduction used |x|.
  Value* flip = b.CreateAnd(b.CreateNot(is_cos), d.lt(x, d.c(0)));
  b.CreateRet(d.sel(flip, d.neg(res), res));
  fn->setDoesNotAccessMemory();  // reads only constant memory
  fn->addFnAttr(llvm::Attribute::NoInline);
  return fn;
}

// exp(y log ax) for ax >= 0, without pow's special cases. normal_only: every ax is normal.
Value* pow_core(const Ctx& e, Value* ax, Value* y, bool fast, bool normal_only) {
  if (e.f64 && !fast) {
    Value *lh, *ll;
    log_dd(e, ax, lh, ll);
    Value* ph = e.mul(y, lh);
    Value* pl = e.fma(y, ll, e.fma(y, lh, e.neg(ph)));
    pl = e.sel(e.lt(e.fabs(ph), e.c(4096)), pl, e.c(0));  // beyond: over/underflow anyway
    return exp_core(e, ph, pl);
  }
  if (e.f64) return exp_table(e, e.mul(y, log_core(e, ax, normal_only)), false);
  // float: double log and exp are far more accurate than the float result needs. Beyond +-200
  // the float result is 0 or inf anyway: the clamp keeps exp_table on its fast path.
  Ctx d = e.as_double();
  Value* p = d.mul(e.b.CreateFPExt(y, d.ft), log_core(d, e.b.CreateFPExt(ax, d.ft), normal_only, true));
  return e.b.CreateFPTrunc(exp_table(d, d.clamp(p, -200, 200), true, true), e.ft);
}

// pow(x, y) = exp(y * log|x|) with C99 special cases on top.
Value* pow_fn(const Ctx& e, Value* x, Value* y, bool fast) {
  Value* ax = e.fabs(x);
  Value* core = pow_core(e, ax, y, fast, false);
  auto is_int = [&](Value* v) {
    return e.eq(e.b.CreateUnaryIntrinsic(llvm::Intrinsic::trunc, v), v);
  };
  Value* y_int = is_int(y);
  Value* y_odd = e.b.CreateAnd(y_int, e.b.CreateNot(is_int(e.mul(y, e.c(0.5)))));
  Value* x_signbit = e.b.CreateICmpSLT(e.bits(x), e.ci(0));
  Value* y_neg = e.lt(y, e.c(0));
  Value* x_zero = e.eq(x, e.c(0));
  Value* x_inf = e.eq(ax, e.inf());
  // x = +-0 or +-inf: 0 or inf by the sign of y; then the odd-power sign for x < 0.
  Value* zero_inf = e.sel(e.b.CreateICmpEQ(x_zero, y_neg), e.inf(), e.c(0));
  Value* res = e.sel(e.b.CreateOr(x_zero, x_inf), zero_inf, core);
  res = e.sel(e.b.CreateAnd(x_signbit, y_odd), e.neg(res), res);
  Value* x_neg_finite = e.b.CreateAnd(e.lt(x, e.c(0)), e.b.CreateNot(x_inf));
  res = e.sel(e.b.CreateAnd(x_neg_finite, e.b.CreateNot(y_int)), e.nan(), res);
  // y = +-inf: 1 for |x| = 1, else 0 or inf depending on |x| < 1 and the sign of y.
  Value* y_inf_res = e.sel(e.b.CreateICmpEQ(e.lt(ax, e.c(1)), y_neg), e.inf(), e.c(0));
  y_inf_res = e.sel(e.eq(ax, e.c(1)), e.c(1), y_inf_res);
  res = e.sel(e.eq(e.fabs(y), e.inf()), y_inf_res, res);
  res = e.sel(e.b.CreateOr(e.isnan(x), e.isnan(y)), e.add(x, y), res);
  return e.sel(e.b.CreateOr(e.eq(y, e.c(0)), e.eq(x, e.c(1))), e.c(1), res);
}

// Straight-line body of fn over the context's value type (sin/cos: the Cody-Waite path only;
// f64 alone the one-polynomial one, f64 in a pair the shared one).
Value* emit_body(const Ctx& e, MathFn fn, llvm::ArrayRef<Value*> a, const MathOptions& o) {
  switch (fn) {
    case MathFn::Exp:
      return exp_table(e, a[0], false);
    case MathFn::Log:
      return log_fn(e, a[0]);
    case MathFn::Sin:
    case MathFn::Cos:
      if (e.f64 && !o.pair) return trig_one(e, a[0], fn == MathFn::Cos);
      return trig_fast(e, a[0], fn == MathFn::Cos);
    case MathFn::Tanh:
      return tanh_fn(e, a[0]);
    case MathFn::Sqrt:
      return e.b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, a[0]);
    case MathFn::Pow:
      return pow_fn(e, a[0], a[1], o.fast);
  }
  return nullptr;
}


// Scalar functions stay out of line, so that the vectorizer sees their calls; vector variants are
// inlined into the vectorized loop once it exists (inline_vector_math in codegen/optimize.cpp),
// which keeps their constants in registers and their lanes out of the stack.
void mark_inlining(llvm::Function* f, llvm::Type* t) {
  f->addFnAttr(t->isVectorTy() ? llvm::Attribute::AlwaysInline : llvm::Attribute::NoInline);
}

// Defines name(args...) -> type over value type t (scalar or vector). Sin/cos branch to the
// exact reduction when any lane is huge.
llvm::Function* define_fn(llvm::Module& mod, llvm::Function* like, const std::string& name,
                          MathFn fn, llvm::Type* t, const MathOptions& o) {
  const bool fast = o.fast;
  llvm::LLVMContext& cx = mod.getContext();
  unsigned nargs = fn == MathFn::Pow ? 2 : 1;
  std::vector<llvm::Type*> params(nargs, t);
  auto* f = llvm::Function::Create(llvm::FunctionType::get(t, params, false),
                                   llvm::Function::InternalLinkage, name, mod);
  copy_target_attrs(like, f);
  f->setDoesNotAccessMemory();
  f->setDoesNotThrow();
  f->addFnAttr(llvm::Attribute::WillReturn);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(cx, "entry", f));
  Ctx e(b, t);
  std::vector<Value*> args;
  for (auto& a : f->args()) args.push_back(&a);
  bool trig = fn == MathFn::Sin || fn == MathFn::Cos;
  bool exact_trig = trig && !fast;
  // When all_ok holds, return what `lean` computes, on a path of its own.
  auto path_if = [&](Value* all_ok, const char* name, const std::function<Value*()>& lean) {
    auto* taken = llvm::BasicBlock::Create(cx, name, f);
    auto* rest = llvm::BasicBlock::Create(cx, "rest", f);
    b.CreateCondBr(all_ok, taken, rest);
    b.SetInsertPoint(taken);
    b.CreateRet(lean());
    b.SetInsertPoint(rest);
  };
  if (fn == MathFn::Exp && !e.f64)
    path_if(all_below(e, args[0], kModerateF32), "moderate", [&] { return exp_table(e, args[0], true, false, true); });
  if (fn == MathFn::Exp)
    path_if(all_below(e, args[0], e.f64 ? kExpTableFastF64 : kExpTableFastF32), "fast",
            [&] { return exp_table(e, args[0], true); });
  // Every x positive, normal and finite (pow: every y finite too): log without the scaling of
  // subnormals, neither function with its special cases. Those lanes get the same bits on the
  // full path below.
  if (fn == MathFn::Log)
    path_if(all_positive_normal(e, args[0]), "normal", [&] { return log_core(e, args[0], true); });
  if (fn == MathFn::Pow)
    path_if(b.CreateAnd(all_positive_normal(e, args[0]), all_below(e, args[1], INFINITY)), "normal",
            [&] { return pow_core(e, args[0], args[1], fast, true); });
  if (trig && !e.f64) {
    // The float paths (kFloatTrigTiers); past them, the double path below.
    float_trig_tiers(b, e, args[0], [&](const FloatTrigTier& tier) {
      if (tier.one) {
        b.CreateRet(tier.one(e, args[0], fn == MathFn::Cos));
        return;
      }
      Value *sv, *cv;
      tier.both(e, args[0], sv, cv);
      b.CreateRet(fn == MathFn::Cos ? cv : sv);
    });
  }
  Value* res = emit_body(e, fn, args, o);
  if (!exact_trig) {
    b.CreateRet(trig ? nan_if_huge(e, args[0], res) : res);
    return f;
  }
  // Any lane huge: redo those lanes with the scalar exact reduction. The branch is marked
  // unlikely: the call there clobbers every vector register, and with equal weights the register
  // allocator spilled around it on the common path too (sin alone 7-11% slower in cache).
  llvm::Function* huge = get_trig_huge(mod, like);
  Value* mask = trig_huge_mask(e, args[0]);
  Value* any = t->isVectorTy() ? b.CreateOrReduce(mask) : mask;
  auto* entry = b.GetInsertBlock();
  auto* slow = llvm::BasicBlock::Create(cx, "huge", f);
  auto* done = llvm::BasicBlock::Create(cx, "done", f);
  b.CreateCondBr(any, slow, done, llvm::MDBuilder(cx).createUnlikelyBranchWeights());
  b.SetInsertPoint(slow);
  Value* cos_flag = b.getInt1(fn == MathFn::Cos);
  auto exact_lane = [&](Value* xs) {
    Value* xd = t->getScalarType()->isDoubleTy() ? xs : b.CreateFPExt(xs, b.getDoubleTy());
    Value* r = b.CreateCall(huge, {xd, cos_flag});
    return t->getScalarType()->isDoubleTy() ? r : b.CreateFPTrunc(r, t->getScalarType());
  };
  Value* slow_res;
  llvm::BasicBlock* slow_end;
  if (!t->isVectorTy()) {
    slow_res = exact_lane(args[0]);
    slow_end = slow;
    b.CreateBr(done);
  } else {
    // for (i = 0; i < VF; ++i) if (mask[i]) res[i] = huge(x[i])
    unsigned vf = llvm::cast<llvm::FixedVectorType>(t)->getNumElements();
    auto* loop = llvm::BasicBlock::Create(cx, "lane", f);
    auto* call = llvm::BasicBlock::Create(cx, "lane.huge", f);
    auto* next = llvm::BasicBlock::Create(cx, "lane.next", f);
    b.CreateBr(loop);
    b.SetInsertPoint(loop);
    auto* i = b.CreatePHI(b.getInt32Ty(), 2);
    auto* acc = b.CreatePHI(t, 2);
    i->addIncoming(b.getInt32(0), slow);
    acc->addIncoming(res, slow);
    b.CreateCondBr(b.CreateExtractElement(mask, i), call, next);
    b.SetInsertPoint(call);
    Value* upd = b.CreateInsertElement(acc, exact_lane(b.CreateExtractElement(args[0], i)), i);
    b.CreateBr(next);
    b.SetInsertPoint(next);
    auto* acc2 = b.CreatePHI(t, 2);
    acc2->addIncoming(acc, loop);
    acc2->addIncoming(upd, call);
    Value* i2 = b.CreateAdd(i, b.getInt32(1));
    i->addIncoming(i2, next);
    acc->addIncoming(acc2, next);
    llvm::BranchInst* back = b.CreateCondBr(b.CreateICmpULT(i2, b.getInt32(vf)), loop, done);
    // A rare path: left rolled, which keeps the code that every kernel compiles small.
    set_loop_hints(back, {{"llvm.loop.unroll.disable", nullptr}});
    slow_res = acc2;
    slow_end = next;
  }
  b.SetInsertPoint(done);
  auto* phi = b.CreatePHI(t, 2);
  phi->addIncoming(res, entry);
  phi->addIncoming(slow_res, slow_end);
  b.CreateRet(phi);
  return f;
}

// The function computing fn over value type t (a scalar or a vector of it), defined in the
// module on first use; the scalar one is kept out of line so the vectorizer sees the call.
llvm::Function* math_fn(llvm::Module& mod, llvm::Function* caller, MathFn fn, llvm::Type* t, MathOptions o) {
  llvm::Type* st = t->getScalarType();
  o.pair = o.pair && st->isDoubleTy() && (fn == MathFn::Sin || fn == MathFn::Cos);
  std::string name = std::string("arrayc_") + math_fn_name(fn) + (st->isDoubleTy() ? "_f64" : "_f32") +
                     (o.fast ? "_fast" : "") + (o.pair ? "_pair" : "");
  if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(t)) name += "_v" + std::to_string(vt->getNumElements());
  if (llvm::Function* f = mod.getFunction(name)) return f;
  llvm::Function* f = define_fn(mod, caller, name, fn, t, o);
  // Vector variants are referenced only once the vectorizer runs. Scalar ones are used too, so
  // that no interprocedural pass rewrites their signature (constant propagation into `pow(x,
  // 2.0)` used to drop the exponent, and the call no longer matched its vector variants).
  llvm::appendToCompilerUsed(mod, {f});
  mark_inlining(f, t);
  return f;
}

// The vector widths of every variant: 4/8/16 lanes of f32, 2/4/8 of f64.
std::vector<unsigned> variant_widths(llvm::Type* scalar) {
  return scalar->isDoubleTy() ? std::vector<unsigned>{2, 4, 8} : std::vector<unsigned>{4, 8, 16};
}

// The "vector-function-abi-variant" attribute value naming `scalar`'s vector variants.
std::string variant_list(const std::string& scalar, const std::string& params, const std::vector<unsigned>& widths) {
  std::string variants;
  for (unsigned vf : widths) {
    if (!variants.empty()) variants += ",";
    variants += "_ZGV_LLVM_N" + std::to_string(vf) + params + "_" + scalar + "(" + scalar + "_v" + std::to_string(vf) + ")";
  }
  return variants;
}

// Packs float s and c (scalars or vectors) into one i64 per lane: c in the high half.
Value* pack2(llvm::IRBuilder<>& b, Value* s, Value* c) {
  llvm::Type* i32 = s->getType()->isVectorTy()
                        ? static_cast<llvm::Type*>(llvm::VectorType::getInteger(llvm::cast<llvm::VectorType>(s->getType())))
                        : b.getInt32Ty();
  llvm::Type* i64 = s->getType()->isVectorTy()
                        ? static_cast<llvm::Type*>(llvm::VectorType::get(b.getInt64Ty(), llvm::cast<llvm::VectorType>(s->getType())))
                        : b.getInt64Ty();
  Value* lo = b.CreateZExt(b.CreateBitCast(s, i32), i64);
  Value* hi = b.CreateShl(b.CreateZExt(b.CreateBitCast(c, i32), i64), 32);
  return b.CreateOr(lo, hi);
}

// i64 arrayc_sincos_f32(float x) (and its variants over <N x float> -> <N x i64>): sin(x) in the
// low half, cos(x) in the high half, equal bit for bit to arrayc_sin_f32 / arrayc_cos_f32 (their
// _fast versions in fast mode) except in the tiers where those take trig_one (below 2^10).
llvm::Function* sincos_fn(llvm::Module& mod, llvm::Function* caller, llvm::Type* t, bool fast) {
  std::string name = fast ? "arrayc_sincos_f32_fast" : "arrayc_sincos_f32";
  if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(t)) name += "_v" + std::to_string(vt->getNumElements());
  if (llvm::Function* f = mod.getFunction(name)) return f;
  llvm::LLVMContext& cx = mod.getContext();
  llvm::Type* ret = t->isVectorTy() ? static_cast<llvm::Type*>(llvm::VectorType::get(llvm::Type::getInt64Ty(cx), llvm::cast<llvm::VectorType>(t)))
                                    : llvm::Type::getInt64Ty(cx);
  auto* f = llvm::Function::Create(llvm::FunctionType::get(ret, {t}, false), llvm::Function::InternalLinkage, name, mod);
  copy_target_attrs(caller, f);
  f->setDoesNotAccessMemory();
  f->setDoesNotThrow();
  f->addFnAttr(llvm::Attribute::WillReturn);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(cx, "entry", f));
  Ctx e(b, t);
  Value* x = f->getArg(0);
  auto lanes = [&](Value* mask, bool all) {
    return !t->isVectorTy() ? mask : all ? b.CreateAndReduce(mask) : b.CreateOrReduce(mask);
  };
  // When cond holds, return both results computed by `both` on a path of its own.
  auto path_if = [&](Value* cond, const char* name, const std::function<void(Value*&, Value*&)>& both) {
    auto* taken = llvm::BasicBlock::Create(cx, name, f);
    auto* rest = llvm::BasicBlock::Create(cx, "rest", f);
    b.CreateCondBr(cond, taken, rest);
    b.SetInsertPoint(taken);
    Value *sv, *cv;
    both(sv, cv);
    b.CreateRet(pack2(b, sv, cv));
    b.SetInsertPoint(rest);
  };
  // The shared float paths (kFloatTrigTiers). Past them, in default mode, the shared double
  // path when no lane is huge; else each function's own (default mode: with its exact
  // reduction; fast mode: the double path, NaN for huge lanes). Those stay calls when this
  // function is inlined: inlined, fast mode's double path cost W8 a third more time in its
  // float path (the packed results of the paths were no longer unpacked before their merge).
  float_trig_tiers(b, e, x, [&](const FloatTrigTier& tier) {
    Value *sv, *cv;
    tier.both(e, x, sv, cv);
    b.CreateRet(pack2(b, sv, cv));
  });
  if (!fast)
    path_if(b.CreateNot(lanes(trig_huge_mask(e, x), false)), "double",
            [&](Value*& sv, Value*& cv) { trig_fast_both(e, x, sv, cv); });
  llvm::CallInst* sl = b.CreateCall(math_fn(mod, caller, MathFn::Sin, t, {.fast = fast}), {x});
  llvm::CallInst* cl = b.CreateCall(math_fn(mod, caller, MathFn::Cos, t, {.fast = fast}), {x});
  sl->setIsNoInline();
  cl->setIsNoInline();
  b.CreateRet(pack2(b, sl, cl));
  llvm::appendToCompilerUsed(mod, {f});  // as in math_fn
  mark_inlining(f, t);
  return f;
}

}  // namespace

const char* math_fn_name(MathFn fn) {
  switch (fn) {
    case MathFn::Exp: return "exp";
    case MathFn::Log: return "log";
    case MathFn::Sin: return "sin";
    case MathFn::Cos: return "cos";
    case MathFn::Tanh: return "tanh";
    case MathFn::Pow: return "pow";
    case MathFn::Sqrt: return "sqrt";
  }
  return "";
}

llvm::Value* emit_math_call(llvm::IRBuilder<>& b, MathFn fn, llvm::ArrayRef<llvm::Value*> args,
                            const MathOptions& opts) {
  llvm::Type* t = args[0]->getType();
  if (fn == MathFn::Sqrt) return b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, args[0]);
  llvm::Function* caller = b.GetInsertBlock()->getParent();
  llvm::Module& mod = *caller->getParent();
  for (unsigned vf : variant_widths(t)) math_fn(mod, caller, fn, llvm::FixedVectorType::get(t, vf), opts);
  llvm::Function* scalar = math_fn(mod, caller, fn, t, opts);
  llvm::CallInst* call = b.CreateCall(scalar, args);
  std::string params(fn == MathFn::Pow ? 2 : 1, 'v');
  call->addFnAttr(llvm::Attribute::get(b.getContext(), "vector-function-abi-variant",
                                       variant_list(scalar->getName().str(), params, variant_widths(t))));
  return call;
}

std::pair<llvm::Value*, llvm::Value*> emit_sincos_f32(llvm::IRBuilder<>& b, llvm::Value* x,
                                                      const MathOptions& opts) {
  llvm::Type* t = x->getType();
  llvm::Function* caller = b.GetInsertBlock()->getParent();
  llvm::Module& mod = *caller->getParent();
  // Only the width its loops are given (kSincosWidth): every variant costs compile time.
  sincos_fn(mod, caller, llvm::FixedVectorType::get(t, kSincosWidth), opts.fast);
  llvm::Function* scalar = sincos_fn(mod, caller, t, opts.fast);
  llvm::CallInst* packed = b.CreateCall(scalar, {x});
  packed->addFnAttr(llvm::Attribute::get(b.getContext(), "vector-function-abi-variant",
                                         variant_list(scalar->getName().str(), "v", {kSincosWidth})));
  Value* s = b.CreateBitCast(b.CreateTrunc(packed, b.getInt32Ty()), t);
  Value* c = b.CreateBitCast(b.CreateTrunc(b.CreateLShr(packed, 32), b.getInt32Ty()), t);
  return {s, c};
}

}  // namespace arrayc::detail
