// Dtype rules of the numpy math ops (issue 28: ops.def's "numpy math" block), for
// make_elementwise (build.cpp). Kept apart so the rules of these ops read in one place.
#pragma once
#include <optional>
#include <vector>

#include "ir/node.h"

namespace arrayc::detail {

// For an op of the numpy math block: casts the (already broadcast) inputs to the dtype the op
// computes in and returns the result's dtype; arrayc::Error naming the op and dtype for a dtype
// it does not accept. std::nullopt for any other op.
std::optional<DType> numpy_math_dtypes(Op op, std::vector<NodeRef>& in);

// Whether `op` is one of the numpy math block's transcendental functions (float in, float out).
bool is_numpy_transcendental(Op op);

}  // namespace arrayc::detail
