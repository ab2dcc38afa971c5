// Indexing, gathers, functional updates and the shape and joining functions (arrayc/indexing.h).
// Everything here is built from three node kinds: views (slice, reshape, transpose, broadcast),
// the gather, and elementwise ops, so that the fusion pass can put each result in one kernel.
#include "arrayc/indexing.h"

#include <algorithm>
#include <numeric>

#include "ir/build.h"
#include "ir/build_index.h"
#include "ir/graph.h"

namespace arrayc {
namespace {

using detail::NodeRef;

[[noreturn]] void fail(const std::string& msg) { throw Error(msg); }

int64_t norm_axis(const char* op, int64_t axis, const Shape& shape, int64_t rank) {
  if (axis < -rank || axis >= rank)
    fail(std::string(op) + ": axis " + std::to_string(axis) + " is out of range for an array of rank " +
         std::to_string(shape.size()) + " (shape " + shape_str(shape) + ")");
  return axis < 0 ? axis + rank : axis;
}

// The coordinate along `axis` of every element of an array of `shape` (int64, a view of arange).
Array coordinate(const Shape& shape, int64_t axis, Device device) {
  Shape s(shape.size(), 1);
  s[axis] = shape[axis];
  return broadcast_to(reshape(arange(shape[axis], DType::Int64, device), s), shape);
}

// The result of `op` must have at most 2^63 - 1 elements (checked before any node is built, so
// that the error names `op`).
void check_size(const char* op, const Shape& s) {
  int64_t n = 1;
  for (int64_t e : s)
    if (e == 0) return;
  for (int64_t e : s)
    if (__builtin_mul_overflow(n, e, &n))
      fail(std::string(op) + ": the result's shape " + shape_str(s) + " has more than 2^63 - 1 elements");
}

// A per-dim table (host values) seen as an array of `shape`, varying along `axis`.
Array table_along(const std::vector<int64_t>& values, const Shape& shape, int64_t axis, Device device) {
  Shape s(shape.size(), 1);
  s[axis] = shape[axis];
  return broadcast_to(reshape(array(values, Shape{static_cast<int64_t>(values.size())}, device), s), shape);
}

Array int_scalar(int64_t v, Device device) { return detail::full_integer({}, v, DType::Int64, device); }

// Python's slice.indices(n) and the slice's length.
struct SliceRange {
  int64_t start, step, len;
};
SliceRange resolve_slice(const Slice& s, int64_t n, int64_t axis) {
  int64_t step = s.step.value_or(1);
  if (step == 0) fail("index: slice step cannot be zero (axis " + std::to_string(axis) + ")");
  __int128 lower = step > 0 ? 0 : -1, upper = step > 0 ? n : n - 1;
  auto bound = [&](std::optional<int64_t> v, bool is_start) -> __int128 {
    if (!v) return (step < 0) == is_start ? upper : lower;
    __int128 x = *v;
    return x < 0 ? std::max<__int128>(x + n, lower) : std::min<__int128>(x, upper);
  };
  __int128 start = bound(s.start, true), stop = bound(s.stop, false), len = 0;
  if (step > 0 && stop > start) len = (stop - start + step - 1) / step;
  if (step < 0 && start > stop) len = (start - stop + (-static_cast<__int128>(step)) - 1) / -static_cast<__int128>(step);
  if (len == 0) return {0, 1, 0};
  return {static_cast<int64_t>(start), step, static_cast<int64_t>(len)};
}

// A numpy index list resolved against a shape: the slice of every input dim, the result's shape
// (integer dims dropped, newaxis inserted), and the one array index, if any.
struct Resolved {
  std::vector<int64_t> starts, steps, lens;  // per input dim
  Shape out;
  std::optional<Array> array;
  int64_t array_dim = -1;  // the first input dim it indexes
  int64_t array_pos = -1;  // where its dims sit in `out`
};

Resolved resolve(const Shape& shape, const std::vector<Index>& index) {
  int64_t rank = static_cast<int64_t>(shape.size());
  int64_t used = 0, ellipses = 0;
  for (const Index& ix : index) {
    const Index::Item& it = ix.item();
    if (std::holds_alternative<Ellipsis>(it)) ++ellipses;
    else if (const Array* a = std::get_if<Array>(&it)) used += a->dtype() == DType::Bool ? a->ndim() : 1;
    else if (!std::holds_alternative<NewAxis>(it)) ++used;
  }
  if (ellipses > 1) fail("index: an index can only have a single ellipsis ('...')");
  if (used > rank)
    fail("index: too many indices for an array of shape " + shape_str(shape) + ": " + std::to_string(used) +
         " dims indexed, the array has " + std::to_string(rank));
  Resolved r;
  int64_t d = 0;
  auto full = [&] {
    r.starts.push_back(0);
    r.steps.push_back(1);
    r.lens.push_back(shape[d]);
    r.out.push_back(shape[d]);
    ++d;
  };
  for (const Index& ix : index) {
    const Index::Item& it = ix.item();
    if (const int64_t* i = std::get_if<int64_t>(&it)) {
      int64_t n = shape[d];
      if (*i < -n || *i >= n)
        fail("index: index " + std::to_string(*i) + " is out of bounds for axis " + std::to_string(d) +
             " with size " + std::to_string(n));
      r.starts.push_back(*i < 0 ? *i + n : *i);
      r.steps.push_back(1);
      r.lens.push_back(1);
      ++d;
    } else if (const Slice* s = std::get_if<Slice>(&it)) {
      SliceRange sr = resolve_slice(*s, shape[d], d);
      r.starts.push_back(sr.start);
      r.steps.push_back(sr.step);
      r.lens.push_back(sr.len);
      r.out.push_back(sr.len);
      ++d;
    } else if (std::holds_alternative<NewAxis>(it)) {
      r.out.push_back(1);
    } else if (std::holds_alternative<Ellipsis>(it)) {
      for (int64_t k = used; k < rank; ++k) full();
    } else {
      const Array& a = std::get<Array>(it);
      if (r.array) fail("index: only one array index is supported (numpy's indexing with several arrays is not)");
      if (a.dtype() != DType::Bool && !is_int(a.dtype()))
        fail(std::string("index: arrays used as indices must be of integer or boolean type, got ") +
             dtype_name(a.dtype()) + " " + shape_str(a.shape()));
      if (a.dtype() == DType::Bool && a.ndim() == 0) fail("index: a 0-d boolean index is not supported");
      r.array = a;
      r.array_dim = d;
      r.array_pos = static_cast<int64_t>(r.out.size());
      int64_t k = a.dtype() == DType::Bool ? a.ndim() : 1;
      for (int64_t j = 0; j < k; ++j) {
        if (a.dtype() == DType::Bool && a.shape()[j] != shape[d])
          fail("index: boolean index did not match indexed array along axis " + std::to_string(d) +
               "; size of axis is " + std::to_string(shape[d]) + " but size of corresponding boolean axis is " +
               std::to_string(a.shape()[j]));
        full();
      }
    }
  }
  while (d < rank) full();
  return r;
}

// The basic part of an index: a view (slice, then reshape to drop integer dims and add newaxis).
Array basic_view(const Array& x, const Resolved& r) {
  return reshape(Array(detail::make_slice(x.node(), r.starts, r.steps, r.lens)), r.out);
}

bool depends_on_param(const Array& a) {
  for (const NodeRef& n : detail::topo_order({a.node()}))
    if (n->op == detail::Op::Param) return true;
  return false;
}

// x[mask] over dims pos .. pos + mask.ndim of x: evaluates the mask (outside jit only).
Array mask_select(const Array& x, const Array& mask, int64_t pos) {
  if (depends_on_param(mask))
    fail("index: a boolean mask " + shape_str(mask.shape()) +
         " selects a number of elements that depends on the data, which jit cannot trace; "
         "use where(mask, x, fill) instead");
  std::vector<bool> m = mask.to_vector<bool>();
  std::vector<int64_t> picked;
  for (size_t i = 0; i < m.size(); ++i)
    if (m[i]) picked.push_back(static_cast<int64_t>(i));
  Shape merged(x.shape().begin(), x.shape().begin() + pos);
  merged.push_back(mask.size());
  merged.insert(merged.end(), x.shape().begin() + pos + mask.ndim(), x.shape().end());
  Array flat = reshape(x, merged);
  Array idx = array(picked, Shape{static_cast<int64_t>(picked.size())}, x.device());
  if (mask.size() == 0) {
    Shape s = merged;
    s[pos] = 0;
    return zeros(s, x.dtype(), x.device());
  }
  return take(flat, idx, pos);
}

Array apply_index(const Array& x, const std::vector<Index>& index) {
  Resolved r = resolve(x.shape(), index);
  Array v = basic_view(x, r);
  if (!r.array) return v;
  if (r.array->dtype() == DType::Bool) return mask_select(v, *r.array, r.array_pos);
  return take(v, *r.array, r.array_pos);
}

void check_indices(const char* op, const Array& indices) {
  if (!is_int(indices.dtype()))
    fail(std::string(op) + ": indices must be integers, got " + dtype_name(indices.dtype()) + " " +
         shape_str(indices.shape()));
}

// The gather of a along `axis` by `idx` (already of the result's shape); a's other dims map to
// the result's dims given by `map`.
Array gather(const char* op, const Array& a, const Array& idx, int64_t axis, const std::vector<int64_t>& map) {
  return Array(detail::make_gather(op, a.node(), idx.node(), axis, map));
}

}  // namespace

// ---- Array's indexing members ------------------------------------------------------------------

Array Array::operator[](const Index& index) const { return apply_index(*this, {index}); }
Array Array::operator[](std::initializer_list<Index> indices) const { return apply_index(*this, indices); }
Array Array::operator[](const std::vector<Index>& indices) const { return apply_index(*this, indices); }
At Array::at(const Index& index) const { return At(*this, {index}); }
At Array::at(std::initializer_list<Index> indices) const { return At(*this, indices); }

// ---- Gathers -----------------------------------------------------------------------------------

Array take(const Array& a, const Array& indices) { return take(ravel(a), indices, 0); }

Array take(const Array& a, const Array& indices, int64_t axis_in) {
  check_indices("take", indices);
  if (a.ndim() == 0) fail("take: cannot take along an axis of a 0-d array; give no axis");
  int64_t axis = norm_axis("take", axis_in, a.shape(), a.ndim());
  int64_t k = indices.ndim();
  Shape out(a.shape().begin(), a.shape().begin() + axis);
  out.insert(out.end(), indices.shape().begin(), indices.shape().end());
  out.insert(out.end(), a.shape().begin() + axis + 1, a.shape().end());
  Shape placed(axis, 1);
  placed.insert(placed.end(), indices.shape().begin(), indices.shape().end());
  placed.resize(out.size(), 1);
  std::vector<int64_t> map(a.ndim());
  for (int64_t d = 0; d < a.ndim(); ++d) map[d] = d < axis ? d : d == axis ? -1 : d - 1 + k;
  return gather("take", a, broadcast_to(reshape(indices, placed), out), axis, map);
}

Array take_along_axis(const Array& a, const Array& indices, int64_t axis_in) {
  check_indices("take_along_axis", indices);
  if (a.ndim() != indices.ndim())
    fail("take_along_axis: indices of rank " + std::to_string(indices.ndim()) + " " + shape_str(indices.shape()) +
         " for an array of rank " + std::to_string(a.ndim()) + " " + shape_str(a.shape()) +
         "; they must have the same rank");
  if (a.ndim() == 0) fail("take_along_axis: a 0-d array has no axis to take along");
  int64_t axis = norm_axis("take_along_axis", axis_in, a.shape(), a.ndim());
  Shape out(a.ndim()), src = a.shape();
  for (int64_t d = 0; d < a.ndim(); ++d) {
    if (d == axis) {
      out[d] = indices.shape()[d];
      continue;
    }
    int64_t x = a.shape()[d], y = indices.shape()[d];
    if (x != y && x != 1 && y != 1)
      fail("take_along_axis: shapes " + shape_str(a.shape()) + " and " + shape_str(indices.shape()) +
           " cannot be broadcast together outside axis " + std::to_string(axis));
    out[d] = x == 1 ? y : x;
    src[d] = out[d];
  }
  std::vector<int64_t> map(a.ndim());
  std::iota(map.begin(), map.end(), 0);
  map[axis] = -1;
  return gather("take_along_axis", broadcast_to(a, src), broadcast_to(indices, out), axis, map);
}

// ---- Joining and splitting ---------------------------------------------------------------------

Array concatenate(const std::vector<Array>& arrays, int64_t axis_in) {
  if (arrays.empty()) fail("concatenate: need at least one array to concatenate");
  const Array& first = arrays[0];
  if (first.ndim() == 0) fail("concatenate: zero-dimensional arrays cannot be concatenated");
  int64_t axis = norm_axis("concatenate", axis_in, first.shape(), first.ndim());
  DType dtype = first.dtype();
  Shape out = first.shape();
  out[axis] = 0;
  for (size_t i = 0; i < arrays.size(); ++i) {
    const Array& a = arrays[i];
    if (a.device() != first.device())
      fail("concatenate: arrays are on different devices (" + first.device().str() + " and " + a.device().str() +
           "); copy one with .to(device) first");
    bool same = a.ndim() == first.ndim();
    for (int64_t d = 0; same && d < a.ndim(); ++d) same = d == axis || a.shape()[d] == first.shape()[d];
    if (!same)
      fail("concatenate: array " + std::to_string(i) + " has shape " + shape_str(a.shape()) + ", array 0 has " +
           shape_str(first.shape()) + "; all dims but axis " + std::to_string(axis) + " must match");
    dtype = promote_types(dtype, a.dtype());
    out[axis] += a.shape()[axis];
  }
  if (arrays.size() == 1) return cast(first, dtype);
  if (shape_numel(out) == 0) return zeros(out, dtype, first.device());
  // One kernel: each element picks the input whose region holds it; every input is read through
  // a gather at (coordinate - region start), clamped, so no read leaves its input.
  Array coord = coordinate(out, axis, first.device());
  std::vector<int64_t> map(first.ndim());
  std::iota(map.begin(), map.end(), 0);
  map[axis] = -1;
  std::optional<Array> result;
  int64_t end = out[axis];
  for (size_t i = arrays.size(); i-- > 0;) {
    const Array& a = arrays[i];
    int64_t n = a.shape()[axis];
    end -= n;
    if (n == 0) continue;
    Array part = gather("concatenate", cast(a, dtype), coord - int_scalar(end, a.device()), axis, map);
    result = result ? where(coord < int_scalar(end + n, a.device()), part, *result) : part;
  }
  return *result;
}

Array stack(const std::vector<Array>& arrays, int64_t axis_in) {
  if (arrays.empty()) fail("stack: need at least one array to stack");
  for (size_t i = 1; i < arrays.size(); ++i)
    if (arrays[i].shape() != arrays[0].shape())
      fail("stack: all input arrays must have the same shape: array 0 is " + shape_str(arrays[0].shape()) +
           ", array " + std::to_string(i) + " is " + shape_str(arrays[i].shape()));
  int64_t axis = norm_axis("stack", axis_in, arrays[0].shape(), arrays[0].ndim() + 1);
  std::vector<Array> expanded;
  for (const Array& a : arrays) expanded.push_back(expand_dims(a, axis));
  return concatenate(expanded, axis);
}

std::vector<Array> split(const Array& a, int64_t sections, int64_t axis_in) {
  if (a.ndim() == 0) fail("split: a 0-d array cannot be split");
  int64_t axis = norm_axis("split", axis_in, a.shape(), a.ndim());
  int64_t n = a.shape()[axis];
  if (sections <= 0) fail("split: number of sections must be larger than 0, got " + std::to_string(sections));
  if (n % sections != 0)
    fail("split: array split does not result in an equal division (axis " + std::to_string(axis) + " of size " +
         std::to_string(n) + " into " + std::to_string(sections) + " sections)");
  std::vector<int64_t> at;
  for (int64_t s = 1; s < sections; ++s) at.push_back(s * (n / sections));
  return split(a, at, axis);
}

std::vector<Array> split(const Array& a, const std::vector<int64_t>& indices, int64_t axis_in) {
  if (a.ndim() == 0) fail("split: a 0-d array cannot be split");
  int64_t axis = norm_axis("split", axis_in, a.shape(), a.ndim());
  std::vector<Array> parts;
  std::vector<Index> index(a.ndim(), Index(_));
  std::optional<int64_t> prev = 0;
  for (size_t i = 0; i <= indices.size(); ++i) {
    std::optional<int64_t> next = i < indices.size() ? std::optional<int64_t>(indices[i]) : std::nullopt;
    index[axis] = Slice(prev, next);
    parts.push_back(a[index]);
    prev = next;
  }
  return parts;
}

// ---- Padding and repetition --------------------------------------------------------------------

Array pad(const Array& a, const std::vector<std::pair<int64_t, int64_t>>& widths_in, PadMode mode, double value) {
  std::vector<std::pair<int64_t, int64_t>> widths = widths_in;
  if (widths.size() == 1) widths.assign(a.ndim(), widths_in[0]);
  if (static_cast<int64_t>(widths.size()) != a.ndim())
    fail("pad: " + std::to_string(widths_in.size()) + " (before, after) pairs given for an array of rank " +
         std::to_string(a.ndim()) + " (shape " + shape_str(a.shape()) + ")");
  Shape out = a.shape();
  for (int64_t d = 0; d < a.ndim(); ++d) {
    auto [lo, hi] = widths[d];
    if (lo < 0 || hi < 0)
      fail("pad: negative width (" + std::to_string(lo) + ", " + std::to_string(hi) + ") for axis " + std::to_string(d));
    if (mode == PadMode::Edge && a.shape()[d] == 0 && lo + hi > 0)
      fail("pad: cannot extend empty axis " + std::to_string(d) + " of shape " + shape_str(a.shape()) +
           " in edge mode");
    out[d] += lo + hi;
  }
  Array fill = detail::full_integer({}, 0, a.dtype(), a.device());
  if (mode == PadMode::Constant) fill = cast(full({}, value, DType::Float64, a.device()), a.dtype());
  if (out == a.shape()) return a;
  if (a.size() == 0) return broadcast_to(fill, out);
  // One gather from the flattened input at the clamped source position of every element.
  Array lin = int_scalar(0, a.device());
  std::optional<Array> inside;
  int64_t stride = 1;
  for (int64_t d = a.ndim(); d-- > 0;) {
    auto [lo, hi] = widths[d];
    int64_t n = a.shape()[d];
    Array c = coordinate(out, d, a.device()) - int_scalar(lo, a.device());
    if (lo + hi > 0) {
      if (mode == PadMode::Constant) {
        Array in = (c >= int_scalar(0, a.device())) && (c < int_scalar(n, a.device()));
        inside = inside ? (*inside && in) : in;
      }
      c = minimum(maximum(c, int_scalar(0, a.device())), int_scalar(n - 1, a.device()));
    }
    lin = lin + c * int_scalar(stride, a.device());
    stride *= n;
  }
  Array g = take(ravel(a), broadcast_to(lin, out), 0);
  return inside ? where(*inside, g, fill) : g;
}

Array pad(const Array& a, int64_t width, PadMode mode, double value) {
  return pad(a, std::vector<std::pair<int64_t, int64_t>>(std::max<int64_t>(a.ndim(), 1), {width, width}), mode, value);
}

Array tile(const Array& a, const std::vector<int64_t>& reps_in) {
  for (int64_t r : reps_in)
    if (r < 0) fail("tile: negative repetition count in " + shape_str(reps_in));
  size_t rank = std::max(reps_in.size(), a.shape().size());
  Shape s(rank - a.shape().size(), 1);
  s.insert(s.end(), a.shape().begin(), a.shape().end());
  std::vector<int64_t> reps(rank - reps_in.size(), 1);
  reps.insert(reps.end(), reps_in.begin(), reps_in.end());
  Shape spread, wide, out;  // [1, n0, 1, n1, ...] -> [r0, n0, r1, n1, ...] -> [r0 * n0, ...]
  for (size_t d = 0; d < rank; ++d) {
    spread.insert(spread.end(), {1, s[d]});
    wide.insert(wide.end(), {reps[d], s[d]});
    out.push_back(0);
    if (__builtin_mul_overflow(reps[d], s[d], &out.back()))
      fail("tile: " + std::to_string(reps[d]) + " repetitions of axis " + std::to_string(d) + " of shape " +
           shape_str(a.shape()) + " overflow int64");
  }
  check_size("tile", out);
  return reshape(broadcast_to(reshape(a, spread), wide), out);
}

Array repeat(const Array& a, int64_t repeats) { return repeat(ravel(a), repeats, 0); }

Array repeat(const Array& a, int64_t repeats, int64_t axis_in) {
  if (repeats < 0) fail("repeat: negative repetition count " + std::to_string(repeats));
  if (a.ndim() == 0) return repeat(reshape(a, {1}), repeats, 0);
  int64_t axis = norm_axis("repeat", axis_in, a.shape(), a.ndim());
  Shape spread = a.shape(), wide, out = a.shape();
  spread.insert(spread.begin() + axis + 1, 1);
  wide = spread;
  wide[axis + 1] = repeats;
  if (__builtin_mul_overflow(out[axis], repeats, &out[axis]))
    fail("repeat: " + std::to_string(repeats) + " repetitions of axis " + std::to_string(axis) + " of shape " +
         shape_str(a.shape()) + " overflow int64");
  check_size("repeat", out);
  return reshape(broadcast_to(reshape(a, spread), wide), out);
}

Array roll(const Array& a, int64_t shift) { return reshape(roll(ravel(a), shift, 0), a.shape()); }

Array roll(const Array& a, int64_t shift, int64_t axis_in) {
  if (a.ndim() == 0) return a;
  int64_t axis = norm_axis("roll", axis_in, a.shape(), a.ndim());
  int64_t n = a.shape()[axis];
  if (n == 0 || a.size() == 0) return a;
  int64_t s = ((shift % n) + n) % n;
  if (s == 0) return a;
  // out[i] = a[i - s]: i - s lies in [-s, n - s), and a negative index counts from the end.
  std::vector<int64_t> map(a.ndim());
  std::iota(map.begin(), map.end(), 0);
  map[axis] = -1;
  return gather("roll", a, coordinate(a.shape(), axis, a.device()) - int_scalar(s, a.device()), axis, map);
}

// ---- Views -------------------------------------------------------------------------------------

Array flip(const Array& a) {
  std::vector<Index> index(a.ndim(), Index(Slice(none, none, -1)));
  return a[index];
}

Array flip(const Array& a, int64_t axis_in) {
  int64_t axis = norm_axis("flip", axis_in, a.shape(), a.ndim());
  std::vector<Index> index(a.ndim(), Index(_));
  index[axis] = Slice(none, none, -1);
  return a[index];
}

Array squeeze(const Array& a) {
  Shape s;
  for (int64_t e : a.shape())
    if (e != 1) s.push_back(e);
  return reshape(a, s);
}

Array squeeze(const Array& a, const std::vector<int64_t>& axes) {
  std::vector<bool> drop(a.ndim(), false);
  for (int64_t ax : axes) {
    int64_t d = norm_axis("squeeze", ax, a.shape(), a.ndim());
    if (a.shape()[d] != 1)
      fail("squeeze: cannot select an axis to squeeze out which has size not equal to one (axis " +
           std::to_string(d) + " of shape " + shape_str(a.shape()) + ")");
    drop[d] = true;
  }
  Shape s;
  for (int64_t d = 0; d < a.ndim(); ++d)
    if (!drop[d]) s.push_back(a.shape()[d]);
  return reshape(a, s);
}

Array swapaxes(const Array& a, int64_t axis1, int64_t axis2) {
  int64_t i = norm_axis("swapaxes", axis1, a.shape(), a.ndim()), j = norm_axis("swapaxes", axis2, a.shape(), a.ndim());
  std::vector<int64_t> perm(a.ndim());
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[i], perm[j]);
  return transpose(a, perm);
}

