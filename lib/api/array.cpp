// Array and the public operations: thin wrappers over the checked node constructors, plus
// evaluation (passes -> schedule -> compiled kernels -> executor).
#include <cmath>
#include <cstring>
#include <future>
#include <mutex>

#include "api/auto_eval.h"
#include "arrayc/jit.h"
#include "arrayc/ops.h"
#include "backend/backend.h"
#include "engine/executor.h"
#include "engine/extent_reads.h"
#include "ir/build.h"
#include "support/interrupt.h"

namespace arrayc {
namespace detail {

struct ArrayImpl {
  std::mutex mu;
  NodeRef node;  // guarded by mu: evaluation replaces it by its Buffer
  // Guarded by mu: set while one thread evaluates this Array, so that others wait for its result
  // instead of computing it again (single flight); ready when that evaluation ends either way.
  std::shared_future<void> in_flight;
  // The node's, which evaluation keeps: readable without the lock, for as long as the Array.
  const Shape shape;
  const DType dtype;
  const Device device;
  explicit ArrayImpl(NodeRef n) : node(std::move(n)), shape(node->shape), dtype(node->dtype), device(node->device) {}
};

}  // namespace detail

using detail::NodeRef;

Array::Array() : Array(detail::make_constant(detail::Scalar::of(DType::Float32, 0), {}, cpu())) {}
Array::Array(NodeRef node) : impl_(std::make_shared<detail::ArrayImpl>(std::move(node))) {
  detail::auto_eval_if_large(*this, *impl_->node);  // bounded memory (issue 26): api/auto_eval.h
}

// A copy taken under the lock: eval() may replace the node (and free the old one) at any time.
NodeRef Array::node() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->node;
}
// Extents read through the API are counted (engine/extent_reads.h): jit resizes a function to a
// new length without tracing it again only if its traces read none. The rank is not an extent.
const Shape& Array::shape() const {
  detail::note_extent_read();
  return impl_->shape;
}
DType Array::dtype() const { return impl_->dtype; }
Device Array::device() const { return impl_->device; }
int64_t Array::ndim() const { return static_cast<int64_t>(impl_->shape.size()); }
int64_t Array::size() const {
  detail::note_extent_read();
  return shape_numel(impl_->shape);
}
bool Array::is_evaluated() const { return node()->op == detail::Op::Buffer; }

const Array& Array::eval() const {
  if (!is_evaluated()) arrayc::eval({*this});
  return *this;
}

std::string Array::graph_text() const { return detail::print_graph(detail::Graph{{node()}}); }

// Single flight: an Array that another thread is evaluating is waited for, not computed again.
// The Arrays this call claims are computed together in one Program; then it waits for the others,
// and computes any whose evaluation failed in its thread (an interrupt there is not ours).
void eval(const std::vector<Array>& arrays) {
  for (;;) {
    std::vector<Array> todo;
    std::vector<std::shared_future<void>> waits;
    std::promise<void> done;
    std::shared_future<void> ours = done.get_future().share();
    detail::Graph g;
    for (const Array& a : arrays) {
      std::lock_guard<std::mutex> lock(a.impl_->mu);
      if (a.impl_->node->op == detail::Op::Buffer) continue;
      if (a.impl_->in_flight.valid()) {
        waits.push_back(a.impl_->in_flight);
      } else {
        a.impl_->in_flight = ours;
        todo.push_back(a);
        g.outputs.push_back(a.impl_->node);
      }
    }
    if (!todo.empty()) {
      // Whatever happens, the claimed Arrays are released and their waiters woken.
      auto release = [&](const std::vector<NodeRef>* out) {
        for (size_t i = 0; i < todo.size(); ++i) {
          std::lock_guard<std::mutex> lock(todo[i].impl_->mu);
          if (out) todo[i].impl_->node = (*out)[i];
          todo[i].impl_->in_flight = {};
        }
        done.set_value();
      };
      try {
        detail::clear_interrupt();  // arrayc::interrupt(): a new evaluation drops an old request
        std::unique_ptr<detail::Program> p = detail::compile(g, detail::user_compile_options());
        std::vector<NodeRef> out = detail::run(*p);
        release(&out);
      } catch (...) {
        release(nullptr);
        throw;
      }
    }
    if (waits.empty()) return;
    for (const auto& w : waits) w.wait();
    bool all = true;
    for (const Array& a : arrays) all = all && a.is_evaluated();
    if (all) return;  // else another thread's evaluation failed: claim what is left
  }
}

