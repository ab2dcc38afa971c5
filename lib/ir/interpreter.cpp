#include "ir/interpreter.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <unordered_map>

#include "arrayc/error.h"
#include "ir/interpreter_math.h"
#include "ir/build_index.h"
#include "ir/philox.h"

namespace arrayc::detail {


namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// ---- Scalar conversions (Cast's rules) ------------------------------------------------------

// Integers, per dtype: signed or unsigned order (uint64 is held as its bit pattern).
bool int_less(DType t, int64_t a, int64_t b) {
  return t == DType::UInt64 ? static_cast<uint64_t>(a) < static_cast<uint64_t>(b) : a < b;
}

// ---- Iteration --------------------------------------------------------------------------------

// Calls f(k, offset + sum(idx[d] * strides[d])) for each element k of `shape`, in row-major order.
template <typename F>
void for_each_strided(const Shape& shape, const std::vector<int64_t>& strides, int64_t offset, F&& f) {
  int64_t n = shape_numel(shape);
  if (n == 0) return;
  size_t rank = shape.size();
  std::vector<int64_t> idx(rank, 0);
  int64_t off = offset;
  for (int64_t k = 0; k < n; ++k) {
    f(k, off);
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < shape[d]) {
        off += strides[d];
        break;
      }
      off -= strides[d] * (shape[d] - 1);
      idx[d] = 0;
    }
  }
}

HostArray make_host(DType dtype, const Shape& shape, bool with_err) {
  HostArray h;
  h.dtype = dtype;
  h.shape = shape;
  size_t n = static_cast<size_t>(shape_numel(shape));
  if (is_float(dtype))
    h.f.assign(n, 0.0);
  else
    h.i.assign(n, 0);
  if (with_err) h.err.assign(n, 0.0);
  return h;
}

// out[k] = in[offset + sum(idx[d] * strides[d])]: every view is one of these.
HostArray gather(const HostArray& in, const Shape& shape, const std::vector<int64_t>& strides,
                 int64_t offset) {
  HostArray out = make_host(in.dtype, shape, !in.err.empty());
  for_each_strided(shape, strides, offset, [&](int64_t k, int64_t src) {
    if (is_float(in.dtype))
      out.f[k] = in.f[src];
    else
      out.i[k] = in.i[src];
    if (!in.err.empty()) out.err[k] = in.err[src];
  });
  return out;
}

// ---- Error bounds -------------------------------------------------------------------------------

// |x| * e, where an exact operand (e == 0) contributes nothing even when x is infinite.
double mulabs(double x, double e) { return e == 0 ? 0 : std::fabs(x) * e; }

// Whether a discrete result (comparison, cast to int) could change within the inputs' errors.
bool uncertain_order(double a, double ea, double b, double eb) {
  if (ea == 0 && eb == 0) return false;
  if (std::isnan(a) || std::isnan(b)) return true;
  return !(std::fabs(a - b) > ea + eb);
}

// ---- The interpreter ---------------------------------------------------------------------------

class Interpreter {
 public:
  Interpreter(const std::vector<HostArray>& params, const InterpretOptions& options)
      : params_(params), options_(options), track_(static_cast<bool>(options.op_ulps)) {}

