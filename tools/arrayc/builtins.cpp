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

// arange of integers (exact integers, issue 26): start + i*step computed exactly in the dtype
// (int64 by default, uint64 when the values are past int64 and not negative), its first and last
// values checked against the dtype's range.
Value arange_exact(Args& a) {
  Int start = 0, stop = a.get(0).integer, step = 1;
  if (a.has(1)) {
    start = a.get(0).integer;
    stop = a.get(1).integer;
    if (a.has(2)) step = a.get(2).integer;
  }
  if (step == 0) fail(*a.call, "arange(): step must not be zero");
  for (Int v : {start, stop, step})  // keeps the arithmetic below within 127 bits
    if (v >= (Int{1} << 100) || v <= -(Int{1} << 100))
      fail(*a.call, "arange(): the integer " + int_str(v) + " is out of range (at most 2**100 in magnitude)");
  Int span = step > 0 ? stop - start : start - stop, by = step > 0 ? step : -step;
  Int n = span <= 0 ? 0 : (span + by - 1) / by;
  if (n >= (Int{1} << 62))
    fail(*a.call, "arange(): too many elements: " + int_str(n) + " (start " + int_str(start) + ", stop " + int_str(stop) +
                      ", step " + int_str(step) + ")");
  Int last = n == 0 ? start : start + (n - 1) * step;
  DType dt = a.has(3) ? a.dtype(3)
             : std::max(start, last) > INT64_MAX && std::min(start, last) >= 0 ? DType::UInt64 : DType::Int64;
  try {
    Array i = arange(static_cast<int64_t>(n), dt);
    if (n == 0) return array_value(i);
    check_int(start, dt, "arange");
    check_int(last, dt, "arange");
    if (n > 1 && by != 1) i = i * weak_like(weak_int(by), i, "arange");
    if (step > 0) return array_value(start == 0 ? i : weak_like(weak_int(start), i, "arange") + i);
    return array_value(weak_like(weak_int(start), i, "arange") - i);
  } catch (const Error& e) {
    fail(*a.call, e);
  }
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
  if (!any_float) return arange_exact(a);
  DType dt = a.has(3) ? a.dtype(3) : DType::Float64;
  if (step == 0) fail(*a.call, "arange(): step must not be zero");
  return array_value(arange(start, stop, step, dt));
}

// The type of a Python-like number once it becomes an array (numpy: int64, uint64 past int64, or
// float64).
DType default_dtype(const Value& v) {
  return v.kind == Value::Kind::Weak && v.integral ? int_dtype(v.integer) : DType::Float64;
}

// ---- Issue 28: reductions, scans, sorts, creation, .npy ----------------------------------------

std::string file_path(Args& a, size_t i) {
  std::string path = a.string(i);
  return (!path.empty() && path[0] == '/') ? path : a.base_dir + "/" + path;
}

