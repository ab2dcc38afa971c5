#include "support/reference.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>
#include <unordered_set>

namespace arrayc_test {

using arrayc::DType;
using arrayc::detail::Op;

double op_ulps(Op op, DType dtype) {
  // GPU scatter: a GPU adds a row's updates with atomics, in no set order, so each update may
  // round either way of the host's index-order sum (in every float dtype).
  if (op == Op::ScatterAdd) return arrayc::is_float(dtype) ? 2 : 0;
  // 16-bit floats compute in float32 and round: the float32 result within its own ULPs of the
  // true value may round to either neighbour of a near-tie, one 16-bit ULP; the correctly
  // rounded ops agree exactly, but the ULP of slack for FMA contraction (on a GPU) stays.
  if (arrayc::is_half(dtype) && op != Op::Sum && op != Op::Mean && op != Op::Prod && op != Op::Dot &&
      op_ulps(op, DType::Float32) > 0)
    return 1;
  switch (op) {
    // Correctly rounded in IEEE arithmetic; 1 ULP of slack lets a JIT contract a*b+c into an FMA.
    case Op::Add: case Op::Sub: case Op::Mul: case Op::Div: return 1;
    case Op::Sqrt: return 1;
    case Op::Exp: case Op::Log: case Op::Sin: case Op::Cos: case Op::Tanh: case Op::Pow: return 4;
    // numpy math (issue 28): the C library's functions beside vmath's (at most 2.7 ULP,
    // docs/math_accuracy.md) or libdevice's (CUDA documents up to 4 ULP for tanf).
    case Op::Log1p: case Op::Expm1: case Op::Log2: case Op::Log10: case Op::Exp2: case Op::Tan:
    case Op::Arcsin: case Op::Arccos: case Op::Arctan: case Op::Arctan2: case Op::Sinh: case Op::Cosh:
    case Op::Arcsinh: case Op::Erf: case Op::Sigmoid: case Op::Hypot:
      return 6;
    // sqrt(-2 log u1) * cos(2 pi u2): three library calls.
    case Op::RandNormal: return 16;
    // Factor of eps * sqrt(n) * (sqrt(sum t^2) + |sum t|), plus these ULPs of the result.
    case Op::Sum: case Op::Mean: case Op::Prod: case Op::Dot: return 2;
    case Op::Cumsum: case Op::Cumprod: return 2;  // scans (issue 28): each prefix as a Sum/Prod
    // Exact: Neg, Abs, Maximum, Minimum, Where, Cast, comparisons, logic, Max, Min, leaves.
    default: return 0;
  }
}

HostArray reference_of(const arrayc::detail::NodeRef& node, const CompareOptions& options) {
  arrayc::detail::InterpretOptions io;
  double scale = options.ulp_scale;
  io.op_ulps = [scale](Op op, DType t) { return scale * op_ulps(op, t); };
  return arrayc::detail::interpret(node, options.params, io);
}

HostArray values_of(const arrayc::Array& a) {
  HostArray h;
  h.dtype = a.dtype();
  h.shape = a.shape();
  if (arrayc::is_float(h.dtype))
    h.f = a.to_vector<double>();
  else
    h.i = a.to_vector<int64_t>();
  return h;
}

namespace {

std::string index_str(int64_t k, const arrayc::Shape& shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] == 0) break;
    idx[d] = k % shape[d];
    k /= shape[d];
  }
  std::ostringstream os;
  os << "[";
  for (size_t d = 0; d < idx.size(); ++d) os << (d ? ", " : "") << idx[d];
  os << "]";
  return os.str();
}

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  std::string s = buf;
  if (v == 0 && std::signbit(v)) s = "-0";
  return s;
}

double max_finite(DType t) {
  switch (t) {
    case DType::Float16: return 65504.0;
    case DType::BFloat16: return 0x1.fep127;
    case DType::Float32: return std::numeric_limits<float>::max();
    default: return std::numeric_limits<double>::max();
  }
}

// Whether a float element passes; `why` gets the reason when it does not.
bool float_ok(double got, double want, double bound, DType t, bool signed_zero, std::string& why) {
  if (std::isnan(want)) {
    if (std::isnan(got)) return true;
    why = "want NaN";
    return false;
  }
  if (std::isinf(want)) {
    if (got == want) return true;
    why = "want an infinity";
    return false;
  }
  if (std::isnan(got)) {
    why = "got NaN";
    return false;
  }
  if (std::isinf(got)) {
    // Overflow is acceptable only when the bound reaches past the largest finite value.
    if ((got > 0) == (want > 0) && std::fabs(want) + bound >= max_finite(t)) return true;
    why = "got an infinity";
    return false;
  }
  if (signed_zero && got == 0 && want == 0 && std::signbit(got) != std::signbit(want)) {
    why = "sign of zero";
    return false;
  }
  if (std::fabs(got - want) <= bound) return true;
  why = "outside the bound";
  return false;
}

}  // namespace

