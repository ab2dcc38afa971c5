// Hash combining for structural hashes (nodes, kernels, cache keys).
#pragma once
#include <cstddef>
#include <cstdint>

namespace arrayc::detail {

inline size_t hash_combine(size_t seed, size_t v) {
  // 64-bit mix (from the splitmix64 finalizer) so that nearby values spread over the table.
  uint64_t x = seed ^ (v + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return static_cast<size_t>(x);
}

}  // namespace arrayc::detail
