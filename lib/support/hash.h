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

// FNV-1a, 64 bits: a stable hash of bytes (cache file names, symbols, checksums).
inline uint64_t fnv1a(const void* data, size_t n, uint64_t h = 0xcbf29ce484222325ULL) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}

}  // namespace arrayc::detail
