// The builtin functions of the language (:help ops lists them): creation, elementwise ops,
// views, reductions and products, each bound to the library's API.
#include <cmath>
#include <cstring>
#include <fstream>

#include "internal.h"

namespace arrayc::tool {

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
      case DType::Float16: out = load(static_cast<float16*>(nullptr)); break;
      case DType::BFloat16: out = load(static_cast<bfloat16*>(nullptr)); break;
      case DType::Float32: out = load(static_cast<float*>(nullptr)); break;
      case DType::Float64: out = load(static_cast<double*>(nullptr)); break;
      case DType::Int8: out = load(static_cast<int8_t*>(nullptr)); break;
      case DType::UInt8: out = load(static_cast<uint8_t*>(nullptr)); break;
      case DType::Int16: out = load(static_cast<int16_t*>(nullptr)); break;
      case DType::UInt16: out = load(static_cast<uint16_t*>(nullptr)); break;
      case DType::Int32: out = load(static_cast<int32_t*>(nullptr)); break;
      case DType::UInt32: out = load(static_cast<uint32_t*>(nullptr)); break;
      case DType::Int64: out = load(static_cast<int64_t*>(nullptr)); break;
      case DType::UInt64: out = load(static_cast<uint64_t*>(nullptr)); break;
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

}  // namespace

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
    auto convert = [](Args& a) { return array_value(cast(a.array(0), a.dtype(1))); };
    t.push_back(B{"astype", {"x", "dtype"}, "astype(x, dtype): convert (float to int truncates and saturates)", convert});
    t.push_back(B{"cast", {"x", "dtype"}, "cast(x, dtype) = astype(x, dtype)", convert});
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


std::vector<std::string> Session::builtin_names() {
  std::vector<std::string> out;
  for (const Builtin& b : builtins()) out.push_back(b.name);
  for (const char* d : {"float", "int", "true", "false", "def"}) out.push_back(d);
  // dtypes: short and long names ("f16" and "float16")
  for (const char* d : {"f16", "bf16", "f32", "f64", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64"})
    out.push_back(d);
  for (DType t : kAllDTypes) out.push_back(dtype_name(t));
  return out;
}

}  // namespace arrayc::tool
