#include "ir/build.h"

#include <algorithm>
#include <numeric>
#include <sstream>

#include "arrayc/error.h"
#include "ir/math_build.h"
#include "ir/build_index.h"

namespace arrayc::detail {
namespace {

[[noreturn]] void fail(const std::string& msg) { throw Error(msg); }

std::string describe(const NodeRef& n) {
  return shape_str(n->shape) + " (" + dtype_name(n->dtype) + ")";
}

void check_same_device(const char* op, const std::vector<NodeRef>& in) {
  for (const NodeRef& n : in)
    if (n->device != in[0]->device)
      fail(std::string(op) + ": arrays are on different devices (" + in[0]->device.str() +
           " and " + n->device.str() + "); copy one with .to(device) first");
}

void check_extents(const char* op, const Shape& shape) {
  for (int64_t d : shape)
    if (d < 0) fail(std::string(op) + ": negative extent in shape " + shape_str(shape));
}

// Every array's element count and byte size fit in int64 (and so in size_t): a 2^62-element
// float32 array took "0 bytes" (2^64 wrapped) and its kernel wrote past the end; ones({2^32,
// 2^32}) was an "empty" array (2^64 elements wrapped to 0).
int64_t checked_numel(const char* op, const Shape& shape) {
  int64_t n = 1;
  bool overflow = false;
  for (int64_t d : shape) {
    if (d == 0) return 0;
    overflow |= __builtin_mul_overflow(n, d, &n);
  }
  if (overflow) fail(std::string(op) + ": shape " + shape_str(shape) + " has more than 2^63 - 1 elements");
  return n;
}
void check_size(const char* op, const Shape& shape, DType dtype) {
  int64_t n = checked_numel(op, shape), bytes = 0;
  if (__builtin_mul_overflow(n, static_cast<int64_t>(dtype_size(dtype)), &bytes))
    fail(std::string(op) + ": a " + dtype_name(dtype) + " array of shape " + shape_str(shape) + " (" +
         std::to_string(n) + " elements) would take more than 2^63 - 1 bytes");
}

Node leaf(Op op, DType dtype, const Shape& shape, Device device) {
  check_dtype(api_name(op), dtype);
  check_device(api_name(op), device);
  check_size(api_name(op), shape, dtype);
  Node n;
  n.op = op;
  n.dtype = dtype;
  n.shape = shape;
  n.device = device;
  return n;
}

Node derived(Op op, DType dtype, Shape shape, std::vector<NodeRef> inputs) {
  check_dtype(api_name(op), dtype);
  check_size(api_name(op), shape, dtype);
  Node n;
  n.op = op;
  n.dtype = dtype;
  n.device = inputs.at(0)->device;
  n.shape = std::move(shape);
  n.inputs = std::move(inputs);
  return n;
}

int64_t normalize_axis(const char* op, int64_t axis, const Shape& shape, int64_t rank) {
  if (axis < -rank || axis >= rank)
    fail(std::string(op) + ": axis " + std::to_string(axis) + " is out of range for an array of rank " +
         std::to_string(shape.size()) + " (shape " + shape_str(shape) + ")");
  return axis < 0 ? axis + rank : axis;
}

// The dtype an elementwise op computes in, given its (already promoted) operand dtype.
// numpy: the smallest float that holds every value of t exactly (bool and 8-bit integers ->
// float16, 16-bit -> float32, wider -> float64).
DType float_result(DType t) {
  if (is_float(t)) return t;
  if (dtype_size(t) == 1) return DType::Float16;
  return dtype_size(t) == 2 ? DType::Float32 : DType::Float64;
}

void reject(const char* op, DType t, bool cond) {
  if (cond) fail(std::string(op) + ": dtype " + dtype_name(t) + " is not accepted");
}

}  // namespace

void check_dtype(const char* op, DType t) {
  for (DType d : kAllDTypes)
    if (t == d) return;
  std::string names;
  for (DType d : kAllDTypes) names += std::string(names.empty() ? "" : ", ") + dtype_name(d);
  fail(std::string(op) + ": dtype " + std::to_string(static_cast<int>(t)) + " is not one of " + names);
}

void check_device(const char* op, Device d) {
  if (d.kind != Device::Kind::CPU && d.kind != Device::Kind::GPU)
    fail(std::string(op) + ": device kind " + std::to_string(static_cast<int>(d.kind)) + " is not CPU or GPU");
  if (d.index < 0) fail(std::string(op) + ": device index " + std::to_string(d.index) + " is negative");
}

NodeRef make_param(int64_t index, DType dtype, const Shape& shape, Device device) {
  Node n = leaf(Op::Param, dtype, shape, device);
  n.ints = {index};
  return intern(std::move(n));
}

NodeRef make_buffer(StorageRef storage, DType dtype, const Shape& shape, int64_t offset,
                    const std::vector<int64_t>& strides) {
  ARRAYC_INTERNAL_CHECK(strides.size() == shape.size(), "buffer strides do not match its rank");
  Node n = leaf(Op::Buffer, dtype, shape, storage->device);
  n.ints.push_back(offset);
  n.ints.insert(n.ints.end(), strides.begin(), strides.end());
  n.storage = std::move(storage);
  return intern(std::move(n));
}

NodeRef make_constant(Scalar value, const Shape& shape, Device device) {
  check_extents("full", shape);
  Node n = leaf(Op::Constant, value.dtype, shape, device);
  n.value = value;
  return intern(std::move(n));
}

NodeRef make_iota(const Shape& shape, DType dtype, Device device) {
  check_extents("arange", shape);
  return intern(leaf(Op::Iota, dtype, shape, device));
}

NodeRef make_random(Op op, const Shape& shape, DType dtype, uint64_t seed, Device device) {
  const char* name = api_name(op);
  check_extents(name, shape);
  check_dtype(name, dtype);
  if (!is_float(dtype))
    fail(std::string(name) + ": dtype " + dtype_name(dtype) +
         " is not accepted (float16, bfloat16, float32 or float64)");
  // 16-bit floats: the float32 numbers rounded (Philox's mapping is defined for float32 and float64).
  if (is_half(dtype)) return make_cast(make_random(op, shape, DType::Float32, seed, device), dtype);
  Node n = leaf(op, dtype, shape, device);
  n.ints = {static_cast<int64_t>(seed)};
  return intern(std::move(n));
}

Shape broadcast_shapes(const char* op, const Shape& a, const Shape& b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      fail(std::string(op) + ": shapes " + shape_str(a) + " and " + shape_str(b) +
           " cannot be broadcast together");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

NodeRef make_cast(const NodeRef& x, DType dtype) {
  if (x->dtype == dtype) return x;
  return intern(derived(Op::Cast, dtype, x->shape, {x}));
}

NodeRef make_elementwise(Op op, std::vector<NodeRef> in) {
  const char* name = api_name(op);
  ARRAYC_INTERNAL_CHECK(static_cast<int>(in.size()) == op_info(op).arity &&
                            op_kind(op) == OpKind::Elementwise && op != Op::Cast,
                        std::string("make_elementwise: bad op ") + name);
  check_same_device(name, in);
  // numpy raises for a negative integer exponent it can see (a constant), checked below on the
  // exponent as given.
  const NodeRef exponent = op == Op::Pow ? in[1] : nullptr;

  // Shapes: numpy broadcasting over all operands.
  Shape shape = in[0]->shape;
  for (size_t i = 1; i < in.size(); ++i) {
    if (in[i]->shape == shape) continue;
    try {
      shape = broadcast_shapes(name, shape, in[i]->shape);
    } catch (const Error&) {
      std::string shapes;
      for (size_t j = 0; j < in.size(); ++j) shapes += (j ? " and " : "") + describe(in[j]);
      fail(std::string(name) + ": shapes " + shapes + " cannot be broadcast together");
    }
  }
  checked_numel(name, shape);
  for (NodeRef& n : in) n = make_broadcast_to(n, shape);

  // Dtypes.
  auto common = [&](size_t from) {
    DType t = in[from]->dtype;
    for (size_t i = from + 1; i < in.size(); ++i) t = promote_types(t, in[i]->dtype);
    return t;
  };
  // numpy math ops (issue 28): their dtype rules are in ir/math_build.cpp.
  if (std::optional<DType> r = numpy_math_dtypes(op, in)) return intern(derived(op, *r, shape, std::move(in)));
  DType result;
  switch (op) {
    case Op::Neg:
      reject(name, in[0]->dtype, in[0]->dtype == DType::Bool);
      result = in[0]->dtype;
      break;
    case Op::Abs:
      result = in[0]->dtype;
      break;
    case Op::Not:
      in[0] = make_cast(in[0], DType::Bool);
      result = DType::Bool;
      break;
    case Op::Exp: case Op::Log: case Op::Sin: case Op::Cos: case Op::Tanh: case Op::Sqrt:
      result = float_result(in[0]->dtype);
      in[0] = make_cast(in[0], result);
      break;
    case Op::And: case Op::Or:
      for (NodeRef& n : in) n = make_cast(n, DType::Bool);
      result = DType::Bool;
      break;
    case Op::Eq: case Op::Ne: case Op::Lt: case Op::Le: case Op::Gt: case Op::Ge: {
      DType t = common(0);
      for (NodeRef& n : in) n = make_cast(n, t);
      result = DType::Bool;
      break;
    }
    case Op::Div: {  // numpy: integers and bools divide in float64
      result = is_float(common(0)) ? common(0) : DType::Float64;
      for (NodeRef& n : in) n = make_cast(n, result);
      break;
    }
    case Op::Where: {
      in[0] = make_cast(in[0], DType::Bool);
      result = common(1);
      for (size_t i = 1; i < 3; ++i) in[i] = make_cast(in[i], result);
      break;
    }
    default: {  // Add, Sub, Mul, Pow, Maximum, Minimum
      result = common(0);
      if (result == DType::Bool) {
        reject(name, result, op == Op::Sub || op == Op::Pow);
        // numpy: bool + bool is logical or, bool * bool logical and.
        if (op == Op::Add || op == Op::Maximum) op = Op::Or;
        if (op == Op::Mul || op == Op::Minimum) op = Op::And;
      }
      // An exponent array's negative elements give 1/x^|e| truncated: 1 for x = 1, +-1 for x = -1,
      // else 0.
      const NodeRef& e = exponent;
      if (op == Op::Pow && is_int(result) && e->op == Op::Constant && is_signed_int(e->dtype) && e->value.i < 0)
        fail(std::string(name) + ": Integers to negative integer powers are not allowed (exponent " +
             std::to_string(e->value.i) + ")");
      for (NodeRef& n : in) n = make_cast(n, result);
      break;
    }
  }
  return intern(derived(op, result, shape, std::move(in)));
}

NodeRef make_reshape(const NodeRef& x, Shape shape) {
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer >= 0) fail("reshape: more than one -1 in shape " + shape_str(shape));
      infer = static_cast<int64_t>(i);
    } else if (shape[i] < 0) {
      fail("reshape: negative extent in shape " + shape_str(shape));
    } else if (__builtin_mul_overflow(known, shape[i], &known)) {
      fail("reshape: shape " + shape_str(shape) + " has more than 2^63 - 1 elements");
    }
  }
  if (infer >= 0) {
    if (known == 0 || x->numel() % known != 0)
      fail("reshape: cannot reshape an array of shape " + shape_str(x->shape) + " into " +
           shape_str(shape));
    shape[infer] = x->numel() / known;
  }
  check_size("reshape", shape, x->dtype);
  if (shape_numel(shape) != x->numel())
    fail("reshape: cannot reshape an array of shape " + shape_str(x->shape) + " (" +
         std::to_string(x->numel()) + " elements) into " + shape_str(shape));
  if (shape == x->shape) return x;
  return intern(derived(Op::Reshape, x->dtype, std::move(shape), {x}));
}

