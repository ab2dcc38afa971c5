#include "ir/interpreter_math.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace arrayc::detail {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// numpy's npy_divmod (npy_math_internal.h): floor division and Python's remainder of floats,
// from fmod, in the operands' type.
template <typename T>
T floor_divmod(T a, T b, T& mod) {
  mod = std::fmod(a, b);
  if (b == 0) return a / b;  // numpy: a / 0 is +-inf or NaN, and the remainder fmod's NaN
  T div = (a - mod) / b;
  if (mod != 0) {
    if ((b < 0) != (mod < 0)) {
      mod += b;
      div -= T(1);
    }
  } else {
    mod = std::copysign(T(0), b);
  }
  T floordiv;
  if (div != 0) {
    floordiv = std::floor(div);
    if (div - floordiv > T(0.5)) floordiv += T(1);
  } else {
    floordiv = std::copysign(T(0), a / b);
  }
  return floordiv;
}

template <typename T>
bool eval(Op op, T a, T b, double& r) {
  T m;
  switch (op) {
    case Op::Floor: r = std::floor(a); return true;
    case Op::Ceil: r = std::ceil(a); return true;
    case Op::Round: r = std::nearbyint(a); return true;
    case Op::Trunc: r = std::trunc(a); return true;
    case Op::Sign: r = a > 0 ? 1 : a < 0 ? -1 : a == 0 ? 0 : a; return true;
    case Op::IsNan: r = std::isnan(a); return true;
    case Op::IsInf: r = std::isinf(a); return true;
    case Op::IsFinite: r = std::isfinite(a); return true;
    case Op::Xor: r = (a != 0) != (b != 0); return true;
    case Op::Log1p: r = std::log1p(a); return true;
    case Op::Expm1: r = std::expm1(a); return true;
    case Op::Log2: r = std::log2(a); return true;
    case Op::Log10: r = std::log10(a); return true;
    case Op::Exp2: r = std::exp2(a); return true;
    case Op::Tan: r = std::tan(a); return true;
    case Op::Arcsin: r = std::asin(a); return true;
    case Op::Arccos: r = std::acos(a); return true;
    case Op::Arctan: r = std::atan(a); return true;
    case Op::Sinh: r = std::sinh(a); return true;
    case Op::Cosh: r = std::cosh(a); return true;
    case Op::Arcsinh: r = std::asinh(a); return true;
    case Op::Erf: r = std::erf(a); return true;
    case Op::Sigmoid: {  // in the next wider type, then rounded once
      using W = std::conditional_t<std::is_same_v<T, float>, double, long double>;
      W e = std::exp(-std::fabs(static_cast<W>(a)));
      r = static_cast<T>((a >= 0 ? W(1) : e) / (W(1) + e));
      if (std::isnan(a)) r = a;
      return true;
    }
    case Op::Arctan2: r = std::atan2(a, b); return true;
    case Op::Hypot: r = std::hypot(a, b); return true;
    case Op::Fmod: r = std::fmod(a, b); return true;
    case Op::FloorDiv: r = floor_divmod(a, b, m); return true;
    case Op::Mod: floor_divmod(a, b, m); r = m; return true;
    default: return false;
  }
}

}  // namespace

bool numpy_math_gives_bool(Op op) {
  return op == Op::IsNan || op == Op::IsInf || op == Op::IsFinite || op == Op::Xor;
}

bool numpy_math_float(Op op, DType t, double a, double b, double& r) {
  // float16 and bfloat16 compute in float32 (their result is rounded to 16 bits by the caller).
  if (t != DType::Float64) return eval<float>(op, static_cast<float>(a), static_cast<float>(b), r);
  return eval<double>(op, a, b, r);
}

