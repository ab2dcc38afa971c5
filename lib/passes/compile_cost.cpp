#include "passes/compile_cost.h"

namespace arrayc::detail {

// The weight of each op that expands to a math-library body: the transcendentals (and their
// two-argument relatives); float pow with a general exponent; integer pow (a loop of squarings).
// Every other computed op counts 1: one or a few instructions per element.
constexpr int64_t kMathWeight = 8;

int64_t compile_weight(const Node& n) {
  switch (n.op) {
    case Op::Exp: case Op::Log: case Op::Sin: case Op::Cos: case Op::Tanh: case Op::Pow:
    case Op::Log1p: case Op::Expm1: case Op::Log2: case Op::Log10: case Op::Exp2: case Op::Tan:
    case Op::Arcsin: case Op::Arccos: case Op::Arctan: case Op::Sinh: case Op::Cosh: case Op::Arcsinh:
    case Op::Erf: case Op::Sigmoid: case Op::Arctan2: case Op::Hypot: case Op::Fmod:
      return kMathWeight;
    default:
      return 1;
  }
}

std::string compile_cost_reason(const Node& n, int64_t cost) {
  return "split: compile cost (its consumer's kernel is at " + std::to_string(cost) + " of " +
         std::to_string(kMaxKernelCost) + ", " + op_name(n.op) + " adds " + std::to_string(compile_weight(n)) + ")";
}

}  // namespace arrayc::detail
