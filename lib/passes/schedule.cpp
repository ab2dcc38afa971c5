#include "passes/schedule.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "ir/build_index.h"
#include "passes/products.h"
#include "passes/strided_view.h"

namespace arrayc::detail {
namespace {

// Raised inside lowering when a chain of views cannot be expressed by strides: the node must
// be materialized (copied contiguously) first, and the schedule is planned again.
struct NeedsCopy {
  const Node* node;
  std::string why = "reshape of a strided view needs a contiguous copy";
};

StridedView apply_views(StridedView v, const std::vector<const Node*>& chain) {
  for (size_t i = chain.size(); i-- > 0;) {
    const Node* view = chain[i];
    switch (view->op) {
      case Op::Transpose: v = v.transposed(view->ints); break;
      case Op::Broadcast: v = v.broadcast(view->shape); break;
      case Op::Slice: {  // indexing
        std::vector<int64_t> starts, steps;
        for (size_t d = 0; d < view->shape.size(); ++d) {
          starts.push_back(view->ints[2 * d]);
          steps.push_back(view->ints[2 * d + 1]);
        }
        v = v.sliced(starts, steps, view->shape);
        break;
      }
      case Op::Reshape: {
        auto r = v.reshaped(view->shape);
        if (!r) throw NeedsCopy{view->inputs[0].get()};
        v = *r;
        break;
      }
      default: ARRAYC_INTERNAL_CHECK(false, "not a view op");
    }
  }
  return v;
}

std::string source_key(const Source& s) {
  std::ostringstream os;
  os << static_cast<int>(s.kind) << ":" << (s.kind == Source::Kind::Storage ? reinterpret_cast<uintptr_t>(s.storage.get()) : s.index);
  return os.str();
}

std::string view_key(const StridedView& v) {
  return std::to_string(v.offset) + shape_str(v.strides);
}

// The schedule's slots (one buffer per materialized node) and where every node a kernel reads
// lives: a slot, a Buffer's storage, or a jit parameter, with its layout there.
class SlotTable {
 public:
  SlotTable(const FusionPlan& plan, Schedule& s) : plan_(plan), s_(s) {}

  int slot_of(const Node* n) const { return slots_.at(n); }
  void add_slot(const NodeRef& n) {
    slots_[n.get()] = static_cast<int>(s_.slots.size());
    s_.slots.push_back(Slot{n->dtype, n->shape, n->device});
  }

  // The memory behind a node whose values are already in a buffer, and its layout there.
  // `stored`: where n's own values live even if this schedule also materializes n (the kernel
  // that does the materializing reads them there).
  std::pair<Source, StridedView> memory_of(const NodeRef& n, bool stored = false) const {
    Source src;
    if (plan_.is_root(n.get()) && !stored) {  // materialized by a kernel of this schedule: contiguous
      src.kind = Source::Kind::Slot;
      src.index = slot_of(n.get());
      return {src, StridedView::contiguous(n->shape)};
    }
    if (op_kind(n->op) == OpKind::Contraction) {  // a product read by its own epilogue
      src.kind = Source::Kind::Product;
      return {src, StridedView::contiguous(n->shape)};
    }
    if (n->op == Op::Buffer) {
      src.kind = Source::Kind::Storage;
      src.storage = n->storage;
      return {src, StridedView{n->buffer_offset(), n->shape, n->buffer_strides()}};
    }
    ARRAYC_INTERNAL_CHECK(n->op == Op::Param, "reading a node that is not in memory");
    src.kind = Source::Kind::Param;
    src.index = static_cast<int>(n->ints[0]);
    return {src, StridedView::contiguous(n->shape)};
  }

  // A view chain ending in memory, composed: the output of an alias or a dot operand.
  std::pair<Source, StridedView> view_of_memory(const NodeRef& n) const {
    std::vector<const Node*> chain;
    const NodeRef* p = &n;
    while (op_kind((*p)->op) == OpKind::View && !plan_.is_root(p->get())) {
      chain.push_back(p->get());
      p = &(*p)->inputs[0];
    }
    auto [src, base] = memory_of(*p);
    return {src, apply_views(base, chain)};
  }

  const FusionPlan& plan() const { return plan_; }

