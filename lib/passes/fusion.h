// Fusion decisions: which nodes are materialized (get a buffer and end a kernel) and which are
// computed inline in the kernel of their consumer. Every boundary carries its reason, which the
// tool prints and the tests assert.
#pragma once
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/graph.h"
#include "kernel/schedule.h"

namespace arrayc::detail {

// A kernel's size is bounded by its estimated compile cost (passes/compile_cost.h): the node
// that would pass kMaxKernelCost is materialized ("split: compile cost ..."). Past a few
// thousand nodes, LLVM's scheduling of the loop body grows quadratically (a chain of 32000 adds
// took 10 s to compile), and building the kernel recursed once per node of the chain.

struct FusionOptions {
  bool fuse = true;  // false: one kernel per op (ARRAYC_FUSION=0)
  bool epilogues = true;  // false: products keep their consumers out (ARRAYC_EPILOGUE=0)
  bool row_chains = true;  // false: every reduction is materialized (ARRAYC_ROW_CHAINS=0)
  // Nodes the scheduler found it must materialize (a reshape that strides cannot express).
  std::unordered_map<const Node*, std::string> forced;
};

FusionPlan plan_fusion(const Graph& g, const FusionOptions& opts);

// Text of the fusion decisions, one group after another: its title, the nodes it computes (%N
// numbered as print_graph numbers the graph's nodes), and why each of its roots is
// materialized:
//   group 0: elementwise (%1 exp, %3 add)
//     materializes %3 float32[8]: requested output
// titles[i] replaces "group i: <kind>" (print_schedule names the kernels).
std::string print_fusion_plan(const FusionPlan& p, const std::vector<std::string>& titles = {});

// Strips view nodes: the node whose values a chain of views shows.
const NodeRef& view_base(const NodeRef& n);
// Buffer and Param leaves: values already in memory.
inline bool in_memory(const Node& n) { return n.op == Op::Buffer || n.op == Op::Param; }

}  // namespace arrayc::detail
