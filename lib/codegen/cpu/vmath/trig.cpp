// sin and cos over a Ctx's value type: the Cody-Waite reductions (modulo pi for one function,
// modulo pi/2 for both of one x), the float tiers of f32, and the exact (Payne-Hanek) reduction
// of huge arguments.
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <array>
#include <cmath>
#include <functional>
#include <iterator>
#include <vector>

#include "codegen/cpu/vmath/bodies.h"

namespace arrayc::detail::vmath {

// |x| above which sin/cos leave the Cody-Waite reduction for the exact one.
constexpr double kHugeTrigF32 = 0x1p40;
constexpr double kHugeTrigF64 = 0x1p30;

namespace {

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

}  // namespace

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

namespace {

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

constexpr FloatTrigTier kFloatTrigTiers[] = {{kModerateF32, "tiny", trig_tiny_f32_both, trig_one},
                                             {kTinyTrigF32, "tiny", trig_tiny_f32_both, trig_one},
                                             {kSmallTrigF32, "small", trig_small_f32_both, nullptr}};

}  // namespace

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

}  // namespace arrayc::detail::vmath
