// Accuracy and vectorization of the emitted math functions (lib/codegen/cpu/vmath/vmath.*). Each function
// is JIT-compiled inside a loop out[i] = fn(a[i], b[i]) at -O3 for the host CPU, so the vector
// variants (and the scalar remainder) are what is measured; references are the long double libm
// functions for f64 and the double ones for f32.
#include "codegen/cpu/vmath/vmath.h"
#include "backend/host/host_jit.h"

#include <gtest/gtest.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "support/ulp.h"
namespace {

using arrayc::detail::emit_math_call;
using arrayc::detail::MathFn;
using arrayc::detail::MathOptions;

using KernelFn = void (*)(const void*, const void*, void*, int64_t);

struct Kernel {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  KernelFn fn = nullptr;
  std::string ir;  // optimized IR of the loop function
  bool avx512 = false;
};

// Builds, optimizes (-O3, host CPU) and JIT-compiles
//   void kernel(const T* a, const T* b, T* out, i64 n) { for i < n: out[i] = fn(a[i], b[i]) }
// width 0: the loop of emit_math_call's scalar call, vectorized by LLVM; width 1, 4, 8, 16: a
// loop over whole vectors of that width (n a multiple of it) calling that variant itself.
// cpu: an LLVM CPU name to compile for instead of the host (x86-64-v3: AVX2); such code runs only
// where the host has its features.
std::unique_ptr<Kernel> build_kernel(MathFn fn, bool f64, bool fast, unsigned width = 0,
                                     const std::string& cpu = "") {
  static bool initialized = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)initialized;
  auto jtmb = llvm::cantFail(llvm::orc::JITTargetMachineBuilder::detectHost());
  if (!cpu.empty()) {
    jtmb = llvm::orc::JITTargetMachineBuilder(jtmb.getTargetTriple());
    jtmb.setCPU(cpu).addFeatures(arrayc::detail::cpu_features(cpu));
  }
  jtmb.setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  auto tm = llvm::cantFail(jtmb.createTargetMachine());

  auto ctx = std::make_unique<llvm::LLVMContext>();
  auto mod = std::make_unique<llvm::Module>("vmath_test", *ctx);
  mod->setDataLayout(tm->createDataLayout());
  mod->setTargetTriple(tm->getTargetTriple().str());
  llvm::IRBuilder<> b(*ctx);
  llvm::Type* t = f64 ? b.getDoubleTy() : b.getFloatTy();
  llvm::Type* ptr = b.getPtrTy();
  auto* fty = llvm::FunctionType::get(b.getVoidTy(), {ptr, ptr, ptr, b.getInt64Ty()}, false);
  auto* f = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, "kernel", *mod);
  auto k = std::make_unique<Kernel>();
  std::string features = tm->getTargetFeatureString().str();
  k->avx512 = features.find("+avx512f") != std::string::npos;
  f->addFnAttr("target-cpu", tm->getTargetCPU());
  f->addFnAttr("target-features", features);
  if (k->avx512) f->addFnAttr("prefer-vector-width", "512");
  for (unsigned i = 0; i < 3; ++i) f->addParamAttr(i, llvm::Attribute::NoAlias);

  auto* entry = llvm::BasicBlock::Create(*ctx, "entry", f);
  auto* loop = llvm::BasicBlock::Create(*ctx, "loop", f);
  auto* exit = llvm::BasicBlock::Create(*ctx, "exit", f);
  b.SetInsertPoint(entry);
  llvm::Value* n = f->getArg(3);
  b.CreateCondBr(b.CreateICmpSGT(n, b.getInt64(0)), loop, exit);
  b.SetInsertPoint(loop);
  auto* i = b.CreatePHI(b.getInt64Ty(), 2);
  i->addIncoming(b.getInt64(0), entry);
  llvm::Type* vt = width > 1 ? llvm::FixedVectorType::get(t, width) : t;
  llvm::Align elem(f64 ? 8 : 4);  // the arrays are aligned for their elements only
  std::vector<llvm::Value*> args;
  args.push_back(b.CreateAlignedLoad(vt, b.CreateInBoundsGEP(t, f->getArg(0), i), elem));
  if (fn == MathFn::Pow)
    args.push_back(b.CreateAlignedLoad(vt, b.CreateInBoundsGEP(t, f->getArg(1), i), elem));
  llvm::Value* r;
  if (width == 0) {
    r = emit_math_call(b, fn, args, MathOptions{fast});
  } else {
    // emit_math_call defines every variant; call the one of this width instead of the scalar.
    std::vector<llvm::Value*> scalars(args.size(), llvm::ConstantFP::get(t, 0.5));
    auto* call = llvm::cast<llvm::CallInst>(emit_math_call(b, fn, scalars, MathOptions{fast}));
    std::string variant = call->getCalledFunction()->getName().str();
    if (width > 1) variant += "_v" + std::to_string(width);
    call->eraseFromParent();
    r = b.CreateCall(mod->getFunction(variant), args);
  }
  b.CreateAlignedStore(r, b.CreateInBoundsGEP(t, f->getArg(2), i), elem);
  llvm::Value* next = b.CreateAdd(i, b.getInt64(std::max(width, 1u)));
  i->addIncoming(next, loop);
  b.CreateCondBr(b.CreateICmpSLT(next, n), loop, exit);
  b.SetInsertPoint(exit);
  b.CreateRetVoid();
  EXPECT_FALSE(llvm::verifyModule(*mod, &llvm::errs()));

  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(tm.get());
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3).run(*mod, mam);
  llvm::raw_string_ostream os(k->ir);
  mod->getFunction("kernel")->print(os);

  k->jit = llvm::cantFail(llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(jtmb).create());
  char prefix = k->jit->getDataLayout().getGlobalPrefix();
  k->jit->getMainJITDylib().addGenerator(llvm::cantFail(
      llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(prefix)));
  llvm::cantFail(k->jit->addIRModule(llvm::orc::ThreadSafeModule(std::move(mod), std::move(ctx))));
  k->fn = llvm::cantFail(k->jit->lookup("kernel")).toPtr<KernelFn>();
  return k;
}

