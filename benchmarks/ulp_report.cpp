// Accuracy and throughput report for the emitted math functions (lib/codegen/cpu/vmath/), run by
// hand; the numbers go into docs/math_accuracy.md. It is not part of the CMake build:
//
//   g++ -std=c++20 -O2 -Ilib -Iinclude -I/usr/lib/llvm-19/include lib/codegen/cpu/vmath/*.cpp lib/codegen/llvm_util.cpp
//     lib/codegen/optimize.cpp lib/codegen/cpu/host_passes.cpp lib/support/*.cpp benchmarks/ulp_report.cpp
//     $(/usr/lib/llvm-19/bin/llvm-config --ldflags --libs orcjit native passes --system-libs) -o /tmp/ulp_report
//   /tmp/ulp_report [--stride N] [--range LO HI] [--samples64 N] [--no-accuracy] [--no-throughput]
//                   [--libmvec]
//
// --range LO HI: the f32 rows sweep every N-th float with LO <= abs(x) <= HI (both signs) instead
// of all bit patterns, and the f64 rows are skipped.
//
// Accuracy: every f32 bit pattern (or every N-th) through exp/log/sin/cos/tanh, random f64
// inputs (and random pow pairs), against double / long double libm. Throughput: a JIT-compiled
// loop of 1e7 elements out[i] = fn(in[i]) against the same loop calling glibc's scalar function.
// --libmvec: every row once more for glibc's AVX-512 vector math library (libmvec, the
// _ZGVeN16v_* entry points, called on 16 floats or 8 doubles at a time), on the same inputs:
// the library a C++ programmer could call instead (needs an AVX-512 CPU).
#include "codegen/cpu/host_passes.h"
#include "codegen/cpu/vmath/vmath.h"

