// The straight-line bodies of the vector math functions over one value type (Ctx), by family:
// exp and log (exp_log.cpp), sin and cos (trig.cpp), tanh and pow (tanh_pow.cpp). variants.cpp
// wraps them into functions with their fast paths and vector variants. Algorithms and measured
// errors are at the definitions and in docs/math_accuracy.md.
#pragma once
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <functional>

#include "codegen/cpu/vmath/ctx.h"

namespace arrayc::detail::vmath {

// ---- exp_log.cpp

// exp_table's fast path: every lane below this bound (results normal, no clamp).
constexpr float kExpTableFastF32 = 87.0f;
constexpr double kExpTableFastF64 = 708.0;
//
// f32 lanes below kModerateF32 reduce in one step, r = x - nd*float(ln2/16) (FMA): float(ln2/16)
// is 1.2e-10 off, so r is off by at most 370 * 1.2e-10 = 4.4e-8, 0.74 ULP of the result at
// worst (measured over every float below 16: max 1.45 ULP in all, against 1.06 with two
// steps), and the second step's FMA is saved. Every lane below it (moderate = true): that step
// alone; otherwise each lane picks its own (a compare and a blend), so a lane's result never
// depends on its neighbours. Such vectors pay one compare more than before (exp of x in
// [-30, 30] or [-80, 0]: 11-13% more time in cache). f32 sin/cos test the same bound first (kFloatTrigTiers),
// so that a fused loop of exp, sin and cos of one x tests it once (LLVM merges the identical
// compares and threads the second branch): W8 10% faster.
constexpr double kModerateF32 = 16.0;

// exp(x + xlo) where xlo (optional) is a small correction, by Cody-Waite reduction (pow's
// extended-precision path).
Value* exp_core(const Ctx& e, Value* x, Value* xlo);
// exp(x) with a 16-entry table. fast_path: every lane below kExpTableFast; moderate (f32): every
// lane below kModerateF32; for_float (f64 contexts only; f32 pow): enough for a float result.
Value* exp_table(const Ctx& e, Value* x, bool fast_path, bool for_float = false, bool moderate = false);
// expm1(a) for 0 <= a <= 30 (what tanh needs).
Value* expm1_nonneg(const Ctx& e, Value* a);
// log(x) for positive finite x. normal_only: every x is known to be normal; for_float (f64
// contexts only; f32 pow): enough for a float result.
Value* log_core(const Ctx& e, Value* x, bool normal_only = false, bool for_float = false);
// log(x) with its special cases (negative, zero, inf, NaN).
Value* log_fn(const Ctx& e, Value* x);
// log(x) of a double (or double vector) as hi + lo with about 2^-66 relative error, for pow.
void log_dd(const Ctx& e, Value* x, Value*& hi, Value*& lo);

// ---- trig.cpp

// Cody-Waite sin and cos, valid below the huge-argument thresholds.
void trig_fast_both(const Ctx& e, Value* x, Value*& sin_out, Value*& cos_out);
// sin or cos alone, reduced modulo pi with one polynomial (f64 below the huge bound; f32 below
// 2^10).
Value* trig_one(const Ctx& e, Value* x, bool is_cos);
// Fast mode has no exact reduction: lanes above the huge threshold give NaN rather than an
// unreduced (garbage, even infinite) result.
Value* nan_if_huge(const Ctx& e, Value* x, Value* res);
// sin or cos (is_cos) of trig_fast_both.
Value* trig_fast(const Ctx& e, Value* x, bool is_cos);

// The float paths of f32 sin/cos, tried in order, each taken when every lane is below its bound
// (all_below: NaN and inf lanes fail it). The packed sincos takes `both`; the separate functions
// take `one` where the tier has it (below 2^10: trig_one, the reduction modulo pi), else
// `both`. The first bound is exp's (kModerateF32), so that exp, sin and cos of one x test it
// once; below 2^10 it is the same path.
struct FloatTrigTier {
  double bound;
  const char* name;
  void (*both)(const Ctx&, Value*, Value*&, Value*&);
  Value* (*one)(const Ctx&, Value*, bool is_cos);
};
// Emits the tiers' tests at b's insertion point, each branching to its path; consecutive tiers
// of one path share its block (emitted once, by ret(tier), which ends it with a return). Leaves
// b past the last test.
void float_trig_tiers(llvm::IRBuilder<>& b, const Ctx& e, Value* x, const std::function<void(const FloatTrigTier&)>& ret);

// Lanes that need the exact reduction: threshold < |x| < inf, one unsigned compare of the bits
// (NaN fails it).
Value* trig_huge_mask(const Ctx& e, Value* x);
// double arrayc_trig_huge(double x, i1 is_cos): sin or cos of a finite x with |x| >= 2^-9,
// reducing exactly modulo pi/2 (Payne-Hanek), defined in mod on first use with like's target
// attributes.
llvm::Function* get_trig_huge(llvm::Module& mod, llvm::Function* like);

// ---- tanh_pow.cpp

Value* tanh_fn(const Ctx& e, Value* x);
// exp(y log ax) for ax >= 0, without pow's special cases. normal_only: every ax is normal.
Value* pow_core(const Ctx& e, Value* ax, Value* y, bool fast, bool normal_only);
// pow(x, y) = exp(y * log|x|) with C99 special cases on top.
Value* pow_fn(const Ctx& e, Value* x, Value* y, bool fast);

// ---- numpy_math.cpp (issue 28)

// x = 2^k z with z in [0.699, 1.398): k as a float (kd) and log(z) as hi + lo (log_core's tables;
// exp_log.cpp).
void log_parts(const Ctx& e, Value* x, bool normal_only, Value*& kd, Value*& hi, Value*& lo);
// The straight-line body of one of the numpy math functions (MathFn::Log1p and after), over
// e's value type. Float functions compute in double (f32: widened, then rounded once).
Value* numpy_body(const Ctx& e, int fn, llvm::ArrayRef<Value*> args);
// fmod's lanes that its body leaves to the C library's fmod (finite operands whose quotient
// reaches 2^mantissa bits).
Value* fmod_slow_mask(const Ctx& e, Value* x, Value* y);

}  // namespace arrayc::detail::vmath