const Kernel& kernel(MathFn fn, bool f64, bool fast = false, unsigned width = 0,
                     const std::string& cpu = "") {
  static std::map<std::tuple<MathFn, bool, bool, unsigned, std::string>, std::unique_ptr<Kernel>> cache;
  auto& slot = cache[{fn, f64, fast, width, cpu}];
  if (!slot) slot = build_kernel(fn, f64, fast, width, cpu);
  return *slot;
}

template <class T>
std::vector<T> run(MathFn fn, const std::vector<T>& a, const std::vector<T>& b = {},
                   bool fast = false, unsigned width = 0, const std::string& cpu = "") {
  std::vector<T> out(a.size());
  kernel(fn, std::is_same_v<T, double>, fast, width, cpu)
      .fn(a.data(), b.empty() ? a.data() : b.data(), out.data(), static_cast<int64_t>(a.size()));
  return out;
}

template <class T>
T run1(MathFn fn, T x, T y = 0) {
  return run<T>(fn, {x}, {y})[0];
}

// The reference: double libm for f32 results, long double libm for f64 results.
template <class T>
long double reference(MathFn fn, T x, T y) {
  if constexpr (std::is_same_v<T, float>) {
    double a = x, b = y;
    switch (fn) {
      case MathFn::Exp: return std::exp(a);
      case MathFn::Log: return std::log(a);
      case MathFn::Sin: return std::sin(a);
      case MathFn::Cos: return std::cos(a);
      case MathFn::Tanh: return std::tanh(a);
      case MathFn::Pow: return std::pow(a, b);
      case MathFn::Sqrt: return std::sqrt(a);
    }
  } else {
    long double a = x, b = y;
    switch (fn) {
      case MathFn::Exp: return expl(a);
      case MathFn::Log: return logl(a);
      case MathFn::Sin: return sinl(a);
      case MathFn::Cos: return cosl(a);
      case MathFn::Tanh: return tanhl(a);
      case MathFn::Pow: return powl(a, b);
      case MathFn::Sqrt: return sqrtl(a);
    }
  }
  return 0;
}

using arrayc_test::ulp_error;

template <class T>
using UInt = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;

template <class T>
T from_bits(UInt<T> u) {
  T v;
  std::memcpy(&v, &u, sizeof v);
  return v;
}

// Random bit patterns: every sign, exponent and mantissa, NaNs and infinities included.
template <class T>
void add_random_bits(std::vector<T>& v, size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (size_t i = 0; i < n; ++i) v.push_back(from_bits<T>(static_cast<UInt<T>>(rng())));
}

template <class T>
void add_uniform(std::vector<T>& v, double lo, double hi, size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> d(lo, hi);
  for (size_t i = 0; i < n; ++i) v.push_back(static_cast<T>(d(rng)));
}

// Log-uniform magnitudes of both signs between 2^lo and 2^hi.
template <class T>
void add_log_uniform(std::vector<T>& v, double lo, double hi, size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> d(lo, hi);
  for (size_t i = 0; i < n; ++i) {
    T x = static_cast<T>(std::exp2(d(rng)));
    v.push_back(i % 2 ? -x : x);
  }
}

template <class T>
void add_edges(std::vector<T>& v) {
  using lim = std::numeric_limits<T>;
  for (T x : {T(0), lim::denorm_min(), lim::min(), lim::epsilon(), T(0.5), T(1), T(2), T(10),
              lim::max(), lim::infinity(), lim::quiet_NaN()}) {
    v.push_back(x);
    v.push_back(-x);
    v.push_back(std::nextafter(x, T(0)));
    v.push_back(std::nextafter(x, lim::infinity()));
  }
}

struct Worst {
  double ulp = 0;
  long double x = 0, y = 0, got = 0, ref = 0;
};

template <class T>
Worst measure(MathFn fn, const std::vector<T>& a, const std::vector<T>& b = {},
              bool fast = false) {
  std::vector<T> out = run(fn, a, b, fast);
  Worst w;
  for (size_t i = 0; i < a.size(); ++i) {
    T y = b.empty() ? T(0) : b[i];
    long double ref = reference<T>(fn, a[i], y);
    double err = ulp_error(out[i], ref);
    if (!(err <= w.ulp)) w = {err, a[i], y, out[i], ref};
  }
  return w;
}

const char* name(MathFn fn) { return arrayc::detail::math_fn_name(fn); }

