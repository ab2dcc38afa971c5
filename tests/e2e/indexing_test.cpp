// Indexing end to end (arrayc/indexing.h): basic slicing as views, take and take_along_axis,
// boolean masks, and the functional updates x.at(i).set/add. Every result is checked against the
// reference interpreter, and the numpy semantics against values written out by hand.
#include <numeric>

#include "support/data.h"
#include "support/devices.h"
#include "support/indexing.h"
#include "support/reference.h"

namespace {

using namespace arrayc;
using namespace arrayc_test;

class Indexing : public DeviceTest {};
ARRAYC_DEVICE_SUITE(Indexing);

TEST_P(Indexing, BasicSlicingHasNumpysValues) {
  Array x = iota({3, 4}).eval();
  EXPECT_EQ(ints(x[1]), (std::vector<int64_t>{4, 5, 6, 7}));
  EXPECT_EQ(x(1, 3).item<int64_t>(), 7);
  EXPECT_EQ(x(-1, -4).item<int64_t>(), 8);
  EXPECT_EQ(ints(x(_, 0)), (std::vector<int64_t>{0, 4, 8}));
  EXPECT_EQ(ints(x(Slice(1, 3), Slice(none, none, -2))), (std::vector<int64_t>{7, 5, 11, 9}));
  EXPECT_EQ(ints(x(Slice(none, none, -1), 2)), (std::vector<int64_t>{10, 6, 2}));
  EXPECT_EQ(ints(x(1, Slice(-100, 100))), (std::vector<int64_t>{4, 5, 6, 7}));  // clamped
  EXPECT_EQ(ints(x(1, Slice(100, -100, -1))), (std::vector<int64_t>{7, 6, 5, 4}));
  EXPECT_EQ(ints(x(0, Slice(3))), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(ints(x(0, Slice(1, none, 2))), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(x(Slice(2, 1)).shape(), (Shape{0, 4}));  // empty
  EXPECT_EQ(x(Slice(3, 100)).shape(), (Shape{0, 4}));
  EXPECT_EQ(x(newaxis, _, newaxis).shape(), (Shape{1, 3, 1, 4}));
  EXPECT_EQ(x(ellipsis, newaxis).shape(), (Shape{3, 4, 1}));
  EXPECT_EQ(x(ellipsis, 1).shape(), (Shape{3}));
  EXPECT_EQ(ints(x(ellipsis, 1)), (std::vector<int64_t>{1, 5, 9}));
  EXPECT_EQ(x[ellipsis].shape(), (Shape{3, 4}));
  EXPECT_EQ(x().shape(), (Shape{3, 4}));
  Array s = iota({});  // rank 0
  EXPECT_EQ(s[ellipsis].shape(), Shape{});
  EXPECT_EQ(s[newaxis].shape(), Shape{1});
  EXPECT_EQ(s().item<int64_t>(), 0);
}

TEST_P(Indexing, SlicesMatchTheInterpreterForEveryDtype) {
  for (DType t : kAllDTypes) {
    SCOPED_TRACE(dt(t));
    Array x = random_array(t, {5, 6, 7}, 1).eval();
    std::vector<std::vector<Index>> cases = {
        {1},
        {-1, Slice(none, none, -1)},
        {Slice(1, 4), _, Slice(none, none, 3)},
        {Slice(none, none, -2), Slice(-2, -7, -1), 3},
        {ellipsis, Slice(2, 5)},
        {newaxis, 2, ellipsis, newaxis},
        {Slice(4, 1), 0},  // empty
        {Slice(-100, 100, 4), Slice(100, -100, -5)},
    };
    for (const std::vector<Index>& c : cases) {
      EXPECT_MATCHES_REFERENCE(x[c]);
      if (t != DType::Bool) EXPECT_MATCHES_REFERENCE(x[c] * x[c] + x[c]);  // slice + elementwise
    }
    // Views of views, of a transposed buffer, and of a lazy expression.
    Array v = transpose(x, {2, 0, 1})[{Slice(1, none, 2), Slice(none, none, -1)}];
    EXPECT_MATCHES_REFERENCE(v);
    EXPECT_MATCHES_REFERENCE(v(Slice(none, none, -1), 1, Slice(2, 5)));
    EXPECT_MATCHES_REFERENCE(reshape(v(0), {-1}));
    Array lazy = where(x == x, x, x);
    EXPECT_MATCHES_REFERENCE(lazy(Slice(none, none, -1), 2)(Slice(1, 4)));
  }
}

TEST_P(Indexing, SlicingBroadcastsAndNonContiguousInputs) {
  Array m = random_array(DType::Float32, {6, 8}, 2);
  Array row = random_array(DType::Float32, {8}, 3);
  EXPECT_MATCHES_REFERENCE(m(Slice(none, none, 2)) + row(Slice(none, none, -1)));
  EXPECT_MATCHES_REFERENCE(broadcast_to(row, {6, 8})(Slice(1, 5), Slice(none, none, -3)));
  EXPECT_MATCHES_REFERENCE(transpose(m)(Slice(none, none, -1)) * 2.0f);
  EXPECT_MATCHES_REFERENCE(sum(m(_, Slice(none, none, -1)), {1}));
  EXPECT_MATCHES_REFERENCE(reshape(m(Slice(1, 5), Slice(2, 6)), {16}));  // a reshape that copies
}

TEST_P(Indexing, LargeStridedSlicesOfEveryLayout) {
  // Rows long and many enough for the host's tiled path (negative and non-unit strides in both
  // dims), and rank-1 slices long enough for the GPU's contiguous path.
  Array m = random_array(DType::Float32, {300, 400}, 30).eval();
  EXPECT_MATCHES_REFERENCE(m[{Slice(none, none, -1), Slice(none, none, -2)}] + 1.0f);
  EXPECT_MATCHES_REFERENCE(transpose(m)[{Slice(none, none, -3), Slice(5, -5)}] * m[{Slice(0, 134, 1), Slice(0, 290)}]);
  Array v = random_array(DType::Float64, {100003}, 31).eval();
  EXPECT_MATCHES_REFERENCE(v[{Slice(2, none)}][{Slice(none, none, -1)}] - v[{Slice(1, none)}][{Slice(none, none, -1)}][{Slice(1, none)}]);
  EXPECT_MATCHES_REFERENCE(sum(v[{Slice(none, none, -7)}]));
  Array idx = random_array(DType::Int64, {100003}, 32, -200000, 200000);
  EXPECT_MATCHES_REFERENCE(take(v, idx) * 2.0);
}

TEST_P(Indexing, ViewsOfEvaluatedDataShareStorage) {
  Array x = random_array(DType::Float64, {4, 5}, 4).eval();
  Array v = x[{Slice(none, none, -1), Slice(1, 4)}];
  StatsDelta d = stats_delta([&] { v.eval(); });
  EXPECT_EQ(d.kernel_launches, 0);
  EXPECT_EQ(v.node()->storage, x.node()->storage);
  EXPECT_EQ(v.node()->buffer_offset(), 3 * 5 + 1);
  EXPECT_EQ(v.node()->buffer_strides(), (std::vector<int64_t>{-5, 1}));
  EXPECT_MATCHES_REFERENCE(v(Slice(none, none, 2)) - 1.0);
}

TEST_P(Indexing, IndexErrorsHaveExactMessages) {
  Array x = iota({3, 4});
  EXPECT_TRUE(raises_exactly([&] { x(1, 4); }, "index: index 4 is out of bounds for axis 1 with size 4"));
  EXPECT_TRUE(raises_exactly([&] { x[-4]; }, "index: index -4 is out of bounds for axis 0 with size 3"));
  EXPECT_TRUE(raises_exactly([&] { x(1, 2, 3); },
                             "index: too many indices for an array of shape [3, 4]: 3 dims indexed, the array has 2"));
  EXPECT_TRUE(raises_exactly([&] { x(ellipsis, 1, ellipsis); },
                             "index: an index can only have a single ellipsis ('...')"));
  EXPECT_TRUE(raises_exactly([&] { x(Slice(0, 2, 0)); }, "index: slice step cannot be zero (axis 0)"));
  EXPECT_TRUE(raises_exactly([&] { x[arange(2.0, 4.0)]; },
                             "index: arrays used as indices must be of integer or boolean type, got float64 [2]"));
  EXPECT_TRUE(raises_exactly([&] { x[array<bool>({true, false}, {2})]; },
                             "index: boolean index did not match indexed array along axis 0; size of axis is 3 but "
                             "size of corresponding boolean axis is 2"));
  EXPECT_TRUE(raises_exactly([&] { x(arange(2), arange(2)); },
                             "index: only one array index is supported (numpy's indexing with several arrays is not)"));
  EXPECT_TRUE(raises_exactly([&] { iota({})[0]; },
                             "index: too many indices for an array of shape []: 1 dims indexed, the array has 0"));
}

TEST_P(Indexing, TakeHasNumpysValuesAndClampsOutOfRange) {
  Array x = iota({3, 4}).eval();
  Array i = array<int64_t>({2, 0, -1}, {3});
  EXPECT_EQ(ints(take(x, i, 1)), (std::vector<int64_t>{2, 0, 3, 6, 4, 7, 10, 8, 11}));
  EXPECT_EQ(ints(take(x, i, 0)), (std::vector<int64_t>{8, 9, 10, 11, 0, 1, 2, 3, 8, 9, 10, 11}));
  EXPECT_EQ(ints(take(x, i)), (std::vector<int64_t>{2, 0, 11}));  // flattened
  EXPECT_EQ(ints(x[i]), ints(take(x, i, 0)));
  // Out of range: clamped (numpy raises; JAX clamps).
  Array far = array<int64_t>({100, -100, 4, -5, INT64_MAX, INT64_MIN}, {6});
  EXPECT_EQ(ints(take(x[0], far)), (std::vector<int64_t>{3, 0, 3, 0, 3, 0}));
  EXPECT_MATCHES_REFERENCE(take(x[0], far));
  Array i2 = array<int32_t>({1, 1, 0, 2}, {2, 2});
  Array t = take(x, i2, 1);
  EXPECT_EQ(t.shape(), (Shape{3, 2, 2}));
  EXPECT_MATCHES_REFERENCE(t);
}

TEST_P(Indexing, TakeMatchesTheInterpreterForEveryDtype) {
  for (DType t : kAllDTypes) {
    SCOPED_TRACE(dt(t));
    Array x = random_array(t, {4, 5, 6}, 5).eval();
    for (DType it : kIntTypes) {
      Array idx = random_array(it, {3, 2}, 6, -8, 8);
      for (int64_t axis : {0, 1, 2, -1}) EXPECT_MATCHES_REFERENCE(take(x, idx, axis));
      EXPECT_MATCHES_REFERENCE(take(x, idx));
      EXPECT_MATCHES_REFERENCE(take(x, idx[0], 1));
      EXPECT_MATCHES_REFERENCE(take(x, idx(0, 0), 2));  // a 0-d index drops the axis
    }
    Array along = random_array(DType::Int64, {4, 3, 6}, 7, -6, 6);
    EXPECT_MATCHES_REFERENCE(take_along_axis(x, along, 1));
    EXPECT_MATCHES_REFERENCE(take_along_axis(x, random_array(DType::Int32, {1, 5, 9}, 8, -6, 6), 2));  // broadcast
    // Empty indices, empty result.
    EXPECT_EQ(take(x, array<int64_t>({}, {0}), 1).shape(), (Shape{4, 0, 6}));
    EXPECT_MATCHES_REFERENCE(take(x, array<int64_t>({}, {0}), 1));
  }
}

TEST_P(Indexing, TakeFusesWithProducersAndConsumers) {
  Array x = random_array(DType::Float32, {1000}, 9).eval();
  Array i = random_array(DType::Int64, {300}, 10, -1200, 1200).eval();
  Array y = exp(take(x, i + 1)) * 2.0f;  // index arithmetic and math in one kernel
  StatsDelta d = stats_delta([&] { EXPECT_MATCHES_REFERENCE(y); });
  EXPECT_EQ(d.kernel_launches, 1);
  // A computed source is materialized once, then gathered.
  Array z = take(x * 3.0f, i) + 1.0f;
  StatsDelta d2 = stats_delta([&] { z.eval(); });
  EXPECT_EQ(d2.kernel_launches, 2);
  EXPECT_MATCHES_REFERENCE(take(x * 3.0f, i) + 1.0f);
  // Transposed and sliced sources, and a gather under a transpose and a reduction.
  Array m = random_array(DType::Float64, {7, 9}, 11).eval();
  Array j = random_array(DType::Int32, {5}, 12, -9, 9);
  EXPECT_MATCHES_REFERENCE(take(transpose(m)(Slice(none, none, -1)), j, 1));
  EXPECT_MATCHES_REFERENCE(transpose(take(m, j, 1)) + 1.0);
  EXPECT_MATCHES_REFERENCE(sum(take(m, j, 0), {0}));
  EXPECT_MATCHES_REFERENCE(sum(take(m, j, 1)));
}

TEST_P(Indexing, SlicesAndGathersInsideJit) {
  auto body = [](const Array& x, const Array& i) {
    Array r = x[Slice(none, none, -1)];
    return take(r, i) * 2.0f + r[Slice(0, 3)] + concatenate({x[Slice(1, 3)], x[Slice(-1, none)]});
  };
  auto f = jit(body);
  for (int64_t n : {10, 17}) {
    Array x = random_array(DType::Float32, {n}, 40 + n).eval();
    Array i = random_array(DType::Int64, {3}, 50 + n, -20, 20).eval();
    EXPECT_MATCHES_REFERENCE(f(x, i), body(x, i).node());
  }
}

TEST_P(Indexing, TakeErrorsHaveExactMessages) {
  Array x = iota({3, 4});
  EXPECT_TRUE(raises_exactly([&] { take(x, arange(0.0, 2.0), 0); }, "take: indices must be integers, got float64 [2]"));
  EXPECT_TRUE(raises_exactly([&] { take(x, arange(2), 2); },
                             "take: axis 2 is out of range for an array of rank 2 (shape [3, 4])"));
  EXPECT_TRUE(raises_exactly([&] { take(iota({0, 2}), arange(2), 0); },
                             "take: cannot take 4 elements from axis 0 of size 0 (shape [0, 2])"));
  EXPECT_TRUE(raises_exactly([&] { take(iota({}), arange(2), 0); },
                             "take: cannot take along an axis of a 0-d array; give no axis"));
  EXPECT_TRUE(raises_exactly([&] { take_along_axis(x, arange(2), 0); },
                             "take_along_axis: indices of rank 1 [2] for an array of rank 2 [3, 4]; they must have the "
                             "same rank"));
  EXPECT_TRUE(raises_exactly([&] { take_along_axis(x, iota({2, 3}), 0); },
                             "take_along_axis: shapes [3, 4] and [2, 3] cannot be broadcast together outside axis 0"));
}

TEST_P(Indexing, BooleanMaskSelectsOutsideJit) {
  Array x = iota({3, 4}).eval();
  EXPECT_EQ(ints(x[x > int64_t{6}]), (std::vector<int64_t>{7, 8, 9, 10, 11}));
  Array rows = array<bool>({true, false, true}, {3});
  Array r = x[rows];
  EXPECT_EQ(r.shape(), (Shape{2, 4}));
  EXPECT_EQ(ints(r), (std::vector<int64_t>{0, 1, 2, 3, 8, 9, 10, 11}));
  EXPECT_EQ(ints(x[{_, array<bool>({false, true, true, false}, {4})}]), (std::vector<int64_t>{1, 2, 5, 6, 9, 10}));
  EXPECT_EQ(x[x > int64_t{100}].shape(), Shape{0});
  for (DType t : kAllDTypes) {
    SCOPED_TRACE(dt(t));
    Array y = random_array(t, {4, 5}, 13);
    EXPECT_MATCHES_REFERENCE(y[random_array(DType::Bool, {4, 5}, 14)]);
  }
}

TEST_P(Indexing, BooleanMaskInsideJitSaysToUseWhere) {
  auto f = jit([](const Array& a) { return a[a > 0.0f]; });
  EXPECT_TRUE(raises_exactly([&] { f(random_array(DType::Float32, {6}, 15)); },
                             "in jit-traced function: index: a boolean mask [6] selects a number of elements that depends on the data, which "
                             "jit cannot trace; use where(mask, x, fill) instead"));
  auto g = jit([](const Array& a) { return where(a > 0.0f, a, 0.0f); });
  EXPECT_EQ(g(array<float>({-1.0f, 2.0f}, {2})).to_vector<float>(), (std::vector<float>{0.0f, 2.0f}));
}

TEST_P(Indexing, AtSetAndAddOnBasicIndices) {
  Array x = iota({3, 4}).eval();
  EXPECT_EQ(ints(x.at({1, 2}).set(int64_t{-1})), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, -1, 7, 8, 9, 10, 11}));
  EXPECT_EQ(ints(x.at({_, Slice(none, none, -2)}).add(int64_t{100})),
            (std::vector<int64_t>{0, 101, 2, 103, 4, 105, 6, 107, 8, 109, 10, 111}));
  EXPECT_EQ(ints(x.at(0).set(array<int64_t>({9, 8, 7, 6}, {4}))),
            (std::vector<int64_t>{9, 8, 7, 6, 4, 5, 6, 7, 8, 9, 10, 11}));
  EXPECT_EQ(ints(x), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));  // x unchanged
  EXPECT_EQ(ints(x.at(ellipsis).set(int64_t{5})), std::vector<int64_t>(12, 5));
  EXPECT_EQ(ints(x.at({Slice(2, 1)}).set(int64_t{5})), ints(x));  // empty region
  EXPECT_EQ(ints(x.at(x > int64_t{8}).set(int64_t{0})), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0}));
  for (DType t : kAllDTypes) {
    SCOPED_TRACE(dt(t));
    Array y = random_array(t, {4, 5, 3}, 16);
    Array v = random_array(t, {5, 3}, 17);
    EXPECT_MATCHES_REFERENCE(y.at({Slice(none, none, -2), ellipsis}).set(v));
    EXPECT_MATCHES_REFERENCE(y.at({Slice(1, 4), newaxis, 2, _}).set(v[0]));
    if (t != DType::Bool) EXPECT_MATCHES_REFERENCE(y.at({Slice(none, none, -2), ellipsis}).add(v) * y);
    EXPECT_MATCHES_REFERENCE(y.at(random_array(DType::Bool, {4, 5, 3}, 18)).set(v(0, 0)));
  }
}

