#include "arrayc/dtype.h"

#include <sstream>

#include "arrayc/error.h"

namespace arrayc {

const char* dtype_name(DType t) {
  switch (t) {
    case DType::Bool: return "bool";
    case DType::Int32: return "int32";
    case DType::Int64: return "int64";
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
  }
  return "?";
}

size_t dtype_size(DType t) {
  switch (t) {
    case DType::Bool: return 1;
    case DType::Int32: case DType::Float32: return 4;
    case DType::Int64: case DType::Float64: return 8;
  }
  return 0;
}

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (is_float(a) && is_float(b)) return DType::Float64;
  if (is_float(a) || is_float(b)) {
    DType f = is_float(a) ? a : b, other = is_float(a) ? b : a;
    // float32 holds bool exactly but not the 32- and 64-bit integers: numpy goes to float64.
    return (f == DType::Float32 && other == DType::Bool) ? DType::Float32 : DType::Float64;
  }
  // bool, int32, int64: the wider wins.
  return static_cast<int>(a) > static_cast<int>(b) ? a : b;
}

std::string shape_str(const Shape& s) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
  os << "]";
  return os.str();
}

int64_t shape_numel(const Shape& s) {
  int64_t n = 1;
  bool overflow = false;
  for (int64_t d : s) {
    if (d == 0) return 0;
    overflow |= __builtin_mul_overflow(n, d, &n);
  }
  if (overflow) throw Error("shape " + shape_str(s) + " has more than 2^63 - 1 elements");
  return n;
}

}  // namespace arrayc
