// Exact integers in the tool (issue 26). A Python-like integer is held exactly (Value::integer, 127
// bits; Python's have no bound) from the literal on: arithmetic between them, and where one
// meets an array or becomes one, never goes through a double. Where numpy 2 raises (a value out
// of an integer dtype's range, a Python int past uint64 becoming an array) the tool raises too,
// naming the op and the dtype.
#include <algorithm>
#include <cmath>

#include "internal.h"

namespace arrayc::tool {

namespace {

constexpr Int kInt64Min = INT64_MIN, kInt64Max = INT64_MAX, kUInt64Max = UINT64_MAX;

[[noreturn]] void out_of_bounds(const char* op, Int v, const char* dtype) {
  throw Error(std::string(op) + ": the integer " + int_str(v) + " is out of bounds for " + dtype +
              " (numpy 2 raises too; use a wider dtype)");
}

}  // namespace

std::string int_str(Int v) {
  bool neg = v < 0;
  unsigned __int128 u = neg ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
  std::string s;
  do {
    s.push_back(static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  } while (u != 0);
  if (neg) s.push_back('-');
  std::reverse(s.begin(), s.end());
  return s;
}

Value weak_int(Int x) {
  Value v;
  v.kind = Value::Kind::Weak;
  v.integral = true;
  v.integer = x;
  v.number = static_cast<double>(x);  // correctly rounded
  return v;
}

Value weak_float(double x) {
  Value v;
  v.kind = Value::Kind::Weak;
  v.number = x;
  return v;
}

std::optional<int64_t> int64_of(const Value& v) {
  if (v.kind != Value::Kind::Weak || !v.integral || v.integer < kInt64Min || v.integer > kInt64Max) return std::nullopt;
  return static_cast<int64_t>(v.integer);
}

Array strong(const Value& v, const char* op) {
  if (!v.integral) return full({}, v.number, DType::Float64);
  return full_exact({}, v.integer, std::nullopt, op);
}

DType int_dtype(Int v) { return v > kInt64Max ? DType::UInt64 : DType::Int64; }

Array full_exact(const Shape& shape, Int v, std::optional<DType> dtype, const char* op, Device device) {
  DType t = dtype ? *dtype : int_dtype(v);
  check_int(v, t, op);
  if (v < kInt64Min || v > kUInt64Max) return full(shape, static_cast<double>(v), t, device);  // a float, or bool
  if (v > kInt64Max) return full(shape, static_cast<uint64_t>(v), t, device);
  return full(shape, static_cast<int64_t>(v), t, device);
}

void check_int(Int v, DType t, const char* op) {
  if (is_float(t) || t == DType::Bool) return;  // floats round; bool is v != 0 (numpy's casts)
  Int lo = is_unsigned(t) ? 0 : -(Int{1} << (dtype_bits(t) - 1));
  Int hi = is_unsigned(t) ? (Int{1} << dtype_bits(t)) - 1 : (Int{1} << (dtype_bits(t) - 1)) - 1;
  if (v < lo || v > hi) out_of_bounds(op, v, dtype_name(t));
}

Array weak_like(const Value& v, const Array& like, const char* op) {
  if (!v.integral) return scalar_like(v.number, false, like, op);
  if (v.integer >= kInt64Min && v.integer <= kInt64Max) return scalar_like(static_cast<int64_t>(v.integer), like, op);
  if (v.integer >= 0 && v.integer <= kUInt64Max) return scalar_like_unsigned(static_cast<uint64_t>(v.integer), like, op);
  if (is_float(like.dtype())) return full({}, static_cast<double>(v.integer), like.dtype(), like.device());
  out_of_bounds(op, v.integer, dtype_name(like.dtype() == DType::Bool ? DType::Int64 : like.dtype()));
}

std::optional<Value> fold_ints(Op op, Int x, Int y, const Node& at) {
  Int r = 0;
  auto too_big = [&]() {
    fail(at, std::string("operator ") + lang::op_spelling(op) +
                 ": the integer result is out of range (the tool's integers hold 127 bits)");
  };
  switch (op) {
    case Op::Add: if (__builtin_add_overflow(x, y, &r)) too_big(); return weak_int(r);
    case Op::Sub: if (__builtin_sub_overflow(x, y, &r)) too_big(); return weak_int(r);
    case Op::Mul: if (__builtin_mul_overflow(x, y, &r)) too_big(); return weak_int(r);
    case Op::Pow: {
      if (y < 0) {  // Python: a float
        if (x == 0) fail(at, "0 cannot be raised to a negative power");
        return weak_float(std::pow(static_cast<double>(x), static_cast<double>(y)));
      }
      r = 1;
      for (Int base = x, e = y; e > 0; e >>= 1) {
        if ((e & 1) && __builtin_mul_overflow(r, base, &r)) too_big();
        if (e > 1 && __builtin_mul_overflow(base, base, &base)) too_big();
      }
      return weak_int(r);
    }
    default: return std::nullopt;
  }
}

Value negate(const Value& v, const Node& at) {
  if (!v.integral) return weak_float(-v.number);
  Int r = 0;
  if (__builtin_sub_overflow(Int{0}, v.integer, &r))
    fail(at, "operator -: the integer result is out of range (the tool's integers hold 127 bits)");
  return weak_int(r);
}

}  // namespace arrayc::tool
