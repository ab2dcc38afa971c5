// The ULP measure of the math-function tests and of benchmarks/ulp_report.cpp (which includes
// this header by relative path; it is built by hand, outside CMake).
#pragma once
#include <algorithm>
#include <cmath>
#include <limits>

namespace arrayc_test {

// |got - ref| in units of the last place of T at ref (subnormal spacing below the normal range);
// inf counts as 2^max_exponent so that results rounding to overflow compare equal.
// The format is given by its digits (with the implicit bit) and exponent range, as in
// std::numeric_limits: float16 is (11, -13, 16), bfloat16 (8, -125, 128).
inline double ulp_error_of_format(long double got, long double ref, int digits, int min_exponent, int max_exponent) {
  if (std::isnan(ref) || std::isnan(got))
    return std::isnan(ref) && std::isnan(got) ? 0 : std::numeric_limits<double>::infinity();
  long double top = std::ldexp(1.0L, max_exponent);
  long double r = std::fabs(ref) >= top ? std::copysign(top, ref) : ref;
  long double g = std::isinf(got) ? std::copysign(top, got) : got;
  int e = min_exponent;
  if (r != 0) std::frexp(r, &e);
  int ulp_exp = std::max(e, min_exponent) - digits;
  return static_cast<double>(std::fabs(g - r) / std::ldexp(1.0L, ulp_exp));
}

template <class T>
double ulp_error(T got, long double ref) {
  using lim = std::numeric_limits<T>;
  return ulp_error_of_format(got, ref, lim::digits, lim::min_exponent, lim::max_exponent);
}

}  // namespace arrayc_test
