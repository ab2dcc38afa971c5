// numpy's elementwise math (include/arrayc/math.h) end to end, on every device: every op with
// every dtype, against the reference interpreter; edge values (NaN, inf, -0.0, subnormals,
// integer extremes); division and shifts where C is undefined; empty, rank 0, broadcast and
// non-contiguous operands; error messages; one kernel for a chain of them; and the accuracy of
// the new transcendentals against long double (the bounds of docs/math_accuracy.md).
#include <cmath>
#include <limits>
#include <regex>

#include "support/data.h"
#include "support/devices.h"
#include "support/errors.h"
#include "support/reference.h"
#include "support/ulp.h"

namespace {

using namespace arrayc;
using namespace arrayc_test;

class NumpyMath : public DeviceTest {};
ARRAYC_DEVICE_SUITE(NumpyMath);

using UnaryFn = Array (*)(const Array&);
using BinaryFn = Array (*)(const Array&, const Array&);

struct Unary {
  const char* name;
  UnaryFn fn;
  double lo, hi;  // where random operands come from
};
const Unary kUnary[] = {
    {"floor", arrayc::floor, -6, 6},    {"ceil", arrayc::ceil, -6, 6},      {"round", arrayc::round, -6, 6},
    {"trunc", arrayc::trunc, -6, 6},    {"isnan", arrayc::isnan, -6, 6},    {"isinf", arrayc::isinf, -6, 6},
    {"isfinite", arrayc::isfinite, -6, 6}, {"log1p", arrayc::log1p, -0.99, 20}, {"expm1", arrayc::expm1, -5, 5},
    {"log2", arrayc::log2, 0.01, 100},  {"log10", arrayc::log10, 0.01, 100}, {"exp2", arrayc::exp2, -20, 20},
    {"tan", arrayc::tan, -10, 10},      {"arcsin", arrayc::arcsin, -1, 1},  {"arccos", arrayc::arccos, -1, 1},
    {"arctan", arrayc::arctan, -20, 20}, {"sinh", arrayc::sinh, -10, 10},   {"cosh", arrayc::cosh, -10, 10},
    {"arcsinh", arrayc::arcsinh, -50, 50}, {"erf", arrayc::erf, -6, 6},     {"sigmoid", arrayc::sigmoid, -30, 30},
};
// Unary ops that accept integers and bool as they are (not through a float).
const Unary kIntUnary[] = {{"sign", arrayc::sign, -6, 6}, {"invert", arrayc::invert, -6, 6}};

struct Binary {
  const char* name;
  BinaryFn fn;
};
const Binary kFloatBinary[] = {{"arctan2", arrayc::arctan2}, {"hypot", arrayc::hypot}};
const Binary kDivision[] = {{"fmod", arrayc::fmod}, {"floor_divide", floor_divide}, {"remainder", remainder}};
const Binary kBits[] = {{"bitwise_and", bitwise_and}, {"bitwise_or", bitwise_or}, {"bitwise_xor", bitwise_xor}};
const Binary kShifts[] = {{"left_shift", left_shift}, {"right_shift", right_shift}};

bool is_predicate(const std::string& name) { return name == "isnan" || name == "isinf" || name == "isfinite"; }

// The dtype numpy 2 gives (bool computes in float32 where numpy takes float16).
DType unary_result(const std::string& name, DType t) {
  if (is_predicate(name)) return DType::Bool;
  bool rounding = name == "floor" || name == "ceil" || name == "round" || name == "trunc";
  if (is_float(t) || (rounding && t != DType::Bool)) return t;
  return t == DType::Bool ? DType::Float32 : DType::Float64;
}

TEST_P(NumpyMath, UnaryOpsEveryDtype) {
  for (const Unary& op : kUnary)
    for (DType t : kAllDTypes) {
      SCOPED_TRACE(std::string(op.name) + "(" + dt(t) + ")");
      Array x = random_array(t, {5, 41}, 3, op.lo, op.hi);
      Array y = op.fn(x);
      EXPECT_EQ(y.dtype(), unary_result(op.name, t));
      EXPECT_MATCHES_REFERENCE(y);
    }
  for (const Unary& op : kIntUnary)
    for (DType t : kAllDTypes) {
      SCOPED_TRACE(std::string(op.name) + "(" + dt(t) + ")");
      Array x = random_array(t, {5, 41}, 4, op.lo, op.hi);
      bool rejected = (t == DType::Bool && std::string(op.name) == "sign") ||
                      (is_float(t) && std::string(op.name) == "invert");
      if (rejected) {
        EXPECT_ARRAYC_ERROR(op.fn(x), std::string(op.name) + ": dtype " + dt(t) + " is not accepted");
        continue;
      }
      Array y = op.fn(x);
      EXPECT_EQ(y.dtype(), t);
      EXPECT_MATCHES_REFERENCE(y);
    }
}

TEST_P(NumpyMath, UnaryOpsEdgeValues) {
  for (DType t : kFloatTypes) {
    std::vector<double> v = float_edge_values(t);
    for (double x : {0.5, -0.5, 1.5, 2.5, -2.5, 0.49999997, 4503599627370497.0, 1.0 - 1e-9, -1.0, 0.99,
                     -0.999999, 710.4, -710.4, 89.4, -89.4, 1e-300, 0x1p-1022, 5.9, -5.9, 6.1, 1e8, 1e15})
      v.push_back(x);
    Array x = make_array(t, {static_cast<int64_t>(v.size())}, v);
    for (const Unary& op : kUnary) {
      SCOPED_TRACE(std::string(op.name) + "(" + dt(t) + ")");
      EXPECT_MATCHES_REFERENCE(op.fn(x), CompareOptions{.signed_zero = true});
    }
    SCOPED_TRACE("sign");
    EXPECT_MATCHES_REFERENCE(sign(x), CompareOptions{.signed_zero = true});
  }
  // numpy's rounding: half to even; sign(-0.0) is +0.0; NaN keeps NaN.
  Array h = array<double>({0.5, 1.5, 2.5, -0.5, -2.5, -0.0});
  EXPECT_EQ(arrayc::round(h).to_vector<double>(), (std::vector<double>{0, 2, 2, -0.0, -2, -0.0}));
  EXPECT_FALSE(std::signbit(sign(h).to_vector<double>()[5]));
  EXPECT_TRUE(std::isnan(sign(array<float>({NAN})).item<float>()));
  for (DType t : kIntTypes) {
    Array x = make_array(t, {static_cast<int64_t>(int_edge_values(t).size())}, int_edge_values(t));
    for (UnaryFn f : {arrayc::floor, arrayc::ceil, arrayc::round, arrayc::trunc, arrayc::sign, arrayc::invert,
                      arrayc::isnan, arrayc::isfinite, arrayc::expm1, arrayc::log2})
      EXPECT_MATCHES_REFERENCE(f(x));
  }
}

TEST_P(NumpyMath, BinaryOpsEveryDtypePair) {
  const Shape shape{3, 37};
  for (DType a : kAllDTypes)
    for (DType b : kAllDTypes) {
      DType t = promote_types(a, b);
      Array x = random_array(a, shape, 5, -9, 9);
      Array y = random_array(b, shape, 6, -9, 9);
      for (const Binary& op : kFloatBinary) {
        SCOPED_TRACE(std::string(op.name) + "(" + dt(a) + ", " + dt(b) + ")");
        Array r = op.fn(x, y);
        EXPECT_EQ(r.dtype(), is_float(t) ? t : t == DType::Bool ? DType::Float32 : DType::Float64);
        EXPECT_MATCHES_REFERENCE(r);
      }
      for (const Binary& op : kDivision) {
        SCOPED_TRACE(std::string(op.name) + "(" + dt(a) + ", " + dt(b) + ")");
        if (t == DType::Bool) {
          EXPECT_ARRAYC_ERROR(op.fn(x, y), std::string(op.name) + ": dtype bool is not accepted (integer or float)");
          continue;
        }
        Array r = op.fn(x, y);  // includes divisors of 0 for the integer dtypes
        EXPECT_EQ(r.dtype(), t);
        EXPECT_MATCHES_REFERENCE(r, CompareOptions{.signed_zero = true});
      }
      for (const Binary& op : kBits) {
        SCOPED_TRACE(std::string(op.name) + "(" + dt(a) + ", " + dt(b) + ")");
        if (is_float(t)) {
          EXPECT_ARRAYC_ERROR(op.fn(x, y), std::string(op.name) + ": dtype " + dt(t) +
                                               " is not accepted (integer or bool)");
          continue;
        }
        EXPECT_EQ(op.fn(x, y).dtype(), t);
        EXPECT_MATCHES_REFERENCE(op.fn(x, y));
      }
      for (const Binary& op : kShifts) {
        SCOPED_TRACE(std::string(op.name) + "(" + dt(a) + ", " + dt(b) + ")");
        if (!is_int(t)) {
          EXPECT_ARRAYC_ERROR(op.fn(x, y), std::string(op.name) + ": dtype " + dt(t) + " is not accepted (integer)");
          continue;
        }
        EXPECT_MATCHES_REFERENCE(op.fn(x, y));  // negative amounts included
      }
      SCOPED_TRACE("logical_xor");
      Array lx = logical_xor(x, y);
      EXPECT_EQ(lx.dtype(), DType::Bool);
      EXPECT_MATCHES_REFERENCE(lx);
    }
}

// Integer division and remainders at every edge: numpy's signs, x // 0 == x % 0 == 0, MIN // -1
// wraps to MIN, MIN % -1 == 0; nothing traps.
TEST_P(NumpyMath, IntegerDivisionIsDefinedEverywhere) {
  for (DType t : kIntTypes) {
    SCOPED_TRACE(dt(t));
    std::vector<double> v = int_edge_values(t);
    int64_t n = static_cast<int64_t>(v.size());
    Array a = make_array(t, {n, 1}, v);
    Array b = make_array(t, {1, n}, v);
    for (const Binary& op : kDivision) EXPECT_MATCHES_REFERENCE(op.fn(a, b));
    for (const Binary& op : kShifts) EXPECT_MATCHES_REFERENCE(op.fn(a, b));
  }
  Array x = array<int64_t>({7, -7, 7, -7, 5, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::min()});
  Array y = array<int64_t>({2, 2, -2, -2, 0, -1, 1});
  EXPECT_EQ(floor_divide(x, y).to_vector<int64_t>(),
            (std::vector<int64_t>{3, -4, -4, 3, 0, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::min()}));
  EXPECT_EQ((x % y).to_vector<int64_t>(), (std::vector<int64_t>{1, 1, -1, -1, 0, 0, 0}));
  EXPECT_EQ(arrayc::fmod(x, y).to_vector<int64_t>(), (std::vector<int64_t>{1, -1, 1, -1, 0, 0, 0}));
  Array i32 = array<int32_t>({std::numeric_limits<int32_t>::min(), 9});
  EXPECT_EQ(floor_divide(i32, -1).to_vector<int32_t>(), (std::vector<int32_t>{std::numeric_limits<int32_t>::min(), -9}));
  EXPECT_EQ((i32 % 0).to_vector<int32_t>(), (std::vector<int32_t>{0, 0}));
  // Shifts outside [0, bits): numpy's 0 (left) and 0 or -1 by the sign (right).
  Array s = array<int32_t>({-8, 8, -8, 8, 1});
  Array k = array<int32_t>({32, 32, -1, 40, 31});
  EXPECT_EQ((s << k).to_vector<int32_t>(), (std::vector<int32_t>{0, 0, 0, 0, std::numeric_limits<int32_t>::min()}));
  EXPECT_EQ((s >> k).to_vector<int32_t>(), (std::vector<int32_t>{-1, 0, -1, 0, 0}));
  EXPECT_EQ((array<int64_t>({1}) << int64_t{63}).item<int64_t>(), std::numeric_limits<int64_t>::min());
  EXPECT_EQ((array<int64_t>({-1}) >> 64).item<int64_t>(), -1);
}

// Floats: numpy's floor_divide and remainder (Python's signs), C's fmod, and their results for
// zero, infinite and NaN operands; quotients past 2^24 / 2^53 (fmod's scalar lanes).
TEST_P(NumpyMath, FloatDivisionEdges) {
  for (DType t : kFloatTypes) {
    SCOPED_TRACE(dt(t));
    std::vector<double> v = float_edge_values(t);
    for (double x : {7.0, -7.0, 2.0, -2.0, 0.1, 1e20, 3e-30, 6.0})
      v.push_back(x);
    int64_t n = static_cast<int64_t>(v.size());
    Array a = make_array(t, {n, 1}, v);
    Array b = make_array(t, {1, n}, v);
    for (const Binary& op : kDivision) {
      SCOPED_TRACE(op.name);
      EXPECT_MATCHES_REFERENCE(op.fn(a, b), CompareOptions{.signed_zero = true});
    }
    for (const Binary& op : kFloatBinary) {
      SCOPED_TRACE(op.name);
      EXPECT_MATCHES_REFERENCE(op.fn(a, b), CompareOptions{.signed_zero = true});
    }
  }
  Array x = array<double>({7, -7, 7, -7, -0.0, 5, INFINITY});
  Array y = array<double>({2, 2, -2, -2, 3, 0, 2});
  EXPECT_EQ((x % y).to_vector<double>()[1], 1.0);
  EXPECT_EQ((x % y).to_vector<double>()[2], -1.0);
  EXPECT_EQ(floor_divide(x, y).to_vector<double>()[1], -4.0);
  EXPECT_EQ(arrayc::fmod(x, y).to_vector<double>()[1], -1.0);
  EXPECT_TRUE(std::isinf(floor_divide(x, y).to_vector<double>()[5]));
  EXPECT_TRUE(std::isnan((x % y).to_vector<double>()[6]));
  // Huge quotients: exact (fmod is exact in IEEE arithmetic).
  Array big = random_array(DType::Float64, {1000}, 9, -1e300, 1e300);
  Array small = random_array(DType::Float64, {1000}, 10, -1e-5, 1e-5);
  EXPECT_MATCHES_REFERENCE(arrayc::fmod(big, small));
  Array bigf = random_array(DType::Float32, {1000}, 11, -1e38, 1e38);
  Array smallf = random_array(DType::Float32, {1000}, 12, -3, 3);
  EXPECT_MATCHES_REFERENCE(arrayc::fmod(bigf, smallf));
}

TEST_P(NumpyMath, ShapesViewsAndScalars) {
  // Empty, rank 0, broadcasting, a transposed (non-contiguous) view.
  for (DType t : {DType::Int32, DType::Float32}) {
    SCOPED_TRACE(dt(t));
    Array e = random_array(t, {0, 3}, 1);
    EXPECT_EQ(floor_divide(e, e).shape(), (Shape{0, 3}));
    EXPECT_EQ(arrayc::log2(e).to_vector<double>().size(), 0u);
    Array s = random_array(t, {}, 2, 1, 9);
    EXPECT_MATCHES_REFERENCE(remainder(s, s + 1));
    EXPECT_EQ(arrayc::erf(s).shape(), Shape{});
    Array m = random_array(t, {7, 33}, 3, -9, 9);
    Array row = random_array(t, {33}, 4, 1, 9);
    EXPECT_MATCHES_REFERENCE(floor_divide(m, row));
    EXPECT_MATCHES_REFERENCE(arrayc::hypot(transpose(m), random_array(t, {7}, 5)));
    EXPECT_MATCHES_REFERENCE(arrayc::tan(transpose(m)) + arrayc::sinh(transpose(m) * 0.1));
  }
  Array i = random_array(DType::Int32, {4, 9}, 6, -100, 100);
  EXPECT_MATCHES_REFERENCE(transpose(i) & 0x0f);
  EXPECT_MATCHES_REFERENCE((i | 1) ^ transpose(transpose(i)));
  EXPECT_MATCHES_REFERENCE(~i);
  EXPECT_MATCHES_REFERENCE(3 << (i % 5));
  EXPECT_MATCHES_REFERENCE(i >> 2);
  EXPECT_MATCHES_REFERENCE(100 % i);
  // NEP 50: a Python-like integer keeps int32; a float scalar makes float64.
  EXPECT_EQ((i % 7).dtype(), DType::Int32);
  EXPECT_EQ(floor_divide(i, 2.5).dtype(), DType::Float64);
  EXPECT_EQ(arrayc::log1p(random_array(DType::Float32, {3}, 1)).dtype(), DType::Float32);
  EXPECT_EQ(arrayc::arctan2(i, i).dtype(), DType::Float64);
  // clip is maximum then minimum, in the dtype of all three.
  Array f = random_array(DType::Float32, {50}, 7);
  EXPECT_MATCHES_REFERENCE(clip(f, -1, 1.5));
  EXPECT_EQ(clip(i, 0, 10).dtype(), DType::Int32);
  EXPECT_MATCHES_REFERENCE(clip(i, 0, 10));
  EXPECT_TRUE(std::isnan(clip(array<float>({NAN}), 0, 1).item<float>()));
  // Bool: bitwise ops are logical, ~ is logical not.
  Array b = array<double>({0, 1, 1, 0}) > 0.5;
  Array c = array<double>({0, 0, 1, 1}) > 0.5;
  EXPECT_EQ((b & c).to_vector<int32_t>(), (std::vector<int32_t>{0, 0, 1, 0}));
  EXPECT_EQ((b ^ c).to_vector<int32_t>(), (std::vector<int32_t>{0, 1, 0, 1}));
  EXPECT_EQ((~b).to_vector<int32_t>(), (std::vector<int32_t>{1, 0, 0, 1}));
}

TEST_P(NumpyMath, ErrorsNameTheOpAndDtype) {
  Array f = zeros({2}, DType::Float32);
  Array b = zeros({2}, DType::Bool);
  EXPECT_ARRAYC_ERROR(f & f, "bitwise_and: dtype float32 is not accepted (integer or bool)");
  EXPECT_ARRAYC_ERROR(f | 1, "bitwise_or: dtype float32 is not accepted (integer or bool)");
  EXPECT_ARRAYC_ERROR(~zeros({2}, DType::Float64), "invert: dtype float64 is not accepted (integer or bool)");
  EXPECT_ARRAYC_ERROR(b << b, "left_shift: dtype bool is not accepted (integer)");
  EXPECT_ARRAYC_ERROR(f >> 1, "right_shift: dtype float32 is not accepted (integer)");
  EXPECT_ARRAYC_ERROR(sign(b), "sign: dtype bool is not accepted (integer or float)");
  EXPECT_ARRAYC_ERROR(b % b, "remainder: dtype bool is not accepted (integer or float)");
  EXPECT_ARRAYC_ERROR(floor_divide(zeros({2, 3}), zeros({4})),
                      "floor_divide: shapes [2, 3] (float32) and [4] (float32) cannot be broadcast together");
  EXPECT_ARRAYC_ERROR(clip(zeros({3}), zeros({2}), ones({})), "clip: shapes [3] (float32) and [2] (float32) cannot be broadcast together");
  EXPECT_ARRAYC_ERROR(zeros({2}, DType::Int32) % (int64_t{1} << 40), "remainder: the integer 1099511627776");
}

// A chain of the new ops, one kernel (the fusion golden numpy_math.in shows its text).
TEST_P(NumpyMath, ChainFusesIntoOneKernel) {
  Array x = random_array(DType::Float32, {1000}, 8, 0.1, 4);
  Array i = random_array(DType::Int32, {1000}, 9, -50, 50);
  x.eval();
  i.eval();
  Array y = arrayc::floor(arrayc::log1p(x) * 3) + arrayc::erf(x) - arrayc::arctan2(x, arrayc::hypot(x, 2.0f)) +
            arrayc::cast((i >> 1) % 7 & 3, DType::Float32) + arrayc::sigmoid(arrayc::tan(x)) +
            arrayc::cast(arrayc::isfinite(arrayc::log10(x)), DType::Float32);
  StatsDelta d = stats_delta([&] { y.eval(); });
  EXPECT_EQ(d.kernel_launches, 1);
  EXPECT_MATCHES_REFERENCE(y);
}

// Traced by jit like any op: one compile, and the lazy result's values.
TEST_P(NumpyMath, JitTracesTheNewOps) {
  auto f = jit([](const Array& a, const Array& b) {
    return arrayc::cast(floor_divide(a, b) ^ (a % b) << 1, DType::Float64) + arrayc::erf(arrayc::cast(a, DType::Float64));
  });
  Array a = random_array(DType::Int64, {40}, 1, -50, 50), b = random_array(DType::Int64, {40}, 2, -5, 5);
  Array lazy = arrayc::cast(floor_divide(a, b) ^ (a % b) << 1, DType::Float64) + arrayc::erf(arrayc::cast(a, DType::Float64));
  EXPECT_TRUE(matches_reference(f(a, b), lazy.node()));
  StatsDelta d = stats_delta([&] { f(a, b).eval(); });
  EXPECT_EQ(d.compiles, 0);
}

// Every transcendental vectorizes on the host: its kernel's loop holds vector arithmetic and its
// vector variants are inlined (no vector call is left), the scalar function serving only the
// remainder loop; no libm function is called but fmod's rare lanes and tan's huge arguments.
TEST_P(NumpyMath, TranscendentalsVectorizeOnTheHost) {
  if (on_gpu()) GTEST_SKIP() << "host code";
  for (DType t : kFloatTypes)
    for (const Unary& op : kUnary) {
      std::string name = op.name;
      if (name == "floor" || name == "ceil" || name == "round" || name == "trunc" || is_predicate(name)) continue;
      SCOPED_TRACE(name + " " + dt(t));
      Array x = random_array(t, {256}, 1, op.lo, op.hi);
      x.eval();
      Stages st = inspect({op.fn(x)});
      ASSERT_EQ(st.kernels.size(), 1u);
      const std::string& ir = st.kernels[0].opt;
      EXPECT_TRUE(std::regex_search(ir, std::regex("fmul <[0-9]+ x (float|double)>"))) << ir;
      EXPECT_FALSE(std::regex_search(ir, std::regex("call <[0-9]+ x [a-z0-9]+> @arrayc_"))) << ir;
      for (const char* libm : {"@log1p", "@expm1", "@log2", "@log10", "@exp2", "@tan", "@asin", "@acos", "@atan",
                               "@sinh", "@cosh", "@asinh", "@erf", "@exp(", "@log("})
        EXPECT_EQ(ir.find(libm), std::string::npos) << libm;
    }
}

// ---- Accuracy against long double ----------------------------------------------------------

struct Accuracy {
  const char* name;
  UnaryFn fn;
  long double (*ref)(long double);
  double lo, hi;   // random arguments
  double f32_bound, f64_bound;  // max ULP, docs/math_accuracy.md
};

long double ref_sigmoid(long double x) { return 1 / (1 + std::exp(-x)); }
long double ref_exp2(long double x) { return std::exp2(x); }

const Accuracy kAccuracy[] = {
    {"log1p", arrayc::log1p, std::log1p, -1, 1e6, 0.6, 2},
    {"expm1", arrayc::expm1, std::expm1, -50, 720, 0.6, 2},
    {"log2", arrayc::log2, std::log2, 0, 1e30, 0.6, 1},
    {"log10", arrayc::log10, std::log10, 0, 1e30, 0.6, 1},
    {"exp2", arrayc::exp2, ref_exp2, -1100, 1030, 0.6, 1.5},
    {"tan", arrayc::tan, std::tan, -100, 100, 0.6, 3},
    {"arcsin", arrayc::arcsin, std::asin, -1, 1, 0.6, 2.5},
    {"arccos", arrayc::arccos, std::acos, -1, 1, 0.6, 2.5},
    {"arctan", arrayc::arctan, std::atan, -100, 100, 0.6, 2},
    {"sinh", arrayc::sinh, std::sinh, -720, 720, 0.6, 2.5},
    {"cosh", arrayc::cosh, std::cosh, -720, 720, 0.6, 2.5},
    {"arcsinh", arrayc::arcsinh, std::asinh, -1e10, 1e10, 0.6, 2},
    {"erf", arrayc::erf, std::erf, -7, 7, 0.6, 2},
    {"sigmoid", arrayc::sigmoid, ref_sigmoid, -750, 750, 0.6, 2},
};

// The error of `got`, a value of dtype t, in t's own ULPs at ref.
double ulp_in(DType t, double got, long double ref) {
  switch (t) {
    case DType::Float16: return ulp_error_of_format(got, ref, 11, -13, 16);
    case DType::BFloat16: return ulp_error_of_format(got, ref, 8, -125, 128);
    case DType::Float32: return ulp_error(static_cast<float>(got), ref);
    default: return ulp_error(got, ref);
  }
}
// 16-bit floats compute in float32 and round once to 16 bits (docs/dtypes.md): at most half a
// 16-bit ULP for the rounding plus the float32 function's error, which is 2^(24 - digits) times
// smaller in 16-bit ULPs.
double half_bound(DType t, double f32_bound) {
  int digits = t == DType::Float16 ? 11 : 8;
  return 0.5 + f32_bound * std::ldexp(1.0, digits - 24) + 1e-9;
}

// Arguments: random over the range, random near zero (all scales), and edges.
std::vector<double> accuracy_args(const Accuracy& a, DType t, int64_t n) {
  std::vector<double> v = random_values(n / 2, 21, a.lo, a.hi);
  std::vector<double> small = random_values(n / 4, 22, -1, 1);
  std::vector<double> scale = random_values(n / 4, 23, -60, 1);
  for (size_t i = 0; i < small.size(); ++i) v.push_back(std::max(small[i] * std::exp2(scale[i]), a.lo));
  for (double x : float_edge_values(t)) v.push_back(x);
  for (double x : {0.5, -0.5, 1.0, 0.84375, 1.25, 2.857, 5.9, 6.0449, 709.7, -709.7, 88.7, -88.7, 89.4})
    v.push_back(x);
  return v;
}

TEST_P(NumpyMath, TranscendentalsWithinTheirUlpBounds) {
  if (on_gpu()) GTEST_SKIP() << "the bounds are the host's (vmath); the GPU's are libdevice's";
  const int64_t n = 200000;
  for (const Accuracy& a : kAccuracy)
    for (DType t : kFloatTypes) {
      SCOPED_TRACE(std::string(a.name) + " " + dt(t));
      std::vector<double> args = accuracy_args(a, t, n);
      Array x = make_array(t, {static_cast<int64_t>(args.size())}, args);
      std::vector<double> in = x.to_vector<double>();
      std::vector<double> got = a.fn(x).to_vector<double>();
      double worst = 0, worst_x = 0;
      for (size_t i = 0; i < in.size(); ++i) {
        long double ref = a.ref(static_cast<long double>(in[i]));
        double u = ulp_in(t, got[i], ref);
        if (u > worst) worst = u, worst_x = in[i];
      }
      double bound = t == DType::Float64 ? a.f64_bound : t == DType::Float32 ? a.f32_bound : half_bound(t, a.f32_bound);
      EXPECT_LE(worst, bound) << "at x = " << worst_x;
      std::printf("[ accuracy ] %-8s %-7s max %.3f ULP (x = %.17g)\n", a.name, dt(t).c_str(), worst, worst_x);
    }
  // The binary ones.
  for (DType t : kFloatTypes) {
    std::vector<double> y = random_values(n, 31, -1e3, 1e3), xv = random_values(n, 32, -1e3, 1e3);
    std::vector<double> ys = random_values(n, 33, -1, 1), xs = random_values(n, 34, -1e-3, 1e-3);
    y.insert(y.end(), ys.begin(), ys.end());
    xv.insert(xv.end(), xs.begin(), xs.end());
    Array ya = make_array(t, {2 * n}, y), xa = make_array(t, {2 * n}, xv);
    std::vector<double> yi = ya.to_vector<double>(), xi = xa.to_vector<double>();
    std::vector<double> at = arrayc::arctan2(ya, xa).to_vector<double>();
    std::vector<double> hy = arrayc::hypot(ya, xa).to_vector<double>();
    double worst_at = 0, worst_hy = 0;
    for (size_t i = 0; i < yi.size(); ++i) {
      long double ra = std::atan2(static_cast<long double>(yi[i]), static_cast<long double>(xi[i]));
      long double rh = std::hypot(static_cast<long double>(yi[i]), static_cast<long double>(xi[i]));
      worst_at = std::max(worst_at, ulp_in(t, at[i], ra));
      worst_hy = std::max(worst_hy, ulp_in(t, hy[i], rh));
    }
    auto bound = [&](double f64) { return t == DType::Float64 ? f64 : t == DType::Float32 ? 0.6 : half_bound(t, 0.6); };
    EXPECT_LE(worst_at, bound(2.5)) << "arctan2 " << dt(t);
    EXPECT_LE(worst_hy, bound(1.5)) << "hypot " << dt(t);
    std::printf("[ accuracy ] arctan2  %-7s max %.3f ULP\n[ accuracy ] hypot    %-7s max %.3f ULP\n", dt(t).c_str(),
                worst_at, dt(t).c_str(), worst_hy);
  }
}

}  // namespace
