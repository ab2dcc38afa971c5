// The .npy format's pieces that the .npz reader and writer (npz.cpp) share with load_npy/save_npy
// (interop.cpp). Errors are arrayc::Error "<where>: <problem>", `where` naming the op and file.
#pragma once
#include <string>

#include "arrayc/interop.h"

namespace arrayc::detail {

// The whole file; "cannot open: <reason>" or "read error".
std::string read_whole_file(const std::string& path, const std::string& where);
// The array a .npy image holds, copied onto the CPU.
Array npy_from_bytes(const unsigned char* bytes, size_t size, const std::string& where);
// The preamble and padded header dict of a C-order .npy image of this dtype and shape.
std::string npy_header(DType dtype, const Shape& shape);
// `a` evaluated, on the host, C-contiguous (copied when it is not).
HostView contiguous_host_view(const Array& a);

}  // namespace arrayc::detail
