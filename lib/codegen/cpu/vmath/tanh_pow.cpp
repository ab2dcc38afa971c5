// tanh and pow over a Ctx's value type, built on exp_log.cpp.
#include <llvm/IR/IRBuilder.h>

#include <vector>

#include "codegen/cpu/vmath/bodies.h"

namespace arrayc::detail::vmath {
namespace {

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

}  // namespace

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

}  // namespace arrayc::detail::vmath
