#include "codegen/cpu/host_policy.h"

namespace arrayc::detail {

std::vector<int> streamed_outputs(const Kernel& k) {
  std::vector<int> out;
  if (k.is_reduction || k.outputs.empty() || k.rank == 0 || k.outputs[0].strides.back() != StrideKind::Unit ||
      !tiled_leaves(k).empty())
    return out;
  for (size_t i = 0; i < k.outputs.size(); ++i)
    if (dtype_size(k.outputs[i].dtype) == dtype_size(k.outputs[0].dtype) &&
        k.outputs[i].strides.back() == StrideKind::Unit)
      out.push_back(static_cast<int>(i));
  return out;
}

std::vector<int> tiled_leaves(const Kernel& k) {
  std::vector<int> out;
  if (k.is_reduction || k.row_chain || k.rank < 2) return out;
  int64_t buffer_bytes = 0;
  for (size_t i = 0; i < k.leaves.size(); ++i)
    if (k.leaves[i].op == Op::Buffer && k.leaves[i].strides.back() == StrideKind::Any) {
      out.push_back(static_cast<int>(i));
      buffer_bytes += kHostTileRows * kHostTileCols * static_cast<int64_t>(dtype_size(k.leaves[i].dtype));
    }
  if (buffer_bytes > kMaxTileBufferBytes) out.clear();
  return out;
}

}  // namespace arrayc::detail
