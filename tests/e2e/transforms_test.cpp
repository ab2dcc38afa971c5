// grad, value_and_grad, vjp, jvp and vmap (include/arrayc/transforms.h): every differentiable
// op against central finite differences in float64 (random shapes, broadcasting, non-contiguous
// views), random graphs, composition with jit, batching rules against per-example loops, the
// errors users get, and the op table's rule coverage.
#include <cmath>
#include <functional>
#include <iostream>
#include <random>
#include <sstream>

#include "ir/interpreter.h"
#include "support/data.h"
#include "support/errors.h"
#include "support/reference.h"
#include "transforms/rules.h"

namespace {

using namespace arrayc;
using namespace arrayc_test;
using detail::Op;
using Args = std::vector<Array>;
using Fn = std::function<Array(const Args&)>;

std::vector<double> host(const Array& a) { return a.to_vector<double>(); }

// The value of a scalar function by the reference interpreter (no compile: finite differences
// call it thousands of times).
double interpret_scalar(const Fn& f, const Args& args) {
  return detail::interpret(f(args).node()).as_double(0);
}

// Central differences of f with respect to argument k, on contiguous copies of the arguments.
std::vector<double> numeric_grad(const Fn& f, const Args& args_in, size_t k, double eps = 1e-6) {
  Args args;
  for (const Array& a : args_in) args.push_back(make_array(a.dtype(), a.shape(), host(a)));
  std::vector<double> v = host(args[k]), g(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    std::vector<double> p = v, m = v;
    p[i] += eps;
    m[i] -= eps;
    Args ap = args, am = args;
    ap[k] = make_array(args[k].dtype(), args[k].shape(), p);
    am[k] = make_array(args[k].dtype(), args[k].shape(), m);
    g[i] = (interpret_scalar(f, ap) - interpret_scalar(f, am)) / (2 * eps);
  }
  return g;
}

::testing::AssertionResult close(const std::vector<double>& got, const std::vector<double>& want, double rtol,
                                 double atol) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure() << "sizes differ: " << got.size() << " vs " << want.size();
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got[i] - want[i]) <= atol + rtol * std::fabs(want[i])))
      return ::testing::AssertionFailure() << "element " << i << ": got " << got[i] << ", want " << want[i];
  return ::testing::AssertionSuccess();
}

// f as a function of N Arrays, and a call of such a function on a list.
template <size_t N> auto as_fn(const Fn& f) {
  if constexpr (N == 1) return [f](const Array& a) { return f({a}); };
  else if constexpr (N == 2) return [f](const Array& a, const Array& b) { return f({a, b}); };
  else return [f](const Array& a, const Array& b, const Array& c) { return f({a, b, c}); };
}
template <size_t N, typename G> auto apply_n(G& g, const Args& a) {
  if constexpr (N == 1) return g(a[0]);
  else if constexpr (N == 2) return g(a[0], a[1]);
  else return g(a[0], a[1], a[2]);
}

// grad of every float argument against finite differences, eagerly and under jit.
template <size_t N> void check_grads_n(const Fn& f, const Args& args) {
  std::vector<int64_t> all;
  for (size_t k = 0; k < args.size(); ++k)
    if (is_float(args[k].dtype())) all.push_back(static_cast<int64_t>(k));
  auto g = grad(as_fn<N>(f), all);
  auto jg = jit(g);
  std::vector<Array> eager = apply_n<N>(g, args), jitted = apply_n<N>(jg, args);
  for (size_t j = 0; j < all.size(); ++j) {
    size_t k = static_cast<size_t>(all[j]);
    SCOPED_TRACE("argument " + std::to_string(k) + " of shape " + shape_str(args[k].shape()));
    EXPECT_EQ(eager[j].shape(), args[k].shape());
    EXPECT_EQ(eager[j].dtype(), args[k].dtype());
    EXPECT_TRUE(close(host(eager[j]), numeric_grad(f, args, k), 1e-6, 1e-7));
    EXPECT_TRUE(close(host(jitted[j]), host(eager[j]), 1e-12, 1e-13));
  }
}
void check_grads(const Fn& f, const Args& args) {
  switch (args.size()) {
    case 1: return check_grads_n<1>(f, args);
    case 2: return check_grads_n<2>(f, args);
    default: return check_grads_n<3>(f, args);
  }
}

Array f64(const Shape& s, uint64_t seed, double lo = -2, double hi = 2) { return random_array(DType::Float64, s, seed, lo, hi); }

// sum(y * w) for fixed random weights w: every element of y gets its own cotangent.
Array weighted(const Array& y, uint64_t seed = 99) { return sum(y * f64(y.shape(), seed)); }

struct OpCase {
  const char* name;
  std::vector<Array> args;
  std::function<Array(const Args&)> op;
  double lo = 0.5, hi = 2;  // where the vmap test draws its batches (inside the op's domain)
};

Array i64(const Shape& s, const std::vector<double>& v) { return make_array(DType::Int64, s, v); }

