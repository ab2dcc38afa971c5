// Elementwise ops end to end, on every device: every op with every dtype it accepts, mixed
// dtypes (numpy promotion), scalars, edge values and sizes around the vector width. Each result
// is checked against the reference interpreter (support/reference.h).
#include <cmath>
#include <cstring>
#include <limits>

#include "support/data.h"
#include "support/devices.h"
#include "support/errors.h"
#include "support/reference.h"
#include "support/ulp.h"

namespace {

using namespace arrayc;
using namespace arrayc_test;

class Elementwise : public DeviceTest {};
ARRAYC_DEVICE_SUITE(Elementwise);

using BinaryFn = Array (*)(const Array&, const Array&);
using UnaryFn = Array (*)(const Array&);
struct Binary {
  const char* name;
  BinaryFn fn;
};
struct Unary {
  const char* name;
  UnaryFn fn;
};

const Binary kArithmetic[] = {{"add", add},         {"subtract", subtract}, {"multiply", multiply},
                              {"divide", divide},   {"pow", arrayc::pow},   {"maximum", maximum},
                              {"minimum", minimum}};
const Binary kComparisons[] = {{"equal", equal}, {"not_equal", not_equal},   {"less", less},
                               {"less_equal", less_equal}, {"greater", greater}, {"greater_equal", greater_equal}};
const Binary kLogical[] = {{"logical_and", logical_and}, {"logical_or", logical_or}};
const Unary kMath[] = {{"exp", arrayc::exp},   {"log", arrayc::log},   {"sin", arrayc::sin},
                       {"cos", arrayc::cos},   {"tanh", arrayc::tanh}, {"sqrt", arrayc::sqrt},
                       {"abs", arrayc::abs},   {"negative", negative}, {"logical_not", logical_not}};

bool rejects(const char* op, DType a, DType b) {
  DType t = promote_types(a, b);
  std::string name = op;
  return t == DType::Bool && (name == "subtract" || name == "pow");
}

// Operands for an op: the exponent of pow is kept small so integer powers mean something.
Array operand(DType t, const Shape& shape, uint64_t seed, bool exponent) {
  return exponent ? random_array(t, shape, seed, -2, 5) : random_array(t, shape, seed, -6, 6);
}

// Results of one pair of dtypes, evaluated together (one multi-output kernel, one compile per
// pair: 13 dtypes make 169 pairs) and each checked against the reference.
struct Batch {
  std::vector<std::string> names;
  std::vector<Array> arrays;
  std::vector<arrayc::detail::NodeRef> graphs;
  void add(std::string name, Array a) {
    names.push_back(std::move(name));
    graphs.push_back(a.node());
    arrays.push_back(std::move(a));
  }
  void check() {
    arrayc::eval(arrays);
    for (size_t i = 0; i < arrays.size(); ++i) {
      SCOPED_TRACE(names[i]);
      EXPECT_MATCHES_REFERENCE(arrays[i], graphs[i]);
    }
  }
};

TEST_P(Elementwise, BinaryOpsEveryDtypePair) {
  const Shape shape{3, 37};
  for (DType a : kAllDTypes)
    for (DType b : kAllDTypes) {
      Batch batch;
      for (const Binary& op : kArithmetic) {
        std::string name = std::string(op.name) + "(" + dt(a) + ", " + dt(b) + ")";
        Array x = operand(a, shape, 1, false);
        Array y = operand(b, shape, 2, std::string(op.name) == "pow");
        if (rejects(op.name, a, b)) {
          EXPECT_ARRAYC_ERROR(op.fn(x, y), "bool is not accepted") << name;
          continue;
        }
        batch.add(name, op.fn(x, y));
      }
      batch.check();
    }
}

TEST_P(Elementwise, ComparisonsEveryDtypePair) {
  for (DType a : kAllDTypes)
    for (DType b : kAllDTypes) {
      // Small integer-valued ranges so that equal values occur.
      Array x = random_array(a, {70}, 3, -3, 3);
      Array y = random_array(b, {70}, 4, -3, 3);
      if (is_float(a)) x = arrayc::cast(arrayc::cast(x * 2, DType::Int32), a) / 2;  // halves
      Batch batch;
      for (const Binary& op : kComparisons) {
        Array r = op.fn(x, y);
        EXPECT_EQ(r.dtype(), DType::Bool);
        batch.add(std::string(op.name) + "(" + dt(a) + ", " + dt(b) + ")", r);
      }
      batch.check();
    }
}

TEST_P(Elementwise, LogicalEveryDtype) {
  for (DType a : kAllDTypes)
    for (DType b : kAllDTypes) {
      std::string pair = dt(a) + ", " + dt(b);
      Array x = random_array(a, {45}, 5, -1, 1);
      Array y = random_array(b, {45}, 6, -1, 1);
      Batch batch;
      for (const Binary& op : kLogical) batch.add(std::string(op.name) + "(" + pair + ")", op.fn(x, y));
      batch.add("not " + pair, !x);
      batch.add("(x && y) || !y " + pair, (x && y) || !y);
      batch.check();
    }
}

TEST_P(Elementwise, UnaryEveryDtype) {
  for (const Unary& op : kMath)
    for (DType t : kAllDTypes) {
      SCOPED_TRACE(std::string(op.name) + "(" + dt(t) + ")");
      Array x = random_array(t, {2, 41}, 7, -8, 8);
      if (t == DType::Bool && std::string(op.name) == "negative") {
        EXPECT_ARRAYC_ERROR(op.fn(x), "negative: dtype bool is not accepted");
        continue;
      }
      EXPECT_MATCHES_REFERENCE(op.fn(x));
      // Positive arguments too, where log and sqrt are defined.
      if (t != DType::Bool) {
        EXPECT_MATCHES_REFERENCE(op.fn(random_array(t, {2, 41}, 8, 0, 30)));
      }
    }
}

TEST_P(Elementwise, WhereEveryDtype) {
  for (DType c : kAllDTypes)
    for (DType a : kAllDTypes)
      for (DType b : {DType::Bool, DType::Int64, DType::Float32}) {
        SCOPED_TRACE("where(" + dt(c) + ", " + dt(a) + ", " + dt(b) + ")");
        Array cond = random_array(c, {53}, 9, -1, 1);
        EXPECT_MATCHES_REFERENCE(where(cond, random_array(a, {53}, 10), random_array(b, {53}, 11)));
      }
  // A float condition is x != 0: NaN is true, -0.0 false.
  std::vector<double> e = float_edge_values(DType::Float64);
  Array fc = make_array(DType::Float64, {static_cast<int64_t>(e.size())}, e);
  EXPECT_MATCHES_REFERENCE(where(fc, arange(static_cast<int64_t>(e.size())), -1));
  Array x = random_array(DType::Float32, {4, 5}, 12);
  EXPECT_MATCHES_REFERENCE(where(x > 0, x, 0));
  EXPECT_MATCHES_REFERENCE(where(x > 0, 1.5, x));
  EXPECT_MATCHES_REFERENCE(where(random_array(DType::Bool, {4, 1}, 13), x, random_array(DType::Float32, {5}, 14)));
}

TEST_P(Elementwise, CastEveryDtypePair) {
  for (DType from : kAllDTypes) {
    std::vector<double> values = is_float(from) ? float_edge_values(from) : int_edge_values(from);
    if (from == DType::Bool) values = {0, 1, 1, 0};
    for (double x : random_values(40, 15, -3e9, 3e9)) values.push_back(x);
    for (double x : random_values(40, 16, -3, 3)) values.push_back(x);
    Array a = make_array(from, {static_cast<int64_t>(values.size())}, values);
    for (DType to : kAllDTypes) {
      SCOPED_TRACE("cast " + dt(from) + " -> " + dt(to));
      Array r = arrayc::cast(a, to);
      EXPECT_EQ(r.dtype(), to);
      EXPECT_MATCHES_REFERENCE(r);
    }
  }
  // int64 values beyond 2^53 and at the extremes.
  std::vector<int64_t> big = {std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min(),
                              (int64_t{1} << 53) + 1, -(int64_t{1} << 60) - 12345, 4294967297};
  Array b = arrayc::array(big);
  for (DType to : kAllDTypes) {
    SCOPED_TRACE("cast int64 extremes -> " + dt(to));
    EXPECT_MATCHES_REFERENCE(arrayc::cast(b, to));
  }
  EXPECT_EQ(arrayc::cast(b, DType::Int64).to_vector<int64_t>(), big);
}

TEST_P(Elementwise, NegationAndAbsOfIntegerExtremes) {
  Array i32 = arrayc::array(std::vector<int32_t>{std::numeric_limits<int32_t>::min(), -1, 0, 1,
                                                 std::numeric_limits<int32_t>::max()});
  EXPECT_MATCHES_REFERENCE(-i32);
  EXPECT_MATCHES_REFERENCE(arrayc::abs(i32));
  Array i64 = arrayc::array(std::vector<int64_t>{std::numeric_limits<int64_t>::min(), -5,
                                                 std::numeric_limits<int64_t>::max()});
  EXPECT_MATCHES_REFERENCE(-i64);
  EXPECT_MATCHES_REFERENCE(arrayc::abs(i64));
  EXPECT_MATCHES_REFERENCE(i64 + 1);  // wraps
  EXPECT_MATCHES_REFERENCE(i32 * 3);  // wraps in 32 bits
  // int64 values past 2^53 must not go through double.
  Array big = arrayc::array(std::vector<int64_t>{(int64_t{1} << 60) + 1, (int64_t{1} << 53) + 1, -(int64_t{1} << 62) - 3});
  EXPECT_MATCHES_REFERENCE((big + 1) == big);
  EXPECT_MATCHES_REFERENCE(big * 3 - big);
  EXPECT_MATCHES_REFERENCE(arrayc::maximum(big, -big));
  EXPECT_MATCHES_REFERENCE(big < big + 1);
  EXPECT_EQ((big + 1).to_vector<int64_t>()[1], (int64_t{1} << 53) + 2);
}

TEST_P(Elementwise, IntegerPowCorners) {
  Array base = arrayc::array(std::vector<int32_t>{2, 3, 1, -1, -1, 0, 0, 5, -2, 3, 7});
  Array exp = arrayc::array(std::vector<int32_t>{10, -1, -5, -3, -2, 0, 3, 0, 3, 40, 31});
  EXPECT_MATCHES_REFERENCE(arrayc::pow(base, exp));
  EXPECT_MATCHES_REFERENCE(arrayc::pow(arrayc::cast(base, DType::Int64), arrayc::cast(exp, DType::Int64)));
  EXPECT_MATCHES_REFERENCE(arrayc::pow(base, 2));
}

// pow(x, c) for c in {0, 1, 2, -1, 0.5} becomes one cheaper op (simplify): the result must be the
// correctly rounded power, with C99's special cases (pow(NaN, 0) = 1, pow(-0, 0.5) = +0,
// pow(-inf, 0.5) = +inf), on edge values and random ones; and no pow may be left to run.
template <class T>
T rounded_power(T x, double c) {
  if (c == 0) return 1;
  if (c == 1) return x;
  if (c == 2) return x * x;  // IEEE multiplication rounds the exact square once
  if (c == -1) return T(1) / x;
  // sqrt is exact by IEEE; C99 differs for -0 (pow: +0) and -inf (pow: +inf).
  return x == -std::numeric_limits<T>::infinity() ? -x : std::sqrt(x + T(0));
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0 || (std::isnan(a) && std::isnan(b)); }

TEST_P(Elementwise, PowByExponentsWithAShortcut) {
  for (DType t : kFloatTypes)
    for (double c : {0.0, -0.0, 1.0, 2.0, -1.0, 0.5}) {
      SCOPED_TRACE(dt(t) + " ** " + std::to_string(c));
      std::vector<double> v = float_edge_values(t), r = values_of(random_array(t, {100}, 23, -1e3, 1e3)).f;
      v.insert(v.end(), r.begin(), r.end());
      Array x = arrayc::cast(arrayc::array(v), t);
      Array p = arrayc::pow(x, c);
      EXPECT_EQ(inspect({p}).optimized.find("pow"), std::string::npos) << inspect({p}).optimized;
      EXPECT_MATCHES_REFERENCE(p);
      std::vector<double> xs = values_of(x).f, got = values_of(p).f;
      for (size_t i = 0; i < xs.size(); ++i) {
        // 16-bit floats: the float32 result rounded (exact for these ops, as for a native op).
        auto in_t = [&](double f32, double f64) { return t == DType::Float64 ? f64 : arrayc::detail::round_float(t, f32); };
        double want = in_t(rounded_power(float(xs[i]), c), rounded_power(xs[i], c));
        if (c == 0.5 || std::isnan(want) || std::isinf(want) || want == 0)  // the C library agrees
          EXPECT_TRUE(same_bits(want, in_t(std::pow(float(xs[i]), float(c)), std::pow(xs[i], c))))
              << "pow(" << xs[i] << ", " << c << ")";
        EXPECT_TRUE(same_bits(got[i], want)) << "pow(" << xs[i] << ", " << c << ") = " << got[i] << ", want " << want;
      }
    }
  for (DType t : {DType::Int32, DType::Int64})
    for (int c : {0, 1, 2}) {
      Array x = arrayc::array(std::vector<int32_t>{0, 1, -1, 7, -46341, 46341, 65536, 2147483647});
      Array p = arrayc::pow(arrayc::cast(x, t), c);
      EXPECT_EQ(inspect({p}).optimized.find("pow"), std::string::npos) << inspect({p}).optimized;
      EXPECT_MATCHES_REFERENCE(p);  // int32: x*x wraps as the reference's repeated product does
    }
  EXPECT_NE(inspect({arrayc::pow(random_array(DType::Float32, {8}, 3), 3.0f)}).optimized.find("pow"), std::string::npos);
}

// sqrt is correctly rounded on every device (on NVPTX libdevice's __nv_sqrtf had been
// sqrt.approx.f32, 1 ULP off for about a third of the inputs).
TEST_P(Elementwise, SqrtIsCorrectlyRounded) {
  for (DType t : kFloatTypes) {
    SCOPED_TRACE(dt(t));
    std::vector<double> v = float_edge_values(t);
    for (double w : values_of(random_array(t, {5000}, 37, 0, 1)).f) v.push_back(std::exp2(w * 200 - 100));
    Array x = arrayc::cast(arrayc::array(v), t);
    std::vector<double> xs = values_of(x).f, got = values_of(arrayc::sqrt(x)).f;
    int wrong = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
      double want = t == DType::Float64 ? std::sqrt(xs[i]) : arrayc::detail::round_float(t, std::sqrt(float(xs[i])));
      if (!same_bits(got[i], want) && ++wrong <= 5) ADD_FAILURE() << "sqrt(" << xs[i] << ") = " << got[i] << ", want " << want;
    }
    EXPECT_EQ(wrong, 0);
  }
}

