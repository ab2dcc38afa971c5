// GPU kernels for the Axis ops (ops.def: cumsum, cumprod, sort, argsort), generated as LLVM IR
// for NVPTX like the product kernels (gemm.h). backend/cuda/axis_launch.h strings them together.
//
// Every kernel runs 256 threads per block (kAxisThreads). Rows are the other axes of the step's
// axis-last view (kernel/schedule.h's AxisStep); a row's element i sits at
// row_offset(r) + i * axis_stride, row_offset decomposing r over the outer extents.
//
// Scans (reduce-then-scan over tiles of kScanTile elements of one row; a row of t tiles is
// ScanTotals, a scan of the [rows, t] totals (the same kernels, recursively), then ScanTiles):
//   ScanTotals  block per (row, tile): the tile's total into out[row * ntiles + tile]
//   ScanTiles   block per (row, tile): loads the tile into shared memory (coalesced), each thread
//               scans 16 consecutive elements, the threads' totals are scanned with warp shuffles,
//               and the tile is stored plus the carry carry[row * ntiles + tile - 1] (the
//               inclusive scan of the totals; none for tile 0 or without has_carry)
//   ScanRows    thread per row, for short rows
//   arguments: ptr in, ptr out, ptr carry, i64 n, i64 rows, i64 ntiles, i64 has_carry,
//              i64 in_axis_stride, i64 out_axis_stride, then per outer dim (rank - 1 of them,
//              outermost first): i64 extent, in_stride, out_stride
// Sorts (stable LSD radix sort over 8-bit digits of an order-preserving key, numpy's order:
// NaN last, -0.0 == 0.0; segments sorted by more digit passes over the row number, which a
// position payload carries). One pass per digit, "onesweep" (Merrill and Adinets 2022): a
// block ranks its tile, publishes its bin counts and looks back over the tiles before it for
// the bins' offsets (decoupled look-back), and writes the tile out through shared memory.
//   SortLoad    gathers the strided input into a contiguous value buffer (and positions 0..)
//               args: ptr in, ptr vals, ptr pay, then as the scans from n on
//   SortHist    the histograms of every key digit over all values (atomics into hist[digit][256],
//               zeroed by the caller; 4 loads a thread in flight), and zeroes the look-back words
//               status[0..status_words)
//               args: ptr vals, ptr hist, ptr status, i64 total, i64 status_words
//   SortScan    one block: the histograms scanned into where each bin's run starts,
//               offsets[digit][bin] (exclusive, int64), so that no read-back is needed
//               args: ptr hist, ptr offsets, ptr unused, i64 digits, i64 unused
//   SortPass    block per tile of sort_tile(k) elements, the tile's number taken from an atomic
//               counter (*ctr, 32-bit) in the order blocks start, so that a block only waits on
//               blocks already running. Each thread first issues all its loads (k.items of them,
//               a warp's 32 consecutive elements each: enough bytes in flight to near the copy
//               rate), then each warp ranks its 32 x items consecutive elements by digit, 32 at a
//               time (match.any, or k.ballot: 9 ballots of the digit's bits; per-warp bin
//               counters in shared memory); per bin (a thread
//               each) the tile's count is published in status[tile * 256 + bin] as an aggregate
//               (epoch << 48 | value; inclusive: | 1 << 47; epoch = pass + 1, so that one zeroing
//               serves every pass), the earlier tiles' words are summed back to an inclusive one,
//               and the inclusive word published; the elements go to shared memory in the tile's
//               sorted order, then out (coalesced runs) at offsets[bin] + earlier tiles' count +
//               place within the tile's run of the bin
//               args: ptr vals, ptr pay, ptr vals_out, ptr pay_out, ptr status, ptr offsets,
//               ptr ctr, i64 total, i64 ntiles, i64 shift, i64 seg, i64 n, i64 epoch
//               seg != 0: the digit is of the row (pay / n), not of the key
//   SortStore   the sorted buffer (row r = position / n) to the strided output: values, or for
//               argsort the positions within their row
//               args: ptr vals, ptr pay, ptr out, then as the scans from n on
// Sparse scatter (ops.def's ScatterSet/ScatterAdd; GPU scatter): a copy of x, then a thread per
// updated element. dtype is x's (any dtype).
//   ScatterCopy  x's strided view to the contiguous output (as SortLoad, moved as integers of
//                the dtype's width); args as SortLoad's (ptr x, ptr out, ptr unused, then as
//                the scans)
//   ScatterMark  (set) thread per update j: atomic max of j + 1 into winner[row(j)] (zeroed by
//                the caller), so that the last update of a row (index order) holds it
//   ScatterApply thread per updated element (j, e): set: the update whose j + 1 is the row's
//                winner writes it; add: an atomic add (integers of 8/16 bits and the 16-bit
//                floats where the hardware has none as a compare-and-swap loop on their 32-bit
//                word; bool: an or, as a store of 1). row(j) = idx[j * idx_stride], negative
//                from the end, outside [-n, n) skipped.
//                args (both): ptr out, ptr idx, ptr v, ptr winner, i64 k, i64 n, i64 row,
//                i64 idx_stride, i64 v_stride0, then per dim of x after the first (rank - 1):
//                i64 extent, v_stride
#pragma once
#include <cstdint>
#include <string>

#include "arrayc/dtype.h"
#include "codegen/nvptx/ptx_compile.h"

namespace arrayc::detail {

constexpr int kAxisThreads = 256;
constexpr int64_t kScanTile = 4096;   // 16 elements per thread
constexpr int64_t kScanRowsMax = 32;  // rows this short are scanned a thread each

struct AxisKernel {
  enum class Kind : uint8_t {
    ScanTotals, ScanTiles, ScanRows, SortLoad, SortHist, SortPass, SortStore,
    SortScan,                                  // GPU sort: offsets on the device
    ScatterCopy, ScatterMark, ScatterApply,    // GPU scatter
  };
  Kind kind = Kind::ScanTiles;
  // Scans: the accumulation dtype (UInt64 for every integer: wrapping, the same bits as int64),
  // Float32 or Float64. Sorts: the value dtype (Bool, Int32, Int64, UInt64, Float32, Float64).
  DType dtype = DType::Float32;
  bool product = false;  // cumprod
  int rank = 1;          // of the strided view (scans, SortLoad, SortStore)
  int payload = 0;       // sorts: bytes of a position (0: none, 4, 8)
  bool argsort = false;  // SortStore writes positions
  int items = 16;        // SortPass: elements a thread (the tile is 256 x items)
  bool ballot = false;   // SortPass: rank with ballots instead of match.any
  int min_blocks = 0;    // SortPass: blocks an SM that the registers must allow (0: no bound)
  bool add = false;      // ScatterApply: add (else set)

  std::string name() const;  // e.g. scan_tiles_f32_sum_r2, sort_pass_f32_p4
  std::string str() const;   // the text form: the cache key
};

// Key bytes of a sort dtype (digit passes at most).
int sort_key_bytes(DType t);

// Elements per SortPass tile: 256 x items.
int64_t sort_tile(const AxisKernel& k);
// The largest items a thread (at most 32) for which a SortPass tile of (value, position) pairs
// fits the 48 KiB of static shared memory beside the bin counters: 32 for 4-byte values alone, 18
// for 8 bytes (or 4 + 4), 12 for 8 + 4, 9 for 8 + 8.
int sort_items_max(DType t, int payload);

PtxKernel emit_axis_ptx(const AxisKernel& k, int sm);

}  // namespace arrayc::detail