std::vector<OpCase> op_cases() {
  Array a34 = f64({3, 4}, 1), t43 = transpose(f64({4, 3}, 2));  // t43: a non-contiguous view
  Array pos = transpose(f64({4, 3}, 3, 0.5, 3));
  Array t45 = transpose(f64({5, 4}, 22));
  Array b314 = f64({3, 1, 4}, 4), b24 = f64({2, 4}, 5), d24 = f64({2, 4}, 6, 0.5, 2);
  return {
      {"negative", {t43}, [](const Args& x) { return -x[0]; }},
      {"abs", {t43}, [](const Args& x) { return arrayc::abs(x[0]); }},
      {"exp", {t43}, [](const Args& x) { return arrayc::exp(x[0]); }},
      {"log", {pos}, [](const Args& x) { return arrayc::log(x[0]); }},
      {"sin", {t43}, [](const Args& x) { return arrayc::sin(x[0]); }},
      {"cos", {t43}, [](const Args& x) { return arrayc::cos(x[0]); }},
      {"tanh", {t43}, [](const Args& x) { return arrayc::tanh(x[0]); }},
      {"sqrt", {pos}, [](const Args& x) { return arrayc::sqrt(x[0]); }},
      {"add", {b314, b24}, [](const Args& x) { return x[0] + x[1]; }},
      {"subtract", {b314, t43}, [](const Args& x) { return x[0] - x[1]; }},
      {"multiply", {b314, b24}, [](const Args& x) { return x[0] * x[1]; }},
      {"divide", {b314, d24}, [](const Args& x) { return x[0] / x[1]; }},
      {"pow", {f64({3, 1, 4}, 7, 0.5, 2), b24}, [](const Args& x) { return arrayc::pow(x[0], x[1]); }},
      {"pow scalar", {pos}, [](const Args& x) { return arrayc::pow(x[0], 3.0); }},
      {"scalars", {a34}, [](const Args& x) { return 2.5 * x[0] - 1.0 / (x[0] * x[0] + 1.0); }},
      {"maximum", {b314, b24}, [](const Args& x) { return arrayc::maximum(x[0], x[1]); }},
      {"minimum", {b314, b24}, [](const Args& x) { return arrayc::minimum(x[0], x[1]); }},
      {"where", {a34, f64({4}, 8), f64({3, 1}, 9)},
       [](const Args& x) { return where(x[0] > 0.3, x[1], x[2]) * x[0]; }},
      {"comparison", {a34, b24}, [](const Args& x) { return cast(x[0] > 0.0, DType::Float64) * x[0]; }},
      {"reshape", {t43}, [](const Args& x) { return reshape(x[0], {2, 6}); }},
      {"transpose", {f64({2, 3, 4}, 10)}, [](const Args& x) { return transpose(x[0], {2, 0, 1}); }},
      {"broadcast_to", {f64({3, 1}, 11)}, [](const Args& x) { return broadcast_to(x[0], {2, 3, 4}); }},
      {"expand_dims", {t43}, [](const Args& x) { return expand_dims(x[0], 1) * x[0]; }},
      {"sum axis", {f64({2, 3, 4}, 12)}, [](const Args& x) { return sum(x[0], {1}, true) * sum(x[0], {0, 2}, true); }},
      {"sum all", {t43}, [](const Args& x) { return sum(x[0]) * x[0]; }},
      {"mean", {f64({2, 3, 4}, 13)}, [](const Args& x) { return mean(x[0], {0, 2}) + mean(x[0]); }},
      {"max", {f64({2, 3, 4}, 14)}, [](const Args& x) { return max(x[0], {1}) + max(x[0]); }},
      {"min", {t43}, [](const Args& x) { return min(x[0], {0}, true) * x[0]; }},
      {"prod", {f64({2, 3, 4}, 15, 0.5, 1.5)}, [](const Args& x) { return prod(x[0], {2}); }},
      {"prod with zeros", {make_array(DType::Float64, {2, 3}, {0, 1.5, 2, 0, 0, -1})},
       [](const Args& x) { return prod(x[0], {1}); }},
      {"dot", {a34, t45}, [](const Args& x) { return dot(x[0], x[1]); }},
      {"dot vector", {f64({4}, 16), t45}, [](const Args& x) { return dot(x[0], x[1]); }},
      {"dot matrix vector", {a34, f64({4}, 17)}, [](const Args& x) { return dot(x[0], x[1]); }},
      {"dot inner", {f64({4}, 18), f64({4}, 19)}, [](const Args& x) { return dot(x[0], x[1]); }},
      {"matmul batched", {f64({2, 1, 3, 4}, 20), f64({5, 4, 2}, 21)}, [](const Args& x) { return matmul(x[0], x[1]); }},
      {"cast", {a34}, [](const Args& x) { return cast(cast(x[0], DType::Float32), DType::Float64) * 0.0 + x[0]; }},
      // numpy math (issue 28): flat ops times x (their own gradient is zero, as JAX's)
      {"floor", {t43}, [](const Args& x) { return arrayc::floor(x[0]) * x[0]; }},
      {"ceil", {t43}, [](const Args& x) { return arrayc::ceil(x[0]) * x[0]; }},
      {"round", {t43}, [](const Args& x) { return arrayc::round(x[0] * 1.7) * x[0]; }},
      {"trunc", {t43}, [](const Args& x) { return arrayc::trunc(x[0]) * x[0]; }},
      {"sign", {t43}, [](const Args& x) { return arrayc::sign(x[0]) * x[0]; }},
      {"float classes", {t43}, [](const Args& x) {
         Array y = arrayc::log(x[0]);  // NaN below 0
         return where(arrayc::isnan(y) || arrayc::isinf(y), x[0], x[0] * 2.0) + cast(arrayc::isfinite(y), DType::Float64);
       }},
      {"log1p", {pos}, [](const Args& x) { return arrayc::log1p(x[0]); }},
      {"expm1", {t43}, [](const Args& x) { return arrayc::expm1(x[0]); }},
      {"log2", {pos}, [](const Args& x) { return arrayc::log2(x[0]); }},
      {"log10", {pos}, [](const Args& x) { return arrayc::log10(x[0]); }},
      {"exp2", {t43}, [](const Args& x) { return arrayc::exp2(x[0]); }},
      {"tan", {f64({3, 4}, 30, -1.2, 1.2)}, [](const Args& x) { return arrayc::tan(x[0]); }, -1.2, 1.2},
      {"arcsin", {f64({3, 4}, 31, -0.9, 0.9)}, [](const Args& x) { return arrayc::arcsin(x[0]); }, -0.9, 0.9},
      {"arccos", {f64({3, 4}, 32, -0.9, 0.9)}, [](const Args& x) { return arrayc::arccos(x[0]); }, -0.9, 0.9},
      {"arctan", {t43}, [](const Args& x) { return arrayc::arctan(x[0]); }},
      {"sinh", {t43}, [](const Args& x) { return arrayc::sinh(x[0]); }},
      {"cosh", {t43}, [](const Args& x) { return arrayc::cosh(x[0]); }},
      {"arcsinh", {t43}, [](const Args& x) { return arrayc::arcsinh(x[0]); }},
      {"erf", {t43}, [](const Args& x) { return arrayc::erf(x[0]); }},
      {"sigmoid", {t43}, [](const Args& x) { return arrayc::sigmoid(x[0]); }},
      {"arctan2", {b314, b24}, [](const Args& x) { return arrayc::arctan2(x[0], x[1]); }},
      {"hypot", {b314, b24}, [](const Args& x) { return arrayc::hypot(x[0], x[1]); }},
      {"fmod", {f64({3, 1, 4}, 33, -3, 3), d24}, [](const Args& x) { return arrayc::fmod(x[0], x[1]); }},
      {"fmod negative divisor", {f64({3, 4}, 34, -3, 3)}, [](const Args& x) { return arrayc::fmod(x[0], -0.7); }},
      {"remainder", {f64({3, 1, 4}, 35, -3, 3), d24}, [](const Args& x) { return arrayc::remainder(x[0], x[1]); }},
      {"remainder negative divisor", {f64({3, 4}, 36, -3, 3), f64({4}, 37, -2, -0.5)},
       [](const Args& x) { return arrayc::remainder(x[0], x[1]); }, -2, -0.5},
      {"floor_divide", {b314, d24}, [](const Args& x) { return arrayc::floor_divide(x[0], x[1]) * x[0] + x[1]; }},
      {"integer ops", {t43}, [](const Args& x) {
         Array i = cast(x[0] * 10.0, DType::Int32);
         Array bits = bitwise_xor(bitwise_or(bitwise_and(i, 6), left_shift(i, 1)), right_shift(invert(i), 2));
         return cast(bits, DType::Float64) * x[0] + cast(logical_xor(x[0] > 1.0, x[0] < 1.5), DType::Float64);
       }},
      // Indexing
      {"slice", {f64({5, 6}, 40)}, [](const Args& x) { return x[0][{Slice(1, 4), Slice(none, none, -2)}]; }},
      {"slice of slice", {f64({5, 6}, 41)},
       [](const Args& x) { return x[0][{Slice(none, none, 2), Slice(1, none)}][{Slice(none, none, -1), 1}] * 3.0; }},
      {"integer index", {f64({3, 4}, 42)}, [](const Args& x) { return x[0][1] * x[0][{_, 2}][0]; }},
      {"take", {f64({3, 4}, 43)}, [](const Args& x) { return take(x[0], i64({2, 3}, {3, 0, -1, 3, 1, 3}), 1); }},
      {"take flat", {f64({3, 4}, 44)}, [](const Args& x) { return take(x[0], i64({5}, {11, 0, 11, -12, 40})); }},
      {"take_along_axis", {f64({3, 4}, 45)},
       [](const Args& x) { return take_along_axis(x[0], i64({3, 2}, {0, 3, 3, 3, -1, 2}), 1); }},
      // Along one axis
      {"cumsum", {f64({3, 4}, 46)}, [](const Args& x) { return cumsum(x[0], 1) + cumsum(x[0], 0); }},
      {"cumsum flat", {t43}, [](const Args& x) { return cumsum(x[0]); }},
      {"cumprod", {f64({3, 4}, 47)}, [](const Args& x) { return cumprod(x[0], 1) + cumprod(x[0], 0); }},
      {"cumprod with zeros", {make_array(DType::Float64, {3, 5}, {0, 1.5, 2, 0, -1, 2, 0, -1, 0.5, 3, 1.5, 2, -1, 0.5, 0})},
       [](const Args& x) { return cumprod(x[0], 1) + cumprod(x[0], 0); }},
      {"sort", {t43}, [](const Args& x) { return sort(x[0], 0) + sort(x[0], -1); }},
      {"argsort", {t43}, [](const Args& x) { return take_along_axis(x[0], argsort(x[0], 1), 1) * x[0]; }},
  };
}

