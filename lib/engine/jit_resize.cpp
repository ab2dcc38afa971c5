#include "engine/jit_resize.h"

#include <algorithm>
#include <array>
#include <string>

#include "backend/backend.h"
#include "engine/kernel_cache.h"
#include "ir/graph.h"
#include "kernel/kernel.h"
#include "support/hash.h"

namespace arrayc::detail {
namespace {

// Probe multipliers: probe 0 multiplies symbol i by kPrimes[i], probe 1 by kPrimes[k + i].
constexpr std::array<int64_t, 16> kPrimes{2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53};
constexpr int64_t kMaxProbeElements = int64_t{1} << 40;

// Every size of a schedule, in one fixed order: slot shapes, each step's launch parameters
// (extents, strides, offsets, constant parameters), product dims and strides, scan and sort
// layouts, output views. S is Schedule or const Schedule; f takes each number by reference.
template <typename S, typename F> void for_each_size(S& s, F&& f) {
  auto all = [&](auto& v) {
    for (auto& x : v) f(x);
  };
  auto kernel = [&](auto& ks) {
    all(ks.launch.params);
    f(ks.launch.parallel_extent);
    f(ks.launch.reduce_extent);
  };
  auto matrix = [&](auto& m) {
    f(m.offset);
    f(m.rows);
    f(m.cols);
    f(m.row_stride);
    f(m.col_stride);
    f(m.batch_stride);
  };
  for (auto& slot : s.slots) all(slot.shape);
  for (auto& step : s.steps) {
    if (auto* ks = std::get_if<KernelStep>(&step.op)) {
      kernel(*ks);
    } else if (auto* d = std::get_if<DotStep>(&step.op)) {
      f(d->batch);
      matrix(d->a);
      matrix(d->b);
      if (d->has_epilogue) kernel(d->epilogue);
    } else {
      auto& a = std::get<AxisStep>(step.op);
      f(a.in_offset);
      all(a.shape);
      all(a.in_strides);
      all(a.out_strides);
    }
  }
  for (auto& o : s.outputs) {
    all(o.shape);
    f(o.offset);
    all(o.strides);
  }
}

std::string source_text(const Source& src) {
  return std::to_string(static_cast<int>(src.kind)) + ":" + std::to_string(src.index) + ":" +
         std::to_string(reinterpret_cast<uintptr_t>(src.storage.get())) + " ";
}

std::string kernel_step_text(const KernelStep& ks) {
  std::string t = ks.kernel->str() + "in ";
  for (const Source& src : ks.inputs) t += source_text(src);
  t += "out";
  for (int o : ks.outputs) t += " " + std::to_string(o);
  return t + " params " + std::to_string(ks.launch.params.size()) + "\n";
}

// Everything of a schedule but its sizes: two schedules with the same text and the same sizes
// are the same schedule.
std::string structure(const Schedule& s) {
  std::string t;
  for (const Slot& slot : s.slots)
    t += "slot " + std::string(dtype_name(slot.dtype)) + " " + slot.device.str() + " " +
         std::to_string(slot.shape.size()) + "\n";
  for (const Step& step : s.steps) {
    t += "step " + step.label + " release";
    for (int r : step.release) t += " " + std::to_string(r);
    t += "\n";
    if (const auto* ks = std::get_if<KernelStep>(&step.op)) {
      t += kernel_step_text(*ks);
    } else if (const auto* d = std::get_if<DotStep>(&step.op)) {
      t += "dot " + std::string(dtype_name(d->dtype)) + " in " + dtype_name(d->in_dtype) + " form " + std::to_string(static_cast<int>(d->form)) +
           " out " + std::to_string(d->output) + " epilogue " + std::to_string(d->has_epilogue) +
           std::to_string(d->epilogue_by_rows) + " " + source_text(d->a.src) + source_text(d->b.src) + "\n";
      if (d->has_epilogue) t += kernel_step_text(d->epilogue);
    } else {
      const AxisStep& a = std::get<AxisStep>(step.op);
      t += "axis " + std::string(op_name(a.op)) + " " + dtype_name(a.in_dtype) + " " + dtype_name(a.out_dtype) + " " +
           source_text(a.src) + std::to_string(a.output) + " " + std::to_string(a.shape.size()) + "\n";
    }
  }
  for (const OutputView& o : s.outputs)
    t += "output " + source_text(o.src) + dtype_name(o.dtype) + " " + std::to_string(o.shape.size()) + "\n";
  return t;
}

std::vector<int64_t> sizes_of(const Schedule& s) {
  std::vector<int64_t> v;
  for_each_size(s, [&](const int64_t& x) { v.push_back(x); });
  return v;
}

bool mul(int64_t a, int64_t b, int64_t* out) { return !__builtin_mul_overflow(a, b, out); }

// prod(symbols[i] ^ exponents[i]); false on overflow.
bool power_product(const std::vector<int64_t>& symbols, const std::vector<uint8_t>& exponents, int64_t* out) {
  int64_t p = 1;
  for (size_t i = 0; i < exponents.size(); ++i)
    for (uint8_t e = 0; e < exponents[i]; ++e)
      if (!mul(p, symbols[i], &p)) return false;
  *out = p;
  return true;
}

std::vector<int64_t> scaled(const std::vector<int64_t>& symbols, int probe) {
  std::vector<int64_t> out(symbols.size());
  size_t k = symbols.size();
  for (size_t i = 0; i < k; ++i) out[i] = symbols[i] * kPrimes[probe * k + i];
  return out;
}

}  // namespace

ShapeClass shape_class(const std::vector<Shape>& shapes) {
  ShapeClass c;
  for (const Shape& s : shapes) {
    c.key.push_back(static_cast<int64_t>(s.size()));
    for (int64_t e : s) {
      if (e <= 1) {
        c.key.push_back(e);
        continue;
      }
      // Symbols are few (one per distinct extent): a search beats a map.
      size_t symbol = std::find(c.symbols.begin(), c.symbols.end(), e) - c.symbols.begin();
      if (symbol == c.symbols.size()) c.symbols.push_back(e);
      c.key.push_back(2 + static_cast<int64_t>(symbol));
    }
  }
  return c;
}

std::vector<Shape> class_shapes(const ShapeClass& c, const std::vector<int64_t>& symbols) {
  std::vector<Shape> out;
  for (size_t i = 0; i < c.key.size();) {
    int64_t rank = c.key[i++];
    Shape s;
    for (int64_t d = 0; d < rank; ++d, ++i) s.push_back(c.key[i] <= 1 ? c.key[i] : symbols[c.key[i] - 2]);
    out.push_back(std::move(s));
  }
  return out;
}

namespace {

// Each node's position in the fingerprint (-1 while its inputs are being visited), by address:
// open addressing in one array, kept per thread between calls, so that the walk allocates
// nothing (an unordered_map made one allocation per node: 2/3 of the walk's time).
class NodeIndex {
 public:
  NodeIndex() : slots_(table()) { reset(64); }
  ~NodeIndex() {
    if (slots_.size() > 4096) slots_ = {};  // a huge graph's table is not kept
  }
  // Inserts n as -1; false if it was there already.
  bool insert(const Node* n) {
    if (2 * (count_ + 1) > slots_.size()) grow();
    Slot& s = find(n);
    if (s.node) return false;
    s = {n, -1};
    ++count_;
    return true;
  }
  int64_t& at(const Node* n) {
    Slot& s = find(n);
    ARRAYC_INTERNAL_CHECK(s.node == n, "class_fingerprint: a node was not visited");
    return s.index;
  }

