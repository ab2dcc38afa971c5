// More of numpy's reductions, its scans and sorts, and creation helpers (issue 28), with numpy's
// names and semantics. Like ops.h, each builds graph nodes and checks its arguments at once.
//
// - argmax/argmin: int64 index of the first maximum (minimum); a NaN counts as the extreme, so
//   the first NaN wins (numpy). Without an axis, of the flattened array. An empty axis raises.
//   Built from the Max/Min reduction and a fused Min reduction of indices: two passes over x.
// - any/all: bool; empty axes give false/true.
// - var/std: mean((x - mean(x))^2) * n / (n - ddof), in the input's float dtype (integers and
//   bool: float64); n - ddof <= 0 gives inf or NaN, as numpy.
// - logsumexp: log(sum(exp(x))), stable: shifted by the max where that is finite; rows of -inf
//   give -inf; empty axes give -inf. Integers and bool as exp does.
// - cumsum/cumprod: inclusive scans, numpy's accumulation dtypes (on Linux): bool and signed
//   integers accumulate in int64, unsigned ones in uint64 (both wrap), float32/float64 in their
//   dtype; float16/bfloat16 accumulate in float32 and give their dtype, each prefix rounded once.
//   Without an axis, of the flattened array.
// - sort/argsort: every dtype; stable, ascending, NaN last, -0.0 and 0.0 equal (kept in input
//   order). sort keeps the dtype; argsort gives int64 indices along the axis.
#pragma once
#include <cstdint>
#include <vector>

#include "arrayc/array.h"

namespace arrayc {

// ---- Reductions ---------------------------------------------------------------------------------
Array argmax(const Array& a);
Array argmax(const Array& a, int64_t axis, bool keepdims = false);
Array argmin(const Array& a);
Array argmin(const Array& a, int64_t axis, bool keepdims = false);
Array any(const Array& a);
Array any(const Array& a, const std::vector<int64_t>& axes, bool keepdims = false);
Array all(const Array& a);
Array all(const Array& a, const std::vector<int64_t>& axes, bool keepdims = false);
Array var(const Array& a, double ddof = 0);
Array var(const Array& a, const std::vector<int64_t>& axes, double ddof = 0, bool keepdims = false);
// numpy's name. Call it qualified, arrayc::std(x): under `using namespace arrayc` a bare `std`
// is ambiguous with namespace std (std::vector and the like still mean namespace std).
Array std(const Array& a, double ddof = 0);
Array std(const Array& a, const std::vector<int64_t>& axes, double ddof = 0, bool keepdims = false);
Array logsumexp(const Array& a);
Array logsumexp(const Array& a, const std::vector<int64_t>& axes, bool keepdims = false);

// ---- Scans and sorts (a fusion boundary: they read their input from memory) ----------------------
Array cumsum(const Array& a);  // of the flattened array
Array cumsum(const Array& a, int64_t axis);
Array cumprod(const Array& a);
Array cumprod(const Array& a, int64_t axis);
Array sort(const Array& a, int64_t axis = -1);
Array argsort(const Array& a, int64_t axis = -1);

// ---- Creation -----------------------------------------------------------------------------------
// num evenly spaced values from start to stop (stop included when endpoint), computed in float64
// as numpy does (start + i * step, the last one exactly stop) and converted to dtype.
Array linspace(double start, double stop, int64_t num = 50, bool endpoint = true,
               DType dtype = DType::Float32, Device device = default_device());
// N x M (M < 0: N) with ones on the k-th diagonal (k > 0 above the main one).
Array eye(int64_t n, int64_t m = -1, int64_t k = 0, DType dtype = DType::Float32,
          Device device = default_device());
// Arrays of a's shape and device, of a's dtype unless one is given.
Array zeros_like(const Array& a);
Array zeros_like(const Array& a, DType dtype);
Array ones_like(const Array& a);
Array ones_like(const Array& a, DType dtype);
Array full_like(const Array& a, double value);
Array full_like(const Array& a, double value, DType dtype);

}  // namespace arrayc
