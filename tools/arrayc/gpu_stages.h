// The GPU side of the tool: :device gpuN, :ptx, :cubin and --emit=ptx. libarrayc has no CUDA
// backend yet, so these say so clearly; when it gains one (Stages with PTX text and cubin
// resource usage), this is the one file that changes.
#pragma once
#include <arrayc/arrayc.h>

#include <string>

namespace arrayc::tool {

// True once libarrayc compiles kernels for CUDA devices.
inline constexpr bool kCudaBackendBuilt = false;

// The device named by "cpu", "gpu", "gpu0", "gpu:1". Throws UserError (a clear message, never a
// crash) when it cannot be used.
Device parse_device(const std::string& name);

// PTX of the kernels for `sm` ("sm_90"), or the resource usage of their cubins. Throw UserError
// while the CUDA backend is not built.
std::string ptx_text(const Stages& stages, const std::string& sm);
std::string cubin_text(const Stages& stages);

}  // namespace arrayc::tool
