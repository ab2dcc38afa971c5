#include "engine/kernel_cache.h"

#include <chrono>
#include <fstream>
#include <iostream>
#include <list>
#include <mutex>
#include <unordered_map>

#include "build_id.h"
#include "engine/disk_cache.h"
#include "support/env.h"
#include "support/stats.h"

namespace arrayc::detail {
namespace {

// ARRAYC_DEBUG >= 3 prints a new binary's kernel text and IR (>= 4 its assembly or PTX too);
// ARRAYC_DUMP_DIR gets one file per stage: <name>.kernel, .ll, .opt.ll, and .s or .ptx.
void report(const CompileUnit& u, const Binary& b) {
  int level = debug_level();
  const std::string& dir = dump_dir();
  if (level < 3 && dir.empty()) return;
  StageTexts st = u.stages(b);
  if (level >= 3) {
    std::cerr << "=== kernel " << b.name << " (" << st.target << ", " << b.compile_ms << " ms)\n"
              << st.kernel << "=== llvm\n" << st.ir << "=== optimized\n" << st.opt_ir;
    if (level >= 4) std::cerr << (st.code_ext == ".ptx" ? "=== ptx\n" : "=== assembly\n") << st.code;
  }
  if (!dir.empty()) {
    auto write = [&](const char* ext, const std::string& text) {
      std::string path = dir + "/" + b.name + ext;
      std::ofstream f(path);
      if (!(f << text).flush())  // a dump is a side channel: the computation goes on
        std::cerr << "arrayc: warning: ARRAYC_DUMP_DIR: cannot write " << path << "\n";
    };
    write(".kernel", st.kernel);
    write(".ll", st.ir);
    write(".opt.ll", st.opt_ir);
    write(st.code_ext.c_str(), st.code);
  }
}

// The binary stored on disk for u, loaded; null when there is none or it does not load (then it
// is recompiled, and the new artifact replaces the stored one).
std::unique_ptr<Binary> load_from(DiskCache& disk, const std::string& key, const CompileUnit& u) {
  auto start = std::chrono::steady_clock::now();
  std::optional<std::string> artifact = disk.load(key);
  if (!artifact) {
    counters().disk_misses++;
    return nullptr;
  }
  try {
    std::unique_ptr<Binary> b = u.load(*artifact);
    counters().disk_hits++;
    counters().disk_load_us +=
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count();
    return b;
  } catch (const std::exception& ex) {
    counters().disk_bad_entries++;
    if (debug_level() >= 1) std::cerr << "arrayc: disk cache: " << ex.what() << "\n";
    return nullptr;
  }
}

// Binaries by key, the least recently used evicted past kernel_cache_max_setting() (the
// ARRAYC_KERNEL_CACHE_MAX environment variable). A binary is shared: a Program planned with it
// keeps it alive, and its code loaded, after the cache has let it go.
class KernelCache final : public Compiler {
 public:
  std::shared_ptr<const Binary> get(const CompileUnit& u) override {
    std::string key = cache_key(u);
    std::shared_ptr<Entry> e;
    {
      std::lock_guard<std::mutex> lock(mu_);
      std::shared_ptr<Entry>& slot = map_[key];
      if (!slot) slot = std::make_shared<Entry>();
      e = slot;
      if (e->in_lru) lru_.splice(lru_.begin(), lru_, e->lru);
    }
    std::lock_guard<std::mutex> lock(e->mu);  // one compile per key; other keys go on
    if (e->binary) {
      counters().cache_hits++;
      return e->binary;
    }
    DiskCache* disk = u.load && !u.disk_target.empty() ? process_disk_cache() : nullptr;
    std::string disk_key = disk ? cache_key_across_processes(u) : "";
    std::unique_ptr<Binary> b = disk ? load_from(*disk, disk_key, u) : nullptr;
    if (!b) {
      b = u.compile();  // a throw leaves the entry empty for a retry
      counters().compiles++;
      counters().compile_us += static_cast<int64_t>(b->compile_ms * 1000);
      report(u, *b);
      if (disk && !b->artifact.empty()) disk->store(disk_key, b->artifact);
    }
    std::string().swap(b->artifact);  // stored: no need to keep it in memory
    e->binary = std::move(b);
    keep(key, e);
    return e->binary;
  }

  size_t size() {
    std::lock_guard<std::mutex> lock(mu_);
    return lru_.size();
  }

 private:
  struct Entry {
    std::mutex mu;
    std::shared_ptr<const Binary> binary;
    bool in_lru = false;                     // guarded by the cache's mu_, as lru
    std::list<std::string>::iterator lru;    // its key's place in lru_
  };

  // A new binary joins the front of the order; past the bound, the back leaves the cache.
  void keep(const std::string& key, const std::shared_ptr<Entry>& e) {
    static const size_t max = static_cast<size_t>(kernel_cache_max_setting());
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(key);
    if (it == map_.end() || it->second != e || e->in_lru) return;
    lru_.push_front(key);
    e->lru = lru_.begin();
    e->in_lru = true;
    while (lru_.size() > max) {
      map_.erase(lru_.back());  // a thread still holding the entry keeps its binary
      lru_.pop_back();
      counters().kernel_cache_evictions++;
    }
  }

  std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<Entry>> map_;
  std::list<std::string> lru_;  // keys of the entries with a binary, most recently used first
};

KernelCache& the_cache() {
  static KernelCache* c = new KernelCache;  // never destroyed: Programs may outlive static teardown
  return *c;
}

}  // namespace

std::string cache_key(const CompileUnit& u) { return u.target + " " + u.options + "\n" + u.text; }

std::string cache_key_across_processes(const CompileUnit& u) {
  return "arrayc " ARRAYC_BUILD_ID "\n" + std::string(u.disk_target) + "\n" + cache_key(u);
}

Compiler& kernel_cache() { return the_cache(); }

int64_t kernel_cache_size() { return static_cast<int64_t>(the_cache().size()); }

}  // namespace arrayc::detail
