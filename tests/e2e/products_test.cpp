// dot and matmul end to end: 1-D and 2-D operands, transposed operands, batched matmul with
// broadcast batches, integer products, and products inside larger expressions.
#include "support/data.h"
#include "support/devices.h"
#include "support/reference.h"

namespace {

using namespace arrayc;
using namespace arrayc_test;

class Products : public DeviceTest {};
ARRAYC_DEVICE_SUITE(Products);

TEST_P(Products, DotShapes) {
  for (DType t : kNumericTypes) {
    SCOPED_TRACE(dt(t));
    Array v = random_array(t, {7}, 1), w = random_array(t, {7}, 2);
    Array a = random_array(t, {5, 7}, 3), b = random_array(t, {7, 3}, 4);
    EXPECT_MATCHES_REFERENCE(dot(v, w));
    EXPECT_EQ(dot(v, w).shape(), Shape{});
    EXPECT_MATCHES_REFERENCE(dot(a, b));
    EXPECT_MATCHES_REFERENCE(dot(a, v));
    EXPECT_MATCHES_REFERENCE(dot(v, b));
    EXPECT_MATCHES_REFERENCE(matmul(a, b));
    EXPECT_MATCHES_REFERENCE(matmul(v, b));
    EXPECT_MATCHES_REFERENCE(matmul(a, v));
  }
}

TEST_P(Products, MixedDtypes) {
  Array a = random_array(DType::Int32, {4, 6}, 5);
  Array b = random_array(DType::Float32, {6, 2}, 6);
  Array c = dot(a, b);
  EXPECT_EQ(c.dtype(), DType::Float64);
  EXPECT_MATCHES_REFERENCE(c);
  EXPECT_MATCHES_REFERENCE(dot(random_array(DType::Int32, {3, 4}, 7), random_array(DType::Int64, {4, 5}, 8)));
}

TEST_P(Products, IntegerProductsWrap) {
  Array a = random_array(DType::Int32, {8, 16}, 9, -50000, 50000);
  Array b = random_array(DType::Int32, {16, 8}, 10, -50000, 50000);
  EXPECT_MATCHES_REFERENCE(dot(a, b));  // sums of products past 2^31 wrap in int32
  EXPECT_MATCHES_REFERENCE(dot(arrayc::cast(a, DType::Int64), arrayc::cast(b, DType::Int64)));
}

TEST_P(Products, TransposedOperands) {
  for (DType t : {DType::Float32, DType::Float64, DType::Int64}) {
    SCOPED_TRACE(dt(t));
    Array a = random_array(t, {7, 5}, 11);  // a^T is [5, 7]
    Array b = random_array(t, {3, 7}, 12);  // b^T is [7, 3]
    EXPECT_MATCHES_REFERENCE(dot(transpose(a), transpose(b)));
    EXPECT_MATCHES_REFERENCE(dot(transpose(a), random_array(t, {7, 4}, 13)));
    EXPECT_MATCHES_REFERENCE(dot(random_array(t, {2, 7}, 14), transpose(b)));
    Array ae = a.eval();
    EXPECT_MATCHES_REFERENCE(matmul(transpose(ae), transpose(b)));
  }
}

TEST_P(Products, SizesIncludingEmptyAndOne) {
  const int64_t sizes[][3] = {{1, 1, 1}, {1, 5, 1}, {3, 1, 4}, {2, 0, 3}, {0, 4, 2}, {17, 33, 9},
                              {64, 64, 64}, {65, 63, 67}, {128, 300, 96}};
  for (const auto& s : sizes) {
    SCOPED_TRACE("m, k, n = " + std::to_string(s[0]) + ", " + std::to_string(s[1]) + ", " + std::to_string(s[2]));
    for (DType t : {DType::Float32, DType::Float64}) {
      Array a = random_array(t, {s[0], s[1]}, 15), b = random_array(t, {s[1], s[2]}, 16);
      EXPECT_MATCHES_REFERENCE(dot(a, b));
    }
  }
}

TEST_P(Products, BatchedMatmul) {
  for (DType t : {DType::Float32, DType::Float64, DType::Int32}) {
    SCOPED_TRACE(dt(t));
    EXPECT_MATCHES_REFERENCE(matmul(random_array(t, {4, 3, 5}, 17), random_array(t, {4, 5, 2}, 18)));
    // Broadcast batch: [1, 3, 5] x [4, 5, 2], [3, 5] x [4, 5, 2], [2, 1, 3, 5] x [4, 5, 2].
    EXPECT_MATCHES_REFERENCE(matmul(random_array(t, {1, 3, 5}, 19), random_array(t, {4, 5, 2}, 20)));
    EXPECT_MATCHES_REFERENCE(matmul(random_array(t, {3, 5}, 21), random_array(t, {4, 5, 2}, 22)));
    Array r = matmul(random_array(t, {2, 1, 3, 5}, 23), random_array(t, {4, 5, 2}, 24));
    EXPECT_EQ(r.shape(), (Shape{2, 4, 3, 2}));
    EXPECT_MATCHES_REFERENCE(r);
    EXPECT_MATCHES_REFERENCE(matmul(random_array(t, {6, 4, 5}, 25), random_array(t, {5}, 26)));
    EXPECT_MATCHES_REFERENCE(matmul(random_array(t, {5}, 27), random_array(t, {6, 5, 3}, 28)));
    // Batched with transposed operands.
    EXPECT_MATCHES_REFERENCE(
        matmul(transpose(random_array(t, {4, 5, 3}, 29), {0, 2, 1}), transpose(random_array(t, {2, 5, 4}, 30))));
  }
}

TEST_P(Products, InsideExpressions) {
  Array x = random_array(DType::Float32, {16, 8}, 31);
  Array w = random_array(DType::Float32, {8, 4}, 32);
  Array bias = random_array(DType::Float32, {4}, 33);
  Array h = arrayc::tanh(dot(x * 0.5f, w) + bias);
  EXPECT_MATCHES_REFERENCE(h);
  EXPECT_MATCHES_REFERENCE(sum(dot(h, transpose(h)), {1}, false));
  EXPECT_MATCHES_REFERENCE(dot(dot(x, w), transpose(w)));
}

}  // namespace
