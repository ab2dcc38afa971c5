#include "engine/extent_reads.h"

#include <unordered_set>

namespace arrayc::detail {
namespace {
bool blind_op(Op op) {
  switch (op_kind(op)) {
    case OpKind::Elementwise: case OpKind::Reduce: return true;
    default: break;
  }
  switch (op) {
    case Op::Param: case Op::Buffer: case Op::Constant:
    case Op::Broadcast: case Op::Reshape: case Op::Transpose: return true;
    default: return false;
  }
}
}  // namespace

bool extent_blind_graph(const std::vector<NodeRef>& outputs) {
  std::unordered_set<const Node*> seen;
  std::vector<const Node*> todo;
  for (const NodeRef& o : outputs) todo.push_back(o.get());
  while (!todo.empty()) {
    const Node* n = todo.back();
    todo.pop_back();
    if (!seen.insert(n).second) continue;
    if (!blind_op(n->op)) return false;
    for (const NodeRef& in : n->inputs) todo.push_back(in.get());
  }
  return true;
}

}  // namespace arrayc::detail
