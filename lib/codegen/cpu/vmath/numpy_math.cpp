// The numpy math functions of issue 28 over a Ctx's value type: log1p, expm1, log2, log10, exp2,
// tan, arcsin, arccos, arctan, arctan2, sinh, cosh, arcsinh, erf, sigmoid, hypot and fmod.
// Every body but fmod's computes in double: a float32 argument is widened, the double algorithm
// runs (its error is far below a float's half ULP) and the result is rounded once, so the float32
// functions are within about 0.5 ULP; the float64 bounds are those measured in
// docs/math_accuracy.md. They are built on exp_log.cpp and trig.cpp. fmod is exact in its own type.
#include <llvm/IR/IRBuilder.h>

#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "codegen/cpu/vmath/bodies.h"
#include "codegen/cpu/vmath/vmath.h"

namespace arrayc::detail::vmath {
namespace {

constexpr double kLn2 = 0x1.62e42fefa39efp-1;
constexpr double kLn2Lo = 0x1.abc9e3b39803fp-56;  // ln2 - kLn2
constexpr double kLn2Hi33 = 0x1.62e42fee00000p-1;   // 33 bits: n * it is exact for |n| < 2^20
constexpr double kLn2Lo33 = 0x1.a39ef35793c76p-33;
constexpr double kLog2e = 0x1.71547652b82fep+0;
constexpr double kPio2Hi = 0x1.921fb54442d18p+0, kPio2Lo = 0x1.1a62633145c07p-54;
constexpr double kPiHi = 0x1.921fb54442d18p+1, kPiLo = 0x1.1a62633145c07p-53;

// exp(x) - 1 for any double x: x = n ln2 + r (|r| <= ln2/2), exp(r) - 1 = r + r^2 Q(r) (Taylor,
// degree 14: truncation below 0.15 ULP), then 2^n p + (2^n - 1) in one FMA. Above 709 exp's
// value (the -1 is lost there); below -40 the clamp gives -1; +-0 stays.
Value* expm1_any(const Ctx& d, Value* x) {
  Value* a = d.clamp(x, -40, 709);
  Value* nd;
  Value* n = d.round_int(a, kLog2e, nd);
  Value* r = d.fma(d.neg(nd), d.c(kLn2Hi33), a);
  r = d.fma(d.neg(nd), d.c(kLn2Lo33), r);
  Value* p = d.fma(d.mul(r, r), d.horner(r, inv_factorials(2, 14, 1, false)), r);
  Value* t = d.pow2i(n);
  Value* res = d.fma(t, p, d.sub(t, d.c(1)));
  res = d.sel(d.gt(x, d.c(709)), exp_table(d, x, false), res);
  return d.sel(d.eq(x, d.c(0)), x, res);
}

// log1p(x) = log(u) + (x - (u - 1)) / u with u = 1 + x rounded: the second term is the rounding
// error of u, divided by u (Goldberg's correction).
Value* log1p_any(const Ctx& d, Value* x) {
  Value* u = d.add(d.c(1), x);
  Value* corr = d.div(d.sub(x, d.sub(u, d.c(1))), u);
  Value* res = d.add(log_core(d, u, /*normal_only=*/true), corr);
  res = d.sel(d.b.CreateFCmpOGE(x, d.c(-1)), res, d.nan());  // below -1, or NaN
  res = d.sel(d.eq(x, d.c(-1)), d.neg(d.inf()), res);
  res = d.sel(d.eq(x, d.inf()), d.inf(), res);
  return d.sel(d.eq(x, d.c(0)), x, res);
}

// log2 and log10 from log_parts: log_b(x) = k log_b(2) + log(z) / ln(b). For log2 the k term is
// k itself (exact: log2 of a power of two is exact); for log10, k log10(2) in two parts, the
// first on a grid that keeps k times it exact.
Value* log_base(const Ctx& d, Value* x, bool base10, bool normal_only) {
  Value *kd, *hi, *lo;
  log_parts(d, x, normal_only, kd, hi, lo);
  // 1/ln(b) as hi + lo.
  double inv_hi = base10 ? 0x1.bcb7b1526e50ep-2 : 0x1.71547652b82fep+0;
  double inv_lo = base10 ? 0x1.95355baaafad3p-57 : 0x1.777d0ffda0d24p-56;
  Value* m = d.mul(hi, d.c(inv_hi));
  Value* m_lo = d.fma(hi, d.c(inv_hi), d.neg(m));
  m_lo = d.add(m_lo, d.fma(lo, d.c(inv_hi), d.mul(hi, d.c(inv_lo))));
  Value* kpart = kd;
  Value* k_lo = d.c(0);
  if (base10) {
    constexpr double kLog10_2Hi = 0x1.34413509fp-2;  // 37 bits
    constexpr double kLog10_2Lo = 0x1.e7fbcc47c4acdp-40;
    kpart = d.mul(kd, d.c(kLog10_2Hi));  // exact
    k_lo = d.mul(kd, d.c(kLog10_2Lo));
  }
  Value* s = d.add(kpart, m);
  Value* err = d.add(d.sub(kpart, s), m);  // exact when |kpart| >= |m| or kpart = 0
  err = d.sel(d.b.CreateFCmpOGE(d.fabs(kpart), d.fabs(m)), err, d.add(d.sub(m, s), kpart));
  Value* res = d.add(s, d.add(err, d.add(m_lo, k_lo)));
  res = d.sel(d.b.CreateFCmpOGE(x, d.c(0)), res, d.nan());
  res = d.sel(d.eq(x, d.c(0)), d.neg(d.inf()), res);
  return d.sel(d.eq(x, d.inf()), d.inf(), res);
}

// 2^x = exp(x ln2) with x ln2 as a double-double (exp_core takes the low part).
Value* exp2_any(const Ctx& d, Value* x) {
  Value* hi = d.mul(x, d.c(kLn2));
  Value* lo = d.add(d.fma(x, d.c(kLn2), d.neg(hi)), d.mul(x, d.c(kLn2Lo)));
  lo = d.sel(d.lt(d.fabs(hi), d.c(4096)), lo, d.c(0));  // beyond: over/underflow anyway
  return exp_core(d, hi, lo);
}

// arctan(t) for t in [0, 1] (or NaN): t near c_j = j/15 (j = rint(15 t)), arctan(t) =
// arctan(c_j) + arctan(u), u = (t - c_j) / (1 + t c_j) (t - c_j exact: Sterbenz), |u| < 0.034,
// arctan(u) by its Taylor series to u^15; arctan(c_j) as hi + lo from two tables.
struct AtanTables {
  std::array<double, 16> c, hi, lo;
};
const AtanTables& atan_tables() {
  static const AtanTables t = [] {
    AtanTables r;
    for (int j = 0; j < 16; ++j) {
      r.c[j] = j / 15.0;
      long double a = std::atan(static_cast<long double>(r.c[j]));
      r.hi[j] = static_cast<double>(a);
      r.lo[j] = static_cast<double>(a - r.hi[j]);
    }
    return r;
  }();
  return t;
}

Value* atan_unit(const Ctx& d, Value* t) {
  const AtanTables& tab = atan_tables();
  Value* nd;
  Value* j = d.round_int(t, 15, nd);
  Value* c = lookup16_f64(d, "arrayc_atan_c", tab.c, j);
  Value* u = d.div(d.sub(t, c), d.fma(t, c, d.c(1)));
  std::vector<double> coef;  // arctan(u) = u + u^3 (-1/3 + u^2/5 - ...)
  for (int k = 3; k <= 15; k += 2) coef.push_back((k % 4 == 1 ? 1.0 : -1.0) / k);
  Value* u2 = d.mul(u, u);
  Value* poly = d.fma(d.mul(u2, u), d.horner(u2, coef), u);
  Value* hi = lookup16_f64(d, "arrayc_atan_hi", tab.hi, j);
  Value* lo = lookup16_f64(d, "arrayc_atan_lo", tab.lo, j);
  return d.add(hi, d.add(lo, poly));
}

// pi/2 - a for a in [0, pi/4]: the constant in two parts.
Value* pio2_minus(const Ctx& d, Value* a) { return d.add(d.sub(d.c(kPio2Hi), a), d.c(kPio2Lo)); }

Value* atan_any(const Ctx& d, Value* x) {
  Value* a = d.fabs(x);
  Value* inv = d.gt(a, d.c(1));
  Value* r = atan_unit(d, d.sel(inv, d.div(d.c(1), a), a));
  return d.copysign(d.sel(inv, pio2_minus(d, r), r), x);
}

// atan2(y, x): arctan of the smaller of |y|, |x| over the larger, then the octant (C99's
// special cases: both zero or both infinite by the quotient's 0 or 1, signed zeros by the sign
// bits).
Value* atan2_any(const Ctx& d, Value* y, Value* x) {
  Value* ay = d.fabs(y);
  Value* ax = d.fabs(x);
  Value* swap = d.gt(ay, ax);
  Value* num = d.sel(swap, ax, ay);
  Value* den = d.sel(swap, ay, ax);
  Value* t = d.div(num, den);
  t = d.sel(d.eq(den, d.c(0)), d.c(0), t);
  t = d.sel(d.b.CreateAnd(d.eq(ax, d.inf()), d.eq(ay, d.inf())), d.c(1), t);
  Value* a = atan_unit(d, t);
  a = d.sel(swap, pio2_minus(d, a), a);
  Value* x_neg = d.b.CreateICmpSLT(d.bits(x), d.ci(0));
  a = d.sel(x_neg, d.add(d.sub(d.c(kPiHi), a), d.c(kPiLo)), a);
  Value* res = d.copysign(a, y);
  return d.sel(d.b.CreateOr(d.isnan(x), d.isnan(y)), d.add(x, y), res);
}

// sqrt((1 - x)(1 + x)): cos(arcsin x), accurate near +-1 (the factor there is exact).
Value* sqrt_one_minus_sq(const Ctx& d, Value* x) {
  Value* p = d.mul(d.sub(d.c(1), x), d.add(d.c(1), x));
  return d.b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, p);
}

// sinh and cosh: below T = 20 from em = expm1(|x|) (sinh = (em + em/(em + 1))/2, cosh =
// (em + 1)/2 + 1/(2(em + 1))); above, both are exp(|x|)/2 = (exp(|x|/2)/2) exp(|x|/2), which
// stays finite as far as they do.
Value* sinh_cosh(const Ctx& d, Value* x, bool is_cosh) {
  constexpr double kT = 20;
  Value* a = d.fabs(x);
  Value* em = expm1_any(d, d.at_most(a, kT));
  Value* e1 = d.add(em, d.c(1));
  Value* small = is_cosh ? d.add(d.mul(e1, d.c(0.5)), d.div(d.c(0.5), e1))
                         : d.mul(d.c(0.5), d.add(em, d.div(em, e1)));
  Value* h = exp_table(d, d.mul(a, d.c(0.5)), false);
  Value* big = d.mul(d.mul(h, d.c(0.5)), h);
  Value* res = d.sel(d.lt(a, d.c(kT)), small, big);
  return is_cosh ? res : d.copysign(res, x);
}

// arcsinh(x) = sign(x) log1p(a + a^2 / (1 + sqrt(1 + a^2))) with a = |x|; above 2^28,
// log(a) + ln2.
Value* asinh_any(const Ctx& d, Value* x) {
  Value* a = d.fabs(x);
  Value* s = d.mul(a, a);
  Value* root = d.b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, d.add(d.c(1), s));
  Value* small = log1p_any(d, d.add(a, d.div(s, d.add(d.c(1), root))));
  Value* big = d.add(log_fn(d, a), d.c(kLn2));
  return d.copysign(d.sel(d.gt(a, d.c(0x1p28)), big, small), x);
}