TEST(Grad, EveryOpAgainstFiniteDifferences) {
  for (const OpCase& c : op_cases()) {
    SCOPED_TRACE(c.name);
    auto op = c.op;
    check_grads([op](const Args& x) { return weighted(op(x)); }, c.args);
  }
}

TEST(Grad, CastIsExact) {
  Array x = random_array(DType::Float32, {5}, 3);
  Array w = random_array(DType::Float64, {5}, 4);
  Array g = grad([&](const Array& a) { return sum(cast(a, DType::Float64) * w); })(x);
  EXPECT_EQ(g.dtype(), DType::Float32);
  EXPECT_EQ(g.to_vector<float>(), cast(w, DType::Float32).to_vector<float>());
  // Through an integer: no gradient (as JAX: zero).
  Array z = grad([](const Array& a) { return sum(cast(cast(a, DType::Int32), DType::Float32)); })(x);
  EXPECT_EQ(z.to_vector<float>(), std::vector<float>(5, 0.0f));
}

TEST(Grad, MaximumTiesSplitTheCotangentAsJax) {
  Array x = make_array(DType::Float32, {3}, {-1, 0, 2});
  Array g = grad([](const Array& a) { return sum(maximum(a, 0.0f)); })(x);
  EXPECT_EQ(g.to_vector<float>(), (std::vector<float>{0, 0.5f, 1}));
  Array m = grad([](const Array& a) { return max(a); })(make_array(DType::Float32, {4}, {3, 1, 3, 2}));
  EXPECT_EQ(m.to_vector<float>(), (std::vector<float>{0.5f, 0, 0.5f, 0}));
}

