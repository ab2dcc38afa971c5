// Moving arrays in and out of arrayc (issue 28): numpy's .npy files, host memory wrapped without a
// copy, and read access to an evaluated array's memory.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "arrayc/array.h"

namespace arrayc {

// ---- .npy files ---------------------------------------------------------------------------------
// load_npy reads format versions 1.0, 2.0 and 3.0, C or Fortran order (a Fortran-order file is
// returned as a transposed view, no copy), little- or big-endian, of the dtypes arrayc has
// (descr b1, i1, u1, i2, u2, i4, u4, i8, u8, f2, f4, f8; numpy has no bfloat16, and a 2-byte void
// V2, which is how np.save writes ml_dtypes' bfloat16, loads as bfloat16), onto the CPU; .to(device) moves it. A file that is not one of these
// raises arrayc::Error naming the file and the problem (bad magic, a header that does not parse,
// an unknown dtype, a shape whose size overflows, fewer data bytes than the header promises).
Array load_npy(const std::string& path);
// Writes format 1.0 (2.0 when the header needs more than 65535 bytes), C order, little-endian;
// bfloat16 as '<V2', as np.save writes ml_dtypes' bfloat16 (view it with .view(ml_dtypes.bfloat16)).
// Evaluates `a` and copies it from its device. Raises arrayc::Error when the file cannot be written.
void save_npy(const std::string& path, const Array& a);

// ---- Host memory ----------------------------------------------------------------------------------
// An evaluated array over existing host memory, no copy. `data` is the address of element
// [0, ..., 0]; `strides` are in ELEMENTS (not bytes, unlike numpy), one per dimension, not
// negative; empty means C-contiguous. Bool data must hold bytes 0 or 1. `deleter(data)` is called
// once, when the last array or graph node using the memory is gone (pass an empty function to
// keep ownership). The caller keeps the memory valid and unchanged until then: arrayc assumes
// arrays are immutable, so a kernel may read it at any time before that.
Array from_host_memory(void* data, DType dtype, const Shape& shape, const std::vector<int64_t>& strides = {},
                       std::function<void(void*)> deleter = {});

// Read access to an array's memory on the host: `data` is the address of element [0, ..., 0],
// strides are in elements (this view keeps the memory alive as long as `keep` lives).
struct HostView {
  const void* data = nullptr;
  DType dtype = DType::Float32;
  Shape shape;
  std::vector<int64_t> strides;  // in elements
  Array keep;
  bool contiguous() const;  // C order
};
// Evaluates `a`. Raises arrayc::Error for an array on a GPU (copy it with .to(cpu()) first).
HostView host_view(const Array& a);

}  // namespace arrayc