 private:
  struct Slot {
    const Node* node;
    int64_t index;
  };
  static std::vector<Slot>& table() {
    thread_local std::vector<Slot> t;
    return t;
  }
  void reset(size_t size) {
    slots_.assign(size, Slot{nullptr, 0});
    count_ = 0;
  }
  Slot& find(const Node* n) {
    size_t mask = slots_.size() - 1;
    for (size_t i = hash_combine(0, reinterpret_cast<size_t>(n)) & mask;; i = (i + 1) & mask)
      if (slots_[i].node == n || !slots_[i].node) return slots_[i];
  }
  void grow() {
    std::vector<Slot> old;
    old.swap(slots_);
    reset(old.size() * 2);
    for (const Slot& s : old)
      if (s.node) {
        find(s.node) = s;
        ++count_;
      }
  }
  std::vector<Slot>& slots_;
  size_t count_ = 0;
};

// class_fingerprint into f (cleared first); stack is the walk's, passed in so that a caller can keep
// both between calls.
void fingerprint_into(const std::vector<NodeRef>& outputs, const std::vector<int64_t>& symbols, ClassFingerprint& f,
                      std::vector<std::pair<const Node*, size_t>>& stack) {
  f.clear();
  stack.clear();
  // A number as two words: 0 and the number, or 1 + the symbol it equals and 0.
  auto num = [&](int64_t x) {
    size_t i = 0;
    while (x > 1 && i < symbols.size() && symbols[i] != x) ++i;
    bool symbol = x > 1 && i < symbols.size();
    f.push_back(symbol ? static_cast<int64_t>(1 + i) : 0);
    f.push_back(symbol ? 0 : x);
  };
  NodeIndex index;
  auto emit = [&](const Node& n) {
    f.insert(f.end(), {static_cast<int64_t>(n.op), static_cast<int64_t>(n.dtype), static_cast<int64_t>(n.device.kind),
                       static_cast<int64_t>(n.device.index), static_cast<int64_t>(n.shape.size())});
    for (int64_t d : n.shape) num(d);
    f.push_back(static_cast<int64_t>(n.inputs.size()));
    for (const NodeRef& in : n.inputs) f.push_back(index.at(in.get()));
    f.push_back(static_cast<int64_t>(n.ints.size()));
    for (int64_t x : n.ints) num(x);
    f.push_back(n.op == Op::Constant ? constant_param_bits(n.value) : 0);
    f.push_back(static_cast<int64_t>(reinterpret_cast<uintptr_t>(n.storage.get())));
  };
  // Post order, as topo_order (ir/graph.h), without copying references.
  int64_t next = 0;
  for (const NodeRef& o : outputs) {
    if (!index.insert(o.get())) continue;
    stack.push_back({o.get(), 0});
    while (!stack.empty()) {
      auto& [n, i] = stack.back();
      if (i < n->inputs.size()) {
        const Node* in = n->inputs[i++].get();
        if (index.insert(in)) stack.push_back({in, 0});
      } else {
        emit(*n);
        index.at(n) = next++;
        stack.pop_back();
      }
    }
  }
  f.push_back(-1);
  for (const NodeRef& o : outputs) f.push_back(index.at(o.get()));
}

}  // namespace

ClassFingerprint class_fingerprint(const std::vector<NodeRef>& outputs, const std::vector<int64_t>& symbols) {
  ClassFingerprint f;
  std::vector<std::pair<const Node*, size_t>> stack;
  fingerprint_into(outputs, symbols, f, stack);
  return f;
}

bool ResizableProgram::traced_as_class(const std::vector<NodeRef>& outputs, const std::vector<int64_t>& symbols) const {
  // Made on every call at a new length: the buffers are kept per thread (a huge graph's are not).
  struct Scratch {
    ClassFingerprint f;
    std::vector<std::pair<const Node*, size_t>> stack;
  };
  thread_local Scratch s;
  fingerprint_into(outputs, symbols, s.f, s.stack);
  bool same = s.f == fingerprint_;
  if (s.f.capacity() > 65536) s = {};
  return same;
}

std::vector<int64_t> probe_symbols(const ShapeClass& c, int probe) {
  size_t k = c.symbols.size();
  if (2 * k > kPrimes.size()) return {};
  for (size_t i = 0; i < k; ++i)
    if (c.symbols[i] > kMaxProbeElements / kPrimes[2 * k - 1]) return {};
  std::vector<int64_t> out = scaled(c.symbols, probe);
  for (size_t i = 0; i < k; ++i)
    for (size_t j = 0; j < i; ++j)
      if (out[i] == out[j]) return {};
  for (const Shape& s : class_shapes(c, out)) {
    int64_t n = 1;
    for (int64_t e : s)
      if (!mul(n, e, &n) || n > kMaxProbeElements) return {};
  }
  return out;
}

std::shared_ptr<const ResizableProgram> ResizableProgram::fit(std::shared_ptr<const Program> base,
                                                              const ShapeClass& c, const Schedule& probe0,
                                                              const Schedule& probe1, const CompileOptions& opts,
                                                              ClassFingerprint fingerprint) {
  const Schedule& s = base->schedule;
  std::string text = structure(s);
  if (structure(probe0) != text || structure(probe1) != text) return nullptr;
  std::vector<int64_t> x0 = sizes_of(s), xa = sizes_of(probe0), xb = sizes_of(probe1);
  if (xa.size() != x0.size() || xb.size() != x0.size()) return nullptr;
  size_t k = c.symbols.size();
  std::vector<int64_t> vb = scaled(c.symbols, 1);
  auto r = std::make_shared<ResizableProgram>();
  r->sizes_.resize(x0.size());
  for (size_t j = 0; j < x0.size(); ++j) {
    Monomial& m = r->sizes_[j];
    if (x0[j] == xa[j] && x0[j] == xb[j]) {  // a constant (the common case: no division)
      m.coefficient = x0[j];
      continue;
    }
    if (x0[j] == 0 || xa[j] % x0[j] != 0) return nullptr;
    int64_t ratio = xa[j] / x0[j];
    if (ratio <= 0) return nullptr;
    m.exponents.assign(k, 0);
    for (size_t i = 0; i < k; ++i)
      while (ratio % kPrimes[i] == 0) {
        ratio /= kPrimes[i];
        ++m.exponents[i];
      }
    int64_t p, q, want;
    if (ratio != 1 || !power_product(c.symbols, m.exponents, &p) || x0[j] % p != 0) return nullptr;
    m.coefficient = x0[j] / p;
    // The second probe checks the fit with other multipliers.
    if (!power_product(vb, m.exponents, &q) || !mul(m.coefficient, q, &want) || want != xb[j]) return nullptr;
  }
  r->base_ = std::move(base);
  r->opts_ = opts;
  r->fingerprint_ = std::move(fingerprint);
  return r;
}

std::unique_ptr<Program> ResizableProgram::resize(const std::vector<int64_t>& symbols) const {
  auto p = std::make_unique<Program>();
  const Schedule& b = base_->schedule;
  Schedule& s = p->schedule;  // the fusion plan stays out: it names the traced graph's nodes
  s.slots = b.slots;
  s.steps = b.steps;
  s.outputs = b.outputs;
  size_t j = 0;
  bool ok = true;
  for_each_size(s, [&](int64_t& x) {
    const Monomial& m = sizes_[j++];
    int64_t p = 1;
    ok = ok && power_product(symbols, m.exponents, &p) && mul(m.coefficient, p, &x);
  });
  if (!ok) return nullptr;
  Compiler& cache = kernel_cache();
  for (size_t i = 0; i < s.steps.size(); ++i) {
    const Step& step = s.steps[i];
    Device d = step_device(step, s);
    p->launches.push_back(backend_for(d).replan(step, s, d, opts_.plan, cache, base_->launches[i].get()));
  }
  return p;
}

}  // namespace arrayc::detail
