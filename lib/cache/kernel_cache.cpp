#include "cache/kernel_cache.h"

#include <fstream>
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
  std::string assembly = level >= 4 || !dir.empty() ? host_assembly(k, opts) : "";
  if (level >= 3) {
    std::cerr << "=== kernel " << c.symbol << " (" << c.compile_ms << " ms)\n" << k.str() << "=== llvm\n" << c.ir
              << "=== optimized\n" << c.opt_ir;
    if (level >= 4) std::cerr << "=== assembly\n" << assembly;
  }
  if (!dir.empty()) {
    auto write = [&](const char* ext, const std::string& text) {
      std::ofstream(dir + "/" + c.symbol + ext) << text;
    };
    write(".kernel", k.str());
    write(".ll", c.ir);
    write(".opt.ll", c.opt_ir);
    write(".s", assembly);
  }
}

}  // namespace

const CompiledKernel& host_kernel(const Kernel& k, const EmitOptions& opts) {
  static std::mutex mu;
  static auto* cache = new std::unordered_map<std::string, std::unique_ptr<CompiledKernel>>;
  std::string key = "cpu fast=" + std::to_string(opts.fast_math) + "\n" + k.str();
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