#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "../tests/support/ulp.h"
namespace {

using arrayc::detail::MathFn;
using KernelFn = void (*)(const void*, const void*, void*, int64_t);

// ---- glibc's libmvec (AVX-512 variants), as kernels of the same signature -------------------

#if defined(__x86_64__)
#define ULP_AVX512 __attribute__((target("avx512f,avx512dq")))
extern "C" {
ULP_AVX512 __m512 _ZGVeN16v_expf(__m512);
ULP_AVX512 __m512 _ZGVeN16v_logf(__m512);
ULP_AVX512 __m512 _ZGVeN16v_sinf(__m512);
ULP_AVX512 __m512 _ZGVeN16v_cosf(__m512);
ULP_AVX512 __m512 _ZGVeN16v_tanhf(__m512);
ULP_AVX512 __m512 _ZGVeN16vv_powf(__m512, __m512);
ULP_AVX512 __m512d _ZGVeN8v_exp(__m512d);
ULP_AVX512 __m512d _ZGVeN8v_log(__m512d);
ULP_AVX512 __m512d _ZGVeN8v_sin(__m512d);
ULP_AVX512 __m512d _ZGVeN8v_cos(__m512d);
ULP_AVX512 __m512d _ZGVeN8v_tanh(__m512d);
ULP_AVX512 __m512d _ZGVeN8vv_pow(__m512d, __m512d);
}

// out[i] = F(a[i], b[i]) a vector at a time; the last partial vector through a padded copy.
template <typename T, typename V, V (*F)(V, V)>
ULP_AVX512 void mvec_loop(const void* a, const void* b, void* out, int64_t n) {
  constexpr int64_t kW = sizeof(V) / sizeof(T);
  auto* x = static_cast<const T*>(a);
  auto* y = static_cast<const T*>(b);
  auto* o = static_cast<T*>(out);
  int64_t i = 0;
  for (; i + kW <= n; i += kW) {
    V xv, yv, ov;
    std::memcpy(&xv, x + i, sizeof xv);
    std::memcpy(&yv, y + i, sizeof yv);
    ov = F(xv, yv);
    std::memcpy(o + i, &ov, sizeof ov);
  }
  if (i < n) {
    int64_t m = n - i;
    T xs[kW] = {}, ys[kW] = {}, os[kW];
    std::memcpy(xs, x + i, static_cast<size_t>(m) * sizeof(T));
    std::memcpy(ys, y + i, static_cast<size_t>(m) * sizeof(T));
    V xv, yv, ov;
    std::memcpy(&xv, xs, sizeof xv);
    std::memcpy(&yv, ys, sizeof yv);
    ov = F(xv, yv);
    std::memcpy(os, &ov, sizeof ov);
    std::memcpy(o + i, os, static_cast<size_t>(m) * sizeof(T));
  }
}
template <typename V, V (*F)(V)> ULP_AVX512 V unary(V x, V) { return F(x); }

// The libmvec kernel of fn, or null (no AVX-512 here, or no such function).
KernelFn libmvec_kernel(MathFn fn, bool f64) {
  if (!__builtin_cpu_supports("avx512f")) return nullptr;
  switch (fn) {
    case MathFn::Exp: return f64 ? mvec_loop<double, __m512d, unary<__m512d, _ZGVeN8v_exp>>
                                 : mvec_loop<float, __m512, unary<__m512, _ZGVeN16v_expf>>;
    case MathFn::Log: return f64 ? mvec_loop<double, __m512d, unary<__m512d, _ZGVeN8v_log>>
                                 : mvec_loop<float, __m512, unary<__m512, _ZGVeN16v_logf>>;
    case MathFn::Sin: return f64 ? mvec_loop<double, __m512d, unary<__m512d, _ZGVeN8v_sin>>
                                 : mvec_loop<float, __m512, unary<__m512, _ZGVeN16v_sinf>>;
    case MathFn::Cos: return f64 ? mvec_loop<double, __m512d, unary<__m512d, _ZGVeN8v_cos>>
                                 : mvec_loop<float, __m512, unary<__m512, _ZGVeN16v_cosf>>;
    case MathFn::Tanh: return f64 ? mvec_loop<double, __m512d, unary<__m512d, _ZGVeN8v_tanh>>
                                  : mvec_loop<float, __m512, unary<__m512, _ZGVeN16v_tanhf>>;
    case MathFn::Pow: return f64 ? mvec_loop<double, __m512d, _ZGVeN8vv_pow> : mvec_loop<float, __m512, _ZGVeN16vv_powf>;
    case MathFn::Sqrt: return nullptr;
  }
  return nullptr;
}
#else
KernelFn libmvec_kernel(MathFn, bool) { return nullptr; }
#endif

struct Jitted {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  KernelFn fn;
};

// void kernel(const T* a, const T* b, T* out, i64 n) { for i < n: out[i] = fn(a[i], b[i]) },
// optimized by arrayc's -O3 pipeline for the host (512-bit vectors preferred where AVX-512 exists).
Jitted compile(MathFn fn, bool f64, bool fast) {
  auto jtmb = llvm::cantFail(llvm::orc::JITTargetMachineBuilder::detectHost());
  jtmb.setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  auto tm = llvm::cantFail(jtmb.createTargetMachine());
  auto ctx = std::make_unique<llvm::LLVMContext>();
  auto mod = std::make_unique<llvm::Module>("ulp_report", *ctx);
  mod->setDataLayout(tm->createDataLayout());
  mod->setTargetTriple(tm->getTargetTriple().str());
  llvm::IRBuilder<> b(*ctx);
  llvm::Type* t = f64 ? b.getDoubleTy() : b.getFloatTy();
  llvm::Type* ptr = b.getPtrTy();
  auto* f = llvm::Function::Create(
      llvm::FunctionType::get(b.getVoidTy(), {ptr, ptr, ptr, b.getInt64Ty()}, false),
      llvm::Function::ExternalLinkage, "kernel", *mod);
  std::string features = tm->getTargetFeatureString().str();
  f->addFnAttr("target-cpu", tm->getTargetCPU());
  f->addFnAttr("target-features", features);
  if (features.find("+avx512f") != std::string::npos) f->addFnAttr("prefer-vector-width", "512");
  for (unsigned i = 0; i < 3; ++i) f->addParamAttr(i, llvm::Attribute::NoAlias);
  auto* entry = llvm::BasicBlock::Create(*ctx, "entry", f);
  auto* loop = llvm::BasicBlock::Create(*ctx, "loop", f);
  auto* exit = llvm::BasicBlock::Create(*ctx, "exit", f);
  b.SetInsertPoint(entry);
  b.CreateCondBr(b.CreateICmpSGT(f->getArg(3), b.getInt64(0)), loop, exit);
  b.SetInsertPoint(loop);
  auto* i = b.CreatePHI(b.getInt64Ty(), 2);
  i->addIncoming(b.getInt64(0), entry);
  std::vector<llvm::Value*> args{b.CreateLoad(t, b.CreateInBoundsGEP(t, f->getArg(0), i))};
  if (fn == MathFn::Pow) args.push_back(b.CreateLoad(t, b.CreateInBoundsGEP(t, f->getArg(1), i)));
  llvm::Value* r = arrayc::detail::emit_math_call(b, fn, args, {fast});
  b.CreateStore(r, b.CreateInBoundsGEP(t, f->getArg(2), i));
  llvm::Value* next = b.CreateAdd(i, b.getInt64(1));
  i->addIncoming(next, loop);
  b.CreateCondBr(b.CreateICmpSLT(next, f->getArg(3)), loop, exit);
  b.SetInsertPoint(exit);
  b.CreateRetVoid();

  // arrayc's own pipeline (codegen/optimize.cpp, then codegen/cpu/host_passes.cpp), which
  // inlines the vector variants into the vectorized loop as the engine's kernels get them.
  arrayc::detail::optimize_host_module(*mod, *tm, /*stream_stores=*/false);

  Jitted j;
  j.jit = llvm::cantFail(llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(jtmb).create());
  llvm::cantFail(j.jit->addIRModule(llvm::orc::ThreadSafeModule(std::move(mod), std::move(ctx))));
  j.fn = llvm::cantFail(j.jit->lookup("kernel")).toPtr<KernelFn>();
  return j;
}

const char* name(MathFn fn) { return arrayc::detail::math_fn_name(fn); }

long double ref32(MathFn fn, float x, float y) {
  switch (fn) {
    case MathFn::Exp: return std::exp(double(x));
    case MathFn::Log: return std::log(double(x));
    case MathFn::Sin: return std::sin(double(x));
    case MathFn::Cos: return std::cos(double(x));
    case MathFn::Tanh: return std::tanh(double(x));
    case MathFn::Pow: return std::pow(double(x), double(y));
    case MathFn::Sqrt: return std::sqrt(double(x));
  }
  return 0;
}

long double ref64(MathFn fn, double x, double y) {
  switch (fn) {
    case MathFn::Exp: return expl(x);
    case MathFn::Log: return logl(x);
    case MathFn::Sin: return sinl(x);
    case MathFn::Cos: return cosl(x);
    case MathFn::Tanh: return tanhl(x);
    case MathFn::Pow: return powl(x, y);
    case MathFn::Sqrt: return sqrtl(x);
  }
  return 0;
}

using arrayc_test::ulp_error;

// The f32 inputs: every stride-th bit pattern from lo to hi, and with both_signs each negated too
// (--range: lo and hi are the bits of two positive floats).
struct F32Sweep {
  uint64_t stride = 1, lo = 0, hi = 0xffffffffull;
  bool both_signs = false;
};

// The kernel a report measures: arrayc's (kept alive in j), or libmvec's (null: none).
KernelFn subject(Jitted& j, MathFn fn, bool f64, bool fast, bool mvec) {
  if (mvec) return libmvec_kernel(fn, f64);
  j = compile(fn, f64, fast);
  return j.fn;
}
const char* mode(bool fast, bool mvec) { return mvec ? " libmvec" : fast ? " fast" : ""; }

void report_f32(MathFn fn, bool fast, const F32Sweep& sw, bool mvec = false) {
  Jitted j;
  KernelFn k = subject(j, fn, false, fast, mvec);
  if (!k) return;
  constexpr size_t kChunk = 1 << 20;
  std::vector<float> in, out(kChunk);
  double worst = 0;
  float worst_x = 0;
  uint64_t count = 0;
  for (uint64_t u = sw.lo; u <= sw.hi; u += sw.stride) {
    uint32_t bits = static_cast<uint32_t>(u);
    float x;
    std::memcpy(&x, &bits, 4);
    in.push_back(x);
    if (sw.both_signs) in.push_back(-x);
    if (in.size() + 2 > kChunk || u + sw.stride > sw.hi) {
      k(in.data(), in.data(), out.data(), static_cast<int64_t>(in.size()));
      for (size_t i = 0; i < in.size(); ++i) {
        double err = ulp_error(out[i], ref32(fn, in[i], 0));
        if (!(err <= worst)) worst = err, worst_x = in[i];
      }
      count += in.size();
      in.clear();
    }
  }
  std::string what = "bit pattern";
  if (sw.both_signs) {
    float lo, hi;
    uint32_t lb = static_cast<uint32_t>(sw.lo), hb = static_cast<uint32_t>(sw.hi);
    std::memcpy(&lo, &lb, 4);
    std::memcpy(&hi, &hb, 4);
    char buf[96];
    std::snprintf(buf, sizeof buf, "float with abs in [%g, %g]", lo, hi);
    what = buf;
  }
  std::printf("%-5s f32%s  every %llu. %s (%llu inputs)  max %.3f ulp at x=%a\n", name(fn),
              mode(fast, mvec), static_cast<unsigned long long>(sw.stride), what.c_str(),
              static_cast<unsigned long long>(count), worst, worst_x);
  std::fflush(stdout);
}

void report_f64(MathFn fn, bool fast, size_t samples, bool mvec = false) {
  Jitted j;
  KernelFn k = subject(j, fn, true, fast, mvec);
  if (!k) return;
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> a(samples), b(samples), out(samples);
  for (size_t i = 0; i < samples; ++i) {
    uint64_t bits = rng();
    std::memcpy(&a[i], &bits, 8);
    if (i % 2) a[i] = (u(rng) - 0.5) * 40;  // half random bits, half moderate values
    if (fn == MathFn::Log) a[i] = std::fabs(a[i]);
    b[i] = (u(rng) - 0.5) * 200;
    if (fn == MathFn::Pow) {  // |y log x| up to 700: results over the whole range
      a[i] = std::fabs(a[i]);
      b[i] = (u(rng) - 0.5) * 1400 / std::fabs(std::log(a[i]));
    }
  }
  k(a.data(), b.data(), out.data(), static_cast<int64_t>(samples));
  double worst = 0;
  for (size_t i = 0; i < samples; ++i)
    worst = std::max(worst, ulp_error(out[i], ref64(fn, a[i], b[i])));
  std::printf("%-5s f64%s  %zu random inputs  max %.3f ulp\n", name(fn), mode(fast, mvec),
              samples, worst);
  std::fflush(stdout);
}

template <class T>
T libm(MathFn fn, T x, T y) {
  switch (fn) {
    case MathFn::Exp: return std::exp(x);
    case MathFn::Log: return std::log(x);
    case MathFn::Sin: return std::sin(x);
    case MathFn::Cos: return std::cos(x);
    case MathFn::Tanh: return std::tanh(x);
    case MathFn::Pow: return std::pow(x, y);
    case MathFn::Sqrt: return std::sqrt(x);
  }
  return 0;
}

// Elements per ns, best of 7 rounds, for the JIT loop and the same loop calling glibc: over 1e7
// elements (what the array engine sees; partly memory bound) and over 4096 elements repeated
// (in cache: the compute cost alone).
template <class T>
void throughput(MathFn fn, bool fast, bool mvec) {
  constexpr size_t n = 10'000'000, small = 4096;
  std::vector<T> a(n), b(n), out(n);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0, 1);
  for (size_t i = 0; i < n; ++i) {
    bool positive = fn == MathFn::Log || fn == MathFn::Pow;
    a[i] = static_cast<T>(positive ? u(rng) * 100 : (u(rng) - 0.5) * 20);
    b[i] = static_cast<T>((u(rng) - 0.5) * 8);
  }
  // Elements per ns of each kernel over len elements (repeated to n), best of 7 rounds; the
  // kernels take turns within a round, so that a slow spell of a shared machine hits them alike.
  auto rates = [&](size_t len, const std::vector<std::function<void(size_t)>>& bodies) {
    size_t reps = n / len;
    std::vector<double> best(bodies.size(), 1e30);
    for (int round = 0; round < 7; ++round)
      for (size_t k = 0; k < bodies.size(); ++k) {
        auto t0 = std::chrono::steady_clock::now();
        for (size_t r = 0; r < reps; ++r) bodies[k](len);
        auto t1 = std::chrono::steady_clock::now();
        best[k] = std::min(best[k], std::chrono::duration<double, std::nano>(t1 - t0).count());
      }
    for (double& t : best) t = static_cast<double>(len * reps) / t;
    return best;
  };
  Jitted j = compile(fn, sizeof(T) == 8, fast);
  auto call = [&](KernelFn k) {
    return [&, k](size_t len) { k(a.data(), b.data(), out.data(), static_cast<int64_t>(len)); };
  };
  std::vector<std::function<void(size_t)>> bodies{call(j.fn), [&](size_t len) {
                                                    for (size_t i = 0; i < len; ++i) out[i] = libm<T>(fn, a[i], b[i]);
                                                  }};
  if (KernelFn k = mvec ? libmvec_kernel(fn, sizeof(T) == 8) : nullptr) bodies.push_back(call(k));
  std::vector<double> big = rates(n, bodies), hot = rates(small, bodies);
  std::printf("%-5s %s%-5s  1e7: arrayc %6.3f glibc %6.3f el/ns (x%4.1f)   in cache: arrayc %6.3f "
              "glibc %6.3f el/ns (x%4.1f)",
              name(fn), sizeof(T) == 8 ? "f64" : "f32", fast ? " fast" : "", big[0], big[1],
              big[0] / big[1], hot[0], hot[1], hot[0] / hot[1]);
  if (bodies.size() > 2)
    std::printf("   libmvec: 1e7 %6.3f (arrayc x%4.1f) in cache %6.3f (arrayc x%4.1f)", big[2],
                big[0] / big[2], hot[2], hot[0] / hot[2]);
  std::printf("\n");
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  F32Sweep sweep;
  size_t samples64 = 1 << 22;
  bool accuracy = true, speed = true, mvec = false;
  std::string only;  // comma-separated function names; empty: all
  auto float_bits = [](const char* text) {
    float v = std::strtof(text, nullptr);
    uint32_t b;
    std::memcpy(&b, &v, 4);
    return static_cast<uint64_t>(b);
  };
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--stride" && i + 1 < argc) sweep.stride = std::stoull(argv[++i]);
    else if (arg == "--range" && i + 2 < argc) {
      sweep.lo = float_bits(argv[++i]);
      sweep.hi = float_bits(argv[++i]);
      sweep.both_signs = true;
      samples64 = 0;
    }
    else if (arg == "--samples64" && i + 1 < argc) samples64 = std::stoull(argv[++i]);
    else if (arg == "--no-accuracy") accuracy = false;
    else if (arg == "--no-throughput") speed = false;
    else if (arg == "--libmvec") mvec = true;
    else if (arg == "--only" && i + 1 < argc) only = "," + std::string(argv[++i]) + ",";
    else {
      std::fprintf(stderr, "usage: %s [--stride N] [--range LO HI] [--samples64 N] [--no-accuracy]"
                   " [--no-throughput] [--libmvec] [--only exp,sin,...]\n", argv[0]);
      return 2;
    }
  }
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  auto wanted = [&](MathFn fn) {
    return only.empty() || only.find("," + std::string(name(fn)) + ",") != std::string::npos;
  };
  std::vector<MathFn> unary;
  for (MathFn fn : {MathFn::Exp, MathFn::Log, MathFn::Sin, MathFn::Cos, MathFn::Tanh})
    if (wanted(fn)) unary.push_back(fn);
  if (accuracy) {
    for (MathFn fn : unary) {
      report_f32(fn, false, sweep);
      if (mvec) report_f32(fn, false, sweep, true);
    }
    if (samples64) {
      for (MathFn fn : unary) {
        report_f64(fn, false, samples64);
        if (mvec) report_f64(fn, false, samples64, true);
      }
    }
    if (samples64 && wanted(MathFn::Pow)) {
      report_f64(MathFn::Pow, false, samples64);
      report_f64(MathFn::Pow, true, samples64);
      if (mvec) report_f64(MathFn::Pow, false, samples64, true);
    }
  }
  if (speed) {
    for (MathFn fn : {MathFn::Exp, MathFn::Log, MathFn::Sin, MathFn::Cos, MathFn::Tanh, MathFn::Pow}) {
      if (!wanted(fn)) continue;
      throughput<float>(fn, false, mvec);
      throughput<double>(fn, false, mvec);
    }
    for (MathFn fn : {MathFn::Sin, MathFn::Cos}) {
      if (!wanted(fn)) continue;
      throughput<float>(fn, true, false);
      throughput<double>(fn, true, false);
    }
    if (wanted(MathFn::Pow)) throughput<double>(MathFn::Pow, true, false);
  }
}