  HostArray run(const NodeRef& root) {
    // Post-order without recursion: graphs can be deep.
    std::vector<std::pair<const Node*, size_t>> stack{{root.get(), 0}};
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (memo_.count(node)) {
        stack.pop_back();
        continue;
      }
      if (next < node->inputs.size()) {
        const Node* in = node->inputs[next++].get();
        if (!memo_.count(in)) stack.push_back({in, 0});
        continue;
      }
      const Node* done = node;
      stack.pop_back();
      memo_.emplace(done, eval(*done));
    }
    return memo_.at(root.get());
  }

 private:
  const HostArray& input(const Node& n, size_t k) { return memo_.at(n.inputs.at(k).get()); }

  // The error an op adds by itself: ulps(op) units in the last place of its result r.
  double own_error(const Node& n, double r) const {
    return options_.op_ulps(n.op, n.dtype) * ulp_of(r, n.dtype);
  }

  HostArray eval(const Node& n) {
    switch (op_kind(n.op)) {
      case OpKind::Leaf: return eval_leaf(n);
      case OpKind::Elementwise: return eval_elementwise(n);
      case OpKind::View: return eval_view(n);
      case OpKind::Reduce: return eval_reduce(n);
      case OpKind::Contraction: return eval_dot(n);
      case OpKind::Copy: return input(n, 0);
      case OpKind::Gather: return eval_gather(n);
      case OpKind::Axis: return is_scatter(n.op) ? eval_scatter(n) : eval_axis(n);
    }
    ARRAYC_INTERNAL_CHECK(false, "interpreter: unknown op kind");
    return {};
  }

  // ---- Leaves ----

  HostArray eval_leaf(const Node& n) {
    HostArray out = make_host(n.dtype, n.shape, track_);
    int64_t count = n.numel();
    switch (n.op) {
      case Op::Param: {
        int64_t index = n.ints.at(0);
        if (index < 0 || index >= static_cast<int64_t>(params_.size()))
          throw Error("interpret: param " + std::to_string(index) + " given, but only " +
                      std::to_string(params_.size()) + " parameters");
        const HostArray& p = params_[index];
        if (p.dtype != n.dtype || p.shape != n.shape)
          throw Error("interpret: param " + std::to_string(index) + " is " + shape_str(p.shape) +
                      " (" + dtype_name(p.dtype) + "), the graph expects " + shape_str(n.shape) +
                      " (" + dtype_name(n.dtype) + ")");
        out.f = p.f;
        out.i = p.i;
        if (track_ && !p.err.empty()) out.err = p.err;
        return out;
      }
      case Op::Buffer: return read_buffer(n);
      case Op::Constant:
        for (int64_t k = 0; k < count; ++k) {
          if (is_float(n.dtype))
            out.f[k] = round_float(n.dtype, n.value.f);
          else
            out.i[k] = wrap_int(n.dtype, static_cast<uint64_t>(n.value.i));
        }
        return out;
      case Op::Iota:
        for (int64_t k = 0; k < count; ++k) {
          if (is_float(n.dtype))
            out.f[k] = int_to_float(n.dtype, DType::Int64, k);
          else
            out.i[k] = wrap_int(n.dtype, static_cast<uint64_t>(k));
        }
        return out;
      case Op::RandUniform:
      case Op::RandNormal: {
        uint64_t seed = static_cast<uint64_t>(n.ints.at(0));
        bool f32 = n.dtype == DType::Float32;
        ARRAYC_INTERNAL_CHECK(is_float(n.dtype), "interpreter: random node of a non-float dtype");
        for (int64_t k = 0; k < count; ++k) {
          uint64_t i = static_cast<uint64_t>(k);
          if (n.op == Op::RandUniform)
            out.f[k] = f32 ? uniform_value<float>(seed, i) : uniform_value<double>(seed, i);
          else
            out.f[k] = f32 ? normal_value<float>(seed, i) : normal_value<double>(seed, i);
          if (track_) out.err[k] = own_error(n, out.f[k]);
        }
        return out;
      }
      default: break;
    }
    ARRAYC_INTERNAL_CHECK(false, std::string("interpreter: unknown leaf ") + op_name(n.op));
    return out;
  }

  HostArray read_buffer(const Node& n) {
    const Storage& s = *n.storage;
    std::vector<unsigned char> copy;
    const unsigned char* base = static_cast<const unsigned char*>(s.data);
    if (s.device.kind != Device::Kind::CPU) {  // read through the device's backend
      copy.resize(s.bytes);
      s.read(copy.data(), s.bytes);
      base = copy.data();
    }
    HostArray out = make_host(n.dtype, n.shape, track_);
    size_t es = dtype_size(n.dtype);
    for_each_strided(n.shape, n.buffer_strides(), n.buffer_offset(), [&](int64_t k, int64_t e) {
      const unsigned char* p = base + static_cast<size_t>(e) * es;
      ARRAYC_INTERNAL_CHECK(e >= 0 && static_cast<size_t>(e + 1) * es <= s.bytes,
                            "interpreter: buffer view reads outside its storage");
      switch (n.dtype) {
        case DType::Bool: out.i[k] = *p != 0; break;
        case DType::Float16: case DType::BFloat16: {
          uint16_t v;
          std::memcpy(&v, p, 2);
          out.f[k] = n.dtype == DType::Float16 ? float16_value(v) : bfloat16_value(v);
          break;
        }
        case DType::Float32: { float v; std::memcpy(&v, p, 4); out.f[k] = v; break; }
        case DType::Float64: { double v; std::memcpy(&v, p, 8); out.f[k] = v; break; }
        default: {  // integers: the little-endian bytes, wrapped (sign- or zero-extended)
          uint64_t v = 0;
          std::memcpy(&v, p, es);
          out.i[k] = wrap_int(n.dtype, v);
        }
      }
    });
    return out;
  }

  // ---- Elementwise ----

  HostArray eval_elementwise(const Node& n) {
    HostArray out = make_host(n.dtype, n.shape, track_);
    int64_t count = n.numel();
    std::vector<const HostArray*> in;
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      in.push_back(&input(n, k));
      ARRAYC_INTERNAL_CHECK(in.back()->shape == n.shape,
                            std::string("interpreter: input shape differs for ") + op_name(n.op));
    }
    for (int64_t k = 0; k < count; ++k) {
      if (n.op == Op::Cast)
        cast_element(n, *in[0], k, out);
      else if (n.op == Op::Where)
        where_element(n, in, k, out);
      else if (is_float(in[0]->dtype))
        float_element(n, in, k, out);
      else
        int_element(n, in, k, out);
    }
    return out;
  }

  double err_of(const HostArray& a, int64_t k) const { return a.err.empty() ? 0 : a.err[k]; }

  void cast_element(const Node& n, const HostArray& a, int64_t k, HostArray& out) {
    DType from = a.dtype, to = n.dtype;
    double ea = track_ ? err_of(a, k) : 0;
    if (is_float(from)) {
      double x = a.f[k];
      if (is_float(to)) {
        out.f[k] = round_float(to, x);
        if (track_) out.err[k] = ea == 0 ? 0 : ea + ulp_of(out.f[k], to);
      } else {
        out.i[k] = float_to_int(to, x);
        if (track_ && ea != 0) {
          bool same = float_to_int(to, x - ea) == out.i[k] && float_to_int(to, x + ea) == out.i[k];
          out.err[k] = same && !std::isnan(x) && !(to == DType::Bool && std::fabs(x) <= ea) ? 0 : kInf;
        }
      }
    } else {
      int64_t v = a.i[k];
      if (is_float(to))
        out.f[k] = int_to_float(to, from, v);
      else
        out.i[k] = wrap_int(to, static_cast<uint64_t>(v));
      if (track_) out.err[k] = ea == 0 ? 0 : kInf;
    }
  }

  void where_element(const Node& n, const std::vector<const HostArray*>& in, int64_t k, HostArray& out) {
    bool c = in[0]->i[k] != 0;
    const HostArray& a = *in[1];
    const HostArray& b = *in[2];
    const HostArray& pick = c ? a : b;
    if (is_float(n.dtype))
      out.f[k] = pick.f[k];
    else
      out.i[k] = pick.i[k];
    if (!track_) return;
    if (err_of(*in[0], k) == 0) {
      out.err[k] = err_of(pick, k);
    } else if (is_float(n.dtype)) {  // either branch may be taken
      double d = std::fabs(a.f[k] - b.f[k]);
      out.err[k] = std::isfinite(d) ? std::max(err_of(a, k), err_of(b, k)) + d : kInf;
    } else {
      out.err[k] = a.i[k] == b.i[k] && err_of(a, k) == 0 && err_of(b, k) == 0 ? 0 : kInf;
    }
  }

  // Comparisons and logical ops give bool; both use this for their uncertainty.
  void set_bool(HostArray& out, int64_t k, bool v, bool uncertain) {
    out.i[k] = v;
    if (track_) out.err[k] = uncertain ? kInf : 0;
  }

  bool compare(Op op, double a, double b) {
    switch (op) {
      case Op::Eq: return a == b;
      case Op::Ne: return a != b;
      case Op::Lt: return a < b;
      case Op::Le: return a <= b;
      case Op::Gt: return a > b;
      default: return a >= b;  // Ge
    }
  }
  bool compare_int(Op op, DType t, int64_t a, int64_t b) {
    switch (op) {
      case Op::Eq: return a == b;
      case Op::Ne: return a != b;
      case Op::Lt: return int_less(t, a, b);
      case Op::Le: return !int_less(t, b, a);
      case Op::Gt: return int_less(t, b, a);
      default: return !int_less(t, a, b);
    }
  }

  // Ops whose inputs are floats (the result is the same float dtype, or bool for comparisons).
  void float_element(const Node& n, const std::vector<const HostArray*>& in, int64_t k, HostArray& out) {
    DType t = in[0]->dtype;
    bool f32 = t != DType::Float64;  // float16 and bfloat16 compute in float, then round
    double a = in[0]->f[k];
    double b = in.size() > 1 ? in[1]->f[k] : 0.0;
    double ea = track_ ? err_of(*in[0], k) : 0;
    double eb = track_ && in.size() > 1 ? err_of(*in[1], k) : 0;
    float af = static_cast<float>(a), bf = static_cast<float>(b);
    double r = 0;
    double e = 0;  // propagated input error; the op's own ULPs are added below
    // An unknown operand (0 with an infinite bound, set at the end below): any value, NaN too.
    auto unknown = [](double v, double err) { return v == 0 && std::isinf(err); };
    bool unknown_operand = unknown(a, ea) || (in.size() > 1 && unknown(b, eb));
    // numpy math ops (issue 28): ir/interpreter_math.cpp.
    if (numpy_math_float(n.op, t, a, b, r)) {
      e = track_ ? numpy_math_float_spread(n.op, t, a, ea, b, eb, r) : 0;
      if (numpy_math_gives_bool(n.op)) return set_bool(out, k, r != 0, e != 0 || unknown_operand);
    } else switch (n.op) {
      case Op::Eq: case Op::Ne: case Op::Lt: case Op::Le: case Op::Gt: case Op::Ge:
        set_bool(out, k, compare(n.op, a, b), uncertain_order(a, ea, b, eb));
        return;
      case Op::Not:
        set_bool(out, k, a == 0, uncertain_order(a, ea, 0, 0));
        return;
      case Op::And: case Op::Or: {
        bool x = a != 0, y = b != 0;
        bool v = n.op == Op::And ? x && y : x || y;
        set_bool(out, k, v, uncertain_order(a, ea, 0, 0) || uncertain_order(b, eb, 0, 0));
        return;
      }
      case Op::Neg: r = -a; e = ea; break;
      case Op::Abs: r = std::fabs(a); e = ea; break;
      case Op::Add: r = f32 ? double(af + bf) : a + b; e = ea + eb; break;
      case Op::Sub: r = f32 ? double(af - bf) : a - b; e = ea + eb; break;
      case Op::Mul:
        r = f32 ? double(af * bf) : a * b;
        e = mulabs(a, eb) + mulabs(b, ea) + ea * eb;
        break;
      case Op::Div:
        r = f32 ? double(af / bf) : a / b;
        if (eb == 0)
          e = ea == 0 ? 0 : (b == 0 ? kInf : ea / std::fabs(b));
        else
          e = std::fabs(b) > eb ? (ea + mulabs(r, eb)) / (std::fabs(b) - eb) : kInf;
        break;
      case Op::Pow:
        r = f32 ? double(::powf(af, bf)) : std::pow(a, b);
        if (ea != 0 || eb != 0) {
          if (a > ea && std::isfinite(r)) {
            double rel = mulabs(std::log(a), eb) + mulabs(b, ea / (a - ea));
            e = std::fabs(r) * std::expm1(rel);
          } else {
            e = kInf;
          }
        }
        break;
      case Op::Maximum:
        r = std::isnan(a) || std::isnan(b) ? kNaN : (a > b ? a : b);
        e = std::max(ea, eb);
        break;
      case Op::Minimum:
        r = std::isnan(a) || std::isnan(b) ? kNaN : (a < b ? a : b);
        e = std::max(ea, eb);
        break;
      case Op::Exp:
        r = f32 ? double(::expf(af)) : std::exp(a);
        e = ea == 0 ? 0 : std::fabs(r) * std::expm1(ea);
        break;
      case Op::Log:
        r = f32 ? double(::logf(af)) : std::log(a);
        e = ea == 0 ? 0 : (a > ea ? -std::log1p(-ea / a) : kInf);
        break;
      case Op::Sin:  // an operand that may be infinite may give NaN
        r = f32 ? double(::sinf(af)) : std::sin(a);
        e = std::isinf(ea) || (std::isinf(a) && ea > 0) ? kInf : std::min(ea, 2.0);
        break;
      case Op::Cos:
        r = f32 ? double(::cosf(af)) : std::cos(a);
        e = std::isinf(ea) || (std::isinf(a) && ea > 0) ? kInf : std::min(ea, 2.0);
        break;
      case Op::Tanh:
        r = f32 ? double(::tanhf(af)) : std::tanh(a);
        e = std::min(ea, 2.0);
        break;
      case Op::Sqrt:
        r = f32 ? double(::sqrtf(af)) : std::sqrt(a);
        e = ea == 0 ? 0 : (a - ea >= 0 ? std::sqrt(a + ea) - std::sqrt(a - ea) : kInf);
        break;
      default:
        ARRAYC_INTERNAL_CHECK(false, std::string("interpreter: ") + op_name(n.op) + " on floats");
    }
    ARRAYC_INTERNAL_CHECK(n.dtype == t, std::string("interpreter: dtype of ") + op_name(n.op));
    out.f[k] = round_float(t, r);  // float32 and float64: a no-op, computed in the dtype already
    if (track_) {
      // Unknown: a NaN that the op makes from operands that are not NaN but uncertain, with an
      // unbounded error (log2 of a cos of a huge argument, whose error reaches below 0; cos of
      // an infinity that is the rounding of a finite float32 sinh), and whatever reads such an
      // unknown. It is 0 with an infinite bound: any result passes. (A certain NaN such as
      // sqrt(-5 +- 0.1) is unknown too: the bounds above do not tell the two apart.)
      bool operands_not_nan = !std::isnan(a) && !(in.size() > 1 && std::isnan(b));
      if (unknown_operand ||
          (std::isnan(r) && !(std::fabs(e) < kInf) && operands_not_nan && (ea > 0 || eb > 0))) {
        out.f[k] = 0;
        out.err[k] = kInf;
        return;
      }
      // A NaN of exact operands, or one passed on from a NaN operand, is certain.
      if (std::isnan(r) && ((ea == 0 && eb == 0) || !operands_not_nan)) {
        out.err[k] = 0;
        return;
      }
      if (std::isnan(e)) e = kInf;
      // IEEE arithmetic and sqrt of exact operands give an exact zero on every implementation
      // (the ULP of slack, for FMA contraction, must not turn 0 into "0 or a denormal").
      bool exact_zero = out.f[k] == 0 && ea == 0 && eb == 0 &&
                        (n.op == Op::Add || n.op == Op::Sub || n.op == Op::Mul || n.op == Op::Div ||
                         n.op == Op::Sqrt);
      out.err[k] = e + (exact_zero ? 0 : own_error(n, out.f[k]));
    }
  }

  // Ops whose inputs are bool or integers: exact, wrapping arithmetic.
  void int_element(const Node& n, const std::vector<const HostArray*>& in, int64_t k, HostArray& out) {
    DType t = in[0]->dtype;
    int64_t a = in[0]->i[k];
    int64_t b = in.size() > 1 ? in[1]->i[k] : 0;
    uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
    bool uncertain = false;
    if (track_)
      for (const HostArray* x : in) uncertain |= err_of(*x, k) != 0;
    uint64_t r = 0;
    // numpy math ops (issue 28): ir/interpreter_math.cpp.
    if (numpy_math_int(n.op, in[0]->dtype, a, b, r)) {
    } else switch (n.op) {
      case Op::Eq: case Op::Ne: case Op::Lt: case Op::Le: case Op::Gt: case Op::Ge:
        set_bool(out, k, compare_int(n.op, t, a, b), uncertain);
        return;
      case Op::Not: set_bool(out, k, a == 0, uncertain); return;
      case Op::And: set_bool(out, k, a != 0 && b != 0, uncertain); return;
      case Op::Or: set_bool(out, k, a != 0 || b != 0, uncertain); return;
      case Op::Neg: r = 0 - ua; break;
      case Op::Abs: r = is_signed_int(t) && a < 0 ? 0 - ua : ua; break;
      case Op::Add: r = ua + ub; break;
      case Op::Sub: r = ua - ub; break;
      case Op::Mul: r = ua * ub; break;
      case Op::Maximum: r = static_cast<uint64_t>(int_less(t, a, b) ? b : a); break;
      case Op::Minimum: r = static_cast<uint64_t>(int_less(t, b, a) ? b : a); break;
      case Op::Pow:
        if (is_signed_int(t) && b < 0) {
          r = a == 1 ? 1 : a == -1 ? ((b & 1) ? static_cast<uint64_t>(-1) : 1) : 0;
        } else {
          r = 1;
          for (uint64_t base = ua, e = ub; e; e >>= 1, base *= base)
            if (e & 1) r *= base;
        }
        break;
      default:
        throw Error(std::string("interpret: ") + op_name(n.op) + " does not accept dtype " +
                    dtype_name(in[0]->dtype));
    }
    ARRAYC_INTERNAL_CHECK(!is_float(n.dtype), std::string("interpreter: dtype of ") + op_name(n.op));
    out.i[k] = wrap_int(n.dtype, r);
    if (track_) out.err[k] = uncertain ? kInf : 0;
  }

  // ---- Views ----

  HostArray eval_view(const Node& n) {
    const HostArray& a = input(n, 0);
    std::vector<int64_t> in_strides = contiguous_strides(a.shape);
    std::vector<int64_t> strides(n.shape.size());
    switch (n.op) {
      case Op::Reshape: {
        HostArray out = a;
        out.shape = n.shape;
        return out;
      }
      case Op::Transpose:
        for (size_t d = 0; d < n.shape.size(); ++d) strides[d] = in_strides.at(n.ints.at(d));
        break;
      case Op::Broadcast:
        ARRAYC_INTERNAL_CHECK(a.shape.size() == n.shape.size(), "interpreter: broadcast rank");
        for (size_t d = 0; d < n.shape.size(); ++d) strides[d] = a.shape[d] == 1 ? 0 : in_strides[d];
        break;
      case Op::Slice: {  // indexing: start + i * step per dim
        int64_t offset = 0;
        for (size_t d = 0; d < n.shape.size(); ++d) {
          offset += n.ints.at(2 * d) * in_strides[d];
          strides[d] = n.ints.at(2 * d + 1) * in_strides[d];
        }
        return gather(a, n.shape, strides, offset);
      }
      default: ARRAYC_INTERNAL_CHECK(false, "interpreter: unknown view");
    }
    return gather(a, n.shape, strides, 0);
  }

  // ---- Gather (indexing) ----

  HostArray eval_gather(const Node& n) {
    const HostArray& src = input(n, 0);
    const HostArray& idx = input(n, 1);
    int64_t axis = gather_axis(n);
    std::vector<int64_t> map = gather_dim_map(n);
    std::vector<int64_t> src_strides = contiguous_strides(src.shape);
    HostArray out = make_host(n.dtype, n.shape, !src.err.empty());
    std::vector<int64_t> pos(n.shape.size(), 0);
    for (int64_t k = 0; k < n.numel(); ++k) {
      int64_t at = gather_position(idx.i[k], src.shape[axis]) * src_strides[axis];
      for (size_t d = 0; d < map.size(); ++d)
        if (static_cast<int64_t>(d) != axis) at += pos[map[d]] * src_strides[d];
      if (is_float(n.dtype))
        out.f[k] = src.f[at];
      else
        out.i[k] = src.i[at];
      if (!src.err.empty()) out.err[k] = src.err[at];
      for (size_t d = pos.size(); d-- > 0;) {
        if (++pos[d] < n.shape[d]) break;
        pos[d] = 0;
      }
    }
    return out;
  }

  // ---- Reductions ----

  HostArray eval_reduce(const Node& n) {
    const HostArray& a = input(n, 0);
    HostArray out = make_host(n.dtype, n.shape, track_);
    size_t m = static_cast<size_t>(n.numel());
    // Where each input element lands: reduced axes have stride 0 into the output.
    std::vector<bool> reduced(a.shape.size(), false);
    int64_t count = 1;
    for (int64_t ax : n.ints) {
      reduced.at(ax) = true;
      count *= a.shape[ax];
    }
    std::vector<int64_t> to_out(a.shape.size(), 0);
    {
      std::vector<int64_t> out_strides = contiguous_strides(n.shape);
      size_t j = 0;
      for (size_t d = 0; d < a.shape.size(); ++d)
        if (!reduced[d]) to_out[d] = out_strides.at(j++);
    }
    bool fl = is_float(a.dtype);
    // Accumulators: floats in double with Neumaier's compensation; integers wrap in uint64.
    std::vector<double> acc(m), comp(m, 0.0), sq_sum(m, 0.0), err_sum(m, 0.0);
    std::vector<uint64_t> iacc(m);
    std::vector<bool> bad(m, false);  // Prod bound undecidable
    double init = n.op == Op::Prod ? 1.0 : (n.op == Op::Max ? -kInf : n.op == Op::Min ? kInf : 0.0);
    std::fill(acc.begin(), acc.end(), init);
    uint64_t iinit = n.op == Op::Prod ? 1 : 0;
    if (n.op == Op::Max && !fl) iinit = static_cast<uint64_t>(int_min(a.dtype));
    if (n.op == Op::Min && !fl) iinit = int_max(a.dtype);
    std::fill(iacc.begin(), iacc.end(), iinit);

    for_each_strided(a.shape, to_out, 0, [&](int64_t k, int64_t o) {
      double e = track_ ? err_of(a, k) : 0;
      if (fl) {
        double x = a.f[k];
        switch (n.op) {
          case Op::Sum: case Op::Mean: {
            double s = acc[o] + x;  // Neumaier
            if (std::fabs(acc[o]) >= std::fabs(x))
              comp[o] += (acc[o] - s) + x;
            else
              comp[o] += (x - s) + acc[o];
            acc[o] = s;
            sq_sum[o] += x * x;
            err_sum[o] += e;
            break;
          }
          case Op::Prod:
            acc[o] *= x;
            if (e != 0) {
              if (x == 0 || !std::isfinite(x)) bad[o] = true;
              else err_sum[o] += e / std::fabs(x);
            }
            break;
          case Op::Max:
            acc[o] = std::isnan(acc[o]) || std::isnan(x) ? kNaN : std::max(acc[o], x);
            err_sum[o] = std::max(err_sum[o], e);
            break;
          case Op::Min:
            acc[o] = std::isnan(acc[o]) || std::isnan(x) ? kNaN : std::min(acc[o], x);
            err_sum[o] = std::max(err_sum[o], e);
            break;
          default: ARRAYC_INTERNAL_CHECK(false, "interpreter: unknown reduction");
        }
      } else {
        int64_t x = a.i[k];
        uint64_t ux = static_cast<uint64_t>(x);
        switch (n.op) {
          case Op::Sum: iacc[o] += ux; break;
          case Op::Prod: iacc[o] *= ux; break;
          case Op::Max: if (int_less(a.dtype, static_cast<int64_t>(iacc[o]), x)) iacc[o] = ux; break;
          case Op::Min: if (int_less(a.dtype, x, static_cast<int64_t>(iacc[o]))) iacc[o] = ux; break;
          default:
            throw Error(std::string("interpret: ") + op_name(n.op) + " does not accept dtype " +
                        dtype_name(a.dtype));
        }
        err_sum[o] += e;
      }
    });

    double eps = ulp_of(1.0, n.dtype);
    double k_ulps = track_ ? options_.op_ulps(n.op, n.dtype) : 0;
    for (size_t o = 0; o < m; ++o) {
      if (!fl) {
        out.i[o] = wrap_int(n.dtype, iacc[o]);
        if (track_) out.err[o] = err_sum[o] != 0 ? kInf : 0;
        continue;
      }
      double r = acc[o];
      if (n.op == Op::Sum || n.op == Op::Mean) {
        if (std::isfinite(r)) r += comp[o];
        if (n.op == Op::Mean) r /= static_cast<double>(count);  // 0/0 = NaN when empty
      }
      if (n.op == Op::Max || n.op == Op::Min) {
        if (count == 0) r = kNaN;  // unreachable through the builders: max of nothing raises
      }
      r = round_float(n.dtype, r);
      out.f[o] = r;
      if (!track_) continue;
      double e = 0;
      double own = k_ulps * ulp_of(r, n.dtype);
      // Rounding error of a sum in another order: a random walk over the partial sums, whose
      // size is about sqrt(sum x^2) (zero-mean terms) or the total (same-sign terms).
      double walk = k_ulps * eps * std::sqrt(static_cast<double>(count)) *
                    (std::sqrt(sq_sum[o]) + std::fabs(acc[o]));
      switch (n.op) {
        case Op::Sum:
          e = err_sum[o] + walk + own;
          break;
        case Op::Mean:
          e = (err_sum[o] + walk) / static_cast<double>(std::max<int64_t>(count, 1)) + own;
          break;
        case Op::Prod:
          e = bad[o] ? kInf
                     : mulabs(r, err_sum[o] + k_ulps * eps * static_cast<double>(count)) + own;
          break;
        default: e = err_sum[o]; break;
      }
      // An infinite or NaN result does not depend on the order: it must match exactly.
      if (!std::isfinite(r)) e = err_sum[o] == 0 ? 0 : kInf;
      out.err[o] = std::isnan(e) ? kInf : e;
    }
    return out;
  }

  // ---- Along one axis: scans and sorts (issue 28) ----

  // Cumsum and Cumprod: each prefix as the Sum or Prod reduction computes it (floats in double,
  // rounded once per output; integers wrapping), with that reduction's error bound over the
  // prefix. Sort and Argsort: a stable sort with NaN last and -0.0 equal to 0.0.
  // Sparse scatter (issue 28): x, then each update in index order (ops.def's ScatterSet/Add).
  HostArray eval_scatter(const Node& n) {
    HostArray out = input(n, 0);
    if (track_ && out.err.empty()) out.err.assign(static_cast<size_t>(out.numel()), 0.0);
    const HostArray& idx = input(n, 1);
    const HostArray& v = input(n, 2);
    int64_t rows = n.shape.at(0), k = idx.numel();
    int64_t row = rows == 0 ? 0 : out.numel() / rows;
    bool fl = is_float(n.dtype), add = n.op == Op::ScatterAdd;
    // GPU scatter: a float add's own error is taken at |x| + the |updates| so far, which bounds the
    // partial sums of every order of a row's adds (a GPU adds them with atomics, in no set order);
    // a magnitude past the dtype's range falls back to the result's.
    std::vector<double> mag;
    if (track_ && fl && add) mag.assign(out.f.begin(), out.f.end());
    for (double& m : mag) m = std::fabs(m);
    for (int64_t j = 0; j < k; ++j) {
      int64_t r = idx.i[j] < 0 ? idx.i[j] + rows : idx.i[j];
      if (r < 0 || r >= rows) continue;  // dropped
      for (int64_t e = 0; e < row; ++e) {
        int64_t o = r * row + e, s = j * row + e;
        double eo = track_ ? err_of(out, o) : 0, ev = track_ ? err_of(v, s) : 0;
        if (!add) {
          if (fl) out.f[o] = v.f[s];
          else out.i[o] = v.i[s];
          if (track_) out.err[o] = ev;
          continue;
        }
        if (n.dtype == DType::Bool) {
          out.i[o] = out.i[o] || v.i[s];
        } else if (!fl) {
          out.i[o] = wrap_int(n.dtype, static_cast<uint64_t>(out.i[o]) + static_cast<uint64_t>(v.i[s]));
        } else {
          double a = out.f[o], b = v.f[s];
          double sum = n.dtype == DType::Float64 ? a + b : double(static_cast<float>(a) + static_cast<float>(b));
          out.f[o] = round_float(n.dtype, sum);
        }
        if (!mag.empty()) mag[o] += std::fabs(v.f[s]);
        if (track_) {
          double own = fl && (eo != 0 || ev != 0 || out.f[o] != 0) ? own_error(n, mag.empty() ? out.f[o] : mag[o]) : 0;
          if (!std::isfinite(own)) own = own_error(n, out.f[o]);
          out.err[o] = eo + ev + own;
        }
      }
    }
    return out;
  }

  HostArray eval_axis(const Node& n) {
    const HostArray& a = input(n, 0);
    HostArray out = make_host(n.dtype, n.shape, track_);
    int64_t axis = n.ints.at(0), len = a.shape.at(axis);
    int64_t inner = 1;
    for (size_t d = axis + 1; d < a.shape.size(); ++d) inner *= a.shape[d];
    int64_t rows = len == 0 ? 0 : a.numel() / len;
    bool fl = is_float(a.dtype);
    double eps = ulp_of(1.0, n.dtype);
    double k_ulps = track_ ? options_.op_ulps(n.op, n.dtype) : 0;
    std::vector<int64_t> order(static_cast<size_t>(len));
    for (int64_t r = 0; r < rows; ++r) {
      int64_t base = (r / inner) * len * inner + r % inner;
      auto at = [&](int64_t i) { return base + i * inner; };
      if (n.op == Op::Sort || n.op == Op::Argsort) {
        for (int64_t i = 0; i < len; ++i) order[i] = i;
        std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
          if (!fl && is_unsigned(a.dtype))  // uint64 above 2^63 is held as its bit pattern
            return static_cast<uint64_t>(a.i[at(x)]) < static_cast<uint64_t>(a.i[at(y)]);
          if (!fl) return a.i[at(x)] < a.i[at(y)];
          double u = a.f[at(x)], v = a.f[at(y)];
          return !std::isnan(u) && (std::isnan(v) || u < v);
        });
        // Bounds: the k-th smallest moves by at most the largest input error; an index is
        // undecidable where its value is within the errors of a neighbour's.
        double row_err = 0;
        if (track_)
          for (int64_t i = 0; i < len; ++i) row_err = std::max(row_err, err_of(a, at(i)));
        for (int64_t i = 0; i < len; ++i) {
          int64_t o = at(i), src = at(order[i]);
          if (n.op == Op::Argsort) {
            out.i[o] = order[i];
            if (!track_) continue;
            // An element with an unbounded error (an unknown, held as 0) may sort anywhere, the
            // end included (NaN): every index of its row is undecidable.
            bool uncertain = std::isinf(row_err);
            for (int64_t j : {i - 1, i + 1})
              if (j >= 0 && j < len) {
                int64_t other = at(order[j]);
                uncertain |= uncertain_order(a.as_double(src), err_of(a, src), a.as_double(other), err_of(a, other));
              }
            out.err[o] = uncertain ? kInf : 0;
          } else {
            if (fl) out.f[o] = a.f[src];
            else out.i[o] = a.i[src];
            if (track_) out.err[o] = row_err;
          }
        }
        continue;
      }
      bool sum = n.op == Op::Cumsum;
      double acc = sum ? 0.0 : 1.0, comp = 0, sq = 0, err = 0, rel = 0;
      uint64_t iacc = sum ? 0 : 1;
      bool bad = false;
      for (int64_t i = 0; i < len; ++i) {
        int64_t o = at(i);
        double e = track_ ? err_of(a, o) : 0;
        if (!fl) {
          uint64_t x = static_cast<uint64_t>(a.i[o]);
          iacc = sum ? iacc + x : iacc * x;
          out.i[o] = wrap_int(n.dtype, iacc);
          err += e;
          if (track_) out.err[o] = err != 0 ? kInf : 0;
          continue;
        }
        double x = a.f[o];
        if (sum) {
          double s = acc + x;  // Neumaier, as Sum
          if (std::fabs(acc) >= std::fabs(x)) comp += (acc - s) + x;
          else comp += (x - s) + acc;
          acc = s;
          sq += x * x;
          err += e;
        } else {
          acc *= x;
          if (e != 0) {
            if (x == 0 || !std::isfinite(x)) bad = true;
            else rel += e / std::fabs(x);
          }
        }
        double r = round_float(n.dtype, sum && std::isfinite(acc) ? acc + comp : acc);
        out.f[o] = r;
        if (!track_) continue;
        double count = static_cast<double>(i + 1);
        double own = k_ulps * ulp_of(r, n.dtype);
        double bound = sum ? err + k_ulps * eps * std::sqrt(count) * (std::sqrt(sq) + std::fabs(acc)) + own
                           : (bad ? kInf : mulabs(r, rel + k_ulps * eps * count) + own);
        double input_err = sum ? err : (bad || rel != 0 ? 1 : 0);
        if (!std::isfinite(r)) bound = input_err == 0 ? 0 : kInf;
        out.err[o] = std::isnan(bound) ? kInf : bound;
      }
    }
    return out;
  }

  // ---- Dot ----

  HostArray eval_dot(const Node& n) {
    const HostArray& a = input(n, 0);
    const HostArray& b = input(n, 1);
    ARRAYC_INTERNAL_CHECK(a.shape.size() == b.shape.size() && (a.shape.size() == 2 || a.shape.size() == 3),
                          "interpreter: dot operands must be [m,k]x[k,n] or [b,m,k]x[b,k,n]");
    bool batched = a.shape.size() == 3;
    int64_t nb = batched ? a.shape[0] : 1;
    int64_t m = a.shape[a.shape.size() - 2], kk = a.shape.back(), nn = b.shape.back();
    ARRAYC_INTERNAL_CHECK(b.shape[b.shape.size() - 2] == kk && (!batched || b.shape[0] == nb),
                          "interpreter: dot shapes");
    HostArray out = make_host(n.dtype, n.shape, track_);
    DType t = n.dtype;
    double eps = ulp_of(1.0, t);
    double k_ulps = track_ ? options_.op_ulps(n.op, t) : 0;
    for (int64_t bi = 0; bi < nb; ++bi)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < nn; ++j) {
          int64_t o = (bi * m + i) * nn + j;
          float accf = 0;
          double accd = 0, sq_sum = 0, exact = 0, err = 0;
          uint64_t acci = 0;
          for (int64_t p = 0; p < kk; ++p) {
            int64_t ka = (bi * m + i) * kk + p, kb = (bi * kk + p) * nn + j;
            if (t == DType::Float32) {
              float prod = static_cast<float>(a.f[ka]) * static_cast<float>(b.f[kb]);
              accf = accf + prod;
            } else if (t == DType::Float64) {
              double prod = a.f[ka] * b.f[kb];
              accd = accd + prod;
            } else {
              acci += static_cast<uint64_t>(a.i[ka]) * static_cast<uint64_t>(b.i[kb]);
            }
            if (track_) {
              double ea = err_of(a, ka), eb = err_of(b, kb);
              if (is_float(t)) {
                double ab = a.f[ka] * b.f[kb];
                sq_sum += ab * ab;
                exact += ab;
                err += mulabs(a.f[ka], eb) + mulabs(b.f[kb], ea) + ea * eb;
              } else {
                err += ea + eb;
              }
            }
          }
          if (is_float(t)) {
            out.f[o] = t == DType::Float32 ? static_cast<double>(accf) : accd;
          } else {
            out.i[o] = wrap_int(t, acci);
          }
          if (track_) {
            if (is_float(t)) {
              double walk = eps * std::sqrt(static_cast<double>(kk)) * (std::sqrt(sq_sum) + std::fabs(exact));
              double e = err + k_ulps * (walk + ulp_of(out.f[o], t));
              if (!std::isfinite(out.f[o])) e = err == 0 ? 0 : kInf;
              out.err[o] = std::isnan(e) ? kInf : e;
            } else {
              out.err[o] = err != 0 ? kInf : 0;
            }
          }
        }
    return out;
  }

  const std::vector<HostArray>& params_;
  const InterpretOptions& options_;
  bool track_;
  std::unordered_map<const Node*, HostArray> memo_;
};

}  // namespace