// erf: |x| near the center c_j = j w (w = 0.39, j = rint(|x|/w) < 16), the Taylor polynomial of
// erf at c_j in h = |x| - c_j (exact, Sterbenz), |h| <= w/2, with erf's derivatives
// erf^(k+1)(c) = 2/sqrt(pi) (-1)^k H_k(c) exp(-c^2) (Hermite polynomials) computed in long
// double when first used; one table of 16 coefficients per degree. Degree 17 (float32: 9)
// leaves a truncation error below 2^-58 (2^-28) of the result. Above 15.5 w, erf rounds to 1.
constexpr double kErfStep = 0.39;
constexpr int kErfDegree = 17;
struct ErfTables {
  std::array<std::array<double, 16>, kErfDegree + 1> coef;  // coef[k][j]: x^k's at center j
};
const ErfTables& erf_tables() {
  static const ErfTables t = [] {
    ErfTables r;
    const long double two_over_sqrt_pi = 1.1283791670955125738961589031215452L;
    for (int j = 0; j < 16; ++j) {
      long double c = j * kErfStep;  // the center as the kernel computes it, rounded to double
      long double g = two_over_sqrt_pi * std::exp(-c * c);
      std::array<long double, kErfDegree> H;  // H_n(c) by H_{n+1} = 2c H_n - 2n H_{n-1}
      H[0] = 1;
      H[1] = 2 * c;
      for (int n = 1; n + 1 < kErfDegree; ++n) H[n + 1] = 2 * c * H[n] - 2 * n * H[n - 1];
      r.coef[0][j] = static_cast<double>(std::erf(c));
      long double fact = 1;  // k!
      for (int k = 1; k <= kErfDegree; ++k) {
        fact *= k;
        r.coef[k][j] = static_cast<double>(g * ((k - 1) % 2 ? -1 : 1) * H[k - 1] / fact);
      }
    }
    return r;
  }();
  return t;
}

