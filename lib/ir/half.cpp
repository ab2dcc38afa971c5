// float16 and bfloat16 conversions (include/arrayc/half.h): the host's definition of rounding to
// 16 bits, which the interpreter, scalars and host data use and the generated code matches.
#include "arrayc/half.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace arrayc {
namespace {

// x rounded to nearest-even with p significant bits, normal exponents from emin to emax
// (subnormals below emin keep the quantum 2^(emin - p + 1)); inf past the largest finite value.
double round_to_format(double x, int p, int emin, int emax) {
  if (!std::isfinite(x) || x == 0) return x;
  int e2;
  std::frexp(x, &e2);
  int e = std::max(e2 - 1, emin);
  double q = std::ldexp(1.0, e - (p - 1));
  double r = std::nearbyint(x / q) * q;  // x / q is exact: a power of two, no underflow here
  if (std::fabs(r) >= std::ldexp(1.0, emax + 1)) return std::copysign(HUGE_VAL, x);
  return r;
}

}  // namespace

uint16_t float16_bits(double x) {
  uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  if (std::isnan(x)) return sign | 0x7e00;
  double r = std::fabs(round_to_format(x, 11, -14, 15));
  if (std::isinf(r)) return sign | 0x7c00;
  if (r < 0x1p-14) return sign | static_cast<uint16_t>(r * 0x1p24);  // subnormal or zero
  int e2;
  double m = std::frexp(r, &e2);  // r = m * 2^e2, m in [0.5, 1)
  return sign | static_cast<uint16_t>((e2 - 1 + 15) << 10) | static_cast<uint16_t>(m * 2048 - 1024);
}

float float16_value(uint16_t h) {
  float sign = (h & 0x8000) ? -1.0f : 1.0f;
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  if (e == 0x1f) return m ? std::numeric_limits<float>::quiet_NaN() * sign : sign * HUGE_VALF;
  if (e == 0) return sign * std::ldexp(static_cast<float>(m), -24);
  return sign * std::ldexp(static_cast<float>(m + 1024), e - 25);
}

uint16_t bfloat16_bits(double x) {
  if (std::isnan(x)) return std::signbit(x) ? 0xffc0 : 0x7fc0;
  float f = static_cast<float>(round_to_format(x, 8, -126, 127));  // exact in float
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return static_cast<uint16_t>(u >> 16);
}

float bfloat16_value(uint16_t h) {
  uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

}  // namespace arrayc
