// The CPU thread pool that runs kernels and reductions over index ranges.
//
// Work is split into chunks whose boundaries depend only on (n, grain, num_threads()), never on
// timing, so a reduction that writes one partial per chunk and combines them in chunk order gives
// bit-identical results run after run at the same thread count. Which thread runs which chunk is
// dynamic (threads claim chunks from a shared counter), which keeps late-waking threads from
// holding everyone up. Small ranges run inline on the calling thread with no synchronization.
#pragma once
#include <cstdint>

namespace arrayc::detail {

// ARRAYC_NUM_THREADS if set (an integer from 1 to 16 times the CPUs this process may run on;
// arrayc::Error otherwise), else those CPUs. When the system refuses a worker thread, the
// parallel call that starts the pool raises arrayc::Error.
int num_threads();
// Overrides num_threads() (tests and benchmarks; the same bounds); restarts the workers at the
// next parallel call.
// Not meant to race with parallel calls that size buffers through num_chunks().
void set_num_threads(int n);

// Runs fn(ctx, begin, end) over disjoint chunks covering [0, n), each at least `grain` long
// unless n itself is shorter. The calling thread takes part. When there is one chunk, fn(ctx, 0, n)
// runs on the calling thread with no wake-up at all; with one thread, all chunks run there. A call from
// inside a chunk (nested), or made while another thread's call has the pool, runs the same
// chunks in order on the calling thread. An exception thrown by fn stops chunks that have not
// started and is rethrown here once every running chunk has finished.
using RangeFn = void (*)(void* ctx, int64_t begin, int64_t end);
void parallel_for(int64_t n, int64_t grain, RangeFn fn, void* ctx);

// How many chunks parallel_for / parallel_chunks split [0, n) into (at least 1, even for n == 0;
// four per thread, and with any thread count more where a chunk would pass 2^24 elements, so
// that an interrupt, checked between chunks, is prompt), so that a caller can size a buffer of
// per-chunk partials.
int64_t num_chunks(int64_t n, int64_t grain);

// Like parallel_for, also passing the chunk's index in [0, num_chunks(n, grain)).
using ChunkFn = void (*)(void* ctx, int64_t chunk, int64_t begin, int64_t end);
void parallel_chunks(int64_t n, int64_t grain, ChunkFn fn, void* ctx);

// One step of a spin wait: tells the core that this thread only polls.
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace arrayc::detail
