#include "backend/host/scatter.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "arrayc/half.h"
#include "backend/host/thread_pool.h"

namespace arrayc::detail {
namespace {

constexpr int64_t kCopyGrain = int64_t{1} << 16;  // output elements per chunk of the copy
constexpr int64_t kSerialUpdates = 4096;         // fewer updates than this run on one thread

// Calls f(begin, end) over chunks of [0, n) of at least `grain`, in parallel.
template <typename F> void parallel(int64_t n, int64_t grain, F& f) {
  parallel_for(n, grain, [](void* c, int64_t b, int64_t e) { (*static_cast<F*>(c))(b, e); }, &f);
}

// Copies elements [b, e) (row-major over shape) of the strided view at src to dst[b, e).
void copy_view(const char* src, const Shape& shape, const std::vector<int64_t>& strides, size_t es, char* dst,
               int64_t b, int64_t e) {
  size_t rank = shape.size();
  if (rank == 0) {
    if (b < e) std::memcpy(dst, src, es);
    return;
  }
  std::vector<int64_t> idx(rank);
  int64_t r = b, off = 0;
  for (size_t d = rank; d-- > 0;) {
    idx[d] = r % shape[d];
    r /= shape[d];
    off += idx[d] * strides[d];
  }
  int64_t last = shape[rank - 1], s = strides[rank - 1];
  for (int64_t k = b; k < e;) {
    int64_t run = std::min(e - k, last - idx[rank - 1]);
    char* out = dst + k * static_cast<int64_t>(es);
    const char* in = src + off * static_cast<int64_t>(es);
    if (s == 1) {
      std::memcpy(out, in, static_cast<size_t>(run) * es);
    } else {
      for (int64_t i = 0; i < run; ++i) std::memcpy(out + i * static_cast<int64_t>(es), in + i * s * static_cast<int64_t>(es), es);
    }
    k += run;
    off += run * s;
    idx[rank - 1] += run;
    for (size_t d = rank - 1; d > 0 && idx[d] == shape[d]; --d) {  // carry into the outer dims
      off -= shape[d] * strides[d];
      idx[d] = 0;
      ++idx[d - 1];
      off += strides[d - 1];
    }
  }
}

// x op= y in dtype T (add: wrapping integers, bool as or, 16-bit floats with one rounding).
template <typename T> inline T combine(bool add, T x, T y) {
  if (!add) return y;
  if constexpr (std::is_same_v<T, bool>) {
    return x || y;  // numpy's add of bools
  } else if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
    return T(static_cast<double>(static_cast<float>(x)) + static_cast<float>(y));
  } else if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(x) + static_cast<U>(y)));
  } else {
    return x + y;
  }
}

// The updates and their rows (run_scatter_step's operands, typed).
template <typename T> struct Updates {
  T* out;
  const int64_t* idx;
  int64_t idx_stride;
  const T* v;
  int64_t k, n, row;            // updates; rows of the output; elements per row
  Shape rest;                   // v's dims after the first (x.shape[1:])
  std::vector<int64_t> vstr;    // v's strides, the first one included
  bool add;

  // Applies the updates whose rows lie in [r0, r1), in index order. Rows of one element (x of
  // rank 1) take a tight loop that prefetches the rows of the updates kAhead further on.
  void apply(int64_t r0, int64_t r1) const {
    constexpr int64_t kAhead = 16;
    const uint64_t span = static_cast<uint64_t>(r1 - r0);
    auto row_of = [&](int64_t j) {
      int64_t r = idx[j * idx_stride];
      return r < 0 ? r + n : r;
    };
    if (row == 1) {
      const int64_t vs = vstr[0];
      for (int64_t j = 0; j < k; ++j) {
        if (j + kAhead < k) {
          int64_t p = row_of(j + kAhead);
          if (static_cast<uint64_t>(p - r0) < span) __builtin_prefetch(out + p, 1);
        }
        int64_t r = row_of(j);
        if (static_cast<uint64_t>(r - r0) >= span) continue;  // another chunk's row, or dropped
        out[r] = combine<T>(add, out[r], v[j * vs]);
      }
      return;
    }
    std::vector<int64_t> pos(rest.size());
    for (int64_t j = 0; j < k; ++j) {
      int64_t r = row_of(j);
      if (static_cast<uint64_t>(r - r0) >= span) continue;
      T* dst = out + r * row;
      const T* src = v + j * vstr[0];
      // The row's elements in order, v's read through its strides.
      std::fill(pos.begin(), pos.end(), 0);
      int64_t off = 0;
      for (int64_t i = 0; i < row; ++i) {
        dst[i] = combine<T>(add, dst[i], src[off]);
        for (size_t d = rest.size(); d-- > 0;) {
          off += vstr[d + 1];
          if (++pos[d] < rest[d]) break;
          off -= vstr[d + 1] * rest[d];
          pos[d] = 0;
        }
      }
    }
  }
};

template <typename T> void scatter_typed(const AxisStep& a, const std::vector<void*>& ptrs) {
  const AxisStep::Operand& io = a.more[0];
  const AxisStep::Operand& vo = a.more[1];
  Updates<T> u{static_cast<T*>(ptrs[1]),
               static_cast<const int64_t*>(ptrs[2]),
               io.strides.at(0),
               static_cast<const T*>(ptrs[3]),
               io.shape.at(0),
               a.shape.at(0),
               0,
               Shape(vo.shape.begin() + 1, vo.shape.end()),
               vo.strides,
               a.op == Op::ScatterAdd};
  int64_t total = shape_numel(a.shape);
  if (u.n == 0 || u.k == 0 || total == 0) return;
  u.row = total / u.n;
  // One chunk of rows per thread: each walks all k indices (sequential reads) and writes only its
  // rows, so no two threads touch one element.
  int64_t threads = u.k * u.row < kSerialUpdates ? 1 : num_threads();
  auto body = [&u](int64_t b, int64_t e) { u.apply(b, e); };
  parallel(u.n, (u.n + threads - 1) / threads, body);
}

}  // namespace

void run_scatter_step(const AxisStep& a, const std::vector<void*>& ptrs) {
  const auto* x = static_cast<const char*>(ptrs[0]);
  auto* out = static_cast<char*>(ptrs[1]);
  size_t es = dtype_size(a.out_dtype);
  auto copy = [&](int64_t b, int64_t e) { copy_view(x, a.shape, a.in_strides, es, out, b, e); };
  parallel(shape_numel(a.shape), kCopyGrain, copy);
  switch (a.out_dtype) {
    case DType::Bool: return scatter_typed<bool>(a, ptrs);
    case DType::Int8: return scatter_typed<int8_t>(a, ptrs);
    case DType::UInt8: return scatter_typed<uint8_t>(a, ptrs);
    case DType::Int16: return scatter_typed<int16_t>(a, ptrs);
    case DType::UInt16: return scatter_typed<uint16_t>(a, ptrs);
    case DType::Int32: return scatter_typed<int32_t>(a, ptrs);
    case DType::UInt32: return scatter_typed<uint32_t>(a, ptrs);
    case DType::Int64: return scatter_typed<int64_t>(a, ptrs);
    case DType::UInt64: return scatter_typed<uint64_t>(a, ptrs);
    case DType::Float16: return scatter_typed<float16>(a, ptrs);
    case DType::BFloat16: return scatter_typed<bfloat16>(a, ptrs);
    case DType::Float32: return scatter_typed<float>(a, ptrs);
    case DType::Float64: return scatter_typed<double>(a, ptrs);
  }
}

}  // namespace arrayc::detail
