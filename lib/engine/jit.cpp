// jit(): trace once per signature and shape class, then bind buffers and launch.
//
// Programs are cached at two levels. The exact key (per input: dtype, device, alignment,
// extents) selects a ready-to-run Program: a call with the shapes of an earlier call only binds
// and launches. The class key (the same, but per dim only 0, 1 or which symbol: dims of equal
// extent share one; engine/jit_resize.h) selects a ResizableProgram: a call with new extents of
// a known class resizes the class's Program (every size recomputed from the symbols, every launch
// made again from the first one's code) without scheduling or looking a kernel up: at once for an
// extent-blind function (engine/extent_reads.h: its traces read no extent, its graph holds ops
// that cannot depend on one), else once a trace at the new extents has given the class's graph
// (class_fingerprint: a function that branches on an extent is planned anew, never resized into
// the other branch's Program). The first call of
// a class learns how its sizes follow the symbols by tracing the function twice more at probe
// extents (scheduled, never compiled or run); a class whose sizes do not follow them as monomials
// (the function divides an extent, reads x.size() into a constant, or fails at a probe extent)
// is planned again at each new length, and finds its kernels in the cache. A jit function keeps its kProgramsKept most
// recently used Programs and classes (a loop over many lengths would otherwise keep one Program,
// and its launch plans, per length forever); an evicted one is made again if its shapes come back.
#include <map>
#include <mutex>

#include "arrayc/inspect.h"
#include "arrayc/jit.h"
#include "arrayc/matmul_precision.h"
#include "arrayc/products.h"
#include "engine/executor.h"
#include "engine/extent_reads.h"
#include "engine/jit_resize.h"
#include "ir/build.h"
#include "support/heap.h"
#include "support/interrupt.h"
#include "support/stats.h"

