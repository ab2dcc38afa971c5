// The host JIT: optimizes a kernel's module at -O3 for this machine's CPU (its name and
// features, so AVX-512 is used where present) and links it through ORC LLJIT. ARRAYC_HOST_CPU
// names another CPU (an LLVM CPU name: x86-64-v3 for AVX2, x86-64-v4 for AVX-512, ...) to compile
// for instead; arrayc::Error at the first compile when LLVM does not know it, or when it has a
// feature that this machine lacks.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "codegen/body_emitter.h"

namespace arrayc::detail {

using KernelFn = void (*)(void* const* ptrs, const int64_t* params, int64_t begin, int64_t end);

// A kernel's arguments, run over part of its range by parallel_for (thread_pool.h):
//   KernelRange r{fn, ptrs, params}; parallel_for(n, grain, run_kernel_range, &r);
struct KernelRange {
  KernelFn fn;
  void* const* ptrs;
  const int64_t* params;
};
inline void run_kernel_range(void* ctx, int64_t begin, int64_t end) {
  auto* r = static_cast<KernelRange*>(ctx);
  r->fn(r->ptrs, r->params, begin, end);
}

// A kernel compiled for the host and linked into the process (Binary::name is its symbol). Its
// code is unloaded when the binary is destroyed (after the kernel cache and every Launch that
// held it let it go).
struct HostBinary : Binary {
  KernelFn fn = nullptr;
  std::shared_ptr<void> code;  // the JIT's hold on the code (a resource tracker); null: none
  ~HostBinary() override;
};

// Compiles a kernel for the host and links it; the function is `symbol` (default: a name made
// unique by a counter). With keep_artifact, the relocatable object the JIT linked is kept in
// Binary::artifact (for the disk cache). Thread-safe.
std::unique_ptr<HostBinary> compile_host_kernel(const Kernel& k, const EmitOptions& opts,
                                                const std::string& symbol = "", bool keep_artifact = false);

// Links an object that compile_host_kernel kept (in this or another process) as `symbol`.
// arrayc::Error when it does not link; the symbol is then not used again in this process.
std::unique_ptr<HostBinary> load_host_kernel(const Kernel& k, const std::string& symbol, const std::string& object);

// What a kept object depends on besides its kernel and options: the triple, CPU name and
// features the JIT compiles for, and the LLVM version.
std::string host_target_key();

// A kernel's stages as text, for inspection, ARRAYC_DEBUG and ARRAYC_DUMP_DIR: compiles a fresh
// copy named `symbol` (the compiled kernel's, so that the texts match it), which keeps the
// printing of modules out of every compile (a tenth of a kernel's compile time, more for large
// ones).
struct HostStages {
  std::string ir;      // as emitted
  std::string opt_ir;  // after the -O3 pipeline
  std::string assembly;
};
HostStages host_stages(const Kernel& k, const EmitOptions& opts, const std::string& symbol);

// The same for the CPU `cpu` (an LLVM CPU name), whichever the host: text only, nothing runs, so
// tests can check the code of every vector width on one machine. arrayc::Error for a CPU LLVM
// does not know.
HostStages host_stages_for_cpu(const Kernel& k, const EmitOptions& opts, const std::string& symbol,
                               const std::string& cpu);

// The features LLVM gives the CPU `cpu` ("+avx2", "+fma", ...); arrayc::Error for a CPU it does
// not know.
std::vector<std::string> cpu_features(const std::string& cpu);

// What ARRAYC_HOST_CPU's value `cpu` is checked with: arrayc::Error "ARRAYC_HOST_CPU=<cpu>: ..."
// when LLVM does not know the CPU, or when it has a feature that this machine lacks (code
// compiled for it could execute an instruction this machine does not have).
void check_host_cpu(const std::string& cpu);

// "x86_64-pc-linux-gnu znver5 +avx512f,..." : what kernels are compiled for.
std::string host_target_description();

// ---- generated products (backend/host/skinny.cpp, tiled.cpp): modules of their own emitter ----
// The widest vectors the JIT's target has, in bits: 512 with AVX-512, 256 with AVX, else 128
// (ARRAYC_HOST_CPU included).
int host_vector_bits();
// Compiles the module `emit` makes (one function, `symbol`) for the host and links it; fn is
// that function, to be cast to its own type. Thread-safe.
std::unique_ptr<HostBinary> compile_host_module(
    const std::string& symbol, const std::function<std::unique_ptr<llvm::Module>(llvm::LLVMContext&)>& emit);
// The same, compiled once per process and kept for its life: the function of the first call
// for `symbol` (a few KB of code; the generated product kernels). Thread-safe.
void* host_module_function(const std::string& symbol,
                           const std::function<std::unique_ptr<llvm::Module>(llvm::LLVMContext&)>& emit);

}  // namespace arrayc::detail
