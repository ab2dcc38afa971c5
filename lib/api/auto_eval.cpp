#include "api/auto_eval.h"

#include "ir/node.h"
#include "support/env.h"
#include "support/stats.h"

namespace arrayc::detail {

void auto_eval_if_large(const Array& a, const Node& n) {
  static const int64_t limit = auto_eval_nodes_setting();
  if (limit == 0) return;
  if (n.tree_nodes < limit || n.reads_param || n.op == Op::Buffer) return;
  a.eval();
  counters().auto_evals++;
}

}  // namespace arrayc::detail
