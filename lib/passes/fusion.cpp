#include "passes/fusion.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "passes/compile_cost.h"
#include "passes/products.h"
#include "passes/row_chains.h"

namespace arrayc::detail {

std::string print_fusion_plan(const FusionPlan& p, const std::vector<std::string>& titles) {
  std::ostringstream os;
  std::unordered_map<const Node*, int> id;
  for (const NodeRef& n : p.order) id[n.get()] = static_cast<int>(id.size());
  // Appended rather than `"%" + std::to_string(...)`, which GCC 12 flags with a false -Wrestrict.
  auto name = [&](const Node* n) { return std::string(1, '%').append(std::to_string(id.at(n))); };
  for (size_t i = 0; i < p.groups.size(); ++i) {
    const FusionGroup& grp = p.groups[i];
    if (i < titles.size()) {
      os << titles[i];
    } else {
      const char* kind = grp.kind == FusionGroup::Kind::Elementwise ? "elementwise"
                         : grp.kind == FusionGroup::Kind::Reduce    ? "reduce"
                         : grp.kind == FusionGroup::Kind::Axis      ? "axis"
                         : grp.kind == FusionGroup::Kind::Rows      ? "rows"
                                                                    : "dot";
      os << "group " << i << ": " << kind;
    }
    os << " (";
    std::vector<std::string> members;
    for (const NodeRef& n : p.order)
      if (p.group_of.count(n.get()) && p.group_of.at(n.get()) == static_cast<int>(i))
        members.push_back(name(n.get()) + " " + op_name(n->op));
    for (size_t m = 0; m < members.size(); ++m) os << (m ? ", " : "") << members[m];
    os << ")\n";
    for (const NodeRef& r : grp.roots)
      os << "  materializes " << name(r.get()) << " " << dtype_name(r->dtype) << shape_str(r->shape)
         << ": " << p.root_reason.at(r.get()) << "\n";
    for (const NodeRef& n : p.order)  // row chains: the reductions computed in the kernel
      if (op_kind(n->op) == OpKind::Reduce && !p.is_root(n.get()) && p.group_of.count(n.get()) &&
          p.group_of.at(n.get()) == static_cast<int>(i))
        os << "  row chain: " << name(n.get()) << " " << op_name(n->op) << " along the rows of "
           << shape_str(n->inputs[0]->shape) << " computed in the kernel, each row walked again\n";
    if (grp.product)
      os << "  epilogue of " << name(grp.product.get()) << " dot: " << product_reason(*grp.product)
         << (op_kind(grp.roots[0]->op) == OpKind::Reduce ? "; its consumers and their reduction"
                                                        : "; its elementwise consumers")
         << " run in the product's step\n";
  }
  return os.str();
}

const NodeRef& view_base(const NodeRef& n) {
  const NodeRef* p = &n;
  while (op_kind((*p)->op) == OpKind::View) p = &(*p)->inputs[0];
  return *p;
}

namespace {

bool expands(const Node& broadcast) { return broadcast.numel() > broadcast.inputs[0]->numel(); }

using Users = std::unordered_map<const Node*, std::vector<const Node*>>;

// Whether a product may stay unmaterialized, to be computed in the kernel of its consumers as
// their product step's input: every consumer is elementwise work of the product's shape or a
// reduction (a reduction epilogue: sum(dot(x, w)), and W7's sum(M * M) through its product).
bool may_take_epilogue(const Node& dot, const Users& users, const FusionOptions& opts) {
  if (!opts.fuse || !opts.epilogues || !epilogue_candidate(dot)) return false;
  auto it = users.find(&dot);
  if (it == users.end()) return false;
  for (const Node* u : it->second)
    if (op_kind(u->op) != OpKind::Reduce && (op_kind(u->op) != OpKind::Elementwise || u->shape != dot.shape)) return false;
  return true;
}

// The first pass: nodes that must be materialized whatever their consumers are.
void mark_required_roots(const Graph& g, const FusionOptions& opts, const Users& users, FusionPlan& p) {
  auto mark = [&](const Node* n, const std::string& why) { p.root_reason.emplace(n, why); };
  for (const auto& [n, why] : opts.forced) mark(n, why);
  std::unordered_set<const Node*> outputs;
  for (const NodeRef& o : g.outputs) outputs.insert(o.get());
  // Nodes whose values are read in place from memory: the outputs and the bases of outputs that
  // are views (returned as views of that memory). A reduction among them cannot be left to a row
  // chain's kernel, which keeps its values in registers: a reshape of a row's sum, requested
  // beside the row chain, read a buffer that no kernel wrote (an internal error).
  std::unordered_set<const Node*> read_in_place = outputs;
  for (const NodeRef& o : g.outputs) read_in_place.insert(view_base(o).get());

  for (const NodeRef& n : p.order) {
    OpKind kind = op_kind(n->op);
    // An output already in memory, or a view of memory (a buffer, or the result of a reduction,
    // product or copy), is returned as a view: no kernel.
    if (outputs.count(n.get()) && !in_memory(*n) && kind != OpKind::Contraction) {
      const NodeRef& base = view_base(n);
      bool view_of_memory = base != n && (in_memory(*base) || op_kind(base->op) == OpKind::Reduce ||
                                          op_kind(base->op) == OpKind::Contraction || base->op == Op::Copy ||
                                          op_kind(base->op) == OpKind::Axis);
      if (!view_of_memory) mark(n.get(), "requested output");
    }
    switch (kind) {
      case OpKind::Reduce:  // a row chain's reduction is decided with its consumers' kernel
        if (!opts.fuse || !opts.row_chains || !row_chain_candidate(*n, read_in_place.count(n.get())))
          mark(n.get(), "reduction");
        break;
      case OpKind::Contraction: {
        if (outputs.count(n.get()) || !may_take_epilogue(*n, users, opts)) mark(n.get(), product_reason(*n));
        // issue 29: a GPU product reads 16-bit operands as they are; their widening Casts join
        // its step, and what they widen is read from memory instead.
        const bool half = widened_half_operands(*n) != DType::Float32;
        for (const NodeRef& in : n->inputs) {
          const NodeRef& base = view_base(half ? widened_operand_cast(in)->inputs[0] : in);
          if (!in_memory(*base) && op_kind(base->op) != OpKind::Reduce &&
              op_kind(base->op) != OpKind::Contraction)
            mark(base.get(), std::string("operand of ") + op_name(n->op) +
                                 (half ? ": the product kernel reads memory" : ": BLAS reads memory"));
        }
        break;
      }
      case OpKind::Copy: mark(n.get(), "copy"); break;
      case OpKind::Gather: {  // indexing: the source is read at computed positions, so from memory
        const NodeRef& base = view_base(n->inputs[0]);
        if (!in_memory(*base)) mark(base.get(), "source of a gather: read at computed positions");
        if (!opts.fuse) mark(n.get(), "fusion disabled");
        break;
      }
      case OpKind::Axis: {  // scans and sorts: a routine of the backend that reads memory
        mark(n.get(), std::string(op_name(n->op)) + " (along an axis)");
        for (const NodeRef& in : n->inputs) {  // one input; a sparse scatter's three (issue 28)
          const NodeRef& base = view_base(in);
          OpKind bk = op_kind(base->op);
          if (!in_memory(*base) && (bk == OpKind::Elementwise || bk == OpKind::Leaf || bk == OpKind::Gather))
            mark(base.get(), std::string("operand of ") + op_name(n->op) + ": read from memory");
        }
        break;
      }
      case OpKind::Elementwise:
        if (!opts.fuse) mark(n.get(), "fusion disabled");
        break;
      case OpKind::View:
        if (n->op == Op::Broadcast && expands(*n)) {
          const NodeRef& base = view_base(n->inputs[0]);
          bool per_row = opts.fuse && opts.row_chains && per_row_value(base, read_in_place);  // row chains (issue 29)
          if ((op_kind(base->op) == OpKind::Elementwise || op_kind(base->op) == OpKind::Gather) && !per_row)
            mark(base.get(), "broadcast of a computed value (materialized, not recomputed per element)");
        }
        break;
      case OpKind::Leaf: break;
    }
  }
}

// Whether `from` reaches `target` through a materialized node other than both, or through an
// operand read from memory (a gather's source, a product's or an axis routine's operand): then
// the two cannot share a kernel (that kernel would read its own output as it writes it, at other
// positions: a roll of an output beside it read unwritten memory).
bool reaches_through_root(const NodeRef& from, const Node* target, const FusionPlan& p) {
  std::vector<std::pair<const Node*, bool>> stack{{from.get(), false}};
  std::set<std::pair<const Node*, bool>> seen;
  while (!stack.empty()) {
    auto [n, crossed] = stack.back();
    stack.pop_back();
    if (!seen.insert({n, crossed}).second) continue;
    if (n == target) {
      if (crossed) return true;
      continue;
    }
    bool c = crossed || (n != from.get() && p.is_root(n));
    OpKind k = op_kind(n->op);
    for (size_t i = 0; i < n->inputs.size(); ++i) {
      bool from_memory = (k == OpKind::Gather && i == 0) || k == OpKind::Contraction || k == OpKind::Axis;
      stack.push_back({n->inputs[i].get(), c || from_memory});
    }
  }
  return false;
}

FusionGroup::Kind group_kind(const Node& root) {
  switch (op_kind(root.op)) {
    case OpKind::Reduce: return FusionGroup::Kind::Reduce;
    case OpKind::Contraction: return FusionGroup::Kind::Dot;
    case OpKind::Axis: return FusionGroup::Kind::Axis;
    default: return FusionGroup::Kind::Elementwise;
  }
}

// One attempt at the plan. Requested outputs in `alone` get kernels of their own. Returns false,
// with the roots of the kernels on the cycle added to `alone`, when sharing a kernel between
// outputs made kernels depend on each other in a cycle: whether two outputs may share one is
// decided before the nodes that their kernels later materialize are known.
bool plan_once(const Graph& g, const FusionOptions& opts, std::unordered_set<const Node*>& alone, FusionPlan& p) {
  p = FusionPlan{};
  p.order = topo_order(g.outputs);
  Users users;
  for (const NodeRef& n : p.order)
    for (const NodeRef& in : n->inputs) {
      auto& u = users[in.get()];
      if (u.empty() || u.back() != n.get()) u.push_back(n.get());  // n's uses of `in` come in a row
    }
  mark_required_roots(g, opts, users, p);

  std::vector<std::vector<const Node*>> group_roots;
  std::vector<int64_t> group_cost;  // compile cost of the nodes computed in each group
  std::vector<const Node*> group_product;  // the product whose epilogue a group is, if any
  std::vector<bool> group_rows;  // whether a group computes a row chain's reductions
  auto new_group = [&](const Node* root) {
    p.group_of[root] = static_cast<int>(group_roots.size());
    group_roots.push_back({root});
    group_cost.push_back(compile_weight(*root));
    group_product.push_back(nullptr);
    group_rows.push_back(false);
  };

  // Requested elementwise outputs of one shape share a kernel (one launch, several stores)
  // unless one depends on another through a materialized node.
  if (opts.fuse) {
    std::vector<std::vector<NodeRef>> merged;
    for (const NodeRef& o : g.outputs) {
      if (!p.is_root(o.get()) || group_kind(*o) != FusionGroup::Kind::Elementwise || p.group_of.count(o.get()) ||
          alone.count(o.get()))
        continue;
      for (size_t gi = 0; gi < merged.size() && !p.group_of.count(o.get()); ++gi) {
        const NodeRef& first = merged[gi][0];
        if (first->shape != o->shape || first->device != o->device) continue;
        bool independent = true;
        for (const NodeRef& r : merged[gi])
          independent = independent && !reaches_through_root(r, o.get(), p) && !reaches_through_root(o, r.get(), p);
        if (independent) {
          p.group_of[o.get()] = static_cast<int>(gi);
          merged[gi].push_back(o);
          group_roots[gi].push_back(o.get());
          group_cost[gi] += compile_weight(*o);
        }
      }
      if (!p.group_of.count(o.get())) {
        new_group(o.get());
        merged.push_back({o});
      }
    }
  }

  // Consumers before producers: a node joins the one kernel that uses it, or is materialized.
  // groups_seen[n]: the kernels that read n's value (views may serve several).
  std::unordered_map<const Node*, std::set<int>> groups_seen;
  for (auto it = p.order.rbegin(); it != p.order.rend(); ++it) {
    const Node* n = it->get();
    std::set<int> gs;
    for (const Node* u : users[n]) {
      if (p.group_of.count(u)) gs.insert(p.group_of.at(u));
      else gs.insert(groups_seen[u].begin(), groups_seen[u].end());
    }
    OpKind kind = op_kind(n->op);
    if (p.is_root(n)) {
      if (!p.group_of.count(n)) new_group(n);
      continue;
    }
    if (kind == OpKind::Leaf || kind == OpKind::View) {
      groups_seen[n] = gs;  // free to read from any number of kernels
      continue;
    }
    if (kind == OpKind::Contraction) {  // a product left unmaterialized for its epilogue
      int gi = gs.size() == 1 ? *gs.begin() : -1;
      const Node* root = gi >= 0 ? group_roots[gi][0] : nullptr;
      std::string why;
      if (gi < 0) why = "its consumers are in " + std::to_string(gs.size()) + " kernels";
      else if (op_kind(root->op) != OpKind::Elementwise && op_kind(root->op) != OpKind::Reduce)
        why = "its consumers' kernel is neither elementwise nor a reduction";
      else if (op_kind(root->op) != OpKind::Reduce && root->shape != n->shape)
        why = "its consumers' kernel has another shape";
      else if (group_product[gi]) why = "its consumers' kernel takes another product";
      else if (group_rows[gi]) why = "its consumers' kernel computes a row chain";  // issue 29
      if (why.empty()) {
        p.group_of[n] = gi;
        group_product[gi] = n;
        group_cost[gi] += compile_weight(*n);
      } else {
        p.root_reason.emplace(n, product_reason(*n) + "; " + why);
        new_group(n);
      }
      continue;
    }
    if (kind == OpKind::Reduce) {  // a row chain's candidate (row_chains.h)
      int gi = gs.size() == 1 ? *gs.begin() : -1;
      const Node* root = gi >= 0 ? group_roots[gi][0] : nullptr;
      bool elementwise = gi >= 0 && group_kind(*root) == FusionGroup::Kind::Elementwise && !group_product[gi];
      std::string why = row_chain_refusal(*n, gs.size(), root, elementwise);
      if (why.empty() && gi >= 0 && group_cost[gi] + compile_weight(*n) > kMaxKernelCost)
        why = "reduction (not in a row chain: compile cost budget)";
      if (why.empty()) {
        p.group_of[n] = gi;
        group_rows[gi] = true;
        group_cost[gi] += compile_weight(*n);
      } else {
        p.root_reason.emplace(n, why);
        new_group(n);
      }
      continue;
    }
    if (gs.size() == 1 && group_cost[*gs.begin()] + compile_weight(*n) > kMaxKernelCost) {
      p.root_reason.emplace(n, compile_cost_reason(*n, group_cost[*gs.begin()]));
      new_group(n);
    } else if (gs.size() == 1) {
      p.group_of[n] = *gs.begin();
      group_cost[*gs.begin()] += compile_weight(*n);
    } else {
      p.root_reason.emplace(n, "used by " + std::to_string(gs.size()) + " kernels");
      new_group(n);
    }
  }

  // Order the groups so that each runs after the groups whose roots it reads.
  int ng = static_cast<int>(group_roots.size());
  std::vector<std::set<int>> deps(ng);
  for (const NodeRef& n : p.order) {
    if (!p.group_of.count(n.get())) continue;
    int gi = p.group_of.at(n.get());
    // Inputs reached through views and leaves belong to no group; follow views to their base.
    for (const NodeRef& in : n->inputs) {
      const NodeRef* base = &in;
      while (op_kind((*base)->op) == OpKind::View && !p.is_root(base->get())) base = &(*base)->inputs[0];
      if (p.group_of.count(base->get()) && p.group_of.at(base->get()) != gi)
        deps[gi].insert(p.group_of.at(base->get()));
    }
  }
  std::vector<int> state(ng, 0), order;
  std::vector<std::pair<int, std::set<int>::iterator>> stack;
  for (int s = 0; s < ng; ++s) {
    if (state[s]) continue;
    state[s] = 1;
    stack.push_back({s, deps[s].begin()});
    while (!stack.empty()) {
      auto& [gi, it] = stack.back();
      if (it != deps[gi].end()) {
        int d = *it++;
        if (state[d] == 1) {  // the groups on the stack from d up form a cycle
          size_t before = alone.size();
          for (size_t k = stack.size(); k-- > 0;) {
            for (const Node* r : group_roots[stack[k].first])
              if (group_roots[stack[k].first].size() > 1) alone.insert(r);
            if (stack[k].first == d) break;
          }
          // Kernels with one root each cannot form a cycle: every node but the root has all of
          // its users in the root's kernel.
          ARRAYC_INTERNAL_CHECK(alone.size() > before, "fusion produced a cycle between kernels");
          return false;
        }
        if (!state[d]) {
          state[d] = 1;
          stack.push_back({d, deps[d].begin()});
        }
      } else {
        state[gi] = 2;
        order.push_back(gi);
        stack.pop_back();
      }
    }
  }
  std::vector<int> renumber(ng);
  for (int i = 0; i < ng; ++i) renumber[order[i]] = i;
  for (auto& [n, gi] : p.group_of) gi = renumber[gi];
  std::unordered_map<const Node*, NodeRef> by_ptr;
  for (const NodeRef& n : p.order) by_ptr[n.get()] = n;
  for (int gi : order) {
    FusionGroup grp{group_kind(*group_roots[gi][0]), {}, nullptr};
    for (const Node* r : group_roots[gi]) grp.roots.push_back(by_ptr.at(r));
    if (group_rows[gi]) grp.kind = FusionGroup::Kind::Rows;
    if (group_product[gi]) {
      grp.kind = FusionGroup::Kind::Dot;
      grp.product = by_ptr.at(group_product[gi]);
    }
    p.groups.push_back(std::move(grp));
  }
  return true;
}

}  // namespace

FusionPlan plan_fusion(const Graph& g, const FusionOptions& opts) {
  std::unordered_set<const Node*> alone;
  FusionPlan p;
  while (!plan_once(g, opts, alone, p)) {
  }
  return p;
}

}  // namespace arrayc::detail
