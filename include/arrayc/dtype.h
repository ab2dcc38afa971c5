// Element types and numpy's promotion rules between them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace arrayc {

enum class DType : uint8_t { Bool, Int32, Int64, Float32, Float64 };

inline constexpr DType kAllDTypes[] = {DType::Bool, DType::Int32, DType::Int64, DType::Float32,
                                       DType::Float64};

const char* dtype_name(DType t);  // "bool", "int32", "int64", "float32", "float64"
size_t dtype_size(DType t);
inline bool is_float(DType t) { return t == DType::Float32 || t == DType::Float64; }
inline bool is_int(DType t) { return t == DType::Int32 || t == DType::Int64; }

// numpy's result_type for two arrays: bool < int32 < int64, float32 < float64, and an integer
// of 32 bits or more with float32 gives float64 (as numpy does).
DType promote_types(DType a, DType b);

// The dtype of a C++ type (bool, int32_t, int64_t, float, double).
template <typename T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<bool>() { return DType::Bool; }
template <> constexpr DType dtype_of<int32_t>() { return DType::Int32; }
template <> constexpr DType dtype_of<int64_t>() { return DType::Int64; }
template <> constexpr DType dtype_of<float>() { return DType::Float32; }
template <> constexpr DType dtype_of<double>() { return DType::Float64; }

using Shape = std::vector<int64_t>;
std::string shape_str(const Shape& s);  // "[2, 3]"
// The element count; arrayc::Error when it does not fit in int64.
int64_t shape_numel(const Shape& s);

}  // namespace arrayc
