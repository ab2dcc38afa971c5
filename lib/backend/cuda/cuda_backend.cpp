#include "backend/cuda/cuda_backend.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <string_view>

#include "arrayc/error.h"
#include "backend/cuda/cuda_driver.h"
#include "backend/cuda/launch_plan.h"
#include "backend/cuda/axis_launch.h"
#include "codegen/nvptx/gemm.h"
#include "codegen/nvptx/half_lookup.h"
#include "codegen/nvptx/ptx_kernel.h"
#include "kernel/half_table.h"
#include "support/interrupt.h"
#include "support/stats.h"

namespace arrayc::detail {
namespace {

// PTX made without a GPU picks product tiles as for an H100/H200 (132 SMs).
constexpr int kAssumedSMs = 132;

// A kernel compiled (by LLVM, then to a cubin by the driver's linker) once per architecture, not
// per device: GPUs of one kind share the cache entry, and each loads the cubin into its own
// context when a launch on it is planned (cuda::load keeps the module per device). `ptx` always
// has the entry, the architecture and the launch facts; its texts (IR, PTX) only when the kernel
// was compiled in this process, not loaded from the disk cache.
struct GpuBinary : Binary {
  PtxKernel ptx;
  std::string cubin;
  std::string link_log;  // the driver linker's info log (registers, spills); "" when loaded from disk
};

const GpuBinary& gpu_binary(const Binary& b) { return static_cast<const GpuBinary&>(b); }

// The binary's kernel, loaded on d.
const cuda::Function& function(const GpuBinary& g, Device d) { return cuda::load(d.index, g.cubin, g.ptx.entry); }

// The kind of GPU, not which one: the cache key's target.
std::string target_of(Device d) { return "cuda sm_" + std::to_string(cuda::device_info(d.index).sm()); }

// The disk cache's artifact of a GPU kernel: a header line, the launch facts, then the cubin.
constexpr std::string_view kArtifactMagic = "arrayc-cubin 1\n";

std::string artifact_of(const PtxKernel& p, const std::string& cubin) {
  return std::string(kArtifactMagic) + p.entry + "\n" + std::to_string(p.sm) + " " +
         std::to_string(p.elements_per_thread) + "\n" + cubin;
}

// The GPU binary in an artifact, loaded on d; throws (a bad entry, recompiled by the cache).
std::unique_ptr<Binary> load_artifact(Device d, const std::string& a) {
  auto bad = [](const char* why) { return Error(std::string("a stored GPU kernel is malformed: ") + why); };
  if (a.compare(0, kArtifactMagic.size(), kArtifactMagic) != 0) throw bad("no header");
  size_t e = a.find('\n', kArtifactMagic.size());
  size_t f = e == std::string::npos ? e : a.find('\n', e + 1);
  if (f == std::string::npos) throw bad("truncated header");
  auto g = std::make_unique<GpuBinary>();
  g->ptx.entry = a.substr(kArtifactMagic.size(), e - kArtifactMagic.size());
  if (std::sscanf(a.c_str() + e + 1, "%d %d", &g->ptx.sm, &g->ptx.elements_per_thread) != 2 ||
      g->ptx.elements_per_thread < 1 || g->ptx.sm != cuda::device_info(d.index).sm())
    throw bad("bad launch facts");
  g->cubin = a.substr(f + 1);
  function(*g, d);  // the driver's verdict on the cubin belongs to the load
  g->name = g->ptx.entry;
  return g;
}

// What the disk cache keys a GPU unit on beside its text: the driver (which compiles PTX to the
// cubin) and everything that decides the PTX. One string per architecture, for the process.
std::string_view disk_target_of(Device d) {
  static std::mutex mu;
  static std::map<int, std::string> targets;
  int sm = cuda::device_info(d.index).sm();
  std::lock_guard<std::mutex> lock(mu);
  std::string& t = targets[sm];
  if (t.empty()) t = gpu_disk_target(cuda::driver_version(), sm);
  return t;
}

// A unit compiled to PTX by `emit` (for the device's architecture), linked to a cubin by the
// driver on d and loaded there; `text` is its cache key's core and what the stages show as its
// kernel.
CompileUnit gpu_unit(Device d, std::string options, std::string name, std::string text,
                     std::function<PtxKernel(int sm)> emit) {
  CompileUnit u;
  u.target = target_of(d);
  u.options = std::move(options);
  u.text = std::move(text);
  u.compile = [d, emit] {
    auto g = std::make_unique<GpuBinary>();
    auto start = std::chrono::steady_clock::now();
    g->ptx = emit(cuda::device_info(d.index).sm());
    g->cubin = cuda::link_cubin(d.index, g->ptx.ptx, g->ptx.entry, g->link_log);
    function(*g, d);  // the driver's verdict on the cubin belongs to the compile
    g->name = g->ptx.entry;
    g->artifact = artifact_of(g->ptx, g->cubin);
    g->compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return std::unique_ptr<Binary>(std::move(g));
  };
  u.disk_target = disk_target_of(d);
  u.load = [d](const std::string& artifact) { return load_artifact(d, artifact); };
  u.stages = [d, name = std::move(name), text = u.text, emit](const Binary& b) {
    const GpuBinary& g = gpu_binary(b);
    const cuda::Function& f = function(g, d);
    // A kernel loaded from the disk cache kept no texts: emit them again (no driver compile).
    PtxKernel p = g.ptx.ptx.empty() ? emit(g.ptx.sm) : g.ptx;
    StageTexts st;
    st.name = name;
    st.kernel = text;
    st.ir = std::move(p.ir);
    st.opt_ir = std::move(p.opt_ir);
    st.code = std::move(p.ptx);
    st.code_ext = ".ptx";
    st.binary = "registers " + std::to_string(f.registers) + ", local (spill) bytes " + std::to_string(f.local_bytes) +
                ", shared bytes " + std::to_string(f.shared_bytes) + ", max threads per block " +
                std::to_string(f.max_threads) + "\n" +
                (g.link_log.empty() ? std::string("(cubin loaded from the disk cache)\n") : g.link_log);
    st.target = "nvptx64-nvidia-cuda sm_" + std::to_string(g.ptx.sm) + " (" + d.str() + ")";
    return st;
  };
  return u;
}

EmitOptions ptx_options(const EmitOptions& user) {
  EmitOptions o;
  o.target = EmitOptions::Target::Nvptx;
  o.fast_math = user.fast_math;
  return o;
}

// The unit of a kernel (the Program's; it must outlive the unit).
CompileUnit kernel_unit(Device d, const Kernel& k, const EmitOptions& user) {
  EmitOptions o = ptx_options(user);
  return gpu_unit(d, "fast=" + std::to_string(o.fast_math), k.name, k.str(), [&k, o](int sm) { return emit_ptx(k, sm, o); });
}

CompileUnit gemm_unit(Device d, const GemmKernel& gk) {
  return gpu_unit(d, "", gk.name(), gk.str(), [gk](int sm) { return emit_gemm_ptx(gk, sm); });
}

// The transpose kernel that copies a TF32 product's operand along k first (gemm.h).
CompileUnit transpose_unit(Device d) {
  return gpu_unit(d, "", "transpose_32bit", "kernel transpose_32bit\n", [](int sm) { return emit_transpose_ptx(sm); });
}

// The lookup of a float16 table run (kernel/half_table.h) for outputs of `bytes` bytes.
CompileUnit half_lookup_unit(Device d, int bytes) {
  std::string name = "half_lookup_" + std::to_string(8 * bytes);
  return gpu_unit(d, "", name, "kernel " + name + "\n", [bytes](int sm) { return emit_half_lookup_ptx(bytes, sm); });
}

// GPU scans and sorts (issue 28): one unit per kernel of backend/cuda/axis_launch.h.
CompileUnit axis_unit(Device d, const AxisKernel& k) {
  return gpu_unit(d, "", k.name(), k.str(), [k](int sm) { return emit_axis_ptx(k, sm); });
}

// What ptx_launch_config reads of a compiled kernel: its launch facts, without its texts (a
// launch keeps them to be planned again at other sizes: CudaBackend::replan).
PtxKernel launch_facts(const PtxKernel& p) {
  PtxKernel f;
  f.entry = p.entry;
  f.sm = p.sm;
  f.elements_per_thread = p.elements_per_thread;
  return f;
}

// A kernel step in one launch.
class KernelLaunch final : public Launch {
 public:
  KernelLaunch(Device d, const KernelStep& ks, const cuda::Function& fn, PtxKernel facts, PtxLaunchConfig c)
      : dev_(d.index), ks_(ks), fn_(fn), facts_(std::move(facts)), c_(c) {}
  void run(const std::vector<void*>& ptrs) const override {
    counters().kernel_launches++;
    PtxArgs a(ks_.kernel, ptrs, ks_.launch.params, 0, ks_.launch.parallel_extent);
    cuda::launch(dev_, fn_, c_.grid, c_.block, a.data());
  }
  const cuda::Function& function() const { return fn_; }
  const PtxKernel& facts() const { return facts_; }