namespace {

// A float read as an integer follows the cast op's rule (detail::float_to_int: saturating,
// NaN -> 0), where a plain C++ conversion of NaN, inf or an out-of-range value is undefined.
// Integers convert to another integer T as the cast op does (wrapping), to a float T with one
// rounding (16-bit floats through float32, as the cast op).
template <typename T> T from_float(double x) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) return static_cast<T>(detail::float_to_int(dtype_of<T>(), x));
  else return static_cast<T>(x);
}

template <typename T> T from_int(DType t, int64_t v) {
  if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>)
    return T::from_bits(dtype_of<T>() == DType::Float16 ? float16_bits(detail::int_to_float(DType::Float16, t, v))
                                                        : bfloat16_bits(detail::int_to_float(DType::BFloat16, t, v)));
  else if constexpr (std::is_floating_point_v<T>)
    return static_cast<T>(detail::int_to_float(dtype_of<T>(), t, v));
  else
    return static_cast<T>(v);  // wraps to T's width (uint64's bit pattern is its value)
}

template <typename T> T read_element(const char* p, DType t) {
  switch (t) {
    case DType::Bool: return static_cast<T>(*reinterpret_cast<const uint8_t*>(p) != 0);
    case DType::Float16: {
      uint16_t b;
      std::memcpy(&b, p, 2);
      if constexpr (std::is_same_v<T, float16>) return float16::from_bits(b);
      else return from_float<T>(float16_value(b));
    }
    case DType::BFloat16: {
      uint16_t b;
      std::memcpy(&b, p, 2);
      if constexpr (std::is_same_v<T, bfloat16>) return bfloat16::from_bits(b);
      else return from_float<T>(bfloat16_value(b));
    }
    case DType::Float32: return from_float<T>(*reinterpret_cast<const float*>(p));
    case DType::Float64: return from_float<T>(*reinterpret_cast<const double*>(p));
    default: {  // integers: sign- or zero-extended to 64 bits
      uint64_t v = 0;
      std::memcpy(&v, p, dtype_size(t));
      return from_int<T>(t, detail::wrap_int(t, v));
    }
  }
}

}  // namespace

template <typename T> std::vector<T> Array::to_vector() const {
  if (device() != cpu()) return to(cpu()).to_vector<T>();
  eval();
  const NodeRef keep = node();  // the storage stays alive while it is read
  const detail::Node& n = *keep;
  std::vector<T> out(static_cast<size_t>(n.numel()));
  if (out.empty()) return out;
  const char* base = static_cast<const char*>(n.storage->data);
  size_t es = dtype_size(n.dtype);
  std::vector<int64_t> strides = n.buffer_strides();
  std::vector<int64_t> idx(n.shape.size(), 0);
  int64_t off = n.buffer_offset();
  for (size_t k = 0; k < out.size(); ++k) {
    out[k] = read_element<T>(base + off * static_cast<int64_t>(es), n.dtype);
    for (size_t d = idx.size(); d-- > 0;) {  // odometer increment
      off += strides[d];
      if (++idx[d] < n.shape[d]) break;
      off -= strides[d] * n.shape[d];
      idx[d] = 0;
    }
  }
  return out;
}

template <typename T> T Array::item() const {
  if (size() != 1)
    throw Error("item: array of shape " + shape_str(shape()) + " has " + std::to_string(size()) +
                " elements, not 1");
  return to_vector<T>()[0];
}

Array Array::to(Device d) const {
  detail::check_device("to", d);
  if (d == device()) return *this;
  d = detail::checked(d);
  eval();
  NodeRef n = node();
  if (n->numel() > 1 && !detail::is_contiguous_view(*n)) {
    Array packed(detail::make_copy(n));  // contiguous on the source device first
    n = packed.eval().node();
  }
  size_t bytes = static_cast<size_t>(n->numel()) * dtype_size(n->dtype);
  detail::StorageRef dst = detail::allocate(d, bytes);
  const char* src = static_cast<const char*>(n->storage->data) + n->buffer_offset() * dtype_size(n->dtype);
  detail::copy_bytes(d, dst->data, n->device, src, bytes);
  return Array(detail::make_buffer(dst, n->dtype, n->shape, 0, detail::contiguous_strides(n->shape)));
}

