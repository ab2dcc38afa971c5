// The in-memory kernel cache. The key is everything that changes the binary: the kernel's text
// form (instructions, dtypes, rank, stride kinds), the target and the emit options.
#pragma once
#include "codegen/nvptx/gemm.h"
#include "codegen/nvptx/ptx_kernel.h"
#include "backend/cuda/cuda_driver.h"
#include "backend/host/host_jit.h"

namespace arrayc::detail {

struct GpuKernel {
  PtxKernel ptx;
  const cuda::Function* fn = nullptr;  // loaded on its device
};

// The compiled kernel for k on the host: compiled on first use, then shared. Thread-safe.
const CompiledKernel& host_kernel(const Kernel& k, const EmitOptions& opts);

// The kernel compiled to PTX for gpu(dev)'s compute capability and loaded there (the driver
// turns the PTX into a cubin once). Thread-safe.
const GpuKernel& gpu_kernel(const Kernel& k, int dev, const EmitOptions& opts);

// The tiled matrix-product kernel g, compiled and loaded on gpu(dev), cached the same way.
const GpuKernel& gpu_gemm_kernel(const GemmKernel& g, int dev);

}  // namespace arrayc::detail