 private:
  int dev_;
  const KernelStep& ks_;
  const cuda::Function& fn_;
  PtxKernel facts_;
  PtxLaunchConfig c_;
};

// A single-output reduction over a long range, in two launches (launch_plan.h): per-chunk
// partials into a scratch buffer, then the combine kernel, both compiled when planned.
class SplitLaunch final : public Launch {
 public:
  SplitLaunch(Device d, const KernelStep& ks, const cuda::Function& fn, PtxKernel facts, PtxLaunchConfig c,
              ReductionSplit split, const cuda::Function& comb, PtxKernel comb_facts, PtxLaunchConfig cc)
      : dev_(d.index), ks_(ks), fn_(fn), facts_(std::move(facts)), c_(c), split_(std::move(split)), comb_(comb),
        comb_facts_(std::move(comb_facts)), cc_(cc) {}
  void run(const std::vector<void*>& ptrs) const override {
    counters().kernel_launches++;
    const Kernel& k = ks_.kernel;
    if (ks_.launch.reduce_extent > round_length(split_.outputs)) return run_rounds(ptrs);
    void* scratch = cuda::alloc(dev_, split_.partial_bytes);
    std::vector<void*> first = ptrs;
    first[k.outputs[0].ptr] = scratch;
    PtxArgs a1(k, first, split_.first.params, 0, ks_.launch.parallel_extent, split_.outputs, 0);
    cuda::launch(dev_, fn_, c_.grid, c_.block, a1.data(), 0, static_cast<unsigned>(c_.chunks));
    PtxArgs a2(split_.combine, {scratch, ptrs[k.outputs[0].ptr]}, split_.second.params, 0, split_.outputs, 0,
               split_.mean_count);
    cuda::launch(dev_, comb_, cc_.grid, cc_.block, a2.data());
    cuda::free(dev_, scratch, split_.partial_bytes);  // later reuse is ordered on the same stream
  }
  const cuda::Function& function() const { return fn_; }
  const PtxKernel& facts() const { return facts_; }
  const cuda::Function& combine_function() const { return comb_; }
  const PtxKernel& combine_facts() const { return comb_facts_; }