void add_issue28_builtins(std::vector<Session::Builtin>& t) {
  using B = Session::Builtin;
  auto red = [&](const char* name, ReduceAll all, ReduceAxes axes, const char* help) {
    t.push_back(B{name, {"x", "axis?", "keepdims?"}, help, [all, axes](Args& a) { return reduce_fn(a, all, axes); }});
  };
  red("any", arrayc::any, arrayc::any, "any(x, axis=None, keepdims=false): bool; false over nothing");
  red("all", arrayc::all, arrayc::all, "all(x, axis=None, keepdims=false): bool; true over nothing");
  red("logsumexp", arrayc::logsumexp, arrayc::logsumexp,
      "logsumexp(x, axis=None, keepdims=false) = log(sum(exp(x))), shifted by the max (stable)");
  using Arg = Array (*)(const Array&, int64_t, bool);
  using ArgAll = Array (*)(const Array&);
  auto arg = [&](const char* name, ArgAll all, Arg along, const char* help) {
    t.push_back(B{name, {"x", "axis?", "keepdims?"}, help, [all, along](Args& a) {
                    Array x = a.array(0);
                    if (!a.has(1)) return array_value(all(x));
                    return array_value(along(x, a.integer(1), a.has(2) && a.boolean(2)));
                  }});
  };
  arg("argmax", arrayc::argmax, arrayc::argmax, "argmax(x, axis=None, keepdims=false): int64 index of the first maximum (the first NaN)");
  arg("argmin", arrayc::argmin, arrayc::argmin, "argmin(x, axis=None, keepdims=false): int64 index of the first minimum (the first NaN)");
  using Moment = Array (*)(const Array&, const std::vector<int64_t>&, double, bool);
  auto moment = [&](const char* name, Moment f, const char* help) {
    t.push_back(B{name, {"x", "axis?", "ddof?", "keepdims?"}, help, [f](Args& a) {
                    Array x = a.array(0);
                    std::vector<int64_t> axes;
                    if (a.has(1)) axes = a.ints(1);
                    else for (int64_t d = 0; d < x.ndim(); ++d) axes.push_back(d);
                    return array_value(f(x, axes, a.has(2) ? a.number(2) : 0.0, a.has(3) && a.boolean(3)));
                  }});
  };
  moment("var", arrayc::var, "var(x, axis=None, ddof=0, keepdims=false): mean((x - mean(x))**2) * n / (n - ddof)");
  moment("std", arrayc::std, "std(x, axis=None, ddof=0, keepdims=false) = sqrt(var(...))");
  using Scan = Array (*)(const Array&, int64_t);
  using ScanAll = Array (*)(const Array&);
  auto scan = [&](const char* name, ScanAll all, Scan along, const char* help) {
    t.push_back(B{name, {"x", "axis?"}, help, [all, along](Args& a) {
                    return array_value(a.has(1) ? along(a.array(0), a.integer(1)) : all(a.array(0)));
                  }});
  };
  scan("cumsum", arrayc::cumsum, arrayc::cumsum, "cumsum(x, axis=None): inclusive prefix sums (of the flattened x without axis); bool/i32 give i64");
  scan("cumprod", arrayc::cumprod, arrayc::cumprod, "cumprod(x, axis=None): inclusive prefix products; bool/i32 give i64");
  auto sorter = [&](const char* name, Scan f, const char* help) {
    t.push_back(B{name, {"x", "axis?"}, help, [f](Args& a) { return array_value(f(a.array(0), a.has(1) ? a.integer(1) : -1)); }});
  };
  sorter("sort", arrayc::sort, "sort(x, axis=-1): stable, NaN last");
  sorter("argsort", arrayc::argsort, "argsort(x, axis=-1): int64 indices of the stable sort, NaN last");
  t.push_back(B{"linspace", {"start", "stop", "num?", "endpoint?", "dtype?"},
                "linspace(start, stop, num=50, endpoint=true, dtype=f64): evenly spaced, as numpy",
                [](Args& a) {
                  return array_value(linspace(a.number(0), a.number(1), a.has(2) ? a.integer(2) : 50,
                                              !a.has(3) || a.boolean(3), a.has(4) ? a.dtype(4) : DType::Float64));
                }});
  t.push_back(B{"eye", {"N", "M?", "k?", "dtype?"}, "eye(N, M=N, k=0, dtype=f64): ones on the k-th diagonal",
                [](Args& a) {
                  return array_value(eye(a.integer(0), a.has(1) ? a.integer(1) : -1, a.has(2) ? a.integer(2) : 0,
                                         a.has(3) ? a.dtype(3) : DType::Float64));
                }});
  auto like = [&](const char* name, double value, const char* help) {
    t.push_back(B{name, {"x", "dtype?"}, help, [value](Args& a) {
                    Array x = a.array(0);
                    return array_value(full_like(x, value, a.has(1) ? a.dtype(1) : x.dtype()));
                  }});
  };
  like("zeros_like", 0, "zeros_like(x, dtype=x's)");
  like("ones_like", 1, "ones_like(x, dtype=x's)");
  t.push_back(B{"full_like", {"x", "fill_value", "dtype?"}, "full_like(x, fill_value, dtype=x's)", [](Args& a) {
                  Array x = a.array(0);
                  DType dt = a.has(2) ? a.dtype(2) : x.dtype();
                  const Value& v = a.get(1);
                  if (v.kind == Value::Kind::Weak && v.integral)  // exact (issue 26)
                    return array_value(full_exact(x.shape(), v.integer, dt, "full_like", x.device()));
                  return array_value(full_like(x, a.number(1), dt));
                }});
  t.push_back(B{"load_npy", {"file"}, "load_npy(\"x.npy\"): a numpy .npy file (relative to the program's folder)",
                [](Args& a) {
                  if (a.scope->tracing) fail(*a.call, "load_npy() cannot be used inside a def; pass the data as an argument");
                  return array_value(load_npy(file_path(a, 0)));
                }});
  t.push_back(B{"save_npy", {"x", "file"}, "save_npy(x, \"x.npy\"): write x as a numpy .npy file",
                [](Args& a) {
                  if (a.scope->tracing) fail(*a.call, "save_npy() cannot be used inside a def");
                  save_npy(file_path(a, 1), a.array(0));
                  return Value{};
                }});
  // numpy files: .npz and text (numpyio)
  t.push_back(B{"savez", {"file", "arr_0?", "arr_1?", "arr_2?", "arr_3?", "arr_4?", "arr_5?", "arr_6?", "arr_7?", "**arrays"},
                "savez(\"x.npz\", x, y, name=z, ...): an uncompressed .npz; up to 8 positional arrays are named "
                "arr_0, arr_1, ..., as numpy",
                [](Args& a) {
                  if (a.scope->tracing) fail(*a.call, "savez() cannot be used inside a def");
                  std::vector<std::pair<std::string, Array>> arrays;
                  for (size_t i = 1; i < a.v.size(); ++i)
                    if (a.has(i)) arrays.emplace_back(a.param(i), a.array(i));
                  for (size_t k = 0; k < a.named.size(); ++k) {
                    const Value& v = a.named[k].second;
                    if (v.kind != Value::Kind::Array && v.kind != Value::Kind::Weak)
                      fail(*a.named_at[k], "savez(): argument '" + a.named[k].first + "' must be an array or a number, not " + kind_name(v));
                    arrays.emplace_back(a.named[k].first, v.kind == Value::Kind::Array ? *v.array : strong(v));
                  }
                  savez(file_path(a, 0), arrays);
                  return Value{};
                }});
  t.push_back(B{"load", {"file", "name?"},
                "load(\"x.npy\") or load(\"x.npz\", \"name\"): a .npy file, or one member of a .npz (name may be "
                "left out when it has one)",
                [](Args& a) {
                  if (a.scope->tracing) fail(*a.call, "load() cannot be used inside a def; pass the data as an argument");
                  std::string path = file_path(a, 0);
                  char magic[2] = {};
                  std::ifstream(path, std::ios::binary).read(magic, 2);
                  if (magic[0] != 'P' || magic[1] != 'K') {  // not a zip: a .npy (load_npy names the problem)
                    if (a.has(1)) fail(a.where(1), "load(): '" + a.string(0) + "' is not a .npz file, so it has no member '" + a.string(1) + "'");
                    return array_value(load_npy(path));
                  }
                  std::map<std::string, Array> members = load_npz(path);
                  std::string names;
                  for (const auto& [k, v] : members) names += (names.empty() ? "'" : ", '") + k + "'";
                  if (!a.has(1)) {
                    if (members.size() != 1)
                      fail(*a.call, "load(): '" + a.string(0) + "' holds " + std::to_string(members.size()) +
                                        " arrays (" + (names.empty() ? "none" : names) + "); name one: load(file, \"name\")");
                    return array_value(members.begin()->second);
                  }
                  auto it = members.find(a.string(1));
                  if (it == members.end())
                    fail(a.where(1), "load(): '" + a.string(0) + "' has no member '" + a.string(1) + "' (it holds " +
                                         (names.empty() ? "none" : names) + ")");
                  return array_value(it->second);
                }});
  t.push_back(B{"loadtxt", {"file", "dtype?", "delimiter?", "skiprows?", "usecols?", "comments?"},
                "loadtxt(\"x.txt\", dtype=f64, delimiter=whitespace, skiprows=0, usecols=all, comments=\"#\"): "
                "numbers in text columns, as numpy (comments=\"\": none)",
                [](Args& a) {
                  if (a.scope->tracing) fail(*a.call, "loadtxt() cannot be used inside a def; pass the data as an argument");
                  return array_value(loadtxt(file_path(a, 0), a.has(1) ? a.dtype(1) : DType::Float64,
                                             a.has(2) ? a.string(2) : "", a.has(3) ? a.integer(3) : 0,
                                             a.has(4) ? a.ints(4) : std::vector<int64_t>{}, a.has(5) ? a.string(5) : "#"));
                }});
}


