// A strided view of memory: element (i_0, ..., i_{r-1}) is at offset + sum_d i_d * strides[d]
// (in elements). Views of the graph (reshape, transpose, broadcast) compose into one of these
// when the strides can express them, as numpy's views do.
#pragma once
#include <optional>

#include "arrayc/dtype.h"

namespace arrayc::detail {

struct StridedView {
  int64_t offset = 0;
  Shape shape;
  std::vector<int64_t> strides;

  static StridedView contiguous(const Shape& shape);
  StridedView transposed(const std::vector<int64_t>& perm) const;
  StridedView broadcast(const Shape& to) const;  // same rank; size-1 dims stretch with stride 0
  // numpy's no-copy reshape: nullopt when the strides cannot express the new shape.
  std::optional<StridedView> reshaped(const Shape& to) const;
  // Indexing: element i of dim d is element starts[d] + i * steps[d] of this view (steps may be
  // negative; the caller keeps every position inside).
  StridedView sliced(const std::vector<int64_t>& starts, const std::vector<int64_t>& steps, const Shape& to) const;
  bool is_contiguous() const;  // row-major strides (the offset may be anything)
  std::string str() const;     // "offset=2 shape=[3, 4] strides=[1, 3]"
};

}  // namespace arrayc::detail
