// The cache is one intrusive free list per size class (a cached block's first bytes hold the
// link), under one mutex: allocations are per array, not per element, so contention is low.
#include "backend/host/cpu_allocator.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <mutex>
#include <string>
#include <unordered_map>

#include "arrayc/error.h"

namespace arrayc::detail {
namespace {

constexpr size_t kAlign = 64;
constexpr int kStepsPerDouble = 4;
// Classes 64, 128, 192, 256 come first; above 256, four classes per power of two.
constexpr int kSmallClasses = 4;
constexpr int kNumClasses = kSmallClasses + (64 - 8) * kStepsPerDouble;
// Larger requests are refused outright, which keeps the rounding below from overflowing.
constexpr size_t kMaxBytes = size_t{1} << 48;
// From here up, blocks are mapped directly (malloc would mmap them anyway, but with a header
// that breaks alignment); from kHugePage up they also start on a huge-page boundary.
constexpr size_t kMmapThreshold = size_t{1} << 20;
constexpr size_t kHugePage = size_t{2} << 20;

int floor_log2(size_t x) { return 63 - __builtin_clzll(x); }

[[noreturn]] void out_of_memory(size_t bytes) {
  throw Error("cpu: out of memory allocating " + std::to_string(bytes) + " bytes");
}

struct SizeClass {
  int index;
  size_t bytes;
};

SizeClass size_class(size_t bytes) {
  if (bytes > kMaxBytes) out_of_memory(bytes);
  if (bytes <= 4 * kAlign) {
    size_t rounded = std::max<size_t>(1, (bytes + kAlign - 1) / kAlign);
    return {static_cast<int>(rounded) - 1, rounded * kAlign};
  }
  int log = floor_log2(bytes - 1);  // 2^log < bytes <= 2^(log+1)
  size_t step = (size_t{1} << log) / kStepsPerDouble;
  size_t steps = (bytes - (size_t{1} << log) + step - 1) / step;  // 1..4
  return {kSmallClasses + (log - 8) * kStepsPerDouble + static_cast<int>(steps) - 1,
          (size_t{1} << log) + steps * step};
}

size_t class_bytes(int index) {
  if (index < kSmallClasses) return (index + 1) * kAlign;
  int log = 8 + (index - kSmallClasses) / kStepsPerDouble;
  size_t steps = (index - kSmallClasses) % kStepsPerDouble + 1;
  return (size_t{1} << log) + steps * ((size_t{1} << log) / kStepsPerDouble);
}

// Null when the system has no memory left.
void* system_alloc(size_t bytes) {
  if (bytes < kMmapThreshold) return std::aligned_alloc(kAlign, bytes);
  if (bytes < kHugePage) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? nullptr : p;
  }
  // Map one huge page more than needed and trim both ends, so that the block is huge-page
  // aligned and transparent huge pages can back all of it.
  size_t span = bytes + kHugePage;
  void* raw = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  char* begin = static_cast<char*>(raw);
  char* block = begin + (-reinterpret_cast<uintptr_t>(begin) & (kHugePage - 1));
  if (block != begin) munmap(begin, block - begin);
  if (block + bytes != begin + span) munmap(block + bytes, begin + span - (block + bytes));
  madvise(block, bytes, MADV_HUGEPAGE);
  return block;
}

void system_free(void* p, size_t bytes) {
  if (bytes < kMmapThreshold) std::free(p);
  else munmap(p, bytes);
}

// A cached block; the link lives in the block itself.
struct FreeBlock {
  FreeBlock* next;
  size_t bytes;  // set only while on an eviction chain
};

void free_chain(FreeBlock* chain) {
  while (chain != nullptr) {
    FreeBlock* next = chain->next;
    system_free(chain, chain->bytes);
    chain = next;
  }
}

int64_t default_cache_cap() {
  int64_t pages = sysconf(_SC_PHYS_PAGES);
  int64_t page_size = sysconf(_SC_PAGESIZE);
  int64_t cap = int64_t{1} << 30;
  if (pages > 0 && page_size > 0) cap = std::min(cap, pages * page_size / 8);
  return cap;
}

// A mapped request that misses its class may take a cached block of up to this many classes
// above it (at most twice its size): a call with a new, smaller length then reuses memory the
// earlier calls touched, instead of faulting in fresh pages.
constexpr int kLargerClasses = kStepsPerDouble;

struct Cache {
  std::mutex mutex;
  std::array<FreeBlock*, kNumClasses> lists{};
  // Blocks handed out from a larger class than their request's, by address: their real class,
  // which cpu_free files them under.
  std::unordered_map<void*, int> larger;
  CpuAllocStats stats{};
  int64_t cap = default_cache_cap();