Value* erf_any(const Ctx& d, Value* x, int degree) {
  const ErfTables& t = erf_tables();
  Value* a = d.fabs(x);
  Value* nd;
  Value* j = d.round_int(d.at_most(a, 15 * kErfStep), 1 / kErfStep, nd);
  Value* h = d.sub(a, d.mul(nd, d.c(kErfStep)));
  auto coef = [&](int k) {
    std::string name = "arrayc_erf_c" + std::to_string(k);
    return lookup16_f64(d, name.c_str(), t.coef[k], j);
  };
  Value* acc = coef(degree);
  for (int k = degree - 1; k >= 0; --k) acc = d.fma(acc, h, coef(k));
  Value* res = d.sel(d.lt(a, d.c(15.5 * kErfStep)), acc, d.c(1));
  res = d.copysign(res, x);
  return d.sel(d.isnan(x), x, res);
}

// 1 / (1 + exp(-x)) as (x >= 0 ? 1 : E) / (1 + E) with E = exp(-|x|) <= 1: no overflow, and the
// small results of negative x keep their relative accuracy.
Value* sigmoid_any(const Ctx& d, Value* x) {
  Value* e = exp_table(d, d.neg(d.fabs(x)), false);
  return d.div(d.sel(d.b.CreateFCmpOGE(x, d.c(0)), d.c(1), e), d.add(d.c(1), e));
}