 private:
  // A reduction too long for one launch (gpu_round_work): rounds of round_length() reduced
  // indices. Scratch row 0 holds the running result and rows 1..chunks a round's partials; the
  // combine kernel folds rows 1..chunks (the first round) or 0..chunks into row 0, and the last
  // round's into the real output, which alone divides a mean (by the whole count). Each column
  // is read and written by one block of the combine kernel, so row 0 is updated in place. The
  // stream is synchronized after each round so that arrayc::interrupt() stops the loop promptly.
  void run_rounds(const std::vector<void*>& ptrs) const {
    const Kernel& k = ks_.kernel;
    const int64_t total = ks_.launch.reduce_extent, len = round_length(split_.outputs), chunks = c_.chunks;
    const int R = k.outer_rank();
    const size_t row = static_cast<size_t>(split_.outputs) * dtype_size(k.outputs[0].dtype);
    const size_t bytes = row * static_cast<size_t>(chunks + 1);
    char* scratch = static_cast<char*>(cuda::alloc(dev_, bytes));
    struct Free {  // also when an interrupt or a launch error leaves the loop
      int dev;
      void* p;
      size_t n;
      ~Free() {
        try {
          cuda::synchronize(dev);
        } catch (...) {
        }
        cuda::free(dev, p, n);
      }
    } release{dev_, scratch, bytes};
    std::vector<void*> first = ptrs;
    first[k.outputs[0].ptr] = scratch + row;
    std::vector<int64_t> p1 = split_.first.params;
    for (int64_t begin = 0; begin < total; begin += len) {
      const int64_t end = std::min(total, begin + len);
      p1[k.rank] = begin;
      p1[k.rank + 1] = end;
      PtxArgs a1(k, first, p1, 0, ks_.launch.parallel_extent, split_.outputs, 0);
      cuda::launch(dev_, fn_, c_.grid, c_.block, a1.data(), 0, static_cast<unsigned>(chunks));
      // combine params (split_reduction): [outer..., chunk extent, begin, end, finalize, scratch
      // offset, scratch strides..., chunk stride, output offset, output strides..., 0]
      std::vector<int64_t> p2 = split_.second.params;
      const int64_t rows = begin == 0 ? chunks : chunks + 1;
      p2[R] = rows;
      p2[R + 2] = rows;
      const bool last = end == total;
      void* out = ptrs[k.outputs[0].ptr];
      if (!last) {  // into row 0, contiguous, no mean division
        p2[R + 3] = 0;
        p2[2 * R + 6] = 0;
        for (int d = 0; d < R; ++d) p2[2 * R + 7 + d] = p2[R + 5 + d];
        out = scratch;
      }
      PtxArgs a2(split_.combine, {begin == 0 ? scratch + row : scratch, out}, p2, 0, split_.outputs, 0,
                 split_.mean_count);
      cuda::launch(dev_, comb_, cc_.grid, cc_.block, a2.data());
      if (last) break;
      cuda::synchronize(dev_);
      check_interrupt();
    }
  }

  int dev_;
  const KernelStep& ks_;
  const cuda::Function& fn_;
  PtxKernel facts_;
  PtxLaunchConfig c_;
  ReductionSplit split_;
  const cuda::Function& comb_;
  PtxKernel comb_facts_;
  PtxLaunchConfig cc_;
};

// The elements of a TMA kernel's tensor maps: its 16-bit operands, or float32 rounded to TF32.
cuda::TensorMapElement tensor_map_element(const GemmKernel& gk) {
  if (gk.in_dtype == DType::BFloat16) return cuda::TensorMapElement::BFloat16;
  if (gk.in_dtype == DType::Float16) return cuda::TensorMapElement::Float16;
  return cuda::TensorMapElement::TFloat32;
}

// Each 16-bit pattern in order (kernel/half_table.h), on device dev: uploaded once, kept for the
// process.
void* half_patterns_on(int dev) {
  static std::mutex mu;
  static std::map<int, void*> on;
  std::lock_guard<std::mutex> lock(mu);
  void*& p = on[dev];
  if (!p) {
    const size_t bytes = kHalfPatterns * sizeof(uint16_t);
    p = cuda::alloc(dev, bytes);
    cuda::copy_to_device(dev, p, half_patterns(), bytes);
  }
  return p;
}

// An elementwise step of one contiguous float16/bfloat16 input, long enough, through a table
// (kernel/half_table.h): the step's own kernel over the 65536 patterns into a table, then the
// lookup kernel over the step's elements. Run directly, float16 W8's float32 math (about 90
// instructions an element) kept it at float32 W8's time on an H100, for half the bytes. The
// table is kept with the launch and made again only when the parameters of its run (the
// kernel's constants among them) differ from the last run's, so that a step run again is one
// launch. Every launch is on the device's one stream, in the order of this lock, so a lookup
// queued before the table is remade reads the table it was queued with.
class HalfTableLaunch final : public Launch {
 public:
  HalfTableLaunch(Device d, const KernelStep& ks, const cuda::Function& fn, PtxLaunchConfig table_cfg, const HalfTable& t,
                  const cuda::Function& lookup, int sms)
      : dev_(d.index), ks_(ks), fn_(fn), table_cfg_(table_cfg), t_(t), lookup_(lookup),
        shape_(half_lookup_shape(static_cast<int>(dtype_size(t.out)))), sms_(sms) {
    if (shape_.shared_bytes > 48 * 1024) cuda::allow_dynamic_shared(dev_, lookup_, shape_.shared_bytes);
  }
  ~HalfTableLaunch() override { cuda::free(dev_, table_, table_bytes()); }  // to the allocator's cache
  void run(const std::vector<void*>& ptrs) const override {
    note_half_table_run();
    const Kernel& k = ks_.kernel;
    std::vector<int64_t> params = half_table_params(t_, k, ks_.launch.params);
    std::lock_guard<std::mutex> lock(mu_);
    if (!table_) table_ = cuda::alloc(dev_, table_bytes());
    if (params != made_with_) {
      made_with_.clear();  // until the launch below is queued
      std::vector<void*> p = ptrs;
      p[t_.in_ptr] = half_patterns_on(dev_);
      p[t_.out_ptr] = table_;
      PtxArgs a(k, p, params, 0, kHalfPatterns);
      cuda::launch(dev_, fn_, table_cfg_.grid, table_cfg_.block, a.data());
      counters().kernel_launches += 1;
      made_with_ = std::move(params);
    }
    void* table = table_;
    void* in = ptrs[t_.in_ptr];
    void* out = ptrs[t_.out_ptr];
    int64_t v[3] = {ks_.launch.parallel_extent, ks_.launch.params[k.param_block(t_.in_index)],
                    ks_.launch.params[k.param_block(t_.out_index)]};
    void* args[] = {&table, &in, &out, &v[0], &v[1], &v[2]};
    // A table in shared memory: one block an SM, each copying it once; else up to 32 blocks an SM.
    const int64_t runs = (v[0] + shape_.run() - 1) / shape_.run();
    const int64_t blocks = std::clamp<int64_t>(runs, 1, int64_t{shape_.shared_bytes ? 1 : 32} * sms_);
    cuda::launch(dev_, lookup_, static_cast<unsigned>(blocks), static_cast<unsigned>(shape_.threads), args,
                 shape_.shared_bytes);
    counters().kernel_launches += 1;
  }

