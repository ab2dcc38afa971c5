#include "codegen/cpu/vmath/ctx.h"

#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/Module.h>
#include <llvm/TargetParser/Host.h>

#include <functional>

namespace arrayc::detail::vmath {

std::vector<double> inv_factorials(int first, int last, int step, bool alternate, double sign) {
  std::vector<double> out;
  for (int k = first; k <= last; k += step) {
    long double f = 1;
    for (int i = 2; i <= k; ++i) f *= i;
    out.push_back(static_cast<double>(sign / f));
    if (alternate) sign = -sign;
  }
  return out;
}

void copy_target_attrs(llvm::Function* like, llvm::Function* to) {
  for (const char* k : {"target-cpu", "target-features", "tune-cpu", "prefer-vector-width",
                        "min-legal-vector-width"}) {
    if (like->hasFnAttribute(k)) to->addFnAttr(like->getFnAttribute(k));
  }
}

namespace {

// The permute instructions of the CPU that a function is compiled for: its "target-features"
// attribute when it has one (copy_target_attrs passes the caller's on), else the host's.
struct Permutes {
  bool avx2 = false, avx512f = false;
};
Permutes target_permutes(const llvm::Function& f) {
  Permutes p;
#if defined(__x86_64__) || defined(__i386__)
  if (f.hasFnAttribute("target-features")) {
    llvm::SmallVector<llvm::StringRef, 64> feats;
    f.getFnAttribute("target-features").getValueAsString().split(feats, ',');
    for (llvm::StringRef ft : feats) {
      if (ft == "+avx2") p.avx2 = true;
      if (ft == "+avx512f") p.avx512f = true;
    }
    return p;
  }
  static const Permutes host = [] {
    llvm::StringMap<bool> f = llvm::sys::getHostCPUFeatures();
    return Permutes{f.lookup("avx2"), f.lookup("avx512f")};
  }();
  p = host;
#endif
  return p;
}

// elems[idx mod 16] in each lane read from the module's constant array `name` (defined on first
// use): a load for one lane, a gather for a vector. The fallback of the lookups below.
Value* lookup16_memory(const Ctx& e, const char* name, const std::vector<llvm::Constant*>& elems, Value* idx) {
  llvm::IRBuilder<>& b = e.b;
  llvm::Type* st = e.ft->getScalarType();
  llvm::Align align(st->getPrimitiveSizeInBits() / 8);
  llvm::Module& mod = *b.GetInsertBlock()->getModule();
  llvm::GlobalVariable* g = mod.getNamedGlobal(name);
  if (!g) {
    auto* at = llvm::ArrayType::get(st, elems.size());
    g = new llvm::GlobalVariable(mod, at, true, llvm::GlobalValue::PrivateLinkage, llvm::ConstantArray::get(at, elems), name);
    g->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  }
  Value* ptr = b.CreateGEP(st, g, b.CreateAnd(idx, e.ci(15)));
  if (!e.ft->isVectorTy()) return b.CreateAlignedLoad(st, ptr, align);
  return b.CreateMaskedGather(e.ft, ptr, align);
}

// f applied to each 8-lane half of the 16-lane idx, the results joined again.
Value* by_halves(llvm::IRBuilder<>& b, Value* idx, const std::function<Value*(Value*)>& f) {
  auto part = [&](int from) {
    llvm::SmallVector<int, 8> m;
    for (int i = 0; i < 8; ++i) m.push_back(from + i);
    return f(b.CreateShuffleVector(idx, m));
  };
  llvm::SmallVector<int, 16> all;
  for (int i = 0; i < 16; ++i) all.push_back(i);
  return b.CreateShuffleVector(part(0), part(8), all);
}

}  // namespace

Value* lookup16(const Ctx& e, const char* name, const std::array<uint32_t, 16>& tab, Value* idx) {
  llvm::IRBuilder<>& b = e.b;
  auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(e.ft);
  unsigned n = vt ? vt->getNumElements() : 1;
  auto words = [&](unsigned from, unsigned count) {
    std::vector<llvm::Constant*> c;
    for (unsigned i = 0; i < count; ++i)
      c.push_back(llvm::ConstantExpr::getBitCast(b.getInt32(tab[from + i]), b.getFloatTy()));
    return llvm::ConstantVector::get(c);
  };
  Permutes cpu = target_permutes(*b.GetInsertBlock()->getParent());
  if (n == 16 && cpu.avx512f)
    return b.CreateIntrinsic(llvm::Intrinsic::x86_avx512_permvar_sf_512, {}, {words(0, 16), idx});
  if (n == 8 && cpu.avx2) {
    Value* lo = b.CreateIntrinsic(llvm::Intrinsic::x86_avx2_permps, {}, {words(0, 8), idx});
    Value* hi = b.CreateIntrinsic(llvm::Intrinsic::x86_avx2_permps, {}, {words(8, 8), idx});
    return e.sel(b.CreateICmpNE(b.CreateAnd(idx, e.ci(8)), e.ci(0)), hi, lo);
  }
  if (n == 16 && cpu.avx2) {
    // Two halves of 8 lanes, each as above.
    Ctx half(b, llvm::FixedVectorType::get(b.getFloatTy(), 8));
    return by_halves(b, idx, [&](Value* i) { return lookup16(half, name, tab, i); });
  }
  std::vector<llvm::Constant*> elems;
  for (uint32_t w : tab) elems.push_back(llvm::ConstantExpr::getBitCast(b.getInt32(w), b.getFloatTy()));
  return lookup16_memory(e, name, elems, idx);
}

Value* lookup16_f64(const Ctx& e, const char* name, const std::array<double, 16>& tab, Value* idx) {
  llvm::IRBuilder<>& b = e.b;
  auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(e.ft);
  unsigned n = vt ? vt->getNumElements() : 1;
  Permutes cpu = target_permutes(*b.GetInsertBlock()->getParent());
  if (n == 8 && cpu.avx512f) {
    auto half = [&](unsigned from) {
      std::vector<llvm::Constant*> c;
      for (unsigned i = 0; i < 8; ++i) c.push_back(llvm::ConstantFP::get(b.getDoubleTy(), tab[from + i]));
      return llvm::ConstantVector::get(c);
    };
    return b.CreateIntrinsic(llvm::Intrinsic::x86_avx512_vpermi2var_pd_512, {}, {half(0), idx, half(8)});
  }
  if (n == 16 && cpu.avx512f) {
    // Two halves of 8 lanes (f32 functions that compute in double: pow).
    Ctx half(b, llvm::FixedVectorType::get(b.getDoubleTy(), 8));
    return by_halves(b, idx, [&](Value* i) { return lookup16_f64(half, name, tab, i); });
  }
  std::vector<llvm::Constant*> elems;
  for (double v : tab) elems.push_back(llvm::ConstantFP::get(b.getDoubleTy(), v));
  return lookup16_memory(e, name, elems, idx);
}

Value* all_lanes(const Ctx& e, Value* mask) {
  return e.ft->isVectorTy() ? e.b.CreateAndReduce(mask) : mask;
}

Value* all_below(const Ctx& e, Value* x, double bound) {
  return all_lanes(e, e.b.CreateICmpULT(e.abs_bits(x), e.ci(e.bits_of(bound))));
}

Value* all_positive_normal(const Ctx& e, Value* x) {
  int64_t min_normal = int64_t{1} << e.mbits, inf_bits = int64_t{2 * e.bias + 1} << e.mbits;
  return all_lanes(e, e.b.CreateICmpULT(e.b.CreateSub(e.bits(x), e.ci(min_normal)), e.ci(inf_bits - min_normal)));
}

}  // namespace arrayc::detail::vmath
