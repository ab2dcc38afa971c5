// The host's passes after the -O3 pipeline (codegen/optimize.h), and the whole host pipeline
// that runs them in order.
#pragma once
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

namespace arrayc::detail {

// The loop vectorizer runs after -O3's inliner, so the vector math variants it calls
// (always-inline, codegen/cpu/vmath/variants.cpp) are inlined here, followed by the clean-up
// that inlining calls for: the sincos variant's packed i64 lanes fold away, constants are
// shared, and where two functions of one argument test the same range (f32 exp, sin and cos:
// every lane below 16), the tests merge and jump threading sends the second function straight
// to its path. The math functions were kept alive for the vectorizer (llvm.compiler.used); now
// those left without a call are deleted rather than compiled.
void inline_vector_math(llvm::Module& m, llvm::TargetMachine& tm);

// For a host kernel compiled with EmitOptions::stream_stores: marks every vector store whose
// alignment covers its size non-temporal (on the streaming path of codegen/cpu/cpu_kernel.cpp,
// only the output's, aligned by its scalar head) and fences them at each return.
void mark_streaming_stores(llvm::Module& m);

// A host module's optimization, what the host JIT runs: optimize_module, inline_vector_math,
// then, when stream_stores (EmitOptions::stream_stores), mark_streaming_stores.
void optimize_host_module(llvm::Module& m, llvm::TargetMachine& tm, bool stream_stores);

}  // namespace arrayc::detail
