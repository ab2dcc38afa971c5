#pragma once
// Template definitions for graph.h.
namespace arrayc::detail {

template <typename F> Graph rewrite(const Graph& g, F&& f) {
  std::unordered_map<const Node*, NodeRef> done;
  for (const NodeRef& n : topo_order(g.outputs)) {
    std::vector<NodeRef> in;
    in.reserve(n->inputs.size());
    bool changed = false;
    for (const NodeRef& i : n->inputs) {
      in.push_back(done.at(i.get()));
      changed |= in.back() != i;
    }
    done[n.get()] = f(n, in, changed);
  }
  Graph out;
  for (const NodeRef& o : g.outputs) out.outputs.push_back(done.at(o.get()));
  return out;
}

}  // namespace arrayc::detail