#define ARRAYC_INSTANTIATE(T)                         \
  template std::vector<T> Array::to_vector<T>() const; \
  template T Array::item<T>() const;
#define ARRAYC_FOR_EACH_ELEMENT_TYPE(X) \
  X(bool) X(int8_t) X(uint8_t) X(int16_t) X(uint16_t) X(int32_t) X(uint32_t) X(int64_t) X(uint64_t) \
  X(float16) X(bfloat16) X(float) X(double)
ARRAYC_FOR_EACH_ELEMENT_TYPE(ARRAYC_INSTANTIATE)
#undef ARRAYC_INSTANTIATE

// ---- Creation -------------------------------------------------------------------------------

template <typename T> Array array(const std::vector<T>& data, const Shape& shape, Device device) {
  detail::check_device("array", device);
  for (int64_t d : shape)
    if (d < 0) throw Error("array: negative extent in shape " + shape_str(shape));
  if (static_cast<int64_t>(data.size()) != shape_numel(shape))
    throw Error("array: " + std::to_string(data.size()) + " values given for shape " + shape_str(shape) +
                " (" + std::to_string(shape_numel(shape)) + " elements)");
  constexpr DType t = dtype_of<T>();
  if (device != cpu()) return array(data, shape, cpu()).to(device);
  detail::StorageRef st = detail::allocate(device, data.size() * dtype_size(t));
  if constexpr (std::is_same_v<T, bool>) {
    auto* p = static_cast<uint8_t*>(st->data);
    for (size_t i = 0; i < data.size(); ++i) p[i] = data[i];
  } else if (!data.empty()) {
    std::memcpy(st->data, data.data(), data.size() * sizeof(T));
  }
  return Array(detail::make_buffer(st, t, shape, 0, detail::contiguous_strides(shape)));
}
#define ARRAYC_INSTANTIATE(T) template Array array(const std::vector<T>&, const Shape&, Device);
ARRAYC_FOR_EACH_ELEMENT_TYPE(ARRAYC_INSTANTIATE)
#undef ARRAYC_INSTANTIATE
#undef ARRAYC_FOR_EACH_ELEMENT_TYPE

Array full(const Shape& shape, double value, DType dtype, Device device) {
  detail::check_dtype("full", dtype);
  return Array(detail::make_constant(detail::Scalar::of(dtype, value), shape, device));
}
namespace {
// An integer scalar of dtype t, exact; arrayc::Error when an integer dtype cannot hold it.
detail::Scalar integer_scalar(const char* op, int64_t value, DType t) {
  detail::check_dtype(op, t);
  bool below = value < int_min(t), above = value > 0 && static_cast<uint64_t>(value) > int_max(t);
  if (is_int(t) && (below || above))
    throw Error(std::string(op) + ": the integer " + std::to_string(value) + " is out of bounds for " +
                dtype_name(t) + " (numpy 2 raises too; use a wider dtype)");
  return detail::Scalar::of_int(t, value);
}

// An unsigned integer past int64 (exact integers, issue 26): uint64 holds it, a float rounds it once,
// every other dtype raises.
detail::Scalar unsigned_scalar(const char* op, uint64_t value, DType t) {
  detail::check_dtype(op, t);
  if (value <= static_cast<uint64_t>(INT64_MAX)) return integer_scalar(op, static_cast<int64_t>(value), t);
  detail::Scalar s;
  s.dtype = t;
  if (is_float(t)) s.f = detail::int_to_float(t, DType::UInt64, static_cast<int64_t>(value));
  else if (t == DType::UInt64) s.i = static_cast<int64_t>(value);
  else if (t == DType::Bool) s.i = 1;
  else
    throw Error(std::string(op) + ": the integer " + std::to_string(value) + " is out of bounds for " +
                dtype_name(t) + " (numpy 2 raises too; use a wider dtype)");
  return s;
}
}  // namespace

