#pragma once
// float16 <-> float32 conversions of host kernels on x86 CPUs with F16C (issue 28, host float16
// speed). A float16 value lives as a float32 in registers; these calls widen a loaded float16
// and round a float32 result to the nearest float16 (ties to even) and back, as vcvtps2ph +
// vcvtph2ps pairs on whole vectors.
//
// Why not fptrunc/fpext: InstCombine narrows `fptrunc(fadd(fpext a, fpext b))` and `fcmp(fpext a,
// fpext b)` to half operations, which x86 without AVX512-FP16 runs lane by lane (W8 ran 4.7x
// slower than float32). Here the conversions are calls that the vectorizer widens through their
// vector variants ("vector-function-abi-variant", as the vector math does), whose bodies are the
// F16C instructions as inline assembly, where no pass looks through them. The scalar functions
// (remainder loops, loops that do not vectorize) are fpext/fptrunc, inlined once the loops are
// vectorized (codegen/cpu/host_passes.cpp).
#include <llvm/IR/IRBuilder.h>

#include <string>

namespace arrayc::detail {

// Whether kernels for these LLVM target features ("+avx2,+f16c,...") use the calls below.
bool use_f16c_calls(const std::string& cpu_features);

// float16 bits (i16) -> the float32 of the same value, exactly.
llvm::Value* emit_f16_widen(llvm::IRBuilder<>& b, llvm::Value* bits);
// A float32 rounded to float16 (nearest even, overflow to inf, NaN stays NaN), as a float32.
llvm::Value* emit_f16_round(llvm::IRBuilder<>& b, llvm::Value* x);

// Whether f is one of the scalar conversion functions above (inlined after vectorization).
bool is_f16_scalar_fn(const llvm::Function& f);

}  // namespace arrayc::detail
