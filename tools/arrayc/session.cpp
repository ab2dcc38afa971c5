// The evaluator (syntax tree -> arrayc API calls), jit functions and the : commands.
#include "session.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <utility>

#include "gpu_stages.h"

namespace arrayc::tool {

using lang::Node;
using lang::NodeKind;
using lang::Op;
using lang::Program;
using lang::Stmt;
using lang::StmtKind;
using Clock = std::chrono::steady_clock;

namespace {

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

[[noreturn]] void fail(const Node& at, std::string msg) { throw UserError{at.pos, std::move(msg)}; }

// A traced function of n arrays, through arrayc::jit (n is known only at run time, so the
// jitted lambda is instantiated for each arity up to kMaxParams).
struct JitEntry {
  std::function<std::vector<Array>(const std::vector<Array>&)> call;
  std::function<Stages(const std::vector<Array>&)> inspect;
};
using Body = std::function<Array(const std::vector<Array>&)>;
constexpr size_t kMaxParams = 8;

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

Value weak_value(double x, bool integral) {
  Value v;
  v.kind = Value::Kind::Weak;
  v.number = x;
  v.integral = integral;
  return v;
}

// A weak scalar on its own becomes what numpy makes of a Python scalar: int64 or float64.
Array strong(const Value& v) {
  return full({}, v.number, v.integral ? DType::Int64 : DType::Float64);
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
  if (n == "f32" || n == "float32") return DType::Float32;
  if (n == "f64" || n == "float64" || n == "float") return DType::Float64;
  if (n == "i32" || n == "int32") return DType::Int32;
  if (n == "i64" || n == "int64" || n == "int") return DType::Int64;
  if (n == "bool") return DType::Bool;
  return std::nullopt;
}

// A name as shown in a message: long ones are cut.
std::string shown(std::string_view name) {
  return name.size() <= 40 ? std::string(name) : std::string(name.substr(0, 40)) + "...";
}

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

}  // namespace

// ---- stage names ----------------------------------------------------------------------------

std::optional<Stage> stage_from_name(std::string_view n) {
  static const std::pair<const char*, Stage> table[] = {
      {"graph", Stage::Graph}, {"optgraph", Stage::OptGraph}, {"fused", Stage::Fused},
      {"kernels", Stage::Kernels}, {"llvm", Stage::Llvm}, {"opt", Stage::Opt},
      {"asm", Stage::Asm}, {"ptx", Stage::Ptx}, {"cubin", Stage::Cubin}};
  for (auto& [name, s] : table)
    if (n == name) return s;
  return std::nullopt;
}

const char* stage_name(Stage s) {
  switch (s) {
    case Stage::Graph: return "graph";
    case Stage::OptGraph: return "optgraph";
    case Stage::Fused: return "fused";
    case Stage::Kernels: return "kernels";
    case Stage::Llvm: return "llvm";
    case Stage::Opt: return "opt";
    case Stage::Asm: return "asm";
    case Stage::Ptx: return "ptx";
    case Stage::Cubin: return "cubin";
  }
  return "?";
}

// ---- definitions ----------------------------------------------------------------------------

struct Session::Def {
  std::string name;
  std::shared_ptr<const Program> prog;
  const Stmt* stmt = nullptr;
  std::map<std::string, JitEntry> jits;  // by the pattern of scalar arguments
};

struct Session::Scope {
  const std::map<std::string, Value>* locals = nullptr;
  bool globals = true;   // may read the session's variables
  bool tracing = false;  // inside a jit trace: def calls inline, input() is refused
  std::vector<const Def*> stack;  // defs being inlined
};

// A builtin function: its parameters ("name" required, "name?" optional) and its body.
struct Session::Builtin {
  const char* name;
  std::vector<const char*> params;
  const char* help;
  struct Args;
  std::function<Value(Args&)> fn;
};

struct Session::Builtin::Args {
  const Builtin* fn;
  const Node* call;
  const Session::Scope* scope;
  std::vector<std::optional<Value>> v;
  std::vector<const Node*> at;
  std::string base_dir;

  bool has(size_t i) const { return v[i].has_value(); }
  const Node& where(size_t i) const { return at[i] ? *at[i] : *call; }
  std::string param(size_t i) const {
    std::string p = fn->params[i];
    if (!p.empty() && p.back() == '?') p.pop_back();
    return p;
  }
  [[noreturn]] void bad(size_t i, const std::string& what) const {
    fail(where(i), std::string(fn->name) + "(): argument '" + param(i) + "' must be " + what +
                       ", not " + kind_name(*v[i]));
  }
  const Value& get(size_t i) const { return *v[i]; }

