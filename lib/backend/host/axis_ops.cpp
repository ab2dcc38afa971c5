#include "backend/host/axis_ops.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstring>
#include <memory>
#include <thread>
#include <type_traits>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "backend/host/host_backend.h"
#include "backend/host/thread_pool.h"
#include "support/interrupt.h"
#include "support/stats.h"

namespace arrayc::detail {
namespace {

constexpr int64_t kScanBlock = int64_t{1} << 16;  // elements per block of a split row (in L2)
constexpr int64_t kSortGrain = int64_t{1} << 16;
constexpr int64_t kRowWork = int64_t{1} << 15;    // elements a chunk of whole rows should hold

// Runs f(chunk, begin, end) over parallel_chunks.
template <typename F> void chunks(int64_t n, int64_t grain, F& f) {
  parallel_chunks(
      n, grain, [](void* c, int64_t chunk, int64_t b, int64_t e) { (*static_cast<F*>(c))(chunk, b, e); }, &f);
}

// Where row r of the axis-last view starts in the input and the output.
struct RowMap {
  const AxisStep& a;
  int64_t offset(int64_t r, const std::vector<int64_t>& strides) const {
    int64_t off = 0;
    for (size_t d = a.shape.size() - 1; d-- > 0;) {
      int64_t e = a.shape[d];
      off += (r % e) * strides[d];
      r /= e;
    }
    return off;
  }
  int64_t in(int64_t r) const { return offset(r, a.in_strides); }
  int64_t out(int64_t r) const { return offset(r, a.out_strides); }
};

// Calls f(row_begin, row_end) over the rows, in parallel when there are enough elements.
template <typename F> void for_rows(int64_t rows, int64_t n, F& f) {
  int64_t grain = std::max<int64_t>(1, kRowWork / std::max<int64_t>(n, 1));
  auto body = [&f](int64_t, int64_t b, int64_t e) { f(b, e); };
  chunks(rows, grain, body);
}

// ---- Scans ------------------------------------------------------------------------------------
// Integers scan in uint64 (wrapping, as numpy's int64 does), floats in their own type.

template <typename T, bool Sum> inline T combine(T a, T b) { return Sum ? a + b : a * b; }
template <typename T, bool Sum> constexpr T identity() { return Sum ? T(0) : T(1); }

// The total of n elements (pass one of a split row): eight independent accumulators.
template <typename T, bool Sum> T total(const T* in, int64_t s, int64_t n) {
  T acc[8];
  for (T& a : acc) a = identity<T, Sum>();
  int64_t i = 0;
  if (s == 1)
    for (; i + 8 <= n; i += 8)
      for (int j = 0; j < 8; ++j) acc[j] = combine<T, Sum>(acc[j], in[i + j]);
  for (; i < n; ++i) acc[0] = combine<T, Sum>(acc[0], in[i * s]);
  T r = acc[0];
  for (int j = 1; j < 8; ++j) r = combine<T, Sum>(r, acc[j]);
  return r;
}

// Eight values to out[0, 8), which is 16-byte aligned: with non-temporal stores when `stream`
// (float and double on x86-64; a plain copy otherwise).
template <typename T> inline void store8(T* out, const T* v, bool stream) {
#if defined(__x86_64__)
  if (stream) {
    if constexpr (std::is_same_v<T, float>) {
      _mm_stream_ps(out, _mm_loadu_ps(v));
      _mm_stream_ps(out + 4, _mm_loadu_ps(v + 4));
      return;
    } else if constexpr (std::is_same_v<T, double>) {
      for (int j = 0; j < 8; j += 2) _mm_stream_pd(out + j, _mm_loadu_pd(v + j));
      return;
    }
  }
#endif
  for (int j = 0; j < 8; ++j) out[j] = v[j];
}

// out[i] = carry (+) in[0] (+) ... (+) in[i]. Contiguous rows go in blocks of 8 whose local
// prefixes are independent of each other, so that only one operation per block waits for the
// carry (a plain loop waits for the previous element at every step). With `stream` (outputs
// larger than the streaming threshold, ARRAYC_STREAM_BYTES) the blocks are stored
// non-temporally: the output is not read before it is written, 1/3 less memory traffic.
template <typename T, bool Sum>
void scan_span(const T* in, int64_t is, T* out, int64_t os, int64_t n, T carry, bool stream = false) {
  int64_t i = 0;
  if (is == 1 && os == 1) {
    // A scalar head up to out's first 16-byte boundary, so that the blocks are aligned.
    while (stream && i < n && reinterpret_cast<uintptr_t>(out + i) % 16 != 0) {
      carry = combine<T, Sum>(carry, in[i]);
      out[i++] = carry;
    }
    for (; i + 8 <= n; i += 8) {
      T p[8];
      p[0] = in[i];
      for (int j = 1; j < 8; ++j) p[j] = combine<T, Sum>(p[j - 1], in[i + j]);
      for (int j = 0; j < 8; ++j) p[j] = combine<T, Sum>(carry, p[j]);
      store8(out + i, p, stream);
      carry = p[7];
    }
#if defined(__x86_64__)
    if (stream) _mm_sfence();  // weakly ordered stores must not overtake the pool's completion signal
#endif
  }
  for (; i < n; ++i) {
    carry = combine<T, Sum>(carry, in[i * is]);
    out[i * os] = carry;
  }
}

// Rows of 2 * kScanBlock elements or more are scanned in blocks of kScanBlock: a block's total is
// taken first (which brings the block into the core's cache), then the block is scanned from
// cache with the carry of the blocks before it, and the next carry is that carry (+) the total.
// Each row is read from memory once (a scan that totals the whole row before scanning it reads
// it twice, at most 2/3 of a copy's speed), and the result depends on kScanBlock only: not on the
// thread count, the number of rows, or timing.
template <typename T, bool Sum> T scan_block(const T* x, int64_t is, T* y, int64_t os, int64_t len, T carry, bool stream) {
  T t = total<T, Sum>(x, is, len);
  scan_span<T, Sum>(x, is, y, os, len, carry, stream);
  return combine<T, Sum>(carry, t);
}

template <typename T, bool Sum> void scan_blocks(const T* x, int64_t is, T* y, int64_t os, int64_t n, bool stream) {
  T carry = identity<T, Sum>();
  for (int64_t lo = 0; lo < n; lo += kScanBlock)
    carry = scan_block<T, Sum>(x + lo * is, is, y + lo * os, os, std::min(n - lo, kScanBlock), carry, stream);
}

// One row across the threads. Its blocks are claimed in order; each publishes its total as soon
// as it has it, then finds its carry by looking back: from the nearest earlier block that has
// published its running total (its carry (+) its total), adding the totals of the blocks between
// in order. That is the left fold scan_blocks computes, whoever computes it, so the bits do not
// change; and a thread that stalls after publishing its total holds no one up. A wait is only for
// the total of a block claimed earlier, which its thread always finishes; an interrupt stops the
// claiming, and the thread that took it raises.
template <typename T, bool Sum>
void scan_chained(const T* x, int64_t is, T* y, int64_t os, int64_t n, bool stream) {
  enum : int { kNone, kTotal, kRunning };
  struct alignas(64) Slot {
    std::atomic<int> state{kNone};
    T total{};
    T running{};  // carry (+) total
  };
  const int64_t blocks = (n + kScanBlock - 1) / kScanBlock;
  std::unique_ptr<Slot[]> slots(new Slot[static_cast<size_t>(blocks)]);
  std::atomic<int64_t> next{0};
  std::atomic<bool> stop{false};
  // The carry of block b: the running total of the blocks before it.
  auto carry_of = [&](int64_t b) {
    int64_t j = b - 1;
    for (; j >= 0; --j) {
      int state;
      for (int spins = 1; (state = slots[j].state.load(std::memory_order_acquire)) == kNone; ++spins) {
        if (spins % 1024 == 0) std::this_thread::yield();  // its thread may be descheduled
        else cpu_relax();
      }
      if (state == kRunning) break;
    }
    T c = j >= 0 ? slots[j].running : identity<T, Sum>();
    for (int64_t k = j + 1; k < b; ++k) c = combine<T, Sum>(c, slots[k].total);
    return c;
  };
  auto body = [&](int64_t, int64_t, int64_t) {
    for (;;) {
      try {
        check_interrupt();
      } catch (...) {
        stop.store(true, std::memory_order_relaxed);
        throw;
      }
      if (stop.load(std::memory_order_relaxed)) return;
      int64_t b = next.fetch_add(1, std::memory_order_relaxed);
      if (b >= blocks) return;
      int64_t lo = b * kScanBlock, len = std::min(n - lo, kScanBlock);
      Slot& slot = slots[b];
      slot.total = total<T, Sum>(x + lo * is, is, len);
      slot.state.store(kTotal, std::memory_order_release);
      T carry = carry_of(b);
      slot.running = combine<T, Sum>(carry, slot.total);
      slot.state.store(kRunning, std::memory_order_release);
      scan_span<T, Sum>(x + lo * is, is, y + lo * os, os, len, carry, stream);
    }
  };
  chunks(num_threads(), 1, body);
}

template <typename T, bool Sum> void scan(const AxisStep& a, const T* in, T* out) {
  int64_t n = a.shape.back(), rows = shape_numel(a.shape) / std::max<int64_t>(n, 1);
  if (n == 0 || rows == 0) return;
  int64_t is = a.in_strides.back(), os = a.out_strides.back();
  RowMap map{a};
  const bool blocked = n >= 2 * kScanBlock;
  // Streaming stores where the row's input and output, passing through the cache, reach the
  // streaming threshold (as for kernels: host_options).
  const bool stream = blocked && 2 * n * rows * static_cast<int64_t>(sizeof(T)) >= stream_threshold_bytes();
  if (rows >= num_threads() || !blocked) {
    auto body = [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        if (blocked) scan_blocks<T, Sum>(in + map.in(r), is, out + map.out(r), os, n, stream);
        else scan_span<T, Sum>(in + map.in(r), is, out + map.out(r), os, n, identity<T, Sum>());
      }
    };
    for_rows(rows, n, body);
    return;
  }
  for (int64_t r = 0; r < rows; ++r) scan_chained<T, Sum>(in + map.in(r), is, out + map.out(r), os, n, stream);
}

template <bool Sum> void scan_any(const AxisStep& a, const void* in, void* out) {
  switch (a.in_dtype) {
    case DType::Int64: case DType::UInt64:  // wrapping: the same bits
      return scan<uint64_t, Sum>(a, static_cast<const uint64_t*>(in), static_cast<uint64_t*>(out));
    case DType::Float32: return scan<float, Sum>(a, static_cast<const float*>(in), static_cast<float*>(out));
    case DType::Float64: return scan<double, Sum>(a, static_cast<const double*>(in), static_cast<double*>(out));
    default: ARRAYC_INTERNAL_CHECK(false, std::string("scan of dtype ") + dtype_name(a.in_dtype));
  }
}

// ---- Sorts ------------------------------------------------------------------------------------
// Keys: unsigned integers in the order numpy sorts by, NaN last (every NaN one key, so NaNs keep
// their order), -0.0 and 0.0 one key (equal, as numpy compares them).

template <typename T> struct Keys;
template <> struct Keys<uint8_t> {  // bool
  using K = uint8_t;
  static K key(uint8_t v) { return v != 0; }
};
template <> struct Keys<int32_t> {
  using K = uint32_t;
  static K key(int32_t v) { return static_cast<uint32_t>(v) ^ 0x80000000u; }
};
template <> struct Keys<int64_t> {
  using K = uint64_t;
  static K key(int64_t v) { return static_cast<uint64_t>(v) ^ (uint64_t{1} << 63); }
};
template <> struct Keys<uint64_t> {
  using K = uint64_t;
  static K key(uint64_t v) { return v; }
};
// Branch-free: the bits of a positive float as they are with the sign bit set, of a negative one
// inverted; -0.0 first becomes 0.0, any NaN the largest key.
template <typename F, typename U> U float_key(F v) {
  constexpr U sign = U{1} << (sizeof(U) * 8 - 1);
  U bits;
  std::memcpy(&bits, &v, sizeof bits);
  bits = bits == sign ? U{0} : bits;
  U key = bits ^ ((bits & sign) ? ~U{0} : sign);
  return v != v ? ~U{0} : key;
}
template <> struct Keys<float> {
  using K = uint32_t;
  static K key(float v) { return float_key<float, uint32_t>(v); }
};
template <> struct Keys<double> {
  using K = uint64_t;
  static K key(double v) { return float_key<double, uint64_t>(v); }
};

// Stable sort of v[0, n) (idx alongside when not null) with tv, ti as scratch of n elements.
// The result is in v, idx.
template <typename T> void radix_sort(T* v, int64_t* idx, int64_t n, T* tv, int64_t* ti) {
  using K = typename Keys<T>::K;
  if (n < 256) {  // small: a comparison sort of (key, position)
    std::vector<std::pair<K, int64_t>> kp(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) kp[i] = {Keys<T>::key(v[i]), i};
    std::stable_sort(kp.begin(), kp.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    for (int64_t i = 0; i < n; ++i) {
      tv[i] = v[kp[i].second];
      if (idx) ti[i] = idx[kp[i].second];
    }
    std::memcpy(v, tv, n * sizeof(T));
    if (idx) std::memcpy(idx, ti, n * sizeof(int64_t));
    return;
  }
  constexpr int kDigits = sizeof(K);
  int64_t nc = num_chunks(n, kSortGrain);
  // Histograms of every digit over the whole input (a permutation does not change them), to
  // skip the passes where every key has the same digit.
  std::vector<std::array<int64_t, 256>> whole(static_cast<size_t>(nc * kDigits));
  for (auto& h : whole) h.fill(0);
  auto histogram = [&](int64_t c, int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      K k = Keys<T>::key(v[i]);
      for (int d = 0; d < kDigits; ++d) whole[c * kDigits + d][(k >> (8 * d)) & 0xff]++;
    }
  };
  chunks(n, kSortGrain, histogram);
  std::vector<std::array<int64_t, 256>> offsets(static_cast<size_t>(nc));
  bool first = true;  // the first pass that runs counts the input as the histograms above did
  T *src = v, *dst = tv;
  int64_t *isrc = idx, *idst = ti;
  for (int d = 0; d < kDigits; ++d) {
    bool trivial = false;
    for (int b = 0; b < 256 && !trivial; ++b) {
      int64_t count = 0;
      for (int64_t c = 0; c < nc; ++c) count += whole[c * kDigits + d][b];
      trivial = count == n;
    }
    if (trivial) continue;
    int shift = 8 * d;
    auto count = [&](int64_t c, int64_t b, int64_t e) {
      offsets[c].fill(0);
      for (int64_t i = b; i < e; ++i) offsets[c][(Keys<T>::key(src[i]) >> shift) & 0xff]++;
    };
    if (first)
      for (int64_t c = 0; c < nc; ++c) offsets[c] = whole[c * kDigits + d];
    else
      chunks(n, kSortGrain, count);
    first = false;
    int64_t run = 0;
    for (int b = 0; b < 256; ++b)
      for (int64_t c = 0; c < nc; ++c) {
        int64_t k = offsets[c][b];
        offsets[c][b] = run;
        run += k;
      }
    auto scatter = [&](int64_t c, int64_t b, int64_t e) {
      std::array<int64_t, 256>& o = offsets[c];
      for (int64_t i = b; i < e; ++i) {
        int64_t to = o[(Keys<T>::key(src[i]) >> shift) & 0xff]++;
        dst[to] = src[i];
        if (isrc) idst[to] = isrc[i];
      }
    };
    chunks(n, kSortGrain, scatter);
    std::swap(src, dst);
    std::swap(isrc, idst);
  }
  if (src != v) {
    std::memcpy(v, src, n * sizeof(T));
    if (idx) std::memcpy(idx, isrc, n * sizeof(int64_t));
  }
}

template <typename T> void sort(const AxisStep& a, const T* in, void* out_v) {
  int64_t n = a.shape.back(), rows = shape_numel(a.shape) / std::max<int64_t>(n, 1);
  if (n == 0 || rows == 0) return;
  bool arg = a.op == Op::Argsort;
  int64_t is = a.in_strides.back(), os = a.out_strides.back();
  RowMap map{a};
  auto body = [&](int64_t b, int64_t e) {
    // A contiguous output row is sorted in place; otherwise through a row buffer.
    std::vector<T> v;
    std::vector<int64_t> idx;
    std::unique_ptr<T[]> tv(new T[static_cast<size_t>(n)]);  // scratch, not zeroed
    std::unique_ptr<int64_t[]> ti(arg ? new int64_t[static_cast<size_t>(n)] : nullptr);
    for (int64_t r = b; r < e; ++r) {
      const T* x = in + map.in(r);
      T* vr;
      int64_t* ir = nullptr;
      if (!arg && os == 1) {
        vr = static_cast<T*>(out_v) + map.out(r);
      } else {
        v.resize(static_cast<size_t>(n));
        vr = v.data();
      }
      if (arg) {
        if (os == 1) {
          ir = static_cast<int64_t*>(out_v) + map.out(r);
        } else {
          idx.resize(static_cast<size_t>(n));
          ir = idx.data();
        }
        for (int64_t i = 0; i < n; ++i) ir[i] = i;
      }
      for (int64_t i = 0; i < n; ++i) vr[i] = x[i * is];
      radix_sort<T>(vr, ir, n, tv.get(), ti.get());
      if (os != 1) {
        if (arg) {
          int64_t* y = static_cast<int64_t*>(out_v) + map.out(r);
          for (int64_t i = 0; i < n; ++i) y[i * os] = ir[i];
        } else {
          T* y = static_cast<T*>(out_v) + map.out(r);
          for (int64_t i = 0; i < n; ++i) y[i * os] = vr[i];
        }
      }
    }
  };
  for_rows(rows, n, body);
}

void sort_any(const AxisStep& a, const void* in, void* out) {
  switch (a.in_dtype) {
    case DType::Bool: return sort<uint8_t>(a, static_cast<const uint8_t*>(in), out);
    case DType::Int32: return sort<int32_t>(a, static_cast<const int32_t*>(in), out);
    case DType::Int64: return sort<int64_t>(a, static_cast<const int64_t*>(in), out);
    case DType::UInt64: return sort<uint64_t>(a, static_cast<const uint64_t*>(in), out);
    case DType::Float32: return sort<float>(a, static_cast<const float*>(in), out);
    case DType::Float64: return sort<double>(a, static_cast<const double*>(in), out);
    default: ARRAYC_INTERNAL_CHECK(false, std::string("sort of dtype ") + dtype_name(a.in_dtype));
  }
}

}  // namespace

void run_axis_step(const AxisStep& a, const void* in, void* out) {
  counters().kernel_launches++;
  switch (a.op) {
    case Op::Cumsum: return scan_any<true>(a, in, out);
    case Op::Cumprod: return scan_any<false>(a, in, out);
    case Op::Sort: case Op::Argsort: return sort_any(a, in, out);
    default: ARRAYC_INTERNAL_CHECK(false, std::string("not an axis op: ") + op_name(a.op));
  }
}

}  // namespace arrayc::detail