 private:
  size_t table_bytes() const { return kHalfPatterns * dtype_size(t_.out); }

  int dev_;
  const KernelStep& ks_;
  const cuda::Function& fn_;
  PtxLaunchConfig table_cfg_;  // the kernel's launch over the 65536 patterns
  HalfTable t_;
  const cuda::Function& lookup_;
  HalfLookupShape shape_;
  int sms_;
  mutable std::mutex mu_;                   // the table and what it was made with
  mutable void* table_ = nullptr;           // device memory, kept until the launch is destroyed
  mutable std::vector<int64_t> made_with_;  // the parameters of the table's run; empty: not made
};

// Whether step ks runs through a table (kernel/half_table.h), and if so which.
std::optional<HalfTable> gpu_half_table(const KernelStep& ks) {
  std::optional<HalfTable> t = half_table_for(ks.kernel);
  if (t && ks.launch.parallel_extent >= half_table_min_elements()) return t;
  return std::nullopt;
}

// A float product: the generated tiled kernel, with its epilogue inside when gk has one (then
// the step's ptrs after a, b and the unused c are the epilogue's, and its params follow ours).
class GemmLaunch final : public Launch {
 public:
  // `key`: gk.str(), which a step of other sizes compares to reuse fn (CudaBackend::replan).
  // `shared`: the dynamic shared memory of gk's tile (gemm_dynamic_shared).
  GemmLaunch(Device d, const GemmProblem& p, const GemmKernel& gk, std::string key, const cuda::Function& fn,
             unsigned shared, const DotStep* step, int sms)
      : dev_(d.index), fn_(fn), key_(std::move(key)), grid_(gemm_grid(gk, p)),
        block_(static_cast<unsigned>(gk.threads())),
        v_{p.m, p.n, p.k, p.batch, p.a_rs, p.a_cs, p.a_bs, p.b_rs, p.b_cs, p.b_bs, gemm_tile_group(gk, p, sms)},
        epilogue_(gk.epilogue != nullptr),
        reduces_(gk.epilogue && gk.epilogue->is_reduction),
        shared_(shared) {
    if (epilogue_) v_.insert(v_.end(), step->epilogue.launch.params.begin(), step->epilogue.launch.params.end());
    if (shared_ > 48 * 1024) cuda::allow_dynamic_shared(dev_, fn_, shared_);
    if (gk.tma) maps_ = {gemm_tma_operand(gk, p, true), gemm_tma_operand(gk, p, false)}, element_ = tensor_map_element(gk);
    cluster_ = static_cast<unsigned>(gk.cluster);
  }
  void run(const std::vector<void*>& ptrs) const override {
    counters().kernel_launches++;
    std::vector<void*> p{ptrs[0], ptrs[1]};
    if (epilogue_) p.insert(p.end(), ptrs.begin() + 3, ptrs.end());
    else p.push_back(ptrs[2]);
    std::vector<int64_t> v = v_;
    std::vector<void*> args;
    for (void*& x : p) args.push_back(&x);
    for (int64_t& x : v) args.push_back(&x);
    void* scratch = reduces_ ? reduce_scratch() : nullptr;
    if (reduces_) args.push_back(&scratch);
    cuda::TensorMap maps[2];  // the TMA kernel's: over this call's operands
    for (size_t i = 0; i < maps_.size(); ++i) {
      cuda::encode_tensor_map(maps[i], element_, ptrs[i], maps_[i].dims, maps_[i].strides, maps_[i].box);
      args.push_back(&maps[i]);
    }
    cuda::launch(dev_, fn_, grid_, block_, args.data(), shared_, 1, cluster_);
  }
  ~GemmLaunch() override {
    if (scratch_) cuda::free(dev_, scratch_, gemm_reduce_scratch(grid_));  // to the allocator's cache
  }
  const cuda::Function& function() const { return fn_; }
  const std::string& key() const { return key_; }
  unsigned shared() const { return shared_; }

 private:
  // A reduction epilogue's scratch (gemm.h), kept with the launch: its counter is zeroed once,
  // and each launch leaves it zero for the next, which the device's one stream queues after it.
  void* reduce_scratch() const {
    std::lock_guard<std::mutex> lock(mu_);
    if (!scratch_) {
      void* p = cuda::alloc(dev_, gemm_reduce_scratch(grid_));
      cuda::zero(dev_, p, kGemmReduceHeader);
      scratch_ = p;
    }
    return scratch_;
  }

