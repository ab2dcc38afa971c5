// grad, vjp, jvp and vmap as graph transformations (include/arrayc/transforms.h).
//
// Each traces f on placeholders (Param leaves with indices no jit uses, unique per trace, so that
// two arguments never share a node even when they hold the same array), then walks the graph f
// built, calling the rules of lib/transforms/rules.cpp:
//   - reverse mode walks it backwards from the outputs' cotangents, summing the cotangents of
//     nodes used more than once; only nodes on a path from a differentiated argument to an
//     output get one, and only float nodes;
//   - vmap walks it forwards, keeping per node either its batched value (batch on axis 0) or,
//     when nothing it depends on is batched, its value as it is.
// The placeholders are replaced by the real arguments (or by jit's parameters, inside a trace),
// so the result is an ordinary graph that jit compiles into one program.
#include <atomic>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "arrayc/ops.h"
#include "arrayc/transforms.h"
#include "ir/build.h"
#include "ir/graph.h"
#include "transforms/rules.h"

namespace arrayc::detail {
namespace {

using NodeMap = std::unordered_map<const Node*, NodeRef>;

[[noreturn]] void fail(const std::string& msg) { throw Error(msg); }

std::string describe(const Array& a) { return std::string(dtype_name(a.dtype())) + shape_str(a.shape()); }
std::string describe(const Node& n) { return std::string(dtype_name(n.dtype)) + shape_str(n.shape); }

// A fresh placeholder: a Param whose index no jit parameter has.
NodeRef placeholder(DType t, const Shape& s, Device d) {
  static std::atomic<int64_t> next{int64_t(1) << 40};
  return make_param(next.fetch_add(1), t, s, d);
}

// f traced on `inputs` with the trace depth raised, so that jitted functions inside run inline.
std::vector<NodeRef> trace(const ArrayFn& f, const std::vector<NodeRef>& inputs) {
  struct Depth {
    Depth() { ++trace_depth; }
    ~Depth() { --trace_depth; }
  } depth;
  std::vector<Array> in;
  for (const NodeRef& n : inputs) in.emplace_back(n);
  std::vector<NodeRef> out;
  for (const Array& a : f(in)) out.push_back(a.node());
  return out;
}

// Every node of the graph of `outputs` with the leaves in `leaves` replaced (a node that
// depends on none of them stays as it is).
NodeMap substitute(const std::vector<NodeRef>& outputs, NodeMap leaves) {
  for (const NodeRef& n : topo_order(outputs)) {
    if (leaves.count(n.get())) continue;
    std::vector<NodeRef> in;
    bool changed = false;
    for (const NodeRef& i : n->inputs) {
      auto it = leaves.find(i.get());
      in.push_back(it == leaves.end() ? i : it->second);
      changed |= in.back() != i;
    }
    if (changed) leaves[n.get()] = rebuild(n, in);
  }
  return leaves;
}

NodeRef mapped(const NodeMap& m, const NodeRef& n) {
  auto it = m.find(n.get());
  return it == m.end() ? n : it->second;
}

// Outside every trace the results are evaluated together (one program); inside one they stay
// part of the graph being traced.
std::vector<Array> finish(std::vector<Array> r) {
  if (trace_depth == 0) arrayc::eval(r);
  return r;
}

// ---- Reverse mode ---------------------------------------------------------------------------

// The cotangents of `wrt` (placeholders of the traced graph of `outputs`) given those of the
// outputs (a null entry: zero). `primal` maps the traced nodes to their values.
std::vector<NodeRef> backward(const char* api, const std::vector<NodeRef>& outputs, const std::vector<NodeRef>& cts,
                              const std::vector<NodeRef>& wrt, const NodeMap& primal) {
  std::vector<NodeRef> order = topo_order(outputs);
  std::unordered_set<const Node*> active(wrt.size() * 2);  // depends on a differentiated input
  for (const NodeRef& w : wrt) active.insert(w.get());
  for (const NodeRef& n : order)
    for (const NodeRef& i : n->inputs)
      if (active.count(i.get())) {
        active.insert(n.get());
        break;
      }

  std::unordered_map<const Node*, Array> ct;
  auto accumulate = [&](const Node* n, const Array& g) {
    auto [it, fresh] = ct.try_emplace(n, g);
    if (!fresh) it->second = it->second + g;
  };
  for (size_t i = 0; i < outputs.size(); ++i)
    if (cts[i] && active.count(outputs[i].get()) && is_float(outputs[i]->dtype)) accumulate(outputs[i].get(), Array(cts[i]));

  for (size_t k = order.size(); k-- > 0;) {
    const NodeRef& n = order[k];
    auto it = ct.find(n.get());
    if (it == ct.end() || n->inputs.empty()) continue;
    Array g = it->second;
    ct.erase(it);  // placeholders are leaves: theirs stay
    VjpRule rule = op_rules(n->op).vjp;
    if (!rule)
      fail(std::string(api) + ": no gradient rule for '" + api_name(n->op) + "' (op " + op_name(n->op) +
           ", " + describe(*n) + "); it cannot be differentiated yet");
    VjpArgs args{*n, {}, Array(mapped(primal, n)), g};
    for (const NodeRef& i : n->inputs) args.x.emplace_back(mapped(primal, i));
    std::vector<std::optional<Array>> in_cts = rule(args);
    ARRAYC_INTERNAL_CHECK(in_cts.size() == n->inputs.size(), std::string("gradient rule of ") + op_name(n->op));
    for (size_t i = 0; i < in_cts.size(); ++i) {
      const NodeRef& x = n->inputs[i];
      if (!in_cts[i] || !active.count(x.get()) || !is_float(x->dtype)) continue;
      ARRAYC_INTERNAL_CHECK(in_cts[i]->shape() == x->shape && in_cts[i]->dtype() == x->dtype,
                            std::string("gradient rule of ") + op_name(n->op) + " gave " + describe(*in_cts[i]) +
                                " for an input " + describe(*x));
      accumulate(x.get(), *in_cts[i]);
    }
  }
  std::vector<NodeRef> r;
  for (const NodeRef& w : wrt) {
    auto it = ct.find(w.get());
    r.push_back(it != ct.end() ? it->second.node() : make_constant(Scalar::of(w->dtype, 0), w->shape, w->device));
  }
  return r;
}

// A differentiated argument must be a float array.
void check_differentiable(const char* api, const Array& a, size_t index) {
  if (!is_float(a.dtype()))
    fail(std::string(api) + ": argument " + std::to_string(index) + " is " + describe(a) +
         "; only float arguments can be differentiated (cast it to float32 or float64)");
}

// f traced on placeholders for `args`, with the map from placeholders (and what depends on them)
// to values over the real arguments.
struct Traced {
  std::vector<NodeRef> params, outputs;
  NodeMap primal;
};
Traced trace_on(const ArrayFn& f, const std::vector<Array>& args) {
  Traced t;
  NodeMap leaves;
  for (const Array& a : args) {
    t.params.push_back(placeholder(a.dtype(), a.shape(), a.device()));
    leaves[t.params.back().get()] = a.node();
  }
  t.outputs = trace(f, t.params);
  t.primal = substitute(t.outputs, std::move(leaves));
  return t;
}

std::vector<Array> values(const Traced& t) {
  std::vector<Array> r;
  for (const NodeRef& o : t.outputs) r.emplace_back(mapped(t.primal, o));
  return r;
}

}  // namespace

std::vector<Array> grad_call(const char* api, const ArrayFn& f, const std::vector<Array>& args,
                             const std::vector<int64_t>& argnums) {
  if (argnums.empty()) fail(std::string(api) + ": no argument to differentiate with respect to (argnums is empty)");
  std::vector<NodeRef> wrt;
  Traced t = trace_on(f, args);
  for (int64_t k : argnums) {
    if (k < 0 || k >= static_cast<int64_t>(args.size()))
      fail(std::string(api) + ": argnum " + std::to_string(k) + " is out of range for a function of " +
           std::to_string(args.size()) + " arguments");
    check_differentiable(api, args[k], static_cast<size_t>(k));
    wrt.push_back(t.params[k]);
  }
  if (t.outputs.empty()) fail(std::string(api) + ": the function returned no array");
  const NodeRef& out = t.outputs[0];
  if (out->rank() != 0 || !is_float(out->dtype))
    fail(std::string(api) + ": the function must return a float scalar (shape []), not " + describe(*out) +
         "; use vjp for other results");
  std::vector<NodeRef> cts(t.outputs.size());
  cts[0] = make_constant(Scalar::of(out->dtype, 1), {}, out->device);
  std::vector<Array> r = values(t);
  for (const NodeRef& g : backward(api, t.outputs, cts, wrt, t.primal)) r.emplace_back(g);
  return finish(std::move(r));
}

struct VjpState {
  Traced t;
  std::vector<Array> primals;
};

std::pair<std::vector<Array>, std::shared_ptr<VjpState>> vjp_call(const ArrayFn& f, const std::vector<Array>& primals) {
  auto s = std::make_shared<VjpState>();
  s->t = trace_on(f, primals);
  s->primals = primals;
  return {finish(values(s->t)), s};
}

std::vector<Array> pullback_call(const VjpState& s, const std::vector<Array>& cotangents) {
  const std::vector<NodeRef>& outs = s.t.outputs;
  if (cotangents.size() != outs.size())
    fail("vjp: " + std::to_string(cotangents.size()) + " cotangents given for a function of " +
         std::to_string(outs.size()) + " outputs");
  std::vector<NodeRef> cts, wrt;
  for (size_t i = 0; i < outs.size(); ++i) {
    const Array& c = cotangents[i];
    if (c.shape() != outs[i]->shape || c.dtype() != outs[i]->dtype)
      fail("vjp: cotangent " + std::to_string(i) + " is " + describe(c) + ", but output " + std::to_string(i) +
           " is " + describe(*outs[i]));
    cts.push_back(c.node());
  }
  for (size_t i = 0; i < s.primals.size(); ++i) {
    check_differentiable("vjp", s.primals[i], i);
    wrt.push_back(s.t.params[i]);
  }
  std::vector<Array> r;
  for (const NodeRef& g : backward("vjp", outs, cts, wrt, s.t.primal)) r.emplace_back(g);
  return finish(std::move(r));
}

// Forward mode by transposing the pullback: the pullback u -> J^T u is linear in u, so its own
// pullback at any u maps t to J t. u is a placeholder, set to zero (nothing of J t depends on it).
std::vector<Array> jvp_call(const ArrayFn& f, const std::vector<Array>& primals, const std::vector<Array>& tangents) {
  if (tangents.size() != primals.size())
    fail("jvp: " + std::to_string(tangents.size()) + " tangents given for " + std::to_string(primals.size()) + " primals");
  for (size_t i = 0; i < primals.size(); ++i) {
    check_differentiable("jvp", primals[i], i);
    if (tangents[i].shape() != primals[i].shape() || tangents[i].dtype() != primals[i].dtype())
      fail("jvp: tangent " + std::to_string(i) + " is " + describe(tangents[i]) + ", but primal " +
           std::to_string(i) + " is " + describe(primals[i]));
  }
  Traced t = trace_on(f, primals);
  std::vector<NodeRef> us;
  NodeMap zeros;
  for (const NodeRef& o : t.outputs) {
    us.push_back(placeholder(o->dtype, o->shape, o->device));
    zeros[us.back().get()] = make_constant(Scalar::of(o->dtype, 0), o->shape, o->device);
  }
  std::vector<NodeRef> pulled = backward("jvp", t.outputs, us, t.params, t.primal);
  std::vector<NodeRef> tans;
  for (const Array& x : tangents) tans.push_back(x.node());
  NodeMap at_zero = substitute(pulled, zeros);
  std::vector<Array> r = values(t);
  std::vector<NodeRef> forward = backward("jvp", pulled, tans, us, at_zero);
  for (size_t i = 0; i < forward.size(); ++i) {
    const NodeRef& o = t.outputs[i];
    // A float output's tangent; an integer output's is zero of its own dtype.
    r.emplace_back(is_float(o->dtype) ? forward[i] : make_constant(Scalar::of(o->dtype, 0), o->shape, o->device));
  }
  return finish(std::move(r));
}

// ---- vmap -------------------------------------------------------------------------------------

namespace {

// `a` with axis `from` moved to position `to`.
Array move_axis(const Array& a, int64_t from, int64_t to) {
  if (from == to) return a;
  std::vector<int64_t> p;
  for (int64_t d = 0; d < a.ndim(); ++d)
    if (d != from) p.push_back(d);
  p.insert(p.begin() + to, from);
  return transpose(a, p);
}

int64_t axis_for(const std::vector<int64_t>& axes, size_t i, size_t n, const char* what) {
  if (axes.empty()) return 0;
  if (axes.size() == 1) return axes[0];
  if (axes.size() != n)
    fail("vmap: " + std::to_string(axes.size()) + " " + what + " given for " + std::to_string(n) +
         (std::string(what) == "in_axes" ? " arguments" : " outputs"));
  return axes[i];
}

}  // namespace

std::vector<Array> vmap_call(const ArrayFn& f, const std::vector<Array>& args, const std::vector<int64_t>& in_axes,
                             const std::vector<int64_t>& out_axes) {
  // The arguments, batched ones with their axis moved to the front.
  int64_t size = -1;
  size_t size_from = 0;
  std::vector<NodeRef> params;
  NodeMap value;                              // traced node -> its value, batched or not
  std::unordered_set<const Node*> batched;   // traced nodes whose value is batched
  for (size_t i = 0; i < args.size(); ++i) {
    const Array& a = args[i];
    int64_t axis = axis_for(in_axes, i, args.size(), "in_axes");
    if (axis == not_mapped) {
      params.push_back(placeholder(a.dtype(), a.shape(), a.device()));
      value[params.back().get()] = a.node();
      continue;
    }
    if (axis < -a.ndim() || axis >= a.ndim())
      fail("vmap: in_axes " + std::to_string(axis) + " is out of range for argument " + std::to_string(i) +
           " of shape " + shape_str(a.shape()));
    if (axis < 0) axis += a.ndim();
    int64_t n = a.shape()[axis];
    if (size >= 0 && n != size)
      fail("vmap: mapped axes differ in size: argument " + std::to_string(size_from) + " has " +
           std::to_string(size) + " along its mapped axis, argument " + std::to_string(i) + " (shape " +
           shape_str(a.shape()) + ", axis " + std::to_string(axis) + ") has " + std::to_string(n));
    size = n;
    size_from = i;
    Shape per = a.shape();
    per.erase(per.begin() + axis);
    params.push_back(placeholder(a.dtype(), per, a.device()));
    value[params.back().get()] = move_axis(a, axis, 0).node();
    batched.insert(params.back().get());
  }
  if (size < 0) fail("vmap: no argument is mapped (every in_axes entry is not_mapped)");

  std::vector<NodeRef> outs = trace(f, params);
  for (const NodeRef& n : topo_order(outs)) {
    if (n->inputs.empty()) continue;  // a placeholder (valued above) or a leaf: not batched
    BatchArgs b{*n, {}, {}, size};
    bool any = false, changed = false;
    std::vector<NodeRef> in;
    for (const NodeRef& i : n->inputs) {
      in.push_back(mapped(value, i));
      changed |= in.back() != i;
      b.x.emplace_back(in.back());
      b.batched.push_back(batched.count(i.get()) > 0);
      any |= b.batched.back();
    }
    if (!any) {
      if (changed) value[n.get()] = rebuild(n, in);
      continue;
    }
    BatchRule rule = op_rules(n->op).batch;
    if (!rule)
      fail(std::string("vmap: no batching rule for '") + api_name(n->op) + "' (op " + op_name(n->op) + ", " +
           describe(*n) + " per example)");
    Array r = rule(b);
    ARRAYC_INTERNAL_CHECK(r.ndim() == n->rank() + 1 && r.shape()[0] == size,
                          std::string("batching rule of ") + op_name(n->op) + " gave " + describe(r));
    value[n.get()] = r.node();
    batched.insert(n.get());
  }

  std::vector<Array> r;
  for (size_t j = 0; j < outs.size(); ++j) {
    const NodeRef& o = outs[j];
    Array v(mapped(value, o));
    if (!batched.count(o.get())) {  // the same for every example: stacked by broadcasting
      Shape s{size};
      s.insert(s.end(), o->shape.begin(), o->shape.end());
      v = broadcast_to(v, s);
    }
    int64_t axis = axis_for(out_axes, j, outs.size(), "out_axes");
    if (axis < -v.ndim() || axis >= v.ndim())
      fail("vmap: out_axes " + std::to_string(axis) + " is out of range for output " + std::to_string(j) + " of shape " +
           shape_str(o->shape) + " per example");
    if (axis < 0) axis += v.ndim();
    r.push_back(move_axis(v, 0, axis));
  }
  return finish(std::move(r));
}

}  // namespace arrayc::detail