// pow(x, 3) and pow(x, 4) with a constant exponent are compensated products in the kernel, not
// pow calls: within 0.5 ULP + 2^-22 of the exact power (a correctly rounded pow but for
// near-ties; 1 ULP for results near underflow), with pow's results for infinities, NaN, zeros
// and overflow.
TEST_P(Elementwise, PowByThreeAndFourIsAsCloseAsARoundedPower) {
  // The compensated product's own precision: 16-bit floats round its float32 result.
  for (DType t : {DType::Float32, DType::Float64}) {
    std::vector<double> v = float_edge_values(t);
    for (double w : values_of(random_array(t, {2000}, 29, -50, 50)).f) v.push_back(w);
    for (double w : values_of(random_array(t, {2000}, 31, 0, 1)).f) v.push_back(std::exp2(w * 90 - 45));
    for (double w : {6.9e12, 6.99e12, 1.8e19, 1.9e19, 1.84e19, 5.6e102, 5.7e102, 1.3e154, 1.35e154})
      v.push_back(w);
    Array x = arrayc::cast(arrayc::array(v), t);
    std::vector<double> xs = values_of(x).f;
    for (double c : {3.0, 4.0}) {
      SCOPED_TRACE(dt(t) + " ** " + std::to_string(c));
      Array p = arrayc::pow(x, c);
      if (default_device().kind == Device::Kind::CPU)
        EXPECT_EQ(inspect({p}).kernels.at(0).opt.find("@arrayc_pow_f"), std::string::npos);
      EXPECT_MATCHES_REFERENCE(p);
      std::vector<double> got = values_of(p).f;
      double worst = 0;
      for (size_t i = 0; i < xs.size(); ++i) {
        long double exact = std::pow(static_cast<long double>(xs[i]), static_cast<long double>(c));
        double want = t == DType::Float32 ? double(float(exact)) : double(exact);
        if (std::isnan(want) || std::isinf(want) || want == 0) {
          EXPECT_TRUE(same_bits(got[i], want)) << "pow(" << xs[i] << ", " << c << ") = " << got[i];
          continue;
        }
        double err = t == DType::Float32 ? ulp_error(float(got[i]), exact) : ulp_error(got[i], exact);
        // Near underflow the small term l*x rounds on the subnormal grid: within 1 ULP there.
        bool low = std::fabs(want) < (t == DType::Float32 ? 0x1p-100 : 0x1p-968);
        EXPECT_LE(err, low ? 1.0 : 0.501) << "pow(" << xs[i] << ", " << c << ") = " << got[i];
        worst = std::max(worst, err);
      }
      EXPECT_GT(worst, 0.4);  // the inputs reach the bound
    }
  }
}

