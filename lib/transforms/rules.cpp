// The rule table: per op, its gradient (reverse mode) and batching (vmap) rule. One line per op;
// an op of ops.def missing here has no rules, and grad or vmap through it raises arrayc::Error
// naming it (tests/unit/transforms_test.cpp lists which ops have which rules).
//
// Conventions (rules.h): an elementwise node's inputs already have its shape and dtype (the
// builders made broadcasts and casts explicit nodes, which have rules of their own), so
// elementwise gradients never undo broadcasting themselves: the Broadcast rule sums. Batched
// values carry the batch along axis 0.
#include "transforms/rules.h"

#include <array>
#include <numeric>
#include <utility>

#include "arrayc/indexing.h"
#include "arrayc/math.h"
#include "arrayc/ops.h"
#include "arrayc/reduce_ops.h"
#include "ir/build.h"
#include "ir/build_index.h"

namespace arrayc::detail {
namespace {

using Cts = std::vector<std::optional<Array>>;

// ---- Gradient helpers -----------------------------------------------------------------------

Array scalar(double v, const Array& like) { return full({}, v, like.dtype(), like.device()); }

// The cotangent of a reduction's output spread back over its input's shape.
Array unreduce(const Node& n, const Array& g, const Array& x) {
  Shape keep = x.shape();
  for (int64_t a : n.ints) keep[a] = 1;
  return broadcast_to(reshape(g, keep), x.shape());
}

int64_t reduced_count(const Node& n, const Array& x) {
  int64_t c = 1;
  for (int64_t a : n.ints) c *= x.shape()[a];
  return c;
}

// The last two axes swapped (a matrix product's operand transposed).
Array swap_last(const Array& a) {
  std::vector<int64_t> p(a.ndim());
  std::iota(p.begin(), p.end(), 0);
  std::swap(p[p.size() - 1], p[p.size() - 2]);
  return transpose(a, p);
}

// JAX's _balanced_eq: 1 where x is the chosen value z alone, 0.5 where x and y tie, else 0.
Array balanced_eq(const Array& x, const Array& z, const Array& y) {
  return where(x == z, where(y == z, scalar(0.5, z), scalar(1, z)), scalar(0, z));
}

// max/min: the cotangent split evenly between the elements equal to the result.
Cts chooser_vjp(const VjpArgs& a) {
  const Array& x = a.x[0];
  Array mask = cast(x == unreduce(a.n, a.y, x), x.dtype());
  Array count = unreduce(a.n, sum(mask, a.n.ints, false), x);
  return {unreduce(a.n, a.g, x) * mask / count};
}

// prod: the product of the other elements, exact where the input holds zeros.
Cts prod_vjp(const VjpArgs& a) {
  const Array& x = a.x[0];
  Array zero = x == scalar(0, x);
  Array zeros = unreduce(a.n, sum(cast(zero, x.dtype()), a.n.ints, false), x);
  Array rest = unreduce(a.n, prod(where(zero, scalar(1, x), x), a.n.ints, false), x);
  Array others = where(zero, where(zeros == scalar(1, x), rest, scalar(0, x)),
                       where(zeros == scalar(0, x), rest / x, scalar(0, x)));
  return {unreduce(a.n, a.g, x) * others};
}

Cts no_gradient(const VjpArgs& a) { return Cts(a.x.size()); }

// ---- Batching helpers -----------------------------------------------------------------------

Shape batched_shape(int64_t size, const Shape& s) {
  Shape b{size};
  b.insert(b.end(), s.begin(), s.end());
  return b;
}

std::vector<int64_t> shifted(const std::vector<int64_t>& axes) {
  std::vector<int64_t> r;
  for (int64_t a : axes) r.push_back(a + 1);
  return r;
}

// Unbatched inputs broadcast against batched ones (numpy aligns shapes on the right).
Array batch_elementwise(const BatchArgs& b) {
  if (b.n.op == Op::Cast) return cast(b.x[0], b.n.dtype);
  std::vector<NodeRef> in;
  for (const Array& x : b.x) in.push_back(x.node());
  return Array(make_elementwise(b.n.op, in));
}

Array batch_reduce(const BatchArgs& b) {
  return Array(make_reduce(b.n.op, b.x[0].node(), shifted(b.n.ints), false));
}

// A product per example: [m,k] x [k,n] (or [c,m,k] x [c,k,n]) with the batch in front of either.
Array batch_dot(const BatchArgs& b) {
  const Array &a = b.x[0], &c = b.x[1];
  int64_t B = b.size;
  if (b.n.rank() == 2 && !b.batched[1]) {  // the batch joins a's rows: one product
    int64_t m = a.shape()[1], k = a.shape()[2];
    return reshape(matmul(reshape(a, {B * m, k}), c), {B, m, c.shape()[1]});
  }
  if (b.n.rank() == 2 && !b.batched[0]) {  // the batch joins c's columns: one product
    int64_t k = c.shape()[1], n = c.shape()[2], m = a.shape()[0];
    Array cols = reshape(transpose(c, {1, 0, 2}), {k, B * n});
    return transpose(reshape(matmul(a, cols), {m, B, n}), {1, 0, 2});
  }
  // Both batched, or a batch of products per example: matmul's batch dims (it broadcasts).
  return matmul(a, c);
}


// ---- Rules of the numpy math, indexing and axis ops (issue 28 / indexing) ---------------------

// An elementwise unary rule g * f'(x, y).
#define ARRAYC_UNARY(expr) [](const VjpArgs& a) -> Cts { const Array &x = a.x[0], &y = a.y; (void)x; (void)y; return {a.g * (expr)}; }

// Slice: the cotangent scattered into zeros at the view's positions.
Cts slice_vjp(const VjpArgs& a) {
  const Array& x = a.x[0];
  if (a.g.size() == 0) return {zeros_like(x)};
  std::vector<Index> index;
  for (size_t d = 0; d < a.n.shape.size(); ++d) {
    int64_t start = a.n.ints[2 * d], step = a.n.ints[2 * d + 1];
    int64_t stop = start + a.n.shape[d] * step;  // one past the last (before the first for step < 0)
    index.emplace_back(Slice(start, stop < 0 ? std::nullopt : std::optional<int64_t>(stop), step));
  }
  return {At(zeros_like(x), std::move(index)).add(a.g)};
}

// Gather: the cotangent added back at the positions read (dense: a compare per position along
// the axis and element read, as x.at(indices).add). Duplicate indices accumulate.
Cts gather_vjp(const VjpArgs& a) {
  const Array& src = a.x[0];
  int64_t axis = a.n.ints[0], r = src.ndim(), q = a.g.ndim();
  std::vector<int64_t> perm;  // the result dims the source dims map to (in source order), then the rest
  std::vector<bool> used(static_cast<size_t>(q), false);
  for (int64_t d = 0; d < r; ++d) {
    if (d == axis) continue;
    int64_t m = a.n.ints[1 + d];
    ARRAYC_INTERNAL_CHECK(!used[m], "gather gradient: two source dims map to one result dim");
    used[m] = true;
    perm.push_back(m);
  }
  std::vector<int64_t> free_axes;
  for (int64_t e = 0; e < q; ++e)
    if (!used[e]) {
      perm.push_back(e);
      free_axes.push_back(r + static_cast<int64_t>(free_axes.size()));
    }
  Array g = transpose(a.g, perm), idx = cast(transpose(a.x[1], perm), DType::Int64);
  Shape s = g.shape();
  s.insert(s.begin() + axis, 1);
  g = reshape(g, s);
  idx = reshape(idx, s);
  int64_t len = src.shape()[axis];
  Device dev = src.device();
  Array n = full({}, static_cast<double>(len), DType::Int64, dev);
  idx = where(idx < full({}, 0.0, DType::Int64, dev), idx + n, idx);  // as the gather reads (gather_position)
  idx = minimum(maximum(idx, full({}, 0.0, DType::Int64, dev)), n - full({}, 1.0, DType::Int64, dev));
  Shape cs(s.size(), 1);
  cs[axis] = len;
  Array hit = reshape(arange(len, DType::Int64, dev), cs) == idx;
  Array terms = where(hit, g, scalar(0, a.g));
  return {free_axes.empty() ? terms : sum(terms, free_axes, false), std::nullopt};
}

Array batch_gather(const BatchArgs& b) {
  Array src = b.x[0], idx = b.x[1];
  if (!b.batched[0]) src = broadcast_to(expand_dims(src, 0), batched_shape(b.size, src.shape()));
  if (!b.batched[1]) idx = broadcast_to(expand_dims(idx, 0), batched_shape(b.size, idx.shape()));
  std::vector<int64_t> map{0};
  for (size_t d = 1; d < b.n.ints.size(); ++d) map.push_back(b.n.ints[d] < 0 ? -1 : b.n.ints[d] + 1);
  return Array(make_gather(api_name(Op::Gather), src.node(), idx.node(), b.n.ints[0] + 1, map));
}

Array batch_axis_op(const BatchArgs& b) { return Array(make_axis_op(b.n.op, b.x[0].node(), b.n.ints[0] + 1)); }

// Sums of the elements at and after each position along `axis`.
Array reverse_cumsum(const Array& g, int64_t axis) { return flip(cumsum(flip(g, axis), axis), axis); }

// cumprod, exact where x holds zeros: with z the first zero of a line, dx_j for j < z is
// sum_{i >= j} g_i y_i / x_j (x_j != 0); dx_z is sum_{i >= z} g_i y'_i with y' the cumprod with
// x_z replaced by 1; after z every product holds x_z, so 0.
Cts cumprod_vjp(const VjpArgs& a) {
  const Array &x = a.x[0], &y = a.y;
  int64_t axis = a.n.ints[0];
  Array zero = scalar(0, x), one = scalar(1, x);
  Array is_zero = x == zero;
  Array zeros_so_far = cumsum(cast(is_zero, x.dtype()), axis);
  Array before = zeros_so_far == zero, first = is_zero && zeros_so_far == one;
  Array y1 = cumprod(where(first, one, x), axis);
  Array before_first = reverse_cumsum(a.g * y, axis) / where(before, x, one);
  return {where(before, before_first, where(first, reverse_cumsum(a.g * y1, axis), zero))};
}

// sort: the cotangent put back where each element came from (the inverse of the sort's
// permutation, argsort of argsort; both stable, so ties keep the sort's own order).
Cts sort_vjp(const VjpArgs& a) {
  int64_t axis = a.n.ints[0];
  return {take_along_axis(a.g, argsort(argsort(a.x[0], axis), axis), axis)};
}

// ---- Sparse scatter (host scatter speed: ops.def's ScatterSet/ScatterAdd) ----------------------

// The cotangent of v: row idx[j] of g for each update j that lands (in [-n, n)), 0 for the others
// and, for set, for the updates that a later one overwrites.
Array scatter_v_cotangent(const VjpArgs& a, bool set) {
  const Array &g = a.g, &idx = a.x[1];
  Device dev = g.device();
  int64_t n = g.shape()[0], k = idx.shape()[0];
  if (n == 0) return zeros_like(a.x[2]);  // no row: every update dropped
  Array zero = full({}, int64_t{0}, DType::Int64, dev);
  Array r = where(idx < zero, idx + full({}, n, DType::Int64, dev), idx);
  Array keep = logical_and(r >= zero, r < full({}, n, DType::Int64, dev));
  if (set) {  // the last update of each row: the one a scatter of the update numbers leaves there
    Array last = full({n}, int64_t{-1}, DType::Int64, dev).at(idx).set(arange(k, DType::Int64, dev));
    keep = logical_and(keep, take(last, r, 0) == arange(k, DType::Int64, dev));
  }
  Shape ks{k};
  ks.resize(g.ndim(), 1);
  Array rows = take(g, r, 0);  // clamped where r is out of range; masked below
  return where(broadcast_to(reshape(keep, ks), rows.shape()), rows, scalar(0, g));
}

Cts scatter_add_vjp(const VjpArgs& a) { return {a.g, std::nullopt, scatter_v_cotangent(a, false)}; }
// set: the rows an update lands in get nothing from g.
Cts scatter_set_vjp(const VjpArgs& a) {
  return {a.g.at(a.x[1]).set(scalar(0, a.g)), std::nullopt, scatter_v_cotangent(a, true)};
}

// One scatter over the flattened batch: example b's rows are b*n .. b*n + n - 1, its updates keep
// their order, and an index outside [-n, n) becomes B*n, which the scatter drops too.
Array batch_scatter(const BatchArgs& b) {
  auto batched = [&](size_t i) {
    return b.batched[i] ? b.x[i] : broadcast_to(expand_dims(b.x[i], 0), batched_shape(b.size, b.x[i].shape()));
  };
  Array x = batched(0), idx = batched(1), v = batched(2);
  Device dev = x.device();
  int64_t n = x.shape()[1], k = idx.shape()[1], nb = b.size;
  auto i64 = [&](int64_t c) { return full({}, c, DType::Int64, dev); };
  Array r = where(idx < i64(0), idx + i64(n), idx);
  Array in = logical_and(r >= i64(0), r < i64(n));
  Array flat = where(in, r + reshape(arange(nb, DType::Int64, dev), {nb, 1}) * i64(n), i64(nb * n));
  Shape rest(x.shape().begin() + 2, x.shape().end());
  Shape xs{nb * n}, vs{nb * k};
  xs.insert(xs.end(), rest.begin(), rest.end());
  vs.insert(vs.end(), rest.begin(), rest.end());
  Array y(make_scatter(b.n.op, reshape(x, xs).node(), reshape(flat, {nb * k}).node(), reshape(v, vs).node()));
  return reshape(y, x.shape());
}

constexpr double kLn2 = 0.69314718055994530942, kLn10 = 2.30258509299404568402;
constexpr double kTwoOverSqrtPi = 1.12837916709551257390;

// ---- The table ------------------------------------------------------------------------------

struct Entry {
  Op op;
  OpRules rules;
};

const Entry kTable[] = {
    // Elementwise, unary
    {Op::Neg, {[](const VjpArgs& a) -> Cts { return {-a.g}; }, batch_elementwise}},
    {Op::Not, {no_gradient, batch_elementwise}},
    {Op::Abs, {[](const VjpArgs& a) -> Cts {  // sign(x): 0 at 0, as JAX
                 const Array& x = a.x[0];
                 return {a.g * where(x > scalar(0, x), scalar(1, x), where(x < scalar(0, x), scalar(-1, x), scalar(0, x)))};
               }, batch_elementwise}},
    {Op::Exp, {[](const VjpArgs& a) -> Cts { return {a.g * a.y}; }, batch_elementwise}},
    {Op::Log, {[](const VjpArgs& a) -> Cts { return {a.g / a.x[0]}; }, batch_elementwise}},
    {Op::Sin, {[](const VjpArgs& a) -> Cts { return {a.g * cos(a.x[0])}; }, batch_elementwise}},
    {Op::Cos, {[](const VjpArgs& a) -> Cts { return {-(a.g * sin(a.x[0]))}; }, batch_elementwise}},
    {Op::Tanh, {[](const VjpArgs& a) -> Cts { return {a.g * (1 - a.y * a.y)}; }, batch_elementwise}},
    {Op::Sqrt, {[](const VjpArgs& a) -> Cts { return {a.g * 0.5 / a.y}; }, batch_elementwise}},
    {Op::Cast, {[](const VjpArgs& a) -> Cts {  // back to the input's dtype; none into integers
                  if (!is_float(a.x[0].dtype())) return {std::nullopt};
                  return {cast(a.g, a.x[0].dtype())};
                }, batch_elementwise}},
    // Elementwise, binary
    {Op::Add, {[](const VjpArgs& a) -> Cts { return {a.g, a.g}; }, batch_elementwise}},
    {Op::Sub, {[](const VjpArgs& a) -> Cts { return {a.g, -a.g}; }, batch_elementwise}},
    {Op::Mul, {[](const VjpArgs& a) -> Cts { return {a.g * a.x[1], a.g * a.x[0]}; }, batch_elementwise}},
    {Op::Div, {[](const VjpArgs& a) -> Cts { return {a.g / a.x[1], -(a.g * a.y) / a.x[1]}; }, batch_elementwise}},
    {Op::Pow, {[](const VjpArgs& a) -> Cts {  // JAX's: 0 where the exponent is 0; log(1) where the base is 0
                 const Array &x = a.x[0], &e = a.x[1];
                 Array zero = scalar(0, x), one = scalar(1, x);
                 Array dx = where(e == zero, zero, e * pow(x, e - one));
                 Array de = log(where(x == zero, one, x)) * a.y;
                 return {a.g * dx, a.g * de};
               }, batch_elementwise}},
    {Op::Maximum, {[](const VjpArgs& a) -> Cts {
                     return {a.g * balanced_eq(a.x[0], a.y, a.x[1]), a.g * balanced_eq(a.x[1], a.y, a.x[0])};
                   }, batch_elementwise}},
    {Op::Minimum, {[](const VjpArgs& a) -> Cts {
                     return {a.g * balanced_eq(a.x[0], a.y, a.x[1]), a.g * balanced_eq(a.x[1], a.y, a.x[0])};
                   }, batch_elementwise}},
    {Op::Eq, {no_gradient, batch_elementwise}},
    {Op::Ne, {no_gradient, batch_elementwise}},
    {Op::Lt, {no_gradient, batch_elementwise}},
    {Op::Le, {no_gradient, batch_elementwise}},
    {Op::Gt, {no_gradient, batch_elementwise}},
    {Op::Ge, {no_gradient, batch_elementwise}},
    {Op::And, {no_gradient, batch_elementwise}},
    {Op::Or, {no_gradient, batch_elementwise}},
    // Elementwise, ternary
    {Op::Where, {[](const VjpArgs& a) -> Cts {
                   const Array& c = a.x[0];
                   Array zero = scalar(0, a.g);
                   return {std::nullopt, where(c, a.g, zero), where(c, zero, a.g)};
                 }, batch_elementwise}},
    // Views
    {Op::Reshape, {[](const VjpArgs& a) -> Cts { return {reshape(a.g, a.x[0].shape())}; },
                   [](const BatchArgs& b) { return reshape(b.x[0], batched_shape(b.size, b.n.shape)); }}},
    {Op::Transpose, {[](const VjpArgs& a) -> Cts {
                       std::vector<int64_t> inv(a.n.ints.size());
                       for (size_t d = 0; d < inv.size(); ++d) inv[a.n.ints[d]] = static_cast<int64_t>(d);
                       return {transpose(a.g, inv)};
                     },
                     [](const BatchArgs& b) {
                       std::vector<int64_t> p{0};
                       for (int64_t d : b.n.ints) p.push_back(d + 1);
                       return transpose(b.x[0], p);
                     }}},
    {Op::Broadcast, {[](const VjpArgs& a) -> Cts {  // broadcasting undone by a sum
                       const Array& x = a.x[0];
                       std::vector<int64_t> axes;
                       for (int64_t d = 0; d < x.ndim(); ++d)
                         if (x.shape()[d] != a.n.shape[d]) axes.push_back(d);
                       return {sum(a.g, axes, true)};
                     },
                     [](const BatchArgs& b) { return broadcast_to(b.x[0], batched_shape(b.size, b.n.shape)); }}},
    // Reductions
    {Op::Sum, {[](const VjpArgs& a) -> Cts { return {unreduce(a.n, a.g, a.x[0])}; }, batch_reduce}},
    {Op::Mean, {[](const VjpArgs& a) -> Cts {
                  return {unreduce(a.n, a.g, a.x[0]) / scalar(static_cast<double>(reduced_count(a.n, a.x[0])), a.g)};
                }, batch_reduce}},
    {Op::Max, {chooser_vjp, batch_reduce}},
    {Op::Min, {chooser_vjp, batch_reduce}},
    {Op::Prod, {prod_vjp, batch_reduce}},
    // Contraction: [c?, m, k] x [c?, k, n]
    {Op::Dot, {[](const VjpArgs& a) -> Cts {
                 return {matmul(a.g, swap_last(a.x[1])), matmul(swap_last(a.x[0]), a.g)};
               }, batch_dot}},
    // Copy
    {Op::Copy, {[](const VjpArgs& a) -> Cts { return {a.g}; },
                [](const BatchArgs& b) { return Array(make_copy(b.x[0].node())); }}},
    // numpy math (issue 28). Rounding, signs and float classes are flat (zero gradient, as JAX);
    // integer-only ops (bits, shifts, floor_divide's integers) never carry a gradient.
    {Op::Floor, {no_gradient, batch_elementwise}},
    {Op::Ceil, {no_gradient, batch_elementwise}},
    {Op::Round, {no_gradient, batch_elementwise}},
    {Op::Trunc, {no_gradient, batch_elementwise}},
    {Op::Sign, {no_gradient, batch_elementwise}},
    {Op::IsNan, {no_gradient, batch_elementwise}},
    {Op::IsInf, {no_gradient, batch_elementwise}},
    {Op::IsFinite, {no_gradient, batch_elementwise}},
    {Op::Log1p, {ARRAYC_UNARY(1 / (x + 1)), batch_elementwise}},
    {Op::Expm1, {ARRAYC_UNARY(y + 1), batch_elementwise}},
    {Op::Log2, {ARRAYC_UNARY(1 / (x * kLn2)), batch_elementwise}},
    {Op::Log10, {ARRAYC_UNARY(1 / (x * kLn10)), batch_elementwise}},
    {Op::Exp2, {ARRAYC_UNARY(y * kLn2), batch_elementwise}},
    {Op::Tan, {ARRAYC_UNARY(1 + y * y), batch_elementwise}},
    {Op::Arcsin, {ARRAYC_UNARY(1 / sqrt(1 - x * x)), batch_elementwise}},
    {Op::Arccos, {ARRAYC_UNARY(-1 / sqrt(1 - x * x)), batch_elementwise}},
    {Op::Arctan, {ARRAYC_UNARY(1 / (1 + x * x)), batch_elementwise}},
    {Op::Sinh, {ARRAYC_UNARY(cosh(x)), batch_elementwise}},
    {Op::Cosh, {ARRAYC_UNARY(sinh(x)), batch_elementwise}},
    {Op::Arcsinh, {ARRAYC_UNARY(1 / sqrt(x * x + 1)), batch_elementwise}},
    {Op::Erf, {ARRAYC_UNARY(kTwoOverSqrtPi * exp(-(x * x))), batch_elementwise}},
    {Op::Sigmoid, {ARRAYC_UNARY(y * (1 - y)), batch_elementwise}},
    {Op::Invert, {no_gradient, batch_elementwise}},
    {Op::Arctan2, {[](const VjpArgs& a) -> Cts {  // arctan2(u, v): (v, -u) / (u^2 + v^2)
                     const Array &u = a.x[0], &v = a.x[1];
                     Array r = a.g / (u * u + v * v);
                     return {r * v, -(r * u)};
                   }, batch_elementwise}},
    {Op::Hypot, {[](const VjpArgs& a) -> Cts {  // (x, y) / h; 0 at the origin
                   Array zero = scalar(0, a.y);
                   Array r = where(a.y == zero, zero, a.g / a.y);
                   return {r * a.x[0], r * a.x[1]};
                 }, batch_elementwise}},
    {Op::Fmod, {[](const VjpArgs& a) -> Cts { return {a.g, -(a.g * trunc(a.x[0] / a.x[1]))}; }, batch_elementwise}},
    {Op::FloorDiv, {no_gradient, batch_elementwise}},
    {Op::Mod, {[](const VjpArgs& a) -> Cts { return {a.g, -(a.g * floor(a.x[0] / a.x[1]))}; }, batch_elementwise}},
    {Op::BitAnd, {no_gradient, batch_elementwise}},
    {Op::BitOr, {no_gradient, batch_elementwise}},
    {Op::BitXor, {no_gradient, batch_elementwise}},
    {Op::Shl, {no_gradient, batch_elementwise}},
    {Op::Shr, {no_gradient, batch_elementwise}},
    {Op::Xor, {no_gradient, batch_elementwise}},
    // Indexing: the slice view and the gather
    {Op::Slice, {slice_vjp, [](const BatchArgs& b) {
                   std::vector<int64_t> starts{0}, steps{1};
                   for (size_t d = 0; d < b.n.shape.size(); ++d) {
                     starts.push_back(b.n.ints[2 * d]);
                     steps.push_back(b.n.ints[2 * d + 1]);
                   }
                   return Array(make_slice(b.x[0].node(), starts, steps, batched_shape(b.size, b.n.shape)));
                 }}},
    {Op::Gather, {gather_vjp, batch_gather}},
    // Along one axis
    {Op::Cumsum, {[](const VjpArgs& a) -> Cts { return {reverse_cumsum(a.g, a.n.ints[0])}; }, batch_axis_op}},
    {Op::Cumprod, {cumprod_vjp, batch_axis_op}},
    {Op::Sort, {sort_vjp, batch_axis_op}},
    {Op::Argsort, {no_gradient, batch_axis_op}},
    {Op::ScatterSet, {scatter_set_vjp, batch_scatter}},  // host scatter speed
    {Op::ScatterAdd, {scatter_add_vjp, batch_scatter}},
};

constexpr size_t kNumOps = 0
#define ARRAYC_OP(name, printed, api, arity, kind) +1
#include "ir/ops.def"
    ;

}  // namespace

OpRules& op_rules_for_testing(Op op) {
  static std::array<OpRules, kNumOps> table = [] {
    std::array<OpRules, kNumOps> t{};
    for (const Entry& e : kTable) t[static_cast<size_t>(e.op)] = e.rules;
    return t;
  }();
  return table[static_cast<size_t>(op)];
}

const OpRules& op_rules(Op op) { return op_rules_for_testing(op); }

}  // namespace arrayc::detail
