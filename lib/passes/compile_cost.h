// Compile cost (issue 26): fusion ends a kernel when the estimated cost of compiling it would
// pass a budget, so that compile time grows linearly with a program's size rather than with the
// size of its largest kernel. The estimate is a weight per computed node: what the node adds to
// the kernel's loop body once generated, relative to an add. A vectorized transcendental (sin,
// exp, pow, ...) expands to a hundred or more instructions and a branch to its rare lanes' path
// (float32 sin: 132 LLVM instructions in its 16-lane variant, against one for an add). On the
// host, a kernel with more than 16 math calls keeps them out of line (inline_vector_math in
// codegen/cpu/host_passes.cpp): each then adds a call, and each function's body is compiled once
// per kernel. On a GPU, libdevice bodies are always inlined.
#pragma once
#include <cstdint>
#include <string>

#include "ir/node.h"

namespace arrayc::detail {

// The most a kernel may cost: 1024 adds, or 128 transcendentals. The node that would pass it
// is materialized ("split: compile cost ...").
constexpr int64_t kMaxKernelCost = 1024;

// What computing n inline adds to its kernel's compile cost (1 for an add; leaves and views,
// which only index, are not counted by fusion).
int64_t compile_weight(const Node& n);

// The reason fusion gives a node that did not fit in its consumer's kernel at cost `cost`.
std::string compile_cost_reason(const Node& n, int64_t cost);

}  // namespace arrayc::detail
