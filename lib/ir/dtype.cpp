#include "arrayc/dtype.h"

#include <sstream>

#include "arrayc/error.h"

namespace arrayc {

const char* dtype_name(DType t) {
  switch (t) {
    case DType::Bool: return "bool";
    case DType::Int8: return "int8";
    case DType::UInt8: return "uint8";
    case DType::Int16: return "int16";
    case DType::UInt16: return "uint16";
    case DType::Int32: return "int32";
    case DType::UInt32: return "uint32";
    case DType::Int64: return "int64";
    case DType::UInt64: return "uint64";
    case DType::Float16: return "float16";
    case DType::BFloat16: return "bfloat16";
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
  }
  return "?";
}

size_t dtype_size(DType t) {
  switch (t) {
    case DType::Bool: case DType::Int8: case DType::UInt8: return 1;
    case DType::Int16: case DType::UInt16: case DType::Float16: case DType::BFloat16: return 2;
    case DType::Int32: case DType::UInt32: case DType::Float32: return 4;
    case DType::Int64: case DType::UInt64: case DType::Float64: return 8;
  }
  return 0;
}

int dtype_bits(DType t) { return t == DType::Bool ? 1 : static_cast<int>(8 * dtype_size(t)); }

int64_t int_min(DType t) {
  if (t == DType::Bool || is_unsigned(t)) return 0;
  return dtype_bits(t) == 64 ? INT64_MIN : -(int64_t{1} << (dtype_bits(t) - 1));
}

uint64_t int_max(DType t) {
  int bits = dtype_bits(t) - (is_signed_int(t) ? 1 : 0);
  return bits == 64 ? UINT64_MAX : (uint64_t{1} << bits) - 1;
}

namespace {

// Rows and columns in the order of kAllDTypes. The numpy columns are numpy's np.promote_types
// (tests/data/promotion.txt, generated with numpy, is compared with this table by a test).
constexpr int kN = 13;
constexpr DType b = DType::Bool, i8 = DType::Int8, u8 = DType::UInt8, i16 = DType::Int16,
                u16 = DType::UInt16, i32 = DType::Int32, u32 = DType::UInt32, i64 = DType::Int64,
                u64 = DType::UInt64, f16 = DType::Float16, bf16 = DType::BFloat16,
                f32 = DType::Float32, f64 = DType::Float64;
constexpr DType kPromotion[kN][kN] = {
    //         b    i8   u8   i16  u16  i32  u32  i64  u64  f16  bf16  f32  f64
    /* b   */ {b,   i8,  u8,  i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64},
    /* i8  */ {i8,  i8,  i16, i16, i32, i32, i64, i64, f64, f16, bf16, f32, f64},
    /* u8  */ {u8,  i16, u8,  i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64},
    /* i16 */ {i16, i16, i16, i16, i32, i32, i64, i64, f64, f32, f32,  f32, f64},
    /* u16 */ {u16, i32, u16, i32, u16, i32, u32, i64, u64, f32, f32,  f32, f64},
    /* i32 */ {i32, i32, i32, i32, i32, i32, i64, i64, f64, f64, f64,  f64, f64},
    /* u32 */ {u32, i64, u32, i64, u32, i64, u32, i64, u64, f64, f64,  f64, f64},
    /* i64 */ {i64, i64, i64, i64, i64, i64, i64, i64, f64, f64, f64,  f64, f64},
    /* u64 */ {u64, f64, u64, f64, u64, f64, u64, f64, u64, f64, f64,  f64, f64},
    /* f16 */ {f16, f16, f16, f32, f32, f64, f64, f64, f64, f16, f32,  f32, f64},
    /* bf16*/ {bf16, bf16, bf16, f32, f32, f64, f64, f64, f64, f32, bf16, f32, f64},
    /* f32 */ {f32, f32, f32, f32, f32, f64, f64, f64, f64, f32, f32,  f32, f64},
    /* f64 */ {f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64,  f64, f64},
};

int table_index(DType t) {
  for (int k = 0; k < kN; ++k)
    if (kAllDTypes[k] == t) return k;
  throw Error("promote_types: dtype " + std::to_string(static_cast<int>(t)) + " is not a dtype");
}

}  // namespace

DType promote_types(DType a, DType b) { return kPromotion[table_index(a)][table_index(b)]; }

bool dtype_from_name(const std::string& n, DType& out) {
  static const struct { const char* name; const char* alias; DType t; } names[] = {
      {"bool", "bool", DType::Bool},         {"int8", "i8", DType::Int8},
      {"uint8", "u8", DType::UInt8},         {"int16", "i16", DType::Int16},
      {"uint16", "u16", DType::UInt16},      {"int32", "i32", DType::Int32},
      {"uint32", "u32", DType::UInt32},      {"int64", "i64", DType::Int64},
      {"uint64", "u64", DType::UInt64},      {"float16", "f16", DType::Float16},
      {"bfloat16", "bf16", DType::BFloat16}, {"float32", "f32", DType::Float32},
      {"float64", "f64", DType::Float64},
  };
  for (const auto& e : names)
    if (n == e.name || n == e.alias) {
      out = e.t;
      return true;
    }
  return false;
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