template <class T>
void expect_ulp(MathFn fn, const std::vector<T>& a, const std::vector<T>& b, double bound,
                bool fast = false) {
  Worst w = measure(fn, a, b, fast);
  std::printf("  %s%s %s: max %.3f ulp over %zu inputs (x=%.17Lg y=%.17Lg got=%.17Lg ref=%.17Lg)\n",
              name(fn), fast ? " fast" : "", sizeof(T) == 4 ? "f32" : "f64", w.ulp, a.size(), w.x,
              w.y, w.got, w.ref);
  EXPECT_LE(w.ulp, bound) << name(fn) << " x=" << static_cast<double>(w.x)
                          << " y=" << static_cast<double>(w.y);
}

constexpr double kBound = 4;
constexpr size_t kN32 = 1 << 20;  // samples per f32 test
constexpr size_t kN64 = 1 << 18;  // per f64 test (long double references are slow)

template <class T>
std::vector<T> exp_inputs(size_t n) {
  std::vector<T> v;
  bool f64 = sizeof(T) == 8;
  add_random_bits(v, n / 4, 1);
  add_uniform(v, f64 ? -750 : -110, f64 ? 715 : 95, n / 2, 2);
  add_uniform(v, -1, 1, n / 8, 3);
  add_log_uniform(v, -80, 3, n / 8, 4);
  add_edges(v);
  for (double x : {88.7, 88.72, 88.73, -87.3, -103.2, -103.3, -103.9, -104.0, 709.78, 709.79,
                   -708.39, -744.4, -745.13, -745.14, -746.0})
    v.push_back(static_cast<T>(x));
  return v;
}

template <class T>
std::vector<T> log_inputs(size_t n) {
  std::vector<T> v;
  add_random_bits(v, n / 2, 5);
  for (T& x : v) x = std::fabs(x);
  add_uniform(v, 0.5, 2, n / 4, 6);
  add_uniform(v, 1 - 1e-3, 1 + 1e-3, n / 8, 7);
  add_log_uniform(v, -1100, 1024, n / 8, 8);
  for (T& x : v) x = std::fabs(x);
  add_edges(v);
  return v;
}

template <class T>
std::vector<T> trig_inputs(size_t n) {
  std::vector<T> v;
  add_random_bits(v, n / 4, 9);
  add_uniform(v, -10, 10, n / 4, 10);
  add_uniform(v, -1e6, 1e6, n / 8, 11);
  add_log_uniform(v, -30, 1024, n / 4, 12);
  // Around the switch to the exact reduction, and near multiples of pi/2.
  add_uniform(v, 0x1p30 * 0.99, 0x1p30 * 1.01, n / 32, 13);
  add_uniform(v, 0x1p40 * 0.99, 0x1p40 * 1.01, n / 32, 14);
  for (int k = -2000; k <= 2000; ++k) {
    T x = static_cast<T>(k * 1.5707963267948966192L);
    v.push_back(x);
    v.push_back(std::nextafter(x, T(0)));
  }
  add_edges(v);
  return v;
}

template <class T>
std::vector<T> tanh_inputs(size_t n) {
  std::vector<T> v;
  add_random_bits(v, n / 4, 15);
  add_uniform(v, -25, 25, n / 4, 16);
  add_uniform(v, -1, 1, n / 4, 17);
  add_log_uniform(v, -60, 5, n / 4, 18);
  // f32 switches from its polynomial to 1 - 2/(exp(2|x|) + 1) at 0.625 and saturates at 9.1.
  for (T b : {T(0.625), T(9.1)}) {
    T lo = b, hi = b;
    for (int i = 0; i < 64; ++i, lo = std::nextafter(lo, T(0)), hi = std::nextafter(hi, T(1e30)))
      v.insert(v.end(), {lo, -lo, hi, -hi});
  }
  add_edges(v);
  return v;
}

// pow: pairs (x, y) covering random bit patterns, moderate values, bases near 1 with large
// exponents, negative bases with integer exponents, and results near and far past
// overflow/underflow.
template <class T>
void pow_inputs(size_t n, std::vector<T>& x, std::vector<T>& y) {
  bool f64 = sizeof(T) == 8;
  std::mt19937_64 rng(19);
  std::uniform_real_distribution<double> u(0, 1);
  auto bits = [&] { return from_bits<T>(static_cast<UInt<T>>(rng())); };
  double max_log = f64 ? 709.0 : 88.0;
  for (size_t i = 0; i < n; ++i) {
    T a, b;
    switch (i % 7) {
      case 0: a = bits(); b = bits(); break;
      case 1: a = static_cast<T>(u(rng) * 10); b = static_cast<T>(u(rng) * 40 - 20); break;
      case 2:  // x near 1, |y log x| up to the overflow threshold
        a = static_cast<T>(1 + (u(rng) - 0.5) * 1e-2);
        b = static_cast<T>((u(rng) * 2 - 1) * max_log / std::fabs(std::log(double(a))));
        break;
      case 3:  // negative base, integer exponent
        a = static_cast<T>(-(u(rng) * 4)); b = static_cast<T>(std::floor(u(rng) * 120 - 60)); break;
      case 4: {  // result magnitude anywhere in the range, subnormal included
        a = std::fabs(bits());
        double la = std::log(double(a));
        if (!std::isfinite(la) || la == 0) la = 1;
        b = static_cast<T>((u(rng) * 2.2 - 1.1) * max_log * (f64 ? 1.05 : 1.18) / la);
        break;
      }
      case 5: {  // far past overflow and underflow (|y log x| up to 6x the threshold), x near
                 // sqrt(2) and 1/sqrt(2), where f64 log's series tail is largest: that tail in
                 // y * log's low part once pulled an overflowing result back to a finite one
        a = static_cast<T>((i / 7 % 2 ? 1.41421356 : 0.70710678) * (1 + (u(rng) - 0.5) * 0.02));
        b = static_cast<T>((u(rng) * 12 - 6) * max_log / std::fabs(std::log(double(a))));
        if (i / 7 % 3 == 0) a = -a, b = std::round(b);  // negative bases: integer exponents
        break;
      }
      default: a = std::fabs(bits()); b = static_cast<T>(u(rng) * 4 - 2); break;
    }
    x.push_back(a);
    y.push_back(b);
  }
}

