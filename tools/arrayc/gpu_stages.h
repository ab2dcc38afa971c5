// The GPU side of the tool: :device gpuN, :ptx, :cubin and --emit=ptx.
#pragma once
#include <arrayc/arrayc.h>

#include <string>

namespace arrayc::tool {

// The device named by "cpu", "gpu", "gpu0", "gpu:1". Throws UserError (a clear message, never a
// crash) when it cannot be used.
Device parse_device(const std::string& name);

// PTX of the kernels for `sm` ("sm_90"; no GPU needed), or the resource usage of their cubins
// (arrays on a GPU only). Throw UserError with the reason when they cannot be made.
std::string ptx_text(const Stages& stages, const std::string& sm);
std::string cubin_text(const Stages& stages);

}  // namespace arrayc::tool