// Every float op on the cross product of edge values (NaN, infinities, signed zeros, denormals,
// the extremes): one array of all pairs.
TEST_P(Elementwise, EdgeValuesBinary) {
  for (DType t : kFloatTypes) {
    std::vector<double> xs, ys;
    all_pairs(float_edge_values(t), xs, ys);
    Shape shape{static_cast<int64_t>(xs.size())};
    Array x = make_array(t, shape, xs), y = make_array(t, shape, ys);
    for (const Binary& op : kArithmetic) {
      SCOPED_TRACE(std::string(op.name) + " " + dt(t));
      EXPECT_MATCHES_REFERENCE(op.fn(x, y));
    }
    for (const Binary& op : kComparisons) {
      SCOPED_TRACE(std::string(op.name) + " " + dt(t));
      EXPECT_MATCHES_REFERENCE(op.fn(x, y));
    }
  }
}

TEST_P(Elementwise, EdgeValuesUnary) {
  for (DType t : kFloatTypes) {
    std::vector<double> e = float_edge_values(t);
    Array x = make_array(t, {static_cast<int64_t>(e.size())}, e);
    for (const Unary& op : kMath) {
      SCOPED_TRACE(std::string(op.name) + " " + dt(t));
      EXPECT_MATCHES_REFERENCE(op.fn(x));
    }
  }
}