// hypot(x, y) = 2^k sqrt(fma(x', x', y'^2)) with x', y' scaled by 2^-k, k the exponent of the
// larger (clamped so the scale stays normal); an infinite operand gives inf, even beside NaN.
Value* hypot_any(const Ctx& d, Value* x, Value* y, bool from_float) {
  Value* ax = d.fabs(x);
  Value* ay = d.fabs(y);
  Value* res;
  if (from_float) {  // float operands: the squares are exact in double, nothing can overflow
    res = d.b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, d.fma(ax, ax, d.mul(ay, ay)));
  } else {
    Value* big = d.b.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, ax, ay);
    Value* k = d.b.CreateSub(d.b.CreateLShr(d.bits(big), d.ci(52)), d.ci(1023));
    k = d.b.CreateSelect(d.b.CreateICmpSGT(k, d.ci(1020)), d.ci(1020), k);
    k = d.b.CreateSelect(d.b.CreateICmpSLT(k, d.ci(-1020)), d.ci(-1020), k);
    Value* down = d.pow2i(d.b.CreateNeg(k));
    Value* xs = d.mul(ax, down);
    Value* ys = d.mul(ay, down);
    res = d.mul(d.b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, d.fma(xs, xs, d.mul(ys, ys))), d.pow2i(k));
  }
  return d.sel(d.b.CreateOr(d.eq(ax, d.inf()), d.eq(ay, d.inf())), d.inf(), res);
}

}  // namespace

