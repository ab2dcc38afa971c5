#include "check.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>

#include "ir/node.h"

namespace bench {

using arrayc::detail::HostArray;
using arrayc::detail::Op;

double reference_ulps(Op op, DType dtype) {
  switch (op) {
    // Correctly rounded in IEEE arithmetic; 1 ULP of slack lets a JIT contract a*b+c into an FMA.
    case Op::Add: case Op::Sub: case Op::Mul: case Op::Div: case Op::Sqrt: return 1;
    case Op::Exp: case Op::Log: case Op::Sin: case Op::Cos: case Op::Tanh: case Op::Pow: return 4;
    case Op::RandNormal: return 16;
    case Op::Sum: case Op::Mean: case Op::Prod: case Op::Dot: return 2;
    // GPU scatter: a GPU adds a row's updates with atomics, in no set order.
    case Op::ScatterAdd: return arrayc::is_float(dtype) ? 2 : 0;
    default: return 0;  // exact: Neg, Abs, Where, comparisons, views, leaves
  }
}

HostArray interpret_with_bounds(const Array& root) {
  arrayc::detail::InterpretOptions options;
  options.op_ulps = reference_ulps;
  return arrayc::detail::interpret(root.node(), {}, options);
}

Instance::Reference reference_from(const HostArray& h, std::vector<int64_t> index, std::string note) {
  Instance::Reference r;
  int64_t n = h.numel();
  if (index.empty()) {
    index.resize(static_cast<size_t>(n));
    std::iota(index.begin(), index.end(), int64_t{0});
  }
  r.index = std::move(index);
  r.want.resize(static_cast<size_t>(n));
  r.bound.resize(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    r.want[k] = h.as_double(k);
    r.bound[k] = h.err.empty() ? 0 : h.err[k];
  }
  r.note = std::move(note);
  return r;
}

namespace {

double eps_of(DType t) {
  switch (t) {
    case DType::Float16: return 0x1p-10;
    case DType::BFloat16: return 0x1p-7;
    case DType::Float32: return std::numeric_limits<float>::epsilon();
    default: return std::numeric_limits<double>::epsilon();
  }
}

// Whether `got` may stand for `want`: NaN only for NaN, an infinity only for the same one.
bool special_ok(double got, double want, bool& decided) {
  decided = true;
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got);
  if (std::isinf(want) || std::isinf(got)) return got == want;
  decided = false;
  return true;
}

void report(std::string& msg, int& shown, int64_t at, double got, double want, double allowed) {
  if (shown++ >= 5) return;
  msg += fmt("\n    at %lld: got %.9g, want %.9g (|diff| %.3g, allowed %.3g)",
             static_cast<long long>(at), got, want, std::fabs(got - want), allowed);
}

}  // namespace

std::string check_reference(const Values& got, const Instance::Reference& ref, DType dtype) {
  int64_t n = static_cast<int64_t>(got.v.size());
  int64_t bad = 0, checked = 0;
  int shown = 0;
  std::string msg;
  for (size_t k = 0; k < ref.index.size(); ++k) {
    int64_t at = ref.index[k];
    if (at >= n) return fmt("output has %lld elements, the reference expects index %lld",
                            static_cast<long long>(n), static_cast<long long>(at));
    double g = got.v[at], w = ref.want[k], b = ref.bound[k];
    bool decided;
    bool ok = special_ok(g, w, decided);
    if (!decided) {
      if (std::isinf(b)) continue;  // undecidable element (e.g. a comparison at a tie)
      ok = std::fabs(g - w) <= b;
    }
    ++checked;
    if (!ok) {
      ++bad;
      report(msg, shown, at, g, w, b);
    }
  }
  if (bad > 0)
    return fmt("%lld of %lld checked elements differ from the reference interpreter (%s):",
               static_cast<long long>(bad), static_cast<long long>(checked), arrayc::dtype_name(dtype)) +
           msg;
  if (checked == 0) return "no element could be checked against the reference interpreter";
  (void)dtype;
  return "";
}

std::string check_pair(const Values& a, const Values& b, DType dtype, double ulps, const char* a_name,
                       const char* b_name) {
  if (a.shape != b.shape)
    return fmt("%s has shape %s, %s has shape %s", a_name, arrayc::shape_str(a.shape).c_str(), b_name,
               arrayc::shape_str(b.shape).c_str());
  double sq = 0;
  int64_t finite = 0;
  for (double x : b.v)
    if (std::isfinite(x)) sq += x * x, ++finite;
  double rms = finite ? std::sqrt(sq / static_cast<double>(finite)) : 0;
  double eps = eps_of(dtype);
  int64_t bad = 0;
  int shown = 0;
  std::string msg;
  for (size_t k = 0; k < a.v.size(); ++k) {
    double x = a.v[k], y = b.v[k];
    bool decided;
    bool ok = special_ok(x, y, decided);
    double allowed = ulps * eps * (std::fabs(y) + rms);
    if (!decided) ok = std::fabs(x - y) <= allowed;
    if (!ok) {
      ++bad;
      report(msg, shown, static_cast<int64_t>(k), x, y, allowed);
    }
  }
  if (bad > 0)
    return fmt("%lld of %zu elements of %s differ from %s (tolerance %g ulp x (|%s| + rms)):",
               static_cast<long long>(bad), a.v.size(), a_name, b_name, ulps, b_name) +
           msg;
  return "";
}

std::vector<int64_t> sample_indices(int64_t n, int64_t count) {
  std::vector<int64_t> idx;
  if (n <= count) {
    idx.resize(static_cast<size_t>(n));
    std::iota(idx.begin(), idx.end(), int64_t{0});
    return idx;
  }
  const int64_t edge = std::min<int64_t>(1024, count / 4);
  for (int64_t i = 0; i < edge; ++i) idx.push_back(i), idx.push_back(n - 1 - i);
  uint64_t h = 0x9E3779B97F4A7C15ull;
  while (static_cast<int64_t>(idx.size()) < count) {
    h = h * 6364136223846793005ull + 1442695040888963407ull;  // Knuth's MMIX LCG
    idx.push_back(static_cast<int64_t>((h >> 11) % static_cast<uint64_t>(n)));
  }
  std::sort(idx.begin(), idx.end());
  idx.erase(std::unique(idx.begin(), idx.end()), idx.end());
  return idx;
}

}  // namespace bench