 private:
  const FusionPlan& plan_;
  Schedule& s_;
  std::unordered_map<const Node*, int> slots_;
};

// Builds the Kernel of one fused group by walking from its roots down to the leaves and the
// materialized inputs, carrying the chain of views met on the way.
class KernelBuilder {
 public:
  KernelBuilder(const SlotTable& table, int group) : table_(table), group_(group) {}

  KernelStep build(const FusionGroup& grp) {
    const NodeRef& first = grp.roots[0];
    std::vector<std::pair<int, StridedView>> outs;  // (instr, view over the iteration space)
    if (op_kind(first->op) == OpKind::Reduce) {  // a Reduce group, or a product's reduction epilogue
      const NodeRef& x = first->inputs[0];
      std::vector<bool> reduced(x->rank(), false);
      for (int64_t a : first->ints) reduced[a] = true;
      for (int64_t d = 0; d < x->rank(); ++d)
        if (!reduced[d]) perm_.push_back(d);
      for (int64_t a : first->ints) perm_.push_back(a);
      for (int64_t p : perm_) iter_.push_back(x->shape[p]);
      outer_ = static_cast<int>(x->rank() - first->ints.size());
      k_.is_reduction = true;
      k_.reduce_op = first->op;
      std::vector<const Node*> chain;
      int acc = descend(x, chain);
      StridedView out{0, iter_, std::vector<int64_t>(iter_.size(), 0)};
      auto cs = contiguous_strides(first->shape);
      for (int d = 0; d < outer_; ++d) out.strides[d] = cs[d];
      outs.push_back({acc, out});
    } else {
      iter_ = first->shape;
      outer_ = static_cast<int>(iter_.size());
      if (grp.kind == FusionGroup::Kind::Rows) {  // row chains: the last dim is the row
        k_.row_chain = true;
        --outer_;
      }
      for (const NodeRef& r : grp.roots) {
        std::vector<const Node*> chain;
        outs.push_back({descend(r, chain), StridedView::contiguous(iter_)});
      }
    }
    for (auto& [instr, view] : outs) {
      views_.push_back(view);
      k_.outputs.push_back(KernelOutput{instr, k_.body[instr].dtype, {}, 0, static_cast<int>(views_.size() - 1)});
    }
    KernelStep step;
    step.inputs = inputs_;
    for (size_t i = 0; i < k_.outputs.size(); ++i) {
      k_.outputs[i].ptr = static_cast<int>(inputs_.size() + i);
      step.outputs.push_back(table_.slot_of(grp.roots[i].get()));
    }
    k_.num_ptrs = static_cast<int>(inputs_.size() + k_.outputs.size());
    k_.num_indexed = static_cast<int>(views_.size());
    step.launch = collapse();
    name_kernel();
    step.kernel = std::move(k_);
    return step;
  }

 private:
  int descend(const NodeRef& n, std::vector<const Node*>& chain) {
    auto key = std::make_pair(n.get(), chain);
    // A constant (or a view of one) is looked at again at each use: a parameter is never shared
    // between two uses, since hash-consing merges equal values into one node, and the kernel's
    // code must not depend on which values happen to be equal (x * s + 1 at s = 1).
    if (auto it = memo_.find(key); it != memo_.end() && !is_constant_leaf(it->second)) return it->second;
    // Whether n is (a view of) pow's exponent: only views and copies pass that on to their input.
    bool pow_exponent = pow_exponent_;
    pow_exponent_ = false;
    const FusionPlan& plan = table_.plan();
    auto g = plan.group_of.find(n.get());
    bool here = g != plan.group_of.end() && g->second == group_;
    OpKind kind = op_kind(n->op);
    int r;
    if (!here && plan.is_root(n.get())) {
      r = leaf(n, chain, false);  // another kernel's output: read it from memory
    } else if (kind == OpKind::View) {
      chain.push_back(n.get());
      pow_exponent_ = pow_exponent;
      r = descend(n->inputs[0], chain);
      chain.pop_back();
    } else if (kind == OpKind::Leaf) {
      pow_exponent_ = pow_exponent;
      r = leaf(n, chain, true);
      pow_exponent_ = false;
    } else if (kind == OpKind::Copy) {
      pow_exponent_ = pow_exponent;
      r = descend(n->inputs[0], chain);
    } else if (kind == OpKind::Gather) {
      int index = descend(n->inputs[1], chain);
      r = gather(n, chain, index);
    } else if (kind == OpKind::Contraction) {
      r = leaf(n, chain, false);  // the product this kernel is the epilogue of
    } else if (kind == OpKind::Reduce) {
      r = row_reduction(n, chain);
    } else {
      ARRAYC_INTERNAL_CHECK(kind == OpKind::Elementwise, "a reduction or product inside a fused group");
      std::vector<int> args;
      for (size_t i = 0; i < n->inputs.size(); ++i) {
        pow_exponent_ = n->op == Op::Pow && i == 1;
        args.push_back(descend(n->inputs[i], chain));
      }
      r = push(KernelInstr{n->op, n->dtype, std::move(args), -1});
    }
    memo_[key] = r;
    return r;
  }