// ---- Coverage of numpy's namespace (include/arrayc/numpy_extra.h) -------------------------------

void add_coverage_builtins(std::vector<Session::Builtin>& t) {
  using B = Session::Builtin;
  auto un = [&](const char* name, Array (*f)(const Array&), const char* help) {
    t.push_back(B{name, {"x"}, help, [f](Args& a) { return unary_fn(a, f); }});
  };
  auto red = [&](const char* name, ReduceAll all, ReduceAxes axes, const char* help) {
    t.push_back(B{name, {"x", "axis?", "keepdims?"}, help, [all, axes](Args& a) { return reduce_fn(a, all, axes); }});
  };
  // Up to 8 arrays as arguments, where numpy takes a list.
  auto arrays8 = [](Args& a, size_t first) {
    std::vector<Array> xs;
    for (size_t i = first; i < first + 8 && a.has(i); ++i) xs.push_back(a.array(i));
    return xs;
  };
  auto opt_int = [](Args& a, size_t i, int64_t dflt) { return a.has(i) ? a.integer(i) : dflt; };
  auto opt_bool = [](Args& a, size_t i) { return a.has(i) && a.boolean(i); };
  t.push_back(B{"empty", {"shape", "dtype?"}, "empty(shape, dtype=f64): zeros (arrays are values; numpy leaves them unset)",
                [](Args& a) { return array_value(arrayc::empty(a.shape(0), a.has(1) ? a.dtype(1) : DType::Float64)); }});
  un("copy", arrayc::copy, "copy(x): a new contiguous buffer with x's values");
  t.push_back(B{"logspace", {"start", "stop", "num?", "endpoint?", "base?", "dtype?"},
                "logspace(start, stop, num=50, endpoint=true, base=10, dtype=f64) = base ** linspace(start, stop, ...)",
                [=](Args& a) {
                  return array_value(logspace(a.number(0), a.number(1), opt_int(a, 2, 50), !a.has(3) || a.boolean(3),
                                              a.has(4) ? a.number(4) : 10.0, a.has(5) ? a.dtype(5) : DType::Float64));
                }});
  t.push_back(B{"diag", {"v", "k?"}, "diag(v, k=0): 1-D v: a matrix with v on the k-th diagonal; 2-D v: its k-th diagonal",
                [=](Args& a) { return array_value(diag(a.array(0), opt_int(a, 1, 0))); }});
  t.push_back(B{"diagonal", {"x", "offset?", "axis1?", "axis2?"}, "diagonal(x, offset=0, axis1=0, axis2=1): as the last axis",
                [=](Args& a) {
                  return array_value(diagonal(a.array(0), opt_int(a, 1, 0), opt_int(a, 2, 0), opt_int(a, 3, 1)));
                }});
  t.push_back(B{"trace", {"x", "offset?", "axis1?", "axis2?"}, "trace(x, offset=0, axis1=0, axis2=1) = sum(diagonal(...), -1)",
                [=](Args& a) {
                  return array_value(trace(a.array(0), opt_int(a, 1, 0), opt_int(a, 2, 0), opt_int(a, 3, 1)));
                }});
  t.push_back(B{"tril", {"x", "k?"}, "tril(x, k=0): zeros above the k-th diagonal of the last two axes",
                [=](Args& a) { return array_value(tril(a.array(0), opt_int(a, 1, 0))); }});
  t.push_back(B{"triu", {"x", "k?"}, "triu(x, k=0): zeros below the k-th diagonal of the last two axes",
                [=](Args& a) { return array_value(triu(a.array(0), opt_int(a, 1, 0))); }});
  t.push_back(B{"vstack", {"a", "b?", "c?", "d?", "e?", "f?", "g?", "h?"},
                "vstack(x, y, ...): up to 8 arrays as arguments; 1-D ones become rows", [=](Args& a) {
                  return array_value(vstack(arrays8(a, 0)));
                }});
  t.push_back(B{"hstack", {"a", "b?", "c?", "d?", "e?", "f?", "g?", "h?"},
                "hstack(x, y, ...): up to 8 arrays as arguments; along axis 1 (1-D: axis 0)", [=](Args& a) {
                  return array_value(hstack(arrays8(a, 0)));
                }});
  t.push_back(B{"append", {"x", "values", "axis?"}, "append(x, values, axis=None): both flattened without an axis",
                [](Args& a) {
                  std::vector<Array> xv = a.arrays({0, 1});
                  return array_value(a.has(2) ? append(xv[0], xv[1], a.integer(2)) : append(xv[0], xv[1]));
                }});
  un("square", arrayc::square, "square(x) = x * x");
  un("reciprocal", arrayc::reciprocal, "reciprocal(x) = 1 / x in x's dtype (integers truncate; 1 / 0 = 0)");
  t.push_back(B{"nan_to_num", {"x", "nan?", "posinf?", "neginf?"},
                "nan_to_num(x, nan=0, posinf=largest, neginf=lowest): floats only; integers unchanged", [](Args& a) {
                  Array x = a.array(0);
                  double nan = a.has(1) ? a.number(1) : 0.0;
                  if (!a.has(2) && !a.has(3)) return array_value(nan_to_num(x, nan));
                  // The default posinf/neginf: the dtype's largest finite value, as nan_to_num(x, nan) uses.
                  double big = is_float(x.dtype()) ? nan_to_num(full({}, INFINITY, x.dtype())).item<double>() : 0.0;
                  return array_value(nan_to_num(x, nan, a.has(2) ? a.number(2) : big, a.has(3) ? a.number(3) : -big));
                }});
  auto close = [&](const char* name, Array (*f)(const Array&, const Array&, double, double, bool), const char* help) {
    t.push_back(B{name, {"a", "b", "rtol?", "atol?", "equal_nan?"}, help, [=](Args& a) {
                    std::vector<Array> ab = a.arrays({0, 1});
                    return array_value(f(ab[0], ab[1], a.has(2) ? a.number(2) : 1e-5, a.has(3) ? a.number(3) : 1e-8,
                                         opt_bool(a, 4)));
                  }});
  };
  close("isclose", isclose, "isclose(a, b, rtol=1e-5, atol=1e-8, equal_nan=false): |a - b| <= atol + rtol * |b|");
  close("allclose", allclose, "allclose(a, b, rtol=1e-5, atol=1e-8, equal_nan=false) = all(isclose(...))");
  t.push_back(B{"array_equal", {"a", "b", "equal_nan?"}, "array_equal(a, b, equal_nan=false): same shape and elements",
                [=](Args& a) {
                  std::vector<Array> ab = a.arrays({0, 1});
                  return array_value(array_equal(ab[0], ab[1], opt_bool(a, 2)));
                }});
  t.push_back(B{"average", {"x", "axis?", "weights?", "keepdims?"},
                "average(x, axis=None, weights=None, keepdims=false) = sum(x * w) / sum(w) (mean without weights)",
                [=](Args& a) {
                  Array x = a.array(0);
                  bool keep = opt_bool(a, 3);
                  if (a.has(2)) {
                    Array w = a.array(2);
                    if (!a.has(1)) {
                      if (keep) fail(*a.call, "average(): keepdims with weights needs an axis");
                      return array_value(average(x, w));
                    }
                    return array_value(average(x, w, a.integer(1), keep));
                  }
                  std::vector<int64_t> axes;
                  if (a.has(1)) axes = a.ints(1);
                  else for (int64_t d = 0; d < x.ndim(); ++d) axes.push_back(d);
                  return array_value(average(x, axes, keep));
                }});
  red("nansum", arrayc::nansum, arrayc::nansum, "nansum(x, axis=None, keepdims=false): sum with NaN as 0");
  red("nanmean", arrayc::nanmean, arrayc::nanmean, "nanmean(x, axis=None, keepdims=false): mean of the non-NaN elements");
  red("count_nonzero", arrayc::count_nonzero, arrayc::count_nonzero, "count_nonzero(x, axis=None, keepdims=false): int64");
  t.push_back(B{"diff", {"x", "n?", "axis?"}, "diff(x, n=1, axis=-1): n-th differences (bool: !=)",
                [=](Args& a) { return array_value(diff(a.array(0), opt_int(a, 1, 1), opt_int(a, 2, -1))); }});
  t.push_back(B{"median", {"x", "axis?", "keepdims?"}, "median(x, axis=None, keepdims=false): NaN if a NaN is there",
                [=](Args& a) {
                  Array x = a.array(0);
                  if (a.has(1)) return array_value(median(x, a.integer(1), opt_bool(a, 2)));
                  Array m = median(x);
                  return array_value(opt_bool(a, 2) ? reshape(m, Shape(static_cast<size_t>(x.ndim()), 1)) : m);
                }});
  using Quantile = Array (*)(const Array&, const std::vector<double>&, int64_t, bool);
  using QuantileAll = Array (*)(const Array&, const std::vector<double>&);
  auto quant = [&](const char* name, Quantile along, QuantileAll all, const char* help) {
    t.push_back(B{name, {"x", "q", "axis?", "keepdims?"}, help, [=](Args& a) {
                    Array x = a.array(0);
                    const Value& q = a.get(1);
                    bool many = q.kind == Value::Kind::Array && q.array->ndim() == 1;
                    if (q.kind == Value::Kind::Array && q.array->ndim() > 1) a.bad(1, "a number or a list of numbers");
                    std::vector<double> qs = many ? q.array->to_vector<double>() : std::vector<double>{a.number(1)};
                    Array r = a.has(2) ? along(x, qs, a.integer(2), opt_bool(a, 3)) : all(x, qs);
                    if (!a.has(2) && opt_bool(a, 3)) {
                      Shape s(static_cast<size_t>(x.ndim()), 1);
                      s.insert(s.begin(), static_cast<int64_t>(qs.size()));
                      r = reshape(r, s);
                    }
                    return array_value(many ? r : reshape(r, Shape(r.shape().begin() + 1, r.shape().end())));
                  }});
  };
  quant("quantile", quantile, quantile, "quantile(x, q, axis=None, keepdims=false): q in [0, 1], linear");
  quant("percentile", percentile, percentile, "percentile(x, q, axis=None, keepdims=false): q in [0, 100], linear");
  t.push_back(B{"searchsorted", {"a", "v", "side?"},
                "searchsorted(a, v, side=\"left\"): int64 insertion points of v into the sorted 1-D a", [](Args& a) {
                  std::vector<Array> av = a.arrays({0, 1});
                  return array_value(searchsorted(av[0], av[1], a.has(2) ? a.string(2) : "left"));
                }});
  t.push_back(B{"outer", {"a", "b"}, "outer(a, b): flattened a as a column times flattened b as a row",
                [](Args& a) { return binary_fn(a, outer); }});
  t.push_back(B{"inner", {"a", "b"}, "inner(a, b): sums over the last axes", [](Args& a) { return binary_fn(a, inner); }});
  t.push_back(B{"einsum", {"subscripts", "a", "b?", "c?", "d?", "e?", "f?", "g?", "h?"},
                "einsum(\"ij,jk->ik\", a, b, ...): up to 8 operands as arguments; no \"...\"",
                [=](Args& a) { return array_value(einsum(a.string(0), arrays8(a, 1))); }});
  t.push_back(B{"argwhere", {"x"}, "argwhere(x): int64 [count, ndim] indices of the nonzero elements (outside a def)",
                [](Args& a) { return array_value(argwhere(a.array(0))); }});
  t.push_back(B{"unique", {"x"}, "unique(x): the sorted distinct values, flattened; NaNs as one (outside a def)",
                [](Args& a) { return array_value(unique(a.array(0))); }});
  t.push_back(B{"bincount", {"x", "weights?", "minlength?"},
                "bincount(x, weights=None, minlength=0): counts (or weight sums) of 0 .. max(x) (outside a def)",
                [=](Args& a) {
                  int64_t minlength = opt_int(a, 2, 0);
                  return array_value(a.has(1) ? bincount(a.array(0), a.array(1), minlength) : bincount(a.array(0), minlength));
                }});
  // numpy's histogram returns (counts, edges); the REPL has no tuples, so one builtin for each.
  auto hist = [&](const char* name, size_t part, const char* help) {
    t.push_back(B{name, {"x", "bins?", "range?"}, help, [=](Args& a) {
                    Array x = a.array(0);
                    int64_t bins = opt_int(a, 1, 10);
                    if (!a.has(2)) return array_value(histogram(x, bins)[part]);
                    const Value& r = a.get(2);
                    if (r.kind != Value::Kind::Array || r.array->shape() != Shape{2}) a.bad(2, "a list [min, max]");
                    std::vector<double> lh = r.array->to_vector<double>();
                    return array_value(histogram(x, bins, lh[0], lh[1])[part]);
                  }});
  };
  hist("histogram", 0, "histogram(x, bins=10, range=[min, max]): int64 counts of equal bins (outside a def; "
                        "the edges: histogram_bin_edges)");
  hist("histogram_bin_edges", 1, "histogram_bin_edges(x, bins=10, range=[min, max]): the bins + 1 edges of histogram");
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
                    const Value& v = a.get(1);
                    if (v.kind == Value::Kind::Weak && v.integral)  // exact (issue 26)
                      return array_value(full_exact(a.shape(0), v.integer, dt, "full"));
                    return array_value(full(a.shape(0), a.number(1), dt));
                  }});
    // uniform/normal(shape, seed=0, p=0, q=1, dtype=f64): the two parameters are (low, high)
    // or (mean, std).
    using Random = Array (*)(const Shape&, uint64_t, double, double, DType, Device);
    auto random = [](Random f) {
      return [f](Args& a) {
        // Any seed of 64 bits (uint64's range, exact; a negative int64 as its bits).
        const Value* s = a.has(1) ? &a.get(1) : nullptr;
        bool big = s && s->kind == Value::Kind::Weak && s->integral && s->integer > INT64_MAX && s->integer <= UINT64_MAX;
        uint64_t seed = big ? static_cast<uint64_t>(s->integer) : s ? static_cast<uint64_t>(a.integer(1)) : 0;
        return array_value(f(a.shape(0), seed, a.has(2) ? a.number(2) : 0.0,
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
    un("logical_not", logical_not, "logical_not(x) = !x");
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
    bin("logical_and", logical_and, "logical_and(x1, x2) = x1 && x2");
    bin("logical_or", logical_or, "logical_or(x1, x2) = x1 || x2");
    // numpy math (issue 28): include/arrayc/math.h
    un("floor", arrayc::floor, "floor(x): integers unchanged");
    un("ceil", arrayc::ceil, "ceil(x): integers unchanged");
    un("round", arrayc::round, "round(x): to nearest, ties to even; integers unchanged");
    un("trunc", arrayc::trunc, "trunc(x): toward zero; integers unchanged");
    un("sign", arrayc::sign, "sign(x): -1, 0 or 1 (NaN stays NaN)");
    t.push_back(B{"clip", {"x", "lo", "hi"}, "clip(x, lo, hi) = minimum(maximum(x, lo), hi)",
                  [](Args& a) {
                    std::vector<Array> x = a.arrays({0, 1, 2});
                    return array_value(clip(x[0], x[1], x[2]));
                  }});
    un("isnan", arrayc::isnan, "isnan(x): bool");
    un("isinf", arrayc::isinf, "isinf(x): bool");
    un("isfinite", arrayc::isfinite, "isfinite(x): bool");
    un("log1p", arrayc::log1p, "log1p(x) = log(1 + x), accurate near 0");
    un("expm1", arrayc::expm1, "expm1(x) = exp(x) - 1, accurate near 0");
    un("log2", arrayc::log2, "log2(x)");
    un("log10", arrayc::log10, "log10(x)");
    un("exp2", arrayc::exp2, "exp2(x) = 2 ** x");
    un("tan", arrayc::tan, "tan(x)");
    un("arcsin", arrayc::arcsin, "arcsin(x)");
    un("arccos", arrayc::arccos, "arccos(x)");
    un("arctan", arrayc::arctan, "arctan(x)");
    bin("arctan2", arrayc::arctan2, "arctan2(y, x): the angle of (x, y)");
    un("sinh", arrayc::sinh, "sinh(x)");
    un("cosh", arrayc::cosh, "cosh(x)");
    un("arcsinh", arrayc::arcsinh, "arcsinh(x)");
    un("erf", arrayc::erf, "erf(x)");
    un("sigmoid", arrayc::sigmoid, "sigmoid(x) = 1 / (1 + exp(-x))");
    bin("hypot", arrayc::hypot, "hypot(x1, x2) = sqrt(x1**2 + x2**2) without overflow");
    bin("fmod", arrayc::fmod, "fmod(x1, x2): C's remainder, the sign of x1; integers: x fmod 0 = 0");
    bin("floor_divide", floor_divide, "floor_divide(x1, x2) = x1 // x2; integers: x // 0 = 0");
    bin("remainder", remainder, "remainder(x1, x2) = x1 % x2, the sign of x2; integers: x % 0 = 0");
    bin("mod", remainder, "mod(x1, x2) = x1 % x2");
    bin("bitwise_and", bitwise_and, "bitwise_and(x1, x2) = x1 & x2 (integers, bool)");
    bin("bitwise_or", bitwise_or, "bitwise_or(x1, x2) = x1 | x2 (integers, bool)");
    bin("bitwise_xor", bitwise_xor, "bitwise_xor(x1, x2) = x1 ^ x2 (integers, bool)");
    un("invert", invert, "invert(x) = ~x: bitwise not (bool: logical not)");
    un("bitwise_not", invert, "bitwise_not(x) = ~x");
    bin("left_shift", left_shift, "left_shift(x1, x2) = x1 << x2; shifts outside [0, bits) give 0");
    bin("right_shift", right_shift, "right_shift(x1, x2) = x1 >> x2 (arithmetic); outside [0, bits): 0 or -1");
    bin("logical_xor", logical_xor, "logical_xor(x1, x2): bool");
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
    // Indexing, shape and joining (arrayc/indexing.h; docs/indexing.md). x[1:3, ::-1, None, ..., 0]
    // is syntax; these are the functions.
    auto optional_axis = [](Args& a, size_t i) { return a.has(i) ? std::optional<int64_t>(a.integer(i)) : std::nullopt; };
    t.push_back(B{"take", {"x", "indices", "axis?"},
                  "take(x, indices, axis=None): gather; indices out of range clamp, negative count from the end",
                  [=](Args& a) {
                    auto axis = optional_axis(a, 2);
                    return array_value(axis ? take(a.array(0), a.array(1), *axis) : take(a.array(0), a.array(1)));
                  }});
    t.push_back(B{"take_along_axis", {"x", "indices", "axis"}, "take_along_axis(x, indices, axis)",
                  [](Args& a) { return array_value(take_along_axis(a.array(0), a.array(1), a.integer(2))); }});
    auto joined = [](const char* name, Array (*f)(const std::vector<Array>&, int64_t), const char* help) {
      return B{name, {"a", "b?", "c?", "d?", "e?", "f?", "g?", "h?", "axis?"}, help, [f](Args& a) {
                 std::vector<Array> xs;
                 for (size_t i = 0; i < 8 && a.has(i); ++i) xs.push_back(a.array(i));
                 return array_value(f(xs, a.has(8) ? a.integer(8) : 0));
               }};
    };
    t.push_back(joined("concatenate", concatenate, "concatenate(x, y, ..., axis=0): up to 8 arrays, as arguments"));
    t.push_back(joined("stack", stack, "stack(x, y, ..., axis=0): up to 8 arrays of one shape, as arguments"));
    t.push_back(B{"pad", {"x", "width", "mode?", "value?"},
                  "pad(x, width, mode=\"constant\", value=0): width n, [before, after] or one pair per axis; "
                  "mode \"constant\" or \"edge\"",
                  [](Args& a) {
                    Array x = a.array(0);
                    PadMode mode = PadMode::Constant;
                    if (a.has(2)) {
                      std::string m = a.string(2);
                      if (m == "edge") mode = PadMode::Edge;
                      else if (m != "constant") a.bad(2, "\"constant\" or \"edge\"");
                    }
                    double value = a.has(3) ? a.number(3) : 0.0;
                    const Value& w = a.get(1);
                    if (w.kind == Value::Kind::Array && w.array->ndim() >= 1) {
                      if (w.array->shape().back() != 2 || w.array->ndim() > 2 || !is_int(w.array->dtype()))
                        a.bad(1, "an integer, [before, after] or [[before, after], ...]");
                      std::vector<int64_t> v = w.array->to_vector<int64_t>();
                      std::vector<std::pair<int64_t, int64_t>> pairs;
                      for (size_t i = 0; i + 1 < v.size(); i += 2) pairs.push_back({v[i], v[i + 1]});
                      return array_value(pad(x, pairs, mode, value));
                    }
                    return array_value(pad(x, a.integer(1), mode, value));
                  }});
    t.push_back(B{"tile", {"x", "reps"}, "tile(x, reps)", [](Args& a) { return array_value(tile(a.array(0), a.ints(1))); }});
    t.push_back(B{"repeat", {"x", "repeats", "axis?"}, "repeat(x, repeats, axis=None): one count for every element",
                  [=](Args& a) {
                    auto axis = optional_axis(a, 2);
                    return array_value(axis ? repeat(a.array(0), a.integer(1), *axis) : repeat(a.array(0), a.integer(1)));
                  }});
    t.push_back(B{"roll", {"x", "shift", "axis?"}, "roll(x, shift, axis=None)", [=](Args& a) {
                    auto axis = optional_axis(a, 2);
                    return array_value(axis ? roll(a.array(0), a.integer(1), *axis) : roll(a.array(0), a.integer(1)));
                  }});
    t.push_back(B{"flip", {"x", "axis?"}, "flip(x, axis=None): a view", [=](Args& a) {
                    auto axis = optional_axis(a, 1);
                    return array_value(axis ? flip(a.array(0), *axis) : flip(a.array(0)));
                  }});
    t.push_back(B{"squeeze", {"x", "axis?"}, "squeeze(x, axis=None): drops axes of extent 1", [](Args& a) {
                    return array_value(a.has(1) ? squeeze(a.array(0), a.ints(1)) : squeeze(a.array(0)));
                  }});
    t.push_back(B{"swapaxes", {"x", "axis1", "axis2"}, "swapaxes(x, axis1, axis2): a view", [](Args& a) {
                    return array_value(swapaxes(a.array(0), a.integer(1), a.integer(2)));
                  }});
    t.push_back(B{"moveaxis", {"x", "source", "destination"}, "moveaxis(x, source, destination): a view",
                  [](Args& a) { return array_value(moveaxis(a.array(0), a.ints(1), a.ints(2))); }});
    t.push_back(B{"ravel", {"x"}, "ravel(x): flattened, a view when the strides allow",
                  [](Args& a) { return array_value(ravel(a.array(0))); }});
    t.push_back(B{"at_set", {"x", "index", "v"},
                  "at_set(x, index, v) = x.at[index].set(v): index an integer array (axis 0; the last of repeated "
                  "indices wins) or a bool mask",
                  [](Args& a) { return array_value(a.array(0).at(a.array(1)).set(a.array(2))); }});
    t.push_back(B{"at_add", {"x", "index", "v"},
                  "at_add(x, index, v) = x.at[index].add(v): repeated indices accumulate",
                  [](Args& a) { return array_value(a.array(0).at(a.array(1)).add(a.array(2))); }});
    // Products
    bin("dot", dot, "dot(a, b): 1-D and 2-D, as numpy");
    bin("matmul", matmul, "matmul(a, b) = a @ b, also batched");
    add_issue28_builtins(t);
    add_coverage_builtins(t);
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
