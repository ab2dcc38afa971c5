// The GPU scatter and the GPU sort's tiles (issue 28), on every device against the reference
// interpreter: x.at(indices).set/add with many updates per row across many blocks (the GPU's
// atomics and its last-update mark), every dtype, rows of several elements, negative and dropped
// indices, no updates; and sorts whose lengths sit around the pass kernel's tile sizes for every
// dtype sort accepts.
#include <cmath>

#include "support/data.h"
#include "support/devices.h"
#include "support/reference.h"

namespace {

using namespace arrayc;
using namespace arrayc_test;

class GpuScatterSort : public DeviceTest {};
ARRAYC_DEVICE_SUITE(GpuScatterSort);

// Updates with small integer values, so that every order of the adds gives the same sum (the
// GPU's atomics add in no set order) and the reference matches bit for bit in every dtype.
TEST_P(GpuScatterSort, ScatterManyUpdatesPerRowEveryDtype) {
  const int64_t n = 300, k = 60'000;
  // Indices in [-330, 330): negative ones count from the end, those outside [-300, 300) drop.
  Array idx = random_array(DType::Int64, {k}, 81, -330, 329);
  for (DType t : kAllDTypes) {
    SCOPED_TRACE(dt(t));
    bool small = t == DType::Int8 || t == DType::UInt8 || t == DType::Float16 || t == DType::BFloat16;
    auto whole = [&](const Shape& s, uint64_t seed, double lo, double hi) {
      return cast(random_array(DType::Int32, s, seed, lo, hi), t);
    };
    Array x = whole({n}, 82, 0, 3);
    Array v = whole({k}, 83, small ? 0 : -2, small ? 1 : 2);
    EXPECT_MATCHES_REFERENCE(x.at(idx).set(v));  // the last update of each row in index order
    EXPECT_MATCHES_REFERENCE(x.at(idx).add(v));
    // Rows of several elements, and a strided update operand.
    Array x2 = whole({n, 3}, 84, 0, 3);
    Array v2 = whole({k, 6}, 85, 0, 1)[{_, Slice(none, none, 2)}];
    EXPECT_MATCHES_REFERENCE(x2.at(idx).set(v2));
    EXPECT_MATCHES_REFERENCE(x2.at(idx).add(v2));
  }
  // Integers wrap in any order: int8 sums far past 127 (on a GPU a compare-and-swap loop).
  Array big = full({k}, 100.0, DType::Int8);
  EXPECT_MATCHES_REFERENCE(zeros({3}, DType::Int8).at(random_array(DType::Int64, {k}, 86, 0, 2)).add(big));
}

// Float adds of general values: the GPU adds a row's updates in no set order, so they match the
// reference within 2 ULPs of each partial sum per update (tests/support/reference.cpp); one update
// per row is exact.
TEST_P(GpuScatterSort, ScatterFloatAddsAndEdges) {
  for (DType t : kFloatTypes) {
    SCOPED_TRACE(dt(t));
    Array x = random_array(t, {1000}, 91);
    Array perm = argsort(random_array(DType::Float64, {1000}, 92));  // distinct rows
    Array v = random_array(t, {1000}, 93);
    EXPECT_MATCHES_REFERENCE(x.at(perm).add(v), CompareOptions{.signed_zero = true});
    EXPECT_MATCHES_REFERENCE(x.at(perm).set(v), CompareOptions{.signed_zero = true});
    Array dup = random_array(DType::Int64, {4000}, 94, 0, 999);
    EXPECT_MATCHES_REFERENCE(x.at(dup).add(random_array(t, {4000}, 95)));
  }
  // No updates, no rows, rows of no elements: x comes back.
  Array x = arange(5, DType::Float32);
  EXPECT_EQ(x.at(array<int64_t>({}, {0})).add(1.0f).to_vector<float>(), x.to_vector<float>());
  EXPECT_EQ(zeros({0, 2}).at(array<int64_t>({0, -1}, {2})).add(1.0f).shape(), (Shape{0, 2}));
  EXPECT_EQ(zeros({3, 0}).at(array<int64_t>({1, 2}, {2})).set(1.0f).shape(), (Shape{3, 0}));
  // Every index outside [-n, n): nothing changes.
  EXPECT_EQ(x.at(array<int64_t>({5, -6, 100}, {3})).set(array<float>({7, 8, 9}, {3})).to_vector<float>(), x.to_vector<float>());
  // The last update wins across blocks: row 2 updated 100000 times, the last value 99999.
  const int64_t k = 100'000;
  Array rows = full({k}, 2.0, DType::Int64);
  Array vals = arange(k, DType::Float32);
  EXPECT_EQ(x.at(rows).set(vals).to_vector<float>(), (std::vector<float>{0, 1, 99999, 3, 4}));
  EXPECT_EQ(x.at(rows).add(full({k}, 1.0, DType::Float32)).to_vector<float>(), (std::vector<float>{0, 1, 100002, 3, 4}));
}

// Lengths around the pass kernel's tiles (256 x 16 elements for 4-byte keys alone, 256 x 12
// for 8-byte values with 4-byte positions, and multiples), for every dtype sort accepts.
TEST_P(GpuScatterSort, SortLengthsAroundTiles) {
  for (int64_t n : {3071, 3072, 3073, 4095, 4096, 4097, 8191, 8193, 3 * 4096 + 1, 9 * 4096 - 1})
    for (DType t : kAllDTypes) {
      SCOPED_TRACE(dt(t) + " n = " + std::to_string(n));
      Array x = random_array(t, {n}, 100 + static_cast<uint64_t>(n), -50, 50);
      EXPECT_MATCHES_REFERENCE(sort(x), CompareOptions{.signed_zero = true});
      EXPECT_MATCHES_REFERENCE(argsort(x));
    }
  // Float keys with NaN and -0.0 at every place of a long row (numpy's order: NaN last, -0.0
  // equal to 0.0, stable).
  for (DType t : {DType::Float32, DType::Float64}) {
    Array base = random_array(t, {50'001}, 110, -2, 2);
    Array k = floor(base);
    Array m = where(k == 1.0f, full({}, std::nan(""), t), where(k == -1.0f, full({}, -0.0, t), base));
    EXPECT_MATCHES_REFERENCE(sort(m), CompareOptions{.signed_zero = true});
    EXPECT_MATCHES_REFERENCE(argsort(m));
  }
}

}  // namespace
