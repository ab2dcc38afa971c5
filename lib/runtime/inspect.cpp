#include "arrayc/inspect.h"

#include "codegen/nvptx.h"

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
  detail::EmitOptions emit;
  auto kernels = std::make_shared<std::vector<detail::Kernel>>();
  for (const detail::Step& step : sched.steps) {
    const auto* ks = std::get_if<detail::KernelStep>(&step.op);
    if (!ks) continue;
    kernels->push_back(ks->kernel);
    Device d = sched.slots[ks->outputs[0]].device;
    if (d.kind == Device::Kind::CPU) {
      s.target = detail::host_target_description();
      const detail::CompiledKernel& ck = detail::host_kernel(ks->kernel, emit);
      s.kernels.push_back(KernelStages{ks->kernel.name, ks->kernel.str(), ck.ir, ck.opt_ir,
                                       detail::host_assembly(ks->kernel, emit), ""});
    } else {
      const detail::GpuKernel& g = detail::gpu_kernel(ks->kernel, d.index, emit);
      s.target = "nvptx64-nvidia-cuda sm_" + std::to_string(g.ptx.sm) + " (" + d.str() + ")";
      const detail::cuda::Function& f = *g.fn;
      std::string cubin = "registers " + std::to_string(f.registers) + ", local (spill) bytes " +
                          std::to_string(f.local_bytes) + ", shared bytes " + std::to_string(f.shared_bytes) +
                          ", max threads per block " + std::to_string(f.max_threads) + "\n" + f.jit_log;
      s.kernels.push_back(KernelStages{ks->kernel.name, ks->kernel.str(), g.ptx.ir, g.ptx.opt_ir, g.ptx.ptx, cubin});
    }
  }
  s.ptx = [kernels](int sm) {
    std::string out;
    detail::EmitOptions nv;
    nv.target = detail::EmitOptions::Target::Nvptx;
    for (const detail::Kernel& k : *kernels) out += "// ---- " + k.name + "\n" + detail::emit_ptx(k, sm, nv).ptx;
    return out;
  };
  return s;
}

}  // namespace arrayc
