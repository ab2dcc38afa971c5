// Automatic evaluation of large lazy graphs (issue 26, docs/bounds.md): a loop that builds on an
// array and never evaluates it would grow its graph, and the memory it holds, without limit.
#pragma once
#include "arrayc/array.h"

namespace arrayc::detail {

// Evaluates `a` when the unevaluated graph behind it has reached ARRAYC_AUTO_EVAL_NODES nodes
// (counted as a tree: Node::tree_nodes), unless it reads a Param (jit tracing, transforms) or
// the bound is 0. Counted in stats().auto_evals. Called for every Array made from a node, with
// that node (read without the Array's lock: no other thread has the Array yet).
void auto_eval_if_large(const Array& a, const Node& node);

}  // namespace arrayc::detail