  // Unlinks cached blocks, largest class first, until at most `limit` bytes stay cached;
  // returns them as a chain to be freed after the lock is dropped.
  FreeBlock* evict_down_to(int64_t limit) {
    FreeBlock* chain = nullptr;
    for (int c = kNumClasses - 1; c >= 0 && stats.bytes_cached > limit; --c) {
      while (lists[c] != nullptr && stats.bytes_cached > limit) {
        FreeBlock* block = lists[c];
        lists[c] = block->next;
        block->bytes = class_bytes(c);
        block->next = chain;
        chain = block;
        stats.bytes_cached -= static_cast<int64_t>(block->bytes);
      }
    }
    return chain;
  }
};

// Never destroyed, so that buffers freed during static destruction still have a home.
Cache& cache() {
  static Cache* const instance = new Cache();
  return *instance;
}

}  // namespace

void* cpu_alloc(size_t bytes) {
  SizeClass sc = size_class(bytes);
  Cache& c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    ++c.stats.allocs;
    int last = sc.bytes >= kMmapThreshold ? std::min(sc.index + kLargerClasses, kNumClasses - 1) : sc.index;
    for (int cls = sc.index; cls <= last; ++cls) {
      FreeBlock* block = c.lists[cls];
      if (!block) continue;
      c.lists[cls] = block->next;
      if (cls != sc.index) c.larger.emplace(block, cls);
      int64_t bytes = static_cast<int64_t>(class_bytes(cls));
      ++c.stats.cache_hits;
      c.stats.bytes_cached -= bytes;
      c.stats.bytes_in_use += bytes;
      return block;
    }
  }
  void* p = system_alloc(sc.bytes);
  if (p == nullptr) {  // cached blocks of other classes may be what is missing
    cpu_release_cached();
    p = system_alloc(sc.bytes);
  }
  if (p == nullptr) out_of_memory(bytes);
  std::lock_guard<std::mutex> lock(c.mutex);
  c.stats.bytes_in_use += sc.bytes;
  return p;
}

void cpu_free(void* p, size_t bytes) {
  if (p == nullptr) return;
  SizeClass sc = size_class(bytes);
  Cache& c = cache();
  FreeBlock* evicted = nullptr;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    if (!c.larger.empty())
      if (auto it = c.larger.find(p); it != c.larger.end()) {
        sc = SizeClass{it->second, class_bytes(it->second)};
        c.larger.erase(it);
      }
    int64_t size = static_cast<int64_t>(sc.bytes);
    c.stats.bytes_in_use -= size;
    if (size <= c.cap) {
      evicted = c.evict_down_to(c.cap - size);
      auto* block = static_cast<FreeBlock*>(p);
      block->next = c.lists[sc.index];
      c.lists[sc.index] = block;
      c.stats.bytes_cached += sc.bytes;
      p = nullptr;
    }
  }
  if (p != nullptr) system_free(p, sc.bytes);
  free_chain(evicted);
}

CpuAllocStats cpu_alloc_stats() {
  std::lock_guard<std::mutex> lock(cache().mutex);
  return cache().stats;
}

void cpu_release_cached() {
  Cache& c = cache();
  FreeBlock* chain = nullptr;
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    chain = c.evict_down_to(0);
  }
  free_chain(chain);
}

}  // namespace arrayc::detail
