// :time EXPR: the compile of an expression broken into stages, then its steady-state run.
#include <algorithm>
#include <chrono>
#include <iomanip>
#include <ostream>

#include "internal.h"
#include "interrupt.h"

namespace arrayc::tool {

using Clock = std::chrono::steady_clock;

namespace {

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

}  // namespace

// :time EXPR: the expression as a jit function (its evaluated variables are the parameters),
// its first call broken into stages, then the median of repeated calls.
void Session::time_expr(const Program& p, int32_t expr) {
  std::ostream& out = *opts_.out;
  Scope scope;
  scope.tracing = true;  // a def call builds its graph instead of running
  auto t0 = Clock::now();
  Value probe = eval(p, expr, scope);
  double build_ms = ms_since(t0);
  if (probe.kind != Value::Kind::Array && probe.kind != Value::Kind::Weak)
    fail(p.node(expr), std::string("nothing to time: this is ") + kind_name(probe));

  // Free variables holding evaluated arrays become parameters; lazy ones are traced through.
  std::vector<std::string> params;
  std::vector<Array> inputs;
  std::vector<int32_t> todo{expr};
  while (!todo.empty()) {
    const Node& n = p.node(todo.back());
    todo.pop_back();
    for (uint32_t k = 0; k < n.count; ++k) todo.push_back(static_cast<int32_t>(p.child(n, k)));
    if (n.kind != NodeKind::Name) continue;
    std::string name(n.text);
    auto it = vars_.find(name);
    if (it == vars_.end() || it->second.kind != Value::Kind::Array || !it->second.array->is_evaluated()) continue;
    if (std::find(params.begin(), params.end(), name) != params.end()) continue;
    if (params.size() == kMaxParams) continue;  // the rest are captured as constants
    params.push_back(name);
    inputs.push_back(*it->second.array);
  }
  Body body = [this, &p, expr, params](const std::vector<Array>& in) {
    std::map<std::string, Value> locals;
    for (size_t i = 0; i < params.size(); ++i) locals[params[i]] = array_value(in[i]);
    Scope s;
    s.locals = &locals;
    s.tracing = true;
    Value v = eval(p, expr, s);
    return v.kind == Value::Kind::Weak ? strong(v) : *v.array;
  };
  JitEntry j = make_jit(inputs.size(), body);

  // A GPU call returns once its kernels are queued: each timed call waits for them.
  Stats s0 = stats();
  t0 = Clock::now();
  Array r = j.call(inputs).at(0);
  synchronize(r.device());
  double first_ms = ms_since(t0);
  Stats s1 = stats();

  std::vector<double> runs;
  auto t_all = Clock::now();
  while (runs.size() < 3 || (runs.size() < 1000 && ms_since(t_all) < 500)) {
    if (sigint_received()) throw Interrupted();  // Ctrl-C between two timed calls
    auto t = Clock::now();
    Array ri = j.call(inputs).at(0);
    synchronize(ri.device());
    runs.push_back(ms_since(t));
  }
  Stats s2 = stats();
  std::vector<double> sorted = runs;
  std::sort(sorted.begin(), sorted.end());
  size_t n = sorted.size();
  double median = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  double llvm_ms = s1.compile_ms - s0.compile_ms;
  double front_ms = std::max(0.0, first_ms - llvm_ms - sorted.front());
  auto line = [&](const char* what, double ms, const std::string& note) {
    out << "  " << std::left << std::setw(34) << what << std::right << std::fixed
        << std::setprecision(3) << std::setw(10) << ms << " ms" << (note.empty() ? "" : "   " + note) << "\n";
    out.unsetf(std::ios::fixed);
  };
  out << "compile (first call, " << inputs.size() << " parameter" << (inputs.size() == 1 ? "" : "s")
      << (params.empty() ? "" : ": ") ;
  for (size_t i = 0; i < params.size(); ++i) out << (i ? ", " : "") << params[i];
  out << ")\n";
  line("build graph (arrayc tool)", build_ms, "");
  line("trace + graph passes + fusion", front_ms, "first call - LLVM - fastest run");
  line("LLVM -O3 + machine code", llvm_ms,
       std::to_string(s1.compiles - s0.compiles) + " kernel(s) compiled, " +
           std::to_string(s1.cache_hits - s0.cache_hits) + " from the cache");
  line("first call in all", first_ms, "");
  out << "run (steady state, " << n << " calls)\n";
  int64_t launches = (s2.kernel_launches - s1.kernel_launches) / static_cast<int64_t>(n);
  line("median", median, std::to_string(launches) + " kernel launch(es) per call");
  line("min", sorted.front(), "");
  line("max", sorted.back(), "");
  if (s2.traces != s1.traces || s2.compiles != s1.compiles)
    out << "  note: later calls traced or compiled again (" << (s2.traces - s1.traces) << " traces, "
        << (s2.compiles - s1.compiles) << " compiles)\n";
}

}  // namespace arrayc::tool