template <class T>
void check_exp() {
  expect_ulp<T>(MathFn::Exp, exp_inputs<T>(sizeof(T) == 4 ? kN32 : kN64), {}, kBound);
}
template <class T>
void check_log() {
  expect_ulp<T>(MathFn::Log, log_inputs<T>(sizeof(T) == 4 ? kN32 : kN64), {}, kBound);
}
template <class T>
void check_trig(MathFn fn) {
  expect_ulp<T>(fn, trig_inputs<T>(sizeof(T) == 4 ? kN32 : kN64), {}, kBound);
}
template <class T>
void check_tanh() {
  expect_ulp<T>(MathFn::Tanh, tanh_inputs<T>(sizeof(T) == 4 ? kN32 : kN64), {}, kBound);
}
template <class T>
void check_pow() {
  std::vector<T> x, y;
  pow_inputs<T>(sizeof(T) == 4 ? kN32 : kN64, x, y);
  expect_ulp<T>(MathFn::Pow, x, y, kBound);
}

TEST(VMath, ExpF32UlpBound) { check_exp<float>(); }
TEST(VMath, ExpF64UlpBound) { check_exp<double>(); }
TEST(VMath, LogF32UlpBound) { check_log<float>(); }
TEST(VMath, LogF64UlpBound) { check_log<double>(); }
TEST(VMath, SinF32UlpBound) { check_trig<float>(MathFn::Sin); }
TEST(VMath, SinF64UlpBound) { check_trig<double>(MathFn::Sin); }
TEST(VMath, CosF32UlpBound) { check_trig<float>(MathFn::Cos); }
TEST(VMath, CosF64UlpBound) { check_trig<double>(MathFn::Cos); }
// f32 sin/cos take an all-float path when every lane of a vector has |x| < 2^22
// (kSmallTrigF32 in vmath/trig.cpp) and the double path otherwise: a sweep over every 2003rd float
// with |x| <= 2^22 (both signs), every float in [2^22 - 2^15, 2^22 + 2^15] (the switch, both
// paths, vectors mixing lanes below and above it), near multiples of pi/2 below the bound, and
// normal-distributed inputs (the common case).
std::vector<float> trig_small_f32_inputs() {
  std::vector<float> v;
  constexpr float kB = 0x1p22f;
  uint32_t top;
  std::memcpy(&top, &kB, 4);
  for (uint32_t u = 0; u <= top; u += 2003) {
    float x = from_bits<float>(u);
    v.push_back(x);
    v.push_back(-x);
  }
  for (float x = kB - 0x1p15f; x <= kB + 0x1p15f; x = std::nextafter(x, kB + 0x1p16f)) {
    v.push_back(x);
    v.push_back(-x);
  }
  for (int64_t k = 1; k < 2670000; k += 997) {  // k*pi/2 up to about 2^22
    float x = static_cast<float>(k * 1.5707963267948966192L);
    v.push_back(x);
    v.push_back(std::nextafter(x, 0.0f));
    v.push_back(std::nextafter(x, kB));
  }
  std::mt19937_64 rng(24);
  std::normal_distribution<float> nd;
  for (int i = 0; i < (1 << 18); ++i) v.push_back(nd(rng));
  add_edges(v);
  return v;
}

TEST(VMath, SinCosF32SmallArgumentPath) {
  std::vector<float> v = trig_small_f32_inputs();
  for (MathFn fn : {MathFn::Sin, MathFn::Cos}) expect_ulp<float>(fn, v, {}, kBound);
}

