// A Graph is the unit the passes transform: the nodes a caller wants computed. Passes are
// Graph -> Graph functions (lib/passes/pipeline.cpp lists them in order).
#pragma once
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/node.h"

namespace arrayc::detail {

struct Graph {
  std::vector<NodeRef> outputs;
};

// Every node reachable from the outputs, producers before consumers (iterative: deep chains
// must not overflow the stack).
std::vector<NodeRef> topo_order(const std::vector<NodeRef>& outputs);

// Text form, one node per line in topological order:
//   %3 = exp %2 : float32[1000000]
// Leaves print their attributes (param index, constant value, buffer strides, seed).
std::string print_graph(const Graph& g);

// Rebuilds the graph bottom-up, replacing each node n by f(n, new_inputs) (f returns the new
// node; rebuild(n, inputs) is the identity). Shared subgraphs are visited once.
template <typename F> Graph rewrite(const Graph& g, F&& f);

}  // namespace arrayc::detail

#include "ir/graph_inl.h"
