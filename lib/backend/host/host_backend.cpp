#include "backend/host/host_backend.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <unistd.h>

#include <atomic>

#include "arrayc/error.h"
#include "backend/host/axis_ops.h"
#include "backend/host/scatter.h"
#include "backend/host/skinny.h"
#include "backend/host/tiled.h"
#include "backend/host/blas.h"
#include "backend/host/blas_config.h"
#include "backend/host/cpu_allocator.h"
#include "backend/host/half_table.h"  // host float16 speed (issue 28)
#include "backend/host/host_jit.h"
#include "backend/host/thread_pool.h"
#include "codegen/cpu/gather_prefetch.h"  // host gather bandwidth (issue 28)
#include "codegen/cpu/host_policy.h"
#include "codegen/cpu/skinny_gemm.h"
#include "codegen/cpu/tile_gemm.h"
#include "support/env.h"
#include "support/hash.h"
#include "support/stats.h"

namespace arrayc::detail {
namespace {

// Below this many elements of work a kernel runs on the calling thread.
constexpr int64_t kGrain = 1 << 15;

std::atomic<int64_t> g_split_round{int64_t{1} << 36};

// ---- Kernels ------------------------------------------------------------------------------------


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
  int64_t offset = 0;   // of the round's first reduced index (HostKernelLaunch::run_split)
};

void run_chunk(void* ctx, int64_t chunk, int64_t begin, int64_t end) {
  auto* s = static_cast<SplitReduction*>(ctx);
  std::vector<int64_t> params = *s->params;
  params[s->rank] = s->offset + begin;
  params[s->rank + 1] = s->offset + end;
  params[s->rank + 2] = 0;
  std::vector<void*> ptrs = s->ptrs;
  ptrs[s->out_ptr] = s->partials + chunk * s->elem * s->outputs;
  s->fn(ptrs.data(), params.data(), 0, s->outputs);
}

template <typename T> bool is_nan(T x) { return std::isnan(static_cast<double>(x)); }

// T: the element type in memory (float16 and bfloat16 compare and add as float).
template <typename T> T combine_values(Op op, T a, T b) {
  switch (op) {
    case Op::Prod: return static_cast<T>(a * b);
    case Op::Max:
      if constexpr (!std::is_integral_v<T>) if (is_nan(a) || is_nan(b)) return static_cast<T>(a + b);
      return a > b ? a : b;
    case Op::Min:
      if constexpr (!std::is_integral_v<T>) if (is_nan(a) || is_nan(b)) return static_cast<T>(a + b);
      return a < b ? a : b;
    default: return static_cast<T>(a + b);
  }
}

// Combines `chunks` partial results of `n` outputs each (chunk c's at partials + c*n) in chunk
// order into out; mean divides by the reduced count.
template <typename T>
void combine_partials(Op op, const void* partials_in, int64_t chunks, int64_t n, void* out_v, int64_t count) {
  const T* partials = static_cast<const T*>(partials_in);
  T* out = static_cast<T*>(out_v);
  for (int64_t i = 0; i < n; ++i) {
    T acc = partials[i];
    for (int64_t c = 1; c < chunks; ++c) acc = combine_values(op, acc, partials[c * n + i]);
    if constexpr (std::is_floating_point_v<T>)
      if (op == Op::Mean) acc = acc / static_cast<T>(count);
    out[i] = acc;
  }
}

using CombineFn = void (*)(Op, const void*, int64_t, int64_t, void*, int64_t);

CombineFn combine_fn(DType t) {
  switch (t) {
    case DType::Bool: return combine_partials<uint8_t>;  // max/min of bools: any/all
    case DType::Int8: return combine_partials<int8_t>;
    case DType::UInt8: return combine_partials<uint8_t>;
    case DType::Int16: return combine_partials<int16_t>;
    case DType::UInt16: return combine_partials<uint16_t>;
    case DType::Int32: return combine_partials<int32_t>;
    case DType::UInt32: return combine_partials<uint32_t>;
    case DType::Int64: return combine_partials<int64_t>;
    case DType::UInt64: return combine_partials<uint64_t>;
    case DType::Float16: return combine_partials<float16>;  // max and min only (sums are float32)
    case DType::BFloat16: return combine_partials<bfloat16>;
    case DType::Float32: return combine_partials<float>;
    case DType::Float64: return combine_partials<double>;
  }
  ARRAYC_INTERNAL_CHECK(false, "combine_fn: unknown dtype");
  return nullptr;
}

// A kernel step on the host: the compiled function and the step's launch parameters, split
// between the pool's threads when it runs. The step is the Program's, which owns the launch.
class HostKernelLaunch final : public Launch {
 public:
  HostKernelLaunch(const KernelStep& ks, std::shared_ptr<const Binary> b, const EmitOptions& o)
      : k_(ks.kernel), lp_(ks.launch), binary_(std::move(b)), fn_(static_cast<const HostBinary&>(*binary_).fn),
        stream_(o.stream_stores),
        combine_(k_.is_reduction ? combine_fn(k_.outputs[0].dtype) : nullptr), table_(half_table_for(k_)) {}
  // The same code as `like`, for a step of other sizes (Backend::replan).
  HostKernelLaunch(const KernelStep& ks, const HostKernelLaunch& like)
      : k_(ks.kernel), lp_(ks.launch), binary_(like.binary_), fn_(like.fn_), stream_(like.stream_),
        combine_(like.combine_), table_(like.table_) {}
  bool streams() const { return stream_; }