// The tiny path (every lane below 2^10), where sin and cos alone reduce modulo pi and evaluate
// one polynomial (vmath's trig_one): a sweep of the whole range, and every multiple of pi/4 below
// 2^10 with its float neighbours: next to odd multiples of pi/2 (sin) and multiples of pi (cos)
// q may be one off (x/pi is rounded once) and |r| a little above pi/2. Every float below 2^10
// was checked once, outside the suite (docs/math_accuracy.md). The packed sincos's own tiny path
// (modulo pi/2, both polynomials) is tested through kernels (tests/e2e/sincos_test.cpp).
TEST(VMath, SinCosF32TinyArgumentPath) {
  std::vector<float> v;
  constexpr float kB = 0x1p10f;
  uint32_t top;
  std::memcpy(&top, &kB, 4);
  for (uint32_t u = 0; u < top; u += 1009) {
    float x = from_bits<float>(u);
    v.push_back(x);
    v.push_back(-x);
  }
  for (int64_t h = 1; h < 1304; ++h) {  // h * pi/4 below 2^10: odd h are the half-integers
    float x = static_cast<float>(h * 0.78539816339744830962L);
    for (int step = 0; step < 4; ++step) {
      v.push_back(x);
      v.push_back(-x);
      x = std::nextafter(x, kB);
    }
  }
  std::mt19937_64 rng(25);
  std::normal_distribution<float> nd;
  for (int i = 0; i < (1 << 18); ++i) v.push_back(nd(rng));
  while (v.size() % 16) v.push_back(0.5f);  // whole vectors, every lane below 2^10
  for (MathFn fn : {MathFn::Sin, MathFn::Cos}) expect_ulp<float>(fn, v, {}, kBound);
}

// exp reads 2^(j/16) from a table: f32 by a vpermps for 16 lanes (AVX-512), two for 8 (AVX2);
// f64 by vpermi2pd for 8 lanes (AVX-512); else a gather, and a load for one. Every variant and the
// scalar function give the same bits, and a lane's result does not depend on its neighbours:
// vectors with one lane out of the fast range (|x| >= 87 for f32, 708 for f64; NaN, inf) take the
// clamped path, which must round in-range lanes the same way.
// fn gives the scalar function's bits at every vector width, and keeps giving them to the lanes
// beside one that leaves the function's fast path: lane 0 of every widest vector is set to each
// (x, y) of `outside`, whose own result must be within the bound (NaN where the reference is).
template <class T>
void check_same_bits(MathFn fn, std::vector<T> x, std::vector<T> y, const std::vector<std::pair<T, T>>& outside) {
  constexpr bool f64 = sizeof(T) == 8;
  const unsigned widest = f64 ? 8 : 16;
  while (x.size() % 16) {
    x.push_back(T(0.25));
    if (!y.empty()) y.push_back(T(0.5));
  }
  std::vector<T> want = run<T>(fn, x, y, false, 1);
  auto compare = [&](const std::vector<T>& got, const std::string& what, bool skip_lane0) {
    int bad = 0;
    for (size_t i = 0; i < x.size() && bad < 5; ++i) {
      if (skip_lane0 && i % widest == 0) continue;
      if (std::memcmp(&got[i], &want[i], sizeof(T)) != 0)
        ++bad, ADD_FAILURE() << what << ": " << name(fn) << "(" << x[i] << (y.empty() ? "" : ", ")
                             << (y.empty() ? "" : std::to_string(y[i])) << ") = " << got[i] << ", scalar " << want[i];
    }
  };
  for (unsigned width : {0u, 2u, 4u, 8u, 16u}) {
    if ((width == 2 && !f64) || (width == 16 && f64)) continue;
    compare(run<T>(fn, x, y, false, width), "width " + std::to_string(width), false);
  }
  for (auto [ox, oy] : outside) {
    std::vector<T> wx = x, wy = y;
    for (size_t i = 0; i < wx.size(); i += widest) {
      wx[i] = ox;
      if (!wy.empty()) wy[i] = oy;
    }
    std::vector<T> got = run<T>(fn, wx, wy, false, widest);
    std::ostringstream what;
    what << "beside (" << ox << ", " << oy << ")";
    compare(got, what.str(), true);
    long double ref = reference<T>(fn, ox, oy);
    if (std::isnan(ref)) EXPECT_TRUE(std::isnan(got[0])) << what.str();
    else EXPECT_LE(ulp_error(got[0], ref), kBound) << what.str();
  }
}

template <class T>
void check_exp_same_bits() {
  constexpr bool f64 = sizeof(T) == 8;
  constexpr T fast = f64 ? 708 : 87;
  std::vector<T> v;
  add_uniform(v, -fast, fast, 1 << 16, 31);
  add_uniform(v, -1, 1, 1 << 12, 32);
  for (T x : {T(0), T(-0.0), T(fast - 0.01), T(-fast + 0.01), T(0x1.5bf0a8p-5), T(-0x1.5bf0a8p-5), T(1e-30), T(-1e-30),
              T(16), T(-16), std::nextafter(T(16), T(0)), std::nextafter(T(-16), T(0))})
    v.push_back(x);
  // f32 vectors with every lane below 16 reduce in one step (kModerateF32); a lane of 20 or -16
  // sends the others below 16 to the path that picks the reduction lane by lane.
  std::vector<std::pair<T, T>> outside = {{T(20), T(0)}, {T(-16), T(0)}};
  for (T o : {T(f64 ? 720 : 100), T(f64 ? -720 : -100), fast, -fast, T(f64 ? -745 : -103.5),
              std::numeric_limits<T>::infinity(), std::numeric_limits<T>::quiet_NaN()})
    outside.push_back({o, T(0)});
  check_same_bits<T>(MathFn::Exp, v, {}, outside);
}