namespace arrayc::detail {

constexpr size_t kProgramsKept = 64;

// Keeps `value` under `key` in a map of Entry {value, last_use}, evicting the least recently used
// entry past kProgramsKept.
template <typename Map, typename V> void keep(Map& map, std::vector<int64_t> key, V value, uint64_t use) {
  if (map.size() >= kProgramsKept && !map.count(key)) {
    auto oldest = map.begin();
    for (auto it = map.begin(); it != map.end(); ++it)
      if (it->second.last_use < oldest->second.last_use) oldest = it;
    map.erase(oldest);
  }
  map[std::move(key)] = {std::move(value), use};
}

struct JitFunction::State {
  Fn fn;
  std::mutex mu;
  struct Entry {
    std::shared_ptr<Program> program;
    uint64_t last_use = 0;
  };
  std::map<std::vector<int64_t>, Entry> programs;  // by exact key
  struct LearnedClass {
    std::shared_ptr<const ResizableProgram> resizable;  // null: each new length traces again
    bool blind = false;  // resized to a new length without a trace (engine/extent_reads.h)
  };
  struct ClassEntry {
    LearnedClass learned;
    uint64_t last_use = 0;
  };
  std::map<std::vector<int64_t>, ClassEntry> classes;  // by class key
  uint64_t uses = 0;
  int64_t traces = 0;
};

JitFunction::JitFunction(Fn fn) : state_(std::make_shared<State>()) { state_->fn = std::move(fn); }
JitFunction::~JitFunction() = default;

int64_t JitFunction::num_traces() const { return state_->traces; }

namespace {

// Whether a bound parameter's data starts 16-byte aligned (GPU products load vectors if so).
bool aligned(const ParamBinding& b) {
  return reinterpret_cast<uintptr_t>(b.storage->data) % 16 == 0 &&
         b.offset * static_cast<int64_t>(dtype_size(b.dtype)) % 16 == 0;
}

// What exact and class keys share: fusion and math modes, then per input dtype, device and
// alignment.
std::vector<int64_t> signature_key(const std::vector<Array>& in, const std::vector<ParamBinding>& params) {
  std::vector<int64_t> key{(fusion_enabled() ? 1 : 0) | (fast_math_enabled() ? 2 : 0) | (epilogue_fusion_enabled() ? 4 : 0) |
                          (matmul_precision() == MatmulPrecision::High ? 8 : 0)};
  for (size_t i = 0; i < in.size(); ++i) {
    const Array& a = in[i];
    key.push_back(static_cast<int64_t>(a.dtype()) | (static_cast<int64_t>(a.device().kind) << 8) |
                  (static_cast<int64_t>(aligned(params[i])) << 15) | (static_cast<int64_t>(a.device().index) << 16));
  }
  return key;
}

// A contiguous buffer holding the input's values.
ParamBinding bind(const Array& a) {
  NodeRef n = a.node();
  if (n->op != Op::Buffer) {
    a.eval();
    n = a.node();
  }
  if (n->numel() > 1 && !is_contiguous_view(*n)) {
    Array copy(make_copy(n));
    copy.eval();
    n = copy.node();
  }
  return ParamBinding{n->storage, n->buffer_offset(), n->dtype};
}

}  // namespace

namespace {

// Placeholders standing for the inputs, at these shapes, while the function is traced.
std::vector<Array> placeholders_at(const std::vector<Array>& inputs, const std::vector<Shape>& shapes) {
  std::vector<Array> p;
  for (size_t i = 0; i < inputs.size(); ++i)
    p.emplace_back(make_param(static_cast<int64_t>(i), inputs[i].dtype(), shapes[i], inputs[i].device()));
  return p;
}

}  // namespace

// Placeholders standing for the inputs while the function is traced.
std::vector<Array> placeholders_for(const std::vector<Array>& inputs) {
  std::vector<Shape> shapes;
  for (const Array& a : inputs) shapes.push_back(a.shape());
  return placeholders_at(inputs, shapes);
}

Stages JitFunction::inspect(const std::vector<Array>& inputs, bool fuse) {
  std::vector<Array> outs = state_->fn(placeholders_for(inputs));
  return arrayc::inspect(outs, fuse);
}

namespace {

Graph graph_of(const std::vector<Array>& outs) {
  Graph g;
  for (const Array& o : outs) g.outputs.push_back(o.node());
  return g;
}

// The first call of a shape class: traces the function at the two probe extents and fits the
// class's sizes (jit_resize.h). Null when the class has one shape only, or its sizes cannot be
// fitted; an error at a probe extent means the latter, and is not the caller's.
std::shared_ptr<const ResizableProgram> learn_class(const JitFunction::Fn& fn, const ShapeClass& c,
                                                    const std::vector<Array>& inputs, const Graph& traced,
                                                    std::shared_ptr<const Program> base, const CompileOptions& opts) {
  if (c.symbols.empty()) return nullptr;
  std::vector<Schedule> probes;
  for (int probe = 0; probe < 2; ++probe) {
    std::vector<int64_t> symbols = probe_symbols(c, probe);
    if (symbols.empty()) return nullptr;
    counters().probe_traces++;
    try {
      probes.push_back(schedule_graph(graph_of(fn(placeholders_at(inputs, class_shapes(c, symbols)))), opts));
    } catch (const Interrupted&) {
      throw;
    } catch (...) {
      return nullptr;
    }
  }
  return ResizableProgram::fit(std::move(base), c, probes[0], probes[1], opts,
                               class_fingerprint(traced.outputs, c.symbols));
}

}  // namespace

std::vector<Array> JitFunction::call(const std::vector<Array>& inputs) {
  clear_interrupt();  // as eval(): an old request is dropped; one made from now on stops the call
  State& s = *state_;
  std::vector<ParamBinding> params;
  params.reserve(inputs.size());
  std::vector<Shape> shapes;
  shapes.reserve(inputs.size());
  for (const Array& a : inputs) {
    params.push_back(bind(a));
    shapes.push_back(a.shape());
  }
  std::vector<int64_t> sig = signature_key(inputs, params);
  std::vector<int64_t> key = sig;
  for (const Shape& shape : shapes) {
    key.push_back(static_cast<int64_t>(shape.size()));
    key.insert(key.end(), shape.begin(), shape.end());
  }

  std::shared_ptr<Program> program;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (auto it = s.programs.find(key); it != s.programs.end()) {
      program = it->second.program;
      it->second.last_use = ++s.uses;
    }
  }
  if (!program) {
    ShapeClass c = shape_class(shapes);
    std::vector<int64_t> class_key = sig;
    class_key.insert(class_key.end(), c.key.begin(), c.key.end());
    bool known_class = false;
    State::LearnedClass learned;
    {
      std::lock_guard<std::mutex> lock(s.mu);
      if (auto it = s.classes.find(class_key); it != s.classes.end()) {
        known_class = true;
        learned = it->second.learned;
        it->second.last_use = ++s.uses;
      }
    }
    // A new length of a class whose traces read no extent and built an extent-blind graph
    // resizes the class's Program at once: the function would build the same graph again.
    if (known_class && learned.blind) {
      program = learned.resizable->resize(c.symbols);
      if (program) counters().resizes++;
    }
    if (!program) {
      // Else it traces the function (cheap: it builds a graph), and resizes the class's Program
      // only if the trace is the class's graph at the new extents; else it plans anew.
      const int64_t reads = extent_reads();
      std::vector<Array> outs = s.fn(placeholders_at(inputs, shapes));
      const bool read_extents = extent_reads() != reads;
      counters().traces++;
      {
        std::lock_guard<std::mutex> lock(s.mu);
        s.traces++;
      }
      Graph traced = graph_of(outs);
      if (learned.resizable && learned.resizable->traced_as_class(traced.outputs, c.symbols)) {
        program = learned.resizable->resize(c.symbols);
        if (program) counters().resizes++;
      }
      if (!program) {
        CompileOptions opts = user_compile_options();
        for (const ParamBinding& b : params) opts.plan.param_aligned.push_back(aligned(b));
        program = compile(traced, opts);
        if (!known_class) {
          const int64_t probe_reads = extent_reads();
          learned.resizable = learn_class(s.fn, c, inputs, traced, program, opts);
          learned.blind = learned.resizable && !read_extents && extent_reads() == probe_reads &&
                          extent_blind_graph(traced.outputs);
        }
        settle_heap();  // the compile's freed blocks merged now, not in a later call (support/heap.h)
        std::lock_guard<std::mutex> lock(s.mu);
        if (!known_class) keep(s.classes, std::move(class_key), std::move(learned), ++s.uses);
      }
    }
    std::lock_guard<std::mutex> lock(s.mu);
    keep(s.programs, std::move(key), program, ++s.uses);
  }
  std::vector<NodeRef> nodes = run(*program, params);
  std::vector<Array> result;
  result.reserve(nodes.size());
  for (NodeRef& n : nodes) result.emplace_back(std::move(n));
  return result;
}

}  // namespace arrayc::detail
