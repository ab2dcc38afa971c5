// grad(f)(args) and vmap(f)(args) on defs (include/arrayc/transforms.h), nested as deep as wanted
// (vmap(grad(f))(xs): per-example gradients): the def's body traced on the arguments,
// differentiated or batched, as one graph. At the root of a statement the result is computed
// (one program); inside a def, nested in an expression, or under a stage command (:graph,
// :fused, ...) it stays part of the graph being built.
#include <cmath>

#include "internal.h"

namespace arrayc::tool {

namespace {

// The def at the bottom of grad(...)/vmap(...) nesting, or a UserError at what is not one.
const Node& innermost(const Program& p, const Node& maker) {
  if (maker.kind == NodeKind::Name) return maker;
  std::string t(maker.text);
  if (maker.kind != NodeKind::Call || (t != "grad" && t != "vmap"))
    fail(maker, "'" + t + "' does not make a function to call; grad(f) and vmap(f) do, for a def f");
  if (maker.count < 1 || maker.count > (t == "grad" ? 2u : 1u))
    fail(maker, t == "grad" ? "grad takes a def and, optionally, the position of the argument to differentiate: grad(f) or grad(f, 1)"
                            : "vmap takes a def: vmap(f) maps axis 0 of every array argument");
  return innermost(p, p.node(static_cast<int32_t>(p.child(maker, 0))));
}

}  // namespace

// The function `maker` makes (a def's name, or grad/vmap of one), over the array arguments of
// a call whose arguments are `pattern` (numbers there are fixed into the body).
detail::ArrayFn Session::transformed(const Program& p, const Node& maker, const std::vector<Value>& pattern, Scope& scope) {
  if (maker.kind == NodeKind::Name) {
    auto def_it = defs_.find(std::string(maker.text));
    if (def_it == defs_.end()) fail(maker, "'" + std::string(maker.text) + "' is not a def (def f(x) = ...)");
    Def* d = def_it->second.get();
    if (pattern.size() != d->stmt->params.size())
      fail(maker, d->name + "() takes " + std::to_string(d->stmt->params.size()) + " argument" +
                      (d->stmt->params.size() == 1 ? "" : "s") + " (" + std::to_string(pattern.size()) + " given)");
    return [this, d, pattern](const std::vector<Array>& in) {
      std::map<std::string, Value> locals;
      size_t k = 0;
      for (size_t i = 0; i < pattern.size(); ++i)
        locals[std::string(d->stmt->params[i])] = pattern[i].kind == Value::Kind::Array ? array_value(in.at(k++)) : pattern[i];
      Value v = def_body(*d, std::move(locals), {});
      if (v.kind == Value::Kind::Weak) return std::vector<Array>{strong(v)};
      if (v.kind != Value::Kind::Array) throw UserError{{}, std::string("it must compute an array, not ") + kind_name(v)};
      return std::vector<Array>{*v.array};
    };
  }
  detail::ArrayFn inner = transformed(p, p.node(static_cast<int32_t>(p.child(maker, 0))), pattern, scope);
  if (maker.text == "vmap") return [inner](const std::vector<Array>& in) { return std::vector<Array>{detail::vmap_call(inner, in, {}, {}).at(0)}; };
  int64_t argnum = 0;
  if (maker.count == 2) {
    Value k = eval(p, static_cast<int32_t>(p.child(maker, 1)), scope);
    if (k.kind != Value::Kind::Weak || !k.integral) fail(maker, "grad's second argument is an argument's position, an integer");
    if (std::fabs(k.number) >= 0x1p62)
      fail(maker, "grad: argument " + format_number(k.number) + " is out of range for a function of " + std::to_string(pattern.size()));
    argnum = static_cast<int64_t>(k.number);
  }
  if (argnum < 0 || argnum >= static_cast<int64_t>(pattern.size()))
    fail(maker, "grad: argument " + std::to_string(argnum) + " is out of range for a function of " + std::to_string(pattern.size()));
  if (pattern[static_cast<size_t>(argnum)].kind != Value::Kind::Array)
    fail(maker, "grad: argument " + std::to_string(argnum) + " is a number; pass an array to differentiate with respect to it");
  int64_t wrt = 0;  // its position among the array arguments
  for (int64_t i = 0; i < argnum; ++i) wrt += pattern[static_cast<size_t>(i)].kind == Value::Kind::Array;
  return [inner, wrt](const std::vector<Array>& in) { return std::vector<Array>{detail::grad_call("grad", inner, in, {wrt}).at(1)}; };
}

Value Session::eval_apply(const Program& p, const Node& n, Scope& scope) {
  const Node& maker = p.node(static_cast<int32_t>(p.child(n, 0)));
  innermost(p, maker);
  std::vector<Value> pattern;
  std::vector<Array> arrays;
  for (uint32_t i = 1; i < n.count; ++i) {
    const Node& a = p.node(static_cast<int32_t>(p.child(n, i)));
    Value v = eval(p, static_cast<int32_t>(p.child(n, i)), scope);
    if (v.kind == Value::Kind::Array) arrays.push_back(*v.array);
    else if (v.kind != Value::Kind::Weak) fail(a, "argument " + std::to_string(i) + " must be an array or a number, not " + kind_name(v));
    pattern.push_back(std::move(v));
  }
  if (arrays.empty()) fail(n, std::string(maker.text) + ": no array argument to transform over");
  detail::ArrayFn fn = transformed(p, maker, pattern, scope);
  // Lazy (part of an enclosing graph) unless this is what the statement computes.
  struct Lazy {
    bool on;
    explicit Lazy(bool o) : on(o) { if (on) ++detail::trace_depth; }
    ~Lazy() { if (on) --detail::trace_depth; }
  } lazy(scope.tracing || &n != scope.root);
  std::string what = std::string(maker.text) + "(...)";
  try {
    Array r = fn(arrays).at(0);
    if (!lazy.on) r.eval();
    return array_value(r);
  } catch (const UserError& e) {
    throw UserError{n.pos, "in " + what + ": " + e.message};
  } catch (const Error& e) {
    fail(n, e);
  }
}

}  // namespace arrayc::tool
