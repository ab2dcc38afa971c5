// The GPU's lookup of a float16 table run (kernel/half_table.h): out[i] = table[in[i]], the
// table holding a kernel's results over the 65536 16-bit patterns at the output's element size.
//
// Entry arrayc_half_lookup_<bits> (bits: 8, 16 or 32, the output's element size):
//   ptr table, ptr in (uint16), ptr out, i64 n, i64 in_offset, i64 out_offset (elements)
// Blocks of HalfLookupShape::threads, any grid: a block takes runs of threads x per_thread
// elements, grid-strided; a thread loads its per_thread inputs of a run (elements tid,
// tid + threads, ...: each warp's loads coalesced) before it looks any up, so that they are in
// flight together, then looks them up and stores them. A whole run is unguarded; the last, partial
// one reads element 0 for those past the end and does not store them. The input and the output
// may be one buffer (each element is read before the same thread writes it). Where `vectors` is
// set and the input starts on 16 bytes and the output on 8 of its elements, the whole runs of
// threads x vectors x 8 elements go first by 16-byte loads (and 8- or 16-byte stores), the rest
// element by element.
// The table: for outputs of 1 or 2 bytes (64 or 128 KB) copied into shared memory first, once a
// block (the grid is one block an SM, walking its runs): random reads of shared memory cost a few
// bank conflicts, where reads through L1 cost a cache line each. 4-byte outputs (256 KB, more
// than an SM's shared memory) are read through the read-only cache.
#pragma once
#include "codegen/nvptx/ptx_compile.h"

namespace arrayc::detail {

struct HalfLookupShape {
  int threads = 256;
  int per_thread = 8;         // elements a thread a run, element by element
  int vectors = 0;            // vectors of 8 elements a thread a run where the operands are aligned (0: none)
  unsigned shared_bytes = 0;  // dynamic shared memory: the table, or 0 (read from global memory)
  int run() const { return threads * per_thread; }
};
HalfLookupShape half_lookup_shape(int out_bytes);

PtxKernel emit_half_lookup_ptx(int out_bytes, int sm);

}  // namespace arrayc::detail