double numpy_math_float_spread(Op op, DType t, double a, double ea, double b, double eb, double r) {
  if (ea == 0 && eb == 0) return 0;
  // tan's poles: an operand interval that reaches one gives any value, which the three samples
  // below miss (tan of a float64 std near 5e18, uncertain by far more than pi, was bounded by
  // the samples' spread: the tester's GPU run failed it).
  if (op == Op::Tan) {
    constexpr double kPi = 3.14159265358979323846;
    if (!(ea < 1.5) || std::floor((a - ea) / kPi - 0.5) != std::floor((a + ea) / kPi - 0.5)) return kInf;
  }
  // Remainders and floor division are periodic in a: three samples can land on one branch by
  // chance (fmod(a +- 3072, 3) of a std near 5e18 with an error of 3072), so any change of the
  // quotient within the errors, or an error as large as a period, is undecidable.
  if ((op == Op::Fmod || op == Op::FloorDiv || op == Op::Mod) && (ea != 0 || eb != 0)) {
    auto quotient = [op](double x, double y) { return op == Op::Fmod ? std::trunc(x / y) : std::floor(x / y); };
    double q = quotient(a, b);
    if (!(ea < std::fabs(b) - eb) || !(std::fabs(q) < 0x1p52)) return kInf;
    for (double da : {-ea, ea})
      for (double db : {-eb, eb})
        if (quotient(a + da, b + db) != q) return kInf;
  }
  double spread = 0;
  for (double da : {-ea, 0.0, ea})
    for (double db : {-eb, 0.0, eb}) {
      double v;
      numpy_math_float(op, t, a + da, b + db, v);
      if (std::isnan(v) != std::isnan(r)) return kInf;
      if (!std::isnan(v)) {
        double d = std::fabs(v - r);
        if (std::isnan(d)) return kInf;  // inf - inf: the sign of an infinity is undecided
        spread = std::max(spread, d);
      }
    }
  // Rounding ops, comparisons and remainders jump: any change is undecidable.
  switch (op) {
    case Op::Floor: case Op::Ceil: case Op::Round: case Op::Trunc: case Op::Sign: case Op::IsNan:
    case Op::IsInf: case Op::IsFinite: case Op::Xor: case Op::Fmod: case Op::FloorDiv: case Op::Mod:
      return spread == 0 ? 0 : kInf;
    default:
      // The operands' extremes bound monotone functions; twice that covers the others' curvature.
      return 2 * spread;
  }
}

bool numpy_math_int(Op op, DType t, int64_t a, int64_t b, uint64_t& r) {
  const int64_t bits = static_cast<int64_t>(8 * dtype_size(t));
  uint64_t ua = static_cast<uint64_t>(a);
  if (is_unsigned(t)) {
    // Unsigned values (uint64 above 2^63 arrives as its bit pattern, a negative int64): no sign,
    // logical right shifts, unsigned division (x // 0 == x % 0 == 0, as numpy).
    uint64_t ub = static_cast<uint64_t>(b);
    switch (op) {
      case Op::Sign: r = ua != 0; return true;
      case Op::Shl: r = ub >= static_cast<uint64_t>(bits) ? 0 : ua << ub; return true;
      case Op::Shr: r = ub >= static_cast<uint64_t>(bits) ? 0 : ua >> ub; return true;
      case Op::Fmod: case Op::FloorDiv: case Op::Mod:
        r = ub == 0 ? 0 : op == Op::FloorDiv ? ua / ub : ua % ub;
        return true;
      default: break;  // the rest do not depend on the sign
    }
  }
  switch (op) {
    case Op::Floor: case Op::Ceil: case Op::Round: case Op::Trunc: r = ua; return true;
    case Op::Sign: r = static_cast<uint64_t>((a > 0) - (a < 0)); return true;
    case Op::IsNan: case Op::IsInf: r = 0; return true;
    case Op::IsFinite: r = 1; return true;
    case Op::Xor: r = (a != 0) != (b != 0); return true;
    case Op::Invert: r = t == DType::Bool ? !a : ~ua; return true;
    case Op::BitAnd: r = ua & static_cast<uint64_t>(b); return true;
    case Op::BitOr: r = ua | static_cast<uint64_t>(b); return true;
    case Op::BitXor: r = ua ^ static_cast<uint64_t>(b); return true;
    case Op::Shl: r = b < 0 || b >= bits ? 0 : ua << b; return true;
    case Op::Shr: r = static_cast<uint64_t>(b < 0 || b >= bits ? (a < 0 ? -1 : 0) : a >> b); return true;
    case Op::Fmod: case Op::FloorDiv: case Op::Mod: {
      // Division by zero gives 0 (numpy's result, with its warning); MIN / -1 wraps to MIN and
      // leaves 0 (int64's C division would trap).
      if (b == 0) {
        r = 0;
        return true;
      }
      int64_t q, m;
      if (b == -1) {
        q = static_cast<int64_t>(0 - ua);
        m = 0;
      } else {
        q = a / b;
        m = a % b;
      }
      if (op != Op::Fmod && m != 0 && ((m < 0) != (b < 0))) {
        q -= 1;
        m += b;
      }
      r = static_cast<uint64_t>(op == Op::FloorDiv ? q : m);
      return true;
    }
    default: return false;
  }
}

}  // namespace arrayc::detail