NodeRef make_transpose(const NodeRef& x, std::vector<int64_t> perm) {
  int64_t rank = x->rank();
  if (static_cast<int64_t>(perm.size()) != rank)
    fail("transpose: permutation of length " + std::to_string(perm.size()) +
         " given for an array of rank " + std::to_string(rank) + " (shape " + shape_str(x->shape) + ")");
  std::vector<bool> seen(rank, false);
  for (int64_t& p : perm) {
    p = normalize_axis("transpose", p, x->shape, rank);
    if (seen[p])
      fail("transpose: axis " + std::to_string(p) + " repeated in the permutation " + shape_str(perm) +
           " for shape " + shape_str(x->shape));
    seen[p] = true;
  }
  bool identity = true;
  for (int64_t i = 0; i < rank; ++i) identity &= perm[i] == i;
  if (identity) return x;
  Shape shape(rank);
  for (int64_t i = 0; i < rank; ++i) shape[i] = x->shape[perm[i]];
  Node n = derived(Op::Transpose, x->dtype, shape, {x});
  n.ints = perm;
  return intern(std::move(n));
}

NodeRef make_broadcast_to(const NodeRef& x, const Shape& shape) {
  if (x->shape == shape) return x;
  check_extents("broadcast_to", shape);
  auto bad = [&] {
    fail("broadcast_to: cannot broadcast an array of shape " + shape_str(x->shape) + " to " +
         shape_str(shape));
  };
  if (x->shape.size() > shape.size()) bad();
  size_t lead = shape.size() - x->shape.size();
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t d = i < lead ? 1 : x->shape[i - lead];  // x's extents padded with leading 1s
    if (d != shape[i] && d != 1) bad();
  }
  NodeRef y = x;
  if (lead > 0) {
    Shape padded(lead, 1);
    padded.insert(padded.end(), x->shape.begin(), x->shape.end());
    y = make_reshape(x, std::move(padded));
    if (y->shape == shape) return y;
  }
  return intern(derived(Op::Broadcast, x->dtype, shape, {y}));
}

