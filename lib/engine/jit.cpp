// jit(): trace once per signature, then bind buffers and launch.
//
// Programs are cached at two levels. The signature (per input: dtype, rank, which extents are 1,
// device) selects the kernels: they are specialized on it and nothing else. The exact shapes
// select a ready-to-run Program (launch parameters computed). A call with the shapes of an
// earlier call only binds and launches; a call with new extents of a known signature runs the
// function again to build the graph at those shapes (it may depend on them, e.g. through
// reshape) and reuses the compiled kernels from the cache: no compile. A jit function keeps its
// kProgramsKept most recently used Programs (a loop over many lengths would otherwise keep one
// Program, and its launch plans, per length forever); an evicted one is prepared again if its
// shapes come back, from kernels still in the kernel cache.
#include <map>
#include <mutex>

#include "arrayc/inspect.h"
#include "arrayc/jit.h"
#include "arrayc/products.h"
#include "engine/executor.h"
#include "ir/build.h"
#include "support/interrupt.h"
#include "support/stats.h"

namespace arrayc::detail {

constexpr size_t kProgramsKept = 64;

struct JitFunction::State {
  Fn fn;
  std::mutex mu;
  struct Entry {
    std::shared_ptr<Program> program;
    uint64_t last_use = 0;
  };
  std::map<std::vector<int64_t>, Entry> programs;  // by exact key
  uint64_t uses = 0;
  int64_t traces = 0;

  // Keeps `program` under `key`, evicting the least recently used past kProgramsKept. Locked.
  void keep(std::vector<int64_t> key, std::shared_ptr<Program> program) {
    if (programs.size() >= kProgramsKept) {
      auto oldest = programs.begin();
      for (auto it = programs.begin(); it != programs.end(); ++it)
        if (it->second.last_use < oldest->second.last_use) oldest = it;
      programs.erase(oldest);
    }
    programs[std::move(key)] = Entry{std::move(program), ++uses};
  }
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

// The exact key: fusion and math modes, then per input dtype, device, alignment, rank and extents.
std::vector<int64_t> exact_key(const std::vector<Array>& in, const std::vector<ParamBinding>& params) {
  std::vector<int64_t> key{(fusion_enabled() ? 1 : 0) | (fast_math_enabled() ? 2 : 0) | (epilogue_fusion_enabled() ? 4 : 0)};
  for (size_t i = 0; i < in.size(); ++i) {
    const Array& a = in[i];
    key.push_back(static_cast<int64_t>(a.dtype()) | (static_cast<int64_t>(a.device().kind) << 8) |
                  (static_cast<int64_t>(aligned(params[i])) << 15) | (static_cast<int64_t>(a.device().index) << 16));
    key.push_back(a.ndim());
    key.insert(key.end(), a.shape().begin(), a.shape().end());
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

// Placeholders standing for the inputs while the function is traced.
std::vector<Array> placeholders_for(const std::vector<Array>& inputs) {
  std::vector<Array> p;
  for (size_t i = 0; i < inputs.size(); ++i)
    p.emplace_back(make_param(static_cast<int64_t>(i), inputs[i].dtype(), inputs[i].shape(), inputs[i].device()));
  return p;
}

Stages JitFunction::inspect(const std::vector<Array>& inputs, bool fuse) {
  std::vector<Array> outs = state_->fn(placeholders_for(inputs));
  return arrayc::inspect(outs, fuse);
}

std::vector<Array> JitFunction::call(const std::vector<Array>& inputs) {
  clear_interrupt();  // as eval(): an old request is dropped; one made from now on stops the call
  State& s = *state_;
  std::vector<ParamBinding> params;
  params.reserve(inputs.size());
  for (const Array& a : inputs) params.push_back(bind(a));
  std::vector<int64_t> key = exact_key(inputs, params);

  std::shared_ptr<Program> program;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (auto it = s.programs.find(key); it != s.programs.end()) {
      program = it->second.program;
      it->second.last_use = ++s.uses;
    }
  }
  if (!program) {
    std::vector<Array> outs = s.fn(placeholders_for(inputs));
    counters().traces++;
    Graph g;
    for (const Array& o : outs) g.outputs.push_back(o.node());
    CompileOptions opts = user_compile_options();
    for (const ParamBinding& b : params) opts.plan.param_aligned.push_back(aligned(b));
    program = compile(g, opts);
    std::lock_guard<std::mutex> lock(s.mu);
    s.traces++;
    s.keep(std::move(key), program);
  }
  std::vector<NodeRef> nodes = run(*program, params);
  std::vector<Array> result;
  result.reserve(nodes.size());
  for (NodeRef& n : nodes) result.emplace_back(std::move(n));
  return result;
}

}  // namespace arrayc::detail
