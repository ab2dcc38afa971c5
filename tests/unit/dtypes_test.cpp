// The dtype tables: numpy's promotion table (tests/data/promotion.txt, written by numpy), names,
// ranges, the float -> integer rule at every width, and rounding to float16/bfloat16.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include "arrayc/arrayc.h"
#include "ir/node.h"

namespace arrayc {
namespace {

using detail::float_to_int;

DType by_name(const std::string& n) {
  DType t;
  EXPECT_TRUE(dtype_from_name(n, t)) << n;
  return t;
}

TEST(DTypes, PromotionIsNumpys) {
  std::ifstream in(std::string(ARRAYC_TEST_DATA_DIR) + "/data/promotion.txt");
  ASSERT_TRUE(in) << "missing tests/data/promotion.txt";
  std::string line;
  std::vector<std::pair<std::string, std::vector<std::string>>> rows;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    std::string a, r;
    ls >> a;
    std::vector<std::string> cols;
    while (ls >> r) cols.push_back(r);
    rows.push_back({a, cols});
  }
  ASSERT_EQ(rows.size(), 12u);  // every dtype but bfloat16
  int checked = 0;
  for (const auto& [a, cols] : rows) {
    ASSERT_EQ(cols.size(), rows.size());
    for (size_t j = 0; j < cols.size(); ++j) {
      const std::string& b = rows[j].first;
      EXPECT_EQ(dtype_name(promote_types(by_name(a), by_name(b))), cols[j]) << a << " + " << b;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 144);
}

// bfloat16 (not in numpy) ranks with float16: it holds bool and 8-bit integers exactly; with
// anything wider, or with float16, the smallest float holding both.
TEST(DTypes, BFloat16Promotion) {
  std::map<DType, DType> want = {
      {DType::Bool, DType::BFloat16},    {DType::Int8, DType::BFloat16},   {DType::UInt8, DType::BFloat16},
      {DType::Int16, DType::Float32},    {DType::UInt16, DType::Float32},  {DType::Int32, DType::Float64},
      {DType::UInt32, DType::Float64},   {DType::Int64, DType::Float64},   {DType::UInt64, DType::Float64},
      {DType::Float16, DType::Float32},  {DType::BFloat16, DType::BFloat16}, {DType::Float32, DType::Float32},
      {DType::Float64, DType::Float64}};
  for (DType t : kAllDTypes) {
    EXPECT_EQ(promote_types(DType::BFloat16, t), want.at(t)) << dtype_name(t);
    EXPECT_EQ(promote_types(t, DType::BFloat16), want.at(t)) << dtype_name(t);
  }
  // The table is symmetric and idempotent.
  for (DType a : kAllDTypes) {
    EXPECT_EQ(promote_types(a, a), a);
    for (DType b : kAllDTypes) EXPECT_EQ(promote_types(a, b), promote_types(b, a));
  }
}

TEST(DTypes, NamesAndSizes) {
  const std::pair<const char*, const char*> names[] = {
      {"f16", "float16"}, {"bf16", "bfloat16"}, {"f32", "float32"}, {"f64", "float64"},
      {"i8", "int8"},     {"u8", "uint8"},      {"i16", "int16"},   {"u16", "uint16"},
      {"i32", "int32"},   {"u32", "uint32"},    {"i64", "int64"},   {"u64", "uint64"}};
  for (const auto& [short_name, long_name] : names) {
    EXPECT_EQ(by_name(short_name), by_name(long_name));
    EXPECT_STREQ(dtype_name(by_name(short_name)), long_name);
  }
  DType t;
  EXPECT_FALSE(dtype_from_name("float8", t));
  EXPECT_FALSE(dtype_from_name("", t));
  EXPECT_EQ(sizeof(kAllDTypes) / sizeof(kAllDTypes[0]), 13u);
  for (DType d : kAllDTypes) EXPECT_EQ(by_name(dtype_name(d)), d);
  EXPECT_EQ(dtype_size(DType::Float16), 2u);
  EXPECT_EQ(dtype_size(DType::BFloat16), 2u);
  EXPECT_EQ(dtype_size(DType::UInt64), 8u);
  EXPECT_EQ(int_min(DType::Int8), -128);
  EXPECT_EQ(int_max(DType::Int8), 127u);
  EXPECT_EQ(int_max(DType::UInt16), 65535u);
  EXPECT_EQ(int_min(DType::Int64), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(int_max(DType::UInt64), std::numeric_limits<uint64_t>::max());
  EXPECT_TRUE(is_unsigned(DType::UInt32) && is_int(DType::UInt32) && !is_signed_int(DType::UInt32));
  EXPECT_TRUE(is_half(DType::BFloat16) && is_float(DType::BFloat16) && !is_int(DType::Float16));
  EXPECT_FALSE(is_int(DType::Bool));
}

// float -> integer: truncate, saturate at the range, NaN -> 0, at every width.
TEST(DTypes, FloatToIntSaturatesAtEveryWidth) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = HUGE_VAL;
  EXPECT_EQ(float_to_int(DType::Int8, 127.9), 127);
  EXPECT_EQ(float_to_int(DType::Int8, 128.0), 127);
  EXPECT_EQ(float_to_int(DType::Int8, -128.9), -128);
  EXPECT_EQ(float_to_int(DType::Int8, -1e9), -128);
  EXPECT_EQ(float_to_int(DType::UInt8, -0.9), 0);
  EXPECT_EQ(float_to_int(DType::UInt8, -5.0), 0);
  EXPECT_EQ(float_to_int(DType::UInt8, 255.5), 255);
  EXPECT_EQ(float_to_int(DType::UInt8, 256.0), 255);
  EXPECT_EQ(float_to_int(DType::Int16, 40000.0), 32767);
  EXPECT_EQ(float_to_int(DType::UInt16, 65535.99), 65535);
  EXPECT_EQ(float_to_int(DType::UInt32, 4294967295.5), 4294967295);
  EXPECT_EQ(float_to_int(DType::UInt32, 1e10), 4294967295);
  EXPECT_EQ(static_cast<uint64_t>(float_to_int(DType::UInt64, 0x1p63)), uint64_t{1} << 63);
  EXPECT_EQ(static_cast<uint64_t>(float_to_int(DType::UInt64, 0x1.fffffffffffffp63)), 0xfffffffffffff800u);
  EXPECT_EQ(static_cast<uint64_t>(float_to_int(DType::UInt64, 0x1p64)), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(static_cast<uint64_t>(float_to_int(DType::UInt64, inf)), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(float_to_int(DType::UInt64, -inf), 0);
  for (DType t : kAllDTypes)
    if (is_int(t)) EXPECT_EQ(float_to_int(t, nan), 0) << dtype_name(t);
  EXPECT_EQ(detail::wrap_int(DType::Int8, 128), -128);
  EXPECT_EQ(detail::wrap_int(DType::UInt8, static_cast<uint64_t>(-1)), 255);
  EXPECT_EQ(detail::wrap_int(DType::Int16, 0x18000), -32768);
  EXPECT_EQ(detail::wrap_int(DType::UInt32, static_cast<uint64_t>(-1)), 4294967295);
}

uint16_t h(double x) { return float16_bits(x); }
uint16_t bf(double x) { return bfloat16_bits(x); }

// Round to nearest even, overflow to inf, NaN, signed zero, subnormals.
TEST(DTypes, Float16Rounding) {
  EXPECT_EQ(h(1.0), 0x3c00);
  EXPECT_EQ(h(-2.0), 0xc000);
  EXPECT_EQ(h(0.0), 0x0000);
  EXPECT_EQ(h(-0.0), 0x8000);
  EXPECT_EQ(h(65504.0), 0x7bff);
  EXPECT_EQ(h(65519.99), 0x7bff);          // below the midpoint to 2^16
  EXPECT_EQ(h(65520.0), 0x7c00);           // the midpoint rounds to even: inf
  EXPECT_EQ(h(-1e6), 0xfc00);
  EXPECT_EQ(h(HUGE_VAL), 0x7c00);
  EXPECT_EQ(h(std::nan("")) & 0x7c00, 0x7c00);
  EXPECT_NE(h(std::nan("")) & 0x3ff, 0);
  EXPECT_EQ(h(2049.0), 0x6800);            // tie between 2048 and 2050: even (2048)
  EXPECT_EQ(h(2051.0), 0x6802);            // tie between 2050 and 2052: even (2052)
  EXPECT_EQ(h(1.0 + 0x1p-11), 0x3c00);     // tie: to even
  EXPECT_EQ(h(1.0 + 0x1p-11 + 0x1p-40), 0x3c01);  // just past the tie (float32 would lose it)
  EXPECT_EQ(h(0x1p-24), 0x0001);           // smallest subnormal
  EXPECT_EQ(h(0x1p-25), 0x0000);           // half of it: tie to even (0)
  EXPECT_EQ(h(0x1.8p-25), 0x0001);
  EXPECT_EQ(h(0x1p-14), 0x0400);           // smallest normal
  EXPECT_EQ(h(0x1.ff8p-15), 0x03ff);       // the largest subnormal
  EXPECT_EQ(h(0x1.ffcp-15), 0x0400);       // its midpoint to the smallest normal: even, up
  EXPECT_EQ(float16_value(0x0001), 0x1p-24f);
  EXPECT_EQ(float16_value(0x7bff), 65504.0f);
  EXPECT_TRUE(std::isinf(float16_value(0xfc00)) && float16_value(0xfc00) < 0);
  EXPECT_TRUE(std::isnan(float16_value(0x7e00)));
  EXPECT_TRUE(std::signbit(float16_value(0x8000)));
  // Every finite float16 reads back to itself.
  for (uint32_t b = 0; b < 0x10000; ++b)
    if ((b & 0x7c00) != 0x7c00) EXPECT_EQ(h(float16_value(static_cast<uint16_t>(b))), b) << b;
}

TEST(DTypes, BFloat16Rounding) {
  EXPECT_EQ(bf(1.0), 0x3f80);
  EXPECT_EQ(bf(-0.0), 0x8000);
  EXPECT_EQ(bf(1.0 + 0x1p-8), 0x3f80);            // tie: to even
  EXPECT_EQ(bf(1.0 + 0x1p-8 + 0x1p-40), 0x3f81);  // just past it
  EXPECT_EQ(bf(1.0 + 3 * 0x1p-8), 0x3f82);        // tie: to even (up)
  EXPECT_EQ(bf(0x1.fep127), 0x7f7f);              // largest finite
  EXPECT_EQ(bf(0x1.ffp127), 0x7f80);              // its midpoint to 2^128: inf
  EXPECT_EQ(bf(-1e39), 0xff80);
  EXPECT_EQ(bf(0x1p-133), 0x0001);                // smallest subnormal
  EXPECT_EQ(bf(0x1p-134), 0x0000);
  EXPECT_EQ(bf(0.1), 0x3dcd);
  EXPECT_TRUE(std::isnan(bfloat16_value(bf(std::nan("")))));
  EXPECT_EQ(bfloat16_value(0x3f80), 1.0f);
  for (uint32_t b = 0; b < 0x10000; ++b)
    if ((b & 0x7f80) != 0x7f80) EXPECT_EQ(bf(bfloat16_value(static_cast<uint16_t>(b))), b) << b;
}

TEST(DTypes, StorageTypes) {
  float16 a = 0.1f, b(3), c = 1e9;
  EXPECT_EQ(a.bits, 0x2e66);
  EXPECT_EQ(static_cast<float>(b), 3.0f);
  EXPECT_TRUE(std::isinf(static_cast<float>(c)));
  bfloat16 d = 0.1;
  EXPECT_EQ(d.bits, 0x3dcd);
  EXPECT_EQ(float16::from_bits(0x3c00), 1.0f);
  static_assert(sizeof(float16) == 2 && sizeof(bfloat16) == 2);
  static_assert(dtype_of<float16>() == DType::Float16 && dtype_of<bfloat16>() == DType::BFloat16);
  static_assert(dtype_of<uint8_t>() == DType::UInt8 && dtype_of<int8_t>() == DType::Int8);
}

}  // namespace
}  // namespace arrayc
