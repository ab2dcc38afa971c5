#include "support/data.h"

#include "ir/node.h"

#include <cmath>
#include <limits>

namespace arrayc_test {

using arrayc::DType;

namespace {
uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Values outside an integer type saturate as the cast op does (a plain conversion of them is
// undefined: UBSan's float-cast-overflow found int32 values from random_values(-3e9, 3e9)).
template <typename T> std::vector<T> convert(const std::vector<double>& v) {
  std::vector<T> out;
  out.reserve(v.size());
  for (double x : v) {
    if constexpr (std::is_integral_v<T>) out.push_back(static_cast<T>(arrayc::detail::float_to_int(arrayc::dtype_of<T>(), x)));
    else out.push_back(T(x));  // 16-bit floats: one rounding from the double
  }
  return out;
}
}  // namespace

std::vector<double> random_values(int64_t n, uint64_t seed, double lo, double hi) {
  std::vector<double> v(static_cast<size_t>(n));
  uint64_t state = seed * 0x2545F4914F6CDD1DULL + 1;
  for (double& x : v) x = lo + (hi - lo) * static_cast<double>(splitmix64(state) >> 11) * 0x1.0p-53;
  return v;
}

arrayc::Array make_array(DType dtype, const arrayc::Shape& shape, const std::vector<double>& values) {
  switch (dtype) {
    case DType::Bool: {
      std::vector<bool> b;
      for (double x : values) b.push_back(x != 0);
      return arrayc::array(b, shape);
    }
    case DType::Int8: return arrayc::array(convert<int8_t>(values), shape);
    case DType::UInt8: return arrayc::array(convert<uint8_t>(values), shape);
    case DType::Int16: return arrayc::array(convert<int16_t>(values), shape);
    case DType::UInt16: return arrayc::array(convert<uint16_t>(values), shape);
    case DType::Int32: return arrayc::array(convert<int32_t>(values), shape);
    case DType::UInt32: return arrayc::array(convert<uint32_t>(values), shape);
    case DType::Int64: return arrayc::array(convert<int64_t>(values), shape);
    case DType::UInt64: return arrayc::array(convert<uint64_t>(values), shape);
    case DType::Float16: return arrayc::array(convert<arrayc::float16>(values), shape);
    case DType::BFloat16: return arrayc::array(convert<arrayc::bfloat16>(values), shape);
    case DType::Float32: return arrayc::array(convert<float>(values), shape);
    case DType::Float64: return arrayc::array(values, shape);
  }
  return {};
}

arrayc::Array random_array(DType dtype, const arrayc::Shape& shape, uint64_t seed, double lo, double hi) {
  int64_t n = arrayc::shape_numel(shape);
  std::vector<double> v;
  if (dtype == DType::Bool) {
    v = random_values(n, seed, 0, 2);
    for (double& x : v) x = std::floor(x);
  } else if (arrayc::is_int(dtype)) {
    v = random_values(n, seed, lo, hi + 1);
    for (double& x : v) x = std::floor(x);
  } else {
    v = random_values(n, seed, lo, hi);
  }
  return make_array(dtype, shape, v);
}

std::vector<double> float_edge_values(DType dtype) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> v = {0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 1e-7, -1e-7, 100.0, -100.0,
                           1e30, -1e30, inf, -inf, nan, 3.14159265358979, -2.718281828459045,
                           88.0, -88.0, 89.0, -104.0, 1e-3, 65504.0};
  if (dtype == DType::Float16) {  // smallest subnormal and normal, largest, past the largest
    for (double x : {0x1p-24, -0x1p-24, 0x1p-14, 6.1e-5, 65504.0, -65504.0, 65519.0, 65520.0, 3e-8, 1e-8, 0.1, 2049.0})
      v.push_back(x);
  } else if (dtype == DType::BFloat16) {
    for (double x : {0x1p-133, -0x1p-133, 0x1p-126, 3.3895313892515355e38, -3.3895313892515355e38, 3.39e38, 0.1, 257.0, 1e-40})
      v.push_back(x);
  } else if (dtype == DType::Float32) {
    using L = std::numeric_limits<float>;
    for (double x : {double(L::denorm_min()), double(L::min()), double(L::max()), double(L::lowest()),
                     3.4e38, -3.4e38, 1e-40, -1e-40, double(L::epsilon())})
      v.push_back(x);
  } else {
    using L = std::numeric_limits<double>;
    for (double x : {L::denorm_min(), L::min(), L::max(), L::lowest(), 1e-310, -1e-310, 709.0,
                     710.0, -745.0, 1e300, -1e300, L::epsilon(), 3.4e38})
      v.push_back(x);
  }
  return v;
}

std::vector<double> int_edge_values(DType dtype) {
  std::vector<double> v = {0, 1, -1, 2, -2, 7, -7, 100, -100, 12345, -12345};
  if (arrayc::dtype_size(dtype) < 4) {  // the range's ends and their neighbours; 100 and 12345 wrap
    double lo = static_cast<double>(arrayc::int_min(dtype)), hi = static_cast<double>(arrayc::int_max(dtype));
    for (double x : {lo, lo + 1, hi, hi - 1, hi / 2, lo / 2}) v.push_back(x);
  } else if (dtype == DType::UInt32) {
    for (double x : {4294967295.0, 4294967294.0, 2147483648.0, 65536.0}) v.push_back(x);
  } else if (dtype == DType::UInt64) {
    for (double x : {4294967296.0, 3037000500.0, 9007199254740992.0, 9223372036854775808.0, 1.8446744073709550e19})
      v.push_back(x);
  } else if (dtype == DType::Int32) {
    for (double x : {2147483647.0, -2147483648.0, 2147483646.0, -2147483647.0, 65536.0, 46341.0})
      v.push_back(x);
  } else if (dtype == DType::Int64) {
    // Values exact in double; the extremes of int64 are built in the tests that need them.
    for (double x : {4294967296.0, -4294967296.0, 3037000500.0, 9007199254740992.0, -9007199254740992.0})
      v.push_back(x);
  }
  return v;
}

void all_pairs(const std::vector<double>& e, std::vector<double>& xs, std::vector<double>& ys) {
  for (double a : e)
    for (double b : e) {
      xs.push_back(a);
      ys.push_back(b);
    }
}

std::string dt(DType t) { return arrayc::dtype_name(t); }

}  // namespace arrayc_test