// Signed zero: neg, abs and the float results that must keep their sign.
TEST_P(Elementwise, SignedZeros) {
  CompareOptions strict;
  strict.signed_zero = true;
  for (DType t : kFloatTypes) {
    SCOPED_TRACE(dt(t));
    Array z = make_array(t, {4}, {0.0, -0.0, 1.0, -1.0});
    EXPECT_MATCHES_REFERENCE(-z, strict);
    EXPECT_MATCHES_REFERENCE(arrayc::abs(z), strict);
    EXPECT_MATCHES_REFERENCE(z * -1.0, strict);
    EXPECT_MATCHES_REFERENCE(arrayc::sqrt(z * 0.0), strict);     // sqrt(-0) = -0
    EXPECT_MATCHES_REFERENCE(arrayc::sin(z * 0.0), strict);      // sin(-0) = -0
    EXPECT_MATCHES_REFERENCE(1.0 / (z * 0.0), strict);           // +-inf from +-0
    EXPECT_MATCHES_REFERENCE(arrayc::cast(z * 0.0, t == DType::Float32 ? DType::Float64 : DType::Float32), strict);
  }
}

// Huge arguments to sin and cos need a correct argument reduction.
TEST_P(Elementwise, TrigOfHugeArguments) {
  std::vector<double> v = {1e30, -1e30, 3.4e38, -3.4e38, 1e10, 12345.678, 1e22, 6.2831853, 3.14159265,
                           1.5707963, 1e6, 8.5e37, 105414350.0};
  for (DType t : kFloatTypes) {
    SCOPED_TRACE(dt(t));
    std::vector<double> w = v;
    if (t == DType::Float64) w.insert(w.end(), {1e300, 1.7e308, 1e100, 5.3e200});
    Array x = make_array(t, {static_cast<int64_t>(w.size())}, w);
    EXPECT_MATCHES_REFERENCE(arrayc::sin(x));
    EXPECT_MATCHES_REFERENCE(arrayc::cos(x));
  }
}