  int dev_;
  const cuda::Function& fn_;
  std::string key_;
  unsigned grid_, block_;
  std::vector<int64_t> v_;
  bool epilogue_;
  bool reduces_;  // a reduction epilogue: the kernel takes scratch (reduce_scratch)
  mutable std::mutex mu_;
  mutable void* scratch_ = nullptr;
  unsigned shared_;  // dynamic shared memory (the tensor-core pipeline's stages)
  std::vector<TmaOperand> maps_;  // a TMA kernel's operands as tensor maps (gemm_tma_operand)
  cuda::TensorMapElement element_ = cuda::TensorMapElement::Float16;
  unsigned cluster_ = 1;  // blocks a cluster
};

// A TF32 product on the warpgroup kernel with operands along their outer dims (gemm.h,
// gemm_transposed_operand; `which`: bits 1 A, 2 B): each copied transposed into scratch memory
// by the transpose kernel, then the product reading the copies.
class TransposeThenGemmLaunch final : public Launch {
 public:
  TransposeThenGemmLaunch(Device d, std::unique_ptr<Launch> gemm, const cuda::Function& transpose, const GemmProblem& p,
                          int which, int sms)
      : dev_(d.index), gemm_(std::move(gemm)), fn_(transpose) {
    for (int operand : {1, 2}) {
      if (!(which & operand)) continue;
      const GemmTranspose t = gemm_transpose(p, operand);
      copies_.push_back({operand - 1, {t.x, t.y, t.batch, t.x_stride, t.y_stride, t.batch_stride},
                         static_cast<unsigned>(std::clamp<int64_t>(t.tiles(), 1, int64_t{16} * sms)),
                         static_cast<size_t>(t.x * t.y * t.batch) * 4});
    }
  }
  void run(const std::vector<void*>& ptrs) const override {
    std::vector<void*> p = ptrs;
    for (const Copy& c : copies_) {
      counters().kernel_launches++;
      void* scratch = cuda::alloc(dev_, c.bytes);
      void* src = ptrs[c.ptr];
      std::vector<int64_t> v = c.v;
      std::vector<void*> args{&src, &scratch};
      for (int64_t& x : v) args.push_back(&x);
      cuda::launch(dev_, fn_, c.grid, 256, args.data());
      p[c.ptr] = scratch;
    }
    gemm_->run(p);
    for (const Copy& c : copies_) cuda::free(dev_, p[c.ptr], c.bytes);  // later reuse is ordered on the same stream
  }

 private:
  struct Copy {
    int ptr;                // 0: A, 1: B
    std::vector<int64_t> v;  // the transpose kernel's i64 arguments
    unsigned grid;
    size_t bytes;
  };
  int dev_;
  std::unique_ptr<Launch> gemm_;
  const cuda::Function& fn_;
  std::vector<Copy> copies_;
};

// A product whose epilogue cannot run inside the product kernel (gemm_epilogue_problem says why):
// the product into scratch memory, then the epilogue kernel reading it there. No product kernel
// (null) for an empty product whose reduction epilogue still writes its identity.
class GemmThenEpilogueLaunch final : public Launch {
 public:
  GemmThenEpilogueLaunch(Device d, std::unique_ptr<Launch> gemm, std::unique_ptr<Launch> epilogue,
                         std::vector<int> product_ptrs, size_t bytes)
      : dev_(d.index), gemm_(std::move(gemm)), epilogue_(std::move(epilogue)), product_ptrs_(std::move(product_ptrs)),
        bytes_(bytes) {}
  void run(const std::vector<void*>& ptrs) const override {
    void* scratch = gemm_ ? cuda::alloc(dev_, bytes_) : nullptr;
    if (gemm_) gemm_->run({ptrs[0], ptrs[1], scratch});
    std::vector<void*> e(ptrs.begin() + 3, ptrs.end());
    for (int i : product_ptrs_) e[i] = scratch;
    if (epilogue_) epilogue_->run(e);
    if (gemm_) cuda::free(dev_, scratch, bytes_);  // later reuse is ordered on the same stream
  }

 private:
  int dev_;
  std::unique_ptr<Launch> gemm_, epilogue_;
  std::vector<int> product_ptrs_;  // the epilogue's reads of the product (p + p.T: two)
  size_t bytes_;
};

// A scan or sort (plan_gpu_axis's launch), with the kernels it loaded by their text, which a step
// of other sizes reuses (CudaBackend::replan).
class AxisKernelsLaunch final : public Launch {
 public:
  using Kernels = std::vector<std::pair<std::string, const cuda::Function*>>;
  AxisKernelsLaunch(std::unique_ptr<Launch> inner, Kernels kernels)
      : inner_(std::move(inner)), kernels_(std::move(kernels)) {}
  void run(const std::vector<void*>& ptrs) const override { inner_->run(ptrs); }
  const Kernels& kernels() const { return kernels_; }

