// exp and log (and the expm1 that tanh takes) over a Ctx's value type.
#include <llvm/IR/IRBuilder.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <vector>

#include "codegen/cpu/vmath/bodies.h"

namespace arrayc::detail::vmath {
namespace {

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

}  // namespace

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
// for_float (f64 contexts only; f32 pow): enough for a float result. |x| <= 200 and an error of
// 2^-34 relative suffice, so ln2/16 is one double (r off by n 2^-57 <= 2^-44), the polynomial
// has degree 4 (truncation 2^-34.6) and the correction table is dropped (T's 2^-53).
Value* exp_table(const Ctx& e, Value* x, bool fast_path, bool for_float, bool moderate) {
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

namespace {

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

// x = 2^k z (subnormals scaled first unless normal_only), z = c_j (1 + r) with r exact:
// k as a float, r, and -log(1/c_j) = lc_hi + lc_lo from the tables.
void log_table_reduce(const Ctx& e, Value* x, bool normal_only, Value*& kd, Value*& r, Value*& lc_hi,
                      Value*& lc_lo) {
  const LogTables& t = log_tables();
  Value* xs = x;
  Value* kadj = e.ci(0);
  if (!normal_only) scale_subnormal(e, x, xs, kadj);
  Value* tmp = e.b.CreateSub(e.bits(xs), e.ci(e.f64 ? static_cast<int64_t>(kLogOffF64) : kLogOffF32));
  Value* j = e.b.CreateLShr(tmp, e.ci(e.mbits - 4));  // the lookups read its low 4 bits
  Value* k = e.b.CreateAShr(tmp, e.ci(e.mbits));
  Value* z = e.flt(e.b.CreateSub(e.bits(xs), e.b.CreateShl(k, e.ci(e.mbits))));
  kd = e.b.CreateSIToFP(e.b.CreateAdd(k, kadj), e.ft);
  Value* inv;
  if (e.f64) {
    inv = lookup16_f64(e, "arrayc_log_inv_f64", t.inv64, j);
    lc_hi = lookup16_f64(e, "arrayc_log_hi_f64", t.hi64, j);
    lc_lo = lookup16_f64(e, "arrayc_log_lo_f64", t.lo64, j);
  } else {
    inv = lookup16(e, "arrayc_log_inv", t.inv32, j);
    lc_hi = lookup16(e, "arrayc_log_hi", t.hi32, j);
    lc_lo = lookup16(e, "arrayc_log_lo", t.lo32, j);
  }
  r = e.fma(z, inv, e.c(-1));
}

// add + (log1p(r) - r) with log1p(r) - r = r^2 (-1/2 + r/3 - r^2/4 ...) to degree `last` in r,
// in one FMA.
Value* log1p_tail(const Ctx& e, Value* r, int last, Value* add) {
  std::vector<double> coef;
  for (int i = 2; i <= last; ++i) coef.push_back((i % 2 ? 1.0 : -1.0) / i);
  return e.fma(e.mul(r, r), e.horner(r, coef), add);
}

}  // namespace

// normal_only: every x is known to be normal (define_fn's "normal" path), so subnormals need no
// scaling. for_float (f64 contexts only; f32 pow): log1p to degree 8 (truncation below 2^-37
// relative to r) and one sum in double, an absolute error below 2^-50 + 2^-52 |log x|.
Value* log_core(const Ctx& e, Value* x, bool normal_only, bool for_float) {
  Value *kd, *r, *lc_hi, *lc_lo;
  log_table_reduce(e, x, normal_only, kd, r, lc_hi, lc_lo);
  double l2hi = e.f64 ? ln2_hi(e) : kLn2HiF32;
  double l2lo = e.f64 ? ln2_lo(e) : static_cast<double>(static_cast<float>(kLn2 - kLn2HiF32));
  if (for_float) {
    Value* lc = e.add(e.fma(kd, e.c(kLn2), lc_hi), lc_lo);
    return e.add(lc, log1p_tail(e, r, 8, r));
  }
  Value* w = e.fma(kd, e.c(l2hi), lc_hi);  // exact
  Value* hi = e.add(w, r);
  Value* lo = e.add(e.sub(w, hi), r);  // exact: |w| >= |r| (the tables make it so) or w = 0
  Value* small = log1p_tail(e, r, e.f64 ? 12 : 6, e.fma(kd, e.c(l2lo), lc_lo));
  return e.add(hi, e.add(lo, small));
}

// numpy math (issue 28): log_core's reduction with log(z) kept apart from k ln2.
void log_parts(const Ctx& e, Value* x, bool normal_only, Value*& kd, Value*& hi, Value*& lo) {
  Value *r, *lc_hi, *lc_lo;
  log_table_reduce(e, x, normal_only, kd, r, lc_hi, lc_lo);
  hi = e.add(lc_hi, r);
  lo = e.add(e.add(e.sub(lc_hi, hi), r), log1p_tail(e, r, e.f64 ? 12 : 6, lc_lo));
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
  Value* sum_hi = e.add(a, h);
  Value* sum_lo = e.add(e.add(e.sub(a, sum_hi), h), e.fma(kd, e.c(ln2_lo(e)), l));
  // Normalized (|lo| <= ulp(hi) / 2): l carries the series' tail, up to 2^-14 of the result for
  // x near sqrt(2), and pow's y * lo must stay a small correction. Before, exp's clamp of y * hi
  // at overflow left y * lo to pull the result back below the largest double: pow(1.4146, 4198)
  // gave 1.733e308 instead of inf.
  hi = e.add(sum_hi, sum_lo);
  lo = e.sub(sum_lo, e.sub(hi, sum_hi));
}

}  // namespace arrayc::detail::vmath