Array moveaxis(const Array& a, int64_t source, int64_t destination) {
  return moveaxis(a, std::vector<int64_t>{source}, std::vector<int64_t>{destination});
}

Array moveaxis(const Array& a, const std::vector<int64_t>& source, const std::vector<int64_t>& destination) {
  if (source.size() != destination.size())
    fail("moveaxis: source and destination must have the same number of elements (" + std::to_string(source.size()) +
         " and " + std::to_string(destination.size()) + ")");
  int64_t r = a.ndim();
  std::vector<int64_t> src, dst;
  std::vector<bool> taken_src(r, false), taken_dst(r, false);
  for (size_t i = 0; i < source.size(); ++i) {
    int64_t s = norm_axis("moveaxis", source[i], a.shape(), r), t = norm_axis("moveaxis", destination[i], a.shape(), r);
    if (taken_src[s] || taken_dst[t]) fail("moveaxis: repeated axis in source " + shape_str(source) + " or destination " + shape_str(destination));
    taken_src[s] = taken_dst[t] = true;
    src.push_back(s);
    dst.push_back(t);
  }
  std::vector<int64_t> rest, perm(r, -1);
  for (int64_t d = 0; d < r; ++d)
    if (!taken_src[d]) rest.push_back(d);
  for (size_t i = 0; i < src.size(); ++i) perm[dst[i]] = src[i];
  size_t k = 0;
  for (int64_t d = 0; d < r; ++d)
    if (perm[d] < 0) perm[d] = rest[k++];
  return transpose(a, perm);
}