  void run(const std::vector<void*>& ptrs) const override {
    counters().kernel_launches++;
    execute(ptrs);
  }
  // run() without counting a launch: a product step's epilogue on the whole product (HostDotLaunch).
  void execute(const std::vector<void*>& ptrs) const {
    // host float16 speed (issue 28): a long array of 16-bit floats through a table of the kernel
    if (table_ && lp_.parallel_extent >= half_table_min_elements())
      return run_half_table(*table_, k_, fn_, ptrs, lp_, stream_);
    int64_t threads = num_threads();
    if (split_reduced_range(threads)) return run_split(ptrs);
    KernelRange r{fn_, ptrs.data(), lp_.params.data()};
    int64_t grain = k_.is_reduction || k_.row_chain ? std::max<int64_t>(1, kGrain / std::max<int64_t>(1, lp_.reduce_extent)) : kGrain;
    parallel_for(lp_.parallel_extent, grain, run_kernel_range, &r);
  }

 private:
  // Whether a reduction splits its reduced range between threads (each chunk folds into its own
  // partials, combined afterwards in chunk order): a full reduction too long for one thread, or
  // a reduction across rows (Kernel::reduces_across_rows) with rows enough, so that each thread
  // reads whole rows in order instead of a slice of every row. The partials take at most 64 MiB.
  bool split_reduced_range(int64_t threads) const {
    if (!k_.is_reduction) return false;
    // One thread splits a full reduction only where a single chunk would be too long to stop
    // promptly on arrayc::interrupt() (num_chunks).
    if (threads < 2) return lp_.parallel_extent == 1 && num_chunks(lp_.reduce_extent, kGrain) > 1;
    if (lp_.parallel_extent == 1) return lp_.reduce_extent >= 4 * kGrain;
    int64_t chunks = num_chunks(lp_.reduce_extent, std::max<int64_t>(1, kGrain / lp_.parallel_extent));
    int64_t bytes = lp_.parallel_extent * static_cast<int64_t>(dtype_size(k_.outputs[0].dtype)) * chunks;
    return k_.reduces_across_rows() && lp_.parallel_extent * lp_.reduce_extent >= 4 * kGrain &&
           lp_.reduce_extent >= 4 * threads && bytes <= (int64_t{64} << 20) &&
           lp_.params[k_.param_block(k_.outputs[0].index)] == 0;  // the output's offset
  }

