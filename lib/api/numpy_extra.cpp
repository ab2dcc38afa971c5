// arrayc/numpy_extra.h: more of numpy's main namespace, composed of the graph's ops (views,
// elementwise ops, reductions, sorts, gathers, products). The few whose result's shape depends on
// the values (nonzero, argwhere, unique, bincount) evaluate their input, outside jit only.
#include "arrayc/numpy_extra.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <tuple>

#include "arrayc/format.h"
#include "arrayc/indexing.h"
#include "arrayc/math.h"
#include "arrayc/ops.h"
#include "arrayc/reduce_ops.h"
#include "ir/build.h"
#include "ir/graph.h"

namespace arrayc {
namespace {

[[noreturn]] void fail(const std::string& msg) { throw Error(msg); }

int64_t axis_of(const char* op, int64_t axis, const Array& a) {
  int64_t r = a.ndim();
  if (axis < -r || axis >= r)
    fail(std::string(op) + ": axis " + std::to_string(axis) + " is out of range for an array of rank " +
         std::to_string(r) + " (shape " + shape_str(a.shape()) + ")");
  return axis < 0 ? axis + r : axis;
}

std::vector<int64_t> every_axis(const Array& a) {
  std::vector<int64_t> axes(static_cast<size_t>(a.ndim()));
  std::iota(axes.begin(), axes.end(), 0);
  return axes;
}

// A scalar of a's dtype and device.
Array same(double v, const Array& a) { return full({}, v, a.dtype(), a.device()); }

// a[..., start:stop, ...] along `axis`.
Array slice_along(const Array& a, int64_t axis, int64_t start, int64_t stop) {
  std::vector<Index> idx(static_cast<size_t>(axis), Index(_));
  idx.push_back(Slice(start, stop));
  return a[idx];
}

// arange(n) shaped to lie along `axis` of a rank-`rank` array (int64).
Array iota_along(int64_t n, int64_t axis, int64_t rank, Device device) {
  Shape s(static_cast<size_t>(rank), 1);
  s[axis] = n;
  return reshape(arange(n, DType::Int64, device), s);
}

// These ops read their input's values when the graph is built (the number of elements of their
// result depends on them, or they count on the host); inside jit the values are not known then.
void refuse_in_jit(const char* op, const Array& a, const char* instead,
                   const char* why = "the result's shape depends on the values of the input ") {
  for (const detail::NodeRef& n : detail::topo_order({a.node()}))
    if (n->op == detail::Op::Param)
      fail(std::string(op) + ": " + why + shape_str(a.shape()) + ", which jit cannot trace; " + instead);
}

// a < b in the order sort uses (NaN after everything).
Array sort_less(const Array& a, const Array& b) {
  if (!is_float(a.dtype()) && !is_float(b.dtype())) return a < b;
  return (a < b) || (isnan(b) && !isnan(a));
}

}  // namespace

// ---- Creation -------------------------------------------------------------------------------------

Array empty(const Shape& shape, DType dtype, Device device) { return zeros(shape, dtype, device); }

Array copy(const Array& a) { return Array(detail::make_copy(a.node())); }

Array logspace(double start, double stop, int64_t num, bool endpoint, double base, DType dtype, Device device) {
  Array y = linspace(start, stop, num, endpoint, DType::Float64, device);
  return cast(pow(full({}, base, DType::Float64, device), y), dtype);
}

std::vector<Array> meshgrid(const std::vector<Array>& xs, const std::string& indexing) {
  if (indexing != "xy" && indexing != "ij")
    fail("meshgrid: indexing must be \"xy\" or \"ij\", not \"" + indexing + "\"");
  size_t n = xs.size();
  Shape out;
  for (const Array& x : xs) out.push_back(x.size());
  bool xy = indexing == "xy" && n >= 2;
  if (xy) std::swap(out[0], out[1]);
  std::vector<Array> grids;
  for (size_t i = 0; i < n; ++i) {
    Shape s(n, 1);
    size_t pos = xy && i < 2 ? 1 - i : i;
    s[pos] = xs[i].size();
    grids.push_back(broadcast_to(reshape(xs[i], s), out));
  }
  return grids;
}

Array diagonal(const Array& a, int64_t offset, int64_t axis1_in, int64_t axis2_in) {
  if (a.ndim() < 2)
    fail("diagonal: the array must have at least two dimensions, got shape " + shape_str(a.shape()));
  int64_t ax1 = axis_of("diagonal", axis1_in, a), ax2 = axis_of("diagonal", axis2_in, a);
  if (ax1 == ax2)
    fail("diagonal: axis1 and axis2 cannot be the same (both " + std::to_string(ax1) + ", shape " +
         shape_str(a.shape()) + ")");
  int64_t r = a.ndim();
  Array m = moveaxis(a, {ax1, ax2}, {r - 2, r - 1});
  int64_t n1 = m.shape()[r - 2], n2 = m.shape()[r - 1];
  int64_t r0 = offset < 0 ? -offset : 0, c0 = offset > 0 ? offset : 0;
  int64_t len = std::max<int64_t>(0, std::min(n1 - r0, n2 - c0));
  Shape out(m.shape().begin(), m.shape().end() - 2);
  out.push_back(len);
  if (shape_numel(out) == 0) return zeros(out, a.dtype(), a.device());
  Array block = m[{ellipsis, Slice(r0, r0 + len), Slice(c0, c0 + len)}];
  Array idx = iota_along(len, r - 2, r, a.device());  // element [..., i, i] of the block
  return reshape(take_along_axis(block, idx, r - 1), out);
}

Array diag(const Array& v, int64_t k) {
  if (v.ndim() == 2) return diagonal(v, k);
  if (v.ndim() != 1) fail("diag: input must be 1-D or 2-D, got shape " + shape_str(v.shape()));
  int64_t n = v.size() + std::abs(k);
  Array rows = iota_along(n, 0, 2, v.device()), cols = iota_along(n, 1, 2, v.device());
  // Row i holds v[i] (k >= 0) or column j holds v[j] (k < 0), padded to n.
  Array padded = pad(v, {{0, std::abs(k)}});
  Array values = k >= 0 ? reshape(padded, {n, 1}) : reshape(padded, {1, n});
  return where(rows + k == cols, values, same(0, v));
}

namespace {
Array triangle(const char* op, bool lower, const Array& a_in, int64_t k) {
  if (a_in.ndim() == 0) fail(std::string(op) + ": the array must have at least one dimension, got a scalar");
  Array a = a_in.ndim() == 1 ? broadcast_to(a_in, {a_in.size(), a_in.size()}) : a_in;
  int64_t r = a.ndim();
  Array rows = iota_along(a.shape()[r - 2], r - 2, r, a.device());
  Array cols = iota_along(a.shape()[r - 1], r - 1, r, a.device());
  Array keep = lower ? cols <= rows + k : cols >= rows + k;
  return where(keep, a, same(0, a));
}
}  // namespace

Array tril(const Array& a, int64_t k) { return triangle("tril", true, a, k); }
Array triu(const Array& a, int64_t k) { return triangle("triu", false, a, k); }

// ---- Joining --------------------------------------------------------------------------------------

Array vstack(const std::vector<Array>& arrays) {
  std::vector<Array> rows;
  for (const Array& a : arrays) rows.push_back(a.ndim() >= 2 ? a : reshape(a, {1, a.size()}));
  return concatenate(rows, 0);
}

Array hstack(const std::vector<Array>& arrays) {
  if (arrays.empty()) fail("hstack: need at least one array to concatenate");
  std::vector<Array> xs;
  for (const Array& a : arrays) xs.push_back(a.ndim() == 0 ? reshape(a, {1}) : a);
  return concatenate(xs, xs[0].ndim() == 1 ? 0 : 1);
}

Array append(const Array& a, const Array& values) { return concatenate({ravel(a), ravel(values)}, 0); }
Array append(const Array& a, const Array& values, int64_t axis) { return concatenate({a, values}, axis); }

// ---- Elementwise ----------------------------------------------------------------------------------

// numpy's square and reciprocal have no bool loop: bool computes as int8.
Array square(const Array& a_in) {
  Array a = a_in.dtype() == DType::Bool ? cast(a_in, DType::Int8) : a_in;
  return a * a;
}

Array reciprocal(const Array& a_in) {
  if (is_float(a_in.dtype())) return divide(same(1, a_in), a_in);
  // Integers: 1 / x truncated.
  Array a = a_in.dtype() == DType::Bool ? cast(a_in, DType::Int8) : a_in;
  Array r = where(a == same(1, a), same(1, a), same(0, a));
  if (is_signed_int(a.dtype())) r = where(a == same(-1, a), same(-1, a), r);
  return r;
}

Array nan_to_num(const Array& a, double nan) {
  double big = 0;
  switch (a.dtype()) {
    case DType::Float16: big = 65504.0; break;
    case DType::BFloat16: big = 3.3895313892515355e38; break;
    case DType::Float32: big = std::numeric_limits<float>::max(); break;
    default: big = std::numeric_limits<double>::max(); break;
  }
  return nan_to_num(a, nan, big, -big);
}

Array nan_to_num(const Array& a, double nan, double posinf, double neginf) {
  if (!is_float(a.dtype())) return a;
  double inf = std::numeric_limits<double>::infinity();
  Array r = where(isnan(a), same(nan, a), a);
  r = where(a == same(inf, a), same(posinf, a), r);
  return where(a == same(-inf, a), same(neginf, a), r);
}

Array isclose(const Array& a, const Array& b, double rtol, double atol, bool equal_nan) {
  Array y = is_float(b.dtype()) ? b : cast(b, DType::Float64);
  Array tol = same(atol, y) + same(rtol, y) * abs(y);
  Array r = ((abs(a - y) <= tol) && isfinite(y)) || (a == y);
  if (equal_nan) r = r || (isnan(a) && isnan(y));
  return r;
}

Array allclose(const Array& a, const Array& b, double rtol, double atol, bool equal_nan) {
  return all(isclose(a, b, rtol, atol, equal_nan));
}

Array array_equal(const Array& a, const Array& b, bool equal_nan) {
  if (a.shape() != b.shape()) return full({}, 0.0, DType::Bool, a.device());
  Array eq = a == b;
  if (equal_nan) eq = eq || (isnan(a) && isnan(b));
  return all(eq);
}

// ---- Reductions -----------------------------------------------------------------------------------

Array average(const Array& a) { return mean(a); }
Array average(const Array& a, const std::vector<int64_t>& axes, bool keepdims) { return mean(a, axes, keepdims); }

namespace {
DType weighted_dtype(const Array& a, const Array& w) {
  DType t = promote_types(a.dtype(), w.dtype());
  return is_float(a.dtype()) ? t : promote_types(t, DType::Float64);
}
Array weighted(const Array& a, const Array& w, const std::vector<int64_t>& axes, bool keepdims) {
  DType t = weighted_dtype(a, w);
  Array wt = cast(w, t);
  return sum(cast(a, t) * wt, axes, keepdims) / sum(wt, axes, keepdims);
}
}  // namespace

Array average(const Array& a, const Array& weights) {
  if (a.shape() != weights.shape())
    fail("average: axis must be specified when the shapes of a " + shape_str(a.shape()) + " and weights " +
         shape_str(weights.shape()) + " differ");
  return weighted(a, weights, every_axis(a), false);
}

Array average(const Array& a, const Array& weights, int64_t axis_in, bool keepdims) {
  int64_t axis = axis_of("average", axis_in, a);
  if (a.shape() == weights.shape()) return weighted(a, weights, {axis}, keepdims);
  if (weights.ndim() != 1)
    fail("average: 1-D weights expected when the shapes of a " + shape_str(a.shape()) + " and weights " +
         shape_str(weights.shape()) + " differ");
  if (weights.size() != a.shape()[axis])
    fail("average: the length of weights " + shape_str(weights.shape()) + " is not that of axis " +
         std::to_string(axis) + " of a " + shape_str(a.shape()));
  Shape s(static_cast<size_t>(a.ndim()), 1);
  s[axis] = weights.size();
  return weighted(a, broadcast_to(reshape(weights, s), a.shape()), {axis}, keepdims);
}

Array nansum(const Array& a) { return nansum(a, every_axis(a), false); }
Array nansum(const Array& a, const std::vector<int64_t>& axes, bool keepdims) {
  if (!is_float(a.dtype())) return sum(a, axes, keepdims);
  return sum(where(isnan(a), same(0, a), a), axes, keepdims);
}

Array nanmean(const Array& a) { return nanmean(a, every_axis(a), false); }
Array nanmean(const Array& a, const std::vector<int64_t>& axes, bool keepdims) {
  if (!is_float(a.dtype())) return mean(a, axes, keepdims);
  Array total = nansum(a, axes, keepdims);
  Array count = sum(!isnan(a), axes, keepdims);
  // numpy divides in float64 and rounds to a's dtype once.
  return cast(cast(total, DType::Float64) / cast(count, DType::Float64), a.dtype());
}

Array count_nonzero(const Array& a) { return count_nonzero(a, every_axis(a), false); }
Array count_nonzero(const Array& a, const std::vector<int64_t>& axes, bool keepdims) {
  return sum(cast(a, DType::Bool), axes, keepdims);
}

Array diff(const Array& a, int64_t n, int64_t axis_in) {
  if (a.ndim() == 0) fail("diff: diff requires input that is at least one dimensional (got a scalar)");
  if (n < 0) fail("diff: order must be non-negative but got " + std::to_string(n));
  int64_t axis = axis_of("diff", axis_in, a);
  Array r = a;
  for (int64_t i = 0; i < n; ++i) {
    int64_t len = r.shape()[axis];
    Array hi = slice_along(r, axis, 1, len), lo = slice_along(r, axis, 0, std::max<int64_t>(len - 1, 0));
    r = a.dtype() == DType::Bool ? not_equal(hi, lo) : hi - lo;
  }
  return r;
}

namespace {
// The result of reducing `axis` of a rank-r array with keepdims, reshaped as asked.
Array drop_axis(const Array& r, int64_t axis, bool keepdims) {
  if (keepdims) return r;
  Shape s = r.shape();
  s.erase(s.begin() + axis);
  return reshape(r, s);
}

// numpy's quantile, method "linear", of the sorted x along axis (n > 0 elements), q in [0, 1].
Array quantile_of_sorted(const Array& s, int64_t axis, int64_t n, double q, DType out) {
  double virt = static_cast<double>(n - 1) * q;
  int64_t prev = static_cast<int64_t>(std::floor(virt)), next = prev + 1;
  double gamma = virt - static_cast<double>(prev);
  auto at = [&](int64_t i) { return cast(slice_along(s, axis, i, i + 1), out); };
  // At or past the last element: the last one (numpy's lerp of it with itself, but an infinite
  // last element stays infinite rather than inf - inf).
  if (virt >= static_cast<double>(n - 1)) return at(n - 1);
  Array a = at(prev), b = at(next);
  Array d = b - a;
  Array g = full({}, gamma, out, s.device());
  return gamma >= 0.5 ? b - d * (same(1, g) - g) : a + d * g;
}

Array quantiles(const char* op, const Array& a_in, std::vector<double> qs, double scale, bool vector_q,
                std::optional<int64_t> axis_in, bool keepdims) {
  for (double& q : qs) {
    if (!(q >= 0 && q <= scale))
      fail(std::string(op) + ": " + (scale == 1 ? "quantiles" : "percentiles") + " must be in the range [0, " +
           (scale == 1 ? "1" : "100") + "], got " + std::to_string(q));
    q /= scale;
  }
  Array a = axis_in ? a_in : reshape(a_in, {a_in.size()});
  int64_t axis = axis_in ? axis_of(op, *axis_in, a) : 0;
  int64_t n = a.shape()[axis];
  if (n == 0) fail(std::string(op) + ": cannot take a quantile of an empty axis (shape " + shape_str(a_in.shape()) + ")");
  DType out = is_float(a.dtype()) ? a.dtype() : DType::Float64;
  Array s = sort(a, axis);
  std::vector<Array> rs;
  for (double q : qs) {
    Array r = quantile_of_sorted(s, axis, n, q, out);
    if (is_float(a.dtype())) r = where(isnan(slice_along(s, axis, n - 1, n)), same(NAN, r), r);
    rs.push_back(axis_in ? drop_axis(r, axis, keepdims) : reshape(r, Shape{}));
  }
  return vector_q ? stack(rs, 0) : rs[0];
}
}  // namespace

Array quantile(const Array& a, double q) { return quantiles("quantile", a, {q}, 1, false, std::nullopt, false); }
Array quantile(const Array& a, double q, int64_t axis, bool keepdims) {
  return quantiles("quantile", a, {q}, 1, false, axis, keepdims);
}
Array quantile(const Array& a, const std::vector<double>& q) { return quantiles("quantile", a, q, 1, true, std::nullopt, false); }
Array quantile(const Array& a, const std::vector<double>& q, int64_t axis, bool keepdims) {
  return quantiles("quantile", a, q, 1, true, axis, keepdims);
}
Array percentile(const Array& a, double p) { return quantiles("percentile", a, {p}, 100, false, std::nullopt, false); }
Array percentile(const Array& a, double p, int64_t axis, bool keepdims) {
  return quantiles("percentile", a, {p}, 100, false, axis, keepdims);
}
Array percentile(const Array& a, const std::vector<double>& p) {
  return quantiles("percentile", a, p, 100, true, std::nullopt, false);
}
Array percentile(const Array& a, const std::vector<double>& p, int64_t axis, bool keepdims) {
  return quantiles("percentile", a, p, 100, true, axis, keepdims);
}

namespace {
// numpy's median: the mean of the middle one or two of the sorted values; NaN where a slice has
// one; an empty axis gives NaN (numpy: with a warning).
Array median_along(const Array& a, int64_t axis, bool keepdims) {
  int64_t n = a.shape()[axis];
  Array s = sort(a, axis);
  int64_t lo = n == 0 ? 0 : (n % 2 ? n / 2 : n / 2 - 1), hi = n == 0 ? 0 : n / 2 + 1;
  Array r = mean(slice_along(s, axis, lo, hi), {axis}, true);
  if (is_float(a.dtype()) && n > 0) r = where(isnan(slice_along(s, axis, n - 1, n)), same(NAN, r), r);
  return drop_axis(r, axis, keepdims);
}
}  // namespace

Array median(const Array& a) { return median_along(reshape(a, {a.size()}), 0, false); }
Array median(const Array& a, int64_t axis, bool keepdims) {
  return median_along(a, axis_of("median", axis, a), keepdims);
}

Array searchsorted(const Array& a, const Array& v, const std::string& side) {
  if (a.ndim() != 1) fail("searchsorted: a must be 1-D, got shape " + shape_str(a.shape()));
  if (side != "left" && side != "right")
    fail("searchsorted: side must be \"left\" or \"right\", not \"" + side + "\"");
  int64_t n = a.size();
  Array pos = full(v.shape(), 0.0, DType::Int64, v.device());
  if (n == 0) return pos;
  DType t = promote_types(a.dtype(), v.dtype());
  Array sorted = cast(a, t), x = cast(v, t);
  int64_t step = 1;
  while (step * 2 <= n) step *= 2;
  // pos: the count of elements known to come before x; each step tries to add `step` more.
  for (; step >= 1; step /= 2) {
    Array cand = pos + step;
    Array e = take(sorted, minimum(cand - 1, full({}, n - 1, DType::Int64, v.device())));
    Array before = side == "left" ? sort_less(e, x) : !sort_less(x, e);
    pos = where((cand <= n) && before, cand, pos);
  }
  return pos;
}

Array trace(const Array& a, int64_t offset, int64_t axis1, int64_t axis2) {
  if (a.ndim() < 2) fail("trace: the array must have at least two dimensions, got shape " + shape_str(a.shape()));
  return sum(diagonal(a, offset, axis1, axis2), {-1});
}

// ---- Products -------------------------------------------------------------------------------------

Array outer(const Array& a, const Array& b) { return reshape(a, {a.size(), 1}) * reshape(b, {1, b.size()}); }

Array inner(const Array& a, const Array& b) {
  if (a.ndim() == 0 || b.ndim() == 0) return a * b;
  int64_t k = a.shape().back();
  if (b.shape().back() != k)
    fail("inner: the last dimensions of " + shape_str(a.shape()) + " and " + shape_str(b.shape()) + " differ");
  Shape out(a.shape().begin(), a.shape().end() - 1);
  out.insert(out.end(), b.shape().begin(), b.shape().end() - 1);
  bool logical = a.dtype() == DType::Bool && b.dtype() == DType::Bool;  // numpy: or of ands
  Array x = logical ? cast(a, DType::Int64) : a, y = logical ? cast(b, DType::Int64) : b;
  int64_t m = shape_numel(Shape(a.shape().begin(), a.shape().end() - 1));
  int64_t n = shape_numel(Shape(b.shape().begin(), b.shape().end() - 1));
  Array r = reshape(matmul(reshape(x, {m, k}), transpose(reshape(y, {n, k}))), out);
  return logical ? cast(r, DType::Bool) : r;
}

namespace {
// An operand of einsum with one subscript letter per axis.
struct Term {
  Array x;
  std::string labels;
};

// Sums out the axes whose letters are not in `keep`.
Term sum_except(Term t, const std::string& keep) {
  std::vector<int64_t> axes;
  std::string left;
  for (size_t i = 0; i < t.labels.size(); ++i)
    if (keep.find(t.labels[i]) == std::string::npos) axes.push_back(static_cast<int64_t>(i));
    else left += t.labels[i];
  if (axes.empty()) return t;
  return {sum(t.x, axes), left};
}

// Transposes t's axes to the order of `order` (a permutation of its labels).
Array arranged(const Term& t, const std::string& order) {
  std::vector<int64_t> perm;
  for (char c : order) perm.push_back(static_cast<int64_t>(t.labels.find(c)));
  return transpose(t.x, perm);
}

// The product of two terms, summed over the letters they share that `keep` does not hold.
Term contract(Term a, Term b, const std::string& keep) {
  std::string keep_a = keep + b.labels, keep_b = keep + a.labels;
  a = sum_except(a, keep_a);
  b = sum_except(b, keep_b);
  std::string batch, summed, only_a, only_b;
  for (char c : a.labels)
    if (b.labels.find(c) == std::string::npos) only_a += c;
    else if (keep.find(c) != std::string::npos) batch += c;
    else summed += c;
  for (char c : b.labels)
    if (a.labels.find(c) == std::string::npos) only_b += c;
  auto extent = [](const Term& t, char c) { return t.x.shape()[t.labels.find(c)]; };
  auto size = [&](const Term& t, const std::string& ls) {
    int64_t n = 1;
    for (char c : ls) n *= extent(t, c);
    return n;
  };
  Shape out;
  for (char c : batch) out.push_back(extent(a, c));
  for (char c : only_a) out.push_back(extent(a, c));
  for (char c : only_b) out.push_back(extent(b, c));
  if (summed.empty()) {  // an elementwise product, broadcast
    Shape sa, sb;
    for (char c : batch) sa.push_back(extent(a, c)), sb.push_back(extent(a, c));
    for (char c : only_a) sa.push_back(extent(a, c)), sb.push_back(1);
    for (char c : only_b) sa.push_back(1), sb.push_back(extent(b, c));
    return {reshape(arranged(a, batch + only_a), sa) * reshape(arranged(b, batch + only_b), sb), batch + only_a + only_b};
  }
  int64_t nb = size(a, batch), k = size(a, summed);
  Array x = reshape(arranged(a, batch + only_a + summed), {nb, size(a, only_a), k});
  Array y = reshape(arranged(b, batch + summed + only_b), {nb, k, size(b, only_b)});
  return {reshape(matmul(x, y), out), batch + only_a + only_b};
}
}  // namespace

Array einsum(const std::string& subscripts_in, const std::vector<Array>& operands) {
  std::string subscripts;
  for (char c : subscripts_in)
    if (c != ' ') subscripts += c;
  auto bad = [&](const std::string& why) { fail("einsum: " + why + " (subscripts \"" + subscripts_in + "\")"); };
  if (subscripts.find("...") != std::string::npos) bad("\"...\" (an ellipsis) is not supported; write every axis out");
  if (operands.empty()) bad("no operands given");
  size_t arrow = subscripts.find("->");
  std::string ins = subscripts.substr(0, arrow);
  std::vector<std::string> terms(1);
  for (char c : ins)
    if (c == ',') terms.emplace_back();
    else terms.back() += c;
  if (terms.size() != operands.size())
    bad(std::to_string(operands.size()) + " operands given, but the subscripts name " + std::to_string(terms.size()));
  std::map<char, int64_t> extent, uses;
  DType common = operands[0].dtype();
  for (size_t i = 0; i < terms.size(); ++i) {
    const Array& x = operands[i];
    common = promote_types(common, x.dtype());
    if (static_cast<int64_t>(terms[i].size()) != x.ndim())
      bad("operand " + std::to_string(i) + " has shape " + shape_str(x.shape()) + " but its subscripts \"" + terms[i] +
          "\" name " + std::to_string(terms[i].size()) + " axes");
    for (size_t d = 0; d < terms[i].size(); ++d) {
      char c = terms[i][d];
      if (!std::isalpha(static_cast<unsigned char>(c))) bad(std::string("'") + c + "' is not a subscript letter");
      int64_t e = x.shape()[d];
      if (extent.count(c) && extent[c] != e)
        bad(std::string("axis '") + c + "' has extent " + std::to_string(extent[c]) + " and " + std::to_string(e));
      extent[c] = e;
      ++uses[c];
    }
  }
  std::string output;
  if (arrow == std::string::npos) {
    for (auto [c, n] : uses)
      if (n == 1) output += c;
  } else {
    output = subscripts.substr(arrow + 2);
    for (size_t i = 0; i < output.size(); ++i) {
      char c = output[i];
      if (!extent.count(c)) bad(std::string("output subscript '") + c + "' is not among the inputs'");
      if (output.find(c) != i) bad(std::string("output subscript '") + c + "' appears more than once");
    }
  }
  // Bool operands: the products and sums in int64, then != 0 (numpy's and/or).
  DType work = common == DType::Bool ? DType::Int64 : common;
  std::vector<Term> ts;
  for (size_t i = 0; i < terms.size(); ++i) {
    Term t{cast(operands[i], work), terms[i]};
    // A letter repeated within one operand: its diagonal.
    for (size_t p = 0; p < t.labels.size(); ++p) {
      size_t q = t.labels.find(t.labels[p], p + 1);
      if (q == std::string::npos) continue;
      char c = t.labels[p];
      t.x = diagonal(t.x, 0, static_cast<int64_t>(p), static_cast<int64_t>(q));
      t.labels.erase(q, 1);
      t.labels.erase(p, 1);
      t.labels += c;
      p = static_cast<size_t>(-1);
    }
    ts.push_back(t);
  }
  // Left to right: keep the letters of the output and of the operands still to come.
  Term acc = ts[0];
  for (size_t i = 1; i < ts.size(); ++i) {
    std::string keep = output;
    for (size_t j = i + 1; j < ts.size(); ++j) keep += ts[j].labels;
    acc = contract(acc, ts[i], keep);
  }
  acc = sum_except(acc, output);
  Array r = arranged(acc, output);
  return common == DType::Bool ? cast(r, DType::Bool) : cast(r, common);
}

// ---- Outside jit only -----------------------------------------------------------------------------

std::vector<Array> nonzero(const Array& a) {
  if (a.ndim() == 0)
    fail("nonzero: calling nonzero on 0-d arrays is not allowed; use nonzero(reshape(x, [1])) instead");
  refuse_in_jit("nonzero", a, "use where(x != 0, ...) or a mask reduction instead");
  Array flat = arange(a.size(), DType::Int64, a.device())[ravel(cast(a, DType::Bool))];
  flat.eval();
  std::vector<Array> out;
  int64_t stride = a.size();
  for (int64_t d = 0; d < a.ndim(); ++d) {
    int64_t e = a.shape()[d];
    stride = e == 0 ? 0 : stride / e;
    out.push_back(stride == 0 ? flat : remainder(floor_divide(flat, full({}, stride, DType::Int64, a.device())),
                                                 full({}, e, DType::Int64, a.device())));
  }
  return out;
}

Array argwhere(const Array& a) {
  refuse_in_jit("argwhere", a, "use where(x != 0, ...) or a mask reduction instead");
  if (a.ndim() == 0) {
    int64_t k = cast(a, DType::Bool).item<bool>() ? 1 : 0;
    return zeros({k, 0}, DType::Int64, a.device());
  }
  std::vector<Array> idx = nonzero(a);
  if (idx[0].size() == 0) return zeros({0, a.ndim()}, DType::Int64, a.device());
  return stack(idx, 1);
}

Array unique(const Array& a) {
  refuse_in_jit("unique", a, "use sort(x) instead");
  Array s = sort(reshape(a, {a.size()}));
  int64_t n = s.size();
  if (n <= 1) return s;
  s.eval();
  Array hi = s[Slice(1, n)], lo = s[Slice(0, n - 1)];
  Array differs = hi != lo;
  if (is_float(a.dtype())) differs = differs && !(isnan(hi) && isnan(lo));  // one NaN (numpy 2's equal_nan)
  Array keep = concatenate({full({1}, 1.0, DType::Bool, a.device()), differs});
  return s[keep];
}

namespace {
std::vector<int64_t> bincount_values(const Array& x, int64_t minlength, int64_t& length) {
  if (x.ndim() != 1) fail("bincount: x must be 1-D, got shape " + shape_str(x.shape()));
  if (is_float(x.dtype()))
    fail(std::string("bincount: x must hold integers, got ") + dtype_name(x.dtype()) + " " + shape_str(x.shape()));
  if (minlength < 0) fail("bincount: minlength must not be negative, got " + std::to_string(minlength));
  refuse_in_jit("bincount", x, "use sum(x[:, None] == arange(n), 0) with a known n instead");
  std::vector<int64_t> v = x.to_vector<int64_t>();
  if (x.dtype() == DType::UInt64)
    for (uint64_t u : x.to_vector<uint64_t>())
      if (u > static_cast<uint64_t>(INT64_MAX)) fail("bincount: value " + std::to_string(u) + " is too large");
  length = minlength;
  for (int64_t e : v) {
    if (e < 0) fail("bincount: x must have no negative elements, got " + std::to_string(e));
    length = std::max(length, e + 1);
  }
  return v;
}
}  // namespace

Array bincount(const Array& x, int64_t minlength) {
  int64_t length = 0;
  std::vector<int64_t> v = bincount_values(x, minlength, length);
  std::vector<int64_t> counts(static_cast<size_t>(length), 0);
  for (int64_t e : v) ++counts[static_cast<size_t>(e)];
  return array(counts, {length}, x.device());
}

Array bincount(const Array& x, const Array& weights, int64_t minlength) {
  if (weights.shape() != x.shape())
    fail("bincount: weights " + shape_str(weights.shape()) + " and x " + shape_str(x.shape()) +
         " must have the same shape");
  int64_t length = 0;
  std::vector<int64_t> v = bincount_values(x, minlength, length);
  refuse_in_jit("bincount", weights, "use sum(where(x[:, None] == arange(n), w[:, None], 0), 0) instead");
  std::vector<double> w = weights.to_vector<double>(), sums(static_cast<size_t>(length), 0.0);
  for (size_t i = 0; i < v.size(); ++i) sums[static_cast<size_t>(v[i])] += w[i];
  return array(sums, {length}, x.device());
}

namespace {
std::vector<Array> histogram_in(const Array& a, int64_t bins, std::optional<std::pair<double, double>> range) {
  if (bins < 1) fail("histogram: bins must be positive, got " + std::to_string(bins));
  refuse_in_jit("histogram", a, "with a known range, use sum(where(...)) over bins instead",
                "the bins are counted on the host from the values of the input ");
  std::vector<double> v = a.to_vector<double>();
  double lo = 0, hi = 1;
  auto str = [](double x) { return format_number(x); };
  if (range) {
    std::tie(lo, hi) = *range;
    if (lo > hi) fail("histogram: max must be larger than min in range parameter (got [" + str(lo) + ", " + str(hi) + "])");
    if (!std::isfinite(lo) || !std::isfinite(hi))
      fail("histogram: supplied range of [" + str(lo) + ", " + str(hi) + "] is not finite");
  } else if (!v.empty()) {
    lo = hi = v[0];
    for (double x : v) {
      if (std::isnan(x) || std::isnan(lo)) lo = hi = NAN;
      else lo = std::min(lo, x), hi = std::max(hi, x);
    }
    if (!std::isfinite(lo) || !std::isfinite(hi))
      fail("histogram: autodetected range of [" + str(lo) + ", " + str(hi) + "] is not finite");
  }
  if (lo == hi) lo -= 0.5, hi += 0.5;
  DType et = is_float(a.dtype()) ? a.dtype() : DType::Float64;
  Array edges = linspace(lo, hi, bins + 1, true, et, a.device()).eval();
  std::vector<double> e = edges.to_vector<double>();
  // numpy's assignment: a first guess from the bin width, corrected by the edges themselves.
  std::vector<int64_t> counts(static_cast<size_t>(bins), 0);
  for (double x : v) {
    if (!(x >= lo && x <= hi)) continue;
    int64_t i = static_cast<int64_t>((x - lo) / (hi - lo) * static_cast<double>(bins));
    if (i == bins) --i;
    if (x < e[static_cast<size_t>(i)]) --i;
    if (x >= e[static_cast<size_t>(i + 1)] && i != bins - 1) ++i;
    ++counts[static_cast<size_t>(i)];
  }
  return {array(counts, {bins}, a.device()), edges};
}
}  // namespace

std::vector<Array> histogram(const Array& a, int64_t bins) { return histogram_in(a, bins, std::nullopt); }
std::vector<Array> histogram(const Array& a, int64_t bins, double lo, double hi) {
  return histogram_in(a, bins, std::make_pair(lo, hi));
}

}  // namespace arrayc