  // A row chain's reduction (passes/row_chains.h), read through the views `chain`: they must
  // show element (rows..., c) of the iteration space its value for those rows, whatever c. Else
  // (numpy broadcasting a row's result down a column, say) it is materialized, and the schedule
  // planned again.
  int row_reduction(const NodeRef& n, const std::vector<const Node*>& chain) {
    ARRAYC_INTERNAL_CHECK(k_.row_chain && n->inputs[0]->shape == iter_, "row reduction outside its row chain");
    StridedView v = apply_views(StridedView::contiguous(n->shape), chain);
    const size_t last = iter_.size() - 1;
    std::vector<int64_t> rows = contiguous_strides(Shape(iter_.begin(), iter_.end() - 1));
    bool per_row = v.shape == iter_ && v.offset == 0 && (v.strides[last] == 0 || iter_[last] == 1);
    for (size_t d = 0; d < last && per_row; ++d) per_row = v.strides[d] == rows[d] || iter_[d] == 1;
    if (!per_row) throw NeedsCopy{n.get(), "reduction (not in a row chain: read across its rows)"};
    std::vector<const Node*> none;
    int x = descend(n->inputs[0], none);
    return push(KernelInstr{n->op, n->dtype, {x}, -1});
  }

  int leaf(const NodeRef& n, const std::vector<const Node*>& chain, bool generate_here) {
    KernelLeaf lf;
    lf.dtype = n->dtype;
    std::string key;
    bool generated = generate_here && !in_memory(*n);
    if (n->op == Op::Constant && generated) {
      lf.op = Op::Constant;
      lf.value = n->value;
      key = "c" + std::string(dtype_name(n->dtype)) + n->value.str();
      if (!constant_is_inlined(n->value, pow_exponent_)) {  // a parameter of its own (descend)
        lf.param = k_.num_constants++;
        constants_.push_back(constant_param_bits(n->value));
        k_.leaves.push_back(lf);
        return push(KernelInstr{lf.op, lf.dtype, {}, static_cast<int>(k_.leaves.size() - 1)});
      }
    } else {
      StridedView base = StridedView::contiguous(n->shape);
      Source src;
      if (generated) {
        lf.op = n->op;
        key = std::string(op_name(n->op)) + dtype_name(n->dtype);
        if (n->op != Op::Iota) {
          // A random leaf's seed is a parameter (issue 26: a loop over seeds compiles once); two
          // random nodes are two leaves, whatever their seeds (hash-consing keeps them apart too).
          lf.seed = static_cast<uint64_t>(n->ints[0]);
          key += "@" + std::to_string(reinterpret_cast<uintptr_t>(n.get()));
        }
      } else {
        std::tie(src, base) = table_.memory_of(n, generate_here);
        lf.op = Op::Buffer;
        key = "m" + source_key(src) + dtype_name(n->dtype);
      }
      StridedView v = apply_views(base, chain);
      if (!perm_.empty()) v = v.transposed(perm_);
      key += view_key(v);
      if (auto it = leaf_keys_.find(key); it != leaf_keys_.end()) return it->second;
      views_.push_back(v);
      lf.index = static_cast<int>(views_.size() - 1);
      if (!generated) {
        lf.ptr = static_cast<int>(inputs_.size());
        inputs_.push_back(src);
      }
    }
    if (auto it = leaf_keys_.find(key); it != leaf_keys_.end()) return it->second;
    if (lf.op == Op::RandUniform || lf.op == Op::RandNormal) {  // its seed: a parameter (issue 26)
      lf.param = k_.num_constants++;
      constants_.push_back(static_cast<int64_t>(lf.seed));
    }
    k_.leaves.push_back(lf);
    int r = push(KernelInstr{lf.op, lf.dtype, {}, static_cast<int>(k_.leaves.size() - 1)});
    leaf_keys_[key] = r;
    return r;
  }

