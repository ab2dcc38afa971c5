// 16-bit floats as stored values: float16 (IEEE binary16) and bfloat16 (the top half of a
// float32). Made from a float or double with round-to-nearest-even (overflow gives inf, NaN
// stays NaN, subnormals are kept), read back as float exactly. Arrays of them compute in
// float32 on the host; see dtype.h.
#pragma once
#include <cstdint>
#include <type_traits>

namespace arrayc {

// Correctly rounded (nearest, ties to even) bits of x in each format.
uint16_t float16_bits(double x);
uint16_t bfloat16_bits(double x);
float float16_value(uint16_t bits);
float bfloat16_value(uint16_t bits);

// A stored 16-bit float: its bits, made from any arithmetic value with one rounding (through
// double, exact for float and for integers below 2^53), read back as float exactly.
template <uint16_t (*ToBits)(double), float (*ToFloat)(uint16_t)>
struct Float16Storage {
  uint16_t bits = 0;
  Float16Storage() = default;
  template <typename T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  Float16Storage(T x) : bits(ToBits(static_cast<double>(x))) {}  // NOLINT: converts like a float
  static Float16Storage from_bits(uint16_t b) {
    Float16Storage h;
    h.bits = b;
    return h;
  }
  operator float() const { return ToFloat(bits); }  // NOLINT
};
using float16 = Float16Storage<float16_bits, float16_value>;
using bfloat16 = Float16Storage<bfloat16_bits, bfloat16_value>;

}  // namespace arrayc
