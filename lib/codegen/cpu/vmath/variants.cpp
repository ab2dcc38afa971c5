// Vectorizable exp/log/sin/cos/tanh/pow as LLVM IR.
//
// Every function body is written once against a value type that is either a scalar or a
// vector (LLVM arithmetic and constants splat over vectors), then instantiated as a scalar
// function plus vector variants. The scalar call carries the "vector-function-abi-variant"
// attribute naming the variants, so the loop vectorizer replaces it by a call of the right width.
// exp, log and pow branch once per vector to a lean path when every lane allows it (exp: every
// lane below the fast bound; log, pow: every x positive, normal and finite, pow's y finite); the
// other lanes' paths give in-range lanes the same bits. sin/cos variants check "any lane huge" and
// reduce those lanes one by one with an exact (Payne-Hanek) reduction; f32 sin/cos first check
// "every lane below 16" (exp's bound, so that exp, sin and cos of one x test it once), then
// "below 2^10" and "below 2^22", and then compute in float instead of double. sin or cos alone
// (f64; f32 below 2^10) reduces modulo pi and evaluates one polynomial; sin and cos of one x
// (the f32 packed sincos, f64 MathOptions::pair) share a reduction modulo pi/2 and both
// polynomials.
// Algorithms and measured errors are in docs/math_accuracy.md.
//
// This file instantiates the bodies (bodies.h: exp_log.cpp, trig.cpp, tanh_pow.cpp) as the
// scalar function and its vector variants, with each function's lean paths, and emits the calls.
#include "codegen/cpu/vmath/vmath.h"

#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/Transforms/Utils/ModuleUtils.h>

#include <functional>
#include <string>
#include <vector>

#include "codegen/cpu/vmath/bodies.h"
#include "codegen/llvm_util.h"