// Tied elements: finite differences average the tied slots' weights; the gradient gives each
// element the cotangent of the slot the stable sort put it in (JAX does the same).
TEST(Grad, SortTiesFollowTheStableOrder) {
  Array x = make_array(DType::Float64, {4}, {1, 2, 1, 0}), w = make_array(DType::Float64, {4}, {10, 20, 30, 40});
  Array g = grad([&](const Array& a) { return sum(sort(a) * w); })(x);
  EXPECT_EQ(host(g), (std::vector<double>{20, 40, 30, 10}));
  // argsort has no gradient: only the values read through it do.
  Array h = grad([&](const Array& a) { return sum(cast(argsort(a), DType::Float64) * a); })(x);
  EXPECT_EQ(host(h), (std::vector<double>{3, 0, 2, 1}));  // argsort's own values
}

// take with repeated indices: every read adds its cotangent (a scatter-add).
TEST(Grad, TakeAccumulatesRepeatedIndices) {
  Array x = make_array(DType::Float32, {2, 3}, {1, 2, 3, 4, 5, 6});
  Array g = grad([](const Array& a) { return sum(take(a, i64({4}, {2, 2, -1, 0}), 1)); })(x);
  EXPECT_EQ(g.to_vector<float>(), (std::vector<float>{1, 0, 3, 1, 0, 3}));
  // An out-of-range index reads the clamped element, so its cotangent goes there.
  Array c = grad([](const Array& a) { return sum(take(a, i64({2}, {7, -9}))); })(x);
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{1, 0, 0, 0, 0, 1}));
}

// jvp (the transposed pullback) of the new ops: the tangent of weighted(op(x)) along t equals
// grad . t.
TEST(Grad, JvpOfEveryOpMatchesGrad) {
  for (const OpCase& c : op_cases()) {
    SCOPED_TRACE(c.name);
    auto op = c.op;
    Fn f = [op](const Args& x) { return weighted(op(x)); };
    Args tangents;
    for (size_t k = 0; k < c.args.size(); ++k) tangents.push_back(f64(c.args[k].shape(), 70 + k));
    auto [outs, tans] = jvp([&](const std::vector<Array>& in) { return std::vector<Array>{f(in)}; }, c.args, tangents);
    double want = 0;
    for (size_t k = 0; k < c.args.size(); ++k) {
      std::vector<double> g = numeric_grad(f, c.args, k), t = host(tangents[k]);
      for (size_t i = 0; i < g.size(); ++i) want += g[i] * t[i];
    }
    EXPECT_TRUE(close(host(tans[0]), {want}, 1e-6, 1e-6));
  }
}

// float16 and bfloat16 differentiate like float32, at their own precision: the rules compute in
// the input's dtype, so the gradient has it too.
TEST(Grad, HalfPrecisionDtypes) {
  for (DType t : {DType::Float16, DType::BFloat16}) {
    SCOPED_TRACE(dtype_name(t));
    Array x32 = random_array(DType::Float32, {2, 8}, 1, -1, 1);
    Array x = cast(x32, t);
    auto f = [](const Array& a) {
      return sum(arrayc::sin(a) * arrayc::exp(a) + take(a, i64({3}, {0, 1, 0}), 0)[1]) +
             sum(arrayc::sigmoid(a[{_, Slice(none, none, -3)}] * 2.0)) + sum(a[{_, Slice(0, 3)}] * a[0][1]);
    };
    Array g = grad(f)(x);
    EXPECT_EQ(g.dtype(), t);
    EXPECT_EQ(g.shape(), x.shape());
    Array want = grad(f)(cast(x, DType::Float32));
    double tol = t == DType::Float16 ? 2e-2 : 1e-1;
    EXPECT_TRUE(close(host(g), host(want), tol, tol));
    EXPECT_TRUE(close(host(jit(grad(f))(x)), host(g), 0, 0));
  }
}

// ---- Random graphs --------------------------------------------------------------------------

// A random expression over x [3,4] and y [4] from the differentiable ops, every value kept in a
// range where finite differences are accurate.
Array random_expr(std::mt19937& rng, int depth, const Array& x, const Array& y) {
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  if (depth == 0) return pick(3) ? x : y;
  auto sub = [&] { return random_expr(rng, depth - 1, x, y); };
  switch (pick(16)) {
    case 0: return arrayc::sin(sub());
    case 1: return arrayc::cos(sub());
    case 2: return arrayc::tanh(sub());
    case 3: return arrayc::exp(arrayc::tanh(sub()));
    case 4: { Array e = sub(); return arrayc::log(e * e + 1.0); }
    case 5: { Array e = sub(); return arrayc::sqrt(e * e + 0.5); }
    case 6: return sub() + sub();
    case 7: return sub() - sub();
    case 8: return sub() * sub();
    case 9: { Array d = sub(); return sub() / (d * d + 1.0); }
    case 10: return arrayc::maximum(sub(), sub());
    case 11: { Array a = sub(), b = sub(); return where(a > b, a * 2.0, b); }
    case 12: return broadcast_to(sum(sub(), {0}) * 0.3, {3, 4});
    case 13: return broadcast_to(mean(sub()), {4});
    case 14: return reshape(transpose(reshape(broadcast_to(sub(), {3, 4}), {2, 6})), {3, 4});
    default: {
      Array a = broadcast_to(sub(), {3, 4}), b = broadcast_to(sub(), {3, 4});
      return dot(dot(a, transpose(b)), broadcast_to(sub(), {3, 4})) * 0.1;
    }
  }
}

