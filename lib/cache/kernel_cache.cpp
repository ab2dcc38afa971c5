#include "cache/kernel_cache.h"

#include <mutex>
#include <unordered_map>

#include "support/stats.h"

namespace arrayc::detail {

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
  counters().compile_us += static_cast<int64_t>(c->compile_ms * 1000);
  std::lock_guard<std::mutex> lock(mu);
  auto [it, inserted] = cache->emplace(key, std::move(c));
  return *it->second;
}

}  // namespace arrayc::detail
