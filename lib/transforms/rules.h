// The transformation rules: one entry per op of the op table (ir/ops.def), holding the op's
// gradient rule (reverse mode) and its batching rule (vmap). transforms.cpp walks graphs and
// calls these; an op whose entry lacks a rule makes grad or vmap raise arrayc::Error naming it.
#pragma once
#include <optional>
#include <vector>

#include "arrayc/array.h"
#include "ir/node.h"

namespace arrayc::detail {

// A gradient rule gets the node, its inputs' and its own primal values and the cotangent g of
// its output (g has the output's shape and dtype), and returns the cotangent of each input
// (nullopt: no gradient flows there, as into a comparison's operands or where's condition).
// Every returned cotangent has its input's shape and dtype. The rules are built from ops that
// have gradient rules themselves, so gradients of gradients work.
struct VjpArgs {
  const Node& n;
  std::vector<Array> x;  // the inputs' primal values
  Array y;               // the output's primal value
  Array g;               // the output's cotangent
};
using VjpRule = std::vector<std::optional<Array>> (*)(const VjpArgs&);

// A batching rule gets the node and its inputs, each either batched (along axis 0, the batch of
// `size` examples in front of the input's shape) or not (the input's own shape), at least one
// batched; it returns the output batched along axis 0.
struct BatchArgs {
  const Node& n;
  std::vector<Array> x;
  std::vector<bool> batched;
  int64_t size;
};
using BatchRule = Array (*)(const BatchArgs&);

struct OpRules {
  VjpRule vjp = nullptr;      // nullptr: grad through this op raises
  BatchRule batch = nullptr;  // nullptr: vmap over this op raises
};

// The entry of an op (leaves have no rules: they have no inputs to differentiate or batch).
const OpRules& op_rules(Op op);
// The same entry, writable: for tests of what happens to an op without rules.
OpRules& op_rules_for_testing(Op op);

}  // namespace arrayc::detail