  // The reduced range runs in rounds of at most split_round() indices. Each round's chunks fold
  // into partials that are combined into one partial per round, and those at the end, so that
  // the partials stay small however long the range: sum(arange(1e17)) asked for 45 GB of them.
  // A range of one round (any array that fits in memory) combines its chunks directly.
  void run_split(const std::vector<void*>& ptrs) const {
    int64_t n = lp_.parallel_extent;
    int64_t grain = std::max<int64_t>(1, kGrain / n);  // reduced indices per chunk, at least
    int64_t total = lp_.reduce_extent;
    const int64_t round = split_round();
    int64_t rounds = (total + round - 1) / round;
    size_t elem = dtype_size(k_.outputs[0].dtype);
    std::vector<char> partials(num_chunks(std::min(total, round), grain) * n * elem);
    std::vector<char> round_partials(rounds > 1 ? rounds * n * elem : 0);
    void* out = ptrs[k_.outputs[0].ptr];
    SplitReduction s{fn_, ptrs, &lp_.params, k_.rank, k_.outputs[0].ptr, partials.data(), elem, n};
    for (int64_t r = 0; r < rounds; ++r) {
      s.offset = r * round;
      int64_t len = std::min(round, total - s.offset);
      parallel_chunks(len, grain, run_chunk, &s);
      if (rounds == 1) {
        combine_(k_.reduce_op, partials.data(), num_chunks(len, grain), n, out, len);
        return;
      }
      Op op = k_.reduce_op == Op::Mean ? Op::Sum : k_.reduce_op;  // a mean divides once, at the end
      combine_(op, partials.data(), num_chunks(len, grain), n, round_partials.data() + r * n * elem, len);
    }
    combine_(k_.reduce_op, round_partials.data(), rounds, n, out, total);
  }

  const Kernel& k_;
  const LaunchParams& lp_;
  std::shared_ptr<const Binary> binary_;  // keeps fn_'s code loaded
  KernelFn fn_;
  bool stream_;  // compiled with streaming stores (host_options)
  CombineFn combine_;
  std::optional<HalfTable> table_;  // host float16 speed (issue 28): half_table.h
};

// Whether the generated tiled kernel computes this product step: a 2-D general product within the
// kernel's bounds (kernel/schedule.h) and this host's rule, whatever a's and b's strides; else BLAS.
bool tiled_step(const DotStep& d) {
  return d.form == ProductForm::General && d.batch == 1 && (d.dtype == DType::Float32 || d.dtype == DType::Float64) &&
         tiled_takes(d.a.rows, d.b.cols, d.a.cols);
}
// The same for a batch of products: tiled_gemm_batched.
bool tiled_batch_step(const DotStep& d) {
  return d.form == ProductForm::General && d.batch > 1 && (d.dtype == DType::Float32 || d.dtype == DType::Float64) &&
         tiled_takes_batched(d.a.rows, d.b.cols, d.a.cols);
}

// A float product through OpenBLAS, and its epilogue when one is fused in.
//
// With an epilogue, the product goes to scratch memory and the epilogue kernel turns it into the
// step's outputs. When the epilogue reads the product at each element's own index, the rows are
// done in panels: BLAS computes a panel into the scratch, and the epilogue runs on it while it
// is still in cache, so the product never travels to memory and back (docs/blas.md: the panel
// size and what it measured).
class HostDotLaunch final : public Launch {
 public:
  // `stream`: the epilogue was compiled with streaming stores (host_options).
  HostDotLaunch(const DotStep& d, std::shared_ptr<const Binary> epilogue, bool stream)  // the Program's step
      : d_(d), epilogue_(std::move(epilogue)),
        fn_(epilogue_ ? static_cast<const HostBinary&>(*epilogue_).fn : nullptr), stream_(stream) {
    if (!d_.has_epilogue) return;
    product_ptrs_ = product_inputs(d_);
    m_ = d_.batch * d_.a.rows;
    n_ = d_.b.cols;
    panel_ = epilogue_panel_rows(d_);
    if (!d_.epilogue_by_rows) {  // the epilogue runs once, on the whole product, as its own step would
      EmitOptions o;
      o.stream_stores = stream_;
      whole_.emplace(d_.epilogue, epilogue_, o);
    }
  }
  // The same code as `like`, for a step of other sizes (Backend::replan).
  HostDotLaunch(const DotStep& d, const HostDotLaunch& like) : HostDotLaunch(d, like.epilogue_, like.stream_) {}
  bool streams() const { return stream_; }