 private:
  std::unique_ptr<Launch> inner_;
  Kernels kernels_;
};

// The product kernel of a step, with its epilogue inside when that works; `why` says why not.
GemmKernel gemm_of(const DotStep& d, const GemmProblem& p, int sms, std::string* why = nullptr) {
  GemmKernel gk = choose_gemm(p, sms);
  if (!d.has_epilogue) return gk;
  int leaf = -1;
  std::vector<int> reads = product_inputs(d);
  std::string problem = reads.size() > 1 ? "it reads the product twice"
                                         : gemm_epilogue_problem(d.epilogue.kernel, d.epilogue.launch, reads[0], p, leaf);
  // A reduction's combine in the block reads one slot a warp (at most 32 warps).
  if (problem.empty() && d.epilogue.kernel->is_reduction && (gk.tile.threads() % 32 || gk.tile.threads() > 1024))
    problem = "its reduction needs the product kernel's tile threads in whole warps, at most 1024";
  if (problem.empty()) {
    gk.epilogue = &*d.epilogue.kernel;
    gk.product_leaf = leaf;
  }
  if (why) *why = problem;
  return gk;
}

// Where an operand starts, as far as alignment goes: a captured buffer's real address; a slot's
// (fresh allocations are 256-byte aligned) and an aligned parameter's 0; else 4 (misaligned).
uintptr_t alignment_address(const MatrixOperand& m, DType t, const PlanContext& ctx) {
  uintptr_t off = static_cast<uintptr_t>(m.offset) * dtype_size(t);
  switch (m.src.kind) {
    case Source::Kind::Storage: return reinterpret_cast<uintptr_t>(m.src.storage->data) + off;
    case Source::Kind::Slot: return off;
    case Source::Kind::Param: return (ctx.param_is_aligned(m.src.index) ? 0 : 4) + off;
    case Source::Kind::Product: break;  // an epilogue's: never a product's operand
  }
  return off;
}

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
  p.gram = d.form == ProductForm::Gram;
  p.in_dtype = d.in_dtype;  // 16-bit operands (issue 29)
  return p;
}

// The problem on an sm_<sm> GPU whose driver makes tensor maps and launches clusters as told.
GemmProblem device_problem(const DotStep& d, uintptr_t a_addr, uintptr_t b_addr, int sm, bool tf32, bool tensor_maps,
                           bool clusters) {
  GemmProblem p = gemm_problem(d, a_addr, b_addr);
  p.tf32 = tf32 && sm >= 80;
  p.half_mma = sm >= 80;
  p.wgmma = sm == 90;  // Hopper's warpgroup mma: sm_90a code runs on sm_90 only
  p.tma = p.wgmma && tensor_maps;
  p.clusters = p.tma && clusters;
  return p;
}

class CudaBackend final : public Backend {
 public:
  void check(Device d) const override {
    int n = cuda::device_count();
    if (n == 0)
      throw Error("gpu(" + std::to_string(d.index) + "): no CUDA device is available (" + cuda::unavailable_reason() + ")");
    if (d.index < 0 || d.index >= n)
      throw Error("gpu(" + std::to_string(d.index) + "): no such CUDA device; this machine has " + std::to_string(n) +
                  " (gpu(0) .. gpu(" + std::to_string(n - 1) + "))");
  }
  std::string target_id(Device d) const override { return target_of(d); }

  std::unique_ptr<Launch> plan(const Step& step, const Schedule& s, Device d, const PlanContext& ctx,
                               Compiler& c) override {
    int sms = cuda::device_info(d.index).multiprocessors;
    if (const auto* a = std::get_if<AxisStep>(&step.op)) return plan_axis(d, *a, sms, c, nullptr);  // scans, sorts
    if (const auto* dot = std::get_if<DotStep>(&step.op)) {
      GemmProblem p = problem(*dot, d, ctx);
      if (p.m == 0 || p.n == 0 || p.batch == 0)  // nothing to compute but a reduction's identity
        return dot->has_epilogue && dot->epilogue.kernel->is_reduction
                   ? std::make_unique<GemmThenEpilogueLaunch>(d, nullptr, plan_kernel(d, dot->epilogue, ctx, c, sms),
                                                              product_inputs(*dot), 0)
                   : nullptr;
      const int which = gemm_transposed_operand(p, sms);  // TF32 on wgmma: an operand copied along k first
      GemmProblem kp = which ? gemm_transposed_problem(p, which) : p;
      GemmKernel gk = gemm_of(*dot, kp, sms);
      CompileUnit u = gemm_unit(d, gk);
      std::shared_ptr<const Binary> b = c.get(u);  // launches keep cuda::load's function
      const GpuBinary& g = gpu_binary(*b);
      std::unique_ptr<Launch> gemm = std::make_unique<GemmLaunch>(d, kp, gk, std::move(u.text), function(g, d),
                                                                  gemm_dynamic_shared(gk, g.ptx.sm), dot, sms);
      if (which) {
        const cuda::Function& t = function(gpu_binary(*c.get(transpose_unit(d))), d);
        gemm = std::make_unique<TransposeThenGemmLaunch>(d, std::move(gemm), t, p, which, sms);
      }
      if (!dot->has_epilogue || gk.epilogue) return gemm;
      size_t bytes = static_cast<size_t>(p.batch * p.m * p.n) * dtype_size(p.dtype);
      return std::make_unique<GemmThenEpilogueLaunch>(d, std::move(gemm), plan_kernel(d, dot->epilogue, ctx, c, sms),
                                                      product_inputs(*dot), bytes);
    }
    return plan_kernel(d, std::get<KernelStep>(step.op), ctx, c, sms);
  }

  // A kernel step's launch (a product's epilogue run apart among them): the kernel, split in two
  // where a reduction needs it, or a float16 table's; null where it has nothing to compute.
  std::unique_ptr<Launch> plan_kernel(Device d, const KernelStep& ks, const PlanContext& ctx, Compiler& c, int sms) {
    if (ks.launch.parallel_extent == 0) return nullptr;
    // The launches keep the loaded function (cuda::load's), not the binary.
    std::shared_ptr<const Binary> b = c.get(kernel_unit(d, ks.kernel, ctx.user));
    const GpuBinary& g = gpu_binary(*b);
    if (std::optional<HalfTable> t = gpu_half_table(ks)) {  // float16 speed (issue 28)
      LaunchParams over{half_table_params(*t, ks.kernel, ks.launch.params), kHalfPatterns, 0};
      const cuda::Function& lookup =
          function(gpu_binary(*c.get(half_lookup_unit(d, static_cast<int>(dtype_size(t->out))))), d);
      return std::make_unique<HalfTableLaunch>(d, ks, function(g, d), ptx_launch_config(ks.kernel, g.ptx, over, sms), *t,
                                               lookup, sms);
    }
    PtxLaunchConfig cfg = ptx_launch_config(ks.kernel, g.ptx, ks.launch, sms);
    if (!cfg.split) return std::make_unique<KernelLaunch>(d, ks, function(g, d), launch_facts(g.ptx), cfg);
    ReductionSplit split = split_reduction(ks.kernel, ks.launch, cfg.chunks);
    std::shared_ptr<const Binary> cb = c.get(kernel_unit(d, split.combine, EmitOptions{}));
    const GpuBinary& comb = gpu_binary(*cb);
    PtxLaunchConfig cc = ptx_launch_config(split.combine, comb.ptx, split.second, sms);
    return std::make_unique<SplitLaunch>(d, ks, function(g, d), launch_facts(g.ptx), cfg, std::move(split),
                                         function(comb, d), launch_facts(comb.ptx), cc);
  }

