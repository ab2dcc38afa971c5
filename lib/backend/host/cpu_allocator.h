// Host memory for array buffers and temporaries.
//
// Requests round up to a size class (four per power of two, so at most 25% slack) and freed
// blocks are kept per class, so steady-state repeated allocations never reach malloc or mmap.
// Blocks are 64-byte aligned; blocks of 1 MiB and more come straight from mmap (zeroed once, by
// the kernel, and huge-page aligned from 2 MiB). The cache is capped (1 GiB or an eighth of
// physical memory, whichever is less); past the cap, the largest cached blocks go back first.
// A request of 1 MiB or more that finds its class empty takes a cached block of up to twice its
// size (one of the next four classes) before mapping a new one, so that a call on a shorter input
// reuses pages already touched; freeing it files it under its real class again.
#pragma once
#include <cstddef>
#include <cstdint>

namespace arrayc::detail {

// A 64-byte aligned block of at least `bytes` bytes; a valid, unique pointer even for 0 bytes.
// Throws arrayc::Error when memory runs out. Thread-safe.
void* cpu_alloc(size_t bytes);
// Returns a block from cpu_alloc; `bytes` is the size it was allocated with. Null is ignored.
void cpu_free(void* p, size_t bytes);

// Counters since the process started. Byte counts are in size-class bytes, not requested bytes.
struct CpuAllocStats {
  int64_t allocs;        // cpu_alloc calls
  int64_t cache_hits;    // of which were served from the cache
  int64_t bytes_cached;  // held in the cache now
  int64_t bytes_in_use;  // handed out and not yet freed
};
CpuAllocStats cpu_alloc_stats();

// Gives every cached block back to the system.
void cpu_release_cached();

}  // namespace arrayc::detail
