// The host backend: kernels compiled by the host JIT and run on the thread pool, products
// through OpenBLAS, memory from the host allocator.
#pragma once
#include <cstdint>

#include "backend/backend.h"

namespace arrayc::detail {

Backend& host_backend();

// The options a kernel step is compiled with on the host: the user's, plus streaming
// (non-temporal) stores for an elementwise kernel whose passing_bytes() reach
// stream_threshold_bytes(): the outputs of such a kernel are evicted by its own traffic before
// anyone reads them back, and a plain store reads each line before writing it, a third of a
// copy's memory traffic.
EmitOptions host_options(const KernelStep& ks, const Schedule& s, const EmitOptions& user);
int64_t output_bytes(const KernelStep& ks, const Schedule& s);  // of all its outputs
// What a kernel step moves through the cache: its outputs, and its memory inputs read along every
// loop dim (not a broadcast operand, read again from cache, nor a gather's source).
int64_t passing_bytes(const KernelStep& ks, const Schedule& s);
// ARRAYC_STREAM_BYTES (arrayc::Error if it is not an integer >= 0), else the last-level cache's
// size, else 32 MiB. Read at the first call.
int64_t stream_threshold_bytes();
// Overrides it (tests and benchmarks). Programs already prepared keep their stores.
void set_stream_threshold_bytes(int64_t bytes);

// A product with an epilogue (DotStep::has_epilogue) runs in panels of rows: each is computed
// by BLAS into scratch memory of about kEpiloguePanelBytes, then finished by the epilogue while
// in cache. All rows at once when b itself is larger than that (each panel's BLAS call packs b
// again), when the epilogue does not read the product in place, for batches, for Gram products
// and for tiled ones (whose kernel runs the epilogue on each of its blocks instead). Returns the
// rows per panel.
constexpr int64_t kEpiloguePanelBytes = int64_t{1} << 20;
int64_t epilogue_panel_rows(const DotStep& d);

// A full reduction split between chunks runs in rounds of at most this many reduced indices
// (2^36 by default): each round's chunk partials combine into one partial per round, so that the
// partials stay small however long the range. Settable for tests (> 0).
int64_t split_round();
void set_split_round(int64_t indices);

}  // namespace arrayc::detail
