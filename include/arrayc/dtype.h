// Element types and numpy's promotion rules between them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "arrayc/half.h"

namespace arrayc {

// The enum's values are part of nothing but this build (names are what is printed and parsed);
// new dtypes were appended so that older ones kept their values.
enum class DType : uint8_t {
  Bool, Int32, Int64, Float32, Float64,
  Int8, UInt8, Int16, UInt16, UInt32, UInt64, Float16, BFloat16,
};

inline constexpr DType kAllDTypes[] = {
    DType::Bool,   DType::Int8,   DType::UInt8,   DType::Int16,   DType::UInt16,
    DType::Int32,  DType::UInt32, DType::Int64,   DType::UInt64,  DType::Float16,
    DType::BFloat16, DType::Float32, DType::Float64};

// "bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16",
// "bfloat16", "float32", "float64".
const char* dtype_name(DType t);
size_t dtype_size(DType t);
inline bool is_float(DType t) {
  return t == DType::Float16 || t == DType::BFloat16 || t == DType::Float32 || t == DType::Float64;
}
// float16 and bfloat16: stored at 16 bits, computed in float32 on the host (each op's result
// rounded to 16 bits, as numpy does), natively on GPUs that have the instructions.
inline bool is_half(DType t) { return t == DType::Float16 || t == DType::BFloat16; }
inline bool is_unsigned(DType t) {
  return t == DType::UInt8 || t == DType::UInt16 || t == DType::UInt32 || t == DType::UInt64;
}
inline bool is_int(DType t) { return t != DType::Bool && !is_float(t); }  // signed or unsigned
inline bool is_signed_int(DType t) { return is_int(t) && !is_unsigned(t); }
// Bits of an integer dtype (1 for bool); the range of values it holds.
int dtype_bits(DType t);
int64_t int_min(DType t);
uint64_t int_max(DType t);

// numpy's result_type for two arrays (numpy 2, NEP 50; one table, lib/ir/dtype.cpp): the
// smallest type that holds both exactly, e.g. int8 + uint8 -> int16, int64 + uint64 -> float64,
// int16 + float16 -> float32, uint8 + float16 -> float16. bfloat16 (not in numpy) ranks with
// float16: bool and 8-bit integers give bfloat16, bfloat16 + float16 gives float32.
DType promote_types(DType a, DType b);

// The dtype of a name: the long names above and the short ones (f16, bf16, f32, f64, i8, u8,
// i16, u16, i32, u32, i64, u64); false when `name` is none of them.
bool dtype_from_name(const std::string& name, DType& out);

// The dtype of a C++ type.
template <typename T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<bool>() { return DType::Bool; }
template <> constexpr DType dtype_of<int8_t>() { return DType::Int8; }
template <> constexpr DType dtype_of<uint8_t>() { return DType::UInt8; }
template <> constexpr DType dtype_of<int16_t>() { return DType::Int16; }
template <> constexpr DType dtype_of<uint16_t>() { return DType::UInt16; }
template <> constexpr DType dtype_of<int32_t>() { return DType::Int32; }
template <> constexpr DType dtype_of<uint32_t>() { return DType::UInt32; }
template <> constexpr DType dtype_of<int64_t>() { return DType::Int64; }
template <> constexpr DType dtype_of<uint64_t>() { return DType::UInt64; }
template <> constexpr DType dtype_of<float16>() { return DType::Float16; }
template <> constexpr DType dtype_of<bfloat16>() { return DType::BFloat16; }
template <> constexpr DType dtype_of<float>() { return DType::Float32; }
template <> constexpr DType dtype_of<double>() { return DType::Float64; }

using Shape = std::vector<int64_t>;
std::string shape_str(const Shape& s);  // "[2, 3]"
// The element count; arrayc::Error when it does not fit in int64.
int64_t shape_numel(const Shape& s);

}  // namespace arrayc