  bool is_constant_leaf(int instr) const {
    int lf = k_.body[instr].leaf;
    return lf >= 0 && k_.leaves[lf].op == Op::Constant;
  }

  // Indexing: a gather reads its source (in memory) at the position view of its result's
  // coordinates plus the index value times the axis stride. The axis stride and extent travel
  // as two indexed operands of zero stride, whose offsets are the values (KernelLeaf::aux).
  int gather(const NodeRef& n, const std::vector<const Node*>& chain, int index) {
    auto [src, mem] = table_.view_of_memory(n->inputs[0]);
    int64_t axis = gather_axis(*n);
    std::vector<int64_t> map = gather_dim_map(*n);
    StridedView pos{mem.offset, n->shape, std::vector<int64_t>(n->shape.size(), 0)};
    for (size_t d = 0; d < map.size(); ++d)
      if (static_cast<int64_t>(d) != axis) pos.strides[map[d]] += mem.strides[d];
    StridedView v = apply_views(pos, chain);
    if (!perm_.empty()) v = v.transposed(perm_);
    KernelLeaf lf;
    lf.op = Op::Gather;
    lf.dtype = n->dtype;
    lf.ptr = static_cast<int>(inputs_.size());
    inputs_.push_back(src);
    views_.push_back(v);
    lf.index = static_cast<int>(views_.size() - 1);
    std::vector<int64_t> zeros(iter_.size(), 0);
    views_.push_back(StridedView{mem.strides[axis], iter_, zeros});
    lf.aux = static_cast<int>(views_.size() - 1);
    views_.push_back(StridedView{mem.shape[axis], iter_, zeros});
    k_.leaves.push_back(lf);
    return push(KernelInstr{Op::Gather, n->dtype, {index}, static_cast<int>(k_.leaves.size() - 1)});
  }

  int push(KernelInstr i) {
    k_.body.push_back(std::move(i));
    return static_cast<int>(k_.body.size() - 1);
  }