  // jit's new-length path (Backend::replan): the step has like's code at other sizes. A kernel
  // step keeps like's loaded kernel (and a split reduction its combine kernel) with a grid made
  // from the new sizes; a product keeps like's kernel when the new shape chooses the same tile;
  // a scan or sort keeps the kernels like loaded that it needs again. Nothing is looked up in the
  // kernel cache then. Otherwise (a reduction that now needs a split, another product tile, a
  // product whose epilogue runs apart) the step is planned again.
  std::unique_ptr<Launch> replan(const Step& step, const Schedule& s, Device d, const PlanContext& ctx, Compiler& c,
                                 const Launch* like) override {
    int sms = cuda::device_info(d.index).multiprocessors;
    if (const auto* ks = std::get_if<KernelStep>(&step.op)) {
      if (ks->launch.parallel_extent == 0) return nullptr;
      const auto* kl = dynamic_cast<const KernelLaunch*>(like);
      const auto* sl = dynamic_cast<const SplitLaunch*>(like);
      if ((kl || sl) && !gpu_half_table(*ks)) {
        const cuda::Function& fn = kl ? kl->function() : sl->function();
        const PtxKernel& facts = kl ? kl->facts() : sl->facts();
        PtxLaunchConfig cfg = ptx_launch_config(ks->kernel, facts, ks->launch, sms);
        if (!cfg.split) return std::make_unique<KernelLaunch>(d, *ks, fn, facts, cfg);
        if (sl) {  // the combine kernel depends on the kernel alone, not on the sizes
          ReductionSplit split = split_reduction(ks->kernel, ks->launch, cfg.chunks);
          PtxLaunchConfig cc = ptx_launch_config(split.combine, sl->combine_facts(), split.second, sms);
          return std::make_unique<SplitLaunch>(d, *ks, fn, facts, cfg, std::move(split), sl->combine_function(),
                                               sl->combine_facts(), cc);
        }
      }
    } else if (const auto* dot = std::get_if<DotStep>(&step.op)) {
      if (const auto* gl = dynamic_cast<const GemmLaunch*>(like)) {
        GemmProblem p = problem(*dot, d, ctx);
        if (p.m == 0 || p.n == 0 || p.batch == 0) return plan(step, s, d, ctx, c);
        GemmKernel gk = gemm_of(*dot, p, sms);
        if ((!dot->has_epilogue || gk.epilogue) && !gemm_transposed_operand(p, sms)) {
          std::string key = gk.str();
          if (key == gl->key())
            return std::make_unique<GemmLaunch>(d, p, gk, std::move(key), gl->function(), gl->shared(), dot, sms);
        }
      }
    } else if (const auto* a = std::get_if<AxisStep>(&step.op)) {
      if (const auto* al = dynamic_cast<const AxisKernelsLaunch*>(like))
        return plan_axis(d, *a, sms, c, &al->kernels());
    }
    return plan(step, s, d, ctx, c);
  }

  std::vector<StageTexts> stages(const Step& step, const Schedule& s, Device d, const PlanContext& ctx,
                                 Compiler& c) override {
    if (const auto* a = std::get_if<AxisStep>(&step.op)) {  // scans and sorts: their kernels
      std::vector<StageTexts> out;
      for (const AxisKernel& k : gpu_axis_kernels(*a)) {
        CompileUnit au = axis_unit(d, k);
        out.push_back(au.stages(*c.get(au)));
      }
      return out;
    }
    if (const auto* dot = std::get_if<DotStep>(&step.op)) {
      std::string why;
      const int sms = cuda::device_info(d.index).multiprocessors;
      GemmProblem p = problem(*dot, d, ctx);
      std::vector<StageTexts> out;
      if (const int which = gemm_transposed_operand(p, sms)) {  // the transposes first, and why
        CompileUnit t = transpose_unit(d);
        out.push_back(t.stages(*c.get(t)));
        out.back().kernel = std::string("; ") + (which == 3 ? "A and B" : which == 1 ? "A" : "B") +
                            " copied along k first: TF32 on the warpgroup kernel reads both operands along k\n" +
                            out.back().kernel;
        p = gemm_transposed_problem(p, which);
      }
      GemmKernel gk = gemm_of(*dot, p, sms, &why);
      out.push_back(gemm_unit(d, gk).stages(*c.get(gemm_unit(d, gk))));
      if (dot->has_epilogue && !gk.epilogue) {  // the epilogue as a kernel of its own, and why
        CompileUnit e = kernel_unit(d, dot->epilogue.kernel, ctx.user);
        out.push_back(e.stages(*c.get(e)));
        out.back().kernel = "; not inside the product kernel: " + why + "\n" + out.back().kernel;
      }
      return out;
    }
    const KernelStep& ks = std::get<KernelStep>(step.op);
    CompileUnit u = kernel_unit(d, ks.kernel, ctx.user);
    std::vector<StageTexts> out{u.stages(*c.get(u))};
    if (std::optional<HalfTable> t = gpu_half_table(ks)) {  // float16 speed (issue 28)
      out.back().kernel += "  ; " + std::to_string(ks.launch.parallel_extent) + " elements (from " +
                           std::to_string(half_table_min_elements()) +
                           " on): run over the 65536 16-bit inputs into a table, then the lookup kernel per element\n";
      CompileUnit l = half_lookup_unit(d, static_cast<int>(dtype_size(t->out)));
      out.push_back(l.stages(*c.get(l)));
    }
    return out;
  }