namespace detail {
Array full_integer(const Shape& shape, int64_t value, DType dtype, Device device) {
  return Array(make_constant(integer_scalar("full", value, dtype), shape, device));
}
Array full_unsigned(const Shape& shape, uint64_t value, DType dtype, Device device) {
  return Array(make_constant(unsigned_scalar("full", value, dtype), shape, device));
}
}  // namespace detail

Array zeros(const Shape& shape, DType dtype, Device device) { return full(shape, 0, dtype, device); }
Array ones(const Shape& shape, DType dtype, Device device) { return full(shape, 1, dtype, device); }

Array arange(int64_t stop, DType dtype, Device device) {
  return Array(detail::make_iota({std::max<int64_t>(stop, 0)}, dtype, device));
}

Array arange(double start, double stop, double step, DType dtype, Device device) {
  if (step == 0 || !std::isfinite(step) || !std::isfinite(start) || !std::isfinite(stop))
    throw Error("arange: start, stop and step must be finite and step non-zero (got " +
                std::to_string(start) + ", " + std::to_string(stop) + ", " + std::to_string(step) + ")");
  double n = std::ceil((stop - start) / step);
  if (n >= 0x1p63)  // not representable as an extent (the cast to int64 is undefined)
    throw Error("arange: too many elements: (stop - start) / step = " + std::to_string(n) + " (start " +
                std::to_string(start) + ", stop " + std::to_string(stop) + ", step " + std::to_string(step) + ")");
  Array i(detail::make_iota({static_cast<int64_t>(std::max(n, 0.0))}, dtype, device));
  if (step != 1) i = i * full({}, step, dtype, device);
  if (start != 0) i = i + full({}, start, dtype, device);
  return i;
}

Array uniform(const Shape& shape, uint64_t seed, double low, double high, DType dtype, Device device) {
  Array u(detail::make_random(detail::Op::RandUniform, shape, dtype, seed, device));
  if (low == 0 && high == 1) return u;
  return u * full({}, high - low, dtype, device) + full({}, low, dtype, device);
}

Array normal(const Shape& shape, uint64_t seed, double mean, double stddev, DType dtype, Device device) {
  Array z(detail::make_random(detail::Op::RandNormal, shape, dtype, seed, device));
  if (mean == 0 && stddev == 1) return z;
  return z * full({}, stddev, dtype, device) + full({}, mean, dtype, device);
}

Array scalar_like(int64_t value, const Array& like, const char* op) {
  DType t = like.dtype();
  if (t == DType::Bool) t = DType::Int64;
  return Array(detail::make_constant(integer_scalar(op, value, t), {}, like.device()));
}

Array scalar_like_unsigned(uint64_t value, const Array& like, const char* op) {
  if (value <= static_cast<uint64_t>(INT64_MAX)) return scalar_like(static_cast<int64_t>(value), like, op);
  DType t = like.dtype() == DType::Bool ? DType::Int64 : like.dtype();
  return Array(detail::make_constant(unsigned_scalar(op, value, t), {}, like.device()));
}

Array scalar_like(double value, bool integral, const Array& like, const char* op) {
  DType t = like.dtype();
  if (integral && !is_float(t) && value >= -0x1p63 && value < 0x1p63)
    return scalar_like(static_cast<int64_t>(value), like, op);
  if (!is_float(t)) {
    if (!integral) t = DType::Float64;
    else if (t == DType::Bool) t = DType::Int64;
  }
  return Array(detail::make_constant(detail::Scalar::of(t, value), {}, like.device()));
}

// ---- Elementwise, views, reductions, products -------------------------------------------------

namespace {
Array ew(detail::Op op, std::initializer_list<const Array*> in) {
  std::vector<NodeRef> nodes;
  nodes.reserve(in.size());
  for (const Array* a : in) nodes.push_back(a->node());
  return Array(detail::make_elementwise(op, std::move(nodes)));
}
}  // namespace

