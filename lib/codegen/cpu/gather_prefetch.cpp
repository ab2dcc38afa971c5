#include "codegen/cpu/gather_prefetch.h"

#include <atomic>

#include "codegen/cpu/host_policy.h"
#include "support/env.h"

namespace arrayc::detail {

std::optional<PrefetchedGather> prefetched_gather(const Kernel& k) {
  if (k.is_reduction || k.row_chain || k.rank == 0 || !tiled_leaves(k).empty()) return std::nullopt;
  for (const KernelInstr& in : k.body) {
    if (in.op != Op::Gather) continue;
    const KernelInstr& index = k.body.at(in.args.at(0));
    if (index.leaf < 0 || index.op == Op::Gather) continue;
    const KernelLeaf& lf = k.leaves[index.leaf];
    if (lf.op == Op::Buffer && lf.strides.back() == StrideKind::Unit) return PrefetchedGather{in.leaf, index.leaf};
  }
  return std::nullopt;
}

namespace {
std::atomic<int64_t> g_distance{-1};  // -1: not read yet
}  // namespace

int64_t gather_prefetch_distance() {
  int64_t d = g_distance.load(std::memory_order_relaxed);
  if (d < 0) {
    d = gather_prefetch_setting().value_or(kGatherPrefetchDistance);
    g_distance.store(d, std::memory_order_relaxed);
  }
  return d;
}

void set_gather_prefetch_distance(int64_t elements) { g_distance.store(elements, std::memory_order_relaxed); }

}  // namespace arrayc::detail
