#include "backend/host/half_table.h"

// GCC 12's AVX-512 headers make undefined registers that -Wmaybe-uninitialized reports here.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <cstring>

#include "backend/host/host_jit.h"
#include "backend/host/thread_pool.h"

namespace arrayc::detail {
namespace {

constexpr int64_t kGrain = 1 << 15;  // as the kernels' (host_backend.cpp)

// ---- The lookup: out[i] = table[in[i]] ----
// The table holds the kernel's results at the output's own element size (the hot entries of
// real data take half the cache of 32-bit ones for float16), padded by 4 bytes: the vector
// lookups gather 32 bits at byte offset size * in[i] and keep the low `size` bytes.

struct Lookup {
  const uint16_t* in;
  const char* table;
  char* out;
  int size;  // the output's element size: 1, 2 or 4 bytes
  bool stream;
};

inline void lookup_one(const Lookup& l, int64_t i) { std::memcpy(l.out + i * l.size, l.table + l.in[i] * l.size, l.size); }

void lookup_scalar(const Lookup& l, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) lookup_one(l, i);
}

// Elements up to the first whose output starts a line of `align` bytes (streaming stores need it).
int64_t aligned_start(const Lookup& l, int64_t begin, int64_t end, uintptr_t align) {
  int64_t i = begin;
  while (i < end && (reinterpret_cast<uintptr_t>(l.out + i * l.size) & (align - 1)) != 0) lookup_one(l, i++);
  return i;
}

// (Functions, not lambdas: GCC gives a lambda no target attribute.)
__attribute__((target("avx512f"))) inline void put512(const Lookup& l, char* at, __m512i v) {
  if (l.stream) _mm512_stream_si512(reinterpret_cast<__m512i*>(at), v);
  else _mm512_storeu_si512(at, v);
}

__attribute__((target("avx2"))) inline void put256(const Lookup& l, char* at, __m256i v) {
  if (l.stream) _mm256_stream_si256(reinterpret_cast<__m256i*>(at), v);
  else _mm256_storeu_si256(reinterpret_cast<__m256i*>(at), v);
}

// 64 elements a step: four 16-lane gathers, narrowed to the output's size (vpmovdw/vpmovdb keep
// the low bytes), stored as 64-byte lines.
template <int Size>
__attribute__((target("avx512f,avx512bw"))) void lookup_avx512(const Lookup& l, int64_t begin, int64_t end) {
  int64_t i = l.stream ? aligned_start(l, begin, end, 64) : begin;
  for (; i + 64 <= end; i += 64) {
    __m512i g[4];
    for (int j = 0; j < 4; ++j) {
      __m512i idx = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(l.in + i + 16 * j)));
      g[j] = _mm512_i32gather_epi32(idx, l.table, Size);
    }
    char* at = l.out + i * Size;
    if (Size == 4) {
      for (int j = 0; j < 4; ++j) put512(l, at + 64 * j, g[j]);
    } else if (Size == 2) {
      for (int j = 0; j < 2; ++j)
        put512(l, at + 64 * j, _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtepi32_epi16(g[2 * j])),
                                                 _mm512_cvtepi32_epi16(g[2 * j + 1]), 1));
    } else {
      __m512i b = _mm512_castsi128_si512(_mm512_cvtepi32_epi8(g[0]));
      b = _mm512_inserti32x4(b, _mm512_cvtepi32_epi8(g[1]), 1);
      b = _mm512_inserti32x4(b, _mm512_cvtepi32_epi8(g[2]), 2);
      b = _mm512_inserti32x4(b, _mm512_cvtepi32_epi8(g[3]), 3);
      put512(l, at, b);
    }
  }
  lookup_scalar(l, i, end);
  if (l.stream) _mm_sfence();
}

