// Row chains (issue 29): a reduction along the last axis whose result is read back, broadcast
// along that axis, by elementwise work over the reduction's input shape (softmax's max and sum,
// layer norm's mean and variance) is not materialized. It is computed inside the kernel of that
// work, which walks each row once per level of nested reductions and once more to store: one
// kernel per row block instead of a kernel per reduction plus one per elementwise stretch, and
// the row read from cache rather than the reductions' buffers from memory. plan_fusion asks
// these two questions; the kernel builder checks the view chain (passes/schedule.cpp).
#pragma once
#include <string>
#include <unordered_set>

#include "ir/node.h"

namespace arrayc::detail {

// Whether reduction r may be left unmaterialized for a row chain: it folds exactly the last
// axis of its input, is not read in place from memory (a requested output, or the base of an
// output that is a view of it), and every consumer is a view or elementwise.
bool row_chain_candidate(const Node& r, bool read_in_place);

// Whether n is computed from row chain candidates and constants alone (sqrt(var + eps) of layer
// norm, a float16 sum cast back): a per-row value that a row chain's kernel computes once per
// row (the optimizer hoists it out of the row's loop), so its broadcast need not be materialized.
// read_in_place: the nodes row_chain_candidate must not leave unmaterialized.
bool per_row_value(const NodeRef& n, const std::unordered_set<const Node*>& read_in_place);

constexpr int64_t kMaxRowChainRow = 65536;    // elements: a row stays in L2 between passes
constexpr int64_t kMinRowChainRows = 256;     // rows to share between threads or GPU blocks
constexpr int64_t kSmallRowChain = 1 << 20;   // elements below which fewer rows still fuse

// Why candidate r cannot join the kernel whose first root is `root` (the reason it is
// materialized with: "reduction" where the kernel is not a row chain's), or "" when it can: that kernel is elementwise work of r's input shape on r's
// device, and its rows are not too long or too few (the constants above). groups: how many
// kernels read r.
std::string row_chain_refusal(const Node& r, size_t groups, const Node* root, bool elementwise_root);

}  // namespace arrayc::detail