Array ravel(const Array& a) { return reshape(a, {a.size()}); }

// ---- Functional updates ------------------------------------------------------------------------

Array At::get() const { return x_[index_]; }

namespace {

enum class Update { Set, Add };

Array combine(Update u, const Array& x, const Array& v) { return u == Update::Set ? v : x + v; }

// x.at(mask): where(mask, update, x).
Array masked_update(Update u, const Array& x, const Array& mask, const Array& v) {
  if (mask.shape() != x.shape())
    fail("at: a boolean mask of shape " + shape_str(mask.shape()) + " does not match the array's shape " +
         shape_str(x.shape()));
  return where(mask, combine(u, x, broadcast_to(cast(v, x.dtype()), x.shape())), x);
}

// x.at(basic index): every element of x finds its position in the updated region through a
// per-dim table (position along the region's dim, or -1 outside it), then one gather of v.
Array region_update(Update u, const Array& x, const Resolved& r, const Array& v_in) {
  Array v = reshape(broadcast_to(cast(v_in, x.dtype()), r.out), r.lens);
  if (shape_numel(r.lens) == 0) return x;
  Device dev = x.device();
  Array lin = int_scalar(0, dev);
  std::optional<Array> inside;
  int64_t stride = 1;
  for (int64_t d = x.ndim(); d-- > 0;) {
    int64_t n = x.shape()[d];
    bool whole = r.starts[d] == 0 && r.steps[d] == 1 && r.lens[d] == n;
    Array k = coordinate(x.shape(), d, dev);
    if (!whole) {
      std::vector<int64_t> table(n, -1);
      for (int64_t j = 0; j < r.lens[d]; ++j) table[r.starts[d] + j * r.steps[d]] = j;
      k = table_along(table, x.shape(), d, dev);
      Array in = k >= int_scalar(0, dev);
      inside = inside ? (*inside && in) : in;
      k = maximum(k, int_scalar(0, dev));
    }
    if (r.lens[d] > 1) lin = lin + k * int_scalar(stride, dev);
    stride *= r.lens[d];
  }
  Array g = take(ravel(v), broadcast_to(lin, x.shape()), 0);
  return inside ? where(*inside, combine(u, x, g), x) : combine(u, x, g);
}

// x.at(indices) along axis 0: a sparse scatter node, O(k) after a copy of x, on every device
// (backend/host/scatter.h; on a GPU backend/cuda/axis_launch.h's ScatterLaunch; issue 28).
Array indexed_update(Update u, const Array& x, const Array& indices, const Array& v_in) {
  if (x.ndim() == 0) fail("at: a 0-d array cannot be indexed by an integer array");
  int64_t k = indices.size();
  Shape rest(x.shape().begin() + 1, x.shape().end());
  Shape vshape = indices.shape();
  vshape.insert(vshape.end(), rest.begin(), rest.end());
  Shape kr{k};
  kr.insert(kr.end(), rest.begin(), rest.end());
  Array v = reshape(broadcast_to(cast(v_in, x.dtype()), vshape), kr);
  if (k == 0 || x.size() == 0) return x;
  Array idx = cast(ravel(indices), DType::Int64);
  return Array(detail::make_scatter(u == Update::Add ? detail::Op::ScatterAdd : detail::Op::ScatterSet, x.node(), idx.node(), v.node()));
}

Array update(Update u, const Array& x, const std::vector<Index>& index, const Array& v) {
  if (v.device() != x.device())
    fail(std::string("at: arrays are on different devices (") + x.device().str() + " and " + v.device().str() +
         "); copy one with .to(device) first");
  if (index.size() == 1)
    if (const Array* a = std::get_if<Array>(&index[0].item())) {
      if (a->dtype() == DType::Bool) return masked_update(u, x, *a, v);
      if (!is_int(a->dtype()))
        fail(std::string("at: arrays used as indices must be of integer or boolean type, got ") + dtype_name(a->dtype()));
      return indexed_update(u, x, *a, v);
    }
  Resolved r = resolve(x.shape(), index);
  if (r.array)
    fail("at: an array index is supported alone (x.at(indices) or x.at(mask)), not mixed with other indices");
  return region_update(u, x, r, v);
}

}  // namespace

Array At::set(const Array& v) const { return update(Update::Set, x_, index_, v); }
Array At::add(const Array& v) const { return update(Update::Add, x_, index_, v); }

}  // namespace arrayc