NodeRef make_reduce(Op op, const NodeRef& x_in, std::vector<int64_t> axes, bool keepdims) {
  const char* name = api_name(op);
  int64_t rank = x_in->rank();
  std::vector<bool> reduced(rank, false);
  for (int64_t& a : axes) {
    a = normalize_axis(name, a, x_in->shape, rank);
    if (reduced[a])
      fail(std::string(name) + ": axis " + std::to_string(a) + " given twice (shape " + shape_str(x_in->shape) + ")");
    reduced[a] = true;
  }
  std::sort(axes.begin(), axes.end());
  NodeRef x = x_in;
  switch (op) {
    case Op::Sum: case Op::Prod:  // numpy accumulates bool and narrower integers in 64 bits
      if (x->dtype == DType::Bool || (is_int(x->dtype) && dtype_size(x->dtype) < 8))
        x = make_cast(x, is_unsigned(x->dtype) ? DType::UInt64 : DType::Int64);
      // numpy's float16 sums accumulate in float32 and round once; so do bfloat16's here.
      if (is_half(x->dtype)) return make_cast(make_reduce(op, make_cast(x, DType::Float32), axes, keepdims), x->dtype);
      break;
    case Op::Mean:
      if (is_half(x->dtype)) return make_cast(make_reduce(op, make_cast(x, DType::Float32), axes, keepdims), x->dtype);
      if (!is_float(x->dtype)) x = make_cast(x, DType::Float64);
      break;
    default:  // Max, Min: no identity, so an empty reduction is an error (as numpy)
      for (int64_t a : axes)
        if (x->shape[a] == 0)
          fail(std::string(name) + ": zero-size axis " + std::to_string(a) + " of shape " +
               shape_str(x->shape) + " has no identity to reduce to");
      break;
  }
  Shape kept, keep_shape;
  for (int64_t d = 0; d < rank; ++d) {
    if (!reduced[d]) kept.push_back(x->shape[d]);
    keep_shape.push_back(reduced[d] ? 1 : x->shape[d]);
  }
  NodeRef r = x;
  if (!axes.empty()) {
    Node n = derived(op, x->dtype, kept, {x});
    n.ints = axes;
    r = intern(std::move(n));
  }
  return keepdims ? make_reshape(r, keep_shape) : r;
}