TEST_P(Indexing, AtWithIndexArraysDefinesDuplicates) {
  Array x = iota({5}).eval();
  Array i = array<int64_t>({1, 3, 1, -1, 7, -9}, {6});  // 1 twice; -1 is 4; 7 and -9 are dropped
  Array v = array<int64_t>({10, 20, 30, 40, 50, 60}, {6});
  EXPECT_EQ(ints(x.at(i).add(v)), (std::vector<int64_t>{0, 41, 2, 23, 44}));
  EXPECT_EQ(ints(x.at(i).set(v)), (std::vector<int64_t>{0, 30, 2, 20, 40}));  // the last update wins
  for (DType t : kNumericTypes) {
    SCOPED_TRACE(dt(t));
    Array y = random_array(t, {6, 3}, 19);
    Array idx = random_array(DType::Int32, {4, 2}, 20, -7, 7);
    Array u = random_array(t, {4, 2, 3}, 21);
    EXPECT_MATCHES_REFERENCE(y.at(idx).add(u));
    EXPECT_MATCHES_REFERENCE(y.at(idx).set(u));
    EXPECT_MATCHES_REFERENCE(y.at(idx).set(u(0, 0, 0)));
  }
  EXPECT_EQ(ints(x.at(array<int64_t>({}, {0})).add(int64_t{1})), ints(x));
}

TEST_P(Indexing, AtErrorsHaveExactMessages) {
  Array x = iota({3, 4});
  EXPECT_TRUE(raises_exactly([&] { x.at(array<bool>({true}, {1})).set(int64_t{1}); },
                             "at: a boolean mask of shape [1] does not match the array's shape [3, 4]"));
  EXPECT_TRUE(raises_exactly([&] { x.at({1, arange(2)}).set(int64_t{1}); },
                             "at: an array index is supported alone (x.at(indices) or x.at(mask)), not mixed with "
                             "other indices"));
  EXPECT_TRUE(raises_exactly([&] { x.at({0, 9}).set(int64_t{1}); }, "index: index 9 is out of bounds for axis 1 with size 4"));
  EXPECT_TRUE(raises_exactly([&] { x.at(1).set(arange(3)); }, "broadcast_to: cannot broadcast an array of shape [3] to [4]"));
}

}  // namespace