  void run(const std::vector<void*>& ptrs) const override {
    counters().kernel_launches++;
    MatrixRef a{ptrs[0], d_.a.rows, d_.a.cols, d_.a.row_stride, d_.a.col_stride};
    MatrixRef b{ptrs[1], d_.b.rows, d_.b.cols, d_.b.row_stride, d_.b.col_stride};
    if (!d_.has_epilogue) return whole_product(a, b, ptrs[2]);
    if (m_ == 0 || n_ == 0) {  // an empty product: a reduction epilogue still writes its identity
      if (whole_) whole_->execute(std::vector<void*>(ptrs.begin() + 3, ptrs.end()));
      return;
    }
    size_t elem = dtype_size(d_.dtype);
    const bool blocks = tiled_by_blocks();  // the whole product's scratch then (the rule may change after planning)
    size_t bytes = static_cast<size_t>((blocks ? m_ : panel_) * n_) * elem;
    char* scratch = static_cast<char*>(cpu_alloc(bytes));
    std::vector<void*> eptrs(ptrs.begin() + 3, ptrs.end());
    const int64_t* params = d_.epilogue.launch.params.data();
    try {
      if (blocks) {  // each block's rows as soon as its task has them
        for (int i : product_ptrs_) eptrs[i] = scratch;
        Panel p{fn_, eptrs.data(), params, 0};
        TileEpilogue e{run_panel, &p};
        if (d_.batch == 1) tiled_gemm(d_.dtype, a, b, scratch, &e);
        else tiled_gemm_batched(d_.dtype, d_.batch, a, d_.a.batch_stride, b, d_.b.batch_stride, scratch, &e);
      } else if (whole_) {  // read through a view, or by a reduction
        whole_product(a, b, scratch);
        for (int i : product_ptrs_) eptrs[i] = scratch;
        whole_->execute(eptrs);
      } else {
        for (int64_t r0 = 0; r0 < m_; r0 += panel_) {
          int64_t rows = std::min(panel_, m_ - r0);
          if (rows == m_) {  // one panel (always for batches: epilogue_panel_rows)
            whole_product(a, b, scratch);
          } else {
            MatrixRef ap = a;
            ap.data = static_cast<const char*>(a.data) + r0 * a.row_stride * static_cast<int64_t>(elem);
            ap.rows = rows;
            product(ap, b, scratch, false);
          }
          // The kernel indexes the product by the element's index in the whole output.
          for (int i : product_ptrs_) eptrs[i] = scratch - r0 * n_ * static_cast<int64_t>(elem);
          Panel p{fn_, eptrs.data(), params, r0 * n_};
          parallel_for(rows * n_, kGrain, run_panel, &p);
        }
      }
    } catch (...) {
      cpu_free(scratch, bytes);
      throw;
    }
    cpu_free(scratch, bytes);
  }

 private:
  // The step's whole product (a batch of them, a Gram product by its triangle) into c.
  void whole_product(const MatrixRef& a, const MatrixRef& b, void* c) const {
    const bool gram = d_.form == ProductForm::Gram;
    if (d_.batch == 1) product(a, b, c, gram);
    else if (tiled_batch_step(d_)) tiled_gemm_batched(d_.dtype, d_.batch, a, d_.a.batch_stride, b, d_.b.batch_stride, c);
    else gemm_batched(d_.dtype, d_.batch, a, d_.a.batch_stride, b, d_.b.batch_stride, c, gram);
  }
  // One 2-D product: the generated skinny kernel where the products pass chose it and it reads a
  // in place, else BLAS.
  void product(const MatrixRef& a, const MatrixRef& b, void* c, bool gram) const {
    if (d_.form == ProductForm::Skinny && skinny_reads(a)) skinny_gemm(d_.dtype, a, b, c);
    else if (tiled_step(d_)) tiled_gemm(d_.dtype, a, b, c);
    else gemm(d_.dtype, a, b, c, gram);
  }
  // Whether the tiled kernel computes the product with the epilogue in its blocks' tasks.
  bool tiled_by_blocks() const { return d_.epilogue_by_rows && (tiled_step(d_) || tiled_batch_step(d_)); }

  struct Panel {
    KernelFn fn;
    void* const* ptrs;
    const int64_t* params;
    int64_t first;  // the panel's first element
  };
  static void run_panel(void* ctx, int64_t begin, int64_t end) {
    auto* p = static_cast<Panel*>(ctx);
    p->fn(p->ptrs, p->params, p->first + begin, p->first + end);
  }

