// arrayc/reduce_ops.h: compositions of the graph's ops (argmax, any, var, logsumexp, linspace,
// eye, *_like) and the Axis ops (scans, sorts).
#include "arrayc/reduce_ops.h"

#include <cmath>
#include <limits>
#include <numeric>

#include "arrayc/ops.h"
#include "ir/build.h"

namespace arrayc {

using detail::NodeRef;
using detail::Op;

namespace {

std::vector<int64_t> every_axis(const Array& a) {
  std::vector<int64_t> axes(static_cast<size_t>(a.ndim()));
  std::iota(axes.begin(), axes.end(), 0);
  return axes;
}

// The axes normalized (as the reductions do, with their errors) and the number of elements
// they hold.
int64_t reduced_count(const char* op, const Array& a, const std::vector<int64_t>& axes) {
  int64_t count = 1;
  for (int64_t ax : axes) {
    int64_t r = a.ndim();
    if (ax < -r || ax >= r)
      throw Error(std::string(op) + ": axis " + std::to_string(ax) + " is out of range for an array of rank " +
                  std::to_string(r) + " (shape " + shape_str(a.shape()) + ")");
    count *= a.shape()[static_cast<size_t>(ax < 0 ? ax + r : ax)];
  }
  return count;
}

// The shape of a reduction's result (keepdims or not), for results decided by the shape alone.
Shape reduced_shape(const Array& a, const std::vector<int64_t>& axes, bool keepdims) {
  std::vector<bool> red(static_cast<size_t>(a.ndim()), false);
  for (int64_t ax : axes) red[static_cast<size_t>(ax < 0 ? ax + a.ndim() : ax)] = true;
  Shape s;
  for (int64_t d = 0; d < a.ndim(); ++d)
    if (!red[d]) s.push_back(a.shape()[d]);
    else if (keepdims) s.push_back(1);
  return s;
}

Array arg_extreme(const char* name, bool is_max, const Array& a, int64_t axis, bool keepdims) {
  int64_t r = a.ndim();
  if (axis < -r || axis >= r)
    throw Error(std::string(name) + ": axis " + std::to_string(axis) + " is out of range for an array of rank " +
                std::to_string(r) + " (shape " + shape_str(a.shape()) + ")");
  if (axis < 0) axis += r;
  int64_t n = a.shape()[axis];
  if (n == 0)
    throw Error(std::string(name) + ": attempt to get " + name + " of an empty sequence (axis " +
                std::to_string(axis) + " of shape " + shape_str(a.shape()) + ")");
  // Both passes must see the same values: a computed input is materialized once (a Copy), so
  // that the two kernels cannot round it differently (a vector and a scalar loop may).
  Array x = a;
  const detail::Node* base = a.node().get();
  while (detail::op_kind(base->op) == detail::OpKind::View) base = base->inputs[0].get();
  if (base->op != Op::Buffer && base->op != Op::Param) x = Array(detail::make_copy(a.node()));
  Array m = is_max ? max(x, {axis}, true) : min(x, {axis}, true);
  Array hit = x == m;
  if (is_float(a.dtype())) hit = hit || (x != x);  // the extreme is NaN when any element is: the first NaN
  Shape along(static_cast<size_t>(r), 1);
  along[axis] = n;
  Array index = reshape(arange(n, DType::Int64, a.device()), along);
  return min(where(hit, index, full({}, n, DType::Int64, a.device())), {axis}, keepdims);
}

Array flat(const Array& a) { return reshape(a, {-1}); }

Array bool_reduce(const char* name, bool any_op, const Array& a, const std::vector<int64_t>& axes, bool keepdims) {
  if (reduced_count(name, a, axes) == 0) return full(reduced_shape(a, axes, keepdims), any_op ? 0.0 : 1.0, DType::Bool, a.device());
  Array b = cast(a, DType::Bool);
  return any_op ? max(b, axes, keepdims) : min(b, axes, keepdims);
}

Array axis_op(Op op, const Array& a, int64_t axis) { return Array(detail::make_axis_op(op, a.node(), axis)); }

}  // namespace

Array argmax(const Array& a) { return arg_extreme("argmax", true, flat(a), 0, false); }
Array argmax(const Array& a, int64_t axis, bool keepdims) { return arg_extreme("argmax", true, a, axis, keepdims); }
Array argmin(const Array& a) { return arg_extreme("argmin", false, flat(a), 0, false); }
Array argmin(const Array& a, int64_t axis, bool keepdims) { return arg_extreme("argmin", false, a, axis, keepdims); }

Array any(const Array& a) { return bool_reduce("any", true, a, every_axis(a), false); }
Array any(const Array& a, const std::vector<int64_t>& axes, bool keepdims) { return bool_reduce("any", true, a, axes, keepdims); }
Array all(const Array& a) { return bool_reduce("all", false, a, every_axis(a), false); }
Array all(const Array& a, const std::vector<int64_t>& axes, bool keepdims) { return bool_reduce("all", false, a, axes, keepdims); }

Array var(const Array& a, double ddof) { return var(a, every_axis(a), ddof, false); }
Array var(const Array& a, const std::vector<int64_t>& axes, double ddof, bool keepdims) {
  int64_t n = reduced_count("var", a, axes);
  Array x = is_float(a.dtype()) ? a : cast(a, DType::Float64);
  Array d = x - mean(x, axes, true);
  double denom = std::max(static_cast<double>(n) - ddof, 0.0);
  return sum(d * d, axes, keepdims) / full({}, denom, x.dtype(), a.device());
}
Array std(const Array& a, double ddof) { return sqrt(var(a, ddof)); }
Array std(const Array& a, const std::vector<int64_t>& axes, double ddof, bool keepdims) {
  return sqrt(var(a, axes, ddof, keepdims));
}

Array logsumexp(const Array& a) { return logsumexp(a, every_axis(a), false); }
Array logsumexp(const Array& a, const std::vector<int64_t>& axes, bool keepdims) {
  Array x = is_float(a.dtype()) ? a : cast(a, a.dtype() == DType::Bool ? DType::Float32 : DType::Float64);
  if (reduced_count("logsumexp", a, axes) == 0)
    return full(reduced_shape(a, axes, keepdims), -std::numeric_limits<double>::infinity(), x.dtype(), a.device());
  Array m = max(x, axes, true);
  Array shift = where(m - m == 0, m, 0);  // a finite max, else 0 (all -inf, an inf, or a NaN)
  Array r = log(sum(exp(x - shift), axes, true)) + shift;
  return keepdims ? r : reshape(r, reduced_shape(a, axes, false));
}

Array cumsum(const Array& a) { return axis_op(Op::Cumsum, flat(a), 0); }
Array cumsum(const Array& a, int64_t axis) { return axis_op(Op::Cumsum, a, axis); }
Array cumprod(const Array& a) { return axis_op(Op::Cumprod, flat(a), 0); }
Array cumprod(const Array& a, int64_t axis) { return axis_op(Op::Cumprod, a, axis); }
Array sort(const Array& a, int64_t axis) { return axis_op(Op::Sort, a, axis); }
Array argsort(const Array& a, int64_t axis) { return axis_op(Op::Argsort, a, axis); }

Array linspace(double start, double stop, int64_t num, bool endpoint, DType dtype, Device device) {
  if (num < 0) throw Error("linspace: number of samples, " + std::to_string(num) + ", must be non-negative");
  if (!std::isfinite(start) || !std::isfinite(stop))
    throw Error("linspace: start and stop must be finite (got " + std::to_string(start) + ", " + std::to_string(stop) + ")");
  int64_t div = endpoint ? num - 1 : num;
  double step = div > 0 ? (stop - start) / static_cast<double>(div) : 0.0;
  Array i = arange(num, DType::Float64, device);
  Array y = i * full({}, step, DType::Float64, device) + full({}, start, DType::Float64, device);
  if (endpoint && num > 1) y = where(i == static_cast<double>(num - 1), full({}, stop, DType::Float64, device), y);
  return cast(y, dtype);
}

Array eye(int64_t n, int64_t m, int64_t k, DType dtype, Device device) {
  if (m < 0) m = n;
  if (n < 0) throw Error("eye: negative dimensions are not allowed (N = " + std::to_string(n) + ")");
  Array rows = reshape(arange(n, DType::Int64, device), {n, 1});
  Array cols = reshape(arange(m, DType::Int64, device), {1, m});
  return cast(rows + k == cols, dtype);
}

Array zeros_like(const Array& a) { return zeros_like(a, a.dtype()); }
Array zeros_like(const Array& a, DType dtype) { return full(a.shape(), 0.0, dtype, a.device()); }
Array ones_like(const Array& a) { return ones_like(a, a.dtype()); }
Array ones_like(const Array& a, DType dtype) { return full(a.shape(), 1.0, dtype, a.device()); }
Array full_like(const Array& a, double value) { return full_like(a, value, a.dtype()); }
Array full_like(const Array& a, double value, DType dtype) { return full(a.shape(), value, dtype, a.device()); }

}  // namespace arrayc