TEST_P(Elementwise, ExpOverflowUnderflowAndLogDomain) {
  Array f = arrayc::array(std::vector<float>{88.0f, 88.7f, 89.0f, 100.0f, -87.0f, -103.0f, -104.0f, -110.0f,
                                            1e-40f, 0.0f, -0.0f, -1.0f});
  EXPECT_MATCHES_REFERENCE(arrayc::exp(f));
  EXPECT_MATCHES_REFERENCE(arrayc::log(f));
  EXPECT_MATCHES_REFERENCE(arrayc::sqrt(f));
  EXPECT_MATCHES_REFERENCE(arrayc::tanh(f));
  Array d = arrayc::array(std::vector<double>{709.0, 709.78, 710.0, -708.0, -745.0, -746.0, 1e-310, 0.0, -1.0,
                                             -0.0});
  EXPECT_MATCHES_REFERENCE(arrayc::exp(d));
  EXPECT_MATCHES_REFERENCE(arrayc::log(d));
  EXPECT_MATCHES_REFERENCE(arrayc::sqrt(d));
  EXPECT_MATCHES_REFERENCE(arrayc::tanh(d * 0.01));
}

TEST_P(Elementwise, Denormals) {
  using L = std::numeric_limits<float>;
  Array f = arrayc::array(std::vector<float>{L::denorm_min(), 1e-40f, -3e-39f, L::min(), L::min() / 2});
  EXPECT_MATCHES_REFERENCE(f * 2.0f);
  EXPECT_MATCHES_REFERENCE(f + f);
  EXPECT_MATCHES_REFERENCE(f / 4.0f);
  EXPECT_MATCHES_REFERENCE(arrayc::sqrt(arrayc::abs(f)));
  EXPECT_MATCHES_REFERENCE(arrayc::maximum(f, 0.0f));
  EXPECT_MATCHES_REFERENCE(f > 0);
  Array d = arrayc::array(std::vector<double>{4.9e-324, 1e-310, -2e-308});
  EXPECT_MATCHES_REFERENCE(d * 3.0);
  EXPECT_MATCHES_REFERENCE(d != 0);
}

