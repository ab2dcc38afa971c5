// Matrix products: the choices arrayc makes for them, and how to see or change them.
//
// - Epilogue fusion: elementwise consumers of a product (bias add, activation, scale, cast) run
//   in the product's step: on the CPU on each panel of rows of the product right after OpenBLAS
//   has computed it, on a GPU on each register tile inside the product kernel (`:fused` shows
//   "epilogue of %N dot"). On by default; ARRAYC_EPILOGUE=0 or set_epilogue_fusion(false) turns
//   it off, for what is compiled after the call.
// - OpenBLAS: which of its kernel sets ("core") and how many threads it runs, chosen once, before
//   the first product (ARRAYC_BLAS_CORE, ARRAYC_BLAS_THREADS; docs/blas.md).
#pragma once
#include <string>

namespace arrayc {

void set_epilogue_fusion(bool enabled);
bool epilogue_fusion_enabled();

struct BlasInfo {
  std::string config;         // openblas_get_config(): version and build options
  std::string core;           // the kernels products run with
  std::string detected_core;  // the kernels OpenBLAS chose by itself when it was loaded
  std::string core_reason;    // why `core`
  int threads = 1;            // threads per product
  std::string threads_reason; // why `threads`
  std::string idle_threads;   // when OpenBLAS's idle threads stop spinning and sleep, and why
  std::string str() const;    // one line: "OpenBLAS 0.3.21 ..., core SkylakeX (why), 16 threads (why); idle threads sleep ..."
};
// Configures OpenBLAS if no product has yet, and says how it is configured. arrayc::Error when
// ARRAYC_BLAS_CORE or ARRAYC_BLAS_THREADS is not valid here.
BlasInfo blas_info();

}  // namespace arrayc
