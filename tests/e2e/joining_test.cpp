// The shape and joining functions end to end (arrayc/indexing.h): concatenate, stack, split,
// pad, tile, repeat, roll, flip, squeeze, swapaxes, moveaxis, ravel. Results against the
// reference interpreter for every dtype and against numpy's values; kernel counts; errors.
#include <cmath>
#include <limits>

#include "support/data.h"
#include "support/devices.h"
#include "support/indexing.h"
#include "support/reference.h"

namespace {

using namespace arrayc;
using namespace arrayc_test;

class Joining : public DeviceTest {};
ARRAYC_DEVICE_SUITE(Joining);

TEST_P(Joining, NumpysValues) {
  Array a = iota({2, 2}).eval();
  Array b = (iota({2, 1}) + int64_t{10}).eval();
  EXPECT_EQ(ints(concatenate({a, b}, 1)), (std::vector<int64_t>{0, 1, 10, 2, 3, 11}));
  EXPECT_EQ(ints(concatenate({a, transpose(b)}, 0)), (std::vector<int64_t>{0, 1, 2, 3, 10, 11}));
  EXPECT_EQ(ints(stack({a[0], a[1]}, 1)), (std::vector<int64_t>{0, 2, 1, 3}));
  std::vector<Array> parts = split(arange(7), std::vector<int64_t>{2, 5, 100});
  ASSERT_EQ(parts.size(), 4u);
  EXPECT_EQ(ints(parts[1]), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(ints(parts[2]), (std::vector<int64_t>{5, 6}));
  EXPECT_EQ(parts[3].shape(), Shape{0});
  EXPECT_EQ(ints(pad(arange(3), {{2, 1}}, PadMode::Constant, 9)), (std::vector<int64_t>{9, 9, 0, 1, 2, 9}));
  EXPECT_EQ(ints(pad(arange(3), {{2, 1}}, PadMode::Edge)), (std::vector<int64_t>{0, 0, 0, 1, 2, 2}));
  EXPECT_EQ(ints(pad(a, 1)), (std::vector<int64_t>{0, 0, 0, 0, 0, 0, 1, 0, 0, 2, 3, 0, 0, 0, 0, 0}));
  EXPECT_EQ(ints(tile(arange(3), {2})), (std::vector<int64_t>{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(tile(a, {2, 1, 3}).shape(), (Shape{2, 2, 6}));
  EXPECT_EQ(ints(repeat(a, 2)), (std::vector<int64_t>{0, 0, 1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(ints(repeat(a, 2, 0)), (std::vector<int64_t>{0, 1, 0, 1, 2, 3, 2, 3}));
  EXPECT_EQ(ints(roll(arange(5), 2)), (std::vector<int64_t>{3, 4, 0, 1, 2}));
  EXPECT_EQ(ints(roll(arange(5), -7)), (std::vector<int64_t>{2, 3, 4, 0, 1}));
  EXPECT_EQ(ints(roll(a, 1)), (std::vector<int64_t>{3, 0, 1, 2}));  // flattened
  EXPECT_EQ(ints(roll(a, 1, 1)), (std::vector<int64_t>{1, 0, 3, 2}));
  EXPECT_EQ(ints(flip(a)), (std::vector<int64_t>{3, 2, 1, 0}));
  EXPECT_EQ(ints(flip(a, 0)), (std::vector<int64_t>{2, 3, 0, 1}));
  EXPECT_EQ(squeeze(iota({1, 3, 1})).shape(), Shape{3});
  EXPECT_EQ(squeeze(iota({1, 3, 1}), {-1}).shape(), (Shape{1, 3}));
  EXPECT_EQ(swapaxes(iota({2, 3, 4}), 0, 2).shape(), (Shape{4, 3, 2}));
  EXPECT_EQ(moveaxis(iota({2, 3, 4}), 0, -1).shape(), (Shape{3, 4, 2}));
  EXPECT_EQ(moveaxis(iota({2, 3, 4}), std::vector<int64_t>{0, 1}, std::vector<int64_t>{-1, -2}).shape(),
            (Shape{4, 3, 2}));
  EXPECT_EQ(ints(ravel(transpose(a))), (std::vector<int64_t>{0, 2, 1, 3}));
}

TEST_P(Joining, MatchTheInterpreterForEveryDtype) {
  for (DType t : kAllDTypes) {
    SCOPED_TRACE(dt(t));
    Array x = random_array(t, {3, 4, 5}, 1).eval();
    Array y = random_array(t, {3, 2, 5}, 2);
    Array z = random_array(DType::Int32, {3, 1, 5}, 3);  // promoted
    EXPECT_MATCHES_REFERENCE(concatenate({x, y, z}, 1));
    EXPECT_MATCHES_REFERENCE(concatenate({x, x[{Slice(none, none, -1)}]}, 0));
    EXPECT_MATCHES_REFERENCE(concatenate({transpose(x, {0, 2, 1}), transpose(y, {0, 2, 1})}, -1));
    EXPECT_MATCHES_REFERENCE(concatenate({x[{_, Slice(0, 0)}], y}, 1));  // an empty part
    EXPECT_MATCHES_REFERENCE(stack({x, x, x}, 3));
    EXPECT_MATCHES_REFERENCE(stack({x(_, 0), y(_, 0)}, 0));
    for (const Array& p : split(x, 5, 2)) EXPECT_MATCHES_REFERENCE(p);
    for (const Array& p : split(x, std::vector<int64_t>{1, -1}, 1)) EXPECT_MATCHES_REFERENCE(p);
    EXPECT_MATCHES_REFERENCE(pad(x, {{1, 0}, {0, 2}, {3, 3}}, PadMode::Constant, 1));
    EXPECT_MATCHES_REFERENCE(pad(x, {{1, 0}, {0, 2}, {3, 3}}, PadMode::Edge));
    EXPECT_MATCHES_REFERENCE(pad(transpose(x), 2, PadMode::Edge));
    EXPECT_MATCHES_REFERENCE(tile(x, {2, 1, 3}));
    EXPECT_MATCHES_REFERENCE(tile(x[{_, 1}], {2, 1, 1}));
    EXPECT_MATCHES_REFERENCE(repeat(x, 3, 1));
    EXPECT_MATCHES_REFERENCE(repeat(transpose(x), 2));
    EXPECT_MATCHES_REFERENCE(roll(x, 7, 2));
    EXPECT_MATCHES_REFERENCE(roll(x, -2));
    EXPECT_MATCHES_REFERENCE(roll(x[{_, Slice(none, none, -1)}], 1, 1));
    EXPECT_MATCHES_REFERENCE(flip(x));
    EXPECT_MATCHES_REFERENCE(flip(flip(x, 1), -1));
    EXPECT_MATCHES_REFERENCE(squeeze(x[{_, Slice(1, 2), newaxis}]));
    EXPECT_MATCHES_REFERENCE(swapaxes(x, 0, 1));
    EXPECT_MATCHES_REFERENCE(moveaxis(x, 2, 0));
    EXPECT_MATCHES_REFERENCE(ravel(x[{Slice(none, none, 2), _, Slice(1, 4)}]));
  }
}

TEST_P(Joining, EdgeCases) {
  Array s = iota({});  // rank 0
  EXPECT_MATCHES_REFERENCE(stack({s, s + int64_t{1}}));
  EXPECT_EQ(ints(stack({s, s + int64_t{1}})), (std::vector<int64_t>{0, 1}));
  EXPECT_MATCHES_REFERENCE(pad(s, 3));
  EXPECT_MATCHES_REFERENCE(repeat(s, 3));
  EXPECT_MATCHES_REFERENCE(roll(s, 3));
  EXPECT_MATCHES_REFERENCE(flip(s));
  EXPECT_MATCHES_REFERENCE(tile(s, {2, 2}));
  EXPECT_EQ(ravel(s).shape(), Shape{1});
  Array e = iota({0, 3});
  EXPECT_EQ(concatenate({e, e}).shape(), (Shape{0, 3}));
  EXPECT_EQ(pad(e, 1).shape(), (Shape{2, 5}));
  EXPECT_MATCHES_REFERENCE(pad(e, 1, PadMode::Constant, 4));
  EXPECT_EQ(roll(e, 2, 0).shape(), (Shape{0, 3}));
  EXPECT_EQ(repeat(e, 0, 1).shape(), (Shape{0, 0}));
  EXPECT_EQ(tile(arange(3), {0}).shape(), Shape{0});
  Array f = random_array(DType::Float64, {4}, 4);  // NaN, inf and -0.0 pass through unchanged
  Array edge = array<double>({-0.0, std::numeric_limits<double>::infinity(), std::nan(""), 1.0}, {4});
  CompareOptions signed_zero;
  signed_zero.signed_zero = true;
  EXPECT_TRUE(matches_reference(concatenate({edge, flip(edge)}), signed_zero));
  EXPECT_TRUE(matches_reference(pad(edge, {{1, 1}}, PadMode::Edge), signed_zero));
  EXPECT_TRUE(matches_reference(roll(edge, 1), signed_zero));
  EXPECT_MATCHES_REFERENCE(concatenate({f, edge}) * 2.0);
}

TEST_P(Joining, ConcatenateAndPadAreOneKernel) {
  Array a = random_array(DType::Float32, {64, 32}, 5).eval();
  Array b = random_array(DType::Float32, {64, 16}, 6).eval();
  Array c = random_array(DType::Float32, {64, 8}, 7).eval();
  StatsDelta d = stats_delta([&] { EXPECT_MATCHES_REFERENCE(concatenate({a, b, c}, 1) * 2.0f); });
  EXPECT_EQ(d.kernel_launches, 1);
  StatsDelta p = stats_delta([&] { EXPECT_MATCHES_REFERENCE(exp(pad(a, {{1, 2}, {3, 4}}))); });
  EXPECT_EQ(p.kernel_launches, 1);
  StatsDelta r = stats_delta([&] { EXPECT_MATCHES_REFERENCE(roll(a, 5, 0) - a); });
  EXPECT_EQ(r.kernel_launches, 1);
  StatsDelta f = stats_delta([&] { EXPECT_MATCHES_REFERENCE(flip(a) + a); });
  EXPECT_EQ(f.kernel_launches, 1);
}

TEST_P(Joining, ErrorsHaveExactMessages) {
  Array a = iota({2, 3});
  EXPECT_TRUE(raises_exactly([&] { concatenate({}); }, "concatenate: need at least one array to concatenate"));
  EXPECT_TRUE(raises_exactly([&] { concatenate({a, iota({3, 3})}, 1); },
                             "concatenate: array 1 has shape [3, 3], array 0 has [2, 3]; all dims but axis 1 must match"));
  EXPECT_TRUE(raises_exactly([&] { concatenate({a, arange(3)}); },
                             "concatenate: array 1 has shape [3], array 0 has [2, 3]; all dims but axis 0 must match"));
  EXPECT_TRUE(raises_exactly([&] { concatenate({iota({}), iota({})}); },
                             "concatenate: zero-dimensional arrays cannot be concatenated"));
  EXPECT_TRUE(raises_exactly([&] { concatenate({a, a}, 2); },
                             "concatenate: axis 2 is out of range for an array of rank 2 (shape [2, 3])"));
  EXPECT_TRUE(raises_exactly([&] { stack({a, iota({3, 2})}); },
                             "stack: all input arrays must have the same shape: array 0 is [2, 3], array 1 is [3, 2]"));
  EXPECT_TRUE(raises_exactly([&] { split(a, 2, 1); },
                             "split: array split does not result in an equal division (axis 1 of size 3 into 2 sections)"));
  EXPECT_TRUE(raises_exactly([&] { split(a, 0); }, "split: number of sections must be larger than 0, got 0"));
  EXPECT_TRUE(raises_exactly([&] { pad(a, {{1, 1}, {1, 1}, {1, 1}}); },
                             "pad: 3 (before, after) pairs given for an array of rank 2 (shape [2, 3])"));
  EXPECT_TRUE(raises_exactly([&] { pad(a, -1); }, "pad: negative width (-1, -1) for axis 0"));
  EXPECT_TRUE(raises_exactly([&] { pad(iota({0, 3}), 1, PadMode::Edge); },
                             "pad: cannot extend empty axis 0 of shape [0, 3] in edge mode"));
  EXPECT_TRUE(raises_exactly([&] { tile(a, {2, -1}); }, "tile: negative repetition count in [2, -1]"));
  EXPECT_TRUE(raises_exactly([&] { repeat(a, -2); }, "repeat: negative repetition count -2"));
  EXPECT_TRUE(raises_exactly([&] { tile(a, {int64_t{1} << 40, int64_t{1} << 40}); },
                             "tile: the result's shape [2199023255552, 3298534883328] has more than 2^63 - 1 elements"));
  EXPECT_TRUE(raises_exactly([&] { repeat(a, INT64_MAX, 1); },
                             "repeat: 9223372036854775807 repetitions of axis 1 of shape [2, 3] overflow int64"));
  EXPECT_TRUE(raises_exactly([&] { roll(a, 1, 5); }, "roll: axis 5 is out of range for an array of rank 2 (shape [2, 3])"));
  EXPECT_TRUE(raises_exactly([&] { flip(a, -3); }, "flip: axis -3 is out of range for an array of rank 2 (shape [2, 3])"));
  EXPECT_TRUE(raises_exactly([&] { squeeze(a, {0}); },
                             "squeeze: cannot select an axis to squeeze out which has size not equal to one (axis 0 of "
                             "shape [2, 3])"));
  EXPECT_TRUE(raises_exactly([&] { swapaxes(a, 0, 2); },
                             "swapaxes: axis 2 is out of range for an array of rank 2 (shape [2, 3])"));
  EXPECT_TRUE(raises_exactly([&] { moveaxis(a, std::vector<int64_t>{0, 1}, std::vector<int64_t>{1}); },
                             "moveaxis: source and destination must have the same number of elements (2 and 1)"));
  EXPECT_TRUE(raises_exactly([&] { moveaxis(a, std::vector<int64_t>{0, 0}, std::vector<int64_t>{0, 1}); },
                             "moveaxis: repeated axis in source [0, 0] or destination [0, 1]"));
  if (gpu_count() > 0 && device().kind == Device::Kind::CPU)
    EXPECT_TRUE(raises_exactly([&] { concatenate({a, a.to(gpu(0))}); },
                               "concatenate: arrays are on different devices (cpu and gpu:0); copy one with .to(device) first"));
}

}  // namespace