NodeRef make_reduce_all(Op op, const NodeRef& x) {
  std::vector<int64_t> axes(x->rank());
  std::iota(axes.begin(), axes.end(), 0);
  return make_reduce(op, x, axes, false);
}

namespace {

// Checks and promotes the operands of a matrix product; returns the common dtype.
DType matmul_dtype(const char* op, NodeRef& a, NodeRef& b) {
  check_same_device(op, {a, b});
  DType t = promote_types(a->dtype, b->dtype);
  if (t == DType::Bool) fail(std::string(op) + ": dtype bool is not accepted");
  a = make_cast(a, t);
  b = make_cast(b, t);
  return t;
}

[[noreturn]] void inner_mismatch(const char* op, const NodeRef& a, const NodeRef& b) {
  fail(std::string(op) + ": inner dimensions differ: " + describe(a) + " and " + describe(b));
}

// [m, k] x [k, n] or [batch, m, k] x [batch, k, n]. 16-bit floats multiply in float32 (float32
// products, float32 accumulation, one rounding at the end, as numpy's float16 matmul).
NodeRef make_dot_node(const NodeRef& a, const NodeRef& b) {
  Shape s = a->shape;
  s.back() = b->shape.back();
  if (is_half(a->dtype)) {
    // x @ x.T keeps its shape through the widening (the transpose of the one widened x), so the
    // float32 product is still seen as a Gram product (syrk).
    auto is_t = [](const NodeRef& t, const NodeRef& x) {
      return t->op == Op::Transpose && t->rank() == 2 && t->inputs[0] == x && t->ints == std::vector<int64_t>{1, 0};
    };
    NodeRef fa, fb;
    if (is_t(b, a)) {
      fa = make_cast(a, DType::Float32);
      fb = make_transpose(fa, {1, 0});
    } else if (is_t(a, b)) {
      fb = make_cast(b, DType::Float32);
      fa = make_transpose(fb, {1, 0});
    } else {
      fa = make_cast(a, DType::Float32);
      fb = make_cast(b, DType::Float32);
    }
    return make_cast(make_dot_node(fa, fb), a->dtype);
  }
  return intern(derived(Op::Dot, a->dtype, s, {a, b}));
}

}  // namespace