  const DotStep& d_;
  std::shared_ptr<const Binary> epilogue_;  // keeps fn_'s code loaded
  KernelFn fn_;
  bool stream_;
  std::vector<int> product_ptrs_;  // the epilogue's reads of the product (p + p.T: two)
  int64_t m_ = 0, n_ = 0, panel_ = 1;
  std::optional<HostKernelLaunch> whole_;  // the epilogue on the whole product (not by rows)
};

// A scan or sort (issue 28): backend/host/axis_ops.h.
class HostAxisLaunch final : public Launch {
 public:
  explicit HostAxisLaunch(const AxisStep& a) : a_(a) {}  // the Program's step
  void run(const std::vector<void*>& ptrs) const override {
    if (!a_.more.empty()) return run_scatter_step(a_, ptrs);  // sparse scatter: backend/host/scatter.h
    run_axis_step(a_, ptrs[0], ptrs[1]);
  }

 private:
  const AxisStep& a_;
};

std::string options_text(const EmitOptions& o) {
  return "fast=" + std::to_string(o.fast_math) + " stream=" + std::to_string(o.stream_stores) +
         (o.gather_prefetch ? " prefetch=" + std::to_string(o.gather_prefetch) : "");  // issue 28
}

// The symbol of k compiled with o: named after its key, so that an object stored by one
// process links under the same name in another. Made only on a miss (compile or load).
std::string host_symbol(const Kernel& k, const EmitOptions& o) {
  std::string key = options_text(o) + "\n" + k.str();
  char hash[24];
  std::snprintf(hash, sizeof hash, "_%016llx", static_cast<unsigned long long>(fnv1a(key.data(), key.size())));
  return "arrayc_" + k.name + hash;
}

// The unit that compiles k on the host; k must outlive it.
CompileUnit host_unit(const Kernel& k, const EmitOptions& o, std::string notes) {
  static const std::string disk_target = host_target_key();
  CompileUnit u;
  u.target = "cpu";
  u.options = options_text(o);
  u.text = k.str();
  u.compile = [&k, o] { return std::unique_ptr<Binary>(compile_host_kernel(k, o, host_symbol(k, o), true)); };
  u.disk_target = disk_target;
  u.load = [&k, o](const std::string& object) {
    return std::unique_ptr<Binary>(load_host_kernel(k, host_symbol(k, o), object));
  };
  u.stages = [&k, o, notes = std::move(notes)](const Binary& b) {
    HostStages h = host_stages(k, o, b.name);
    StageTexts st;
    st.name = k.name;
    st.kernel = k.str() + notes;
    st.ir = std::move(h.ir);
    st.opt_ir = std::move(h.opt_ir);
    st.code = std::move(h.assembly);
    st.code_ext = ".s";
    st.target = host_target_description();
    return st;
  };
  return u;
}

// What the kernel text does not show but changes the code: which outputs take streaming stores
// and which operands are read through tiles.
std::string host_notes(const KernelStep& ks, const Schedule& s, const EmitOptions& o) {
  const Kernel& k = ks.kernel;
  auto ptr_list = [](const std::vector<int>& ptrs) {  // "ptr1, ptr2"
    std::string out;
    for (size_t i = 0; i < ptrs.size(); ++i) out += (i ? ", ptr" : "ptr") + std::to_string(ptrs[i]);
    return out;
  };
  std::vector<int> streamed_ptrs, tiled_ptrs;
  if (o.stream_stores)
    for (int out : streamed_outputs(k)) streamed_ptrs.push_back(k.outputs[out].ptr);
  for (int l : tiled_leaves(k)) tiled_ptrs.push_back(k.leaves[l].ptr);
  std::string text;
  if (!streamed_ptrs.empty())
    text += "  ; non-temporal stores to " + ptr_list(streamed_ptrs) + ": outputs and inputs of " +
            std::to_string(passing_bytes(ks, s)) + " bytes, streaming threshold " +
            std::to_string(stream_threshold_bytes()) + " bytes (ARRAYC_STREAM_BYTES)\n";
  if (!tiled_ptrs.empty())
    text += "  ; tiles of " + std::to_string(kHostTileRows) + " rows x " + std::to_string(kHostTileCols) +
            " columns, each tile of " + ptr_list(tiled_ptrs) + " copied to a buffer first: read across its rows\n";
  // host gather bandwidth and float16 speed (issue 28)
  if (std::optional<PrefetchedGather> g = prefetched_gather(k); g && o.gather_prefetch > 0)
    text += "  ; the gather from ptr" + std::to_string(k.leaves[g->gather_leaf].ptr) + " prefetched " +
            std::to_string(o.gather_prefetch) + " elements ahead into L2, in blocks of " +
            std::to_string(kGatherPrefetchBlock) + " (ARRAYC_GATHER_PREFETCH)\n";
  if (half_table_for(k))
    text += "  ; from " + std::to_string(half_table_min_elements()) +
            " elements on: run over the 65536 16-bit inputs into a table, then a lookup per element\n";
  return text;
}

// What a product step runs, for the stage texts: the BLAS routine, the epilogue's panels and
// OpenBLAS's configuration.
std::string blas_notes(const DotStep& d) {
  const char* t = d.dtype == DType::Float64 ? "d" : "s";
  const char* routine = d.form == ProductForm::Gram ? "syrk (upper triangle, then mirrored)"
                        : d.form == ProductForm::MatVec ? "gemv" : "gemm";
  std::string shapes = "[" + std::to_string(d.a.rows) + " x " + std::to_string(d.a.cols) + "] . [" +
                       std::to_string(d.b.rows) + " x " + std::to_string(d.b.cols) + "]";
  std::string text = "  ; BLAS " + std::string(t) + routine + ": " + shapes +
                     (d.batch > 1 ? ", batch of " + std::to_string(d.batch) : "") + "\n";
  // skinny products: the generated kernel, unless a's rows are strided (then BLAS's gemm)
  bool skinny = d.form == ProductForm::Skinny && skinny_reads(MatrixRef{nullptr, d.a.rows, d.a.cols, d.a.row_stride, d.a.col_stride});
  if (skinny) {
    int bits = host_vector_bits();
    int nc = static_cast<int>(skinny_column_chunks(d.b.cols, bits).front());  // the first chunk's
    text = "  ; generated skinny kernel " + skinny_symbol(d.dtype, nc, bits) + ": " + shapes + ", " +
           std::to_string(bits) + "-bit vectors along k, " + std::to_string(skinny_rows_per_step(nc, bits)) +
           " rows of a per step, rows spread over " + std::to_string(num_threads()) + " threads\n";
  }
  // tiled products: the generated kernel where the host takes it
  const bool batch = tiled_batch_step(d);
  bool tiled = tiled_step(d) || batch;
  if (tiled) {
    int bits = host_vector_bits();
    int64_t m = d.a.rows, n = d.b.cols, k = d.a.cols, tc = tile_cols(d.dtype, bits);
    const bool packed = !batch && tiled_packs(m, n, k);
    // as tiled_gemm reads a: packed by the packed path, else in place where it can be
    const TileRead read = packed ? TileRead::Packed : tile_read(MatrixRef{nullptr, m, k, d.a.row_stride, d.a.col_stride});
    std::string symbol = tile_symbol(d.dtype, bits, read == TileRead::Columns);
    text = "  ; generated tiled kernel " + symbol + ": " + shapes + (batch ? ", batch of " + std::to_string(d.batch) : "") +
           ", tiles of " + std::to_string(tile_rows(bits)) + " x " + std::to_string(tc) + " in " + std::to_string(bits) +
           "-bit registers, ";
    if (packed) {
      TilePackedPlan plan = tile_packed_plan(d.dtype, m, n, k, num_threads(), bits);
      int64_t depth = tile_depth(d.dtype, bits);
      text += "both operands packed, k in " + std::to_string((k + depth - 1) / depth) + " steps of " + std::to_string(depth) +
              ", each " + std::to_string(plan.tasks()) + " tasks of " + std::to_string(plan.rows) + " x " +
              std::to_string(std::min(n, plan.panels * tc)) + " over " + std::to_string(num_threads()) + " threads\n";
    } else {
      TileBlocks bl = tile_blocks(d.dtype, m, n, k, tile_threads_per_product(d.batch), bits);
      text += (batch ? std::to_string(d.batch) + " x " : "") + std::to_string(bl.count(m, n)) + " blocks of " +
              std::to_string(bl.rows) + " x " + std::to_string(bl.cols) + " over " + std::to_string(num_threads()) + " threads" +
              (read == TileRead::Columns ? ", a read by columns in place"
               : read == TileRead::Packed ? ", each block's rows of a packed a panel at a time" : "") + "\n";
    }
  }
  if (d.has_epilogue) {
    int64_t rows = epilogue_panel_rows(d);
    const char* by = skinny ? "the skinny kernel" : tiled ? "the tiled kernel" : "BLAS";
    text += tiled && d.epilogue_by_rows ? "  ; epilogue: the kernel below, on each block's rows in its task, as the tiled kernel finishes it\n"
            : rows >= d.batch * d.a.rows ? std::string("  ; epilogue: the kernel below, on the whole product after ") + by + "\n"
                                         : "  ; epilogue: the kernel below, on each panel of " + std::to_string(rows) +
                                               " rows as " + by + " computes it\n";
  }
  return skinny || tiled ? text : text + "  ; " + blas_info().str() + "\n";
}

class HostBackend final : public Backend {
 public:
  void check(Device) const override {}
  std::string target_id(Device) const override { return "cpu"; }

