#include "codegen/loop_space.h"

namespace arrayc::detail {

std::vector<const std::vector<StrideKind>*> stride_kinds(const Kernel& k) {
  std::vector<const std::vector<StrideKind>*> kinds(k.num_indexed);
  for (const KernelLeaf& lf : k.leaves)
    if (lf.index >= 0) kinds[lf.index] = &lf.strides;
  for (const KernelLeaf& lf : k.leaves)
    if (lf.aux >= 0) kinds[lf.aux] = kinds[lf.aux + 1] = &lf.aux_strides;
  for (const KernelOutput& o : k.outputs) kinds[o.index] = &o.strides;
  return kinds;
}

LoopSpace LoopSpace::unpack(llvm::IRBuilder<>& b, const Kernel& k,
                            const std::function<llvm::Value*(int64_t)>& param) {
  LoopSpace s;
  for (int d = 0; d < k.rank; ++d) s.extents.push_back(param(d));
  s.reduce_begin = param(k.rank);
  s.reduce_end = param(k.rank + 1);
  s.finalize = param(k.rank + 2);
  auto kinds = stride_kinds(k);
  s.strides.resize(k.num_indexed);
  for (int j = 0; j < k.num_indexed; ++j) {
    int64_t blk = k.param_block(j);
    s.offsets.push_back(param(blk));
    for (int d = 0; d < k.rank; ++d) {
      StrideKind sk = (*kinds[j])[d];
      s.strides[j].push_back(sk == StrideKind::Any ? param(blk + 1 + d)
                                                   : b.getInt64(sk == StrideKind::Unit ? 1 : 0));
    }
  }
  for (int c = 0; c < k.num_constants; ++c) s.constants.push_back(param(k.constant_param(c)));
  return s;
}

std::vector<llvm::Value*> LoopSpace::offsets_at(llvm::IRBuilder<>& b, const std::vector<int>& dims,
                                                llvm::Value* idx, std::vector<llvm::Value*> base) const {
  llvm::Value* r = idx;
  for (size_t i = dims.size(); i-- > 0;) {
    int d = dims[i];
    llvm::Value* coord = i == 0 ? r : b.CreateURem(r, extents[d]);
    if (i > 0) r = b.CreateUDiv(r, extents[d]);
    for (size_t j = 0; j < base.size(); ++j)
      base[j] = b.CreateAdd(base[j], b.CreateMul(coord, strides[j][d]));
  }
  return base;
}

llvm::Value* LoopSpace::finish(llvm::IRBuilder<>& b, const Kernel& k, llvm::Value* r,
                               llvm::Value* count) const {
  if (k.reduce_op != Op::Mean) return r;
  llvm::Value* mean = b.CreateFDiv(r, b.CreateSIToFP(count, r->getType()));
  return b.CreateSelect(b.CreateICmpNE(finalize, b.getInt64(0)), mean, r);
}

}  // namespace arrayc::detail
