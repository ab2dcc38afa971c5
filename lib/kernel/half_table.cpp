#include "kernel/half_table.h"

#include <atomic>

namespace arrayc::detail {
namespace {
std::atomic<int64_t> g_min_elements{int64_t{1} << 20};
std::atomic<int64_t> g_runs{0};
}  // namespace

std::optional<HalfTable> half_table_for(const Kernel& k) {
  if (k.is_reduction || k.row_chain || k.rank != 1 || k.outputs.size() != 1) return std::nullopt;
  HalfTable t;
  for (const KernelLeaf& lf : k.leaves) {
    if (lf.op == Op::Constant) continue;
    if (lf.op != Op::Buffer || t.in_ptr >= 0 || !is_half(lf.dtype) || lf.strides.at(0) != StrideKind::Unit)
      return std::nullopt;
    t.in_ptr = lf.ptr;
    t.in_index = lf.index;
  }
  const KernelOutput& o = k.outputs[0];
  size_t size = dtype_size(o.dtype);
  if (t.in_ptr < 0 || (size != 1 && size != 2 && size != 4) || o.strides.at(0) != StrideKind::Unit) return std::nullopt;
  bool computes = false;
  for (const KernelInstr& in : k.body) computes = computes || (in.leaf < 0 && in.op != Op::Cast);
  if (!computes) return std::nullopt;
  t.out_ptr = o.ptr;
  t.out_index = o.index;
  t.out = o.dtype;
  return t;
}

int64_t half_table_min_elements() { return g_min_elements.load(std::memory_order_relaxed); }
void set_half_table_min_elements(int64_t n) { g_min_elements.store(n, std::memory_order_relaxed); }
int64_t half_table_runs() { return g_runs.load(std::memory_order_relaxed); }
void note_half_table_run() { g_runs.fetch_add(1, std::memory_order_relaxed); }

const uint16_t* half_patterns() {
  static const std::vector<uint16_t> p = [] {
    std::vector<uint16_t> v(kHalfPatterns);
    for (int64_t i = 0; i < kHalfPatterns; ++i) v[i] = static_cast<uint16_t>(i);
    return v;
  }();
  return p.data();
}

std::vector<int64_t> half_table_params(const HalfTable& t, const Kernel& k, const std::vector<int64_t>& params) {
  std::vector<int64_t> p = params;
  p[0] = kHalfPatterns;
  for (int index : {t.in_index, t.out_index}) {
    p[k.param_block(index)] = 0;
    p[k.param_block(index) + 1] = 1;
  }
  return p;
}

}  // namespace arrayc::detail