namespace arrayc::detail {
namespace vmath {
namespace {

// Straight-line body of fn over the context's value type (sin/cos: the Cody-Waite path only;
// f64 alone the one-polynomial one, f64 in a pair the shared one).
Value* emit_body(const Ctx& e, MathFn fn, llvm::ArrayRef<Value*> a, const MathOptions& o) {
  switch (fn) {
    case MathFn::Exp:
      return exp_table(e, a[0], false);
    case MathFn::Log:
      return log_fn(e, a[0]);
    case MathFn::Sin:
    case MathFn::Cos:
      if (e.f64 && !o.pair) return trig_one(e, a[0], fn == MathFn::Cos);
      return trig_fast(e, a[0], fn == MathFn::Cos);
    case MathFn::Tanh:
      return tanh_fn(e, a[0]);
    case MathFn::Sqrt:
      return e.b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, a[0]);
    case MathFn::Pow:
      return pow_fn(e, a[0], a[1], o.fast);
    default:  // numpy math (issue 28)
      return numpy_body(e, static_cast<int>(fn), a);
  }
}


// Scalar functions stay out of line, so that the vectorizer sees their calls; vector variants are
// inlined into the vectorized loop once it exists (inline_vector_math in codegen/cpu/host_passes.cpp),
// which keeps their constants in registers and their lanes out of the stack.
void mark_inlining(llvm::Function* f, llvm::Type* t) {
  f->addFnAttr(t->isVectorTy() ? llvm::Attribute::AlwaysInline : llvm::Attribute::NoInline);
}

// Defines name(args...) -> type over value type t (scalar or vector). Sin/cos branch to the
// exact reduction when any lane is huge.
llvm::Function* define_fn(llvm::Module& mod, llvm::Function* like, const std::string& name,
                          MathFn fn, llvm::Type* t, const MathOptions& o) {
  const bool fast = o.fast;
  llvm::LLVMContext& cx = mod.getContext();
  unsigned nargs = math_fn_arity(fn);
  std::vector<llvm::Type*> params(nargs, t);
  auto* f = llvm::Function::Create(llvm::FunctionType::get(t, params, false),
                                   llvm::Function::InternalLinkage, name, mod);
  copy_target_attrs(like, f);
  f->setDoesNotAccessMemory();
  f->setDoesNotThrow();
  f->addFnAttr(llvm::Attribute::WillReturn);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(cx, "entry", f));
  Ctx e(b, t);
  std::vector<Value*> args;
  for (auto& a : f->args()) args.push_back(&a);
  bool trig = fn == MathFn::Sin || fn == MathFn::Cos;
  bool exact_trig = trig && !fast;
  // When all_ok holds, return what `lean` computes, on a path of its own.
  auto path_if = [&](Value* all_ok, const char* name, const std::function<Value*()>& lean) {
    auto* taken = llvm::BasicBlock::Create(cx, name, f);
    auto* rest = llvm::BasicBlock::Create(cx, "rest", f);
    b.CreateCondBr(all_ok, taken, rest);
    b.SetInsertPoint(taken);
    b.CreateRet(lean());
    b.SetInsertPoint(rest);
  };
  if (fn == MathFn::Exp && !e.f64)
    path_if(all_below(e, args[0], kModerateF32), "moderate", [&] { return exp_table(e, args[0], true, false, true); });
  if (fn == MathFn::Exp)
    path_if(all_below(e, args[0], e.f64 ? kExpTableFastF64 : kExpTableFastF32), "fast",
            [&] { return exp_table(e, args[0], true); });
  // Every x positive, normal and finite (pow: every y finite too): log without the scaling of
  // subnormals, neither function with its special cases. Those lanes get the same bits on the
  // full path below.
  if (fn == MathFn::Log)
    path_if(all_positive_normal(e, args[0]), "normal", [&] { return log_core(e, args[0], true); });
  if (fn == MathFn::Pow)
    path_if(b.CreateAnd(all_positive_normal(e, args[0]), all_below(e, args[1], INFINITY)), "normal",
            [&] { return pow_core(e, args[0], args[1], fast, true); });
  if (trig && !e.f64) {
    // The float paths (kFloatTrigTiers); past them, the double path below.
    float_trig_tiers(b, e, args[0], [&](const FloatTrigTier& tier) {
      if (tier.one) {
        b.CreateRet(tier.one(e, args[0], fn == MathFn::Cos));
        return;
      }
      Value *sv, *cv;
      tier.both(e, args[0], sv, cv);
      b.CreateRet(fn == MathFn::Cos ? cv : sv);
    });
  }
  Value* res = emit_body(e, fn, args, o);
  // tan (computed in double) and fmod have lanes of their own for the scalar path below.
  bool tan = fn == MathFn::Tan, fmod = fn == MathFn::Fmod;
  if (!exact_trig && !tan && !fmod) {
    b.CreateRet(trig ? nan_if_huge(e, args[0], res) : res);
    return f;
  }
  // Any lane huge: redo those lanes with the scalar exact reduction. The branch is marked
  // unlikely: the call there clobbers every vector register, and with equal weights the register
  // allocator spilled around it on the common path too (sin alone 7-11% slower in cache).
  llvm::Function* huge = fmod ? nullptr : get_trig_huge(mod, like);
  Value* mask;
  if (fmod)
    mask = fmod_slow_mask(e, args[0], args[1]);
  else if (tan && !e.f64)
    mask = trig_huge_mask(e.as_double(), b.CreateFPExt(args[0], e.as_double().ft));
  else
    mask = trig_huge_mask(e, args[0]);
  Value* any = t->isVectorTy() ? b.CreateOrReduce(mask) : mask;
  auto* entry = b.GetInsertBlock();
  auto* slow = llvm::BasicBlock::Create(cx, "huge", f);
  auto* done = llvm::BasicBlock::Create(cx, "done", f);
  b.CreateCondBr(any, slow, done, llvm::MDBuilder(cx).createUnlikelyBranchWeights());
  b.SetInsertPoint(slow);
  Value* cos_flag = b.getInt1(fn == MathFn::Cos);
  // The lane's result from its scalar arguments.
  auto exact_lane = [&](const std::vector<Value*>& xs) -> Value* {
    if (fmod) return b.CreateFRem(xs[0], xs[1]);  // the C library's fmod
    Value* xd = t->getScalarType()->isDoubleTy() ? xs[0] : b.CreateFPExt(xs[0], b.getDoubleTy());
    Value* r = tan ? b.CreateFDiv(b.CreateCall(huge, {xd, b.getInt1(false)}), b.CreateCall(huge, {xd, b.getInt1(true)}))
                   : b.CreateCall(huge, {xd, cos_flag});
    return t->getScalarType()->isDoubleTy() ? r : b.CreateFPTrunc(r, t->getScalarType());
  };
  Value* slow_res;
  llvm::BasicBlock* slow_end;
  if (!t->isVectorTy()) {
    slow_res = exact_lane(args);
    slow_end = slow;
    b.CreateBr(done);
  } else {
    // for (i = 0; i < VF; ++i) if (mask[i]) res[i] = huge(x[i])
    unsigned vf = llvm::cast<llvm::FixedVectorType>(t)->getNumElements();
    auto* loop = llvm::BasicBlock::Create(cx, "lane", f);
    auto* call = llvm::BasicBlock::Create(cx, "lane.huge", f);
    auto* next = llvm::BasicBlock::Create(cx, "lane.next", f);
    b.CreateBr(loop);
    b.SetInsertPoint(loop);
    auto* i = b.CreatePHI(b.getInt32Ty(), 2);
    auto* acc = b.CreatePHI(t, 2);
    i->addIncoming(b.getInt32(0), slow);
    acc->addIncoming(res, slow);
    b.CreateCondBr(b.CreateExtractElement(mask, i), call, next);
    b.SetInsertPoint(call);
    std::vector<Value*> lane;
    for (Value* arg : args) lane.push_back(b.CreateExtractElement(arg, i));
    Value* upd = b.CreateInsertElement(acc, exact_lane(lane), i);
    b.CreateBr(next);
    b.SetInsertPoint(next);
    auto* acc2 = b.CreatePHI(t, 2);
    acc2->addIncoming(acc, loop);
    acc2->addIncoming(upd, call);
    Value* i2 = b.CreateAdd(i, b.getInt32(1));
    i->addIncoming(i2, next);
    acc->addIncoming(acc2, next);
    llvm::BranchInst* back = b.CreateCondBr(b.CreateICmpULT(i2, b.getInt32(vf)), loop, done);
    // A rare path: left rolled, which keeps the code that every kernel compiles small.
    set_loop_hints(back, {{"llvm.loop.unroll.disable", nullptr}});
    slow_res = acc2;
    slow_end = next;
  }
  b.SetInsertPoint(done);
  auto* phi = b.CreatePHI(t, 2);
  phi->addIncoming(res, entry);
  phi->addIncoming(slow_res, slow_end);
  b.CreateRet(phi);
  return f;
}

// The function computing fn over value type t (a scalar or a vector of it), defined in the
// module on first use; the scalar one is kept out of line so the vectorizer sees the call.
llvm::Function* math_fn(llvm::Module& mod, llvm::Function* caller, MathFn fn, llvm::Type* t, MathOptions o) {
  llvm::Type* st = t->getScalarType();
  o.pair = o.pair && st->isDoubleTy() && (fn == MathFn::Sin || fn == MathFn::Cos);
  std::string name = std::string("arrayc_") + math_fn_name(fn) + (st->isDoubleTy() ? "_f64" : "_f32") +
                     (o.fast ? "_fast" : "") + (o.pair ? "_pair" : "");
  if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(t)) name += "_v" + std::to_string(vt->getNumElements());
  if (llvm::Function* f = mod.getFunction(name)) return f;
  llvm::Function* f = define_fn(mod, caller, name, fn, t, o);
  // Vector variants are referenced only once the vectorizer runs. Scalar ones are used too, so
  // that no interprocedural pass rewrites their signature (constant propagation into `pow(x,
  // 2.0)` used to drop the exponent, and the call no longer matched its vector variants).
  llvm::appendToCompilerUsed(mod, {f});
  mark_inlining(f, t);
  return f;
}