::testing::AssertionResult matches_values(const HostArray& got, const HostArray& want,
                                          const CompareOptions& options) {
  if (got.dtype != want.dtype)
    return ::testing::AssertionFailure() << "dtype: got " << arrayc::dtype_name(got.dtype)
                                         << ", want " << arrayc::dtype_name(want.dtype);
  if (got.shape != want.shape)
    return ::testing::AssertionFailure() << "shape: got " << arrayc::shape_str(got.shape)
                                         << ", want " << arrayc::shape_str(want.shape);
  int64_t n = want.numel();
  bool fl = arrayc::is_float(want.dtype);
  if (static_cast<int64_t>(fl ? got.f.size() : got.i.size()) != n)
    return ::testing::AssertionFailure() << "got " << (fl ? got.f.size() : got.i.size())
                                         << " values, want " << n;
  int64_t bad = 0, unchecked = 0;
  std::ostringstream report;
  for (int64_t k = 0; k < n; ++k) {
    double bound = want.err.empty() ? 0 : want.err[k];
    bool is_nan_want = fl && std::isnan(want.f[k]);
    if (std::isinf(bound) && !is_nan_want) {
      ++unchecked;
      continue;
    }
    std::string why;
    bool ok = fl ? float_ok(got.f[k], want.f[k], bound, want.dtype, options.signed_zero, why)
                 : got.i[k] == want.i[k];
    if (ok) continue;
    if (bad++ < options.max_reports) {
      report << "\n  at " << index_str(k, want.shape) << " (element " << k << "): ";
      if (fl) {
        double u = arrayc::detail::ulp_of(want.f[k], want.dtype);
        double dist = u > 0 ? std::fabs(got.f[k] - want.f[k]) / u : 0;
        report << "got " << num(got.f[k]) << ", want " << num(want.f[k]);
        if (std::isfinite(got.f[k]) && std::isfinite(want.f[k]))
          report << " (" << num(dist) << " ulp; allowed " << num(u > 0 ? bound / u : bound) << " ulp)";
        report << ": " << why;
      } else {
        report << "got " << got.i[k] << ", want " << want.i[k];
      }
    }
  }
  if (bad > 0)
    return ::testing::AssertionFailure()
           << bad << " of " << n << " elements differ from the reference (" << arrayc::dtype_name(want.dtype)
           << " " << arrayc::shape_str(want.shape) << ")" << report.str();
  if (n > 0 && unchecked == n)
    return ::testing::AssertionFailure() << "no element of " << n
                                         << " could be checked: every error bound is infinite";
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult matches_reference(const arrayc::Array& got,
                                             const arrayc::detail::NodeRef& graph,
                                             const CompareOptions& options) {
  HostArray want;
  try {
    want = reference_of(graph, options);
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "the reference interpreter raised: " << e.what();
  }
  HostArray have;
  try {
    have = values_of(got);
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "evaluating the array raised: " << e.what();
  }
  return matches_values(have, want, options);
}

::testing::AssertionResult matches_reference(const arrayc::Array& a, const CompareOptions& options) {
  arrayc::detail::NodeRef graph = a.node();  // before evaluation replaces it with a buffer
  return matches_reference(a, graph, options);
}

void expect_matches_reference(const arrayc::Array& a, const CompareOptions& options) {
  EXPECT_TRUE(matches_reference(a, options));
}

StatsDelta stats_delta(const std::function<void()>& f) {
  arrayc::Stats before = arrayc::stats();
  f();
  arrayc::Stats after = arrayc::stats();
  return {after.traces - before.traces, after.compiles - before.compiles,
          after.cache_hits - before.cache_hits, after.kernel_launches - before.kernel_launches,
          after.plans - before.plans, after.resizes - before.resizes};
}

int64_t count_compute_nodes(const arrayc::detail::NodeRef& root) {
  std::unordered_set<const arrayc::detail::Node*> seen;
  std::vector<const arrayc::detail::Node*> stack{root.get()};
  int64_t count = 0;
  while (!stack.empty()) {
    const arrayc::detail::Node* n = stack.back();
    stack.pop_back();
    if (!seen.insert(n).second) continue;
    arrayc::detail::OpKind kind = n->info().kind;
    if (kind != arrayc::detail::OpKind::Leaf && kind != arrayc::detail::OpKind::View) ++count;
    for (const auto& in : n->inputs) stack.push_back(in.get());
  }
  return count;
}

}  // namespace arrayc_test