TEST(Grad, RandomGraphsAgainstFiniteDifferences) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Fn f = [seed](const Args& a) {
      std::mt19937 rng(seed);
      return weighted(broadcast_to(random_expr(rng, 4, a[0], a[1]), {3, 4}), seed);
    };
    check_grads(f, {f64({3, 4}, seed * 2), f64({4}, seed * 2 + 1)});
  }
}

// ---- Reverse mode API -----------------------------------------------------------------------

TEST(Grad, ValueAndGradAndArgnums) {
  Array x = random_array(DType::Float32, {4}, 1), w = random_array(DType::Float32, {4}, 2);
  auto f = [](const Array& a, const Array& b) { return sum(a * a * b); };
  auto [v, g] = value_and_grad(f)(x, w);
  EXPECT_TRUE(v.is_evaluated());
  EXPECT_TRUE(g.is_evaluated());
  EXPECT_FLOAT_EQ(v.item<float>(), sum(x * x * w).item<float>());
  EXPECT_EQ(g.to_vector<float>(), (2.0f * x * w).to_vector<float>());
  std::vector<Array> both = grad(f, {0, 1})(x, w);
  ASSERT_EQ(both.size(), 2u);
  EXPECT_EQ(both[1].to_vector<float>(), (x * x).to_vector<float>());
  Array gw = grad(f, 1)(x, w);
  EXPECT_EQ(gw.to_vector<float>(), (x * x).to_vector<float>());
  // The same array as two arguments: each is its own variable.
  Array gx = grad(f, 0)(x, x);
  EXPECT_EQ(gx.to_vector<float>(), (2.0f * x * x).to_vector<float>());
  // An argument the result does not depend on: zeros.
  Array unused = grad([](const Array& a, const Array& b) { return sum(b); })(x, w);
  EXPECT_EQ(unused.to_vector<float>(), std::vector<float>(4, 0.0f));
}

TEST(Grad, VjpAndJvp) {
  Array x = f64({3, 4}, 1), w = f64({4, 2}, 2);
  auto f = [](const Array& a, const Array& b) { return std::vector<Array>{dot(a, b), sum(arrayc::sin(a))}; };
  auto [y, pullback] = vjp(f, x, w);
  ASSERT_EQ(y.size(), 2u);
  Array ct0 = f64({3, 2}, 3), ct1 = f64({}, 4);
  std::vector<Array> g = pullback({ct0, ct1});
  ASSERT_EQ(g.size(), 2u);
  Array want_x = matmul(ct0, transpose(w)) + arrayc::cos(x) * ct1;
  EXPECT_TRUE(close(host(g[0]), host(want_x), 1e-12, 1e-12));
  EXPECT_TRUE(close(host(g[1]), host(matmul(transpose(x), ct0)), 1e-12, 1e-12));

  // jvp against finite differences along the tangent.
  Array tx = f64({3, 4}, 5), tw = f64({4, 2}, 6);
  auto fv = [](const std::vector<Array>& in) { return std::vector<Array>{arrayc::tanh(dot(in[0], in[1])), sum(arrayc::exp(in[0]))}; };
  auto [outs, tans] = jvp(fv, {x, w}, {tx, tw});
  ASSERT_EQ(tans.size(), 2u);
  double eps = 1e-6;
  for (size_t j = 0; j < 2; ++j) {
    std::vector<double> p = host(fv({x + tx * eps, w + tw * eps})[j]), m = host(fv({x - tx * eps, w - tw * eps})[j]);
    std::vector<double> fd(p.size());
    for (size_t i = 0; i < p.size(); ++i) fd[i] = (p[i] - m[i]) / (2 * eps);
    EXPECT_TRUE(close(host(tans[j]), fd, 1e-6, 1e-7)) << "output " << j;
    EXPECT_TRUE(close(host(outs[j]), host(fv({x, w})[j]), 0, 0));
  }
}

TEST(Grad, SecondDerivative) {
  Array x = f64({5}, 1);
  auto f = [](const Array& a) { return sum(arrayc::sin(a) * a); };
  Array gg = grad([&](const Array& a) { return sum(grad(f)(a)); })(x);
  // d/dx (cos(x) x + sin(x)) = 2 cos(x) - x sin(x)
  EXPECT_TRUE(close(host(gg), host(2.0 * arrayc::cos(x) - x * arrayc::sin(x)), 1e-12, 1e-12));
}

// The rules of the indexing and axis ops are built from ops with rules, so they differentiate
// again: grad of (x -> grad(f)(x) . v) against finite differences of grad(f).
TEST(Grad, SecondDerivativesOfIndexAndAxisOps) {
  Array x = f64({2, 3}, 80, 0.5, 1.5), v = f64({2, 3}, 81);
  std::vector<std::pair<const char*, std::function<Array(const Array&)>>> cases = {
      {"slice", [](const Array& a) { Array s = a[{_, Slice(none, none, -2)}]; return sum(s * s * s); }},
      {"take", [](const Array& a) { Array t = take(a, i64({3}, {2, 0, 2}), 1); return sum(t * t * t); }},
      {"cumsum", [](const Array& a) { Array c = cumsum(a, 1); return sum(c * c * c); }},
      {"cumprod", [](const Array& a) { return weighted(cumprod(a, 1)); }},
      {"sort", [](const Array& a) { Array s = sort(a, 1); return weighted(s * s * s); }},
  };
  for (auto& [name, f] : cases) {
    SCOPED_TRACE(name);
    auto fn = f;
    Fn h = [fn, v](const Args& a) { return sum(grad(fn)(a[0]) * v); };
    Array hh = grad([&](const Array& a) { return h({a}); })(x);
    EXPECT_TRUE(close(host(hh), numeric_grad(h, {x}, 0), 1e-5, 1e-6));
  }
}

