// Test data: deterministic random values, edge values, and Arrays of any dtype made from them.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "arrayc/arrayc.h"

namespace arrayc_test {

// n values uniform in [lo, hi), the same for a given seed on every machine (splitmix64).
std::vector<double> random_values(int64_t n, uint64_t seed, double lo = -4.0, double hi = 4.0);

// An array of `dtype` from double values (converted as a C++ cast: floats round, integers
// truncate, bool is v != 0), on the default device.
arrayc::Array make_array(arrayc::DType dtype, const arrayc::Shape& shape, const std::vector<double>& values);

// Random values fitting the dtype: floats uniform in [lo, hi), integers uniform in [lo, hi]
// rounded, bools half true.
arrayc::Array random_array(arrayc::DType dtype, const arrayc::Shape& shape, uint64_t seed,
                           double lo = -4.0, double hi = 4.0);

// Values every float op should get right: signed zeros, infinities, NaN, denormals, the extremes,
// and ordinary numbers of both signs.
std::vector<double> float_edge_values(arrayc::DType dtype);
// Integers around 0 and at the edges of the dtype's range.
std::vector<double> int_edge_values(arrayc::DType dtype);

// "float32" etc., for SCOPED_TRACE.
std::string dt(arrayc::DType t);

inline constexpr arrayc::DType kIntTypes[] = {arrayc::DType::Int32, arrayc::DType::Int64};
inline constexpr arrayc::DType kFloatTypes[] = {arrayc::DType::Float32, arrayc::DType::Float64};
inline constexpr arrayc::DType kNumericTypes[] = {arrayc::DType::Int32, arrayc::DType::Int64,
                                                  arrayc::DType::Float32, arrayc::DType::Float64};

}  // namespace arrayc_test