using detail::Op;
Array add(const Array& a, const Array& b) { return ew(Op::Add, {&a, &b}); }
Array subtract(const Array& a, const Array& b) { return ew(Op::Sub, {&a, &b}); }
Array multiply(const Array& a, const Array& b) { return ew(Op::Mul, {&a, &b}); }
Array divide(const Array& a, const Array& b) { return ew(Op::Div, {&a, &b}); }
Array pow(const Array& a, const Array& b) { return ew(Op::Pow, {&a, &b}); }
Array maximum(const Array& a, const Array& b) { return ew(Op::Maximum, {&a, &b}); }
Array minimum(const Array& a, const Array& b) { return ew(Op::Minimum, {&a, &b}); }
Array equal(const Array& a, const Array& b) { return ew(Op::Eq, {&a, &b}); }
Array not_equal(const Array& a, const Array& b) { return ew(Op::Ne, {&a, &b}); }
Array less(const Array& a, const Array& b) { return ew(Op::Lt, {&a, &b}); }
Array less_equal(const Array& a, const Array& b) { return ew(Op::Le, {&a, &b}); }
Array greater(const Array& a, const Array& b) { return ew(Op::Gt, {&a, &b}); }
Array greater_equal(const Array& a, const Array& b) { return ew(Op::Ge, {&a, &b}); }
Array logical_and(const Array& a, const Array& b) { return ew(Op::And, {&a, &b}); }
Array logical_or(const Array& a, const Array& b) { return ew(Op::Or, {&a, &b}); }
Array logical_not(const Array& a) { return ew(Op::Not, {&a}); }
Array negative(const Array& a) { return ew(Op::Neg, {&a}); }
Array abs(const Array& a) { return ew(Op::Abs, {&a}); }
Array exp(const Array& a) { return ew(Op::Exp, {&a}); }
Array log(const Array& a) { return ew(Op::Log, {&a}); }
Array sin(const Array& a) { return ew(Op::Sin, {&a}); }
Array cos(const Array& a) { return ew(Op::Cos, {&a}); }
Array tanh(const Array& a) { return ew(Op::Tanh, {&a}); }
Array sqrt(const Array& a) { return ew(Op::Sqrt, {&a}); }
Array where(const Array& c, const Array& a, const Array& b) { return ew(Op::Where, {&c, &a, &b}); }
Array cast(const Array& a, DType dtype) { return Array(detail::make_cast(a.node(), dtype)); }

Array reshape(const Array& a, const Shape& shape) { return Array(detail::make_reshape(a.node(), shape)); }
Array transpose(const Array& a) {
  std::vector<int64_t> perm;
  for (int64_t d = a.ndim(); d-- > 0;) perm.push_back(d);
  return transpose(a, perm);
}
Array transpose(const Array& a, const std::vector<int64_t>& perm) {
  return Array(detail::make_transpose(a.node(), perm));
}
Array broadcast_to(const Array& a, const Shape& shape) { return Array(detail::make_broadcast_to(a.node(), shape)); }
Array expand_dims(const Array& a, int64_t axis) {
  int64_t r = a.ndim() + 1;
  if (axis < -r || axis >= r)
    throw Error("expand_dims: axis " + std::to_string(axis) + " is out of range for an array of rank " +
                std::to_string(a.ndim()) + " (shape " + shape_str(a.shape()) + ")");
  if (axis < 0) axis += r;
  Shape s = a.shape();
  s.insert(s.begin() + axis, 1);
  return reshape(a, s);
}

#define ARRAYC_REDUCTION(fn, op)                                                          \
  Array fn(const Array& a) { return Array(detail::make_reduce_all(Op::op, a.node())); }    \
  Array fn(const Array& a, const std::vector<int64_t>& axes, bool keepdims) {             \
    return Array(detail::make_reduce(Op::op, a.node(), axes, keepdims));                  \
  }
ARRAYC_REDUCTION(sum, Sum)
ARRAYC_REDUCTION(prod, Prod)
ARRAYC_REDUCTION(max, Max)
ARRAYC_REDUCTION(min, Min)
ARRAYC_REDUCTION(mean, Mean)
#undef ARRAYC_REDUCTION

Array dot(const Array& a, const Array& b) { return Array(detail::make_dot(a.node(), b.node())); }
Array matmul(const Array& a, const Array& b) { return Array(detail::make_matmul(a.node(), b.node())); }

}  // namespace arrayc
