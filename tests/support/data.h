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

// Every pair (a, b) of values of e, as two arrays' values xs and ys.
void all_pairs(const std::vector<double>& e, std::vector<double>& xs, std::vector<double>& ys);

// "float32" etc., for SCOPED_TRACE.
std::string dt(arrayc::DType t);

using arrayc::DType;
inline constexpr DType kIntTypes[] = {DType::Int8,  DType::UInt8,  DType::Int16, DType::UInt16,
                                      DType::Int32, DType::UInt32, DType::Int64, DType::UInt64};
inline constexpr DType kFloatTypes[] = {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
inline constexpr DType kNumericTypes[] = {DType::Int8,    DType::UInt8,    DType::Int16,   DType::UInt16,
                                          DType::Int32,   DType::UInt32,   DType::Int64,   DType::UInt64,
                                          DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};

}  // namespace arrayc_test
