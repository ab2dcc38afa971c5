#include "ir/graph.h"

#include <sstream>
#include <unordered_set>

namespace arrayc::detail {

std::vector<NodeRef> topo_order(const std::vector<NodeRef>& outputs) {
  std::vector<NodeRef> order;
  std::unordered_set<const Node*> seen;
  std::vector<std::pair<NodeRef, size_t>> stack;
  for (const NodeRef& o : outputs) {
    if (!seen.insert(o.get()).second) continue;
    stack.push_back({o, 0});
    while (!stack.empty()) {
      auto& [n, next] = stack.back();
      if (next < n->inputs.size()) {
        const NodeRef& in = n->inputs[next++];
        if (seen.insert(in.get()).second) stack.push_back({in, 0});
      } else {
        order.push_back(n);
        stack.pop_back();
      }
    }
  }
  return order;
}

std::string print_graph(const Graph& g) {
  std::ostringstream os;
  std::unordered_map<const Node*, int> id;
  for (const NodeRef& n : topo_order(g.outputs)) {
    int k = static_cast<int>(id.size());
    id[n.get()] = k;
    os << "%" << k << " = " << op_name(n->op);
    switch (n->op) {
      case Op::Constant: os << " " << n->value.str(); break;
      case Op::Param: os << " " << n->ints[0]; break;
      case Op::RandUniform: case Op::RandNormal: os << " seed=" << static_cast<uint64_t>(n->ints[0]); break;
      case Op::Buffer:
        os << " offset=" << n->buffer_offset() << " strides=" << shape_str(n->buffer_strides());
        break;
      default: break;
    }
    for (size_t i = 0; i < n->inputs.size(); ++i) os << (i ? ", %" : " %") << id.at(n->inputs[i].get());
    if (n->op == Op::Transpose) os << " perm=" << shape_str(n->ints);
    if (op_kind(n->op) == OpKind::Reduce) os << " axes=" << shape_str(n->ints);
    // indexing: a slice's (start, step) pairs, a gather's axis and src dim map
    if (n->op == Op::Slice) os << " start_step=" << shape_str(n->ints);
    if (n->op == Op::Gather)
      os << " axis=" << n->ints[0] << " map=" << shape_str(std::vector<int64_t>(n->ints.begin() + 1, n->ints.end()));
    if (op_kind(n->op) == OpKind::Axis) os << " axis=" << n->ints[0];  // scans and sorts
    os << " : " << dtype_name(n->dtype) << shape_str(n->shape);
    if (n->device != cpu()) os << " @" << n->device.str();
    os << "\n";
  }
  os << "outputs:";
  for (const NodeRef& o : g.outputs) os << " %" << id.at(o.get());
  os << "\n";
  return os.str();
}

}  // namespace arrayc::detail