// fmod(x, y) = x - trunc(x/y) y, exactly, in e's own type. q = trunc(fl(x/y)) is the true
// quotient's or one more in magnitude (x/y can round up to an integer, never down past one), and
// while |q| < 2^mantissa bits r = fma(-q, y, x) is exact (|r| < 2|y| on y's grid, or tiny when
// q was one more); a remainder of the wrong sign is q's extra one, given back by adding
// y with x's sign. Lanes with a larger quotient are fmod_slow_mask's, done by the C library.
static Value* fmod_fast(const Ctx& e, Value* x, Value* y) {
  Value* q = e.b.CreateUnaryIntrinsic(llvm::Intrinsic::trunc, e.div(x, y));
  Value* r = e.fma(e.neg(q), y, x);
  Value* wrong = e.b.CreateAnd(e.b.CreateFCmpUNE(r, e.c(0)),
                               e.b.CreateICmpNE(e.b.CreateICmpSLT(e.bits(r), e.ci(0)),
                                                e.b.CreateICmpSLT(e.bits(x), e.ci(0))));
  r = e.sel(wrong, e.add(r, e.copysign(y, x)), r);
  r = e.copysign(r, x);  // a zero remainder has x's sign; others have it already
  // y infinite: x itself (finite x); y zero, x infinite, NaN: NaN.
  Value* y_inf = e.eq(e.fabs(y), e.inf());
  r = e.sel(e.b.CreateAnd(y_inf, e.lt(e.fabs(x), e.inf())), x, r);
  Value* bad = e.b.CreateOr(e.b.CreateOr(e.eq(y, e.c(0)), e.eq(e.fabs(x), e.inf())),
                            e.b.CreateOr(e.isnan(x), e.isnan(y)));
  return e.sel(bad, e.nan(), r);
}

Value* fmod_slow_mask(const Ctx& e, Value* x, Value* y) {
  Value* finite = e.b.CreateAnd(e.lt(e.fabs(x), e.inf()), e.lt(e.fabs(y), e.inf()));
  Value* big_q = e.b.CreateFCmpUGE(e.fabs(e.div(x, y)), e.c(std::ldexp(1.0, e.mbits)));
  return e.b.CreateAnd(e.b.CreateAnd(finite, e.b.CreateFCmpUNE(y, e.c(0))), big_q);
}

Value* numpy_body(const Ctx& e, int fn_int, llvm::ArrayRef<Value*> a) {
  MathFn fn = static_cast<MathFn>(fn_int);
  if (fn == MathFn::Fmod) return fmod_fast(e, a[0], a[1]);
  Ctx d = e.as_double();
  auto wide = [&](Value* v) { return e.f64 ? v : e.b.CreateFPExt(v, d.ft); };
  Value* x = wide(a[0]);
  Value* r = nullptr;
  switch (fn) {
    case MathFn::Log1p: r = log1p_any(d, x); break;
    case MathFn::Expm1: r = expm1_any(d, x); break;
    case MathFn::Log2: r = log_base(d, x, false, !e.f64); break;
    case MathFn::Log10: r = log_base(d, x, true, !e.f64); break;
    case MathFn::Exp2: r = exp2_any(d, x); break;
    case MathFn::Tan: {
      Value *s, *c;
      trig_fast_both(d, x, s, c);
      r = d.div(s, c);
      break;
    }
    case MathFn::Asin: r = atan2_any(d, x, sqrt_one_minus_sq(d, x)); break;
    case MathFn::Acos: r = atan2_any(d, sqrt_one_minus_sq(d, x), x); break;
    case MathFn::Atan: r = atan_any(d, x); break;
    case MathFn::Atan2: r = atan2_any(d, x, wide(a[1])); break;
    case MathFn::Sinh: r = sinh_cosh(d, x, false); break;
    case MathFn::Cosh: r = sinh_cosh(d, x, true); break;
    case MathFn::Asinh: r = asinh_any(d, x); break;
    case MathFn::Erf: r = erf_any(d, x, e.f64 ? kErfDegree : 9); break;
    case MathFn::Sigmoid: r = sigmoid_any(d, x); break;
    case MathFn::Hypot: r = hypot_any(d, x, wide(a[1]), !e.f64); break;
    default: return nullptr;
  }
  return e.f64 ? r : e.b.CreateFPTrunc(r, e.ft);
}

}  // namespace arrayc::detail::vmath
