#include "difftest/difftest.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <sstream>

#include "support/reference.h"

namespace arrayc_difftest {

using arrayc::Array;
using arrayc::Device;
using arrayc::detail::HostArray;

namespace {

constexpr int64_t kNone = std::numeric_limits<int64_t>::min();  // an absent Slice bound

using UnaryFn = Array (*)(const Array&);
using BinaryFn = Array (*)(const Array&, const Array&);

#define ARRAYC_DT_UNARY(X)                                                                             \
  X(negative) X(logical_not) X(abs) X(exp) X(log) X(sin) X(cos) X(tanh) X(sqrt) X(floor) X(ceil)       \
  X(round) X(trunc) X(sign) X(isnan) X(isinf) X(isfinite) X(log1p) X(expm1) X(log2) X(log10) X(exp2)   \
  X(tan) X(arcsin) X(arccos) X(arctan) X(sinh) X(cosh) X(arcsinh) X(erf) X(sigmoid) X(invert) X(ravel) \
  X(squeeze) X(transpose)
#define ARRAYC_DT_BINARY(X)                                                                            \
  X(add) X(subtract) X(multiply) X(divide) X(pow) X(maximum) X(minimum) X(equal) X(not_equal) X(less)  \
  X(less_equal) X(greater) X(greater_equal) X(logical_and) X(logical_or) X(arctan2) X(hypot) X(fmod)   \
  X(floor_divide) X(remainder) X(bitwise_and) X(bitwise_or) X(bitwise_xor) X(left_shift)               \
  X(right_shift) X(logical_xor)

const std::map<std::string, UnaryFn>& unary_fns() {
#define X(f) {#f, static_cast<UnaryFn>(arrayc::f)},
  static const std::map<std::string, UnaryFn> t = {ARRAYC_DT_UNARY(X)};
#undef X
  return t;
}
const std::map<std::string, BinaryFn>& binary_fns() {
#define X(f) {#f, static_cast<BinaryFn>(arrayc::f)},
  static const std::map<std::string, BinaryFn> t = {ARRAYC_DT_BINARY(X)};
#undef X
  return t;
}
template <class M> std::vector<std::string> keys(const M& m) {
  std::vector<std::string> k;
  for (const auto& [name, fn] : m) k.push_back(name);
  return k;
}

const char* cpp_type(DType t) {
  switch (t) {
    case DType::Bool: return "bool";
    case DType::Int8: return "int8_t";
    case DType::UInt8: return "uint8_t";
    case DType::Int16: return "int16_t";
    case DType::UInt16: return "uint16_t";
    case DType::Int32: return "int32_t";
    case DType::UInt32: return "uint32_t";
    case DType::Int64: return "int64_t";
    case DType::UInt64: return "uint64_t";
    case DType::Float16: return "arrayc::float16";
    case DType::BFloat16: return "arrayc::bfloat16";
    case DType::Float32: return "float";
    case DType::Float64: return "double";
  }
  return "?";
}

std::string dtype_cpp(DType t) {
  static const char* names[] = {"Bool", "Int32", "Int64", "Float32", "Float64", "Int8", "UInt8",
                                "Int16", "UInt16", "UInt32", "UInt64", "Float16", "BFloat16"};
  return std::string("arrayc::DType::") + names[static_cast<int>(t)];
}

std::string float_cpp(double x) {
  if (std::isnan(x)) return "NAN";
  if (std::isinf(x)) return x > 0 ? "INFINITY" : "-INFINITY";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string int_cpp(uint64_t bits, DType t) {
  if (arrayc::is_unsigned(t)) return std::to_string(bits) + (t == DType::UInt64 ? "ull" : "");
  if (t == DType::Bool) return bits ? "true" : "false";
  auto v = static_cast<int64_t>(bits);
  if (v == std::numeric_limits<int64_t>::min()) return "INT64_MIN";
  return std::to_string(v);
}

std::string ints_cpp(const std::vector<int64_t>& v) {
  std::string s = "{";
  for (size_t k = 0; k < v.size(); ++k) s += (k ? ", " : "") + std::to_string(v[k]);
  return s + "}";
}
std::string shape_cpp(const Shape& s) { return "arrayc::Shape" + ints_cpp(s); }

template <class T> Array leaf_of(const Instr& in, Device dev) {
  size_t n = std::max(in.f.size(), in.u.size());
  std::vector<T> v(n);
  for (size_t k = 0; k < n; ++k) {
    if constexpr (std::is_same_v<T, bool>)
      v[k] = in.u[k] != 0;
    else if constexpr (std::is_integral_v<T>)
      v[k] = static_cast<T>(in.u[k]);
    else
      v[k] = T(in.f[k]);
  }
  return arrayc::array(v, in.shape, dev);
}

Array leaf(const Instr& in, Device dev) {
  switch (in.dtype) {
    case DType::Bool: return leaf_of<bool>(in, dev);
    case DType::Int8: return leaf_of<int8_t>(in, dev);
    case DType::UInt8: return leaf_of<uint8_t>(in, dev);
    case DType::Int16: return leaf_of<int16_t>(in, dev);
    case DType::UInt16: return leaf_of<uint16_t>(in, dev);
    case DType::Int32: return leaf_of<int32_t>(in, dev);
    case DType::UInt32: return leaf_of<uint32_t>(in, dev);
    case DType::Int64: return leaf_of<int64_t>(in, dev);
    case DType::UInt64: return leaf_of<uint64_t>(in, dev);
    case DType::Float16: return leaf_of<arrayc::float16>(in, dev);
    case DType::BFloat16: return leaf_of<arrayc::bfloat16>(in, dev);
    case DType::Float32: return leaf_of<float>(in, dev);
    case DType::Float64: return leaf_of<double>(in, dev);
  }
  throw arrayc::Error("difftest: bad dtype");
}

std::vector<arrayc::Index> index_items(const std::vector<int64_t>& ints) {
  std::vector<arrayc::Index> items;
  auto opt = [](int64_t v) { return v == kNone ? std::optional<int64_t>() : std::optional<int64_t>(v); };
  for (size_t k = 0; k + 4 <= ints.size(); k += 4) {
    if (ints[k] == 1)
      items.emplace_back(ints[k + 1]);
    else if (ints[k] == 2)
      items.emplace_back(arrayc::newaxis);
    else
      items.emplace_back(arrayc::Slice(opt(ints[k + 1]), opt(ints[k + 2]), opt(ints[k + 3])));
  }
  return items;
}

std::string index_cpp(const std::vector<int64_t>& ints) {
  auto opt = [](int64_t v) { return v == kNone ? std::string("arrayc::none") : std::to_string(v); };
  std::string s = "{";
  for (size_t k = 0; k + 4 <= ints.size(); k += 4) {
    s += k ? ", " : "";
    if (ints[k] == 1)
      s += std::to_string(ints[k + 1]);
    else if (ints[k] == 2)
      s += "arrayc::newaxis";
    else
      s += "arrayc::Slice(" + opt(ints[k + 1]) + ", " + opt(ints[k + 2]) + ", " + opt(ints[k + 3]) + ")";
  }
  return s + "}";
}

std::vector<std::pair<int64_t, int64_t>> pairs(const std::vector<int64_t>& ints) {
  std::vector<std::pair<int64_t, int64_t>> w;
  for (size_t k = 0; k + 1 < ints.size(); k += 2) w.emplace_back(ints[k], ints[k + 1]);
  return w;
}

Array scalar_of(const Instr& in, const Array& like) {
  return in.integral ? arrayc::scalar_for(in.iscalar, like, in.fn.c_str())
                     : arrayc::scalar_for(in.scalar, like, in.fn.c_str());
}

Array reduce(const Instr& in, const Array& a) {
  const std::string& f = in.fn;
  bool ax = !in.ints.empty() || in.flag;  // an axes list (maybe empty, with keepdims)
  if (f == "sum") return ax ? arrayc::sum(a, in.ints, in.flag) : arrayc::sum(a);
  if (f == "prod") return ax ? arrayc::prod(a, in.ints, in.flag) : arrayc::prod(a);
  if (f == "max") return ax ? arrayc::max(a, in.ints, in.flag) : arrayc::max(a);
  if (f == "min") return ax ? arrayc::min(a, in.ints, in.flag) : arrayc::min(a);
  if (f == "mean") return ax ? arrayc::mean(a, in.ints, in.flag) : arrayc::mean(a);
  if (f == "any") return ax ? arrayc::any(a, in.ints, in.flag) : arrayc::any(a);
  if (f == "all") return ax ? arrayc::all(a, in.ints, in.flag) : arrayc::all(a);
  if (f == "logsumexp") return ax ? arrayc::logsumexp(a, in.ints, in.flag) : arrayc::logsumexp(a);
  if (f == "var") return ax ? arrayc::var(a, in.ints, in.scalar, in.flag) : arrayc::var(a, in.scalar);
  if (f == "std") return ax ? arrayc::std(a, in.ints, in.scalar, in.flag) : arrayc::std(a, in.scalar);
  throw arrayc::Error("difftest: unknown reduction " + f);
}

std::string reduce_cpp(const Instr& in, const std::string& a) {
  bool ax = !in.ints.empty() || in.flag;
  bool ddof = in.fn == "var" || in.fn == "std";
  std::string s = "arrayc::" + in.fn + "(" + a;
  if (ax) s += ", std::vector<int64_t>" + ints_cpp(in.ints);
  if (ddof) s += ", " + float_cpp(in.scalar);
  if (ax) s += in.flag ? ", true" : ", false";
  return s + ")";
}

Array apply(const Instr& in, const std::vector<Array>& v, Device dev) {
  auto A = [&](int k) -> const Array& { return v[static_cast<size_t>(in.args[static_cast<size_t>(k)])]; };
  switch (in.form) {
    case Form::Leaf: return leaf(in, dev);
    case Form::Full:
      return in.integral ? arrayc::full(in.shape, in.iscalar, in.dtype, dev) : arrayc::full(in.shape, in.scalar, in.dtype, dev);
    case Form::Arange: return arrayc::reshape(arrayc::arange(arrayc::shape_numel(in.shape), in.dtype, dev), in.shape);
    case Form::Random:
      return in.fn == "uniform" ? arrayc::uniform(in.shape, static_cast<uint64_t>(in.iscalar), -2.0, 3.0, in.dtype, dev)
                                : arrayc::normal(in.shape, static_cast<uint64_t>(in.iscalar), 0.5, 2.0, in.dtype, dev);
    case Form::Unary: return unary_fns().at(in.fn)(A(0));
    case Form::Binary: return binary_fns().at(in.fn)(A(0), A(1));
    case Form::Scalar: {
      BinaryFn f = binary_fns().at(in.fn);
      Array s = scalar_of(in, A(0));
      return in.flag ? f(s, A(0)) : f(A(0), s);
    }
    case Form::Where: return arrayc::where(A(0), A(1), A(2));
    case Form::Cast: return arrayc::cast(A(0), in.dtype);
    case Form::Reshape: return arrayc::reshape(A(0), in.shape);
    case Form::Transpose: return arrayc::transpose(A(0), in.ints);
    case Form::Broadcast: return arrayc::broadcast_to(A(0), in.shape);
    case Form::ExpandDims: return arrayc::expand_dims(A(0), in.ints[0]);
    case Form::Index: return A(0)[index_items(in.ints)];
    case Form::Flip: return arrayc::flip(A(0), in.ints[0]);
    case Form::Swapaxes: return arrayc::swapaxes(A(0), in.ints[0], in.ints[1]);
    case Form::Squeeze: return arrayc::squeeze(A(0));
    case Form::Reduce: return reduce(in, A(0));
    case Form::ArgReduce:
      if (in.fn == "argmax") return in.ints.empty() ? arrayc::argmax(A(0)) : arrayc::argmax(A(0), in.ints[0], in.flag);
      return in.ints.empty() ? arrayc::argmin(A(0)) : arrayc::argmin(A(0), in.ints[0], in.flag);
    case Form::Matmul: return arrayc::matmul(A(0), A(1));
    case Form::Take: return in.ints.empty() ? arrayc::take(A(0), A(1)) : arrayc::take(A(0), A(1), in.ints[0]);
    case Form::Concat:
      return in.fn == "stack" ? arrayc::stack({A(0), A(1)}, in.ints[0]) : arrayc::concatenate({A(0), A(1)}, in.ints[0]);
    case Form::Pad:
      return arrayc::pad(A(0), pairs(in.ints), in.flag ? arrayc::PadMode::Edge : arrayc::PadMode::Constant, in.scalar);
    case Form::Tile: return arrayc::tile(A(0), in.ints);
    case Form::Repeat: return arrayc::repeat(A(0), in.ints[0], in.ints[1]);
    case Form::Roll: return arrayc::roll(A(0), in.ints[0], in.ints[1]);
    case Form::Scan:
      if (in.fn == "cumsum") return arrayc::cumsum(A(0), in.ints[0]);
      if (in.fn == "cumprod") return arrayc::cumprod(A(0), in.ints[0]);
      if (in.fn == "sort") return arrayc::sort(A(0), in.ints[0]);
      return arrayc::argsort(A(0), in.ints[0]);
  }
  throw arrayc::Error("difftest: unknown form");
}

std::string expr_cpp(const Instr& in, Device) {
  auto A = [&](int k) { return "v" + std::to_string(in.args[static_cast<size_t>(k)]); };
  std::string f = "arrayc::" + in.fn;
  switch (in.form) {
    case Form::Leaf: {
      std::string s = "arrayc::array(std::vector<" + std::string(cpp_type(in.dtype)) + ">{";
      size_t n = std::max(in.f.size(), in.u.size());
      for (size_t k = 0; k < n; ++k)
        s += (k ? ", " : "") + (arrayc::is_float(in.dtype) ? float_cpp(in.f[k]) : int_cpp(in.u[k], in.dtype));
      return s + "}, " + shape_cpp(in.shape) + ", dev)";
    }
    case Form::Full:
      return "arrayc::full(" + shape_cpp(in.shape) + ", " +
             (in.integral ? "int64_t(" + int_cpp(static_cast<uint64_t>(in.iscalar), DType::Int64) + ")" : float_cpp(in.scalar)) +
             ", " + dtype_cpp(in.dtype) + ", dev)";
    case Form::Arange:
      return "arrayc::reshape(arrayc::arange(" + std::to_string(arrayc::shape_numel(in.shape)) + ", " +
             dtype_cpp(in.dtype) + ", dev), " + shape_cpp(in.shape) + ")";
    case Form::Random:
      return f + "(" + shape_cpp(in.shape) + ", " + std::to_string(in.iscalar) +
             (in.fn == "uniform" ? ", -2.0, 3.0, " : ", 0.5, 2.0, ") + dtype_cpp(in.dtype) + ", dev)";
    case Form::Unary: return f + "(" + A(0) + ")";
    case Form::Binary: return f + "(" + A(0) + ", " + A(1) + ")";
    case Form::Scalar: {
      std::string s = "arrayc::scalar_for(" +
                      (in.integral ? "int64_t(" + int_cpp(static_cast<uint64_t>(in.iscalar), DType::Int64) + ")" : float_cpp(in.scalar)) +
                      ", " + A(0) + ", \"" + in.fn + "\")";
      return in.flag ? f + "(" + s + ", " + A(0) + ")" : f + "(" + A(0) + ", " + s + ")";
    }
    case Form::Where: return "arrayc::where(" + A(0) + ", " + A(1) + ", " + A(2) + ")";
    case Form::Cast: return "arrayc::cast(" + A(0) + ", " + dtype_cpp(in.dtype) + ")";
    case Form::Reshape: return "arrayc::reshape(" + A(0) + ", " + shape_cpp(in.shape) + ")";
    case Form::Transpose: return "arrayc::transpose(" + A(0) + ", std::vector<int64_t>" + ints_cpp(in.ints) + ")";
    case Form::Broadcast: return "arrayc::broadcast_to(" + A(0) + ", " + shape_cpp(in.shape) + ")";
    case Form::ExpandDims: return "arrayc::expand_dims(" + A(0) + ", " + std::to_string(in.ints[0]) + ")";
    case Form::Index: return A(0) + "[std::vector<arrayc::Index>" + index_cpp(in.ints) + "]";
    case Form::Flip: return "arrayc::flip(" + A(0) + ", " + std::to_string(in.ints[0]) + ")";
    case Form::Swapaxes:
      return "arrayc::swapaxes(" + A(0) + ", " + std::to_string(in.ints[0]) + ", " + std::to_string(in.ints[1]) + ")";
    case Form::Squeeze: return "arrayc::squeeze(" + A(0) + ")";
    case Form::Reduce: return reduce_cpp(in, A(0));
    case Form::ArgReduce:
      return f + "(" + A(0) + (in.ints.empty() ? "" : ", " + std::to_string(in.ints[0]) + (in.flag ? ", true" : ", false")) + ")";
    case Form::Matmul: return "arrayc::matmul(" + A(0) + ", " + A(1) + ")";
    case Form::Take:
      return "arrayc::take(" + A(0) + ", " + A(1) + (in.ints.empty() ? "" : ", " + std::to_string(in.ints[0])) + ")";
    case Form::Concat:
      return (in.fn == "stack" ? "arrayc::stack({" : "arrayc::concatenate({") + A(0) + ", " + A(1) + "}, " +
             std::to_string(in.ints[0]) + ")";
    case Form::Pad: {
      std::string s = "arrayc::pad(" + A(0) + ", {";
      auto w = pairs(in.ints);
      for (size_t k = 0; k < w.size(); ++k)
        s += (k ? ", " : "") + std::string("{") + std::to_string(w[k].first) + ", " + std::to_string(w[k].second) + "}";
      return s + "}, " + (in.flag ? "arrayc::PadMode::Edge" : "arrayc::PadMode::Constant") + ", " + float_cpp(in.scalar) + ")";
    }
    case Form::Tile: return "arrayc::tile(" + A(0) + ", " + ints_cpp(in.ints) + ")";
    case Form::Repeat:
      return "arrayc::repeat(" + A(0) + ", " + std::to_string(in.ints[0]) + ", " + std::to_string(in.ints[1]) + ")";
    case Form::Roll:
      return "arrayc::roll(" + A(0) + ", " + std::to_string(in.ints[0]) + ", " + std::to_string(in.ints[1]) + ")";
    case Form::Scan: return f + "(" + A(0) + ", " + std::to_string(in.ints[0]) + ")";
  }
  return "?";
}

// ---- Generation ------------------------------------------------------------------------------

constexpr int64_t kMaxElements = 20000;

bool broadcastable(const Shape& a, const Shape& b) {
  for (size_t k = 0; k < std::min(a.size(), b.size()); ++k) {
    int64_t x = a[a.size() - 1 - k], y = b[b.size() - 1 - k];
    if (x != y && x != 1 && y != 1) return false;
  }
  return true;
}

class Generator {
 public:
  Generator(uint64_t seed, Device dev) : rng_(seed), dev_(dev) {}

  Program run() {
    // The first leaves; a creation the API refuses (arange past an int8's range) is drawn again.
    for (int k = 1 + below(2), attempts = 0; (k > 0 || vals_.empty()) && attempts < 100; ++attempts)
      if (new_leaf(rand_shape(), rand_dtype()) >= 0) --k;
    if (vals_.empty()) new_leaf({}, DType::Float32);
    int ops = 1 + below(7);
    for (int k = 0; k < ops; ++k)
      for (int attempt = 0; attempt < 12; ++attempt)
        if (step()) break;
    // Outputs: the last value, and up to three more values that nothing uses (latest first).
    int last = static_cast<int>(p_.instrs.size()) - 1;
    std::vector<bool> used(p_.instrs.size(), false);
    for (const Instr& in : p_.instrs)
      for (int a : in.args) used[static_cast<size_t>(a)] = true;
    p_.outputs.push_back(last);
    for (int k = last - 1; k >= 0 && p_.outputs.size() < 4; --k)
      if (!used[static_cast<size_t>(k)] && !p_.instrs[static_cast<size_t>(k)].args.empty()) p_.outputs.push_back(k);
    for (int k = 0; k < last; ++k)
      if (p_.instrs[static_cast<size_t>(k)].form != Form::Leaf && chance(0.12)) p_.instrs[static_cast<size_t>(k)].eval = true;
    return p_;
  }

 private:
  std::mt19937_64 rng_;
  Device dev_;
  Program p_;
  std::vector<Array> vals_;

  int below(int n) { return n <= 0 ? 0 : static_cast<int>(rng_() % static_cast<uint64_t>(n)); }
  int64_t between(int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(rng_() % static_cast<uint64_t>(hi - lo + 1)); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  template <class T> const T& pick(const std::vector<T>& v) { return v[static_cast<size_t>(below(static_cast<int>(v.size())))]; }

  const Shape& shape(int k) { return vals_[static_cast<size_t>(k)].shape(); }
  DType dtype(int k) { return vals_[static_cast<size_t>(k)].dtype(); }
  int64_t rank(int k) { return static_cast<int64_t>(shape(k).size()); }

  // Adds the instruction when the API accepts it; its index, or -1.
  int add(Instr in) {
    try {
      Array a = apply(in, vals_, dev_);
      if (a.size() > kMaxElements) return -1;
      p_.instrs.push_back(std::move(in));
      vals_.push_back(a);
      return static_cast<int>(vals_.size()) - 1;
    } catch (const arrayc::Error&) {
      return -1;
    }
  }

  DType rand_dtype() {
    static const std::vector<DType> common = {DType::Float32, DType::Float64, DType::Int32, DType::Int64, DType::Bool};
    return chance(0.5) ? pick(common) : arrayc::kAllDTypes[below(13)];
  }
  DType rand_float_dtype() {
    static const std::vector<DType> f = {DType::Float16, DType::BFloat16, DType::Float32, DType::Float32, DType::Float64};
    return pick(f);
  }

  Shape rand_shape() {
    if (chance(0.04)) {  // one larger array: vector loops, tails, several chunks
      if (chance(0.5)) return {between(500, 5000)};
      return {between(20, 70), between(20, 70)};
    }
    static const std::vector<int64_t> dims = {0, 1, 1, 1, 2, 2, 3, 3, 4, 5, 7, 8, 9, 16, 17, 33};
    int r = below(5);
    Shape s;
    int64_t n = 1;
    for (int k = 0; k < r; ++k) {
      int64_t d = pick(dims);
      if (d == 0 && !chance(0.3)) d = 2;
      if (n * std::max<int64_t>(d, 1) > 600) d = 1;
      n *= std::max<int64_t>(d, 1);
      s.push_back(d);
    }
    return s;
  }

  // A shape that broadcasts with s: s itself, some dims at 1, a suffix, or extra leading dims.
  Shape broadcast_partner(const Shape& s) {
    Shape t = s;
    switch (below(5)) {
      case 0: case 1: break;
      case 2: for (auto& d : t) if (chance(0.5)) d = 1; break;
      case 3: t.erase(t.begin(), t.begin() + below(static_cast<int>(t.size()) + 1)); break;
      case 4: t.insert(t.begin(), between(1, 3)); break;
    }
    return t;
  }

  double special_float(DType t) {
    double big = t == DType::Float16 ? 65504.0 : t == DType::BFloat16 ? 3.3895313892515355e38
                 : t == DType::Float32 ? 3.4028234663852886e38 : 1.7976931348623157e308;
    double tiny = t == DType::Float16 ? 6e-8 : t == DType::Float64 ? 5e-324 : 1.4e-45;
    const double v[] = {NAN, INFINITY, -INFINITY, -0.0, 0.0, 1.0, -1.0, big, -big, tiny, -tiny, 0.5, -2.5, 1e-30, 1e30, 3.0};
    return v[below(16)];
  }

  uint64_t rand_int(DType t) {
    if (t == DType::Bool) return rng_() & 1;
    int bits = arrayc::dtype_bits(t);
    bool sgn = arrayc::is_signed_int(t);
    int64_t mn = sgn ? arrayc::int_min(t) : 0;
    uint64_t mx = arrayc::int_max(t);
    double r = std::uniform_real_distribution<double>(0, 1)(rng_);
    if (r < 0.65) return static_cast<uint64_t>(sgn ? between(-6, 6) : between(0, 12));
    if (r < 0.85) {
      const uint64_t v[] = {static_cast<uint64_t>(mn), mx, static_cast<uint64_t>(mn + 1), mx - 1, 0,
                            sgn ? static_cast<uint64_t>(-1) : 1, static_cast<uint64_t>(bits), static_cast<uint64_t>(bits - 1)};
      return v[below(8)];
    }
    uint64_t x = rng_();
    if (bits < 64) {  // truncate to the dtype and sign-extend
      x &= (uint64_t{1} << bits) - 1;
      if (sgn && (x >> (bits - 1))) x |= ~((uint64_t{1} << bits) - 1);
    }
    return x;
  }

  double rand_float(DType t) {
    double r = std::uniform_real_distribution<double>(0, 1)(rng_);
    if (r < 0.6) return std::uniform_real_distribution<double>(-4, 4)(rng_);
    if (r < 0.75) return static_cast<double>(between(-5, 5));
    if (r < 0.8) return std::uniform_real_distribution<double>(-200, 200)(rng_);
    return special_float(t);
  }

  int new_leaf(const Shape& s, DType t) {
    Instr in;
    int kind = below(20);
    in.shape = s;
    in.dtype = t;
    if (kind == 0) {
      in.form = Form::Full;
      in.integral = !arrayc::is_float(t);
      if (in.integral) in.iscalar = static_cast<int64_t>(rand_int(t));
      else in.scalar = rand_float(t);
    } else if (kind == 1 && t != DType::Bool) {
      in.form = Form::Arange;
    } else if (kind == 2 && arrayc::is_float(t)) {
      in.form = Form::Random;
      in.fn = chance(0.5) ? "uniform" : "normal";
      in.iscalar = below(1000);
    } else {
      int64_t n = arrayc::shape_numel(s);
      for (int64_t k = 0; k < n; ++k) {
        if (arrayc::is_float(t)) in.f.push_back(rand_float(t));
        else in.u.push_back(rand_int(t));
      }
    }
    return add(std::move(in));
  }

  // Adds fn(args) (with a scalar operand for Form::Scalar); -1 when an operand is missing or the
  // API refuses it.
  int op(Form form, const char* fn, const std::vector<int>& args, double scalar = 0) {
    for (int a : args)
      if (a < 0) return -1;
    Instr in;
    in.form = form;
    in.fn = fn;
    in.args = args;
    in.scalar = scalar;
    return add(std::move(in));
  }

  // a itself when it is not a float, else where(abs(a) < 1000, a, 0): finite and moderate, the
  // operand of a matrix product.
  int tame(int a) {
    if (a < 0 || !arrayc::is_float(dtype(a))) return a;
    Instr zero;
    zero.form = Form::Full;
    zero.dtype = dtype(a);
    return op(Form::Where, "", {op(Form::Scalar, "less", {op(Form::Unary, "abs", {a})}, 1000), a, add(zero)});
  }

  // a itself when it is not a float, else where(abs(a) > 2 || abs(a) < 0.5, sign(a), a): the
  // operand of a product. Its partial products stay far from overflow and underflow, whose
  // results depend on the order and precision of the products (the library multiplies in the
  // dtype, as numpy does; the reference in double); zeros, infinities and NaN stay.
  int tame_factors(int a) {
    if (a < 0 || !arrayc::is_float(dtype(a))) return a;
    int m = op(Form::Unary, "abs", {a});
    int out = op(Form::Binary, "logical_or", {op(Form::Scalar, "greater", {m}, 2.0), op(Form::Scalar, "less", {m}, 0.5)});
    return op(Form::Where, "", {out, op(Form::Unary, "sign", {a}), a});
  }

  // a itself when it is not a float, else where(isfinite(a) && abs(a) > 1e4, sign(a), a): the
  // operand of a sum. Its partial sums cannot overflow, which they would or not by the order of
  // the additions (max + max + -inf is inf in one order, NaN in another); inf and NaN stay.
  int tame_terms(int a) {
    if (a < 0 || !arrayc::is_float(dtype(a))) return a;
    int big = op(Form::Scalar, "greater", {op(Form::Unary, "abs", {a})}, 1e4);
    int c = op(Form::Binary, "logical_and", {op(Form::Unary, "isfinite", {a}), big});
    return op(Form::Where, "", {c, op(Form::Unary, "sign", {a}), a});
  }

  // An operand: usually the latest value (chains fuse), else any.
  int operand() {
    int n = static_cast<int>(vals_.size());
    return chance(0.5) ? n - 1 : below(n);
  }
  int partner_of(int a, bool want_bool = false) {
    std::vector<int> ok;
    for (int k = 0; k < static_cast<int>(vals_.size()); ++k)
      if (broadcastable(shape(k), shape(a)) && (!want_bool || dtype(k) == DType::Bool)) ok.push_back(k);
    if (!ok.empty() && chance(0.5)) return pick(ok);
    DType t = want_bool ? DType::Bool : chance(0.5) ? dtype(a) : rand_dtype();
    return new_leaf(broadcast_partner(shape(a)), t);
  }
  std::vector<int64_t> rand_axes(int64_t r) {
    std::vector<int64_t> axes;
    for (int64_t d = 0; d < r; ++d)
      if (chance(0.5)) axes.push_back(chance(0.2) ? d - r : d);
    std::sort(axes.begin(), axes.end(), [r](int64_t x, int64_t y) { return (x + r) % r < (y + r) % r; });
    return axes;
  }
  int64_t rand_axis(int64_t r) { return r == 0 ? 0 : chance(0.2) ? between(-r, -1) : between(0, r - 1); }

  Shape factor_shape(int64_t n) {
    int r = below(5);
    if (n == 0) {
      Shape s(static_cast<size_t>(std::max(r, 1)), 1);
      for (auto& d : s) d = between(0, 3);
      s[static_cast<size_t>(below(static_cast<int>(s.size())))] = 0;
      return s;
    }
    std::vector<int64_t> primes;
    for (int64_t p = 2, m = n; m > 1;) {
      if (m % p == 0) { primes.push_back(p); m /= p; }
      else if (p * p > m) { primes.push_back(m); m = 1; }
      else ++p;
    }
    if (r == 0 && n != 1) r = 1;
    Shape s(static_cast<size_t>(r), 1);
    for (int64_t p : primes) s[static_cast<size_t>(below(r))] *= p;
    if (!s.empty() && chance(0.2)) s[static_cast<size_t>(below(r))] = -1;
    return s;
  }

  bool step() {
    static const std::vector<std::string> unary = keys(unary_fns());
    static const std::vector<std::string> binary = keys(binary_fns());
    static const std::vector<std::string> reductions = {"sum", "sum", "prod", "max", "min", "mean", "any", "all", "logsumexp", "var", "std"};
    static const std::vector<std::string> scans = {"cumsum", "cumprod", "sort", "argsort"};
    static const std::vector<std::pair<Form, int>> weights = {
        {Form::Unary, 20}, {Form::Binary, 22}, {Form::Scalar, 8}, {Form::Where, 5}, {Form::Cast, 6},
        {Form::Reshape, 4}, {Form::Transpose, 4}, {Form::Broadcast, 3}, {Form::ExpandDims, 2},
        {Form::Index, 7}, {Form::Flip, 2}, {Form::Swapaxes, 2}, {Form::Squeeze, 1}, {Form::Reduce, 12},
        {Form::ArgReduce, 3}, {Form::Matmul, 4}, {Form::Take, 3}, {Form::Concat, 2}, {Form::Pad, 2},
        {Form::Tile, 1}, {Form::Repeat, 1}, {Form::Roll, 2}, {Form::Scan, 4}, {Form::Leaf, 3}};
    int total = 0;
    for (const auto& [f, w] : weights) total += w;
    int r = below(total);
    Form form = Form::Leaf;
    for (const auto& [f, w] : weights) {
      if (r < w) { form = f; break; }
      r -= w;
    }
    int a = operand();
    int64_t rk = rank(a);
    Instr in;
    in.form = form;
    in.args = {a};
    switch (form) {
      case Form::Leaf: return new_leaf(rand_shape(), rand_dtype()) >= 0;
      case Form::Unary: in.fn = pick(unary); break;
      case Form::Binary: {
        in.fn = pick(binary);
        int b = partner_of(a);
        if (b < 0) return false;
        in.args = chance(0.5) ? std::vector<int>{a, b} : std::vector<int>{b, a};
        break;
      }
      case Form::Scalar:
        in.fn = pick(binary);
        in.flag = chance(0.3);
        in.integral = !arrayc::is_float(dtype(a)) && chance(0.8);
        if (in.integral) in.iscalar = static_cast<int64_t>(rand_int(chance(0.7) ? dtype(a) : DType::Int8));
        else in.scalar = rand_float(DType::Float32);
        break;
      case Form::Where: {
        int c = partner_of(a, true);
        int b = partner_of(a);
        if (b < 0 || c < 0) return false;
        in.args = {c, a, b};
        break;
      }
      case Form::Cast: in.dtype = arrayc::kAllDTypes[below(13)]; break;
      case Form::Reshape: in.shape = factor_shape(vals_[static_cast<size_t>(a)].size()); break;
      case Form::Transpose:
        for (int64_t d = 0; d < rk; ++d) in.ints.push_back(d);
        std::shuffle(in.ints.begin(), in.ints.end(), rng_);
        break;
      case Form::Broadcast: {
        in.shape = shape(a);
        for (auto& d : in.shape) if (d == 1 && chance(0.6)) d = between(0, 4) == 0 ? 0 : between(2, 5);
        for (int k = below(3); k > 0; --k) in.shape.insert(in.shape.begin(), between(1, 3));
        break;
      }
      case Form::ExpandDims: in.ints = {between(-rk - 1, rk)}; break;
      case Form::Index:
        for (int64_t d = 0; d < rk; ++d) {
          int64_t n = shape(a)[static_cast<size_t>(d)];
          if (chance(0.15) && n > 0) {
            in.ints.insert(in.ints.end(), {1, between(-n, n - 1), 0, 0});
          } else {
            auto bound = [&] { return chance(0.3) ? kNone : between(-n - 2, n + 2); };
            static const std::vector<int64_t> steps = {1, 1, 1, 2, 3, -1, -2, kNone};
            in.ints.insert(in.ints.end(), {0, bound(), bound(), pick(steps)});
          }
          if (chance(0.08)) in.ints.insert(in.ints.end(), {2, 0, 0, 0});
        }
        if (rk == 0) in.ints = {2, 0, 0, 0};
        break;
      case Form::Flip: in.ints = {rand_axis(rk)}; break;
      case Form::Swapaxes: in.ints = {rand_axis(rk), rand_axis(rk)}; break;
      case Form::Squeeze: break;
      case Form::Reduce:
        in.fn = pick(reductions);
        if (in.fn == "prod") in.args = {a = tame_factors(a)};
        if (in.fn == "sum" || in.fn == "mean" || in.fn == "var" || in.fn == "std") in.args = {a = tame_terms(a)};
        if (a < 0) return false;
        if (chance(0.7)) {
          in.ints = rand_axes(rk);
          in.flag = chance(0.4);
        }
        if (in.fn == "var" || in.fn == "std") in.scalar = static_cast<double>(below(2));
        break;
      case Form::ArgReduce:
        in.fn = chance(0.5) ? "argmax" : "argmin";
        if (rk > 0 && chance(0.7)) {
          in.ints = {rand_axis(rk)};
          in.flag = chance(0.3);
        }
        break;
      case Form::Matmul: {
        if (rk == 0) return false;
        // Float operands are kept finite and far from overflow: products of huge terms overflow
        // or not by the order of the sum and FMA contraction (inf in one order, NaN in another).
        a = tame(a);
        if (a < 0) return false;
        in.args = {a};
        const Shape& s = shape(a);
        int64_t k = s.back();
        Shape bs;
        if (rk >= 2 && chance(0.5)) bs.assign(s.begin(), s.end() - 2);
        bs.push_back(k);
        if (rk >= 2 || chance(0.5)) bs.push_back(between(1, 9));
        int b = tame(new_leaf(bs, chance(0.6) ? dtype(a) : rand_dtype()));
        if (b < 0) return false;
        in.args = {a, b};
        break;
      }
      case Form::Take: {
        DType it = pick(std::vector<DType>{DType::Int32, DType::Int64, DType::UInt8, DType::Int8, DType::Int16});
        bool with_axis = rk > 0 && chance(0.7);
        if (with_axis) in.ints = {rand_axis(rk)};
        int64_t n = with_axis ? shape(a)[static_cast<size_t>((in.ints[0] + rk) % rk)] : vals_[static_cast<size_t>(a)].size();
        Instr idx;
        idx.form = Form::Leaf;
        idx.dtype = it;
        idx.shape = rand_shape();
        if (idx.shape.size() > 2) idx.shape.resize(2);
        int64_t lo = std::max<int64_t>(-n - 2, arrayc::is_unsigned(it) ? 0 : -128), hi = std::min<int64_t>(n + 2, 127);
        for (int64_t e = 0; e < arrayc::shape_numel(idx.shape); ++e) idx.u.push_back(static_cast<uint64_t>(between(lo, hi)));
        int b = add(std::move(idx));
        if (b < 0) return false;
        in.args = {a, b};
        break;
      }
      case Form::Concat: {
        in.fn = chance(0.3) ? "stack" : "concatenate";
        Shape s = shape(a);
        int64_t axis = in.fn == "stack" ? between(0, rk) : rand_axis(rk);
        if (in.fn != "stack" && rk > 0) s[static_cast<size_t>((axis + rk) % rk)] = between(0, 3);
        int b = new_leaf(s, chance(0.6) ? dtype(a) : rand_dtype());
        if (b < 0) return false;
        in.args = chance(0.5) ? std::vector<int>{a, b} : std::vector<int>{b, a};
        in.ints = {axis};
        break;
      }
      case Form::Pad:
        for (int64_t d = 0; d < rk; ++d) in.ints.insert(in.ints.end(), {between(0, 2), between(0, 2)});
        in.flag = chance(0.4);
        in.scalar = static_cast<double>(between(-3, 3));
        break;
      case Form::Tile:
        for (int64_t d = 0, n = between(1, 3); d < n; ++d) in.ints.push_back(between(0, 3));
        break;
      case Form::Repeat: in.ints = {between(0, 3), rand_axis(rk)}; break;
      case Form::Roll: in.ints = {between(-5, 5), rand_axis(rk)}; break;
      case Form::Scan:
        in.fn = pick(scans);
        in.ints = {rand_axis(rk)};
        if (in.fn == "cumprod") in.args = {a = tame_factors(a)};
        if (in.fn == "cumsum") in.args = {a = tame_terms(a)};
        if (a < 0) return false;
        break;
      default: return false;
    }
    return add(std::move(in)) >= 0;
  }
};

// ---- Running ---------------------------------------------------------------------------------

// Drops instructions that no output needs, renumbering the rest.
Program without_dead_code(const Program& p) {
  std::vector<bool> live(p.instrs.size(), false);
  for (int o : p.outputs) live[static_cast<size_t>(o)] = true;
  for (size_t k = p.instrs.size(); k-- > 0;)
    if (live[k])
      for (int a : p.instrs[k].args) live[static_cast<size_t>(a)] = true;
  std::vector<int> renumber(p.instrs.size(), -1);
  Program q;
  for (size_t k = 0; k < p.instrs.size(); ++k) {
    if (!live[k]) continue;
    Instr in = p.instrs[k];
    for (int& a : in.args) a = renumber[static_cast<size_t>(a)];
    renumber[k] = static_cast<int>(q.instrs.size());
    q.instrs.push_back(std::move(in));
  }
  for (int o : p.outputs) q.outputs.push_back(renumber[static_cast<size_t>(o)]);
  return q;
}

// Whether any element has a finite error bound (or wants NaN): an output whose every bound is
// infinite (an argmax of values closer than their errors) is not checked.
bool checkable(const HostArray& want) {
  if (want.err.empty() || want.numel() == 0) return true;
  for (size_t k = 0; k < want.err.size(); ++k)
    if (std::isfinite(want.err[k]) || (arrayc::is_float(want.dtype) && std::isnan(want.f[k]))) return true;
  return false;
}

// Results below the smallest normal number in magnitude (both the library's and the
// reference's) count as equal: where intermediate values underflow (a cumprod of tiny factors in
// float32, which the reference computes in double) the bounds, relative to the result, do not
// cover the absolute error of a flush or a gradual underflow.
void forgive_underflow(HostArray& got, const HostArray& want) {
  if (!arrayc::is_float(want.dtype) || got.f.size() != want.f.size()) return;
  double tiny = want.dtype == DType::Float16 ? 6.103515625e-05
                : want.dtype == DType::Float64 ? std::numeric_limits<double>::min() : std::numeric_limits<float>::min();
  for (size_t k = 0; k < got.f.size(); ++k)
    if (std::fabs(got.f[k]) < tiny && std::fabs(want.f[k]) < tiny) got.f[k] = want.f[k];
}

Instr leaf_from(const HostArray& h) {
  Instr in;
  in.form = Form::Leaf;
  in.dtype = h.dtype;
  in.shape = h.shape;
  if (arrayc::is_float(h.dtype)) in.f = h.f;
  else for (int64_t v : h.i) in.u.push_back(static_cast<uint64_t>(v));
  return in;
}

}  // namespace

Program generate(uint64_t seed) { return Generator(seed, arrayc::cpu()).run(); }

uint64_t program_seed(uint64_t seed, uint64_t k) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + k + 1;  // splitmix64
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

std::vector<Array> build(const Program& p, Device device, bool materialize) {
  std::vector<Array> v;
  v.reserve(p.instrs.size());
  for (const Instr& in : p.instrs) {
    v.push_back(apply(in, v, device));
    if (materialize && in.eval) v.back().eval();
  }
  return v;
}

std::string to_cpp(const Program& p, Device device) {
  std::ostringstream os;
  os << "arrayc::Device dev = " << (device.kind == Device::Kind::CPU ? "arrayc::cpu()" : "arrayc::gpu(0)") << ";\n";
  for (size_t k = 0; k < p.instrs.size(); ++k)
    os << "auto v" << k << " = " << expr_cpp(p.instrs[k], device) << (p.instrs[k].eval ? ".eval()" : "") << ";\n";
  os << "// outputs, evaluated together with arrayc::eval, fused and with arrayc::set_fusion(false):";
  for (int o : p.outputs) os << " v" << o;
  os << "\n";
  return os.str();
}

Outcome check(const Program& p, Device device) {
  std::vector<HostArray> want;
  try {
    std::vector<Array> v = build(p, device, false);
    for (int o : p.outputs) want.push_back(arrayc_test::reference_of(v[static_cast<size_t>(o)].node()));
  } catch (const arrayc::Error& e) {
    return {Status::Rejected, e.what()};
  } catch (const std::exception& e) {
    return {Status::Fail, std::string("building or interpreting raised a non-arrayc error: ") + e.what()};
  }
  for (bool fused : {true, false}) {
    arrayc_test::FusionScope scope(fused);
    const char* mode = fused ? "fused" : "unfused";
    std::vector<HostArray> got;
    try {
      std::vector<Array> v = build(p, device, true);
      std::vector<Array> outs;
      for (int o : p.outputs) outs.push_back(v[static_cast<size_t>(o)]);
      arrayc::eval(outs);
      for (const Array& a : outs) got.push_back(arrayc_test::values_of(a));
    } catch (const std::exception& e) {
      return {Status::Fail, std::string(mode) + ": evaluation raised (the reference did not): " + e.what()};
    }
    for (size_t k = 0; k < got.size(); ++k) {
      if (!checkable(want[k])) continue;
      forgive_underflow(got[k], want[k]);
      ::testing::AssertionResult r = arrayc_test::matches_values(got[k], want[k]);
      if (!r)
        return {Status::Fail, std::string(mode) + ": output v" + std::to_string(p.outputs[k]) + ": " + r.message()};
    }
  }
  return {};
}

Program shrink(const Program& start, const std::function<bool(const Program&)>& fails) {
  Program p = without_dead_code(start);
  for (bool changed = true; changed;) {
    changed = false;
    // One output: the earliest instruction that fails alone.
    for (size_t k = 0; k < p.instrs.size() && !changed; ++k) {
      if (p.instrs[k].form == Form::Leaf || (p.outputs.size() == 1 && p.outputs[0] == static_cast<int>(k))) continue;
      Program q = p;
      q.outputs = {static_cast<int>(k)};
      q = without_dead_code(q);
      if (q.instrs.size() < p.instrs.size() || (q.instrs.size() == p.instrs.size() && p.outputs.size() > 1))
        if (fails(q)) { p = q; changed = true; }
    }
    // No materialization.
    for (size_t k = 0; k < p.instrs.size(); ++k) {
      if (!p.instrs[k].eval) continue;
      Program q = p;
      q.instrs[k].eval = false;
      if (fails(q)) { p = q; changed = true; }
    }
    // An intermediate value replaced by a leaf holding its reference values.
    for (size_t k = p.instrs.size(); k-- > 0;) {
      const Instr& in = p.instrs[k];
      if (in.args.empty() || std::find(p.outputs.begin(), p.outputs.end(), static_cast<int>(k)) != p.outputs.end()) continue;
      Program q = p;
      try {
        std::vector<Array> v = build(p, arrayc::cpu(), false);
        q.instrs[k] = leaf_from(arrayc_test::reference_of(v[k].node()));
      } catch (const std::exception&) {
        continue;
      }
      q = without_dead_code(q);
      if (fails(q)) { p = q; changed = true; break; }
    }
  }
  return p;
}

}  // namespace arrayc_difftest