// ---- Composition with jit ----------------------------------------------------------------------

Array mlp_loss(const Array& w1, const Array& w2, const Array& x, const Array& onehot) {
  Array h = maximum(matmul(x, w1), 0.0f);
  Array logits = matmul(h, w2);
  Array m = max(logits, {1}, true);
  Array lse = arrayc::log(sum(arrayc::exp(logits - m), {1}, true)) + m;
  return -mean(sum(onehot * (logits - lse), {1}));
}

TEST(Grad, ComposesWithJit) {
  Array w1 = random_array(DType::Float32, {8, 16}, 1, -0.5, 0.5), w2 = random_array(DType::Float32, {16, 4}, 2, -0.5, 0.5);
  Array x = random_array(DType::Float32, {6, 8}, 3), onehot = cast(random_array(DType::Float32, {6, 4}, 4, 0, 1) > 0.7f, DType::Float32);
  auto g = grad(mlp_loss, {0, 1});
  std::vector<Array> eager = g(w1, w2, x, onehot);
  auto jg = jit(g);
  std::vector<Array> jitted;
  StatsDelta d = stats_delta([&] { jitted = jg(w1, w2, x, onehot); });
  EXPECT_EQ(d.traces, 1);
  auto jitted_again = jg(w1, w2, x, onehot);
  EXPECT_EQ(jg.num_traces(), 1);
  // grad of a jitted function traces its body inline.
  std::vector<Array> of_jit = grad(jit(mlp_loss), {0, 1})(w1, w2, x, onehot);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_TRUE(close(host(jitted[i]), host(eager[i]), 1e-5, 1e-6));
    EXPECT_TRUE(close(host(jitted_again[i]), host(jitted[i]), 0, 0));
    EXPECT_TRUE(close(host(of_jit[i]), host(eager[i]), 1e-5, 1e-6));
  }
}

// The backward pass fuses like any graph: the gradient of an elementwise chain is one kernel
// that reads x, and nothing of the forward chain is materialized for it.
TEST(Grad, BackwardPassOfAChainIsOneFusedKernel) {
  Array x = random_array(DType::Float32, {1000}, 1);
  auto f = [](const Array& a) { return sum(arrayc::exp(arrayc::sin(a) * 2.0f + 1.0f) * arrayc::tanh(a)); };
  Stages s = jit(grad(f)).inspect(x);
  EXPECT_EQ(s.kernels.size(), 1u) << s.fused;
  // value_and_grad: the loss's reduction and the gradient's kernel, plus the two forward values
  // both read (exp and tanh: fusion materializes a value two kernels use, as in any graph).
  Stages v = jit(value_and_grad(f)).inspect(x);
  EXPECT_LE(v.kernels.size(), 4u) << v.fused;
}

// ---- vmap -------------------------------------------------------------------------------------

// Example i of `a` along axis 0, as its own array.
Array example(const Array& a, int64_t i) {
  std::vector<double> v = host(a);
  Shape s(a.shape().begin() + 1, a.shape().end());
  int64_t n = shape_numel(s);
  return make_array(a.dtype(), s, std::vector<double>(v.begin() + i * n, v.begin() + (i + 1) * n));
}

// vmap(f) over axis 0 of every argument (not_mapped ones whole) against a loop over examples.
template <size_t N> void check_vmap_n(const Fn& f, const Args& args, const std::vector<int64_t>& in_axes) {
  auto v = vmap(as_fn<N>(f), in_axes);
  auto jv = jit(v);
  Array batched = apply_n<N>(v, args), jitted = apply_n<N>(jv, args);
  int64_t n = -1;
  for (size_t k = 0; k < args.size(); ++k)
    if (in_axes.empty() || in_axes[k] != not_mapped) n = args[k].shape()[0];
  ASSERT_EQ(batched.shape()[0], n);
  for (int64_t i = 0; i < n; ++i) {
    Args ex;
    for (size_t k = 0; k < args.size(); ++k)
      ex.push_back(!in_axes.empty() && in_axes[k] == not_mapped ? args[k] : example(args[k], i));
    EXPECT_TRUE(close(host(example(batched, i)), host(f(ex)), 1e-12, 1e-12)) << "example " << i;
  }
  EXPECT_TRUE(close(host(jitted), host(batched), 1e-12, 1e-12));
}
void check_vmap(const Fn& f, const Args& args, const std::vector<int64_t>& in_axes = {}) {
  if (args.size() == 1) check_vmap_n<1>(f, args, in_axes);
  else check_vmap_n<2>(f, args, in_axes);
}

TEST(Vmap, EveryOpAgainstALoop) {
  for (const OpCase& c : op_cases()) {
    SCOPED_TRACE(c.name);
    // Batch every argument (5 examples), and again with only the first one mapped.
    Args batched;
    for (size_t k = 0; k < c.args.size(); ++k) {
      Shape s{5};
      s.insert(s.end(), c.args[k].shape().begin(), c.args[k].shape().end());
      batched.push_back(f64(s, 50 + k, c.lo, c.hi));
    }
    auto op = c.op;
    if (c.args.size() <= 2) {
      check_vmap(op, batched);
      if (c.args.size() == 2) check_vmap(op, {batched[0], c.args[1]}, {0, not_mapped});
      if (c.args.size() == 2) check_vmap(op, {c.args[0], batched[1]}, {not_mapped, 0});
    } else {
      check_vmap([op, c](const Args& x) { return op({x[0], x[1], c.args[2]}); }, {batched[0], batched[1]});
    }
  }
}

