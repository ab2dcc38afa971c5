// Host-only code generation policy read from a Kernel: which leaves the cpu kernel walks in
// tiles and which outputs it writes with streaming stores. Used by the cpu kernel
// (cpu_kernel.cpp), the host JIT (the tile copies a kernel needs) and inspection.
#pragma once
#include <cstdint>
#include <vector>

#include "kernel/kernel.h"

namespace arrayc::detail {

// The host kernel's tiles for tiled leaves (tiled_leaves): rows x columns of the last two loop
// dims. 64 columns: the row loop's vector body at four 16-float vectors; 32 rows: two cache
// lines of each float32 tiled leaf per tile column, the buffers 8 KiB (16 KiB for 8-byte
// dtypes), so that a tile's lines and buffers stay in a 32 KiB L1.
constexpr int64_t kHostTileRows = 32;
constexpr int64_t kHostTileCols = 64;
// The most stack the buffers of one kernel's tiles take (16 float64 tiled leaves); a kernel
// with more goes untiled.
constexpr int64_t kMaxTileBufferBytes = 256 * 1024;

// The memory leaves of an elementwise kernel (rank >= 2) that step through memory along the
// last dim: a transposed or otherwise strided view. The host kernel then walks the space in
// tiles of rows x columns and copies each such leaf's tile into a buffer first, so that memory
// is read a cache line at a time and the body vectorizes (cpu_kernel.cpp). Such a kernel keeps
// plain stores (streamed_outputs is empty; streaming measured no faster there). Empty when the
// buffers would take more than kMaxTileBufferBytes.
std::vector<int> tiled_leaves(const Kernel& k);

// With streaming stores (EmitOptions::stream_stores), the outputs written with them: the first
// output, when its rows are contiguous, and every other output of its element size with
// contiguous rows (cpu_kernel.cpp). Empty for reductions and tiled kernels.
std::vector<int> streamed_outputs(const Kernel& k);

}  // namespace arrayc::detail