  std::unique_ptr<Launch> plan(const Step& step, const Schedule& s, Device, const PlanContext& ctx,
                               Compiler& c) override {
    if (const auto* d = std::get_if<DotStep>(&step.op)) {
      ARRAYC_INTERNAL_CHECK(d->in_dtype == d->dtype, "a host product with 16-bit operands");  // GPU only (issue 29)
      if (!d->has_epilogue) return std::make_unique<HostDotLaunch>(*d, nullptr, false);
      EmitOptions o = host_options(d->epilogue, s, ctx.user);
      return std::make_unique<HostDotLaunch>(*d, c.get(host_unit(d->epilogue.kernel, o, "")), o.stream_stores);
    }
    if (const auto* a = std::get_if<AxisStep>(&step.op)) return std::make_unique<HostAxisLaunch>(*a);
    const auto& ks = std::get<KernelStep>(step.op);
    if (ks.launch.parallel_extent == 0) return nullptr;
    EmitOptions o = host_options(ks, s, ctx.user);
    return std::make_unique<HostKernelLaunch>(ks, c.get(host_unit(ks.kernel, o, "")), o);
  }

  // jit's new-length path: a kernel step, or a product's epilogue, keeps like's function unless
  // its streaming choice (which depends on the output's size) changes; products without an
  // epilogue, scans and sorts look nothing up anyway.
  std::unique_ptr<Launch> replan(const Step& step, const Schedule& s, Device d, const PlanContext& ctx, Compiler& c,
                                 const Launch* like) override {
    const auto* ks = std::get_if<KernelStep>(&step.op);
    const auto* l = dynamic_cast<const HostKernelLaunch*>(like);
    if (ks && l && ks->launch.parallel_extent != 0 && host_options(*ks, s, ctx.user).stream_stores == l->streams())
      return std::make_unique<HostKernelLaunch>(*ks, *l);
    const auto* dot = std::get_if<DotStep>(&step.op);
    const auto* dl = dynamic_cast<const HostDotLaunch*>(like);
    if (dot && dl && (!dot->has_epilogue || host_options(dot->epilogue, s, ctx.user).stream_stores == dl->streams()))
      return std::make_unique<HostDotLaunch>(*dot, *dl);
    return plan(step, s, d, ctx, c);
  }