  // Arrays among the given arguments; weak scalars typed by the first array (numpy's rules).
  std::vector<Array> arrays(std::initializer_list<size_t> idx) const {
    const Array* like = nullptr;
    for (size_t i : idx)
      if (get(i).kind == Value::Kind::Array) {
        like = &*get(i).array;
        break;
      }
    std::vector<Array> out;
    for (size_t i : idx) {
      const Value& x = get(i);
      if (x.kind == Value::Kind::Array) {
        out.push_back(*x.array);
      } else if (x.kind == Value::Kind::Weak) {
        out.push_back(like ? scalar_like(x.number, x.integral, *like) : strong(x));
      } else {
        bad(i, "an array or a number");
      }
    }
    return out;
  }
  Array array(size_t i) const { return arrays({i})[0]; }
  DType dtype(size_t i) const {
    if (get(i).kind != Value::Kind::DType) bad(i, "a dtype (f32, f64, i32, i64, bool)");
    return get(i).dtype;
  }
  double number(size_t i) const {
    const Value& x = get(i);
    if (x.kind == Value::Kind::Weak) return x.number;
    if (x.kind == Value::Kind::Array && x.array->ndim() == 0) return x.array->item<double>();
    bad(i, "a number");
  }
  int64_t integer(size_t i) const {
    const Value& x = get(i);
    if (x.kind == Value::Kind::Weak && x.integral && std::fabs(x.number) < 9e18)
      return static_cast<int64_t>(x.number);
    if (x.kind == Value::Kind::Array && x.array->ndim() == 0 && is_int(x.array->dtype()))
      return x.array->item<int64_t>();
    bad(i, "an integer");
  }
  bool boolean(size_t i) const {
    const Value& x = get(i);
    if (x.kind == Value::Kind::Weak) return x.number != 0;
    if (x.kind == Value::Kind::Array && x.array->ndim() == 0) return x.array->item<bool>();
    bad(i, "true or false");
  }
  std::string string(size_t i) const {
    if (get(i).kind != Value::Kind::String) bad(i, "a string");
    return get(i).text;
  }
  // A list of integers ([2, 3]) or one integer.
  std::vector<int64_t> ints(size_t i) const {
    const Value& x = get(i);
    if (x.kind == Value::Kind::Weak) return {integer(i)};
    if (x.kind == Value::Kind::Array && x.array->ndim() <= 1 &&
        (is_int(x.array->dtype()) || x.array->size() == 0))
      return x.array->to_vector<int64_t>();
    bad(i, "an integer or a list of integers");
  }
  Shape shape(size_t i) const {
    Shape s = ints(i);
    for (int64_t d : s)
      if (d < 0) fail(where(i), std::string(fn->name) + "(): negative dimension " + std::to_string(d) + " in shape " + shape_str(s));
    return s;
  }
};

namespace {

using Args = Session::Builtin::Args;

Value unary_fn(Args& a, Array (*f)(const Array&)) { return array_value(f(a.array(0))); }
Value binary_fn(Args& a, Array (*f)(const Array&, const Array&)) {
  std::vector<Array> x = a.arrays({0, 1});
  return array_value(f(x[0], x[1]));
}

// Reductions: sum(x), sum(x, axis), sum(x, axis=[0, 1], keepdims=true).
using ReduceAll = Array (*)(const Array&);
using ReduceAxes = Array (*)(const Array&, const std::vector<int64_t>&, bool);
Value reduce_fn(Args& a, ReduceAll all, ReduceAxes axes) {
  Array x = a.array(0);
  bool keep = a.has(2) && a.boolean(2);
  if (!a.has(1)) {
    if (!keep) return array_value(all(x));
    std::vector<int64_t> every;
    for (int64_t d = 0; d < x.ndim(); ++d) every.push_back(d);
    return array_value(axes(x, every, true));
  }
  return array_value(axes(x, a.ints(1), keep));
}

template <typename T> Array host_array(const std::vector<double>& vals, const Shape& shape) {
  std::vector<T> data(vals.begin(), vals.end());
  return arrayc::array<T>(data, shape);
}

// input(dtype, shape, seed=, file=): evaluated at once, so that it is data (a buffer) in graphs.
Value input_fn(Args& a) {
  if (a.scope->tracing) fail(*a.call, "input() cannot be used inside a def; pass the data as an argument");
  DType dt = a.dtype(0);
  Shape shape = a.shape(1);
  if (a.has(2) && a.has(3)) fail(*a.call, "input(): give seed= or file=, not both");
  Array out;
  if (a.has(3)) {
    std::string path = a.string(3);
    std::string full_path = (!path.empty() && path[0] == '/') ? path : a.base_dir + "/" + path;
    std::ifstream f(full_path, std::ios::binary);
    if (!f) fail(a.where(3), "input(): cannot open '" + path + "': " + std::strerror(errno));
    std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    int64_t n = shape_numel(shape);
    size_t want = static_cast<size_t>(n) * dtype_size(dt);
    if (bytes.size() != want)
      fail(a.where(3), "input(): '" + path + "' has " + std::to_string(bytes.size()) +
                           " bytes, but " + dtype_name(dt) + shape_str(shape) + " needs " +
                           std::to_string(want));
    auto load = [&]<typename T>(T*) {
      std::vector<T> data(static_cast<size_t>(n));
      if (want) std::memcpy(data.data(), bytes.data(), want);
      return arrayc::array<T>(data, shape);
    };
    switch (dt) {
      case DType::Float32: out = load(static_cast<float*>(nullptr)); break;
      case DType::Float64: out = load(static_cast<double*>(nullptr)); break;
      case DType::Int32: out = load(static_cast<int32_t*>(nullptr)); break;
      case DType::Int64: out = load(static_cast<int64_t*>(nullptr)); break;
      case DType::Bool: {
        std::vector<int32_t> data(bytes.begin(), bytes.end());
        out = cast(arrayc::array<int32_t>(data, shape), DType::Bool);
        break;
      }
    }
  } else {
    int64_t seed = a.has(2) ? a.integer(2) : 0;
    if (seed < 0) fail(a.where(2), "input(): seed must not be negative");
    uint64_t s = static_cast<uint64_t>(seed);
    if (is_float(dt)) {
      out = normal(shape, s, 0.0, 1.0, dt);
    } else if (is_int(dt)) {
      out = cast(uniform(shape, s, 0.0, 100.0, DType::Float64), dt);
    } else {
      out = uniform(shape, s, 0.0, 1.0, DType::Float64) < 0.5;
    }
  }
  out.eval();
  return array_value(out);
}

Value arange_fn(Args& a) {
  bool any_float = false;
  for (size_t i = 0; i < 3; ++i)
    if (a.has(i)) {
      const Value& v = a.get(i);
      if (v.kind != Value::Kind::Weak) a.bad(i, "a number");
      any_float = any_float || !v.integral;
    }
  double start = 0, stop, step = 1;
  if (a.has(1)) {
    start = a.number(0);
    stop = a.number(1);
    if (a.has(2)) step = a.number(2);
  } else {
    if (a.has(2)) fail(*a.call, "arange(): a step needs a start and a stop");
    stop = a.number(0);
  }
  DType dt = a.has(3) ? a.dtype(3) : any_float ? DType::Float64 : DType::Int64;
  if (step == 0) fail(*a.call, "arange(): step must not be zero");
  return array_value(arange(start, stop, step, dt));
}

// The type of a Python-like number once it becomes an array (numpy: int64 or float64).
DType default_dtype(const Value& v) {
  return v.kind == Value::Kind::Weak && v.integral ? DType::Int64 : DType::Float64;
}

const std::vector<Session::Builtin>& builtins() {
  using B = Session::Builtin;
  static const std::vector<B> table = [] {
    std::vector<B> t;
    auto un = [&](const char* name, Array (*f)(const Array&), const char* help) {
      t.push_back(B{name, {"x"}, help, [f](Args& a) { return unary_fn(a, f); }});
    };
    auto bin = [&](const char* name, Array (*f)(const Array&, const Array&), const char* help) {
      t.push_back(B{name, {"x1", "x2"}, help, [f](Args& a) { return binary_fn(a, f); }});
    };
    auto red = [&](const char* name, ReduceAll all, ReduceAxes axes, const char* help) {
      t.push_back(B{name, {"x", "axis?", "keepdims?"}, help,
                    [all, axes](Args& a) { return reduce_fn(a, all, axes); }});
    };
    // Creation
    t.push_back(B{"input", {"dtype", "shape", "seed?", "file?"},
                  "input(dtype, shape, seed=0) or input(dtype, shape, file=\"x.bin\"): program input; "
                  "floats ~ normal(0, 1), integers uniform in [0, 100), bools fair coins; a file is "
                  "raw little-endian data",
                  input_fn});
    t.push_back(B{"arange", {"start", "stop?", "step?", "dtype?"},
                  "arange(stop) or arange(start, stop, step): int64 if all are integers, else float64",
                  arange_fn});
    auto filled = [&](const char* name, double value) {
      t.push_back(B{name, {"shape", "dtype?"}, "(shape, dtype=f64)",
                    [value](Args& a) {
                      return array_value(full(a.shape(0), value, a.has(1) ? a.dtype(1) : DType::Float64));
                    }});
    };
    filled("zeros", 0);
    filled("ones", 1);
    t.back().help = "ones(shape, dtype=f64)";
    t[t.size() - 2].help = "zeros(shape, dtype=f64)";
    t.push_back(B{"full", {"shape", "fill_value", "dtype?"},
                  "full(shape, fill_value, dtype): dtype defaults to the value's (int64 or float64)",
                  [](Args& a) {
                    DType dt = a.has(2) ? a.dtype(2) : default_dtype(a.get(1));
                    return array_value(full(a.shape(0), a.number(1), dt));
                  }});
    // uniform/normal(shape, seed=0, p=0, q=1, dtype=f64): the two parameters are (low, high)
    // or (mean, std).
    using Random = Array (*)(const Shape&, uint64_t, double, double, DType, Device);
    auto random = [](Random f) {
      return [f](Args& a) {
        int64_t seed = a.has(1) ? a.integer(1) : 0;
        return array_value(f(a.shape(0), static_cast<uint64_t>(seed), a.has(2) ? a.number(2) : 0.0,
                             a.has(3) ? a.number(3) : 1.0, a.has(4) ? a.dtype(4) : DType::Float64,
                             default_device()));
      };
    };
    t.push_back(B{"uniform", {"shape", "seed?", "low?", "high?", "dtype?"},
                  "uniform(shape, seed=0, low=0, high=1, dtype=f64): counter-based (Philox) random numbers",
                  random(&uniform)});
    t.push_back(B{"normal", {"shape", "seed?", "mean?", "std?", "dtype?"},
                  "normal(shape, seed=0, mean=0, std=1, dtype=f64): counter-based (Philox) normal numbers",
                  random(&normal)});
    t.push_back(B{"array", {"object", "dtype?"}, "array([[1, 2], [3, 4]], dtype=f32)",
                  [](Args& a) {
                    Array x = a.get(0).kind == Value::Kind::Weak ? strong(a.get(0)) : a.array(0);
                    return array_value(a.has(1) ? cast(x, a.dtype(1)) : x);
                  }});
    for (const char* name : {"astype", "cast"})
      t.push_back(B{name, {"x", "dtype"}, "astype(x, dtype): convert (float to int truncates and saturates)",
                    [](Args& a) { return array_value(cast(a.array(0), a.dtype(1))); }});
    // Elementwise
    un("negative", negative, "negative(x) = -x");
    un("abs", abs, "abs(x)");
    un("exp", exp, "exp(x)");
    un("log", log, "log(x)");
    un("sin", sin, "sin(x)");
    un("cos", cos, "cos(x)");
    un("tanh", tanh, "tanh(x)");
    un("sqrt", sqrt, "sqrt(x)");
    un("logical_not", logical_not, "logical_not(x) = ~x");
    bin("add", add, "add(x1, x2) = x1 + x2");
    bin("subtract", subtract, "subtract(x1, x2) = x1 - x2");
    bin("multiply", multiply, "multiply(x1, x2) = x1 * x2");
    bin("divide", divide, "divide(x1, x2) = x1 / x2 (true division)");
    bin("power", arrayc::pow, "power(x1, x2) = x1 ** x2");
    bin("pow", arrayc::pow, "pow(x1, x2) = x1 ** x2");
    bin("maximum", maximum, "maximum(x1, x2): elementwise, NaN-propagating");
    bin("minimum", minimum, "minimum(x1, x2): elementwise, NaN-propagating");
    bin("equal", equal, "equal(x1, x2) = x1 == x2");
    bin("not_equal", not_equal, "not_equal(x1, x2) = x1 != x2");
    bin("less", less, "less(x1, x2) = x1 < x2");
    bin("less_equal", less_equal, "less_equal(x1, x2) = x1 <= x2");
    bin("greater", greater, "greater(x1, x2) = x1 > x2");
    bin("greater_equal", greater_equal, "greater_equal(x1, x2) = x1 >= x2");
    bin("logical_and", logical_and, "logical_and(x1, x2) = x1 & x2");
    bin("logical_or", logical_or, "logical_or(x1, x2) = x1 | x2");
    t.push_back(B{"where", {"condition", "x", "y"}, "where(condition, x, y): x where condition, else y",
                  [](Args& a) {
                    std::vector<Array> xy = a.arrays({1, 2});
                    Array c = a.get(0).kind == Value::Kind::Weak ? strong(a.get(0)) : a.array(0);
                    return array_value(where(c, xy[0], xy[1]));
                  }});
    // Views
    t.push_back(B{"reshape", {"x", "shape"}, "reshape(x, shape): one dimension may be -1",
                  [](Args& a) { return array_value(reshape(a.array(0), a.ints(1))); }});
    t.push_back(B{"transpose", {"x", "axes?"}, "transpose(x) reverses the axes; transpose(x, [1, 0, 2])",
                  [](Args& a) {
                    return array_value(a.has(1) ? transpose(a.array(0), a.ints(1)) : transpose(a.array(0)));
                  }});
    t.push_back(B{"broadcast_to", {"x", "shape"}, "broadcast_to(x, shape)",
                  [](Args& a) { return array_value(broadcast_to(a.array(0), a.shape(1))); }});
    t.push_back(B{"expand_dims", {"x", "axis"}, "expand_dims(x, axis)",
                  [](Args& a) { return array_value(expand_dims(a.array(0), a.integer(1))); }});
    // Reductions
    red("sum", arrayc::sum, arrayc::sum, "sum(x, axis=None, keepdims=false)");
    red("prod", arrayc::prod, arrayc::prod, "prod(x, axis=None, keepdims=false)");
    red("max", arrayc::max, arrayc::max, "max(x, axis=None, keepdims=false)");
    red("min", arrayc::min, arrayc::min, "min(x, axis=None, keepdims=false)");
    red("mean", arrayc::mean, arrayc::mean, "mean(x, axis=None, keepdims=false)");
    // Products
    bin("dot", dot, "dot(a, b): 1-D and 2-D, as numpy");
    bin("matmul", matmul, "matmul(a, b) = a @ b, also batched");
    return t;
  }();
  return table;
}

const Session::Builtin* find_builtin(std::string_view name) {
  for (const Session::Builtin& b : builtins())
    if (name == b.name) return &b;
  return nullptr;
}

// Python-like arithmetic on two Python-like numbers (no array involved).
Value fold(Op op, const Value& a, const Value& b, const Node& at) {
  double x = a.number, y = b.number;
  bool ints = a.integral && b.integral;
  switch (op) {
    case Op::Add: return weak_value(x + y, ints);
    case Op::Sub: return weak_value(x - y, ints);
    case Op::Mul: return weak_value(x * y, ints);
    case Op::Div:
      if (y == 0) fail(at, "division by zero");
      return weak_value(x / y, false);
    case Op::Pow:
      if (ints && y < 0) return weak_value(std::pow(x, y), false);
      return weak_value(std::pow(x, y), ints);
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
    default: return nullptr;
  }
}

}  // namespace

// ---- the session ------------------------------------------------------------------------------

Session::Session(Options opts) : opts_(std::move(opts)) {
  if (!opts_.out) opts_.out = &std::cout;
  if (!opts_.err) opts_.err = &std::cerr;
}

Session::~Session() = default;

std::vector<std::string> Session::builtin_names() {
  std::vector<std::string> out;
  for (const Builtin& b : builtins()) out.push_back(b.name);
  for (const char* d : {"f32", "f64", "i32", "i64", "bool", "float32", "float64", "int32",
                        "int64", "true", "false", "def"})
    out.push_back(d);
  return out;
}

std::vector<std::string> Session::user_names() const {
  std::vector<std::string> out;
  for (const auto& [name, v] : vars_) out.push_back(name);
  for (const auto& [name, d] : defs_) out.push_back(name);
  return out;
}

void Session::report(const std::string& filename, std::string_view source, const UserError& e) {
  std::ostream& err = *opts_.err;
  if (!e.pos) {
    err << filename << ": error: " << e.message << "\n";
    return;
  }
  err << filename << ":" << e.pos->line << ":" << e.pos->col << ": error: " << e.message << "\n";
  // The line, windowed around the column when it is long, and a caret under the spot.
  size_t start = 0;
  for (uint32_t l = 1; l < e.pos->line && start != std::string_view::npos; ++l) {
    start = source.find('\n', start);
    if (start != std::string_view::npos) ++start;
  }
  if (start == std::string_view::npos || start > source.size()) return;
  size_t end = source.find('\n', start);
  std::string_view line = source.substr(start, end == std::string_view::npos ? end : end - start);
  size_t col = e.pos->col - 1;
  size_t from = 0;
  std::string prefix;
  if (col > 60) {
    from = col - 40;
    prefix = "...";
  }
  std::string shown(line.substr(std::min(from, line.size()), 100));
  std::string suffix = line.size() > from + 100 ? "..." : "";
  for (char& c : shown)
    if (c == '\t' || c == '\r' || static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = ' ';
  err << "    " << prefix << shown << suffix << "\n";
  err << "    " << std::string(prefix.size() + (col - from), ' ') << "^\n";
}

bool Session::run_source(std::string source, const std::string& filename, bool keep_going) {
  auto prog = std::make_shared<Program>();
  try {
    lang::parse_program(std::move(source), *prog);
  } catch (const lang::SyntaxError& e) {
    report(filename, prog->source, UserError{e.pos, e.message});
    return false;
  }
  return run(prog, filename, keep_going);
}

bool Session::run(std::shared_ptr<const Program> prog, const std::string& filename, bool keep_going) {
  bool ok = true;
  int exprs = 0;
  for (const Stmt& s : prog->stmts) exprs += s.kind == StmtKind::Expr;
  for (const Stmt& s : prog->stmts) {
    if (quit_) break;
    try {
      if (opts_.emit && exprs > 1 && s.kind == StmtKind::Expr)
        *opts_.out << "# ---- line " << s.pos.line << ": " << s.source << "\n";
      if (s.kind == StmtKind::Def) {
        auto d = std::make_shared<Def>();
        d->name = std::string(s.name);
        d->prog = prog;
        d->stmt = &s;
        if (find_builtin(s.name)) throw UserError{s.pos, "'" + d->name + "' is a builtin function; choose another name"};
        if (dtype_from_name(s.name)) throw UserError{s.pos, "'" + d->name + "' is a dtype; choose another name"};
        if (s.params.size() > kMaxParams) throw UserError{s.pos, "a def takes at most 8 parameters"};
        // Names in the body must be parameters (or dtypes): a def sees nothing else.
        for (std::vector<int32_t> todo{s.expr}; !todo.empty();) {
          const Node& n = prog->node(todo.back());
          todo.pop_back();
          for (uint32_t k = 0; k < n.count; ++k) todo.push_back(static_cast<int32_t>(prog->child(n, k)));
          if (n.kind == NodeKind::Name && !dtype_from_name(n.text) &&
              std::find(s.params.begin(), s.params.end(), n.text) == s.params.end())
            fail(n, "unknown name '" + std::string(n.text) + "' in def " + d->name +
                        ": a def sees only its parameters" +
                        (vars_.count(std::string(n.text)) ? " (pass '" + std::string(n.text) + "' as an argument)" : ""));
        }
        vars_.erase(d->name);
        // Redefining a def drops every traced function: their traces may have inlined the old one.
        for (auto& [n, other] : defs_) other->jits.clear();
        defs_[d->name] = d;
      } else {
        exec(*prog, s, filename);
      }
    } catch (const UserError& e) {
      report(filename, prog->source, e.pos ? e : UserError{s.pos, e.message});
      ok = false;
    } catch (const Error& e) {
      report(filename, prog->source, UserError{s.pos, e.what()});
      ok = false;
    } catch (const std::bad_alloc&) {
      report(filename, prog->source, UserError{s.pos, "out of memory"});
      ok = false;
    } catch (const std::exception& e) {
      report(filename, prog->source, UserError{s.pos, std::string("internal error: ") + e.what()});
      ok = false;
    }
    if (!ok && !keep_going) break;
  }
  opts_.out->flush();
  return ok;
}

void Session::exec(const Program& p, const Stmt& s, const std::string& filename) {
  Scope scope;
  switch (s.kind) {
    case StmtKind::Expr:
      if (opts_.emit) {
        show_stage(*opts_.emit, p, s.expr);
      } else {
        print_value(eval(p, s.expr, scope));
      }
      return;
    case StmtKind::Assign: {
      Value v = eval(p, s.expr, scope);
      if (v.kind == Value::Kind::None) throw UserError{s.pos, "nothing to assign"};
      std::string name(s.name);
      if (find_builtin(name) || dtype_from_name(name))
        throw UserError{s.pos, "'" + name + "' is a builtin name; choose another name"};
      defs_.erase(name);
      vars_[name] = std::move(v);
      return;
    }
    case StmtKind::Command: command(p, s, filename); return;
    case StmtKind::Def: return;  // handled by run()
  }
}

void Session::print_value(const Value& v) {
  std::ostream& out = *opts_.out;
  switch (v.kind) {
    case Value::Kind::None: return;
    case Value::Kind::Array: out << format_array(*v.array) << "\n"; return;
    case Value::Kind::Weak: out << format_weak(v.number, v.integral) << "\n"; return;
    case Value::Kind::DType: out << dtype_name(v.dtype) << "\n"; return;
    case Value::Kind::String: out << '"' << v.text << "\"\n"; return;
  }
}

// ---- evaluation -------------------------------------------------------------------------------

Value Session::eval(const Program& p, int32_t index, Scope& scope) {
  const Node& n = p.node(index);
  switch (n.kind) {
    case NodeKind::Number: return weak_value(n.number, n.integral);
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
        if (n.op == Op::Neg) return weak_value(-x.number, x.integral);
        if (n.op == Op::Plus) return x;
        x = array_value(strong(x));
      }
      if (x.kind != Value::Kind::Array)
        fail(n, std::string("operator ") + lang::op_spelling(n.op) + " needs an array or a number, not " + kind_name(x));
      try {
        if (n.op == Op::Neg) return array_value(negative(*x.array));
        if (n.op == Op::Plus) return x;
        return array_value(logical_not(*x.array));
      } catch (const Error& e) {
        fail(n, e.what());
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
        Array x = a.kind == Value::Kind::Array ? *a.array
                  : b.kind == Value::Kind::Array ? scalar_like(a.number, a.integral, *b.array)
                                                 : strong(a);
        Array y = b.kind == Value::Kind::Array ? *b.array
                  : a.kind == Value::Kind::Array ? scalar_like(b.number, b.integral, *a.array)
                                                 : strong(b);
        return array_value(binary_library_fn(n.op)(x, y));
      } catch (const Error& e) {
        fail(n, e.what());
      }
    }
    case NodeKind::Call: return eval_call(p, n, scope);
    case NodeKind::Keyword: fail(n, "unexpected keyword argument");
  }
  fail(n, "cannot evaluate this");
}