NodeRef make_dot(const NodeRef& a_in, const NodeRef& b_in) {
  NodeRef a = a_in, b = b_in;
  matmul_dtype("dot", a, b);
  if (a->rank() == 0 || b->rank() == 0) return make_elementwise(Op::Mul, {a, b});
  if (a->rank() > 2 || b->rank() > 2)
    fail("dot: operands of rank " + std::to_string(a->rank()) + " and " + std::to_string(b->rank()) +
         " (shapes " + shape_str(a->shape) + " and " + shape_str(b->shape) +
         ") are not supported; dot takes 1-D and 2-D arrays, matmul takes batches");
  int64_t k_a = a->shape.back(), k_b = b->shape[0];
  if (k_a != k_b) inner_mismatch("dot", a_in, b_in);
  NodeRef a2 = a->rank() == 1 ? make_reshape(a, {1, k_a}) : a;
  NodeRef b2 = b->rank() == 1 ? make_reshape(b, {k_b, 1}) : b;
  NodeRef c = make_dot_node(a2, b2);
  Shape out;
  if (a->rank() == 2) out.push_back(a->shape[0]);
  if (b->rank() == 2) out.push_back(b->shape[1]);
  return make_reshape(c, out);
}

NodeRef make_matmul(const NodeRef& a_in, const NodeRef& b_in) {
  NodeRef a = a_in, b = b_in;
  matmul_dtype("matmul", a, b);
  if (a->rank() == 0 || b->rank() == 0)
    fail("matmul: operands must have at least one dimension, got shapes " + shape_str(a->shape) +
         " and " + shape_str(b->shape));
  bool a_vec = a->rank() == 1, b_vec = b->rank() == 1;
  if (a_vec) a = make_reshape(a, {1, a->shape[0]});
  if (b_vec) b = make_reshape(b, {b->shape[0], 1});
  int64_t m = a->shape[a->rank() - 2], k = a->shape.back(), n = b->shape.back();
  if (b->shape[b->rank() - 2] != k) inner_mismatch("matmul", a_in, b_in);
  Shape batch_a(a->shape.begin(), a->shape.end() - 2), batch_b(b->shape.begin(), b->shape.end() - 2);
  Shape batch;
  try {
    batch = broadcast_shapes("matmul", batch_a, batch_b);
  } catch (const Error&) {
    fail("matmul: batch dimensions of " + describe(a_in) + " and " + describe(b_in) +
         " cannot be broadcast together");
  }
  NodeRef c;
  if (batch.empty()) {
    c = make_dot_node(a, b);
  } else {
    int64_t nb = shape_numel(batch);
    Shape full_a = batch, full_b = batch;
    full_a.insert(full_a.end(), {m, k});
    full_b.insert(full_b.end(), {k, n});
    NodeRef a3 = make_reshape(make_broadcast_to(a, full_a), {nb, m, k});
    NodeRef b3 = make_reshape(make_broadcast_to(b, full_b), {nb, k, n});
    c = make_dot_node(a3, b3);
  }
  Shape out = batch;
  if (!a_vec) out.push_back(m);
  if (!b_vec) out.push_back(n);
  return make_reshape(c, out);
}

