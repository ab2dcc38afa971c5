// The evaluator: the syntax tree onto the library's API, values, and calls of defs through
// arrayc::jit (inline inside another trace, or when nested in a larger expression).
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>
#include <utility>

#include "internal.h"

namespace arrayc::tool {

[[noreturn]] void fail(const Node& at, std::string msg) { throw UserError{at.pos, std::move(msg)}; }

[[noreturn]] void fail(const Node& at, const Error& e) {
  if (dynamic_cast<const Interrupted*>(&e)) throw Interrupted();
  fail(at, e.what());
}

namespace {

template <size_t> using ArrayArg = const Array&;

template <size_t... I> JitEntry make_jit_n(Body body, std::index_sequence<I...>) {
  auto fn = [body](ArrayArg<I>... a) {
    return body(std::vector<Array>{a...});
  };
  auto j = std::make_shared<Jitted<decltype(fn)>>(arrayc::jit(fn));
  JitEntry e;
  e.call = [j](const std::vector<Array>& in) { return std::vector<Array>{(*j)(in.at(I)...)}; };
  e.inspect = [j](const std::vector<Array>& in) { return j->inspect(in.at(I)...); };
  return e;
}

}  // namespace

JitEntry make_jit(size_t n, Body body) {
  switch (n) {
    case 0: return make_jit_n(std::move(body), std::make_index_sequence<0>{});
    case 1: return make_jit_n(std::move(body), std::make_index_sequence<1>{});
    case 2: return make_jit_n(std::move(body), std::make_index_sequence<2>{});
    case 3: return make_jit_n(std::move(body), std::make_index_sequence<3>{});
    case 4: return make_jit_n(std::move(body), std::make_index_sequence<4>{});
    case 5: return make_jit_n(std::move(body), std::make_index_sequence<5>{});
    case 6: return make_jit_n(std::move(body), std::make_index_sequence<6>{});
    case 7: return make_jit_n(std::move(body), std::make_index_sequence<7>{});
    case 8: return make_jit_n(std::move(body), std::make_index_sequence<8>{});
    default: throw UserError{{}, "a jit function takes at most 8 array arguments"};
  }
}

Value array_value(Array a) {
  Value v;
  v.kind = Value::Kind::Array;
  v.array = std::move(a);
  return v;
}

const char* kind_name(const Value& v) {
  switch (v.kind) {
    case Value::Kind::None: return "nothing";
    case Value::Kind::Array: return "an array";
    case Value::Kind::Weak: return "a number";
    case Value::Kind::DType: return "a dtype";
    case Value::Kind::String: return "a string";
  }
  return "a value";
}

std::optional<DType> dtype_from_name(std::string_view n) {
  if (n == "float") return DType::Float64;  // Python's names
  if (n == "int") return DType::Int64;
  DType t;
  if (arrayc::dtype_from_name(std::string(n), t)) return t;  // long and short names (f16, u8, ...)
  return std::nullopt;
}

std::string shown(std::string_view name) {
  return name.size() <= 40 ? std::string(name) : std::string(name.substr(0, 40)) + "...";
}

namespace {

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

std::string suggestion(std::string_view name, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_d = 3;
  if (name.size() > 64) return "";
  for (const std::string& c : candidates) {
    size_t d = edit_distance(name, c);
    if (d < best_d || (d == best_d && !best.empty() && c < best)) {
      best_d = d;
      best = c;
    }
  }
  return best.empty() ? "" : " (did you mean '" + best + "'?)";
}

namespace {

// Python-like arithmetic on two Python-like numbers (no array involved).
Value fold(Op op, const Value& a, const Value& b, const Node& at) {
  double x = a.number, y = b.number;
  if (a.integral && b.integral && op != Op::Div)  // exact (issue 26)
    if (std::optional<Value> v = fold_ints(op, a.integer, b.integer, at)) return *v;
  switch (op) {
    case Op::Add: return weak_float(x + y);
    case Op::Sub: return weak_float(x - y);
    case Op::Mul: return weak_float(x * y);
    case Op::Div:
      if (y == 0) fail(at, "division by zero");
      return weak_float(x / y);
    case Op::Pow: return weak_float(std::pow(x, y));
    default: return Value{};
  }
}

Array (*binary_library_fn(Op op))(const Array&, const Array&) {
  switch (op) {
    case Op::Add: return add;
    case Op::Sub: return subtract;
    case Op::Mul: return multiply;
    case Op::Div: return divide;
    case Op::Pow: return arrayc::pow;
    case Op::MatMul: return matmul;
    case Op::Eq: return equal;
    case Op::Ne: return not_equal;
    case Op::Lt: return less;
    case Op::Le: return less_equal;
    case Op::Gt: return greater;
    case Op::Ge: return greater_equal;
    case Op::And: return logical_and;
    case Op::Or: return logical_or;
    // numpy math (issue 28)
    case Op::FloorDiv: return floor_divide;
    case Op::Mod: return remainder;
    case Op::BitAnd: return bitwise_and;
    case Op::BitOr: return bitwise_or;
    case Op::BitXor: return bitwise_xor;
    case Op::Shl: return left_shift;
    case Op::Shr: return right_shift;
    default: return nullptr;
  }
}

}  // namespace

// ---- evaluation -------------------------------------------------------------------------------

Value Session::eval(const Program& p, int32_t index, Scope& scope) {
  const Node& n = p.node(index);
  switch (n.kind) {
    case NodeKind::Number: return n.integral ? weak_int(n.integer) : weak_float(n.number);
    case NodeKind::Bool: return array_value(full({}, n.number, DType::Bool));
    case NodeKind::String: {
      Value v;
      v.kind = Value::Kind::String;
      v.text = std::string(n.text);
      return v;
    }
    case NodeKind::Name: {
      std::string name(n.text);
      if (scope.locals) {
        auto it = scope.locals->find(name);
        if (it != scope.locals->end()) return it->second;
      }
      if (scope.globals) {
        auto it = vars_.find(name);
        if (it != vars_.end()) return it->second;
      }
      if (auto dt = dtype_from_name(name)) {
        Value v;
        v.kind = Value::Kind::DType;
        v.dtype = *dt;
        return v;
      }
      if (find_builtin(name) || defs_.count(name))
        fail(n, "'" + name + "' is a function; call it, as in " + name + "(...)");
      if (!scope.globals && vars_.count(name))
        fail(n, "unknown name '" + name + "': a def sees only its parameters (pass '" + name +
                    "' as an argument)");
      std::vector<std::string> cands;
      if (scope.locals)
        for (const auto& [k, v] : *scope.locals) cands.push_back(k);
      if (scope.globals)
        for (const auto& [k, v] : vars_) cands.push_back(k);
      fail(n, "unknown name '" + shown(name) + "'" + suggestion(name, cands));
    }
    case NodeKind::List: return eval_list(p, n, scope);
    case NodeKind::Unary: {
      Value x = eval(p, static_cast<int32_t>(p.child(n, 0)), scope);
      if (x.kind == Value::Kind::Weak) {
        if (n.op == Op::Neg) return negate(x, n);
        if (n.op == Op::Plus) return x;
        try {
          x = array_value(strong(x, (std::string("operator ") + lang::op_spelling(n.op)).c_str()));
        } catch (const Error& e) {
          fail(n, e);
        }
      }
      if (x.kind != Value::Kind::Array)
        fail(n, std::string("operator ") + lang::op_spelling(n.op) + " needs an array or a number, not " + kind_name(x));
      try {
        if (n.op == Op::Neg) return array_value(negative(*x.array));
        if (n.op == Op::Plus) return x;
        if (n.op == Op::Invert) return array_value(invert(*x.array));
        return array_value(logical_not(*x.array));
      } catch (const Error& e) {
        fail(n, e);
      }
    }
    case NodeKind::Binary: {
      Value a = eval(p, static_cast<int32_t>(p.child(n, 0)), scope);
      Value b = eval(p, static_cast<int32_t>(p.child(n, 1)), scope);
      for (const Value* v : {&a, &b})
        if (v->kind != Value::Kind::Array && v->kind != Value::Kind::Weak)
          fail(n, std::string("operator ") + lang::op_spelling(n.op) + " needs arrays or numbers, not " + kind_name(*v));
      if (a.kind == Value::Kind::Weak && b.kind == Value::Kind::Weak) {
        Value folded = fold(n.op, a, b, n);
        if (folded.kind != Value::Kind::None) return folded;
      }
      try {
        std::string op = std::string("operator ") + lang::op_spelling(n.op);
        Array x = a.kind == Value::Kind::Array ? *a.array
                  : b.kind == Value::Kind::Array ? weak_like(a, *b.array, op.c_str())
                                                 : strong(a, op.c_str());
        Array y = b.kind == Value::Kind::Array ? *b.array
                  : a.kind == Value::Kind::Array ? weak_like(b, *a.array, op.c_str())
                                                 : strong(b, op.c_str());
        return array_value(binary_library_fn(n.op)(x, y));
      } catch (const Error& e) {
        fail(n, e);
      }
    }
    case NodeKind::Call: return eval_call(p, n, scope);
    case NodeKind::Apply: return eval_apply(p, n, scope);  // transforms.cpp
    case NodeKind::Keyword: fail(n, "unexpected keyword argument");
    case NodeKind::Subscript: return eval_subscript(p, n, scope);
    case NodeKind::Slice: case NodeKind::Ellipsis: case NodeKind::NewAxis:
      fail(n, "a slice, '...' or None is only valid inside an index, as in x[1:3, ..., None]");
  }
  fail(n, "cannot evaluate this");
}

// Indexing: x[1:3, ::-1, None, ..., 0, mask] through arrayc's operator[] (views for the basic
// items; an integer array gathers, a bool array selects).
Value Session::eval_subscript(const Program& p, const Node& n, Scope& scope) {
  Value base = eval(p, static_cast<int32_t>(p.child(n, 0)), scope);
  if (base.kind == Value::Kind::Weak) {
    try {
      base = array_value(strong(base, "indexing"));
    } catch (const Error& e) {
      fail(n, e);
    }
  }
  if (base.kind != Value::Kind::Array) fail(n, std::string("only arrays can be indexed, not ") + kind_name(base));
  auto integer = [&](const Node& at) -> int64_t {
    Value v = eval(p, static_cast<int32_t>(&at - p.nodes.data()), scope);
    if (auto i = int64_of(v)) return *i;
    if (v.kind == Value::Kind::Array && v.array->ndim() == 0 && is_int(v.array->dtype())) return v.array->item<int64_t>();
    fail(at, std::string("a slice bound must be an integer, not ") +
                 (v.kind == Value::Kind::Array ? std::string(dtype_name(v.array->dtype())) + " " + shape_str(v.array->shape())
                                               : kind_name(v)));
  };
  std::vector<Index> index;
  for (uint32_t k = 1; k < n.count; ++k) {
    const Node& item = p.node(static_cast<int32_t>(p.child(n, k)));
    switch (item.kind) {
      case NodeKind::Ellipsis: index.push_back(ellipsis); break;
      case NodeKind::NewAxis: index.push_back(newaxis); break;
      case NodeKind::Slice: {
        int mask = static_cast<int>(item.number);
        std::optional<int64_t> part[3];
        uint32_t c = 0;
        for (int b = 0; b < 3; ++b)
          if (mask & (1 << b)) part[b] = integer(p.node(static_cast<int32_t>(p.child(item, c++))));
        index.push_back(Slice(part[0], part[1], part[2]));
        break;
      }
      default: {
        Value v = eval(p, static_cast<int32_t>(p.child(n, k)), scope);
        if (v.kind == Value::Kind::Weak) {
          std::optional<int64_t> i = int64_of(v);
          if (!i) fail(item, "an index must be an integer in int64's range, not " + format_weak(v));
          index.push_back(*i);
        } else if (v.kind == Value::Kind::Array) {
          index.push_back(*v.array);
        } else {
          fail(item, std::string("an index must be an integer, a slice, None, ... or an array, not ") + kind_name(v));
        }
      }
    }
  }
  try {
    return array_value((*base.array)[index]);
  } catch (const Error& e) {
    fail(n, e);
  }
}

// A list literal: numbers (or 0-d arrays), nested to any regular shape -> bool, int64, uint64 or
// float64. As numpy: an integer past int64's range is a uint64; int64 and uint64 elements
// together make float64 (np.array([2**63, 1]) is float64); past uint64, only a float list holds it.
Value Session::eval_list(const Program& p, const Node& n, Scope& scope) {
  std::vector<double> vals;
  std::vector<uint64_t> ints;  // the same elements as integers, exact (int64's two's complement or uint64)
  Shape shape;
  bool has_int = false, has_uint = false, has_float = false;
  bool any = false;
  // Depth-first over nested lists, checking that every level has one length.
  struct Frame {
    const Node* node;
    uint32_t next;
    size_t depth;
  };
  std::vector<Frame> stack{{&n, 0, 0}};
  std::vector<int64_t> seen;  // length seen at each depth
  const Node* too_big = nullptr;  // the first integer outside int64's range
  std::string too_big_text;
  bool leaf_depth_known = false;
  size_t leaf_depth = 0;
  while (!stack.empty()) {
    Frame& f = stack.back();
    if (f.next == 0) {
      if (seen.size() <= f.depth) seen.resize(f.depth + 1, -1);
      if (seen[f.depth] == -1) seen[f.depth] = f.node->count;
      else if (seen[f.depth] != f.node->count) fail(*f.node, "ragged list: rows of different lengths");
    }
    if (f.next == f.node->count) {
      if (f.node->count == 0) {
        if (leaf_depth_known && leaf_depth != f.depth + 1) fail(*f.node, "ragged list: rows of different depths");
        leaf_depth_known = true;
        leaf_depth = f.depth + 1;
      }
      stack.pop_back();
      continue;
    }
    uint32_t ci = p.child(*f.node, f.next++);
    const Node& c = p.node(static_cast<int32_t>(ci));
    size_t depth = f.depth + 1;
    if (c.kind == NodeKind::List) {
      stack.push_back(Frame{&c, 0, depth});
      continue;
    }
    if (leaf_depth_known && leaf_depth != depth) fail(c, "ragged list: rows of different depths");
    leaf_depth_known = true;
    leaf_depth = depth;
    Value v = eval(p, static_cast<int32_t>(ci), scope);
    double x;
    uint64_t i = 0;
    if (v.kind == Value::Kind::Weak) {
      x = v.number;
      if (!v.integral) {
        has_float = true;
      } else if (v.integer >= INT64_MIN && v.integer <= static_cast<Int>(UINT64_MAX)) {
        i = static_cast<uint64_t>(v.integer);
        (v.integer > INT64_MAX ? has_uint : has_int) = true;
      } else if (!too_big) {
        too_big = &c;
        too_big_text = int_str(v.integer);
      }
    } else if (v.kind == Value::Kind::Array && v.array->ndim() == 0) {
      x = v.array->item<double>();
      DType dt = v.array->dtype();
      if (dt == DType::UInt64 && v.array->item<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
        i = v.array->item<uint64_t>();
        has_uint = true;
      } else if (is_int(dt) || dt == DType::Bool) {
        i = static_cast<uint64_t>(v.array->item<int64_t>());
        has_int = has_int || dt != DType::Bool;
      } else {
        has_float = true;
      }
    } else {
      fail(c, std::string("a list holds numbers, not ") +
                  (v.kind == Value::Kind::Array ? "arrays of shape " + shape_str(v.array->shape()) : kind_name(v)));
    }
    any = true;
    vals.push_back(x);
    ints.push_back(i);
  }
  for (size_t d = 0; d < leaf_depth && d < seen.size(); ++d) shape.push_back(seen[d] < 0 ? 0 : seen[d]);
  if (!any) return array_value(zeros(shape, DType::Float64));
  // Past uint64 an integer has no integer dtype (numpy would make an object array).
  if (too_big && !has_float)
    fail(*too_big, "list element " + too_big_text +
                       " is out of range for int64 and uint64 (a list of integers is int64, or uint64 past int64)");
  std::vector<int64_t> as_int64(ints.begin(), ints.end());
  if (has_float || (has_int && has_uint)) return array_value(arrayc::array<double>(vals, shape));
  if (has_uint) return array_value(arrayc::array<uint64_t>(ints, shape));
  if (has_int) return array_value(arrayc::array<int64_t>(as_int64, shape));
  return array_value(cast(arrayc::array<int64_t>(as_int64, shape), DType::Bool));
}

Value Session::eval_call(const Program& p, const Node& n, Scope& scope) {
  std::string name(n.text);
  // Arguments, positional then keyword.
  std::vector<Value> pos;
  std::vector<const Node*> pos_at;
  std::vector<std::pair<std::string_view, Value>> kw;
  std::vector<const Node*> kw_at;
  auto def_it = defs_.find(name);
  const Builtin* b = def_it == defs_.end() ? find_builtin(name) : nullptr;
  if (def_it == defs_.end() && !b) {
    std::vector<std::string> cands = builtin_names();
    for (const auto& [k, d] : defs_) cands.push_back(k);
    if (vars_.count(name)) fail(n, "'" + name + "' is a variable, not a function");
    if (dtype_from_name(name))
      fail(n, "'" + name + "' is a dtype, not a function: use astype(x, " + name + ")");
    fail(n, "unknown function '" + shown(name) + "'" + suggestion(name, cands));
  }
  for (uint32_t k = 0; k < n.count; ++k) {
    const Node& a = p.node(static_cast<int32_t>(p.child(n, k)));
    if (a.kind == NodeKind::Keyword) {
      kw.emplace_back(a.text, eval(p, static_cast<int32_t>(p.child(a, 0)), scope));
      kw_at.push_back(&a);
    } else {
      pos.push_back(eval(p, static_cast<int32_t>(p.child(n, k)), scope));
      pos_at.push_back(&a);
    }
  }
  if (def_it != defs_.end()) {
    if (!kw.empty()) fail(*kw_at[0], "a def takes positional arguments only");
    return call_def(n, *def_it->second, std::move(pos), scope);
  }
  // Bind to the builtin's parameters.
  Builtin::Args args;
  args.fn = b;
  args.call = &n;
  args.scope = &scope;
  args.base_dir = opts_.base_dir;
  size_t np = b->params.size();
  const bool takes_named = np && std::string_view(b->params[np - 1]).starts_with("**");  // numpy's savez(**kwds)
  if (takes_named) --np;
  args.v.resize(np);
  args.at.assign(np, nullptr);
  auto pname = [&](size_t i) {
    std::string s = b->params[i];
    if (s.back() == '?') s.pop_back();
    return s;
  };
  if (pos.size() > np)
    fail(*pos_at[np], name + "() takes at most " + std::to_string(np) + " arguments (" +
                          std::to_string(pos.size()) + " given)");
  for (size_t i = 0; i < pos.size(); ++i) {
    args.v[i] = std::move(pos[i]);
    args.at[i] = pos_at[i];
  }
  for (size_t k = 0; k < kw.size(); ++k) {
    size_t i = 0;
    while (i < np && pname(i) != kw[k].first) ++i;
    if (i == np && takes_named) {
      for (const auto& [other, v] : args.named)
        if (other == kw[k].first) fail(*kw_at[k], name + "() got argument '" + std::string(other) + "' twice");
      args.named.emplace_back(std::string(kw[k].first), std::move(kw[k].second));
      args.named_at.push_back(kw_at[k]);
      continue;
    }
    if (i == np) {
      std::string known;
      for (size_t j = 0; j < np; ++j) known += (j ? ", " : "") + pname(j);
      fail(*kw_at[k], name + "() has no argument '" + std::string(kw[k].first) + "' (it takes " + known + ")");
    }
    if (args.v[i]) fail(*kw_at[k], name + "() got argument '" + pname(i) + "' twice");
    args.v[i] = std::move(kw[k].second);
    args.at[i] = kw_at[k];
  }
  for (size_t i = 0; i < np; ++i)
    if (!args.v[i] && std::string(b->params[i]).back() != '?')
      fail(n, name + "() is missing argument '" + pname(i) + "': " + b->help);
  try {
    return b->fn(args);
  } catch (const Error& e) {
    fail(n, e);
  }
}

// The body of a def on these arguments: a graph on them (a trace when they are placeholders).
Value Session::def_body(const Def& def, std::map<std::string, Value> locals, std::vector<const Def*> stack) {
  Scope inner;
  inner.locals = &locals;
  inner.globals = false;
  inner.tracing = true;
  inner.stack = std::move(stack);
  inner.stack.push_back(&def);
  return eval(*def.prog, def.stmt->expr, inner);
}

// A def called at the root of a statement runs through arrayc::jit (traced once per pattern of
// arguments). Called inside a trace, or nested in a larger expression (sum(sq(x))), it is
// inlined: its body becomes part of the caller's graph, so that the two fuse. An error inside
// it is reported at the call, prefixed "in def NAME: ".
Value Session::call_def(const Node& at, Def& def, std::vector<Value> args, Scope& scope) {
  const Stmt& s = *def.stmt;
  if (args.size() != s.params.size())
    fail(at, def.name + "() takes " + std::to_string(s.params.size()) + " argument" +
                 (s.params.size() == 1 ? "" : "s") + " (" + std::to_string(args.size()) + " given)");
  try {
    if (scope.tracing || &at != scope.root) {
      if (std::find(scope.stack.begin(), scope.stack.end(), &def) != scope.stack.end())
        fail(at, "'" + def.name + "' calls itself; a def cannot be recursive");
      if (scope.stack.size() >= 64) fail(at, "defs nested too deeply");
      std::map<std::string, Value> locals;
      for (size_t i = 0; i < args.size(); ++i) locals[std::string(s.params[i])] = std::move(args[i]);
      return def_body(def, std::move(locals), scope.stack);
    }
    return call_jit(def, args);
  } catch (const UserError& e) {
    throw UserError{at.pos, "in def " + def.name + ": " + e.message};
  }
}

// Arrays become jit parameters; numbers are baked into the trace (one trace per value, as
// JAX's static arguments), so that they keep numpy's weak-scalar typing.
Value Session::call_jit(Def& def, const std::vector<Value>& args) {
  const Stmt& s = *def.stmt;
  std::string key;
  std::vector<Array> arrays;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].kind == Value::Kind::Array) {
      arrays.push_back(*args[i].array);
      key += "A;";
    } else if (args[i].kind == Value::Kind::Weak) {
      std::ostringstream k;
      k << std::setprecision(17) << "W" << args[i].integral << format_weak(args[i]) << ";";
      key += k.str();
    } else {
      throw UserError{{}, "argument " + std::to_string(i + 1) + " ('" + std::string(s.params[i]) +
                              "') must be an array or a number, not " + kind_name(args[i])};
    }
  }
  auto it = def.jits.find(key);
  if (it == def.jits.end()) {
    std::vector<Value> pattern = args;
    Def* d = &def;
    Body body = [this, d, pattern](const std::vector<Array>& params) {
      std::map<std::string, Value> locals;
      size_t k = 0;
      for (size_t i = 0; i < pattern.size(); ++i)
        locals[std::string(d->stmt->params[i])] =
            pattern[i].kind == Value::Kind::Array ? array_value(params.at(k++)) : pattern[i];
      Value v = def_body(*d, std::move(locals), {});
      if (v.kind == Value::Kind::Weak) return strong(v);
      if (v.kind != Value::Kind::Array) throw UserError{{}, std::string("it must compute an array, not ") + kind_name(v)};
      return *v.array;
    };
    it = def.jits.emplace(key, make_jit(arrays.size(), std::move(body))).first;
  }
  try {
    return array_value(it->second.call(arrays).at(0));
  } catch (...) {
    def.jits.erase(key);  // a failed trace is not reused
    throw;
  }
}

}  // namespace arrayc::tool