// Gathers whose indices are batched too (the batching rule batches both operands), and the
// sort's gradient, which gathers by its own batched permutation.
TEST(Vmap, GathersWithBatchedIndices) {
  Array xs = f64({4, 3, 5}, 1), idx = i64({4, 2}, {0, 4, -1, 2, 3, 3, 1, 0});
  check_vmap([](const Args& a) { return take(a[0], a[1], 1); }, {xs, idx});
  check_vmap([](const Args& a) { return take(a[0], a[1]); }, {xs, idx});
  check_vmap([](const Args& a) { return take(a[0], a[1], 1); }, {example(xs, 0), idx}, {not_mapped, 0});
  check_vmap([](const Args& a) { return take_along_axis(a[0], argsort(a[0], 0), 0); }, {xs});
  check_vmap([](const Args& a) { return grad([](const Array& x) { return weighted(sort(x, 1)); })(a[0]); }, {xs});
  check_vmap([](const Args& a) { return grad([](const Array& x) { return weighted(take(x, i64({3}, {1, 1, 4}), 1)); })(a[0]); }, {xs});
}

TEST(Vmap, AxesNestingAndUnbatchedOutputs) {
  Array xs = f64({3, 4, 5}, 1);  // mapped over axis 1
  Array y = vmap([](const Array& a) { return sum(a * a, {0}); }, {1}, {0})(xs);
  EXPECT_EQ(y.shape(), (Shape{4, 5}));
  EXPECT_TRUE(close(host(y), host(sum(xs * xs, {0})), 1e-12, 0));
  Array z = vmap([](const Array& a) { return a * 2.0; }, {1}, {2})(xs);
  EXPECT_EQ(z.shape(), (Shape{3, 5, 4}));
  EXPECT_TRUE(close(host(z), host(transpose(xs * 2.0, {0, 2, 1})), 0, 0));
  // Nested: a pairwise function over two batch axes.
  Array a = f64({3, 4}, 2), b = f64({5, 4}, 3);
  auto pair = [](const Array& u, const Array& v) { return dot(u, v); };
  auto inner = vmap(pair, {not_mapped, 0});
  Array all = vmap([&](const Array& u, const Array& bb) { return inner(u, bb); }, {0, not_mapped})(a, b);
  EXPECT_EQ(all.shape(), (Shape{3, 5}));
  EXPECT_TRUE(close(host(all), host(dot(a, transpose(b))), 1e-12, 1e-12));
  // An output that does not depend on the mapped argument is repeated.
  std::vector<Array> r = vmap([](const Array& u) { return std::vector<Array>{u + 1.0, arrayc::full({2}, 7.0, DType::Float64)}; })(a);
  EXPECT_EQ(r[1].shape(), (Shape{3, 2}));
  EXPECT_EQ(host(r[1]), std::vector<double>(6, 7.0));
}

TEST(Vmap, PerExampleGradients) {
  Array w = f64({4, 3}, 1), xs = f64({6, 4}, 2), ys = f64({6, 3}, 3);
  auto loss = [](const Array& w, const Array& x, const Array& y) {
    Array d = arrayc::tanh(dot(x, w)) - y;
    return sum(d * d);
  };
  auto per_example = vmap(grad(loss), {not_mapped, 0, 0});
  Array g = per_example(w, xs, ys);
  ASSERT_EQ(g.shape(), (Shape{6, 4, 3}));
  Array jg = jit(per_example)(w, xs, ys);
  for (int64_t i = 0; i < 6; ++i) {
    Array want = grad(loss)(w, example(xs, i), example(ys, i));
    EXPECT_TRUE(close(host(example(g, i)), host(want), 1e-12, 1e-12)) << i;
  }
  EXPECT_TRUE(close(host(jg), host(g), 1e-12, 1e-12));
}

// grad of a vmapped function: the batch's sum of per-example losses differentiated at once.
TEST(Vmap, GradOfVmap) {
  Array w = f64({4, 3}, 1), xs = f64({6, 4}, 2);
  auto per = [](const Array& w, const Array& x) { return sum(arrayc::sin(dot(x, w))); };
  auto batched = vmap(per, {not_mapped, 0});
  Array g = grad([&](const Array& w, const Array& x) { return sum(batched(w, x)); })(w, xs);
  Array want = grad([&](const Array& w, const Array& x) { return sum(arrayc::sin(matmul(x, w))); })(w, xs);
  EXPECT_TRUE(close(host(g), host(want), 1e-12, 1e-12));
}

// jit(vmap(f)) is one program of as many kernels as f's own, not a loop.
TEST(Vmap, JitOfVmapIsOneProgram) {
  Array m = random_array(DType::Float32, {150, 100}, 1), vs = random_array(DType::Float32, {10, 100}, 2);
  auto mv = [](const Array& a, const Array& v) { return arrayc::tanh(dot(a, v)) * 2.0f; };
  Stages one = jit(mv).inspect(m, example(vs, 0));
  Stages batched = jit(vmap(mv, {not_mapped, 0})).inspect(m, vs);
  EXPECT_EQ(batched.kernels.size(), one.kernels.size()) << batched.fused;
  Array r = jit(vmap(mv, {not_mapped, 0}))(m, vs);
  // The batched product and the one it is compared with are different BLAS calls (gemm against
  // gemm with transposed operands), which sum the 100 float32 terms in different orders on some
  // OpenBLAS cores (seen: 3.7e-5 relative on the 16-core Xeon's SkylakeX kernels).
  EXPECT_TRUE(close(host(r), host(arrayc::tanh(matmul(vs, transpose(m))) * 2.0f), 1e-4, 1e-6));
}