// A list literal: numbers (or 0-d arrays), nested to any regular shape -> bool, int64 or float64.
Value Session::eval_list(const Program& p, const Node& n, Scope& scope) {
  std::vector<double> vals;
  Shape shape;
  enum { Bool, Int, Float } kind = Bool;
  bool any = false;
  // Depth-first over nested lists, checking that every level has one length.
  struct Frame {
    const Node* node;
    uint32_t next;
    size_t depth;
  };
  std::vector<Frame> stack{{&n, 0, 0}};
  std::vector<int64_t> seen;  // length seen at each depth
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
    if (v.kind == Value::Kind::Weak) {
      x = v.number;
      kind = std::max(kind, v.integral ? Int : Float);
    } else if (v.kind == Value::Kind::Array && v.array->ndim() == 0) {
      x = v.array->item<double>();
      DType dt = v.array->dtype();
      kind = std::max(kind, dt == DType::Bool ? Bool : is_int(dt) ? Int : Float);
    } else {
      fail(c, std::string("a list holds numbers, not ") +
                  (v.kind == Value::Kind::Array ? "arrays of shape " + shape_str(v.array->shape()) : kind_name(v)));
    }
    any = true;
    vals.push_back(x);
  }
  for (size_t d = 0; d < leaf_depth && d < seen.size(); ++d) shape.push_back(seen[d] < 0 ? 0 : seen[d]);
  if (!any) return array_value(zeros(shape, DType::Float64));
  switch (kind) {
    case Bool: return array_value(cast(host_array<int64_t>(vals, shape), DType::Bool));
    case Int: return array_value(host_array<int64_t>(vals, shape));
    case Float: return array_value(host_array<double>(vals, shape));
  }
  return Value{};
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
    fail(n, e.what());
  }
}

