#include "ir/math_build.h"

#include <string>

#include "arrayc/error.h"
#include "ir/build.h"

namespace arrayc::detail {
namespace {

[[noreturn]] void not_accepted(Op op, DType t, const char* accepted) {
  throw Error(std::string(api_name(op)) + ": dtype " + dtype_name(t) + " is not accepted (" + accepted + ")");
}

// The float dtype a float function computes in: floats keep theirs, integers give float64 and
// bool float32 (numpy: float16), as exp does.
DType float_of(DType t) {
  if (is_float(t)) return t;
  return t == DType::Bool ? DType::Float32 : DType::Float64;
}

DType common(const std::vector<NodeRef>& in) {
  DType t = in[0]->dtype;
  for (size_t i = 1; i < in.size(); ++i) t = promote_types(t, in[i]->dtype);
  return t;
}

void cast_all(std::vector<NodeRef>& in, DType t) {
  for (NodeRef& n : in) n = make_cast(n, t);
}

}  // namespace

bool is_numpy_transcendental(Op op) {
  switch (op) {
    case Op::Log1p: case Op::Expm1: case Op::Log2: case Op::Log10: case Op::Exp2: case Op::Tan:
    case Op::Arcsin: case Op::Arccos: case Op::Arctan: case Op::Sinh: case Op::Cosh:
    case Op::Arcsinh: case Op::Erf: case Op::Sigmoid: case Op::Arctan2: case Op::Hypot:
      return true;
    default: return false;
  }
}

std::optional<DType> numpy_math_dtypes(Op op, std::vector<NodeRef>& in) {
  DType t = common(in);
  if (is_numpy_transcendental(op)) {
    DType r = float_of(t);
    cast_all(in, r);
    return r;
  }
  switch (op) {
    case Op::Floor: case Op::Ceil: case Op::Round: case Op::Trunc: {
      // Integers are their own floor (numpy 2 keeps their dtype); bool computes in float32.
      DType r = t == DType::Bool ? DType::Float32 : t;
      cast_all(in, r);
      return r;
    }
    case Op::Sign:
      if (t == DType::Bool) not_accepted(op, t, "integer or float");
      return t;
    case Op::IsNan: case Op::IsInf: case Op::IsFinite:
      return DType::Bool;
    case Op::Xor:
      cast_all(in, DType::Bool);
      return DType::Bool;
    case Op::Fmod: case Op::FloorDiv: case Op::Mod:
      if (t == DType::Bool) not_accepted(op, t, "integer or float");
      cast_all(in, t);
      return t;
    case Op::Invert: case Op::BitAnd: case Op::BitOr: case Op::BitXor:
      if (is_float(t)) not_accepted(op, t, "integer or bool");
      cast_all(in, t);
      return t;
    case Op::Shl: case Op::Shr:
      if (!is_int(t)) not_accepted(op, t, "integer");
      cast_all(in, t);
      return t;
    default: return std::nullopt;
  }
}

}  // namespace arrayc::detail