  void* alloc(Device d, size_t bytes) override { return cuda::alloc(d.index, bytes); }
  void release(Device d, void* p, size_t bytes) override { cuda::free(d.index, p, bytes); }
  void read(Device d, void* dst, const void* src, size_t bytes) override { cuda::copy_to_host(d.index, dst, src, bytes); }
  void upload(Device d, void* dst, const void* src, size_t bytes) override {
    cuda::copy_to_device(d.index, dst, src, bytes);
  }
  void copy(Device to, void* dst, Device from, const void* src, size_t bytes) override {
    if (to.index == from.index) cuda::copy_device(to.index, dst, src, bytes);
    else cuda::copy_peer(to.index, dst, from.index, src, bytes);
  }
  void synchronize(Device d) override { cuda::synchronize(d.index); }

 private:
  // TF32 and the 16-bit products need the tensor cores of sm_80 and later.
  static GemmProblem problem(const DotStep& d, Device dev, const PlanContext& ctx) {
    return device_problem(d, alignment_address(d.a, d.in_dtype, ctx), alignment_address(d.b, d.in_dtype, ctx),
                          cuda::device_info(dev.index).sm(), ctx.tf32_products, cuda::has_tensor_maps(),
                          cuda::has_clusters());
  }

  // A scan or sort, its kernels taken from `known` (a launch of the step at other sizes) where it
  // has them, else through the kernel cache.
  static std::unique_ptr<Launch> plan_axis(Device d, const AxisStep& a, int sms, Compiler& c,
                                           const AxisKernelsLaunch::Kernels* known) {
    AxisKernelsLaunch::Kernels used;
    std::unique_ptr<Launch> inner = plan_gpu_axis(d.index, a, sms, [&](const AxisKernel& k) -> const cuda::Function& {
      std::string key = k.str();
      const cuda::Function* fn = nullptr;
      const AxisKernelsLaunch::Kernels* lists[] = {known, &used};
      for (const auto* list : lists)
        for (size_t i = 0; fn == nullptr && list && i < list->size(); ++i)
          if ((*list)[i].first == key) fn = (*list)[i].second;
      if (!fn) fn = &function(gpu_binary(*c.get(axis_unit(d, k))), d);
      used.emplace_back(std::move(key), fn);
      return *fn;
    });
    if (!inner) return nullptr;
    return std::make_unique<AxisKernelsLaunch>(std::move(inner), std::move(used));
  }
};

}  // namespace

std::string gpu_disk_target(int driver_version, int sm) {
  return "cuda driver " + std::to_string(driver_version) + " " + ptx_target_key(sm);
}

Backend& cuda_backend() {
  static CudaBackend* b = new CudaBackend;  // lives for the process, like the memory it owns
  return *b;
}

std::string ptx_for(const Step& step, const Schedule& s, int sm, const PlanContext& ctx) {
  if (const auto* a = std::get_if<AxisStep>(&step.op)) {  // scans and sorts: their kernels
    std::string ptx;
    for (const AxisKernel& k : gpu_axis_kernels(*a)) ptx += "// ---- " + k.name() + "\n" + emit_axis_ptx(k, sm).ptx;
    return ptx;
  }
  if (const auto* dot = std::get_if<DotStep>(&step.op)) {
    // Operands are assumed 16-byte aligned (as fresh buffers are).
    if (!is_float(dot->dtype)) return "";
    Device d = step_device(step, s);
    int sms = d.kind == Device::Kind::GPU ? cuda::device_info(d.index).multiprocessors : kAssumedSMs;
    // as a driver that makes tensor maps and launches clusters (CUDA 12+) runs it
    GemmProblem p = device_problem(*dot, 0, 0, sm, ctx.tf32_products, true, true);
    std::string ptx;
    if (const int which = gemm_transposed_operand(p, sms)) {  // TF32 on wgmma: operands copied along k first
      ptx = "// ---- transpose_32bit (" + std::string(which == 3 ? "A and B" : which == 1 ? "A" : "B") + ")\n" +
            emit_transpose_ptx(sm).ptx;
      p = gemm_transposed_problem(p, which);
    }
    std::string why;
    GemmKernel gk = gemm_of(*dot, p, sms, &why);
    ptx += "// ---- " + gk.name() + "\n" + emit_gemm_ptx(gk, sm).ptx;
    if (dot->has_epilogue && !gk.epilogue)  // a CPU product's epilogue, or one the GPU runs on its own
      ptx += "// ---- " + dot->epilogue.kernel->name + "\n// not inside the product kernel: " + why + "\n" +
             emit_ptx(dot->epilogue.kernel, sm, ptx_options(ctx.user)).ptx;
    return ptx;
  }
  const KernelStep& ks = std::get<KernelStep>(step.op);
  const Kernel& k = ks.kernel;
  std::string ptx = "// ---- " + k.name + "\n" + emit_ptx(k, sm, ptx_options(ctx.user)).ptx;
  if (std::optional<HalfTable> t = gpu_half_table(ks)) {  // float16 speed (issue 28)
    const int bytes = static_cast<int>(dtype_size(t->out));
    ptx += "// ---- half_lookup_" + std::to_string(8 * bytes) + "\n" + emit_half_lookup_ptx(bytes, sm).ptx;
  }
  return ptx;
}

}  // namespace arrayc::detail
