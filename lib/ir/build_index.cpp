#include "ir/build_index.h"

#include <algorithm>

#include "arrayc/error.h"
#include "ir/build.h"

namespace arrayc::detail {

NodeRef make_slice(const NodeRef& x_in, const std::vector<int64_t>& starts_in, const std::vector<int64_t>& steps_in,
                   const Shape& shape) {
  ARRAYC_INTERNAL_CHECK(starts_in.size() == x_in->shape.size() && steps_in.size() == x_in->shape.size() &&
                            shape.size() == x_in->shape.size(),
                        "make_slice: rank mismatch");
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t n = x_in->shape[d];
    if (shape[d] == 0) continue;
    int64_t last = starts_in[d] + (shape[d] - 1) * steps_in[d];
    ARRAYC_INTERNAL_CHECK(shape[d] > 0 && starts_in[d] >= 0 && starts_in[d] < n && last >= 0 && last < n,
                          "make_slice: a slice outside its input");
  }
  NodeRef x = x_in;
  std::vector<int64_t> starts = starts_in, steps = steps_in;
  if (x->op == Op::Slice) {  // compose: x = y[s0 + i * t0], so x[s + j * t] = y[s0 + s * t0 + j * t * t0]
    for (size_t d = 0; d < shape.size(); ++d) {
      starts[d] = x->ints[2 * d] + starts[d] * x->ints[2 * d + 1];
      steps[d] *= x->ints[2 * d + 1];
    }
    x = x->inputs[0];
  }
  bool identity = shape == x->shape;
  for (size_t d = 0; d < shape.size() && identity; ++d)
    identity = shape[d] <= 1 ? starts[d] == 0 || shape[d] == 0 : starts[d] == 0 && steps[d] == 1;
  if (identity) return x;
  Node n;
  n.op = Op::Slice;
  n.dtype = x->dtype;
  n.device = x->device;
  n.shape = shape;
  n.inputs = {x};
  for (size_t d = 0; d < shape.size(); ++d) {
    // Extent 0 or 1: the step does not matter; pinning it keeps equal views one node.
    bool degenerate = shape[d] <= 1;
    n.ints.push_back(shape[d] == 0 ? 0 : starts[d]);
    n.ints.push_back(degenerate ? 1 : steps[d]);
  }
  return intern(std::move(n));
}

NodeRef make_gather(const char* op, const NodeRef& src, const NodeRef& idx, int64_t axis,
                    const std::vector<int64_t>& dim_map) {
  if (src->device != idx->device)
    throw Error(std::string(op) + ": arrays are on different devices (" + src->device.str() + " and " +
                idx->device.str() + "); copy one with .to(device) first");
  if (!is_int(idx->dtype))
    throw Error(std::string(op) + ": indices must be integers, got " + dtype_name(idx->dtype) + " " +
                shape_str(idx->shape));
  ARRAYC_INTERNAL_CHECK(axis >= 0 && axis < src->rank() && static_cast<int64_t>(dim_map.size()) == src->rank(),
                        "make_gather: bad axis or map");
  for (int64_t d = 0; d < src->rank(); ++d)
    ARRAYC_INTERNAL_CHECK(d == axis ? dim_map[d] == -1
                                    : dim_map[d] >= 0 && dim_map[d] < idx->rank() && idx->shape[dim_map[d]] == src->shape[d],
                          "make_gather: a src dim maps to a result dim of another extent");
  if (src->shape[axis] == 0 && idx->numel() > 0)
    throw Error(std::string(op) + ": cannot take " + std::to_string(idx->numel()) + " elements from axis " +
                std::to_string(axis) + " of size 0 (shape " + shape_str(src->shape) + ")");
  Node n;
  n.op = Op::Gather;
  n.dtype = src->dtype;
  n.device = src->device;
  n.shape = idx->shape;
  n.inputs = {src, idx};
  n.ints.push_back(axis);
  n.ints.insert(n.ints.end(), dim_map.begin(), dim_map.end());
  return intern(std::move(n));
}

// Sparse scatter (issue 28, host scatter speed).
NodeRef make_scatter(Op op, const NodeRef& x, const NodeRef& idx, const NodeRef& v) {
  ARRAYC_INTERNAL_CHECK(is_scatter(op) && x->rank() >= 1 && idx->dtype == DType::Int64 && idx->rank() == 1 &&
                            v->dtype == x->dtype && v->rank() == x->rank() && v->shape[0] == idx->shape[0] &&
                            std::equal(x->shape.begin() + 1, x->shape.end(), v->shape.begin() + 1) &&
                            x->device == idx->device && x->device == v->device,
                        "make_scatter: operands of the wrong shapes, dtypes or devices");
  Node n;
  n.op = op;
  n.dtype = x->dtype;
  n.device = x->device;
  n.shape = x->shape;
  n.inputs = {x, idx, v};
  n.ints = {0};
  return intern(std::move(n));
}

}  // namespace arrayc::detail
