// Moving arrays in and out of arrayc (issue 28): numpy's .npy files, host memory wrapped without a
// copy, and read access to an evaluated array's memory.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
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

// ---- .npz files (numpy's savez / load of a .npz) ----------------------------------------------------
// savez writes an uncompressed zip of .npy members, one "NAME.npy" per array in the given order,
// as np.savez(path, NAME=array, ...) does (np.load(path)["NAME"] reads one back). Each array is
// evaluated and copied from its device. Zip64 records are written where a member, an offset or the
// count passes the 32-bit fields; member times are 1980-01-01 00:00, so equal arrays give equal
// files. Raises arrayc::Error naming the file for an empty or duplicate name, a name too long for
// a zip, or a file that cannot be written (arrays are evaluated first: no half-written file then).
void savez(const std::string& path, const std::vector<std::pair<std::string, Array>>& arrays);
// The members of a .npz (a zip of .npy files, as np.savez writes it) by name, the ".npy" suffix
// dropped (np.load(path).files). Reads stored (uncompressed) members, zip64 included, and checks
// each member's CRC-32. Raises arrayc::Error naming the file (and member) for anything else: not
// a zip, a truncated or inconsistent directory, offsets or sizes beyond the file, a CRC mismatch,
// compressed (np.savez_compressed) or encrypted members, a member that is not a .npy file, or a
// name that occurs twice.
std::map<std::string, Array> load_npz(const std::string& path);

// ---- Text files (numpy's loadtxt) --------------------------------------------------------------------
// One row per line, as np.loadtxt(path, dtype, comments, delimiter, skiprows=, usecols=):
// - `delimiter` empty splits on runs of whitespace; otherwise on that one character (fields
//   may have spaces around them);
// - `comments`: text from it to the end of a line is dropped (empty: no comments); lines then
//   empty are skipped; `skiprows` first lines of the file are skipped whatever they hold;
// - `usecols`: the columns to read, in that order (negative counts from the end), else all;
// - floats as Python's float() reads them (nan, inf, exponents); integer and bool dtypes take
//   integers only (bool: nonzero is true);
// - the result is [rows, columns] with extents of 1 squeezed, as numpy's ndmin=0: a single
//   column or row is 1-D, a single value 0-D, no data at all [0].
// Raises arrayc::Error naming the file, the line and the column for a field that does not parse
// or does not fit the dtype, a row with a different number of columns than the first, or a
// usecols column a row lacks; and for a file that cannot be read. The array is on the CPU.
Array loadtxt(const std::string& path, DType dtype = DType::Float64, const std::string& delimiter = "",
              int64_t skiprows = 0, const std::vector<int64_t>& usecols = {}, const std::string& comments = "#");

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