// The vector widths of every variant: 4/8/16 lanes of f32, 2/4/8 of f64.
std::vector<unsigned> variant_widths(llvm::Type* scalar) {
  return scalar->isDoubleTy() ? std::vector<unsigned>{2, 4, 8} : std::vector<unsigned>{4, 8, 16};
}

// The "vector-function-abi-variant" attribute value naming `scalar`'s vector variants.
std::string variant_list(const std::string& scalar, const std::string& params, const std::vector<unsigned>& widths) {
  std::string variants;
  for (unsigned vf : widths) {
    if (!variants.empty()) variants += ",";
    variants += "_ZGV_LLVM_N" + std::to_string(vf) + params + "_" + scalar + "(" + scalar + "_v" + std::to_string(vf) + ")";
  }
  return variants;
}

// Packs float s and c (scalars or vectors) into one i64 per lane: c in the high half.
Value* pack2(llvm::IRBuilder<>& b, Value* s, Value* c) {
  llvm::Type* i32 = s->getType()->isVectorTy()
                        ? static_cast<llvm::Type*>(llvm::VectorType::getInteger(llvm::cast<llvm::VectorType>(s->getType())))
                        : b.getInt32Ty();
  llvm::Type* i64 = s->getType()->isVectorTy()
                        ? static_cast<llvm::Type*>(llvm::VectorType::get(b.getInt64Ty(), llvm::cast<llvm::VectorType>(s->getType())))
                        : b.getInt64Ty();
  Value* lo = b.CreateZExt(b.CreateBitCast(s, i32), i64);
  Value* hi = b.CreateShl(b.CreateZExt(b.CreateBitCast(c, i32), i64), 32);
  return b.CreateOr(lo, hi);
}