  // Drops extent-1 dims and merges neighbours that every operand walks contiguously, then
  // fills the stride kinds (the kernel's specialization) and the runtime parameters.
  LaunchParams collapse() {
    Shape ext;
    std::vector<int> region;  // 0 outer, 1 reduced
    std::vector<std::vector<int64_t>> strides(views_.size());
    // A region (outer or reduced) with a zero extent has no element: it becomes that one dim of
    // extent 0, so that no kernel decomposes an index by the extents beside it (an int32 [8, 0]
    // summed whole was a row loop over rows of length 0, and divided by it: SIGFPE).
    bool empty[2] = {false, false};
    for (size_t d = 0; d < iter_.size(); ++d) empty[static_cast<int>(d) < outer_ ? 0 : 1] |= iter_[d] == 0;
    for (size_t d = 0; d < iter_.size(); ++d) {
      int reg = static_cast<int>(d) < outer_ ? 0 : 1;
      bool row = k_.row_chain && reg == 1;  // a row chain keeps its row dim, even of extent 1
      if (!row && (iter_[d] == 1 || (empty[reg] && iter_[d] != 0))) continue;
      if (empty[reg] && !region.empty() && region.back() == reg) continue;  // a second zero
      bool merge = !ext.empty() && region.back() == reg;
      for (size_t j = 0; j < views_.size() && merge; ++j)
        merge = strides[j].back() == views_[j].strides[d] * iter_[d];
      if (merge) {
        ext.back() *= iter_[d];
        for (size_t j = 0; j < views_.size(); ++j) strides[j].back() = views_[j].strides[d];
      } else {
        ext.push_back(iter_[d]);
        region.push_back(reg);
        for (size_t j = 0; j < views_.size(); ++j) strides[j].push_back(views_[j].strides[d]);
      }
    }
    k_.rank = static_cast<int>(ext.size());
    k_.reduce_rank = static_cast<int>(std::count(region.begin(), region.end(), 1));
    auto kinds = [&](int index) {
      std::vector<StrideKind> out;
      for (int64_t s : strides[index])
        out.push_back(s == 0 ? StrideKind::Zero : s == 1 ? StrideKind::Unit : StrideKind::Any);
      return out;
    };
    for (KernelLeaf& lf : k_.leaves) {
      if (lf.index >= 0) lf.strides = kinds(lf.index);
      if (lf.aux >= 0) lf.aux_strides = kinds(lf.aux);
    }
    for (KernelOutput& o : k_.outputs) o.strides = kinds(o.index);

    LaunchParams lp;
    lp.parallel_extent = 1;
    lp.reduce_extent = 1;
    for (size_t d = 0; d < ext.size(); ++d) (region[d] ? lp.reduce_extent : lp.parallel_extent) *= ext[d];
    if (shape_numel(iter_) == 0) {  // a zero extent may have been dropped above
      int64_t outer_n = 1;
      for (int d = 0; d < outer_; ++d) outer_n *= iter_[d];
      lp.parallel_extent = outer_n;
      lp.reduce_extent = 0;
    }
    lp.params = ext;
    lp.params.push_back(0);
    lp.params.push_back(lp.reduce_extent);
    lp.params.push_back(1);
    for (size_t j = 0; j < views_.size(); ++j) {
      lp.params.push_back(views_[j].offset);
      lp.params.insert(lp.params.end(), strides[j].begin(), strides[j].end());
    }
    lp.params.insert(lp.params.end(), constants_.begin(), constants_.end());
    return lp;
  }

  void name_kernel() {
    std::vector<std::string> names;
    if (k_.is_reduction) names.push_back(op_name(k_.reduce_op));
    for (const KernelInstr& i : k_.body) {
      if (i.leaf >= 0 && i.op != Op::Gather) continue;
      std::string n = op_name(i.op);
      if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
    }
    std::string name;
    for (const std::string& n : names) {
      if (name.size() + n.size() > 48) {
        name += "_etc";
        break;
      }
      name += (name.empty() ? "" : "_") + n;
    }
    if (name.empty()) name = "copy";
    k_.name = (names.size() > 1 ? "fused_" : "") + name;
  }

