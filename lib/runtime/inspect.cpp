#include "arrayc/inspect.h"

#include "cache/kernel_cache.h"
#include "passes/pipeline.h"

namespace arrayc {

std::string Stages::all(std::string KernelStages::*stage) const {
  std::string out;
  for (const KernelStages& k : kernels) out += "; ---- " + k.name + "\n" + k.*stage;
  return out;
}

Stages inspect(const std::vector<Array>& outputs, bool fuse) {
  detail::Graph g;
  for (const Array& a : outputs) g.outputs.push_back(a.node());
  Stages s;
  s.graph = detail::print_graph(g);
  detail::Graph optimized = detail::run_passes(g);
  s.optimized = detail::print_graph(optimized);
  detail::FusionOptions opts;
  opts.fuse = fuse;
  detail::Schedule sched = detail::build_schedule(optimized, opts);
  s.fused = detail::print_schedule(sched);
  s.target = detail::host_target_description();
  detail::EmitOptions emit;
  for (const detail::Step& step : sched.steps) {
    const auto* ks = std::get_if<detail::KernelStep>(&step.op);
    if (!ks) continue;
    const detail::CompiledKernel& ck = detail::host_kernel(ks->kernel, emit);
    s.kernels.push_back(KernelStages{ks->kernel.name, ks->kernel.str(), ck.ir, ck.opt_ir,
                                     detail::host_assembly(ks->kernel, emit)});
  }
  return s;
}

}  // namespace arrayc