// log's fast path takes vectors of positive normal numbers; pow's, positive normal x with
// finite y.
template <class T>
void check_log_pow_same_bits() {
  using lim = std::numeric_limits<T>;
  std::vector<T> x, y;
  add_log_uniform(x, lim::min_exponent, lim::max_exponent - 1, 1 << 14, 41);
  add_uniform(x, 0.5, 2, 1 << 14, 42);
  for (T& v : x) v = std::fabs(v);
  for (T v : {T(1), lim::min(), lim::max(), T(1) - lim::epsilon(), T(1) + lim::epsilon()}) x.push_back(v);
  const T inf = lim::infinity(), nan = lim::quiet_NaN(), sub = lim::min() / 4;
  std::vector<std::pair<T, T>> log_out;
  for (T o : {T(0), T(-0.0), T(-1), sub, lim::denorm_min(), inf, -inf, nan}) log_out.push_back({o, T(0)});
  check_same_bits<T>(MathFn::Log, x, {}, log_out);
  // pow: |y log x| kept below the overflow limits, so that every result is finite.
  x.resize(1 << 14);
  for (T& v : x) v = std::clamp(v, T(1e-5), T(1e5));
  add_uniform(y, -4, 4, x.size(), 43);
  check_same_bits<T>(MathFn::Pow, x, y,
                     {{T(-2), T(3)}, {T(-2), T(0.5)}, {T(0), T(2)}, {T(0), T(-1)}, {inf, T(1)}, {sub, T(0.5)},
                      {T(2), inf}, {T(0.5), -inf}, {nan, T(1)}, {T(1), nan}, {T(2), T(0)}});
}

// f64 sin and cos alone (one polynomial after a reduction modulo pi, clamped to [-1, 1]): every
// vector width gives the scalar function's bits, and a huge, infinite or NaN lane (the exact
// reduction for that lane alone) leaves its neighbours' bits alone.
void check_trig_f64_same_bits(MathFn fn) {
  std::vector<double> v;
  add_uniform(v, -20, 20, 1 << 14, 51);
  add_log_uniform(v, -40, 29, 1 << 13, 52);
  for (int k = -200; k <= 200; ++k) {
    double x = k * 1.5707963267948966;
    v.insert(v.end(), {x, std::nextafter(x, -1e300), std::nextafter(x, 1e300)});
  }
  for (double x : {0.0, -0.0, 1e-9, -1e-9, 1073741823.0, -1073741823.0}) v.push_back(x);
  const double inf = std::numeric_limits<double>::infinity();
  check_same_bits<double>(fn, v, {},
                          {{1e300, 0}, {-0x1p30 * 1.5, 0}, {inf, 0}, {-inf, 0},
                           {std::numeric_limits<double>::quiet_NaN(), 0}});
}

// f32 tanh blends two pieces lane by lane (below and above 0.625); neither branches on its
// neighbours, and the 16-lane table lookup of exp's gives the scalar load's bits.
template <class T>
void check_tanh_same_bits() {
  std::vector<T> v;
  add_uniform(v, -10, 10, 1 << 14, 61);
  add_uniform(v, -1, 1, 1 << 12, 62);
  for (T x : {T(0), T(-0.0), T(0.625), T(-0.625), std::nextafter(T(0.625), T(0)), T(9.1), T(-9.1), T(20),
              T(1e-30), T(-1e-30)})
    v.push_back(x);
  const T inf = std::numeric_limits<T>::infinity();
  check_same_bits<T>(MathFn::Tanh, v, {}, {{inf, 0}, {-inf, 0}, {std::numeric_limits<T>::quiet_NaN(), 0}, {T(1e30), 0}});
}

TEST(VMath, TanhSameBitsAtEveryWidthAndNeighbourhood) {
  check_tanh_same_bits<float>();
  check_tanh_same_bits<double>();
}

TEST(VMath, SinCosF64SameBitsAtEveryWidthAndNeighbourhood) {
  check_trig_f64_same_bits(MathFn::Sin);
  check_trig_f64_same_bits(MathFn::Cos);
}
TEST(VMath, ExpF32SameBitsAtEveryWidthAndNeighbourhood) { check_exp_same_bits<float>(); }
TEST(VMath, ExpF64SameBitsAtEveryWidthAndNeighbourhood) { check_exp_same_bits<double>(); }
TEST(VMath, LogPowF32SameBitsAtEveryWidthAndNeighbourhood) { check_log_pow_same_bits<float>(); }
TEST(VMath, LogPowF64SameBitsAtEveryWidthAndNeighbourhood) { check_log_pow_same_bits<double>(); }