// 32 elements a step: four 8-lane gathers, the low bytes kept (masked, so that the unsigned
// saturation of the packs is exact), packed, stored as 32-byte pieces.
template <int Size>
__attribute__((target("avx2"))) void lookup_avx2(const Lookup& l, int64_t begin, int64_t end) {
  int64_t i = l.stream ? aligned_start(l, begin, end, 32) : begin;
  const int* table = reinterpret_cast<const int*>(l.table);
  const __m256i low = _mm256_set1_epi32(Size == 1 ? 0xff : 0xffff);
  for (; i + 32 <= end; i += 32) {
    __m256i g[4];
    for (int j = 0; j < 4; ++j) {
      __m256i idx = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(l.in + i + 8 * j)));
      g[j] = _mm256_i32gather_epi32(table, idx, Size);
      if (Size != 4) g[j] = _mm256_and_si256(g[j], low);
    }
    char* at = l.out + i * Size;
    if (Size == 4) {
      for (int j = 0; j < 4; ++j) put256(l, at + 32 * j, g[j]);
    } else if (Size == 2) {
      // packus interleaves the 128-bit halves: [a0-3 b0-3 | a4-7 b4-7]; the permute restores order.
      for (int j = 0; j < 2; ++j) put256(l, at + 32 * j, _mm256_permute4x64_epi64(_mm256_packus_epi32(g[2 * j], g[2 * j + 1]), 0xD8));
    } else {
      // Per 128-bit half, dwords of 4 bytes: [a0-3 b0-3 c0-3 d0-3 | a4-7 b4-7 c4-7 d4-7].
      __m256i b = _mm256_packus_epi16(_mm256_packus_epi32(g[0], g[1]), _mm256_packus_epi32(g[2], g[3]));
      put256(l, at, _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
    }
  }
  lookup_scalar(l, i, end);
  if (l.stream) _mm_sfence();
}

// Which lookup: the widest that both the JIT's target (ARRAYC_HOST_CPU included: its vector
// width) and this CPU allow, for the output's element size.
using LookupFn = void (*)(const Lookup&, int64_t, int64_t);
LookupFn lookup_fn(int size) {
  static const int kind = [] {
    int bits = host_vector_bits();
    if (bits >= 512 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")) return 512;
    if (bits >= 256 && __builtin_cpu_supports("avx2")) return 256;
    return 0;
  }();
  if (kind == 512) return size == 1 ? &lookup_avx512<1> : size == 2 ? &lookup_avx512<2> : &lookup_avx512<4>;
  if (kind == 256) return size == 1 ? &lookup_avx2<1> : size == 2 ? &lookup_avx2<2> : &lookup_avx2<4>;
  return &lookup_scalar;
}

void lookup_range(void* ctx, int64_t begin, int64_t end) {
  const auto* l = static_cast<const Lookup*>(ctx);
  lookup_fn(l->size)(*l, begin, end);
}

}  // namespace

void run_half_table(const HalfTable& t, const Kernel& k, KernelFn fn, const std::vector<void*>& ptrs,
                    const LaunchParams& lp, bool stream) {
  note_half_table_run();
  const int size = static_cast<int>(dtype_size(t.out));
  // The kernel over the patterns: one dim of 65536, input and output at offset 0, unit stride.
  std::vector<char> table(kHalfPatterns * size + 4);
  std::vector<void*> p = ptrs;
  p[t.in_ptr] = const_cast<uint16_t*>(half_patterns());
  p[t.out_ptr] = table.data();
  std::vector<int64_t> params = half_table_params(t, k, lp.params);
  auto block = [&](int index) { return k.param_block(index); };
  KernelRange r{fn, p.data(), params.data()};
  parallel_for(kHalfPatterns, kHalfPatterns / 16, run_kernel_range, &r);
  // The lookup over the step's elements, from the input's and output's offsets.
  const int64_t in_off = lp.params[block(t.in_index)], out_off = lp.params[block(t.out_index)];
  Lookup l{static_cast<const uint16_t*>(ptrs[t.in_ptr]) + in_off, table.data(),
           static_cast<char*>(ptrs[t.out_ptr]) + out_off * size, size, stream};
  parallel_for(lp.parallel_extent, kGrain, lookup_range, &l);
}

}  // namespace arrayc::detail