TEST_P(Elementwise, ScalarOperands) {
  Array f = random_array(DType::Float32, {33}, 17);
  Array i = random_array(DType::Int32, {33}, 18);
  EXPECT_MATCHES_REFERENCE(f * 1.5 + 2);
  EXPECT_MATCHES_REFERENCE(2 - f / 3);
  EXPECT_MATCHES_REFERENCE(i * 2 - 7);
  EXPECT_MATCHES_REFERENCE(i * 1.5);
  EXPECT_MATCHES_REFERENCE(i / 2);
  EXPECT_MATCHES_REFERENCE(arrayc::pow(f, 2));
  EXPECT_MATCHES_REFERENCE(arrayc::pow(2.0f, f));
  EXPECT_MATCHES_REFERENCE(arrayc::maximum(i, 0));
  EXPECT_MATCHES_REFERENCE(arrayc::minimum(f, 0.5));
  EXPECT_MATCHES_REFERENCE(f >= 0.25);
  EXPECT_MATCHES_REFERENCE(i == 3);
  EXPECT_EQ((f * 1.5).dtype(), DType::Float32);
  EXPECT_EQ((i * 2).dtype(), DType::Int32);
  EXPECT_EQ((i * 1.5).dtype(), DType::Float64);
}

// Lengths 0..67 (around every vector width and unroll factor) and one large odd length.
TEST_P(Elementwise, LengthsAroundTheVectorWidth) {
  for (int64_t n = 0; n <= 67; ++n) {
    SCOPED_TRACE("n = " + std::to_string(n));
    Array x = random_array(DType::Float32, {n}, 19 + n);
    Array y = random_array(DType::Float64, {n}, 20 + n);
    Array k = random_array(DType::Int32, {n}, 21 + n);
    EXPECT_MATCHES_REFERENCE(x * 2.0f + arrayc::exp(x) - y);
    EXPECT_MATCHES_REFERENCE(k * 3 + 1);
    EXPECT_MATCHES_REFERENCE(where(x > 0, k, -k));
  }
  Array big = random_array(DType::Float32, {1000003}, 99);
  EXPECT_MATCHES_REFERENCE(arrayc::sin(big) * big + 1.0f);
  EXPECT_MATCHES_REFERENCE(arrayc::cast(big * 100, DType::Int32) > 7);
}

TEST_P(Elementwise, Ranks0To4) {
  for (const Shape& s : {Shape{}, Shape{1}, Shape{5}, Shape{3, 7}, Shape{2, 3, 5}, Shape{2, 3, 1, 4},
                         Shape{1, 1, 1, 1}, Shape{0}, Shape{3, 0, 2}}) {
    SCOPED_TRACE(shape_str(s));
    Array x = random_array(DType::Float32, s, 23);
    Array y = random_array(DType::Int64, s, 24);
    Array r = arrayc::tanh(x) * y - x;
    EXPECT_EQ(r.shape(), s);
    EXPECT_MATCHES_REFERENCE(r);
    EXPECT_MATCHES_REFERENCE(x < 0.5);
  }
}

TEST_P(Elementwise, ScalarResultAndItem) {
  Array x = make_array(DType::Float64, {}, {2.0});
  Array r = arrayc::exp(x) + 1;
  EXPECT_MATCHES_REFERENCE(r);
  EXPECT_NEAR(r.item<double>(), std::exp(2.0) + 1, 1e-12);
  EXPECT_EQ((arrayc::array(std::vector<int32_t>{41}) + 1).item<int32_t>(), 42);
}

}  // namespace