double ulp_of(double x, DType dtype) {
  if (!std::isfinite(x)) return 0;
  x = std::fabs(x);
  if (dtype == DType::Float32) {
    float f = static_cast<float>(x);
    if (f == std::numeric_limits<float>::max()) return f - std::nextafter(f, 0.0f);
    return static_cast<double>(std::nextafter(f, std::numeric_limits<float>::infinity())) - f;
  }
  if (dtype == DType::Float64) {
    if (x == std::numeric_limits<double>::max()) return x - std::nextafter(x, 0.0);
    return std::nextafter(x, kInf) - x;
  }
  if (is_half(dtype)) {  // 2^(e - p + 1) for the binade of x (the lowest one for subnormals)
    int p = dtype == DType::Float16 ? 11 : 8, emin = dtype == DType::Float16 ? -14 : -126;
    int e2 = 0;
    if (x != 0) std::frexp(x, &e2);
    return std::ldexp(1.0, std::max(e2 - 1, emin) - (p - 1));
  }
  return 0;  // integers are exact
}

HostArray host_array(DType dtype, const Shape& shape, const std::vector<double>& values) {
  if (static_cast<int64_t>(values.size()) != shape_numel(shape))
    throw Error("host_array: " + std::to_string(values.size()) + " values for shape " +
                shape_str(shape));
  HostArray h = make_host(dtype, shape, false);
  for (size_t k = 0; k < values.size(); ++k) {
    if (is_float(dtype))
      h.f[k] = round_float(dtype, values[k]);
    else
      h.i[k] = float_to_int(dtype, values[k]);
  }
  return h;
}

HostArray interpret(const NodeRef& node, const std::vector<HostArray>& params) {
  return interpret(node, params, InterpretOptions{});
}

HostArray interpret(const NodeRef& node, const std::vector<HostArray>& params,
                    const InterpretOptions& options) {
  ARRAYC_INTERNAL_CHECK(node != nullptr, "interpret: null node");
  return Interpreter(params, options).run(node);
}

}  // namespace arrayc::detail