Value Session::call_def(const Node& at, Def& def, std::vector<Value> args, Scope& scope) {
  const Stmt& s = *def.stmt;
  if (args.size() != s.params.size())
    fail(at, def.name + "() takes " + std::to_string(s.params.size()) + " argument" +
                 (s.params.size() == 1 ? "" : "s") + " (" + std::to_string(args.size()) + " given)");
  if (scope.tracing) {
    // Inside a trace, a call to another def is inlined into the traced graph.
    if (std::find(scope.stack.begin(), scope.stack.end(), &def) != scope.stack.end())
      fail(at, "'" + def.name + "' calls itself; a def cannot be recursive");
    if (scope.stack.size() >= 64) fail(at, "defs nested too deeply");
    std::map<std::string, Value> locals;
    for (size_t i = 0; i < args.size(); ++i) locals[std::string(s.params[i])] = std::move(args[i]);
    Scope inner;
    inner.locals = &locals;
    inner.globals = false;
    inner.tracing = true;
    inner.stack = scope.stack;
    inner.stack.push_back(&def);
    return eval(*def.prog, s.expr, inner);
  }
  // Arrays become jit parameters; numbers are baked into the trace (one trace per value, as
  // JAX's static arguments), so that they keep numpy's weak-scalar typing.
  std::string key;
  std::vector<Array> arrays;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].kind == Value::Kind::Array) {
      arrays.push_back(*args[i].array);
      key += "A;";
    } else if (args[i].kind == Value::Kind::Weak) {
      std::ostringstream k;
      k << std::setprecision(17) << "W" << args[i].integral << args[i].number << ";";
      key += k.str();
    } else {
      fail(at, def.name + "(): argument " + std::to_string(i + 1) + " ('" + std::string(s.params[i]) +
                   "') must be an array or a number, not " + kind_name(args[i]));
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
      Scope inner;
      inner.locals = &locals;
      inner.globals = false;
      inner.tracing = true;
      inner.stack.push_back(d);
      Value v = eval(*d->prog, d->stmt->expr, inner);
      if (v.kind == Value::Kind::Weak) return strong(v);
      if (v.kind != Value::Kind::Array)
        throw UserError{d->stmt->pos, "'" + d->name + "' must compute an array, not " + kind_name(v)};
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

// ---- stages -------------------------------------------------------------------------------------

Stages Session::inspect_expr(const Program& p, int32_t expr) {
  const Node& root = p.node(expr);
  Scope scope;
  if (root.kind == NodeKind::Call && defs_.count(std::string(root.text))) {
    // The stages of a def: of its traced function for these arguments (arrays are parameters).
    Def& def = *defs_[std::string(root.text)];
    std::vector<Array> arrays;
    for (uint32_t k = 0; k < root.count; ++k) {
      const Node& a = p.node(static_cast<int32_t>(p.child(root, k)));
      if (a.kind == NodeKind::Keyword) fail(a, "a def takes positional arguments only");
      Value v = eval(p, static_cast<int32_t>(p.child(root, k)), scope);
      if (v.kind != Value::Kind::Array) {
        // Numbers are baked into the trace: show the stages through a call that does the same.
        arrays.clear();
        break;
      }
      arrays.push_back(*v.array);
    }
    if (arrays.size() == root.count) {
      std::vector<Value> args;
      for (const Array& a : arrays) args.push_back(array_value(a));
      call_def(root, def, args, scope);  // makes (or finds) the jit entry for this pattern
      std::string key;
      for (size_t i = 0; i < arrays.size(); ++i) key += "A;";
      try {
        return def.jits.at(key).inspect(arrays);
      } catch (const Error& e) {
        fail(root, e.what());
      }
    }
  }
  Value v = eval(p, expr, scope);
  if (v.kind == Value::Kind::Weak) v = array_value(strong(v));
  if (v.kind != Value::Kind::Array) fail(root, std::string("no stages for ") + kind_name(v) + ": it is not an array");
  try {
    return inspect({*v.array}, fusion_enabled());
  } catch (const Error& e) {
    fail(root, e.what());
  }
}

void Session::show_stage(Stage stage, const Program& p, int32_t expr) {
  std::ostream& out = *opts_.out;
  std::string text;
  if (stage == Stage::Ptx || stage == Stage::Cubin) {
    Stages st = inspect_expr(p, expr);
    text = stage == Stage::Ptx ? ptx_text(st, opts_.sm) : cubin_text(st);
  } else {
    Stages st = inspect_expr(p, expr);
    auto kernels = [&](std::string KernelStages::*field) {
      if (st.kernels.empty()) return std::string("; no compiled kernels (see :fused)\n");
      return st.all(field);
    };
    switch (stage) {
      case Stage::Graph: text = st.graph; break;
      case Stage::OptGraph: text = st.optimized; break;
      case Stage::Fused: text = st.fused; break;
      case Stage::Kernels: text = kernels(&KernelStages::kernel); break;
      case Stage::Llvm: text = kernels(&KernelStages::llvm); break;
      case Stage::Opt: text = kernels(&KernelStages::opt); break;
      case Stage::Asm: text = "; target: " + st.target + "\n" + kernels(&KernelStages::assembly); break;
      default: break;
    }
  }
  out << text;
  if (!text.empty() && text.back() != '\n') out << "\n";
}

// :time EXPR: the expression as a jit function (its evaluated variables are the parameters),
// its first call broken into stages, then the median of repeated calls.
void Session::time_expr(const Program& p, int32_t expr) {
  std::ostream& out = *opts_.out;
  Scope scope;
  scope.tracing = true;  // a def call builds its graph instead of running
  auto t0 = Clock::now();
  Value probe = eval(p, expr, scope);
  double build_ms = ms_since(t0);
  if (probe.kind != Value::Kind::Array && probe.kind != Value::Kind::Weak)
    fail(p.node(expr), std::string("nothing to time: this is ") + kind_name(probe));

  // Free variables holding evaluated arrays become parameters; lazy ones are traced through.
  std::vector<std::string> params;
  std::vector<Array> inputs;
  std::vector<int32_t> todo{expr};
  while (!todo.empty()) {
    const Node& n = p.node(todo.back());
    todo.pop_back();
    for (uint32_t k = 0; k < n.count; ++k) todo.push_back(static_cast<int32_t>(p.child(n, k)));
    if (n.kind != NodeKind::Name) continue;
    std::string name(n.text);
    auto it = vars_.find(name);
    if (it == vars_.end() || it->second.kind != Value::Kind::Array || !it->second.array->is_evaluated()) continue;
    if (std::find(params.begin(), params.end(), name) != params.end()) continue;
    if (params.size() == kMaxParams) continue;  // the rest are captured as constants
    params.push_back(name);
    inputs.push_back(*it->second.array);
  }
  Body body = [this, &p, expr, params](const std::vector<Array>& in) {
    std::map<std::string, Value> locals;
    for (size_t i = 0; i < params.size(); ++i) locals[params[i]] = array_value(in[i]);
    Scope s;
    s.locals = &locals;
    s.tracing = true;
    Value v = eval(p, expr, s);
    return v.kind == Value::Kind::Weak ? strong(v) : *v.array;
  };
  JitEntry j = make_jit(inputs.size(), body);

  // A GPU call returns once its kernels are queued: each timed call waits for them.
  Stats s0 = stats();
  t0 = Clock::now();
  Array r = j.call(inputs).at(0);
  synchronize(r.device());
  double first_ms = ms_since(t0);
  Stats s1 = stats();

  std::vector<double> runs;
  auto t_all = Clock::now();
  while (runs.size() < 3 || (runs.size() < 1000 && ms_since(t_all) < 500)) {
    auto t = Clock::now();
    Array ri = j.call(inputs).at(0);
    synchronize(ri.device());
    runs.push_back(ms_since(t));
  }
  Stats s2 = stats();
  std::vector<double> sorted = runs;
  std::sort(sorted.begin(), sorted.end());
  size_t n = sorted.size();
  double median = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  double llvm_ms = s1.compile_ms - s0.compile_ms;
  double front_ms = std::max(0.0, first_ms - llvm_ms - sorted.front());
  auto line = [&](const char* what, double ms, const std::string& note) {
    out << "  " << std::left << std::setw(34) << what << std::right << std::fixed
        << std::setprecision(3) << std::setw(10) << ms << " ms" << (note.empty() ? "" : "   " + note) << "\n";
    out.unsetf(std::ios::fixed);
  };
  out << "compile (first call, " << inputs.size() << " parameter" << (inputs.size() == 1 ? "" : "s")
      << (params.empty() ? "" : ": ") ;
  for (size_t i = 0; i < params.size(); ++i) out << (i ? ", " : "") << params[i];
  out << ")\n";
  line("build graph (arrayc tool)", build_ms, "");
  line("trace + graph passes + fusion", front_ms, "first call - LLVM - fastest run");
  line("LLVM -O3 + machine code", llvm_ms,
       std::to_string(s1.compiles - s0.compiles) + " kernel(s) compiled, " +
           std::to_string(s1.cache_hits - s0.cache_hits) + " from the cache");
  line("first call in all", first_ms, "");
  out << "run (steady state, " << n << " calls)\n";
  int64_t launches = (s2.kernel_launches - s1.kernel_launches) / static_cast<int64_t>(n);
  line("median", median, std::to_string(launches) + " kernel launch(es) per call");
  line("min", sorted.front(), "");
  line("max", sorted.back(), "");
  if (s2.traces != s1.traces || s2.compiles != s1.compiles)
    out << "  note: later calls traced or compiled again (" << (s2.traces - s1.traces) << " traces, "
        << (s2.compiles - s1.compiles) << " compiles)\n";
}

// ---- commands -------------------------------------------------------------------------------

void Session::command(const Program& p, const Stmt& s, const std::string& filename) {
  std::string cmd(s.name);
  std::string arg(s.arg);
  if (auto stage = stage_from_name(cmd)) {
    if (opts_.emit) return;  // batch --emit prints its one stage
    show_stage(*stage, p, s.expr);
  } else if (cmd == "time") {
    if (opts_.emit) return;
    time_expr(p, s.expr);
  } else if (cmd == "help") {
    help(arg);
  } else if (cmd == "quit" || cmd == "q" || cmd == "exit") {
    quit_ = true;
  } else if (cmd == "device") {
    if (arg.empty()) {
      *opts_.out << "device: " << default_device().str() << "\n";
      return;
    }
    try {
      Device d = parse_device(arg);
      set_default_device(d);
      *opts_.out << "device: " << d.str() << "\n";
    } catch (UserError& e) {
      e.pos = s.pos;
      throw;
    }
  } else if (cmd == "fusion" || cmd == "fastmath") {
    bool fusion = cmd == "fusion";
    if (arg == "on" || arg == "off") {
      (fusion ? set_fusion : set_fast_math)(arg == "on");
    } else if (!arg.empty()) {
      throw UserError{s.pos, ":" + cmd + " takes on or off"};
    }
    *opts_.out << cmd << ": " << ((fusion ? fusion_enabled() : fast_math_enabled()) ? "on" : "off") << "\n";
  } else if (cmd == "vars") {
    for (const auto& [name, v] : vars_) {
      *opts_.out << "  " << name << " : ";
      if (v.kind == Value::Kind::Array)
        *opts_.out << dtype_name(v.array->dtype()) << shape_str(v.array->shape())
                   << (v.array->is_evaluated() ? "" : " (lazy)");
      else if (v.kind == Value::Kind::Weak)
        *opts_.out << "number " << format_weak(v.number, v.integral);
      else
        *opts_.out << kind_name(v);
      *opts_.out << "\n";
    }
    for (const auto& [name, d] : defs_) *opts_.out << "  " << d->stmt->source << "\n";
  } else if (cmd == "stats") {
    Stats st = stats();
    *opts_.out << "traces " << st.traces << ", compiles " << st.compiles << ", cache hits "
               << st.cache_hits << ", kernel launches " << st.kernel_launches << ", compile "
               << st.compile_ms << " ms\n";
  } else if (cmd == "load") {
    if (arg.empty()) throw UserError{s.pos, ":load needs a file name"};
    std::ifstream f(arg, std::ios::binary);
    if (!f) throw UserError{s.pos, "cannot open '" + arg + "': " + std::strerror(errno)};
    std::string src((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    std::string saved = opts_.base_dir;
    size_t slash = arg.rfind('/');
    opts_.base_dir = slash == std::string::npos ? "." : arg.substr(0, slash);
    bool ok = run_source(std::move(src), arg);
    opts_.base_dir = saved;
    if (!ok) throw UserError{s.pos, ":load " + arg + " stopped at an error"};
  } else {
    throw UserError{s.pos, "unknown command :" + cmd};
  }
  (void)filename;
}

void Session::help(std::string_view topic) {
  std::ostream& out = *opts_.out;
  if (!topic.empty()) {
    std::string t(topic);
    if (t[0] == ':') t = t.substr(1);
    if (const Builtin* b = find_builtin(t)) {
      out << b->help << "\n";
      return;
    }
    if (t != "ops") {
      out << "no help on '" << t << "'; :help lists the commands, :help ops the functions\n";
      return;
    }
    out << "functions:\n";
    for (const Builtin& b : builtins()) out << "  " << b.help << "\n";
    return;
  }
  out << R"(arrayc: type array expressions; a bare expression prints its value.
  x = arange(1000000.0) / 1000000.0 - 0.5      assignment (lazy: nothing runs yet)
  x = input(f32, [1000], seed=3)                program input: normal(0, 1), or file="x.bin"
  def selu(x) = 1.05 * where(x > 0, x, 1.67 * exp(x) - 1.67)    a jit function
  sum(selu(x))                                  prints the value
operators: + - * / ** @  == != < <= > >=  & | ~   (comparisons bind tighter than & |)
commands (EXPR is any expression, or a call of a def):
  :graph EXPR      the graph as built          :optgraph EXPR  after the graph passes
  :fused EXPR      kernels and why each fusion ends
  :kernels EXPR    each kernel's text form     :llvm EXPR      LLVM IR before optimization
  :opt EXPR        LLVM IR after -O3           :asm EXPR       host assembly
  :ptx EXPR        PTX (needs the CUDA backend) :cubin EXPR    registers, shared memory, spills
  :time EXPR       each compile stage timed, then the steady-state run
  :device cpu|gpu0 where new arrays live       :fusion on|off  fuse elementwise work or not
  :fastmath on|off CPU sin/cos without huge arguments, f64 pow in double (docs/math_accuracy.md)
  :vars            variables and defs          :stats          what the engine has done
  :load FILE       run a program file          :help ops       every function
  :quit            leave (or Ctrl-D)
)";
}

}  // namespace arrayc::tool
