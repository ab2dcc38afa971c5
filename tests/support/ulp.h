// The ULP measure of the math-function tests and of benchmarks/ulp_report.cpp (which includes
// this header by relative path; it is built by hand, outside CMake).
#pragma once
#include <algorithm>
#include <cmath>
#include <limits>

namespace arrayc_test {

// |got - ref| in units of the last place of T at ref (subnormal spacing below the normal range);
// inf counts as 2^max_exponent so that results rounding to overflow compare equal.
template <class T>
double ulp_error(T got, long double ref) {
  if (std::isnan(ref) || std::isnan(got))
    return std::isnan(ref) && std::isnan(got) ? 0 : std::numeric_limits<double>::infinity();
  using lim = std::numeric_limits<T>;
  long double top = std::ldexp(1.0L, lim::max_exponent);
  long double r = std::fabs(ref) >= top ? std::copysign(top, ref) : ref;
  long double g = std::isinf(got) ? std::copysign(top, static_cast<long double>(got)) : got;
  int e = lim::min_exponent;
  if (r != 0) std::frexp(r, &e);
  int ulp_exp = std::max(e, lim::min_exponent) - lim::digits;
  return static_cast<double>(std::fabs(g - r) / std::ldexp(1.0L, ulp_exp));
}

}  // namespace arrayc_test
