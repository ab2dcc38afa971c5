// OpenBLAS's configuration: which of its kernel sets ("cores") products run with and how many
// threads, chosen once before the first product, and switchable for calibration.
//
// A DYNAMIC_ARCH OpenBLAS (Debian's) picks its core from the CPU when it is loaded. Its pick is
// not always the fastest (0.3.21 takes Sapphire Rapids for a Cooperlake, whose kernels ran W4
// 3.9x slower there than SkylakeX's). OpenBLAS reads OPENBLAS_CORETYPE only while loading, so
// arrayc does not set that variable: it re-runs OpenBLAS's core selection
// (gotoblas_dynamic_quit, then gotoblas_dynamic_init with OPENBLAS_CORETYPE set for the call)
// before its first product, when no BLAS call is in flight. docs/blas.md has the rules and the
// measurements behind them.
#pragma once
#include <string>
#include <vector>

#include "arrayc/products.h"

namespace arrayc::detail {

// Applies the configuration: the core (once) and a fixed thread count (ARRAYC_BLAS_THREADS)
// if there is one; without one, OpenBLAS runs the pool's count (at most the CPUs), which the
// pool sets (thread_pool.cpp). Called before every product.
void configure_blas();
// Makes OpenBLAS's idle threads sleep at once instead of spinning for 0.1 s beside
// arrayc's pool (blas_config.cpp), once; unless OPENBLAS_THREAD_TIMEOUT or GOTO_THREAD_TIMEOUT is
// set. Called by configure_blas and when the pool first sets OpenBLAS's thread count.
void quiet_blas_idle_threads();

// The cores this OpenBLAS can switch to on this CPU (empty when it cannot switch), fastest
// family last: e.g. Sandybridge, Haswell, Zen, SkylakeX, Cooperlake.
std::vector<std::string> blas_core_candidates();
// Switches to `core` (one of the candidates), to OpenBLAS's own pick ("openblas") or back to
// arrayc's choice ("default"); arrayc::Error otherwise. No product may run meanwhile
// (calibration).
void set_blas_core(const std::string& core);
// Fixes the threads per product (calibration); 0 returns to ARRAYC_BLAS_THREADS, else the pool's.
void set_blas_thread_count(int threads);

}  // namespace arrayc::detail
