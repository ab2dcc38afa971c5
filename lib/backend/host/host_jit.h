// The host JIT: optimizes a kernel's module at -O3 for this machine's CPU (its name and
// features, so AVX-512 is used where present) and links it through ORC LLJIT.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "backend/backend.h"
#include "codegen/body_emitter.h"

namespace arrayc::detail {

using KernelFn = void (*)(void* const* ptrs, const int64_t* params, int64_t begin, int64_t end);

// A kernel compiled for the host and linked into the process (Binary::name is its symbol).
struct HostBinary : Binary {
  KernelFn fn = nullptr;
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

// "x86_64-pc-linux-gnu znver5 +avx512f,..." : what kernels are compiled for.
std::string host_target_description();

}  // namespace arrayc::detail
