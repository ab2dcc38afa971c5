// Constant folding and algebraic simplification. Only rewrites that are exact for every input,
// NaN and signed zeros included: x*1, x/1, x+(-0.0), x-0.0, -(-x), pow(x, c) for c in {0, 1, 2,
// -1, 0.5} (the correctly rounded result by one cheaper op), views of constants,
// ops whose inputs are all constants (folded with the reference interpreter, so folding and
// running agree), where() with a constant condition, and view chains of one kind.
// The identities fold only by a constant that kernels compile in (kernel.h's
// constant_is_inlined: integers, pow's small exponents). A float 1 or 0 is a kernel parameter
// like every other float, so folding x * 1.0 would give that one value a kernel of its own: a
// loop over scales (x * s for s = 0, 1, 2, ...) would compile twice instead of once.
#include <cmath>

#include "ir/build.h"
#include "ir/interpreter.h"
#include "kernel/kernel.h"
#include "passes/pipeline.h"

namespace arrayc::detail {
namespace {

bool is_const(const NodeRef& n, double v) {
  if (n->op != Op::Constant) return false;
  if (!is_float(n->dtype)) return n->value.i == static_cast<int64_t>(v);
  return n->value.f == v && std::signbit(n->value.f) == std::signbit(v);
}

// n is the constant v and compiled into kernels (not a parameter): an identity by it may fold.
bool is_inlined_const(const NodeRef& n, double v) {
  return is_const(n, v) && constant_is_inlined(n->value, /*pow_exponent=*/false);
}

NodeRef fold_constants(const NodeRef& n, const std::vector<NodeRef>& in) {
  std::vector<NodeRef> scalars;
  for (const NodeRef& i : in) scalars.push_back(make_constant(i->value, {}, i->device));
  NodeRef scalar = rebuild(n, scalars);
  HostArray v = interpret(scalar);
  Scalar s;
  s.dtype = v.dtype;
  if (is_float(v.dtype)) s.f = v.f.at(0);
  else s.i = v.i.at(0);
  return make_constant(s, n->shape, n->device);
}

// pow(x, c) for the exponents whose correctly rounded result one cheaper op gives (numpy's list):
// x^0 = 1 (NaN included, C99), x^1 = x, x^2 = x*x, x^-1 = 1/x (floats), x^0.5 = sqrt(x) with C99's
// pow(-0, 0.5) = +0 (sqrt(-0 + 0)) and pow(-inf, 0.5) = +inf. Integers: 0, 1 and 2 (x*x wraps as
// repeated multiplication does). Other exponents keep pow.
NodeRef pow_by_constant(const NodeRef& n, const std::vector<NodeRef>& in) {
  const NodeRef& x = in[0];
  const NodeRef& e = in[1];
  if (e->op != Op::Constant || x->dtype != n->dtype || x->shape != n->shape) return nullptr;
  auto cst = [&](double v) { return make_constant(Scalar::of(n->dtype, v), n->shape, n->device); };
  if (is_const(e, 0) || is_const(e, -0.0)) return cst(1);
  if (is_const(e, 1)) return x;
  if (is_const(e, 2)) return make_elementwise(Op::Mul, {x, x});
  if (!is_float(n->dtype)) return nullptr;
  if (is_const(e, -1)) return make_elementwise(Op::Div, {cst(1), x});
  if (is_const(e, 0.5)) {
    NodeRef root = make_elementwise(Op::Sqrt, {make_elementwise(Op::Add, {x, cst(0)})});
    NodeRef minus_inf = make_elementwise(Op::Eq, {x, cst(-INFINITY)});
    return make_elementwise(Op::Where, {minus_inf, cst(INFINITY), root});
  }
  return nullptr;
}

NodeRef simplify_node(const NodeRef& n, const std::vector<NodeRef>& in) {
  OpKind kind = op_kind(n->op);
  if (kind == OpKind::View && in[0]->op == Op::Constant) return make_constant(in[0]->value, n->shape, n->device);
  if (n->op == Op::Gather && in[0]->op == Op::Constant) return make_constant(in[0]->value, n->shape, n->device);
  if (kind == OpKind::View && in[0]->op == n->op && (n->op == Op::Reshape || n->op == Op::Transpose)) {
    if (n->op == Op::Reshape) return make_reshape(in[0]->inputs[0], n->shape);
    std::vector<int64_t> perm;
    for (int64_t p : n->ints) perm.push_back(in[0]->ints[p]);
    return make_transpose(in[0]->inputs[0], perm);
  }
  if (kind != OpKind::Elementwise) return rebuild(n, in);
  bool all_const = true;
  for (const NodeRef& i : in) all_const &= i->op == Op::Constant;
  if (all_const) return fold_constants(n, in);
  switch (n->op) {
    case Op::Mul:
      if (is_inlined_const(in[1], 1)) return in[0];
      if (is_inlined_const(in[0], 1)) return in[1];
      break;
    case Op::Div:
      if (is_inlined_const(in[1], 1)) return in[0];
      break;
    case Op::Add:
      if (is_inlined_const(in[1], is_int(n->dtype) ? 0.0 : -0.0)) return in[0];
      if (is_inlined_const(in[0], is_int(n->dtype) ? 0.0 : -0.0)) return in[1];
      break;
    case Op::Sub:
      if (is_inlined_const(in[1], 0)) return in[0];
      break;
    case Op::Neg:
      if (in[0]->op == Op::Neg) return in[0]->inputs[0];
      break;
    case Op::Where:
      if (in[0]->op == Op::Constant) return in[0]->value.i ? in[1] : in[2];
      break;
    case Op::Pow:
      if (NodeRef r = pow_by_constant(n, in)) return r;
      break;
    default: break;
  }
  return rebuild(n, in);
}

}  // namespace

Graph simplify(const Graph& g) {
  return rewrite(g, [](const NodeRef& n, const std::vector<NodeRef>& in, bool) { return simplify_node(n, in); });
}

}  // namespace arrayc::detail
