#include "codegen/cpu/half_convert.h"

#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/Module.h>
#include <llvm/Transforms/Utils/ModuleUtils.h>

#include <algorithm>
#include <vector>

#include "codegen/cpu/vmath/ctx.h"

namespace arrayc::detail {
namespace {

using llvm::Value;

constexpr unsigned kWidths[] = {4, 8, 16};  // the vector variants' lanes

bool has_feature(const llvm::Function& f, llvm::StringRef feature) {
  if (!f.hasFnAttribute("target-features")) return false;
  llvm::SmallVector<llvm::StringRef, 64> feats;
  f.getFnAttribute("target-features").getValueAsString().split(feats, ',');
  for (llvm::StringRef ft : feats)
    if (ft == feature) return true;
  return false;
}

// Lanes [first, first + n) of v.
Value* lanes(llvm::IRBuilder<>& b, Value* v, unsigned first, unsigned n) {
  std::vector<int> mask(n);
  for (unsigned i = 0; i < n; ++i) mask[i] = static_cast<int>(first + i);
  return b.CreateShuffleVector(v, mask);
}

// a and b (of equal lanes) side by side.
Value* concat(llvm::IRBuilder<>& b, Value* lo, Value* hi) {
  unsigned n = llvm::cast<llvm::FixedVectorType>(lo->getType())->getNumElements();
  std::vector<int> mask(2 * n);
  for (unsigned i = 0; i < 2 * n; ++i) mask[i] = static_cast<int>(i);
  return b.CreateShuffleVector(lo, hi, mask);
}

// One instruction on one register (w = 4, 8 or 16 float lanes) as inline assembly, with no
// operand modifiers: widen, <8 x i16> (w = 4: the low 4 used) or <w x i16> -> <w x float>; narrow,
// <w x float> -> <8 x i16> or <w x i16>, rounding to nearest even by the immediate (not MXCSR).
Value* asm_op(llvm::IRBuilder<>& b, bool widen, Value* v, unsigned w) {
  llvm::Type* halves = llvm::FixedVectorType::get(b.getInt16Ty(), std::max(w, 8u));
  llvm::Type* floats = llvm::FixedVectorType::get(b.getFloatTy(), w);
  auto* ty = llvm::FunctionType::get(widen ? floats : halves, {v->getType()}, false);
  const char* text = widen ? "vcvtph2ps $1, $0" : "vcvtps2ph $$0, $1, $0";
  return b.CreateCall(llvm::InlineAsm::get(ty, text, "=x,x", /*hasSideEffects=*/false), {v});
}

// One register's conversion: widen takes <w x i16>, round <w x float>; both give <w x float>.
Value* convert_register(llvm::IRBuilder<>& b, bool widen, Value* v, unsigned w) {
  if (!widen) return asm_op(b, true, asm_op(b, false, v, w), w);
  if (w == 4) v = concat(b, v, llvm::Constant::getNullValue(v->getType()));
  return asm_op(b, true, v, w);
}

// The body of a vector variant: the lanes in registers of the widest width the CPU has.
Value* convert_vector(llvm::IRBuilder<>& b, bool widen, Value* v, unsigned n, unsigned reg) {
  if (n <= reg) return convert_register(b, widen, v, n);
  unsigned h = n / 2;
  return concat(b, convert_vector(b, widen, lanes(b, v, 0, h), h, reg),
                convert_vector(b, widen, lanes(b, v, h, h), h, reg));
}

// arrayc_f16_widen / arrayc_f16_round over n lanes (0: the scalar function), defined on first use.
llvm::Function* convert_fn(llvm::Module& mod, llvm::Function* caller, bool widen, unsigned n) {
  std::string name = widen ? "arrayc_f16_widen" : "arrayc_f16_round";
  if (n) name += "_v" + std::to_string(n);
  if (llvm::Function* f = mod.getFunction(name)) return f;
  llvm::LLVMContext& cx = mod.getContext();
  auto vec = [&](llvm::Type* t) -> llvm::Type* { return n ? llvm::FixedVectorType::get(t, n) : t; };
  llvm::Type* ft = vec(llvm::Type::getFloatTy(cx));
  llvm::Type* in = widen ? vec(llvm::Type::getInt16Ty(cx)) : ft;
  auto* f = llvm::Function::Create(llvm::FunctionType::get(ft, {in}, false), llvm::Function::InternalLinkage, name, mod);
  vmath::copy_target_attrs(caller, f);
  f->setDoesNotAccessMemory();
  f->setDoesNotThrow();
  f->addFnAttr(llvm::Attribute::WillReturn);
  // Vector variants go inline once the vectorizer placed them; scalar ones stay calls until then.
  f->addFnAttr(n ? llvm::Attribute::AlwaysInline : llvm::Attribute::NoInline);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(cx, "entry", f));
  Value* x = f->getArg(0);
  Value* r;
  if (!n) {
    r = widen ? b.CreateFPExt(b.CreateBitCast(x, b.getHalfTy()), b.getFloatTy())
              : b.CreateFPExt(b.CreateFPTrunc(x, b.getHalfTy()), b.getFloatTy());
  } else {
    r = convert_vector(b, widen, x, n, has_feature(*caller, "+avx512f") ? 16 : 8);
  }
  b.CreateRet(r);
  // As the vector math: referenced, so that no pass drops the variants or rewrites the signature.
  llvm::appendToCompilerUsed(mod, {f});
  return f;
}

Value* emit_convert(llvm::IRBuilder<>& b, bool widen, Value* v) {
  llvm::Function* caller = b.GetInsertBlock()->getParent();
  llvm::Module& mod = *caller->getParent();
  std::string variants;
  llvm::Function* scalar = convert_fn(mod, caller, widen, 0);
  for (unsigned w : kWidths) {
    llvm::Function* vf = convert_fn(mod, caller, widen, w);
    if (!variants.empty()) variants += ",";
    variants += "_ZGV_LLVM_N" + std::to_string(w) + "v_" + scalar->getName().str() + "(" + vf->getName().str() + ")";
  }
  llvm::CallInst* call = b.CreateCall(scalar, {v});
  call->addFnAttr(llvm::Attribute::get(b.getContext(), "vector-function-abi-variant", variants));
  return call;
}

}  // namespace

bool use_f16c_calls(const std::string& cpu_features) {
  return cpu_features.find("+f16c") != std::string::npos && cpu_features.find("+avx") != std::string::npos;
}

Value* emit_f16_widen(llvm::IRBuilder<>& b, Value* bits) { return emit_convert(b, true, bits); }
Value* emit_f16_round(llvm::IRBuilder<>& b, Value* x) { return emit_convert(b, false, x); }

bool is_f16_scalar_fn(const llvm::Function& f) {
  return f.getName() == "arrayc_f16_widen" || f.getName() == "arrayc_f16_round";
}

}  // namespace arrayc::detail
