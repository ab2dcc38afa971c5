// numpy's elementwise math (include/arrayc/math.h): one op of ops.def's "numpy math" block each,
// but clip, a composition of maximum and minimum.
#include "arrayc/math.h"

#include <string>

#include "ir/build.h"

namespace arrayc {

using detail::Op;

namespace {
Array ew(Op op, std::initializer_list<const Array*> in) {
  std::vector<detail::NodeRef> nodes;
  nodes.reserve(in.size());
  for (const Array* a : in) nodes.push_back(a->node());
  return Array(detail::make_elementwise(op, std::move(nodes)));
}
}  // namespace

Array floor(const Array& a) { return ew(Op::Floor, {&a}); }
Array ceil(const Array& a) { return ew(Op::Ceil, {&a}); }
Array round(const Array& a) { return ew(Op::Round, {&a}); }
Array trunc(const Array& a) { return ew(Op::Trunc, {&a}); }
Array sign(const Array& a) { return ew(Op::Sign, {&a}); }
Array isnan(const Array& a) { return ew(Op::IsNan, {&a}); }
Array isinf(const Array& a) { return ew(Op::IsInf, {&a}); }
Array isfinite(const Array& a) { return ew(Op::IsFinite, {&a}); }
Array log1p(const Array& a) { return ew(Op::Log1p, {&a}); }
Array expm1(const Array& a) { return ew(Op::Expm1, {&a}); }
Array log2(const Array& a) { return ew(Op::Log2, {&a}); }
Array log10(const Array& a) { return ew(Op::Log10, {&a}); }
Array exp2(const Array& a) { return ew(Op::Exp2, {&a}); }
Array tan(const Array& a) { return ew(Op::Tan, {&a}); }
Array arcsin(const Array& a) { return ew(Op::Arcsin, {&a}); }
Array arccos(const Array& a) { return ew(Op::Arccos, {&a}); }
Array arctan(const Array& a) { return ew(Op::Arctan, {&a}); }
Array arctan2(const Array& y, const Array& x) { return ew(Op::Arctan2, {&y, &x}); }
Array sinh(const Array& a) { return ew(Op::Sinh, {&a}); }
Array cosh(const Array& a) { return ew(Op::Cosh, {&a}); }
Array arcsinh(const Array& a) { return ew(Op::Arcsinh, {&a}); }
Array erf(const Array& a) { return ew(Op::Erf, {&a}); }
Array sigmoid(const Array& a) { return ew(Op::Sigmoid, {&a}); }
Array hypot(const Array& a, const Array& b) { return ew(Op::Hypot, {&a, &b}); }
Array fmod(const Array& a, const Array& b) { return ew(Op::Fmod, {&a, &b}); }
Array floor_divide(const Array& a, const Array& b) { return ew(Op::FloorDiv, {&a, &b}); }
Array remainder(const Array& a, const Array& b) { return ew(Op::Mod, {&a, &b}); }
Array bitwise_and(const Array& a, const Array& b) { return ew(Op::BitAnd, {&a, &b}); }
Array bitwise_or(const Array& a, const Array& b) { return ew(Op::BitOr, {&a, &b}); }
Array bitwise_xor(const Array& a, const Array& b) { return ew(Op::BitXor, {&a, &b}); }
Array invert(const Array& a) { return ew(Op::Invert, {&a}); }
Array left_shift(const Array& a, const Array& b) { return ew(Op::Shl, {&a, &b}); }
Array right_shift(const Array& a, const Array& b) { return ew(Op::Shr, {&a, &b}); }
Array logical_xor(const Array& a, const Array& b) { return ew(Op::Xor, {&a, &b}); }

Array clip(const Array& a, const Array& lo, const Array& hi) {
  try {
    return minimum(maximum(a, lo), hi);
  } catch (const Error& e) {  // "maximum: ..." would name an op the user did not call
    std::string what = e.what();
    for (const char* op : {"maximum: ", "minimum: "})
      if (what.rfind(op, 0) == 0) what = what.substr(std::string(op).size());
    throw Error("clip: " + what);
  }
}

}  // namespace arrayc
