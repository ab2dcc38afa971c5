// A correction of LLVM 19's NVPTX backend: it lowers `sitofp i1 %b` (the signed conversion of a
// bool, -1.0 for true), when %b is not a comparison the instruction selector can see, as
// `selp.u32 1, 0` then a signed convert: +1.0. The optimizer makes such conversions from our
// code ((int64)bool - 1 becomes sext(!b), and sitofp(sext(x)) becomes sitofp(x)), so no form the
// emitter writes can keep them out. After the optimizer, and before the backend, each one becomes
// `select %b, -1.0, 0.0`, which the backend lowers as selp of the two floats.
#pragma once
#include <llvm/IR/Module.h>

namespace arrayc::detail {

// Rewrites every signed int-to-float conversion of an i1 (or a vector of i1) in m; returns how
// many it rewrote.
int rewrite_bool_sitofp(llvm::Module& m);

}  // namespace arrayc::detail
