// The CUDA backend: kernels compiled to PTX by the nvptx code generator, linked to a cubin by the
// driver (cuda_driver.h) and loaded (the cubin is what the disk cache stores), launched on the device's stream with plans made when a Program is
// prepared; products by the generated tiled kernel (codegen/nvptx/gemm.h).
#pragma once
#include <string>

#include "backend/backend.h"

namespace arrayc::detail {

Backend& cuda_backend();

// The PTX a GPU would run for `step`, for sm_<sm>: a kernel step's kernel (with ctx's fast-math
// setting, and the float16 table's lookup kernel where the step takes one), or the product
// kernel chosen as for a GPU of this machine's (or, without one, an H100's 132)
// multiprocessors, at ctx's matmul precision (with the transpose kernel where a TF32 product
// copies an operand first). Needs no GPU; inspect() shows it for arrays on any device.
std::string ptx_for(const Step& step, const Schedule& s, int sm, const PlanContext& ctx);

// What a stored cubin was made by, beside its kernel's text and options: the driver's version and
// the PTX target (architecture, PTX ISA, LLVM, libdevice). Part of the disk cache's key.
std::string gpu_disk_target(int driver_version, int sm);

}  // namespace arrayc::detail
