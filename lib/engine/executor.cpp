#include "engine/executor.h"

#include <atomic>
#include <cmath>
#include <cstring>
#include <unistd.h>

#include "arrayc/error.h"
#include "ir/build.h"
#include "engine/kernel_cache.h"
#include "codegen/nvptx/gemm.h"
#include "backend/cuda/launch_plan.h"
#include "backend/host/blas.h"
#include "backend/cuda/cuda_driver.h"
#include "backend/host/thread_pool.h"
#include "support/env.h"
#include "support/interrupt.h"
#include "support/stats.h"

namespace arrayc::detail {
namespace {

// Below this many elements of work a kernel runs on the calling thread.
constexpr int64_t kGrain = 1 << 15;

struct Launch {
  KernelFn fn;
  void* const* ptrs;
  const int64_t* params;
};

void run_range(void* ctx, int64_t begin, int64_t end) {
  auto* l = static_cast<Launch*>(ctx);
  l->fn(l->ptrs, l->params, begin, end);
}

// A full reduction too long for one thread: each chunk of the reduced range folds into its own
// partial, then the partials are combined in chunk order (the same result for the same thread
// count).
struct SplitReduction {
  KernelFn fn;
  std::vector<void*> ptrs;
  const std::vector<int64_t>* params;
  int rank;
  int out_ptr;
  char* partials;
  size_t elem;
  int64_t outputs = 1;  // per chunk: the kept space, written contiguously
};

void run_chunk(void* ctx, int64_t chunk, int64_t begin, int64_t end) {
  auto* s = static_cast<SplitReduction*>(ctx);
  std::vector<int64_t> params = *s->params;
  params[s->rank] = begin;
  params[s->rank + 1] = end;
  params[s->rank + 2] = 0;
  std::vector<void*> ptrs = s->ptrs;
  ptrs[s->out_ptr] = s->partials + chunk * s->elem * s->outputs;
  s->fn(ptrs.data(), params.data(), 0, s->outputs);
}

template <typename T> T combine_values(Op op, T a, T b) {
  switch (op) {
    case Op::Prod: return static_cast<T>(a * b);
    case Op::Max:
      if constexpr (std::is_floating_point_v<T>) if (std::isnan(a) || std::isnan(b)) return a + b;
      return a > b ? a : b;
    case Op::Min:
      if constexpr (std::is_floating_point_v<T>) if (std::isnan(a) || std::isnan(b)) return a + b;
      return a < b ? a : b;
    default: return static_cast<T>(a + b);
  }
}

// Combines `chunks` partial results of `n` outputs each (chunk c's at partials + c*n) in chunk
// order into out; mean divides by the reduced count.
template <typename T>
void combine_partials(Op op, const T* partials, int64_t chunks, int64_t n, T* out, int64_t count) {
  for (int64_t i = 0; i < n; ++i) {
    T acc = partials[i];
    for (int64_t c = 1; c < chunks; ++c) acc = combine_values(op, acc, partials[c * n + i]);
    if constexpr (std::is_floating_point_v<T>)
      if (op == Op::Mean) acc = acc / static_cast<T>(count);
    out[i] = acc;
  }
}

// Whether a reduction splits its reduced range between threads (each chunk folds into its own
// partials, combined afterwards in chunk order): a full reduction too long for one thread, or a
// reduction across rows (Kernel::reduces_across_rows) with rows enough, so that each thread reads
// whole rows in order instead of a slice of every row. The partials take at most 64 MiB.
bool split_reduced_range(const Kernel& k, const LaunchParams& lp, int64_t threads) {
  if (!k.is_reduction || threads < 2) return false;
  if (lp.parallel_extent == 1) return lp.reduce_extent >= 4 * kGrain;
  int64_t bytes = lp.parallel_extent * static_cast<int64_t>(dtype_size(k.outputs[0].dtype)) * threads;
  return k.reduces_across_rows() && lp.parallel_extent * lp.reduce_extent >= 4 * kGrain &&
         lp.reduce_extent >= 4 * threads && bytes <= (int64_t{64} << 20) &&
         lp.params[k.param_block(k.outputs[0].index)] == 0;  // the output's offset
}

void launch_kernel(const Kernel& k, KernelFn fn, std::vector<void*>& ptrs, const LaunchParams& lp) {
  counters().kernel_launches++;
  int64_t threads = num_threads();
  if (split_reduced_range(k, lp, threads)) {
    int64_t n = lp.parallel_extent;
    int64_t grain = std::max<int64_t>(1, kGrain / n);  // reduced indices per chunk, at least
    int64_t chunks = num_chunks(lp.reduce_extent, grain);
    DType t = k.outputs[0].dtype;
    size_t elem = dtype_size(t);
    std::vector<char> partials(chunks * n * elem);
    SplitReduction s{fn, ptrs, &lp.params, k.rank, k.outputs[0].ptr, partials.data(), elem, n};
    parallel_chunks(lp.reduce_extent, grain, run_chunk, &s);
    void* out = ptrs[k.outputs[0].ptr];
    int64_t count = lp.reduce_extent;
    switch (t) {
      case DType::Bool:  // max/min of bools: any/all
        combine_partials(k.reduce_op, reinterpret_cast<uint8_t*>(partials.data()), chunks, n, static_cast<uint8_t*>(out), count);
        break;
      case DType::Int32: combine_partials(k.reduce_op, reinterpret_cast<int32_t*>(partials.data()), chunks, n, static_cast<int32_t*>(out), count); break;
      case DType::Int64: combine_partials(k.reduce_op, reinterpret_cast<int64_t*>(partials.data()), chunks, n, static_cast<int64_t*>(out), count); break;
      case DType::Float32: combine_partials(k.reduce_op, reinterpret_cast<float*>(partials.data()), chunks, n, static_cast<float*>(out), count); break;
      case DType::Float64: combine_partials(k.reduce_op, reinterpret_cast<double*>(partials.data()), chunks, n, static_cast<double*>(out), count); break;
    }
    return;
  }
  Launch l{fn, ptrs.data(), lp.params.data()};
  int64_t grain = k.is_reduction ? std::max<int64_t>(1, kGrain / std::max<int64_t>(1, lp.reduce_extent)) : kGrain;
  parallel_for(lp.parallel_extent, grain, run_range, &l);
}

// One launch on a GPU (asynchronous on the device's stream). A single-output reduction over a
// long range runs as two launches: per-chunk partials, then a generated combine kernel.
void launch_gpu(const KernelStep& ks, const GpuKernel& g, int dev, std::vector<void*>& ptrs) {
  counters().kernel_launches++;
  const Kernel& k = ks.kernel;
  const LaunchParams& lp = ks.launch;
  int sms = cuda::device_info(dev).multiprocessors;
  PtxLaunchConfig c = ptx_launch_config(k, g.ptx, lp, sms);
  if (c.chunks == 1) {
    PtxArgs a(k, ptrs, lp.params, 0, lp.parallel_extent);
    cuda::launch(dev, *g.fn, c.grid, c.block, a.data());
    return;
  }
  ReductionSplit split = split_reduction(k, lp, c.chunks);
  void* scratch = cuda::alloc(dev, split.partial_bytes);
  void* out = ptrs[k.outputs[0].ptr];
  std::vector<void*> first = ptrs;
  first[k.outputs[0].ptr] = scratch;
  PtxArgs a1(k, first, split.first.params, 0, lp.parallel_extent, split.outputs, 0);
  cuda::launch(dev, *g.fn, c.grid, c.block, a1.data(), 0, static_cast<unsigned>(c.chunks));
  const GpuKernel& comb = gpu_kernel(split.combine, dev, EmitOptions{});
  PtxLaunchConfig cc = ptx_launch_config(split.combine, comb.ptx, split.second, sms);
  PtxArgs a2(split.combine, {scratch, out}, split.second.params, 0, split.outputs, 0, split.mean_count);
  cuda::launch(dev, *comb.fn, cc.grid, cc.block, a2.data());
  cuda::free(dev, scratch, split.partial_bytes);  // later reuse is ordered on the same stream
}

// A float product on a GPU: the generated tiled kernel (codegen/nvptx/gemm.h).
void launch_gemm(const DotStep& d, const MatrixRef& a, const MatrixRef& b, void* c, int dev) {
  GemmProblem p = gemm_problem(d, reinterpret_cast<uintptr_t>(a.data), reinterpret_cast<uintptr_t>(b.data));
  if (p.m == 0 || p.n == 0 || p.batch == 0) return;
  counters().kernel_launches++;
  GemmKernel gk = choose_gemm(p, cuda::device_info(dev).multiprocessors);
  const GpuKernel& g = gpu_gemm_kernel(gk, dev);
  void* ptrs[3] = {const_cast<void*>(a.data), const_cast<void*>(b.data), c};
  int64_t v[10] = {p.m, p.n, p.k, p.batch, p.a_rs, p.a_cs, p.a_bs, p.b_rs, p.b_cs, p.b_bs};
  void* args[13];
  for (int i = 0; i < 3; ++i) args[i] = &ptrs[i];
  for (int i = 0; i < 10; ++i) args[3 + i] = &v[i];
  cuda::launch(dev, *g.fn, gemm_grid(gk, p), static_cast<unsigned>(gk.tile.threads()), args);
}

char* base_pointer(const Source& src, const std::vector<StorageRef>& slots,
                   const std::vector<ParamBinding>& params) {
  switch (src.kind) {
    case Source::Kind::Storage: return static_cast<char*>(src.storage->data);
    case Source::Kind::Slot: return static_cast<char*>(slots[src.index]->data);
    case Source::Kind::Param: {
      const ParamBinding& pb = params.at(src.index);
      return static_cast<char*>(pb.storage->data) + pb.offset * static_cast<int64_t>(dtype_size(pb.dtype));
    }
  }
  return nullptr;
}

MatrixRef matrix_ref(const MatrixOperand& m, DType t, const std::vector<StorageRef>& slots,
                     const std::vector<ParamBinding>& params) {
  return MatrixRef{base_pointer(m.src, slots, params) + m.offset * static_cast<int64_t>(dtype_size(t)),
                   m.rows, m.cols, m.row_stride, m.col_stride};
}

}  // namespace

GemmProblem gemm_problem(const DotStep& d, uintptr_t a_addr, uintptr_t b_addr) {
  GemmProblem p;
  p.dtype = d.dtype;
  p.batch = d.batch;
  p.m = d.a.rows;
  p.k = d.a.cols;
  p.n = d.b.cols;
  p.a_addr = a_addr;
  p.b_addr = b_addr;
  p.a_rs = d.a.row_stride;
  p.a_cs = d.a.col_stride;
  p.a_bs = d.a.batch_stride;
  p.b_rs = d.b.row_stride;
  p.b_cs = d.b.col_stride;
  p.b_bs = d.b.batch_stride;
  return p;
}

namespace {

// ARRAYC_STREAM_BYTES (an integer >= 0), else the last-level cache's size, else 32 MiB.
int64_t default_stream_threshold() {
  if (std::optional<int64_t> n = env_integer("ARRAYC_STREAM_BYTES", 0, " (bytes)")) return *n;
  long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
  return llc > 0 ? llc : int64_t{32} << 20;
}

std::atomic<int64_t> g_stream_threshold{-1};  // -1: not resolved yet

}  // namespace

int64_t stream_threshold_bytes() {
  int64_t t = g_stream_threshold.load(std::memory_order_relaxed);
  if (t < 0) {
    t = default_stream_threshold();
    g_stream_threshold.store(t, std::memory_order_relaxed);
  }
  return t;
}

void set_stream_threshold_bytes(int64_t bytes) { g_stream_threshold.store(bytes, std::memory_order_relaxed); }

int64_t output_bytes(const KernelStep& ks, const Schedule& s) {
  int64_t bytes = 0;
  for (int out : ks.outputs)
    bytes += shape_numel(s.slots[out].shape) * static_cast<int64_t>(dtype_size(s.slots[out].dtype));
  return bytes;
}

EmitOptions kernel_options(const KernelStep& ks, const Schedule& s, const EmitOptions& user) {
  EmitOptions o = user;
  if (ks.kernel.is_reduction || s.slots[ks.outputs.at(0)].device.kind != Device::Kind::CPU) return o;
  int64_t bytes = output_bytes(ks, s);
  o.stream_stores = bytes > 0 && bytes >= stream_threshold_bytes();
  return o;
}

Program prepare(Schedule s, const EmitOptions& opts) {
  Program p;
  for (const Step& step : s.steps) {
    const CompiledKernel* ck = nullptr;
    const GpuKernel* gk = nullptr;
    if (auto* ks = std::get_if<KernelStep>(&step.op); ks && ks->launch.parallel_extent > 0) {
      Device d = s.slots[ks->outputs[0]].device;
      if (d.kind == Device::Kind::CPU) ck = &host_kernel(ks->kernel, kernel_options(*ks, s, opts));
      else gk = &gpu_kernel(ks->kernel, d.index, opts);
    }
    p.kernels.push_back(ck);
    p.gpu_kernels.push_back(gk);
  }
  p.schedule = std::move(s);
  return p;
}

std::vector<NodeRef> run(const Program& p, const std::vector<ParamBinding>& params) {
  const Schedule& s = p.schedule;
  std::vector<StorageRef> slots(s.slots.size());
  std::vector<void*> ptrs;
  clear_interrupt();  // arrayc::interrupt(): a new evaluation drops an old request
  for (size_t i = 0; i < s.steps.size(); ++i) {
    check_interrupt();  // arrayc::interrupt(): stop between steps
    const Step& step = s.steps[i];
    auto alloc = [&](int slot) {
      const Slot& sl = s.slots[slot];
      slots[slot] = std::make_shared<Storage>(sl.device, shape_numel(sl.shape) * dtype_size(sl.dtype));
    };
    if (auto* ks = std::get_if<KernelStep>(&step.op)) {
      for (int o : ks->outputs) alloc(o);
      if (p.kernels[i] || p.gpu_kernels[i]) {
        ptrs.clear();
        for (const Source& src : ks->inputs) ptrs.push_back(base_pointer(src, slots, params));
        for (int o : ks->outputs) ptrs.push_back(slots[o]->data);
        if (p.kernels[i]) launch_kernel(ks->kernel, p.kernels[i]->fn, ptrs, ks->launch);
        else launch_gpu(*ks, *p.gpu_kernels[i], s.slots[ks->outputs[0]].device.index, ptrs);
      }
    } else {
      const DotStep& d = std::get<DotStep>(step.op);
      alloc(d.output);
      MatrixRef a = matrix_ref(d.a, d.dtype, slots, params), b = matrix_ref(d.b, d.dtype, slots, params);
      Device dev = s.slots[d.output].device;
      if (dev.kind == Device::Kind::GPU) {
        launch_gemm(d, a, b, slots[d.output]->data, dev.index);
      } else {
        counters().kernel_launches++;
        if (d.batch == 1) gemm(d.dtype, a, b, slots[d.output]->data);
        else gemm_batched(d.dtype, d.batch, a, d.a.batch_stride, b, d.b.batch_stride, slots[d.output]->data);
      }
    }
    for (int r : step.release) slots[r].reset();
  }
  std::vector<NodeRef> out;
  for (const OutputView& ov : s.outputs) {
    StorageRef st;
    int64_t offset = ov.offset;
    switch (ov.src.kind) {
      case Source::Kind::Storage: st = ov.src.storage; break;
      case Source::Kind::Slot: st = slots[ov.src.index]; break;
      case Source::Kind::Param:
        st = params.at(ov.src.index).storage;
        offset += params[ov.src.index].offset;
        break;
    }
    out.push_back(make_buffer(st, ov.dtype, ov.shape, offset, ov.strides));
  }
  return out;
}

}  // namespace arrayc::detail