  std::vector<StageTexts> stages(const Step& step, const Schedule& s, Device, const PlanContext& ctx,
                                 Compiler& c) override {
    const auto* ks = std::get_if<KernelStep>(&step.op);
    std::string notes;
    if (const auto* a = std::get_if<AxisStep>(&step.op)) {  // a scan, sort or sparse scatter: a routine, no code
      StageTexts st;
      st.name = op_name(a->op);
      st.kernel = std::string("host routine: ") + op_name(a->op) + " (backend/host/" +
                  (a->more.empty() ? "axis_ops" : "scatter") + ".cpp)";
      st.target = host_target_description();
      return {st};
    }
    if (const auto* d = std::get_if<DotStep>(&step.op)) {  // OpenBLAS, then the epilogue's code if any
      notes = blas_notes(*d);
      if (!d->has_epilogue) {
        StageTexts st;
        st.name = "dot";
        st.kernel = notes;
        st.target = host_target_description();
        return {st};
      }
      ks = &d->epilogue;
    }
    EmitOptions o = host_options(*ks, s, ctx.user);
    CompileUnit u = host_unit(ks->kernel, o, notes + host_notes(*ks, s, o));
    return {u.stages(*c.get(u))};
  }

  void* alloc(Device, size_t bytes) override { return cpu_alloc(bytes); }
  void release(Device, void* p, size_t bytes) override { cpu_free(p, bytes); }
  void read(Device, void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }
  void upload(Device, void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }
  void copy(Device, void* dst, Device, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }
  void synchronize(Device) override {}
};

// ARRAYC_STREAM_BYTES (an integer >= 0), else the last-level cache's size, else 32 MiB.
int64_t default_stream_threshold() {
  if (std::optional<int64_t> n = stream_bytes_setting()) return *n;
  long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
  return llc > 0 ? llc : int64_t{32} << 20;
}

std::atomic<int64_t> g_stream_threshold{-1};  // -1: not resolved yet

}  // namespace

