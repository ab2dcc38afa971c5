// More of numpy's main namespace (issue 28's coverage list, docs/numpy_coverage.md), with numpy 2's
// names and semantics. Each is a composition of the graph's ops (elementwise work fuses; grad and
// vmap follow from the ops it is built of), except the few marked "outside jit only", whose
// result's shape depends on the values: they evaluate their input, and inside jit they raise
// arrayc::Error saying what to use instead (as boolean masks do).
//
// Differences from numpy, all also in docs/numpy_coverage.md:
// - empty() gives zeros (numpy leaves the contents unspecified); copy() gives a new contiguous
//   buffer of the same values (arrays are immutable, so it is only needed to let go of a large
//   base array that a view keeps alive).
// - reciprocal of an integer 0 is 0 (numpy: an unspecified value with a warning).
// - average with weights that sum to zero gives inf or NaN (numpy raises).
// - median/quantile/percentile: one axis or all (numpy also takes a tuple), method "linear".
// - einsum: explicit or implicit subscripts over letters, no "..." (raises); any number of
//   operands, contracted two at a time left to right (sums go through matmul).
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "arrayc/array.h"

namespace arrayc {

// ---- Creation -----------------------------------------------------------------------------------
Array empty(const Shape& shape, DType dtype = DType::Float32, Device device = default_device());  // zeros
Array copy(const Array& a);  // a new contiguous buffer with a's values, on a's device
// base ** linspace(start, stop, num, endpoint), computed in float64 and converted to dtype.
Array logspace(double start, double stop, int64_t num = 50, bool endpoint = true, double base = 10.0,
               DType dtype = DType::Float32, Device device = default_device());
// numpy.meshgrid: each input flattened; indexing "xy" (the first two output axes swapped) or "ij".
// The outputs are broadcast views (numpy copies; the values are the same).
std::vector<Array> meshgrid(const std::vector<Array>& xs, const std::string& indexing = "xy");
// 1-D v: a square matrix with v on the k-th diagonal; 2-D v: its k-th diagonal (a 1-D copy).
Array diag(const Array& v, int64_t k = 0);
// The diagonal of the (axis1, axis2) planes, offset above (> 0) or below (< 0) the main one, as
// the last axis of the result.
Array diagonal(const Array& a, int64_t offset = 0, int64_t axis1 = 0, int64_t axis2 = 1);
// Elements on and below (tril) or above (triu) the k-th diagonal of the last two axes, zeros
// elsewhere. A 1-D input is broadcast to a square matrix first (numpy's rule).
Array tril(const Array& a, int64_t k = 0);
Array triu(const Array& a, int64_t k = 0);

// ---- Joining ------------------------------------------------------------------------------------
Array vstack(const std::vector<Array>& arrays);  // 1-D inputs become rows; then concatenate(axis 0)
Array hstack(const std::vector<Array>& arrays);  // along axis 1, or axis 0 for 1-D inputs
Array append(const Array& a, const Array& values);  // both flattened
Array append(const Array& a, const Array& values, int64_t axis);

// ---- Elementwise --------------------------------------------------------------------------------
Array square(const Array& a);      // a * a in a's dtype; bool as int8 (numpy has no bool loop)
Array reciprocal(const Array& a);  // 1 / a in a's dtype; integers truncate (1, -1 or 0; 1/0 = 0); bool as int8
// NaN -> nan, +inf -> posinf, -inf -> neginf (default: the dtype's largest and lowest finite
// values); integers and bool unchanged.
Array nan_to_num(const Array& a, double nan = 0.0);
Array nan_to_num(const Array& a, double nan, double posinf, double neginf);
// |a - b| <= atol + rtol * |b| for finite b, or a == b; NaN == NaN when equal_nan. b is computed in
// its float dtype (integers: float64) and the tolerances in that dtype, as numpy's.
Array isclose(const Array& a, const Array& b, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false);
Array allclose(const Array& a, const Array& b, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false);  // bool scalar
// A bool scalar: same shape and equal elements (different shapes: false, not broadcast).
Array array_equal(const Array& a, const Array& b, bool equal_nan = false);

// ---- Reductions ---------------------------------------------------------------------------------
Array average(const Array& a);  // = mean
Array average(const Array& a, const std::vector<int64_t>& axes, bool keepdims = false);
// So that average(x, {0}) means axes, not weights (a braced list could make either).
inline Array average(const Array& a, std::initializer_list<int64_t> axes, bool keepdims = false) {
  return average(a, std::vector<int64_t>(axes), keepdims);
}
// Weighted: sum(a * w) / sum(w), in result_type(a, w) (integers: float64). weights has a's shape,
// or is 1-D along the one given axis.
Array average(const Array& a, const Array& weights);
Array average(const Array& a, const Array& weights, int64_t axis, bool keepdims = false);
// NaN counted as zero (nansum) or left out (nanmean: all-NaN gives NaN); integers as sum/mean.
Array nansum(const Array& a);
Array nansum(const Array& a, const std::vector<int64_t>& axes, bool keepdims = false);
Array nanmean(const Array& a);
Array nanmean(const Array& a, const std::vector<int64_t>& axes, bool keepdims = false);
Array count_nonzero(const Array& a);  // int64; NaN counts as nonzero
Array count_nonzero(const Array& a, const std::vector<int64_t>& axes, bool keepdims = false);
// The n-th difference along axis (bool: not_equal, as numpy).
Array diff(const Array& a, int64_t n = 1, int64_t axis = -1);
// Sort-based, numpy's "linear" method; a NaN in a slice gives NaN. Float dtypes keep their dtype,
// integers and bool give float64. q (quantile) in [0, 1], p (percentile) in [0, 100]; a vector of
// them adds a leading axis to the result.
Array median(const Array& a);
Array median(const Array& a, int64_t axis, bool keepdims = false);
Array quantile(const Array& a, double q);
Array quantile(const Array& a, double q, int64_t axis, bool keepdims = false);
Array quantile(const Array& a, const std::vector<double>& q);
Array quantile(const Array& a, const std::vector<double>& q, int64_t axis, bool keepdims = false);
Array percentile(const Array& a, double p);
Array percentile(const Array& a, double p, int64_t axis, bool keepdims = false);
Array percentile(const Array& a, const std::vector<double>& p);
Array percentile(const Array& a, const std::vector<double>& p, int64_t axis, bool keepdims = false);
// int64 insertion points of v's elements into the sorted 1-D a (NaN sorted last): side "left"
// counts the elements < v, "right" those <= v. A binary search of ceil(log2(n + 1)) gathers,
// fused; fine inside jit.
Array searchsorted(const Array& a, const Array& v, const std::string& side = "left");
Array trace(const Array& a, int64_t offset = 0, int64_t axis1 = 0, int64_t axis2 = 1);  // sum of diagonal()

// ---- Products -----------------------------------------------------------------------------------
Array outer(const Array& a, const Array& b);  // flattened a (column) times flattened b (row)
// Sum over the last axes: shape a.shape[:-1] + b.shape[:-1]; a scalar operand multiplies.
Array inner(const Array& a, const Array& b);
// numpy.einsum("ij,jk->ik", {a, b}); see the notes above. Bool operands contract as logical
// and/or (numpy's).
Array einsum(const std::string& subscripts, const std::vector<Array>& operands);

// ---- Outside jit only (the result's shape depends on the values) ------------------------------------
std::vector<Array> nonzero(const Array& a);  // one int64 index array per axis, C order
Array argwhere(const Array& a);              // int64 [count, ndim]
Array unique(const Array& a);                // sorted distinct values of the flattened a; NaNs as one
// Counts of each value 0 .. max(x) (at least minlength), int64; with weights, their float64 sums.
Array bincount(const Array& x, int64_t minlength = 0);
Array bincount(const Array& x, const Array& weights, int64_t minlength = 0);
// numpy.histogram with `bins` equal bins over [lo, hi] (default: the flattened a's min and max;
// lo == hi widens to +-0.5): {counts (int64), edges (bins + 1, a's float dtype or float64)}.
// Each bin holds [edge_i, edge_i+1), the last one also its right edge; NaN and values outside
// the range are not counted. No weights or density. The edges are linspace's (float64, then
// rounded to the dtype; numpy computes float32 edges in float32, which may differ in the last bit).
std::vector<Array> histogram(const Array& a, int64_t bins = 10);
std::vector<Array> histogram(const Array& a, int64_t bins, double lo, double hi);

}  // namespace arrayc
