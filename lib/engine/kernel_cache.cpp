#include "engine/kernel_cache.h"

#include <chrono>
#include <fstream>
#include <functional>
#include <iostream>
#include <mutex>
#include <unordered_map>

#include "support/env.h"
#include "support/stats.h"

namespace arrayc::detail {

namespace {

// ARRAYC_DEBUG >= 3 prints a new kernel's IR (>= 4 its assembly too); ARRAYC_DUMP_DIR gets one
// file per stage: <symbol>.kernel, .ll, .opt.ll, .s.
void report(const Kernel& k, const CompiledKernel& c, const EmitOptions& opts) {
  int level = debug_level();
  std::string dir = env_string("ARRAYC_DUMP_DIR");
  if (level < 3 && dir.empty()) return;
  HostStages st = host_stages(k, opts, c.symbol);
  if (level >= 3) {
    std::cerr << "=== kernel " << c.symbol << " (" << c.compile_ms << " ms)\n" << k.str() << "=== llvm\n" << st.ir
              << "=== optimized\n" << st.opt_ir;
    if (level >= 4) std::cerr << "=== assembly\n" << st.assembly;
  }
  if (!dir.empty()) {
    auto write = [&](const char* ext, const std::string& text) {
      std::ofstream(dir + "/" + c.symbol + ext) << text;
    };
    write(".kernel", k.str());
    write(".ll", st.ir);
    write(".opt.ll", st.opt_ir);
    write(".s", st.assembly);
  }
}

void report_gpu(const std::string& kernel_text, const GpuKernel& g) {
  int level = debug_level();
  std::string dir = env_string("ARRAYC_DUMP_DIR");
  if (level >= 3)
    std::cerr << "=== kernel " << g.ptx.entry << " (sm_" << g.ptx.sm << ")\n" << kernel_text << "=== llvm\n"
              << g.ptx.ir << "=== optimized\n" << g.ptx.opt_ir << (level >= 4 ? "=== ptx\n" + g.ptx.ptx : "");
  if (!dir.empty()) {
    auto write = [&](const char* ext, const std::string& text) { std::ofstream(dir + "/" + g.ptx.entry + ext) << text; };
    write(".kernel", kernel_text);
    write(".ll", g.ptx.ir);
    write(".opt.ll", g.ptx.opt_ir);
    write(".ptx", g.ptx.ptx);
  }
}


// One cache for every GPU kernel, keyed by device, architecture and the kernel's text.
const GpuKernel& cached_gpu_kernel(int dev, const std::string& text, const std::function<PtxKernel(int sm)>& compile,
                                   const std::function<void(const GpuKernel&)>& report) {
  static std::mutex mu;
  static auto* cache = new std::unordered_map<std::string, std::unique_ptr<GpuKernel>>;
  int sm = cuda::device_info(dev).sm();
  std::string key = "gpu:" + std::to_string(dev) + " sm_" + std::to_string(sm) + "\n" + text;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = cache->find(key); it != cache->end()) {
      counters().cache_hits++;
      return *it->second;
    }
  }
  auto start = std::chrono::steady_clock::now();
  auto g = std::make_unique<GpuKernel>();
  g->ptx = compile(sm);
  g->fn = &cuda::load(dev, g->ptx.ptx, g->ptx.entry);
  counters().compiles++;
  counters().compile_us += std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count();
  report(*g);
  std::lock_guard<std::mutex> lock(mu);
  auto [it, inserted] = cache->emplace(key, std::move(g));
  return *it->second;
}

}  // namespace

const GpuKernel& gpu_kernel(const Kernel& k, int dev, const EmitOptions& opts_in) {
  EmitOptions opts = opts_in;
  opts.target = EmitOptions::Target::Nvptx;
  return cached_gpu_kernel(
      dev, "fast=" + std::to_string(opts.fast_math) + "\n" + k.str(), [&](int sm) { return emit_ptx(k, sm, opts); },
      [&](const GpuKernel& g) { report_gpu(k.str(), g); });
}

const GpuKernel& gpu_gemm_kernel(const GemmKernel& gk, int dev) {
  return cached_gpu_kernel(
      dev, gk.str(), [&](int sm) { return emit_gemm_ptx(gk, sm); }, [&](const GpuKernel& g) { report_gpu(gk.str(), g); });
}

const CompiledKernel& host_kernel(const Kernel& k, const EmitOptions& opts) {
  static std::mutex mu;
  static auto* cache = new std::unordered_map<std::string, std::unique_ptr<CompiledKernel>>;
  std::string key = "cpu fast=" + std::to_string(opts.fast_math) + " stream=" + std::to_string(opts.stream_stores) + "\n" + k.str();
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = cache->find(key); it != cache->end()) {
      counters().cache_hits++;
      return *it->second;
    }
  }
  std::unique_ptr<CompiledKernel> c = compile_host_kernel(k, opts);  // outside the lock
  counters().compiles++;
  report(k, *c, opts);
  counters().compile_us += static_cast<int64_t>(c->compile_ms * 1000);
  std::lock_guard<std::mutex> lock(mu);
  auto [it, inserted] = cache->emplace(key, std::move(c));
  return *it->second;
}

}  // namespace arrayc::detail
