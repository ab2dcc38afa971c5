#include "support/env.h"

#include <charconv>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <mutex>

#include "arrayc/error.h"

extern char** environ;

namespace arrayc::detail {
namespace {

// The value of a variable, "" when unset.
std::string env_string(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

// Warns once about ARRAYC_ variables that nothing reads.
void warn_unknown_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (char** e = environ; e && *e; ++e) {
      std::string entry = *e;
      if (entry.rfind("ARRAYC_", 0) != 0) continue;
      std::string name = entry.substr(0, entry.find('='));
      bool known = false;
      for (const EnvVar& v : env_vars()) known = known || name == v.name;
      if (!known) std::cerr << "arrayc: warning: " << name << " is set, but arrayc reads no such variable (see docs/env_vars.md)\n";
    }
  });
}

std::string value(const char* name) {
  warn_unknown_once();
  return env_string(name);
}

// The value of an integer setting from min to max: nullopt when unset or empty; else an
// arrayc::Error "<name> must be an integer <range><unit>, got '<value>'".
std::optional<int64_t> integer(const char* name, int64_t min, int64_t max, const char* unit = "") {
  std::string v = value(name);
  if (v.empty()) return std::nullopt;
  int64_t n = 0;
  auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || ptr != v.data() + v.size() || n < min || n > max) {
    std::string range = max == INT64_MAX ? ">= " + std::to_string(min)
                                         : "from " + std::to_string(min) + " to " + std::to_string(max);
    throw Error(std::string(name) + " must be an integer " + range + unit + ", got '" + v + "'" +
                (ec == std::errc::result_out_of_range ? " (out of range)" : ""));
  }
  return n;
}

bool flag(const char* name, bool fallback) {
  std::optional<int64_t> n = integer(name, 0, 1);
  return n ? *n != 0 : fallback;
}

}  // namespace

const std::vector<EnvVar>& env_vars() {
  static const std::vector<EnvVar> vars = {
      {"ARRAYC_DEBUG", "library"},       {"ARRAYC_DUMP_DIR", "library"},   {"ARRAYC_FUSION", "library"},
      {"ARRAYC_FAST_MATH", "library"},   {"ARRAYC_NUM_THREADS", "library"}, {"ARRAYC_STREAM_BYTES", "library"},
      {"ARRAYC_DEVICE", "library"},      {"ARRAYC_LIBDEVICE", "library"},  {"ARRAYC_GEMM_TILE", "library"},     {"ARRAYC_HOST_CPU", "library"},
      {"ARRAYC_GEMM_GROUP", "library"},
      {"ARRAYC_CACHE", "library"},       {"ARRAYC_CACHE_DIR", "library"},  {"ARRAYC_CACHE_MAX_BYTES", "library"},
      // several GPUs and processes
      {"ARRAYC_PEER_ACCESS", "library"},         {"ARRAYC_NCCL_LIBRARY", "library"}, {"ARRAYC_MPI_LIBRARY", "library"},
      {"ARRAYC_COLLECTIVE_TIMEOUT", "library"},
      {"ARRAYC_HISTORY", "tool"},        {"ARRAYC_BENCH_BREAK", "harness"}, {"ARRAYC_REQUIRE_GPU", "tests"},
      // transforms: the JAX reference gradients' tests
      {"ARRAYC_REQUIRE_JAX_DATA", "tests"}, {"ARRAYC_JAX_DATA", "tests"},
      // matrix products (issue 29): OpenBLAS's kernels and threads, epilogue fusion
      {"ARRAYC_BLAS_CORE", "library"},   {"ARRAYC_BLAS_THREADS", "library"}, {"ARRAYC_EPILOGUE", "library"},
      {"ARRAYC_TILED_PRODUCTS", "library"}, {"ARRAYC_MATMUL_PRECISION", "library"},
      // bounded memory (issue 26): the kernel cache's bound, the lazy graph size that evaluates
      {"ARRAYC_KERNEL_CACHE_MAX", "library"}, {"ARRAYC_AUTO_EVAL_NODES", "library"},
      // hardening (issue 26): calls per thread of the concurrency test (scripts/tsan.sh)
      {"ARRAYC_CONCURRENCY_CALLS", "tests"},
      // row chains (issue 29)
      {"ARRAYC_ROW_CHAINS", "library"},
      // host gather/float16 bandwidth (issue 28): the Python of the harness's CPU peers
      {"ARRAYC_PEER_PYTHON", "harness"}, {"ARRAYC_GATHER_PREFETCH", "library"},
      // GPU sort (issue 28): the pass kernel's ranking and tile, per-kernel timing
      {"ARRAYC_SORT_TUNE", "library"},   {"ARRAYC_SORT_PROFILE", "library"},
  };
  return vars;
}


int debug_level() {
  static int level = static_cast<int>(integer("ARRAYC_DEBUG", 0, 4).value_or(0));
  return level;
}

