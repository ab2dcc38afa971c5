// full() of an unsigned integer past int64's range (exact integers, issue 26): it went through a
// double, so every uint64 in (2^64 - 2048, 2^64) became 2^64 - 1 and 2^63 + 1 became 2^63. Now
// uint64 holds it exactly, a float rounds it once, and every other integer dtype raises, naming
// full and the dtype (numpy 2 raises too).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "arrayc/arrayc.h"
#include "support/errors.h"

namespace {

using namespace arrayc;

// Values past INT64_MAX: near 2^63, 2^64 and in between, generated.
std::vector<uint64_t> big_values() {
  std::vector<uint64_t> out;
  for (uint64_t d = 0; d < 40; ++d) {
    out.push_back((uint64_t{1} << 63) + d);
    out.push_back(UINT64_MAX - d);
    out.push_back((uint64_t{1} << 63) + (d * 0x0123456789abcdefULL) % (uint64_t{1} << 62));
  }
  return out;
}

TEST(FullUnsigned, Uint64IsExactPastInt64) {
  for (uint64_t v : big_values()) {
    SCOPED_TRACE(std::to_string(v));
    EXPECT_EQ(full({3}, v, DType::UInt64).to_vector<uint64_t>(), std::vector<uint64_t>(3, v));
    EXPECT_EQ(full({}, v, DType::Float64).item<double>(), static_cast<double>(v));
    EXPECT_EQ(full({}, v, DType::Float32).item<float>(), static_cast<float>(v));
    EXPECT_EQ(full({}, v, DType::Bool).item<bool>(), true);
    for (DType t : {DType::Int8, DType::UInt8, DType::Int32, DType::UInt32, DType::Int64})
      EXPECT_ARRAYC_ERROR(full({2}, v, t), "full: the integer " + std::to_string(v) + " is out of bounds for " +
                                               dtype_name(t));
  }
}

}  // namespace