Backend& host_backend() {
  static HostBackend* b = new HostBackend;  // lives for the process, like the memory it owns
  return *b;
}

int64_t stream_threshold_bytes() {
  int64_t t = g_stream_threshold.load(std::memory_order_relaxed);
  if (t < 0) {
    t = default_stream_threshold();
    g_stream_threshold.store(t, std::memory_order_relaxed);
  }
  return t;
}

void set_stream_threshold_bytes(int64_t bytes) { g_stream_threshold.store(bytes, std::memory_order_relaxed); }

int64_t split_round() { return g_split_round.load(std::memory_order_relaxed); }
void set_split_round(int64_t indices) {
  ARRAYC_INTERNAL_CHECK(indices > 0, "set_split_round: not positive");
  g_split_round.store(indices, std::memory_order_relaxed);
}

int64_t epilogue_panel_rows(const DotStep& d) {
  int64_t m = d.batch * d.a.rows, n = std::max<int64_t>(1, d.b.cols), k = d.a.cols;
  if (!d.epilogue_by_rows || d.batch > 1 || d.form == ProductForm::Gram || tiled_step(d)) return m;
  int64_t elem = static_cast<int64_t>(dtype_size(d.dtype));
  // Each panel is a BLAS call that packs b again: with a b larger than a panel, that cost more
  // than the cache saved (W9 2048^3 f32 in panels of 1024 rows: 1.05x slower than whole).
  if (k * n * elem > kEpiloguePanelBytes) return m;
  int64_t rows = std::max<int64_t>(1, kEpiloguePanelBytes / (n * elem));
  return std::max<int64_t>(1, std::min(m, rows));
}

int64_t output_bytes(const KernelStep& ks, const Schedule& s) {
  int64_t bytes = 0;
  for (int out : ks.outputs)
    bytes += shape_numel(s.slots[out].shape) * static_cast<int64_t>(dtype_size(s.slots[out].dtype));
  return bytes;
}

int64_t passing_bytes(const KernelStep& ks, const Schedule& s) {
  int64_t out = output_bytes(ks, s);
  if (out == 0) return 0;
  const int64_t elements = shape_numel(s.slots[ks.outputs[0]].shape);
  int64_t in = 0;
  for (const KernelLeaf& lf : ks.kernel->leaves)
    if (lf.op == Op::Buffer && std::find(lf.strides.begin(), lf.strides.end(), StrideKind::Zero) == lf.strides.end())
      in += elements * static_cast<int64_t>(dtype_size(lf.dtype));
  return out + in;
}

EmitOptions host_options(const KernelStep& ks, const Schedule& s, const EmitOptions& user) {
  EmitOptions o = user;
  if (ks.kernel->is_reduction) return o;
  int64_t bytes = passing_bytes(ks, s);
  o.stream_stores = bytes > 0 && bytes >= stream_threshold_bytes();
  if (prefetched_gather(ks.kernel)) o.gather_prefetch = gather_prefetch_distance();  // host gather bandwidth (issue 28)
  return o;
}

}  // namespace arrayc::detail
