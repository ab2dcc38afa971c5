// Broadcasting and views end to end: numpy broadcasting of every kind, reshape (with -1),
// transpose with every permutation up to rank 4, broadcast_to, expand_dims, and views of views,
// over lazy expressions and over evaluated (strided) data.
#include <algorithm>
#include <numeric>

#include "support/data.h"
#include "support/devices.h"
#include "support/reference.h"

namespace {

using namespace arrayc;
using namespace arrayc_test;

class Views : public DeviceTest {};
ARRAYC_DEVICE_SUITE(Views);

TEST_P(Views, Broadcasting) {
  Array m = random_array(DType::Float32, {4, 5}, 1);
  Array row = random_array(DType::Float32, {5}, 2);
  Array col = random_array(DType::Float32, {4, 1}, 3);
  Array s = make_array(DType::Float32, {}, {2.5});
  EXPECT_MATCHES_REFERENCE(m + s);
  EXPECT_MATCHES_REFERENCE(s * m);
  EXPECT_MATCHES_REFERENCE(m - row);
  EXPECT_MATCHES_REFERENCE(m / col);
  EXPECT_MATCHES_REFERENCE(row + col);  // outer sum [4, 5]
  EXPECT_EQ((row + col).shape(), (Shape{4, 5}));
  // Rank-expanding: [2, 1, 3, 1] with [4, 1, 5] -> [2, 4, 3, 5].
  Array a = random_array(DType::Float64, {2, 1, 3, 1}, 4);
  Array b = random_array(DType::Int32, {4, 1, 5}, 5);
  Array r = a * b + 1;
  EXPECT_EQ(r.shape(), (Shape{2, 4, 3, 5}));
  EXPECT_MATCHES_REFERENCE(r);
  EXPECT_MATCHES_REFERENCE(where(random_array(DType::Bool, {3, 1}, 6), random_array(DType::Int64, {1, 7}, 7),
                                 make_array(DType::Int64, {}, {-1})));
  // Size-1 and size-0 dimensions.
  EXPECT_MATCHES_REFERENCE(random_array(DType::Float32, {1, 1}, 8) + random_array(DType::Float32, {3, 1}, 9));
  Array e = random_array(DType::Float32, {0, 3}, 10) + random_array(DType::Float32, {1, 3}, 11);
  EXPECT_EQ(e.shape(), (Shape{0, 3}));
  EXPECT_MATCHES_REFERENCE(e);
}

TEST_P(Views, Reshape) {
  Array x = random_array(DType::Float32, {2, 3, 4}, 12);
  for (const Shape& s : {Shape{24}, Shape{4, 6}, Shape{-1, 2}, Shape{2, -1, 3}, Shape{1, 24, 1},
                         Shape{2, 2, 2, 3}, Shape{-1}}) {
    SCOPED_TRACE(shape_str(s));
    EXPECT_MATCHES_REFERENCE(reshape(x, s));
    EXPECT_MATCHES_REFERENCE(reshape(x * 2.0f, s) + 1.0f);
  }
  EXPECT_EQ(reshape(x, {-1, 2}).shape(), (Shape{12, 2}));
  EXPECT_MATCHES_REFERENCE(reshape(make_array(DType::Int32, {1}, {7}), {}));
  EXPECT_MATCHES_REFERENCE(reshape(make_array(DType::Int32, {}, {7}), {1, 1}));
  EXPECT_MATCHES_REFERENCE(reshape(random_array(DType::Float32, {0, 4}, 13), {4, 0}));
}

std::vector<std::vector<int64_t>> permutations(int64_t rank) {
  std::vector<int64_t> p(rank);
  std::iota(p.begin(), p.end(), 0);
  std::vector<std::vector<int64_t>> all;
  do all.push_back(p);
  while (std::next_permutation(p.begin(), p.end()));
  return all;
}

std::string perm_str(const std::vector<int64_t>& p) { return "perm " + shape_str(p); }

TEST_P(Views, TransposeEveryPermutation) {
  const Shape shapes[] = {{}, {7}, {3, 5}, {2, 3, 4}, {2, 3, 4, 5}};
  for (const Shape& s : shapes) {
    Array x = random_array(DType::Float32, s, 14);
    Array i = random_array(DType::Int64, s, 15);
    for (const auto& p : permutations(static_cast<int64_t>(s.size()))) {
      SCOPED_TRACE(shape_str(s) + " " + perm_str(p));
      EXPECT_MATCHES_REFERENCE(transpose(x, p));
      EXPECT_MATCHES_REFERENCE(transpose(x, p) * 3.0f + 1.0f);
      EXPECT_MATCHES_REFERENCE(transpose(i + 1, p));
    }
  }
  Array m = random_array(DType::Float64, {3, 4, 5}, 16);
  EXPECT_MATCHES_REFERENCE(transpose(m));  // reverses the axes
  EXPECT_EQ(transpose(m).shape(), (Shape{5, 4, 3}));
  EXPECT_MATCHES_REFERENCE(transpose(m, {-1, 0, 1}));
}

// Views of evaluated data: the strides come from a buffer, not from a lazy expression.
TEST_P(Views, ViewsOfEvaluatedArrays) {
  Array x = random_array(DType::Float32, {2, 3, 4, 5}, 17);
  x.eval();
  for (const auto& p : permutations(4)) {
    SCOPED_TRACE(perm_str(p));
    EXPECT_MATCHES_REFERENCE(transpose(x, p) + 1.0f);
  }
  Array y = (random_array(DType::Float64, {6, 7}, 18) * 2.0).eval();
  Array t = transpose(y).eval();  // evaluated transposed view
  EXPECT_MATCHES_REFERENCE(t * y.shape()[0]);
  EXPECT_MATCHES_REFERENCE(transpose(t) - y);
  EXPECT_MATCHES_REFERENCE(sum(t, {0}, false));
  EXPECT_MATCHES_REFERENCE(broadcast_to(expand_dims(t, 0), {2, 7, 6}) + 1.0);
  EXPECT_EQ(t.to_vector<double>().size(), 42u);
}

// A reshape that the strides of an evaluated transposed view cannot express: needs a copy.
TEST_P(Views, ReshapeOfAnEvaluatedTransposedView) {
  Array y = (random_array(DType::Float64, {6, 7}, 18) * 2.0).eval();
  Array t = transpose(y).eval();
  EXPECT_MATCHES_REFERENCE(reshape(t, {42}));
  EXPECT_MATCHES_REFERENCE(reshape(t, {2, 21}) * 2.0);
  EXPECT_MATCHES_REFERENCE(sum(reshape(t, {3, 14}), {1}, false));
}

// Leaves that compute their values from their index (iota, random, constants) under views:
// the index must be the leaf's own, not the consumer's.
TEST_P(Views, IndexedLeavesUnderViews) {
  EXPECT_MATCHES_REFERENCE(transpose(reshape(arange(12, DType::Int32), {3, 4})) * 1);
  EXPECT_MATCHES_REFERENCE(transpose(uniform({3, 5}, 7)) + 0.5f);
  EXPECT_MATCHES_REFERENCE(reshape(transpose(normal({4, 6}, 8, 0, 1, DType::Float64)), {3, 8}) * 2.0);
  EXPECT_MATCHES_REFERENCE(broadcast_to(reshape(uniform({3}, 9), {3, 1}), {3, 4}) * 3.0f);
  EXPECT_MATCHES_REFERENCE(transpose(broadcast_to(arange(0.0, 5.0, 1.0), {2, 5})) + arange(2, DType::Float64));
  EXPECT_MATCHES_REFERENCE(sum(transpose(reshape(uniform({24}, 10), {2, 3, 4}), {2, 0, 1}), {0}, false));
  EXPECT_MATCHES_REFERENCE(transpose(full({3, 2}, 1.5)) * arange(3, DType::Float32));
}

TEST_P(Views, BroadcastToAndExpandDims) {
  Array v = random_array(DType::Int32, {3}, 19);
  EXPECT_MATCHES_REFERENCE(broadcast_to(v, {4, 3}));
  EXPECT_MATCHES_REFERENCE(broadcast_to(v, {2, 2, 3}) * 2);
  Array c = random_array(DType::Float32, {3, 1}, 20);
  EXPECT_MATCHES_REFERENCE(broadcast_to(c, {2, 3, 5}));
  EXPECT_MATCHES_REFERENCE(broadcast_to(make_array(DType::Float64, {}, {1.5}), {2, 2}));
  EXPECT_MATCHES_REFERENCE(broadcast_to(v, {0, 3}));
  for (int64_t axis : {0, 1, -1, -2}) {
    SCOPED_TRACE("axis " + std::to_string(axis));
    Array e = expand_dims(c, axis);
    EXPECT_EQ(e.ndim(), 3);
    EXPECT_MATCHES_REFERENCE(e);
    EXPECT_MATCHES_REFERENCE(e + 1.0f);
  }
  EXPECT_EQ(expand_dims(c, 0).shape(), (Shape{1, 3, 1}));
  EXPECT_EQ(expand_dims(c, -1).shape(), (Shape{3, 1, 1}));
  EXPECT_EQ(expand_dims(v, 1).shape(), (Shape{3, 1}));
}

TEST_P(Views, ViewsOfViews) {
  Array x = random_array(DType::Float32, {4, 6}, 21);
  EXPECT_MATCHES_REFERENCE(reshape(transpose(x), {3, 8}));
  EXPECT_MATCHES_REFERENCE(transpose(reshape(x, {2, 3, 4}), {2, 0, 1}));
  EXPECT_MATCHES_REFERENCE(reshape(transpose(reshape(x, {2, 12})), {-1}));
  EXPECT_MATCHES_REFERENCE(transpose(broadcast_to(reshape(x, {4, 1, 6}), {4, 5, 6}), {1, 2, 0}));
  EXPECT_MATCHES_REFERENCE(broadcast_to(transpose(x), {2, 6, 4}) * 2.0f);
  EXPECT_MATCHES_REFERENCE(expand_dims(transpose(x), 1) + random_array(DType::Float32, {3, 1}, 22));
  // An elementwise op mixing a transposed and a plain operand, then viewed again.
  Array y = random_array(DType::Float32, {6, 4}, 23);
  EXPECT_MATCHES_REFERENCE(reshape(transpose(x) * y + arrayc::exp(y), {2, 12}));
  EXPECT_MATCHES_REFERENCE(transpose(transpose(x)));
  // A view that strides cannot express: reshape of a transpose, then transpose again.
  EXPECT_MATCHES_REFERENCE(transpose(reshape(transpose(reshape(x, {2, 2, 6}), {2, 1, 0}), {12, 2})));
}

}  // namespace