const std::string& dump_dir() {
  static const std::string dir = [] {
    std::string d = value("ARRAYC_DUMP_DIR");
    if (d.empty()) return d;
    std::error_code ec;
    std::filesystem::create_directories(d, ec);
    if (!std::filesystem::is_directory(d))
      throw Error("ARRAYC_DUMP_DIR: '" + d + "' is not a directory and cannot be made one" +
                  (ec ? " (" + ec.message() + ")" : ""));
    return d;
  }();
  return dir;
}

bool fusion_setting() { return flag("ARRAYC_FUSION", true); }
bool fast_math_setting() { return flag("ARRAYC_FAST_MATH", false); }

std::optional<int64_t> num_threads_setting(int64_t max_threads, const std::string& why) {
  return integer("ARRAYC_NUM_THREADS", 1, max_threads, why.c_str());
}

std::string host_cpu_setting() { return value("ARRAYC_HOST_CPU"); }

std::optional<int64_t> stream_bytes_setting() { return integer("ARRAYC_STREAM_BYTES", 0, INT64_MAX, " (bytes)"); }

// host gather bandwidth (issue 28)
std::optional<int64_t> gather_prefetch_setting() {
  return integer("ARRAYC_GATHER_PREFETCH", 0, 65536, " (elements ahead)");
}

std::string device_setting() {
  std::string d = value("ARRAYC_DEVICE");
  return d.empty() ? "cpu" : d;
}

std::string libdevice_setting() { return value("ARRAYC_LIBDEVICE"); }

std::vector<std::pair<std::string, std::string>> cuda_roots() {
  std::vector<std::pair<std::string, std::string>> roots = {{"/usr/local/cuda", ""}};
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (std::string root = env_string(var); !root.empty()) roots.push_back({root, std::string(" ($") + var + ")"});
  return roots;
}

bool cache_setting() { return flag("ARRAYC_CACHE", true); }

std::string cache_dir_setting() {
  if (std::string d = value("ARRAYC_CACHE_DIR"); !d.empty()) return d;
  if (std::string x = env_string("XDG_CACHE_HOME"); !x.empty()) return x + "/arrayc";
  std::string home = env_string("HOME");
  return (home.empty() ? std::string(".") : home) + "/.cache/arrayc";
}

int64_t cache_max_bytes_setting() {
  return integer("ARRAYC_CACHE_MAX_BYTES", 0, INT64_MAX, " (bytes)").value_or(int64_t{1} << 30);
}

std::string gemm_tile_setting() { return value("ARRAYC_GEMM_TILE"); }
std::optional<int64_t> gemm_group_setting() { return integer("ARRAYC_GEMM_GROUP", 1, 65536, " (rows of tiles; 1: row order)"); }

// several GPUs and processes
bool peer_access_setting() { return flag("ARRAYC_PEER_ACCESS", true); }
std::string nccl_library_setting() {
  std::string v = value("ARRAYC_NCCL_LIBRARY");
  return v.empty() ? "libnccl.so.2" : v;
}
std::string mpi_library_setting() {
  std::string v = value("ARRAYC_MPI_LIBRARY");
  return v.empty() ? "libmpi.so.40" : v;
}
int64_t collective_timeout_setting() {
  return integer("ARRAYC_COLLECTIVE_TIMEOUT", 1, 86400, " (seconds)").value_or(600);
}
// ---- matrix products (issue 29) ----
std::string blas_core_setting() { return value("ARRAYC_BLAS_CORE"); }
std::optional<int64_t> blas_threads_setting() { return integer("ARRAYC_BLAS_THREADS", 1, 1024); }
bool epilogue_setting() { return flag("ARRAYC_EPILOGUE", true); }
std::optional<int64_t> tiled_products_setting() { return integer("ARRAYC_TILED_PRODUCTS", 0, 1); }
// ---- bounded memory (issue 26) ----
int64_t kernel_cache_max_setting() {
  return integer("ARRAYC_KERNEL_CACHE_MAX", 1, INT64_MAX, " (compiled kernels)").value_or(4096);
}
int64_t auto_eval_nodes_setting() {
  return integer("ARRAYC_AUTO_EVAL_NODES", 0, INT64_MAX, " (graph nodes; 0: never)").value_or(100000);
}
std::optional<bool> tf32_products_setting() {
  std::string v = value("ARRAYC_MATMUL_PRECISION");
  if (v.empty()) return std::nullopt;
  if (v == "highest") return false;
  if (v == "high") return true;
  throw Error("ARRAYC_MATMUL_PRECISION must be 'highest' (exact float32 products) or 'high' (TF32 on GPUs "
              "with tensor cores), got '" + v + "'");
}
// ---- row chains (issue 29) ----
bool row_chain_setting() { return flag("ARRAYC_ROW_CHAINS", true); }

// GPU sort (issue 28)
std::string sort_tune_setting() { return value("ARRAYC_SORT_TUNE"); }
bool sort_profile_setting() { return flag("ARRAYC_SORT_PROFILE", false); }

}  // namespace arrayc::detail
