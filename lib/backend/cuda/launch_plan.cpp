#include "backend/cuda/launch_plan.h"

#include <algorithm>
#include <atomic>

#include "arrayc/error.h"

namespace arrayc::detail {

PtxArgs::PtxArgs(const Kernel& k, const std::vector<void*>& ptrs, const std::vector<int64_t>& params,
                 int64_t begin, int64_t end, int64_t chunk_stride, int64_t mean_count)
    : ptrs_(ptrs), values_(params) {
  ARRAYC_INTERNAL_CHECK(static_cast<int>(ptrs.size()) == k.num_ptrs && static_cast<int64_t>(params.size()) == k.num_params(),
                        "launch arguments do not match kernel " + k.name);
  values_.insert(values_.end(), {begin, end});
  if (k.is_reduction) values_.insert(values_.end(), {chunk_stride, mean_count});
  for (void*& p : ptrs_) args_.push_back(&p);
  for (int64_t& v : values_) args_.push_back(&v);
}

namespace {
std::atomic<int64_t> g_round_work{int64_t{1} << 34};
}  // namespace

int64_t gpu_round_work() { return g_round_work.load(std::memory_order_relaxed); }
void set_gpu_round_work(int64_t work) {
  ARRAYC_INTERNAL_CHECK(work > 0, "set_gpu_round_work: not positive");
  g_round_work.store(work, std::memory_order_relaxed);
}
int64_t round_length(int64_t outputs) { return std::max<int64_t>(1, gpu_round_work() / std::max<int64_t>(outputs, 1)); }

PtxLaunchConfig ptx_launch_config(const Kernel& k, const PtxKernel& p, const LaunchParams& lp, int multiprocessors) {
  PtxLaunchConfig c;
  // At most 64 blocks of 256 threads per SM (8 waves at full occupancy), then grid-stride: with
  // the loads a chunk ahead this measured best for W8 on an H200 (docs/cuda.md), 32 and 128 a
  // little slower, 8 (one wave) and 256 slower still.
  const int64_t max_grid = 64 * static_cast<int64_t>(std::max(multiprocessors, 1));
  const int64_t n = std::max<int64_t>(lp.parallel_extent, 1);
  if (k.row_chain) {  // row chains (issue 29): a block per row
    const int64_t row = lp.reduce_extent, held = p.elements_per_thread;
    int64_t warps = std::clamp<int64_t>((row + 16 * 32 - 1) / (16 * 32), 1, 8);
    // The register path (ptx_kernel.cpp): rows of up to 1024 threads' elements_per_thread each
    // held in registers, as few warps as hold the row; longer rows, about 16 elements per thread
    // and pass.
    if (held > 1 && row >= 1 && row <= 1024 * held) warps = (row + 32 * held - 1) / (32 * held);
    c.block = static_cast<unsigned>(32 * warps);
    c.grid = static_cast<unsigned>(std::min(n, max_grid));
    return c;
  }
  if (!k.is_reduction) {
    int64_t per_block = static_cast<int64_t>(c.block) * p.elements_per_thread;
    c.grid = static_cast<unsigned>(std::clamp<int64_t>((n + per_block - 1) / per_block, 1, max_grid));
    return c;
  }
  // Across rows, a block reduces a tile of 32 outputs (tiled_reduction); else one output.
  const int64_t per_block = k.reduces_across_rows() ? 32 : 1;
  const int64_t blocks = (n + per_block - 1) / per_block;
  c.grid = static_cast<unsigned>(std::min(blocks, max_grid));
  // Too few blocks to give every SM a few: split each reduced range into chunks of at least
  // 8192 elements (32 per thread), up to 4 blocks per SM in all.
  const int64_t want = 4 * static_cast<int64_t>(std::max(multiprocessors, 1));
  if (blocks < want) {
    int64_t by_work = lp.reduce_extent * per_block / (static_cast<int64_t>(c.block) * 32);
    c.chunks = std::max<int64_t>(1, std::min((want + blocks - 1) / blocks, by_work));
  }
  c.split = c.chunks > 1 || (k.outputs.size() == 1 && lp.reduce_extent > round_length(lp.parallel_extent));
  return c;
}

ReductionSplit split_reduction(const Kernel& k, const LaunchParams& lp, int64_t chunks) {
  ARRAYC_INTERNAL_CHECK(k.is_reduction && k.outputs.size() == 1, "split_reduction needs a reduction kernel");
  const KernelOutput& out = k.outputs[0];
  const int outer_rank = k.outer_rank();
  ReductionSplit s;
  s.chunks = chunks;
  s.outputs = std::max<int64_t>(lp.parallel_extent, 1);
  s.partial_bytes = static_cast<size_t>(chunks * s.outputs) * dtype_size(out.dtype);
  s.mean_count = lp.reduce_extent;
  const int64_t out_blk = k.param_block(out.index);

  // Pass 1: the output, redirected to the scratch buffer's first row, contiguous over the outer
  // dims; no Mean division.
  s.first = lp;
  s.first.params[k.rank + 2] = 0;
  s.first.params[out_blk] = 0;
  int64_t stride = 1;
  for (int d = outer_rank; d-- > 0;) {
    StrideKind sk = out.strides[d];
    s.first.params[out_blk + 1 + d] = sk == StrideKind::Any ? stride : sk == StrideKind::Unit ? 1 : 0;
    stride *= lp.params[d];
  }

  // Pass 2: loop dims [outer..., chunk], reducing the chunk dim of the [chunks, outputs] scratch.
  Kernel& c = s.combine;
  c.name = k.name + "_combine";
  c.rank = outer_rank + 1;
  c.reduce_rank = 1;
  c.reduce_op = k.reduce_op;
  c.is_reduction = true;
  KernelLeaf leaf;
  leaf.op = Op::Buffer;
  leaf.dtype = out.dtype;
  leaf.strides.assign(c.rank, StrideKind::Any);
  leaf.ptr = 0;
  leaf.index = 0;
  c.leaves.push_back(leaf);
  KernelInstr load;
  load.op = Op::Buffer;
  load.dtype = out.dtype;
  load.leaf = 0;
  c.body.push_back(load);
  KernelOutput co;
  co.instr = 0;
  co.dtype = out.dtype;
  co.strides.assign(out.strides.begin(), out.strides.begin() + outer_rank);
  co.strides.push_back(StrideKind::Zero);
  co.ptr = 1;
  co.index = 1;
  c.outputs.push_back(co);
  c.num_ptrs = 2;
  c.num_indexed = 2;

  std::vector<int64_t>& p = s.second.params;
  for (int d = 0; d < outer_rank; ++d) p.push_back(lp.params[d]);
  p.insert(p.end(), {chunks, 0, chunks, 1});  // extent of the chunk dim; reduce [0, chunks); finalize
  p.push_back(0);  // scratch: offset, contiguous strides over outer dims, then `outputs` per chunk
  std::vector<int64_t> contiguous(outer_rank);
  stride = 1;
  for (int d = outer_rank; d-- > 0;) {
    contiguous[d] = stride;
    stride *= lp.params[d];
  }
  p.insert(p.end(), contiguous.begin(), contiguous.end());
  p.push_back(s.outputs);
  p.push_back(lp.params[out_blk]);  // the real output: its offset and outer strides, 0 per chunk
  for (int d = 0; d < outer_rank; ++d) p.push_back(lp.params[out_blk + 1 + d]);
  p.push_back(0);
  s.second.parallel_extent = lp.parallel_extent;
  s.second.reduce_extent = chunks;
  return s;
}

}  // namespace arrayc::detail