// On an AVX2 CPU without AVX-512 the 8- and 16-lane variants of f32 exp and log look their
// tables up with vpermps pairs (the 16-lane one as two halves), not with a gather; the bits stay
// the scalar function's.
TEST(VMath, ExpLogF32Avx2LookupsSameBits) {
  if (!__builtin_cpu_supports("avx2")) GTEST_SKIP() << "no AVX2 on this CPU";
  std::vector<float> v;
  add_uniform(v, -87, 87, 1 << 14, 33);
  for (float x : {0.0f, -0.0f, 86.99f, -86.99f, 100.0f, -100.0f, 1e-30f, 1e-40f,
                  std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()})
    v.push_back(x);
  while (v.size() % 16) v.push_back(0.25f);
  for (MathFn fn : {MathFn::Exp, MathFn::Log}) {
    std::vector<float> x = v;
    if (fn == MathFn::Log)
      for (size_t i = 0; i < x.size(); i += 2) x[i] = std::exp2(x[i]);  // positive, all binades
    std::vector<float> want = run<float>(fn, x, {}, false, 1);
    for (unsigned width : {8u, 16u}) {
      const Kernel& k = kernel(fn, false, false, width, "x86-64-v3");
      EXPECT_FALSE(k.avx512);
      EXPECT_NE(k.ir.find("llvm.x86.avx2.permps"), std::string::npos) << name(fn) << " width " << width;
      EXPECT_EQ(k.ir.find("masked.gather"), std::string::npos) << name(fn) << " width " << width;
      std::vector<float> got = run<float>(fn, x, {}, false, width, "x86-64-v3");
      int bad = 0;
      for (size_t i = 0; i < x.size() && bad < 5; ++i)
        if (std::memcmp(&got[i], &want[i], 4) != 0)
          ++bad, ADD_FAILURE() << "AVX2, width " << width << ": " << name(fn) << "(" << x[i] << ") = " << got[i]
                               << ", scalar " << want[i];
    }
  }
}

// sin(-0) = -0 on every path, in both modes: for f32 the tiny one (all lanes below 16 or 2^10), the
// small one (some lane up to 2^22), the double one (some lane larger, inf or NaN); for f64 the
// vector one and the one with a huge lane beside (Payne-Hanek for that lane); the scalar functions.
template <class T>
void check_sin_of_minus_zero(std::vector<T> neighbours, unsigned lanes) {
  for (bool fast : {false, true}) {
    for (T neighbour : neighbours) {
      std::vector<T> v(lanes, neighbour);
      v[3] = T(-0.0);
      v[5] = T(0);
      for (unsigned width : {1u, lanes}) {
        std::vector<T> s = run<T>(MathFn::Sin, v, {}, fast, width);
        std::vector<T> c = run<T>(MathFn::Cos, v, {}, fast, width);
        std::string where = "beside " + std::to_string(neighbour) + ", width " + std::to_string(width) +
                            (fast ? ", fast" : "");
        EXPECT_TRUE(s[3] == 0 && std::signbit(s[3])) << where;
        EXPECT_TRUE(s[5] == 0 && !std::signbit(s[5])) << where;
        EXPECT_EQ(c[3], T(1)) << where;
        EXPECT_EQ(c[5], T(1)) << where;
      }
    }
  }
}

TEST(VMath, SinOfMinusZeroOnEveryPath) {
  check_sin_of_minus_zero<float>({0.5f, 100.0f, 3e5f, 1e30f, std::numeric_limits<float>::quiet_NaN()}, 16);
  check_sin_of_minus_zero<double>({0.5, 3e5, 1e200, std::numeric_limits<double>::quiet_NaN()}, 8);
}

TEST(VMath, TanhF32UlpBound) { check_tanh<float>(); }
TEST(VMath, TanhF64UlpBound) { check_tanh<double>(); }
TEST(VMath, PowF32UlpBound) { check_pow<float>(); }
TEST(VMath, PowF64UlpBound) { check_pow<double>(); }

TEST(VMath, SqrtIsCorrectlyRounded) {
  std::vector<float> a;
  add_random_bits(a, 1 << 16, 20);
  std::vector<float> out = run(MathFn::Sqrt, a);
  for (size_t i = 0; i < a.size(); ++i) {
    float want = std::sqrt(a[i]);
    EXPECT_TRUE(out[i] == want || (std::isnan(out[i]) && std::isnan(want))) << a[i];
  }
  EXPECT_TRUE(std::signbit(run1<double>(MathFn::Sqrt, -0.0)));
}

template <class T>
void check_special_values() {
  using lim = std::numeric_limits<T>;
  const T inf = lim::infinity(), nan = lim::quiet_NaN();
  EXPECT_EQ(run1<T>(MathFn::Exp, -inf), T(0));
  EXPECT_EQ(run1<T>(MathFn::Exp, inf), inf);
  EXPECT_TRUE(std::isnan(run1<T>(MathFn::Exp, nan)));
  EXPECT_EQ(run1<T>(MathFn::Exp, T(0)), T(1));
  EXPECT_EQ(run1<T>(MathFn::Exp, lim::max()), inf);
  EXPECT_EQ(run1<T>(MathFn::Exp, -lim::max()), T(0));
  EXPECT_EQ(run1<T>(MathFn::Log, T(0)), -inf);
  EXPECT_EQ(run1<T>(MathFn::Log, T(-0.0)), -inf);
  EXPECT_TRUE(std::isnan(run1<T>(MathFn::Log, T(-1))));
  EXPECT_TRUE(std::isnan(run1<T>(MathFn::Log, -inf)));
  EXPECT_TRUE(std::isnan(run1<T>(MathFn::Log, nan)));
  EXPECT_EQ(run1<T>(MathFn::Log, inf), inf);
  EXPECT_EQ(run1<T>(MathFn::Log, T(1)), T(0));
  for (MathFn fn : {MathFn::Sin, MathFn::Cos, MathFn::Tanh}) {
    EXPECT_TRUE(std::isnan(run1<T>(fn, nan))) << name(fn);
  }
  for (MathFn fn : {MathFn::Sin, MathFn::Cos}) {
    EXPECT_TRUE(std::isnan(run1<T>(fn, inf))) << name(fn);
    EXPECT_TRUE(std::isnan(run1<T>(fn, -inf))) << name(fn);
  }
  for (MathFn fn : {MathFn::Sin, MathFn::Tanh}) {
    T z = run1<T>(fn, T(-0.0));
    EXPECT_TRUE(z == 0 && std::signbit(z)) << name(fn);
    EXPECT_EQ(run1<T>(fn, lim::denorm_min()), lim::denorm_min()) << name(fn);
    EXPECT_EQ(run1<T>(fn, -lim::min()), -lim::min()) << name(fn);
  }
  EXPECT_EQ(run1<T>(MathFn::Cos, T(0)), T(1));
  EXPECT_EQ(run1<T>(MathFn::Tanh, inf), T(1));
  EXPECT_EQ(run1<T>(MathFn::Tanh, -inf), T(-1));
  EXPECT_EQ(run1<T>(MathFn::Tanh, T(30)), T(1));
}

