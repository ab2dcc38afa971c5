#pragma once
// Vectorizable transcendental functions emitted as LLVM IR (see docs/math_accuracy.md).
#include <llvm/IR/IRBuilder.h>

#include <utility>

namespace arrayc::detail {

enum class MathFn {
  Exp, Log, Sin, Cos, Tanh, Pow, Sqrt,
  // numpy math (issue 28; numpy_math.cpp). Atan2, Hypot and Fmod take two arguments.
  Log1p, Expm1, Log2, Log10, Exp2, Tan, Asin, Acos, Atan, Atan2, Sinh, Cosh, Asinh, Erf, Sigmoid,
  Hypot, Fmod,
};
const char* math_fn_name(MathFn fn);  // "exp", "log", ... (libdevice's names, without __nv_)
unsigned math_fn_arity(MathFn fn);

// fast: reduced accuracy documented in docs/math_accuracy.md (sin/cos without the huge-argument
// reduction: NaN above it; f64 pow without the extended-precision log).
struct MathOptions {
  bool fast = false;
  // f64 sin/cos whose kernel takes both of one x (BodyEmitter::sincos): the shared reduction
  // modulo pi/2 with both polynomials and the quadrant's selects, which the two calls' inlined
  // bodies share. Alone, each takes a reduction modulo pi and one polynomial, two thirds of the
  // vector operations but no sharing. The two differ by up to an ulp or two, both within the
  // bounds of docs/math_accuracy.md. Ignored for f32, whose pair is the packed sincos (which
  // differs from f32 sin/cos alone in the same way, below 2^10).
  bool pair = false;
};

// Emits a call computing fn(args...) for scalar float/double args (Pow takes 2 args), defining
// the needed functions in the builder's module on first use. Each scalar function carries
// vector variants (VF 4/8/16 for f32, 2/4/8 for f64) announced through the
// "vector-function-abi-variant" call-site attribute, so the loop vectorizer widens loops that
// contain the call. Target attributes ("target-cpu", "target-features", "prefer-vector-width",
// ...) are copied from the function at the insertion point: set them before emitting math.
llvm::Value* emit_math_call(llvm::IRBuilder<>& b, MathFn fn, llvm::ArrayRef<llvm::Value*> args,
                            const MathOptions& opts = {});

// sin(x) and cos(x) of one float x in one call that shares the argument reduction and the
// polynomials (W1 and W8 take both of one x). The results equal emit_math_call's Sin and Cos
// (of the same mode) bit for bit from 2^10 up; below, where those reduce modulo pi and evaluate
// one polynomial each, they can differ by an ulp or two (both within the bounds). The call returns both packed in an i64 (sin low, cos high) and
// has one vector variant, of kSincosWidth lanes; a loop containing it must be given that vector
// width explicitly (llvm.loop.vectorize.width), since the i64 would otherwise halve the
// vectorizer's choice.
constexpr unsigned kSincosWidth = 16;
std::pair<llvm::Value*, llvm::Value*> emit_sincos_f32(llvm::IRBuilder<>& b, llvm::Value* x,
                                                      const MathOptions& opts = {});

}  // namespace arrayc::detail
