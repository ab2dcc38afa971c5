// The small dtypes end to end, on every device: integer extremes and wraparound at each width,
// unsigned order, float16/bfloat16 rounding in the generated code (NaN, inf, -0, subnormals,
// overflow, ties, float64 sources), their arithmetic, reductions and products, numpy 2's
// promotion of arrays and of weak (Python-like) scalars, reading values back, printing, jit.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "arrayc/arrayc.h"
#include "ir/node.h"
#include "support/data.h"
#include "support/devices.h"
#include "support/errors.h"
#include "support/reference.h"

namespace arrayc_test {
namespace {

using arrayc::Array;
using arrayc::kAllDTypes;
using arrayc::Shape;
using arrayc::float16;
using arrayc::bfloat16;

class DTypes : public DeviceTest {};
ARRAYC_DEVICE_SUITE(DTypes);

// Every arithmetic op at each integer width on its edge values (all pairs), against the
// reference: wraps as numpy does.
TEST_P(DTypes, IntegerExtremesWrap) {
  for (DType t : kIntTypes) {
    SCOPED_TRACE(dt(t));
    std::vector<double> xs, ys;
    all_pairs(int_edge_values(t), xs, ys);
    Shape s{static_cast<int64_t>(xs.size())};
    Array x = make_array(t, s, xs), y = make_array(t, s, ys);
    for (Array r : {x + y, x - y, x * y, arrayc::maximum(x, y), arrayc::minimum(x, y), x < y, x >= y, x == y,
                    -x, arrayc::abs(x), arrayc::pow(x, y)})
      EXPECT_MATCHES_REFERENCE(r);
  }
}

TEST_P(DTypes, KnownWraparounds) {
  EXPECT_EQ((arrayc::array(std::vector<int8_t>{127}) + 1).item<int64_t>(), -128);
  EXPECT_EQ((arrayc::array(std::vector<int8_t>{-128}) - 1).item<int64_t>(), 127);
  EXPECT_EQ((-arrayc::array(std::vector<int8_t>{-128})).item<int64_t>(), -128);
  EXPECT_EQ(arrayc::abs(arrayc::array(std::vector<int16_t>{-32768})).item<int64_t>(), -32768);
  EXPECT_EQ((arrayc::array(std::vector<uint8_t>{0}) - 1).item<int64_t>(), 255);
  EXPECT_EQ((arrayc::array(std::vector<uint8_t>{200}) * 2).item<int64_t>(), 144);
  EXPECT_EQ((arrayc::array(std::vector<uint16_t>{65535}) + 1).item<int64_t>(), 0);
  EXPECT_EQ((arrayc::array(std::vector<uint32_t>{0}) - 1).item<uint64_t>(), 4294967295u);
  uint64_t max64 = std::numeric_limits<uint64_t>::max();
  Array u = arrayc::array(std::vector<uint64_t>{max64, 1u << 31, 0});
  EXPECT_EQ((u + 1).to_vector<uint64_t>(), (std::vector<uint64_t>{0, (1u << 31) + 1, 1}));
  EXPECT_EQ((-u).to_vector<uint64_t>(), (std::vector<uint64_t>{1, max64 - (1u << 31) + 1, 0}));
  EXPECT_EQ(arrayc::abs(u).to_vector<uint64_t>(), u.to_vector<uint64_t>());  // unsigned: unchanged
  // Unsigned order: max64 is the largest, not -1.
  EXPECT_EQ(arrayc::max(u).item<uint64_t>(), max64);
  EXPECT_EQ(arrayc::min(u).item<uint64_t>(), 0u);
  EXPECT_EQ((u > 5).to_vector<bool>(), (std::vector<bool>{true, true, false}));
  EXPECT_EQ(arrayc::maximum(u, arrayc::array(std::vector<uint64_t>{1, 1, 1})).to_vector<uint64_t>(),
            (std::vector<uint64_t>{max64, 1u << 31, 1}));
  EXPECT_EQ(arrayc::cast(u, DType::Float64).to_vector<double>(), (std::vector<double>{0x1p64, 0x1p31, 0}));
  EXPECT_EQ(arrayc::cast(arrayc::array(std::vector<double>{0x1p64, 1e30, -1, 0x1p63}), DType::UInt64).to_vector<uint64_t>(),
            (std::vector<uint64_t>{max64, max64, 0, uint64_t{1} << 63}));
  for (Array r : {u + 1, -u, arrayc::max(u), u > 5, arrayc::cast(u, DType::Float32), arrayc::cast(u, DType::Int8)})
    EXPECT_MATCHES_REFERENCE(r);
}

// numpy: sums and products of narrow integers accumulate in 64 bits (signed or unsigned), max and
// min keep the dtype, means are float64.
TEST_P(DTypes, IntegerReductions) {
  Array b = arrayc::array(std::vector<uint8_t>(1000, 255));
  EXPECT_EQ(arrayc::sum(b).dtype(), DType::UInt64);
  EXPECT_EQ(arrayc::sum(b).item<uint64_t>(), 255000u);
  Array c = arrayc::array(std::vector<int8_t>(1000, -128));
  EXPECT_EQ(arrayc::sum(c).dtype(), DType::Int64);
  EXPECT_EQ(arrayc::sum(c).item<int64_t>(), -128000);
  EXPECT_EQ(arrayc::max(c).dtype(), DType::Int8);
  EXPECT_EQ(arrayc::mean(c).dtype(), DType::Float64);
  for (DType t : kIntTypes) {
    SCOPED_TRACE(dt(t));
    Array x = make_array(t, {4, 300}, values_of(random_array(DType::Float64, {4, 300}, 5, -300, 300)).f);
    for (Array r : {arrayc::sum(x, {1}), arrayc::prod(x, {0}), arrayc::max(x, {1}), arrayc::min(x), arrayc::mean(x, {0})})
      EXPECT_MATCHES_REFERENCE(r);
  }
}

// Casts to float16/bfloat16 in the generated code round as the host does, from float32 and from
// float64 (one rounding, not two through float32), with NaN, inf, -0, overflow and subnormals.
TEST_P(DTypes, HalfCastsRoundOnce) {
  std::vector<double> v = {0.0, -0.0, 1.0, 0.1, -0.1, 65504.0, 65519.0, 65520.0, 1e6, -1e6, 2049.0, 2051.0,
                           1.0 + 0x1p-11, 1.0 + 0x1p-11 + 0x1p-40, 1.0 + 0x1p-8 + 0x1p-40, 0x1p-24, 0x1p-25,
                           0x1.8p-25, 0x1.ff8p-15, 0x1p-133, 0x1p-134, 0x1.fep127, 0x1.ffp127, 1e39, 1e-300,
                           HUGE_VAL, -HUGE_VAL, std::nan(""), 3.0e38, 257.0};
  CompareOptions strict;
  strict.signed_zero = true;
  Array x64 = arrayc::array(v);
  Array x32 = arrayc::cast(x64, DType::Float32);
  for (DType h : {DType::Float16, DType::BFloat16}) {
    SCOPED_TRACE(dt(h));
    for (const Array& x : {x64, x32}) {
      Array r = arrayc::cast(x, h);
      EXPECT_MATCHES_REFERENCE(r, strict);
      std::vector<double> got = r.to_vector<double>(), src = x.to_vector<double>();
      for (size_t i = 0; i < v.size(); ++i) {
        double want = arrayc::detail::round_float(h, src[i]);
        EXPECT_TRUE(got[i] == want || (std::isnan(got[i]) && std::isnan(want))) << src[i] << " -> " << got[i];
        if (got[i] == 0) EXPECT_EQ(std::signbit(got[i]), std::signbit(src[i])) << src[i];
      }
      // And back: exact.
      EXPECT_MATCHES_REFERENCE(arrayc::cast(r, DType::Float64), strict);
    }
  }
  // 16-bit floats to integers saturate as float32 does; integers to 16-bit floats round.
  Array f = arrayc::cast(arrayc::array(std::vector<double>{-1e9, -129.5, 255.7, 70000, std::nan(""), -0.5}), DType::Float16);
  for (DType t : kIntTypes) EXPECT_MATCHES_REFERENCE(arrayc::cast(f, t));
  Array big = arrayc::array(std::vector<int64_t>{65504, 65519, 65520, 16777217, -2049, 2051, std::numeric_limits<int64_t>::max()});
  for (DType h : {DType::Float16, DType::BFloat16}) EXPECT_MATCHES_REFERENCE(arrayc::cast(big, h), strict);
  EXPECT_EQ(arrayc::cast(arrayc::array(std::vector<double>{1.0 + 0x1p-11 + 0x1p-40}), DType::Float16).item<float16>().bits, 0x3c01);
  EXPECT_EQ(arrayc::cast(arrayc::array(std::vector<double>{1.0 + 0x1p-8 + 0x1p-40}), DType::BFloat16).item<bfloat16>().bits, 0x3f81);
}

// Each op rounds its result to 16 bits (numpy's rule), so a fused chain gives what op-by-op
// evaluation gives.
TEST_P(DTypes, HalfArithmeticRoundsEachOp) {
  for (DType h : {DType::Float16, DType::BFloat16}) {
    SCOPED_TRACE(dt(h));
    Array x = random_array(h, {3000}, 11, -8, 8), y = random_array(h, {3000}, 12, 0.5, 4);
    Array chain = (x * y + x) / y - arrayc::sqrt(y) * arrayc::exp(x * 0.25);
    EXPECT_MATCHES_REFERENCE(chain);
    FusionScope off(false);
    Array unfused = (x * y + x) / y - arrayc::sqrt(y) * arrayc::exp(x * 0.25);
    EXPECT_EQ(unfused.to_vector<double>(), chain.to_vector<double>());
  }
  // float16's largest finite value overflows to inf when doubled; 2^-24 halves to 0.
  Array m = arrayc::array(std::vector<float16>{65504.0f, 0x1p-24f, -0.0f});
  EXPECT_EQ((m * 2).to_vector<double>(), (std::vector<double>{HUGE_VAL, 0x1p-23, -0.0}));
  EXPECT_EQ((m * 0.5).to_vector<double>()[1], 0.0);
  EXPECT_TRUE(std::signbit((m * 0.5).to_vector<double>()[2]));
  EXPECT_EQ((m + m).dtype(), DType::Float16);
}

TEST_P(DTypes, HalfReductionsAndProducts) {
  for (DType h : {DType::Float16, DType::BFloat16}) {
    SCOPED_TRACE(dt(h));
    Array x = random_array(h, {37, 64}, 21, -2, 2);
    for (Array r : {arrayc::sum(x), arrayc::sum(x, {0}), arrayc::mean(x, {1}), arrayc::max(x, {0}),
                    arrayc::min(x), arrayc::prod(x * 0.0625 + 1.0, {1})}) {
      EXPECT_EQ(r.dtype(), h);
      EXPECT_MATCHES_REFERENCE(r);
    }
    // float16 sums accumulate in float32: 4096 ones sum to 4096 (a float16 accumulator stops at 2048).
    if (h == DType::Float16) EXPECT_EQ(arrayc::sum(arrayc::ones({4096}, h)).item<double>(), 4096.0);
    Array a = random_array(h, {33, 70}, 22, -1, 1), b = random_array(h, {70, 19}, 23, -1, 1);
    Array c = arrayc::matmul(a, b);
    EXPECT_EQ(c.dtype(), h);
    EXPECT_MATCHES_REFERENCE(c);
    EXPECT_MATCHES_REFERENCE(arrayc::dot(random_array(h, {70}, 24), random_array(h, {70}, 25)));
  }
  for (DType t : {DType::Int8, DType::UInt8, DType::UInt64}) {
    Array a = random_array(t, {9, 40}, 26, -20, 20), b = random_array(t, {40, 5}, 27, -20, 20);
    EXPECT_EQ(arrayc::matmul(a, b).dtype(), t);
    EXPECT_MATCHES_REFERENCE(arrayc::matmul(a, b));  // wraps at t's width, as numpy
  }
}

// Mixed dtypes promote as numpy's table says, and compute right at the promoted type.
TEST_P(DTypes, MixedArraysPromote) {
  Array i64 = arrayc::array(std::vector<int64_t>{-1, std::numeric_limits<int64_t>::max()});
  Array u64 = arrayc::array(std::vector<uint64_t>{std::numeric_limits<uint64_t>::max(), 1});
  Array s = i64 + u64;
  EXPECT_EQ(s.dtype(), DType::Float64);
  EXPECT_EQ(s.to_vector<double>(), (std::vector<double>{0x1p64 - 1, 0x1p63}));
  EXPECT_EQ((i64 < u64).to_vector<bool>(), (std::vector<bool>{true, false}));
  Array i8 = arrayc::array(std::vector<int8_t>{-128, 127}), u8 = arrayc::array(std::vector<uint8_t>{255, 255});
  EXPECT_EQ((i8 + u8).dtype(), DType::Int16);
  EXPECT_EQ((i8 + u8).to_vector<int64_t>(), (std::vector<int64_t>{127, 382}));
  Array f16 = arrayc::array(std::vector<float16>{1.5f, -2.0f});
  EXPECT_EQ((f16 + u8).dtype(), DType::Float16);
  EXPECT_EQ((f16 + arrayc::cast(u8, DType::Int16)).dtype(), DType::Float32);
  EXPECT_EQ((f16 + arrayc::cast(f16, DType::BFloat16)).dtype(), DType::Float32);
  EXPECT_EQ(arrayc::exp(i8).dtype(), DType::Float16);  // numpy: 8-bit integers -> float16
  EXPECT_EQ(arrayc::exp(arrayc::cast(i8, DType::UInt16)).dtype(), DType::Float32);
  EXPECT_EQ((i8 / i8).dtype(), DType::Float64);
  for (Array r : {s, i8 + u8, f16 + u8, f16 * arrayc::cast(f16, DType::BFloat16), arrayc::exp(i8), i8 / u8})
    EXPECT_MATCHES_REFERENCE(r);
  for (DType a : kAllDTypes)
    for (DType b : kAllDTypes)
      EXPECT_EQ((arrayc::zeros({1}, a) * arrayc::zeros({1}, b)).dtype(),
                a == DType::Bool && b == DType::Bool ? DType::Bool : arrayc::promote_types(a, b));
}

// NEP 50: a C++ integer scalar is weak, taking the array's dtype, and must fit it; a float scalar
// keeps a float array's dtype and makes an integer one float64.
TEST_P(DTypes, WeakScalars) {
  Array u8 = arrayc::array(std::vector<uint8_t>{250, 3});
  EXPECT_EQ((u8 + 5).dtype(), DType::UInt8);
  EXPECT_EQ((u8 + 10).to_vector<int64_t>(), (std::vector<int64_t>{4, 13}));
  EXPECT_ARRAYC_ERROR(u8 + 300, "add: the integer 300 is out of bounds for uint8");
  EXPECT_ARRAYC_ERROR(u8 - (-1), "subtract: the integer -1 is out of bounds for uint8");
  EXPECT_ARRAYC_ERROR(arrayc::array(std::vector<int8_t>{1}) * 128, "multiply: the integer 128 is out of bounds for int8");
  EXPECT_ARRAYC_ERROR(arrayc::array(std::vector<int16_t>{1}) + 40000, "out of bounds for int16");
  EXPECT_ARRAYC_ERROR(arrayc::array(std::vector<int64_t>{1}) + (uint64_t{1} << 63),
                      "add: the integer 9223372036854775808 is out of bounds for int64");
  EXPECT_EQ((arrayc::array(std::vector<int8_t>{1}) * -128).item<int64_t>(), -128);
  EXPECT_EQ((u8 + 1.5).dtype(), DType::Float64);
  EXPECT_EQ((arrayc::array(std::vector<bool>{true}) + 1).dtype(), DType::Int64);
  Array u64 = arrayc::array(std::vector<uint64_t>{1});
  EXPECT_EQ((u64 + (uint64_t{1} << 63)).item<uint64_t>(), (uint64_t{1} << 63) + 1);
  Array f16 = arrayc::array(std::vector<float16>{1.0f});
  EXPECT_EQ((f16 + 1.5).dtype(), DType::Float16);
  EXPECT_EQ((f16 * 100000).item<double>(), HUGE_VAL);  // the scalar rounds to float16: inf
  EXPECT_EQ((arrayc::array(std::vector<bfloat16>{1.0f}) + 1).dtype(), DType::BFloat16);
  EXPECT_ARRAYC_ERROR(arrayc::full({2}, 256, DType::UInt8), "full: the integer 256 is out of bounds for uint8");
  EXPECT_EQ(arrayc::full({2}, 255, DType::UInt8).to_vector<int64_t>(), (std::vector<int64_t>{255, 255}));
}

TEST_P(DTypes, ReadingValuesBack) {
  Array f = arrayc::array(std::vector<float16>{0.1f, -65504.0f, float16::from_bits(0x0001)});
  EXPECT_EQ(f.dtype(), DType::Float16);
  std::vector<float16> got = f.to_vector<float16>();
  EXPECT_EQ(got[0].bits, 0x2e66);
  EXPECT_EQ(got[2].bits, 0x0001);
  EXPECT_EQ(f.to_vector<float>()[1], -65504.0f);
  EXPECT_EQ(f.to_vector<int8_t>()[1], -128);  // saturates
  EXPECT_EQ(f.to_vector<uint16_t>()[1], 0);
  EXPECT_EQ(arrayc::cast(f, DType::BFloat16).to_vector<bfloat16>()[0].bits, 0x3dcd);
  Array i = arrayc::array(std::vector<int16_t>{-1, 300});
  EXPECT_EQ(i.to_vector<uint8_t>(), (std::vector<uint8_t>{255, 44}));  // wraps, as astype
  EXPECT_EQ(i.to_vector<float16>()[1], 300.0f);
  EXPECT_EQ(arrayc::array(std::vector<uint32_t>{4294967295u}).item<int64_t>(), 4294967295);
}

TEST_P(DTypes, Printing) {
  EXPECT_EQ(arrayc::to_string(arrayc::array(std::vector<float16>{0.1f, 1.5f, HUGE_VALF})), "[0.1 1.5 inf]");
  EXPECT_EQ(arrayc::to_string(arrayc::full({}, 0.1, DType::Float16)), "0.1");
  EXPECT_EQ(arrayc::to_string(arrayc::full({}, 0.1, DType::BFloat16)), "0.1");
  EXPECT_EQ(arrayc::to_string(arrayc::full({}, 1.0 / 3, DType::Float16)), "0.3333");
  EXPECT_EQ(arrayc::to_string(arrayc::array(std::vector<uint64_t>{std::numeric_limits<uint64_t>::max(), 0})),
            "[18446744073709551615                    0]");
  EXPECT_EQ(arrayc::to_string(arrayc::full({}, 18446744073709551615.0, DType::UInt64)), "18446744073709551615");
  EXPECT_EQ(arrayc::to_string(arrayc::array(std::vector<int8_t>{-128, 7})), "[-128    7]");
}

TEST_P(DTypes, JitSignatures) {
  auto f = arrayc::jit([](const Array& x, const Array& y) { return x * y + x; });
  Array a = random_array(DType::Float16, {100}, 31), b = random_array(DType::Float16, {100}, 32);
  Array r = f(a, b);
  EXPECT_EQ(r.dtype(), DType::Float16);
  EXPECT_EQ(r.to_vector<double>(), (a * b + a).to_vector<double>());
  Array u = random_array(DType::UInt8, {100}, 33, 0, 255);
  Array s = f(u, u);  // a new signature: traced again, wraps at 8 bits
  EXPECT_EQ(s.dtype(), DType::UInt8);
  EXPECT_EQ(s.to_vector<int64_t>(), (u * u + u).to_vector<int64_t>());
}

TEST_P(DTypes, Errors) {
  EXPECT_ARRAYC_ERROR(arrayc::uniform({2}, 0, 0, 1, DType::UInt8),
                      "uniform: dtype uint8 is not accepted (float16, bfloat16, float32 or float64)");
  EXPECT_ARRAYC_ERROR(arrayc::zeros({2}, static_cast<DType>(99)),
                      "full: dtype 99 is not one of bool, int8, uint8, int16, uint16, int32, uint32, int64, uint64, "
                      "float16, bfloat16, float32, float64");
  EXPECT_ARRAYC_ERROR(arrayc::pow(arrayc::array(std::vector<int8_t>{2}), -1), "Integers to negative integer powers");
  EXPECT_MATCHES_REFERENCE(arrayc::uniform({1000}, 3, -1, 1, DType::Float16));
  EXPECT_EQ(arrayc::normal({10}, 3, 0, 1, DType::BFloat16).dtype(), DType::BFloat16);
}

}  // namespace
}  // namespace arrayc_test