NodeRef make_copy(const NodeRef& x) { return intern(derived(Op::Copy, x->dtype, x->shape, {x})); }

// Scans and sorts (issue 28).
NodeRef make_axis_op(Op op, const NodeRef& x_in, int64_t axis) {
  const char* name = api_name(op);
  ARRAYC_INTERNAL_CHECK(op_kind(op) == OpKind::Axis, std::string("make_axis_op: bad op ") + name);
  axis = normalize_axis(name, axis, x_in->shape, x_in->rank());
  NodeRef x = x_in;
  DType in = x->dtype;
  // The dtypes the backends' routines know (backend/host/axis_ops.cpp): bool and int32 (sorts),
  // int64, uint64, float32, float64. The others go through one of these exactly:
  // - scans accumulate as numpy does: bool and signed integers in int64, unsigned ones in
  //   uint64; 16-bit floats in float32, each prefix rounded once to the input's dtype (as their
  //   sum, docs/dtypes.md);
  // - sorts of the other integers sort their int64 values, of 16-bit floats their float32 values
  //   (the same order, NaN last and -0.0 kept), and give back the input's dtype.
  bool scan = op == Op::Cumsum || op == Op::Cumprod;
  DType work = in;
  if (is_half(in)) work = DType::Float32;
  else if (is_unsigned(in) && in != DType::UInt64) work = scan ? DType::UInt64 : DType::Int64;
  else if (is_signed_int(in) || in == DType::Bool)
    work = !scan && (in == DType::Bool || in == DType::Int32 || in == DType::Int64) ? in : DType::Int64;
  if (work != in) x = make_cast(x, work);
  Node n = derived(op, op == Op::Argsort ? DType::Int64 : work, x->shape, {x});
  n.ints = {axis};
  NodeRef r = intern(std::move(n));
  // A scan's result is its accumulation dtype, except for 16-bit floats (numpy keeps float16).
  if (op == Op::Sort || (scan && is_half(in))) r = make_cast(r, in);
  return r;
}

NodeRef rebuild(const NodeRef& n, const std::vector<NodeRef>& in) {
  switch (op_kind(n->op)) {
    case OpKind::Leaf: return n;
    case OpKind::Elementwise:
      if (n->op == Op::Cast) return make_cast(in[0], n->dtype);
      // A pass may turn an integer exponent array into a constant (a view of one, folded): the
      // user's pow passed its checks, and numpy's error for a negative constant exponent must
      // not appear at evaluation. Its inputs already have its dtype and one shape (n's, or
      // scalars where fold_constants folds it).
      if (n->op == Op::Pow && in[0]->shape == in[1]->shape && in[0]->dtype == n->dtype && in[1]->dtype == n->dtype)
        return intern(derived(Op::Pow, n->dtype, in[0]->shape, in));
      return make_elementwise(n->op, in);
    case OpKind::View:
      switch (n->op) {
        case Op::Reshape: return make_reshape(in[0], n->shape);
        case Op::Transpose: return make_transpose(in[0], n->ints);
        case Op::Slice: {  // indexing
          std::vector<int64_t> starts, steps;
          for (size_t d = 0; d < n->shape.size(); ++d) {
            starts.push_back(n->ints[2 * d]);
            steps.push_back(n->ints[2 * d + 1]);
          }
          return make_slice(in[0], starts, steps, n->shape);
        }
        default: return make_broadcast_to(in[0], n->shape);
      }
    case OpKind::Reduce: return make_reduce(n->op, in[0], n->ints, false);
    case OpKind::Contraction: {
      ARRAYC_INTERNAL_CHECK(in[0]->rank() == n->rank() && in[1]->rank() == n->rank() &&
                                in[0]->shape.back() == in[1]->shape[in[1]->rank() - 2],
                            "rebuilding a dot with operands of other shapes");
      return make_dot_node(in[0], in[1]);
    }
    case OpKind::Copy: return make_copy(in[0]);
    case OpKind::Gather: return make_gather(api_name(n->op), in[0], in[1], gather_axis(*n), gather_dim_map(*n));
    case OpKind::Axis:
      if (is_scatter(n->op)) return make_scatter(n->op, in[0], in[1], in[2]);  // sparse scatter
      return make_axis_op(n->op, in[0], n->ints[0]);
  }
  return n;
}

}  // namespace arrayc::detail