// i64 arrayc_sincos_f32(float x) (and its variants over <N x float> -> <N x i64>): sin(x) in the
// low half, cos(x) in the high half, equal bit for bit to arrayc_sin_f32 / arrayc_cos_f32 (their
// _fast versions in fast mode) except in the tiers where those take trig_one (below 2^10).
llvm::Function* sincos_fn(llvm::Module& mod, llvm::Function* caller, llvm::Type* t, bool fast) {
  std::string name = fast ? "arrayc_sincos_f32_fast" : "arrayc_sincos_f32";
  if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(t)) name += "_v" + std::to_string(vt->getNumElements());
  if (llvm::Function* f = mod.getFunction(name)) return f;
  llvm::LLVMContext& cx = mod.getContext();
  llvm::Type* ret = t->isVectorTy() ? static_cast<llvm::Type*>(llvm::VectorType::get(llvm::Type::getInt64Ty(cx), llvm::cast<llvm::VectorType>(t)))
                                    : llvm::Type::getInt64Ty(cx);
  auto* f = llvm::Function::Create(llvm::FunctionType::get(ret, {t}, false), llvm::Function::InternalLinkage, name, mod);
  copy_target_attrs(caller, f);
  f->setDoesNotAccessMemory();
  f->setDoesNotThrow();
  f->addFnAttr(llvm::Attribute::WillReturn);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(cx, "entry", f));
  Ctx e(b, t);
  Value* x = f->getArg(0);
  auto lanes = [&](Value* mask, bool all) {
    return !t->isVectorTy() ? mask : all ? b.CreateAndReduce(mask) : b.CreateOrReduce(mask);
  };
  // When cond holds, return both results computed by `both` on a path of its own.
  auto path_if = [&](Value* cond, const char* name, const std::function<void(Value*&, Value*&)>& both) {
    auto* taken = llvm::BasicBlock::Create(cx, name, f);
    auto* rest = llvm::BasicBlock::Create(cx, "rest", f);
    b.CreateCondBr(cond, taken, rest);
    b.SetInsertPoint(taken);
    Value *sv, *cv;
    both(sv, cv);
    b.CreateRet(pack2(b, sv, cv));
    b.SetInsertPoint(rest);
  };
  // The shared float paths (kFloatTrigTiers). Past them, in default mode, the shared double
  // path when no lane is huge; else each function's own (default mode: with its exact
  // reduction; fast mode: the double path, NaN for huge lanes). Those stay calls when this
  // function is inlined: inlined, fast mode's double path cost W8 a third more time in its
  // float path (the packed results of the paths were no longer unpacked before their merge).
  float_trig_tiers(b, e, x, [&](const FloatTrigTier& tier) {
    Value *sv, *cv;
    tier.both(e, x, sv, cv);
    b.CreateRet(pack2(b, sv, cv));
  });
  if (!fast)
    path_if(b.CreateNot(lanes(trig_huge_mask(e, x), false)), "double",
            [&](Value*& sv, Value*& cv) { trig_fast_both(e, x, sv, cv); });
  llvm::CallInst* sl = b.CreateCall(math_fn(mod, caller, MathFn::Sin, t, {.fast = fast}), {x});
  llvm::CallInst* cl = b.CreateCall(math_fn(mod, caller, MathFn::Cos, t, {.fast = fast}), {x});
  sl->setIsNoInline();
  cl->setIsNoInline();
  b.CreateRet(pack2(b, sl, cl));
  llvm::appendToCompilerUsed(mod, {f});  // as in math_fn
  mark_inlining(f, t);
  return f;
}

}  // namespace
}  // namespace vmath

