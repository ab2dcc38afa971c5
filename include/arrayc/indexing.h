// Indexing, slicing, gathers, functional updates, and the shape and joining functions, with
// numpy's names and semantics (docs/indexing.md has the guide and every rule below).
//
//   x[1]                      x[{1, 3}]               (numpy x[1, 3]; an integer drops its dim)
//   x[{Slice(1, 3), _}]       x(Slice(1, 3), _)       (numpy x[1:3, :])
//   x[{_, Slice(none, none, -1)}]                     (numpy x[:, ::-1])
//   x[{ellipsis, newaxis, 0}]                         (numpy x[..., None, 0])
//   x[mask]                   (a bool array: the selected elements, 1-D; evaluates the mask)
//   x[indices]                (an integer array: take(x, indices, 0))
//   x.at(i).set(v), x.at({_, 2}).add(v)               (JAX's functional updates: new arrays)
//
// Basic slicing (integers, slices, newaxis, ellipsis) gives views: no copy is made, and a view of
// evaluated data shares its storage. Slice bounds outside the array are clamped as Python's are;
// an integer index outside it raises arrayc::Error naming the index, the axis and its size.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <utility>
#include <variant>
#include <vector>

#include "arrayc/array.h"
#include "arrayc/ops.h"

namespace arrayc {

// Python's None inside a Slice: Slice(none, none, -1) is ::-1.
inline constexpr std::nullopt_t none = std::nullopt;

// Python's slice(start, stop, step); an absent part takes Python's default.
struct Slice {
  std::optional<int64_t> start, stop, step;
  constexpr Slice() = default;                                              // :
  constexpr explicit Slice(std::optional<int64_t> stop_) : stop(stop_) {}   // :stop
  constexpr Slice(std::optional<int64_t> start_, std::optional<int64_t> stop_,
                  std::optional<int64_t> step_ = std::nullopt)
      : start(start_), stop(stop_), step(step_) {}
};
inline constexpr Slice _{};  // numpy's bare `:`

struct NewAxis {};
inline constexpr NewAxis newaxis{};  // numpy's None / np.newaxis in an index
struct Ellipsis {};
inline constexpr Ellipsis ellipsis{};  // numpy's `...`

// One item of an index: an integer, a Slice, newaxis, ellipsis, or an array (integer: gather
// along that dim; bool: a mask over the dims it covers).
class Index {
 public:
  template <typename I>
    requires(std::is_integral_v<I> && !std::is_same_v<I, bool>)
  Index(I i) : item_(static_cast<int64_t>(i)) {}
  Index(Slice s) : item_(s) {}
  Index(NewAxis n) : item_(n) {}
  Index(Ellipsis e) : item_(e) {}
  Index(Array a) : item_(std::move(a)) {}
  using Item = std::variant<int64_t, Slice, NewAxis, Ellipsis, Array>;
  const Item& item() const { return item_; }

 private:
  Item item_;
};

template <typename... I> Array Array::operator()(const I&... indices) const {
  return (*this)[std::vector<Index>{Index(indices)...}];
}

// x.at(index): JAX's functional update. Each call returns a new array; x is unchanged.
//  - a basic index (integers, slices, newaxis, ellipsis): v is broadcast to x[index]'s shape;
//  - a bool mask of x's shape: where(mask, v, x) (set) or where(mask, x + v, x) (add);
//  - an integer array alone (indexing axis 0): v is broadcast to indices.shape + x.shape[1:].
//    Negative indices count from the end; indices outside [-n, n) are dropped (JAX). With
//    repeated indices, add accumulates every update and set keeps the last
//    update in index order, on every device. The work is dense: a compare per (row, update)
//    pair, fused into one kernel; fine for thousands of updates, slow for millions.
// Values are cast to x's dtype (JAX's rule).
class At {
 public:
  At(Array x, std::vector<Index> index) : x_(std::move(x)), index_(std::move(index)) {}
  Array get() const;  // x[index]
  Array set(const Array& v) const;
  Array add(const Array& v) const;
  template <Scalar S> Array set(S v) const { return set(scalar_for(v, x_, "at.set")); }
  template <Scalar S> Array add(S v) const { return add(scalar_for(v, x_, "at.add")); }

 private:
  Array x_;
  std::vector<Index> index_;
};

// ---- Gathers --------------------------------------------------------------------------------
// numpy.take: elements of a (flattened when no axis is given) at `indices` along `axis`; the
// result's shape is a.shape[:axis] + indices.shape + a.shape[axis+1:]. Fused with its consumers
// and with the computation of the indices. Index rule (numpy raises instead; JAX clamps): a
// negative index counts from the end, and an index outside [-n, n) is clamped into [0, n), so no
// index ever reads outside a.
Array take(const Array& a, const Array& indices);
Array take(const Array& a, const Array& indices, int64_t axis);
// numpy.take_along_axis: indices has a's rank; the other dims broadcast. Same index rule.
Array take_along_axis(const Array& a, const Array& indices, int64_t axis);

// ---- Joining and splitting --------------------------------------------------------------------
// One kernel that picks its source per output region (no copies of the inputs first).
Array concatenate(const std::vector<Array>& arrays, int64_t axis = 0);
Array stack(const std::vector<Array>& arrays, int64_t axis = 0);
// numpy.split: into `sections` equal parts (an error when the axis does not divide), or at the
// given indices (clamped as slice bounds). The parts are views.
std::vector<Array> split(const Array& a, int64_t sections, int64_t axis = 0);
std::vector<Array> split(const Array& a, const std::vector<int64_t>& indices, int64_t axis = 0);

// ---- Padding and repetition -----------------------------------------------------------------
enum class PadMode { Constant, Edge };
// numpy.pad with (before, after) per dim, or one width for every side of every dim.
Array pad(const Array& a, const std::vector<std::pair<int64_t, int64_t>>& widths, PadMode mode = PadMode::Constant,
          double value = 0.0);
Array pad(const Array& a, int64_t width, PadMode mode = PadMode::Constant, double value = 0.0);
Array tile(const Array& a, const std::vector<int64_t>& reps);
// numpy.repeat with one count for every element (flattened when no axis is given).
Array repeat(const Array& a, int64_t repeats);
Array repeat(const Array& a, int64_t repeats, int64_t axis);
// numpy.roll: elements shifted along axis, wrapping around (flattened when no axis is given).
Array roll(const Array& a, int64_t shift);
Array roll(const Array& a, int64_t shift, int64_t axis);

// ---- Views ----------------------------------------------------------------------------------
Array flip(const Array& a);  // every axis
Array flip(const Array& a, int64_t axis);
Array squeeze(const Array& a);  // every axis of extent 1
Array squeeze(const Array& a, const std::vector<int64_t>& axes);
Array swapaxes(const Array& a, int64_t axis1, int64_t axis2);
Array moveaxis(const Array& a, int64_t source, int64_t destination);
Array moveaxis(const Array& a, const std::vector<int64_t>& source, const std::vector<int64_t>& destination);
Array ravel(const Array& a);  // a view when the strides allow, else a copy (as numpy)

}  // namespace arrayc
