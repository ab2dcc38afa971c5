// Node constructors of the indexing ops (ops.def: Slice, Gather). Like build.h's, each checks
// its arguments and raises arrayc::Error naming the op; the public API (api/indexing.cpp)
// resolves numpy's index forms (negative indices, clamped bounds, ellipsis) before calling them.
#pragma once
#include "ir/node.h"

namespace arrayc::detail {

// out[i] = x[starts + i * steps] per dim, the result of the given shape (same rank). Every
// position the view reaches must lie inside x (an internal check: the API clamps first). A slice
// of a slice composes into one node.
NodeRef make_slice(const NodeRef& x, const std::vector<int64_t>& starts, const std::vector<int64_t>& steps,
                   const Shape& shape);

// ops.def's Gather: idx (an integer array, of the result's shape) picks positions along `axis`
// of src; src dim d != axis is indexed by result dim dim_map[d]. `op` names the public function
// for errors ("take", "take_along_axis").
NodeRef make_gather(const char* op, const NodeRef& src, const NodeRef& idx, int64_t axis,
                    const std::vector<int64_t>& dim_map);

// ops.def's ScatterSet/ScatterAdd (op): x updated at rows idx (int64 [k]) by v ([k] +
// x.shape[1:], x's dtype); internal checks only (the API, x.at(indices), prepares the operands).
NodeRef make_scatter(Op op, const NodeRef& x, const NodeRef& idx, const NodeRef& v);
inline bool is_scatter(Op op) { return op == Op::ScatterSet || op == Op::ScatterAdd; }

// A gather's src dim map (ints after the axis).
inline std::vector<int64_t> gather_dim_map(const Node& g) { return {g.ints.begin() + 1, g.ints.end()}; }
inline int64_t gather_axis(const Node& g) { return g.ints.at(0); }

// The position a gather reads for index value v along an axis of extent n (ops.def's rule:
// negative counts from the end, then clamped into [0, n)).
inline int64_t gather_position(int64_t v, int64_t n) {
  if (v < 0) v += n;
  return v < 0 ? 0 : v >= n ? n - 1 : v;
}

}  // namespace arrayc::detail
