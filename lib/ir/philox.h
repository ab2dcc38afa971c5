// Philox-4x32-10 (Salmon, Moraes, Dror, Shaw: "Parallel random numbers: as easy as 1, 2, 3",
// SC 2011) and the exact mapping from its output to the values of the RandUniform and RandNormal
// leaves. The reference interpreter calls these functions; the JIT emitters generate the same
// arithmetic, so a seed gives the same numbers on every device (up to the math library's ULPs
// for the normal's log/cos/sqrt).
//
// Definition, for element i (the row-major linear index in the random node's own shape) of a
// node with seed s (a uint64):
//
//   counter = {lo32(i), hi32(i), 0, 0}          key = {lo32(s), hi32(s)}
//   {r0, r1, r2, r3} = philox4x32_10(counter, key)
//
//   uniform float32 = (r0 >> 8) * 2^-24                                     in [0, 1)
//   uniform float64 = ((uint64(r0) << 32 | r1) >> 11) * 2^-53                in [0, 1)
//
//   normal float32 (Box-Muller, every step in float):
//     u1 = float((r0 >> 8) + 1) * 2^-24                                     in (0, 1]
//     u2 = float(r1 >> 8) * 2^-24                                           in [0, 1)
//     z  = sqrtf(-2.0f * logf(u1)) * cosf(6.2831853f * u2)
//   normal float64 (every step in double):
//     u1 = double(((uint64(r0) << 32 | r1) >> 11) + 1) * 2^-53             in (0, 1]
//     u2 = double((uint64(r2) << 32 | r3) >> 11) * 2^-53                    in [0, 1)
//     z  = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2)
//
// All conversions above are exact (24 and 53 significant bits), so only log, cos and sqrt can
// differ between implementations.
//
// One Philox round on (x0, x1, x2, x3) with key (k0, k1):
//   (hi0, lo0) = M0 * x0 as a 64-bit product,  (hi1, lo1) = M1 * x2
//   result     = (hi1 ^ x1 ^ k0, lo1, hi0 ^ x3 ^ k1, lo0)
// Ten rounds; between consecutive rounds the key is bumped: k0 += W0, k1 += W1 (mod 2^32).
#pragma once
#include <array>
#include <cmath>
#include <cstdint>
#include <type_traits>

namespace arrayc::detail {

inline constexpr uint32_t kPhiloxM0 = 0xD2511F53u;
inline constexpr uint32_t kPhiloxM1 = 0xCD9E8D57u;
inline constexpr uint32_t kPhiloxW0 = 0x9E3779B9u;  // golden ratio
inline constexpr uint32_t kPhiloxW1 = 0xBB67AE85u;  // sqrt(3) - 1

using PhiloxCounter = std::array<uint32_t, 4>;
using PhiloxKey = std::array<uint32_t, 2>;

constexpr PhiloxCounter philox4x32_round(const PhiloxCounter& x, const PhiloxKey& k) {
  uint64_t p0 = static_cast<uint64_t>(kPhiloxM0) * x[0];
  uint64_t p1 = static_cast<uint64_t>(kPhiloxM1) * x[2];
  uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
  uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
  return {hi1 ^ x[1] ^ k[0], lo1, hi0 ^ x[3] ^ k[1], lo0};
}

constexpr PhiloxCounter philox4x32_10(PhiloxCounter ctr, PhiloxKey key) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key[0] += kPhiloxW0;
      key[1] += kPhiloxW1;
    }
    ctr = philox4x32_round(ctr, key);
  }
  return ctr;
}

// The Philox output for element `index` of a random node with `seed` (see the header comment).
constexpr PhiloxCounter philox_bits(uint64_t seed, uint64_t index) {
  return philox4x32_10({static_cast<uint32_t>(index), static_cast<uint32_t>(index >> 32), 0, 0},
                       {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)});
}

inline constexpr float kTwoPow24Inv = 1.0f / 16777216.0f;          // 2^-24
inline constexpr double kTwoPow53Inv = 1.0 / 9007199254740992.0;   // 2^-53

template <typename T> constexpr T uniform_value(uint64_t seed, uint64_t index) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
  PhiloxCounter r = philox_bits(seed, index);
  if constexpr (std::is_same_v<T, float>) {
    return static_cast<float>(r[0] >> 8) * kTwoPow24Inv;
  } else {
    uint64_t bits = (static_cast<uint64_t>(r[0]) << 32 | r[1]) >> 11;
    return static_cast<double>(bits) * kTwoPow53Inv;
  }
}

template <typename T> inline T normal_value(uint64_t seed, uint64_t index) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
  PhiloxCounter r = philox_bits(seed, index);
  if constexpr (std::is_same_v<T, float>) {
    float u1 = static_cast<float>((r[0] >> 8) + 1) * kTwoPow24Inv;
    float u2 = static_cast<float>(r[1] >> 8) * kTwoPow24Inv;
    return ::sqrtf(-2.0f * ::logf(u1)) * ::cosf(6.2831853f * u2);
  } else {
    uint64_t b1 = (static_cast<uint64_t>(r[0]) << 32 | r[1]) >> 11;
    uint64_t b2 = (static_cast<uint64_t>(r[2]) << 32 | r[3]) >> 11;
    double u1 = static_cast<double>(b1 + 1) * kTwoPow53Inv;
    double u2 = static_cast<double>(b2) * kTwoPow53Inv;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
}

}  // namespace arrayc::detail
