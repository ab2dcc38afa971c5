#include "engine/kernel_cache.h"

#include <fstream>
#include <iostream>
#include <mutex>
#include <unordered_map>

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

class KernelCache final : public Compiler {
 public:
  const Binary& get(const CompileUnit& u) override {
    std::shared_ptr<Entry> e;
    {
      std::lock_guard<std::mutex> lock(mu_);
      std::shared_ptr<Entry>& slot = map_[cache_key(u)];
      if (!slot) slot = std::make_shared<Entry>();
      e = slot;
    }
    std::lock_guard<std::mutex> lock(e->mu);  // one compile per key; other keys go on
    if (e->binary) {
      counters().cache_hits++;
      return *e->binary;
    }
    std::unique_ptr<Binary> b = u.compile();  // a throw leaves the entry empty for a retry
    counters().compiles++;
    counters().compile_us += static_cast<int64_t>(b->compile_ms * 1000);
    report(u, *b);
    e->binary = std::move(b);
    return *e->binary;
  }

 private:
  struct Entry {
    std::mutex mu;
    std::unique_ptr<Binary> binary;
  };
  std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<Entry>> map_;
};

}  // namespace

std::string cache_key(const CompileUnit& u) { return u.target + " " + u.options + "\n" + u.text; }

Compiler& kernel_cache() {
  static KernelCache* c = new KernelCache;  // binaries stay loaded for the process
  return *c;
}

}  // namespace arrayc::detail
