#include "passes/strided_view.h"

#include "ir/node.h"

namespace arrayc::detail {

std::string StridedView::str() const {
  return "offset=" + std::to_string(offset) + " shape=" + shape_str(shape) + " strides=" + shape_str(strides);
}

StridedView StridedView::contiguous(const Shape& shape) {
  return StridedView{0, shape, contiguous_strides(shape)};
}

StridedView StridedView::transposed(const std::vector<int64_t>& perm) const {
  StridedView v{offset, {}, {}};
  for (int64_t p : perm) {
    v.shape.push_back(shape[p]);
    v.strides.push_back(strides[p]);
  }
  return v;
}

StridedView StridedView::broadcast(const Shape& to) const {
  StridedView v{offset, to, strides};
  for (size_t d = 0; d < to.size(); ++d)
    if (shape[d] != to[d]) v.strides[d] = 0;
  return v;
}

std::optional<StridedView> StridedView::reshaped(const Shape& to) const {
  if (shape_numel(shape) == 0) return StridedView{offset, to, contiguous_strides(to)};
  // Ignore extent-1 dims of the old view: their strides do not matter.
  Shape old_dims;
  std::vector<int64_t> old_strides;
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] != 1) {
      old_dims.push_back(shape[d]);
      old_strides.push_back(strides[d]);
    }
  StridedView v{offset, to, std::vector<int64_t>(to.size(), 0)};
  size_t oi = 0, oj = 1, ni = 0, nj = 1;
  size_t old_n = old_dims.size(), new_n = to.size();
  while (ni < new_n && oi < old_n) {
    int64_t np = to[ni], op = old_dims[oi];
    while (np != op) {
      if (np < op) {
        np *= to[nj++];
      } else {
        op *= old_dims[oj++];
      }
    }
    // The old dims oi..oj-1 must be one contiguous run to be split differently.
    for (size_t ok = oi; ok + 1 < oj; ++ok)
      if (old_strides[ok] != old_dims[ok + 1] * old_strides[ok + 1]) return std::nullopt;
    v.strides[nj - 1] = old_strides[oj - 1];
    for (size_t nk = nj - 1; nk > ni; --nk) v.strides[nk - 1] = v.strides[nk] * to[nk];
    ni = nj++;
    oi = oj++;
  }
  return v;  // trailing extent-1 dims keep stride 0
}

StridedView StridedView::sliced(const std::vector<int64_t>& starts, const std::vector<int64_t>& steps,
                                const Shape& to) const {
  StridedView v{offset, to, strides};
  if (shape_numel(to) == 0) return v;  // no element is read; the offset must stay valid
  for (size_t d = 0; d < to.size(); ++d) {
    v.offset += starts[d] * strides[d];
    v.strides[d] = strides[d] * steps[d];
  }
  return v;
}

bool StridedView::is_contiguous() const {
  int64_t expect = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] != 1 && strides[d] != expect) return false;
    expect *= shape[d];
  }
  return true;
}

}  // namespace arrayc::detail
