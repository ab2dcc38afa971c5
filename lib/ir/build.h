// Node constructors: the only way nodes are made. Each checks its arguments (raising
// arrayc::Error that names the op and the shapes, dtypes or devices), infers the result's shape
// and dtype with numpy's rules, and inserts the explicit broadcasts and casts that make every
// elementwise node's inputs share its shape and dtype.
#pragma once
#include "ir/node.h"

namespace arrayc::detail {

// Values of the public enums that come in through the API (a cast from an integer may hold
// anything): arrayc::Error "<op>: dtype 17 is not one of bool, int32, int64, float32, float64",
// "<op>: device kind 7 is not CPU or GPU" (or a GPU index below 0), before they reach the
// emitter.
void check_dtype(const char* op, DType t);
void check_device(const char* op, Device d);

NodeRef make_param(int64_t index, DType dtype, const Shape& shape, Device device);
NodeRef make_buffer(StorageRef storage, DType dtype, const Shape& shape, int64_t offset,
                    const std::vector<int64_t>& strides);
NodeRef make_constant(Scalar value, const Shape& shape, Device device);
NodeRef make_iota(const Shape& shape, DType dtype, Device device);
NodeRef make_random(Op op, const Shape& shape, DType dtype, uint64_t seed, Device device);

// Unary, binary and ternary elementwise ops, with numpy's promotion and broadcasting.
NodeRef make_elementwise(Op op, std::vector<NodeRef> inputs);
NodeRef make_cast(const NodeRef& x, DType dtype);

NodeRef make_reshape(const NodeRef& x, Shape shape);  // one extent may be -1
NodeRef make_transpose(const NodeRef& x, std::vector<int64_t> perm);
NodeRef make_broadcast_to(const NodeRef& x, const Shape& shape);  // numpy's broadcast_to
NodeRef make_reduce(Op op, const NodeRef& x, std::vector<int64_t> axes, bool keepdims);
NodeRef make_reduce_all(Op op, const NodeRef& x);
NodeRef make_dot(const NodeRef& a, const NodeRef& b);     // numpy.dot
NodeRef make_matmul(const NodeRef& a, const NodeRef& b);  // numpy.matmul
NodeRef make_copy(const NodeRef& x);
// Scans and sorts along one axis (negative counts from the end): Cumsum, Cumprod (bool and int32
// accumulate in int64, as numpy), Sort, Argsort (int64 indices). Rank 0 raises.
NodeRef make_axis_op(Op op, const NodeRef& x, int64_t axis);

// Rebuilds `n` with new inputs of the same shapes through the checked constructors (used by
// the passes). Shapes in attributes (reshape, broadcast) are absolute: this is not a way to
// instantiate a graph at other shapes.
NodeRef rebuild(const NodeRef& n, const std::vector<NodeRef>& inputs);

// numpy's broadcast of two shapes; raises for `op` when they are incompatible.
Shape broadcast_shapes(const char* op, const Shape& a, const Shape& b);

}  // namespace arrayc::detail
