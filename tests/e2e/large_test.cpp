// 64-bit indexing: arrays past 2^31 elements. Generated leaves (constants, iota) need no memory,
// so these run in CI; only the one-byte-per-element case allocates (2 GiB).
#include <gtest/gtest.h>

#include "arrayc/arrayc.h"

namespace {

using namespace arrayc;

constexpr int64_t kPast32Bits = (int64_t{1} << 31) + 3;

TEST(LargeArrays, ReductionsPast2To31Elements) {
  EXPECT_EQ(sum(ones({kPast32Bits}, DType::Int32)).item<int64_t>(), kPast32Bits);
  EXPECT_EQ(max(arange(kPast32Bits)).item<int64_t>(), kPast32Bits - 1);
}

TEST(LargeArrays, ElementwisePast2To31Elements) {
  Array big = (arange(kPast32Bits) > kPast32Bits - 3).eval();  // bool, 2 GiB
  ASSERT_EQ(big.size(), kPast32Bits);
  EXPECT_EQ(sum(big).item<int64_t>(), 2);
}

}  // namespace