// ---- Errors -------------------------------------------------------------------------------------

TEST(TransformErrors, Messages) {
  Array x = random_array(DType::Float32, {3}, 1), i = random_array(DType::Int32, {3}, 2);
  auto s = [](const Array& a) { return sum(a); };
  EXPECT_TRUE(raises_error([&] { grad(s)(i); }, {"grad: argument 0 is int32[3]", "only float arguments"}));
  EXPECT_TRUE(raises_error([&] { grad([](const Array& a) { return a * 2.0f; })(x); },
                           {"grad: the function must return a float scalar (shape [])", "float32[3]", "vjp"}));
  EXPECT_TRUE(raises_error([&] { grad([](const Array& a) { return sum(a > 0.0f); })(x); },
                           {"grad: the function must return a float scalar", "int64[]"}));
  EXPECT_TRUE(raises_error([&] { grad(s, 3)(x); }, {"grad: argnum 3 is out of range for a function of 1 arguments"}));
  EXPECT_TRUE(raises_error([&] { value_and_grad(s)(i); }, {"value_and_grad: argument 0 is int32[3]"}));
  auto [y, pb] = vjp([](const Array& a) { return a * 2.0f; }, x);
  EXPECT_TRUE(raises_error([&] { pb(arrayc::ones({4})); }, {"vjp: cotangent 0 is float32[4], but output 0 is float32[3]"}));
  EXPECT_TRUE(raises_error([&] { pb(std::vector<Array>{}); }, {"vjp: 0 cotangents given for a function of 1 outputs"}));
  EXPECT_TRUE(raises_error([&] { jvp([](const std::vector<Array>& a) { return a[0]; }, {x}, {i}); },
                           {"jvp: tangent 0 is int32[3], but primal 0 is float32[3]"}));
  auto add = [](const Array& a, const Array& b) { return a + b; };
  EXPECT_TRUE(raises_error([&] { vmap(add)(arrayc::ones({3, 2}), arrayc::ones({4, 2})); },
                           {"vmap: mapped axes differ in size", "argument 0 has 3", "argument 1 (shape [4, 2], axis 0) has 4"}));
  EXPECT_TRUE(raises_error([&] { vmap(s, {2})(arrayc::ones({3, 2})); },
                           {"vmap: in_axes 2 is out of range for argument 0 of shape [3, 2]"}));
  EXPECT_TRUE(raises_error([&] { vmap(s, {not_mapped})(x); }, {"vmap: no argument is mapped"}));
  EXPECT_TRUE(raises_error([&] { vmap(add, {0, 0, 0})(x, x); }, {"vmap: 3 in_axes given for 2 arguments"}));
  EXPECT_TRUE(raises_error([&] { vmap(s, {0}, {2})(arrayc::ones({3, 2})); },
                           {"vmap: out_axes 2 is out of range for output 0 of shape [] per example"}));
  // Errors inside jit keep jit's prefix.
  EXPECT_TRUE(raises_error([&] { jit(grad(s))(i); }, {"in jit-traced function: grad: argument 0 is int32[3]"}));
}

// An op without a rule is an error naming it, never a wrong answer.
TEST(TransformErrors, OpWithoutRuleIsNamed) {
  detail::OpRules& r = detail::op_rules_for_testing(Op::Sin);
  detail::OpRules saved = r;
  r = {};
  Array x = random_array(DType::Float32, {3}, 1);
  auto f = [](const Array& a) { return sum(arrayc::sin(a) * 2.0f); };
  EXPECT_TRUE(raises_error([&] { grad(f)(x); }, {"grad: no gradient rule for 'sin' (op sin, float32[3])"}));
  EXPECT_TRUE(raises_error([&] { vmap(f)(arrayc::ones({2, 3})); },
                           {"vmap: no batching rule for 'sin' (op sin, float32[3] per example)"}));
  // Off the differentiated path, or with nothing batched, it is not needed.
  EXPECT_NO_THROW(grad([](const Array& a, const Array& b) { return sum(arrayc::sin(b) * a); })(x, x));
  r = saved;
}

// Every op of the table: which rules it has. An op added to ops.def without rules shows here,
// and fails this test until its rules are written (or it is listed as having none on purpose).
TEST(TransformRules, OpTableCoverage) {
  std::ostringstream table;
  std::vector<std::string> missing;
  for (int k = 0;; ++k) {
    Op op = static_cast<Op>(k);
#define ARRAYC_OP(name, printed, api, arity, kind) +1
    constexpr int kNumOps = 0
#include "ir/ops.def"
        ;
    if (k >= kNumOps) break;
    const detail::OpRules& r = detail::op_rules(op);
    bool leaf = detail::op_kind(op) == detail::OpKind::Leaf;
    table << "  " << detail::op_name(op) << ": " << (leaf ? "leaf" : std::string(r.vjp ? "grad" : "NO GRAD") + ", " + (r.batch ? "vmap" : "NO VMAP")) << "\n";
    if (!leaf && (!r.vjp || !r.batch)) missing.push_back(detail::op_name(op));
  }
  std::cout << "transformation rules per op:\n" << table.str();
  std::string list;
  for (const std::string& m : missing) list += " " + m;
  EXPECT_TRUE(missing.empty()) << "ops without grad or vmap rules (lib/transforms/rules.cpp):" << list;
}

}  // namespace