TEST(VMath, SpecialValuesF32) { check_special_values<float>(); }
TEST(VMath, SpecialValuesF64) { check_special_values<double>(); }

// pow over all pairs of special operands against C's pow (glibc follows C99 Annex F): exact
// where C's result is 0, +-1, +-inf or NaN, within the ULP bound otherwise.
template <class T>
void check_pow_special_cases() {
  using lim = std::numeric_limits<T>;
  std::vector<T> vals = {T(0), T(0.5), T(1), T(1.5), T(2), T(3), T(-3), T(0.25), T(2.5), T(1e-3),
                         lim::denorm_min(), lim::min(), lim::max(), lim::infinity(),
                         T(53), T(1) / 3};
  size_t count = vals.size();
  for (size_t i = 0; i < count; ++i) vals.push_back(-vals[i]);
  vals.push_back(lim::quiet_NaN());
  std::vector<T> a, b;
  for (T x : vals)
    for (T y : vals) {
      a.push_back(x);
      b.push_back(y);
    }
  std::vector<T> out = run(MathFn::Pow, a, b);
  for (size_t i = 0; i < a.size(); ++i) {
    T want = std::pow(a[i], b[i]);
    bool special = std::isnan(want) || std::isinf(want) || want == 0 || std::fabs(want) == 1;
    if (special) {
      bool same = std::isnan(want) ? std::isnan(out[i])
                                   : out[i] == want && std::signbit(out[i]) == std::signbit(want);
      EXPECT_TRUE(same) << "pow(" << a[i] << ", " << b[i] << ") = " << out[i] << ", want " << want;
    } else {
      EXPECT_LE(ulp_error(out[i], reference<T>(MathFn::Pow, a[i], b[i])), kBound)
          << "pow(" << a[i] << ", " << b[i] << ")";
    }
  }
}

TEST(VMath, PowSpecialCasesF32) { check_pow_special_cases<float>(); }
TEST(VMath, PowSpecialCasesF64) { check_pow_special_cases<double>(); }

// The point of the library: the loops vectorize at the CPU's full width, AVX2's and AVX-512's
// (compiled for each whatever this machine is; not run).
TEST(VMath, LoopsVectorize) {
  for (const char* cpu : {"x86-64-v3", "x86-64-v4"}) {
    bool avx512 = std::string(cpu) == "x86-64-v4";
    for (MathFn fn : {MathFn::Exp, MathFn::Log, MathFn::Sin, MathFn::Cos, MathFn::Tanh, MathFn::Pow,
                      MathFn::Sqrt}) {
      for (bool f64 : {false, true}) {
        for (bool fast : {false, true}) {
          const Kernel& k = kernel(fn, f64, fast, 0, cpu);
          EXPECT_EQ(k.avx512, avx512);
          const char* want = f64 ? (avx512 ? "<8 x double>" : "<4 x double>") : (avx512 ? "<16 x float>" : "<8 x float>");
          EXPECT_NE(k.ir.find(want), std::string::npos)
              << cpu << " " << name(fn) << (f64 ? " f64" : " f32") << (fast ? " fast" : "") << "\n"
              << k.ir;
        }
      }
    }
  }
}

// Fast mode: sin/cos accurate below 2^30 (no exact reduction beyond), pow f64 error growing
// with |y log x| (documented in docs/math_accuracy.md).
TEST(VMath, FastMode) {
  std::vector<float> xf;
  add_uniform(xf, -1e6, 1e6, 1 << 16, 21);
  add_log_uniform(xf, -30, 29.9, 1 << 16, 22);
  std::vector<double> xd(xf.begin(), xf.end());
  add_log_uniform(xd, -30, 29.9, 1 << 16, 23);
  for (MathFn fn : {MathFn::Sin, MathFn::Cos}) {
    expect_ulp<float>(fn, xf, {}, kBound, true);
    expect_ulp<double>(fn, xd, {}, kBound, true);
  }
  std::vector<double> px, py;
  pow_inputs<double>(1 << 16, px, py);
  expect_ulp<double>(MathFn::Pow, px, py, 4096, true);
}

}  // namespace
