// Environment variables: every one that arrayc's library reads is read and checked here, and
// nowhere else (docs/env_vars.md is the same table in prose). A value out of its range raises
// arrayc::Error naming the variable, its allowed values and what it got; a variable named
// ARRAYC_* that nothing reads (a typo) gets one warning on stderr.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace arrayc::detail {

struct EnvVar {
  const char* name;
  const char* read_by;  // "library", "tool", "harness", "tests"
};
// Every ARRAYC_ variable of the project, library, tool, harness and tests alike.
const std::vector<EnvVar>& env_vars();

// ARRAYC_DEBUG, 0-4: 0 quiet, 1 the graph after each pass, 2 also fusion decisions, 3 also LLVM
// IR before and after optimization, 4 also assembly or PTX. Printed to stderr.
int debug_level();
// ARRAYC_DUMP_DIR: "" when unset, else the directory (made when missing; arrayc::Error when it
// cannot be).
const std::string& dump_dir();
// ARRAYC_FUSION and ARRAYC_FAST_MATH, 0 or 1: the starting values of set_fusion/set_fast_math.
bool fusion_setting();
bool fast_math_setting();
// ARRAYC_NUM_THREADS, from 1 to max_threads (`why` says where the bound comes from, in the
// error); nullopt when unset.
std::optional<int64_t> num_threads_setting(int64_t max_threads, const std::string& why = "");
// ARRAYC_HOST_CPU: "" when unset (this machine's CPU), else an LLVM CPU name (checked by the
// host JIT).
std::string host_cpu_setting();
// ARRAYC_STREAM_BYTES, an integer >= 0; nullopt when unset.
std::optional<int64_t> stream_bytes_setting();
// host gather bandwidth (issue 28): ARRAYC_GATHER_PREFETCH, elements ahead from 0 (off) to 65536;
// nullopt when unset.
std::optional<int64_t> gather_prefetch_setting();
// ARRAYC_DEVICE: "cpu" when unset (parsed by default_device()).
std::string device_setting();
// ARRAYC_LIBDEVICE, then the CUDA roots to look under ($CUDA_HOME, $CUDA_PATH), each with the
// variable it came from ("" for the built-in /usr/local/cuda).
std::string libdevice_setting();
std::vector<std::pair<std::string, std::string>> cuda_roots();
// ARRAYC_CACHE, 0 or 1 (default 1): the disk cache on or off.
bool cache_setting();
// ARRAYC_CACHE_DIR, else $XDG_CACHE_HOME/arrayc, else $HOME/.cache/arrayc.
std::string cache_dir_setting();
// ARRAYC_CACHE_MAX_BYTES, an integer >= 0 (default 1 GiB).
int64_t cache_max_bytes_setting();
// ARRAYC_GEMM_TILE: "" when unset (parsed by choose_gemm).
std::string gemm_tile_setting();
// ARRAYC_GEMM_GROUP: nullopt when unset, else 1 to 65536 (gemm_tile_group).
std::optional<int64_t> gemm_group_setting();
// Several GPUs and processes (docs/distributed.md). ARRAYC_PEER_ACCESS, 0 or 1 (default 1): copies
// between GPUs peer to peer where possible, or always staged through pinned host memory.
bool peer_access_setting();
// ARRAYC_NCCL_LIBRARY / ARRAYC_MPI_LIBRARY: the library to dlopen ("libnccl.so.2",
// "libmpi.so.40" when unset).
std::string nccl_library_setting();
std::string mpi_library_setting();
// ARRAYC_COLLECTIVE_TIMEOUT, seconds from 1 to 86400 (default 600): how long a collective across
// processes may wait before it is aborted with arrayc::Error.
int64_t collective_timeout_setting();
// ---- matrix products (issue 29) ----
// ARRAYC_BLAS_CORE: "" when unset, else an OpenBLAS core name or "openblas" (checked by
// backend/host/blas_config.cpp).
std::string blas_core_setting();
// ARRAYC_BLAS_THREADS, from 1 to 1024; nullopt when unset (BLAS then runs the pool's count).
std::optional<int64_t> blas_threads_setting();
// ARRAYC_EPILOGUE, 0 or 1 (default 1): elementwise consumers of a CPU product fuse into its step.
bool epilogue_setting();
// ARRAYC_TILED_PRODUCTS: nullopt when unset (the host's rule, backend/host/tiled.h), else 0
// (BLAS for every general product) or 1 (the generated tiled kernel wherever the products pass
// allows it).
std::optional<int64_t> tiled_products_setting();
// ARRAYC_MATMUL_PRECISION: highest (false) or high (true, TF32 allowed); nullopt when unset.
std::optional<bool> tf32_products_setting();
// ---- bounded memory (issue 26) ----
// ARRAYC_KERNEL_CACHE_MAX, an integer >= 1 (default 4096): the in-memory kernel cache's bound.
int64_t kernel_cache_max_setting();
// ARRAYC_AUTO_EVAL_NODES, an integer >= 0 (default 100000; 0: never): the size of an
// unevaluated graph at which the op that builds it evaluates it (api/auto_eval.cpp).
int64_t auto_eval_nodes_setting();
// ---- row chains (issue 29) ----
// ARRAYC_ROW_CHAINS, 0 or 1 (default 1): reductions along rows fuse into their consumers' kernel.
bool row_chain_setting();
// ---- GPU sort (issue 28) ----
// ARRAYC_SORT_TUNE: "" when unset, else RANK/ITEMS (parsed by backend/cuda/axis_launch.cpp).
std::string sort_tune_setting();
// ARRAYC_SORT_PROFILE, 0 or 1 (default 0): each GPU sort kernel waited for, timed, and printed.
bool sort_profile_setting();

}  // namespace arrayc::detail