using vmath::math_fn;
using vmath::sincos_fn;
using vmath::variant_list;
using vmath::variant_widths;

const char* math_fn_name(MathFn fn) {
  switch (fn) {
    case MathFn::Exp: return "exp";
    case MathFn::Log: return "log";
    case MathFn::Sin: return "sin";
    case MathFn::Cos: return "cos";
    case MathFn::Tanh: return "tanh";
    case MathFn::Pow: return "pow";
    case MathFn::Sqrt: return "sqrt";
    case MathFn::Log1p: return "log1p";
    case MathFn::Expm1: return "expm1";
    case MathFn::Log2: return "log2";
    case MathFn::Log10: return "log10";
    case MathFn::Exp2: return "exp2";
    case MathFn::Tan: return "tan";
    case MathFn::Asin: return "asin";
    case MathFn::Acos: return "acos";
    case MathFn::Atan: return "atan";
    case MathFn::Atan2: return "atan2";
    case MathFn::Sinh: return "sinh";
    case MathFn::Cosh: return "cosh";
    case MathFn::Asinh: return "asinh";
    case MathFn::Erf: return "erf";
    case MathFn::Sigmoid: return "sigmoid";
    case MathFn::Hypot: return "hypot";
    case MathFn::Fmod: return "fmod";
  }
  return "";
}

unsigned math_fn_arity(MathFn fn) {
  return fn == MathFn::Pow || fn == MathFn::Atan2 || fn == MathFn::Hypot || fn == MathFn::Fmod ? 2 : 1;
}

llvm::Value* emit_math_call(llvm::IRBuilder<>& b, MathFn fn, llvm::ArrayRef<llvm::Value*> args,
                            const MathOptions& opts) {
  llvm::Type* t = args[0]->getType();
  if (fn == MathFn::Sqrt) return b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, args[0]);
  llvm::Function* caller = b.GetInsertBlock()->getParent();
  llvm::Module& mod = *caller->getParent();
  for (unsigned vf : variant_widths(t)) math_fn(mod, caller, fn, llvm::FixedVectorType::get(t, vf), opts);
  llvm::Function* scalar = math_fn(mod, caller, fn, t, opts);
  llvm::CallInst* call = b.CreateCall(scalar, args);
  std::string params(math_fn_arity(fn), 'v');
  call->addFnAttr(llvm::Attribute::get(b.getContext(), "vector-function-abi-variant",
                                       variant_list(scalar->getName().str(), params, variant_widths(t))));
  return call;
}

std::pair<llvm::Value*, llvm::Value*> emit_sincos_f32(llvm::IRBuilder<>& b, llvm::Value* x,
                                                      const MathOptions& opts) {
  llvm::Type* t = x->getType();
  llvm::Function* caller = b.GetInsertBlock()->getParent();
  llvm::Module& mod = *caller->getParent();
  // Only the width its loops are given (kSincosWidth): every variant costs compile time.
  sincos_fn(mod, caller, llvm::FixedVectorType::get(t, kSincosWidth), opts.fast);
  llvm::Function* scalar = sincos_fn(mod, caller, t, opts.fast);
  llvm::CallInst* packed = b.CreateCall(scalar, {x});
  packed->addFnAttr(llvm::Attribute::get(b.getContext(), "vector-function-abi-variant",
                                         variant_list(scalar->getName().str(), "v", {kSincosWidth})));
  llvm::Value* s = b.CreateBitCast(b.CreateTrunc(packed, b.getInt32Ty()), t);
  llvm::Value* c = b.CreateBitCast(b.CreateTrunc(b.CreateLShr(packed, 32), b.getInt32Ty()), t);
  return {s, c};
}

}  // namespace arrayc::detail
