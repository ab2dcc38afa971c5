#include "passes/row_chains.h"

namespace arrayc::detail {

bool row_chain_candidate(const Node& r, bool read_in_place) {
  if (read_in_place || op_kind(r.op) != OpKind::Reduce) return false;
  const Node& x = *r.inputs[0];
  return x.rank() >= 1 && r.ints.size() == 1 && r.ints[0] == x.rank() - 1 && r.dtype == x.dtype;
}

bool per_row_value(const NodeRef& n, const std::unordered_set<const Node*>& read_in_place) {
  bool reduced = false;
  std::vector<const Node*> stack{n.get()};
  std::unordered_set<const Node*> seen;
  while (!stack.empty()) {
    const Node* m = stack.back();
    stack.pop_back();
    if (!seen.insert(m).second) continue;
    switch (op_kind(m->op)) {
      case OpKind::Reduce:
        if (!row_chain_candidate(*m, read_in_place.count(m))) return false;
        reduced = true;
        break;
      case OpKind::Leaf:
        if (m->op != Op::Constant) return false;
        break;
      case OpKind::Elementwise: case OpKind::View:
        for (const NodeRef& in : m->inputs) stack.push_back(in.get());
        break;
      default: return false;
    }
  }
  return reduced;
}

std::string row_chain_refusal(const Node& r, size_t groups, const Node* root, bool elementwise_root) {
  // Not the pattern at all (a reduction whose result is used as it is): a plain reduction.
  if (groups != 1 || !elementwise_root || root->shape != r.inputs[0]->shape || root->device != r.device)
    return "reduction";
  // A row is one thread's (CPU) or one block's (GPU) work: long rows, or too few rows for the
  // machine when there is much work, go faster as split reductions and a parallel elementwise
  // kernel.
  const Shape& s = r.inputs[0]->shape;
  const int64_t row = s.back(), rows = row == 0 ? 0 : shape_numel(s) / row;
  if (row > kMaxRowChainRow)
    return "reduction (not in a row chain: rows of " + std::to_string(row) + " > " + std::to_string(kMaxRowChainRow) + ")";
  if (rows < kMinRowChainRows && shape_numel(s) > kSmallRowChain)
    return "reduction (not in a row chain: " + std::to_string(rows) + " rows of " + std::to_string(row) +
           ": too few to share out)";
  return "";
}

}  // namespace arrayc::detail