  const SlotTable& table_;
  int group_;
  Kernel k_;
  Shape iter_;
  int outer_ = 0;
  std::vector<int64_t> perm_;
  std::vector<StridedView> views_;  // per indexed operand
  std::vector<int64_t> constants_;  // per constant parameter: its params value
  std::vector<Source> inputs_;
  bool pow_exponent_ = false;  // descend is at (a view of) pow's exponent: constant_is_inlined
  std::map<std::pair<const Node*, std::vector<const Node*>>, int> memo_;
  std::map<std::string, int> leaf_keys_;
};

// Whether an epilogue kernel reads the product at each element's own index (a contiguous view of
// it over the kernel's space, which is the product's), so that any rows of the product can be
// finished on their own.
bool reads_product_in_place(const KernelStep& ks) {
  const Kernel& k = ks.kernel;
  bool reads = false;
  for (const KernelLeaf& lf : k.leaves) {  // every read of it (p + p.T reads it twice)
    if (lf.ptr < 0 || ks.inputs[lf.ptr].kind != Source::Kind::Product) continue;
    const int64_t* in = &ks.launch.params[k.param_block(lf.index)];  // offset, then strides
    const int64_t* out = &ks.launch.params[k.param_block(k.outputs[0].index)];
    if (!std::equal(in, in + k.rank + 1, out)) return false;
    reads = true;
  }
  return reads;
}

MatrixOperand matrix_operand(const std::pair<Source, StridedView>& memory) {
  const auto& [src, v] = memory;
  MatrixOperand m;
  m.src = src;
  m.offset = v.offset;
  size_t r = v.shape.size();
  m.rows = v.shape[r - 2];
  m.cols = v.shape[r - 1];
  m.row_stride = v.strides[r - 2];
  m.col_stride = v.strides[r - 1];
  m.batch_stride = r == 3 ? v.strides[0] : 0;
  return m;
}

MatrixOperand matrix_operand(const SlotTable& table, const NodeRef& n) { return matrix_operand(table.view_of_memory(n)); }

// issue 29: a GPU product of 16-bit floats (products.h, widened_half_operands) reads the values
// under its operands' widening Casts when fusion left those Casts unmaterialized; then its
// in_dtype is the 16-bit dtype (returns true). A Cast materialized for other readers keeps both
// operands float32.
bool half_operands(const SlotTable& table, const NodeRef& d, DotStep& dot) {
  DType h = widened_half_operands(*d);
  if (h == DType::Float32) return false;
  const FusionPlan& plan = table.plan();
  std::vector<const Node*> chains[2];
  const Node* casts[2];
  bool folded[2];
  for (int i = 0; i < 2; ++i) {
    const NodeRef* p = &d->inputs[i];
    while (op_kind((*p)->op) == OpKind::View && !plan.is_root(p->get())) {
      chains[i].push_back(p->get());
      p = &(*p)->inputs[0];
    }
    casts[i] = p->get();
    folded[i] = (*p)->op == Op::Cast && !plan.is_root(p->get());
  }
  if (folded[0] != folded[1])
    throw NeedsCopy{casts[folded[0] ? 0 : 1], "operand of dot: float32, as its other operand is materialized"};
  if (!folded[0]) return false;
  MatrixOperand* ops[2] = {&dot.a, &dot.b};
  for (int i = 0; i < 2; ++i) {
    auto [src, v] = table.view_of_memory(casts[i]->inputs[0]);
    *ops[i] = matrix_operand({src, apply_views(v, chains[i])});
  }
  dot.in_dtype = h;
  return true;
}

// A scan or sort: its input's view with the axis moved last (issue 28).
AxisStep axis_step(const SlotTable& table, const NodeRef& n) {
  int64_t axis = n->ints[0], rank = n->rank();
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis) perm.push_back(d);
  perm.push_back(axis);
  auto [src, v] = table.view_of_memory(n->inputs[0]);
  StridedView in = v.transposed(perm);
  StridedView out = StridedView::contiguous(n->shape).transposed(perm);
  AxisStep a;
  a.op = n->op;
  a.in_dtype = n->inputs[0]->dtype;
  a.out_dtype = n->dtype;
  a.src = src;
  a.in_offset = in.offset;
  a.shape = in.shape;
  a.in_strides = in.strides;
  a.out_strides = out.strides;
  a.output = table.slot_of(n.get());
  return a;
}

// A sparse scatter (issue 28): x's view in its own dim order, then the index and update views.
AxisStep scatter_step(const SlotTable& table, const NodeRef& n) {
  auto [src, v] = table.view_of_memory(n->inputs[0]);
  AxisStep a;
  a.op = n->op;
  a.in_dtype = a.out_dtype = n->dtype;
  a.src = src;
  a.in_offset = v.offset;
  a.shape = v.shape;
  a.in_strides = v.strides;
  a.out_strides = StridedView::contiguous(n->shape).strides;
  a.output = table.slot_of(n.get());
  for (size_t i = 1; i < 3; ++i) {
    auto [s, w] = table.view_of_memory(n->inputs[i]);
    a.more.push_back({s, n->inputs[i]->dtype, w.offset, w.shape, w.strides});
  }
  return a;
}

Schedule lower(const Graph& g, FusionPlan plan) {
  Schedule s;
  s.plan = std::move(plan);
  SlotTable table(s.plan, s);
  for (const FusionGroup& grp : s.plan.groups)
    for (const NodeRef& r : grp.roots) table.add_slot(r);

  for (size_t gi = 0; gi < s.plan.groups.size(); ++gi) {
    const FusionGroup& grp = s.plan.groups[gi];
    Step step;
    if (grp.kind == FusionGroup::Kind::Dot) {
      const NodeRef& d = grp.product ? grp.product : grp.roots[0];
      DotStep dot;
      dot.dtype = d->dtype;
      dot.batch = d->rank() == 3 ? d->shape[0] : 1;
      dot.in_dtype = d->dtype;
      if (!half_operands(table, d, dot)) {  // issue 29
        dot.a = matrix_operand(table, d->inputs[0]);
        dot.b = matrix_operand(table, d->inputs[1]);
      }
      dot.form = is_float(d->dtype) ? product_form(*d) : ProductForm::General;
      step.label = "dot";
      if (grp.product) {
        dot.output = -1;
        dot.has_epilogue = true;
        dot.epilogue = KernelBuilder(table, static_cast<int>(gi)).build(grp);
        dot.epilogue_by_rows = !dot.epilogue.kernel->is_reduction && reads_product_in_place(dot.epilogue);
        step.label = "dot+" + dot.epilogue.kernel->name;
      } else {
        dot.output = table.slot_of(d.get());
      }
      step.op = std::move(dot);
    } else if (grp.kind == FusionGroup::Kind::Axis) {
      step.op = is_scatter(grp.roots[0]->op) ? scatter_step(table, grp.roots[0]) : axis_step(table, grp.roots[0]);
      step.label = op_name(grp.roots[0]->op);
    } else {
      KernelStep ks = KernelBuilder(table, static_cast<int>(gi)).build(grp);
      step.label = ks.kernel->name;
      step.op = std::move(ks);
    }
    s.steps.push_back(std::move(step));
  }

  std::unordered_set<const Node*> outputs_seen;
  for (const NodeRef& o : g.outputs) {
    OutputView ov;
    ov.dtype = o->dtype;
    ov.shape = o->shape;
    StridedView v;
    if (s.plan.is_root(o.get())) {
      ov.src = Source{Source::Kind::Slot, nullptr, table.slot_of(o.get())};
      v = StridedView::contiguous(o->shape);
    } else {
      try {
        std::tie(ov.src, v) = table.view_of_memory(o);
      } catch (const NeedsCopy&) {
        throw NeedsCopy{o.get()};
      }
    }
    ov.offset = v.offset;
    ov.strides = v.strides;
    s.outputs.push_back(ov);
  }

  // Release each slot after its last reader, unless it is an output.
  std::vector<bool> keep(s.slots.size(), false);
  for (const OutputView& ov : s.outputs)
    if (ov.src.kind == Source::Kind::Slot) keep[ov.src.index] = true;
  std::vector<int> last(s.slots.size(), -1);
  for (size_t i = 0; i < s.steps.size(); ++i) {
    auto reads = [&](const Source& src) {
      if (src.kind == Source::Kind::Slot) last[src.index] = static_cast<int>(i);
    };
    if (auto* ks = std::get_if<KernelStep>(&s.steps[i].op)) {
      for (const Source& src : ks->inputs) reads(src);
    } else if (auto* as = std::get_if<AxisStep>(&s.steps[i].op)) {
      reads(as->src);
      for (const AxisStep::Operand& o : as->more) reads(o.src);
    } else {
      const DotStep& d = std::get<DotStep>(s.steps[i].op);
      reads(d.a.src);
      reads(d.b.src);
      for (const Source& src : d.epilogue.inputs) reads(src);
    }
  }
  for (size_t slot = 0; slot < s.slots.size(); ++slot)
    if (!keep[slot] && last[slot] >= 0) s.steps[last[slot]].release.push_back(static_cast<int>(slot));
  return s;
}

}  // namespace

Schedule build_schedule(const Graph& g, const FusionOptions& opts_in) {
  FusionOptions opts = opts_in;
  for (;;) {
    try {
      return lower(g, plan_fusion(g, opts));
    } catch (const NeedsCopy& nc) {
      bool added = opts.forced.emplace(nc.node, nc.why).second;
      ARRAYC_INTERNAL_CHECK(added, "materializing a node did not make its views expressible");
    }
  }
}

std::string print_schedule(const Schedule& s) {
  std::vector<std::string> titles;
  for (size_t i = 0; i < s.steps.size(); ++i)
    titles.push_back("kernel " + std::to_string(i) + ": " + s.steps[i].label);
  return print_fusion_plan(s.plan, titles);
}

}  // namespace arrayc::detail
