#include "arrayc/inspect.h"

#include "codegen/nvptx/ptx_kernel.h"

#include "engine/kernel_cache.h"
#include "codegen/nvptx/gemm.h"
#include "engine/executor.h"
#include "passes/pipeline.h"

namespace arrayc {
namespace {
// PTX made without a GPU picks product tiles as for an H100/H200 (132 SMs).
constexpr int kAssumedSMs = 132;
}  // namespace

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
  detail::EmitOptions emit = detail::user_emit_options();
  // Each kernel's PTX for a given sm, in step order (products as the GPU would run them).
  using PtxOf = std::function<std::string(int sm)>;
  auto ptx_of = std::make_shared<std::vector<PtxOf>>();
  auto gpu_stages = [&](const std::string& name, const std::string& text, const detail::GpuKernel& g, Device d) {
    s.target = "nvptx64-nvidia-cuda sm_" + std::to_string(g.ptx.sm) + " (" + d.str() + ")";
    const detail::cuda::Function& f = *g.fn;
    std::string cubin = "registers " + std::to_string(f.registers) + ", local (spill) bytes " +
                        std::to_string(f.local_bytes) + ", shared bytes " + std::to_string(f.shared_bytes) +
                        ", max threads per block " + std::to_string(f.max_threads) + "\n" + f.jit_log;
    s.kernels.push_back(KernelStages{name, text, g.ptx.ir, g.ptx.opt_ir, g.ptx.ptx, cubin});
  };
  for (const detail::Step& step : sched.steps) {
    if (const auto* dot = std::get_if<detail::DotStep>(&step.op)) {
      // Operands are assumed 16-byte aligned (as fresh buffers are); the launch checks.
      Device d = sched.slots[dot->output].device;
      if (!is_float(dot->dtype)) continue;
      bool gpu = d.kind == Device::Kind::GPU;
      int sms = gpu ? detail::cuda::device_info(d.index).multiprocessors : kAssumedSMs;
      detail::GemmProblem p = detail::gemm_problem(*dot, 0, 0);
      ptx_of->push_back([p, sms](int sm) {
        detail::GemmKernel gk = detail::choose_gemm(p, sms);
        return "// ---- " + gk.name() + "\n" + detail::emit_gemm_ptx(gk, sm).ptx;
      });
      if (gpu) {
        detail::GemmKernel gk = detail::choose_gemm(p, sms);
        gpu_stages(gk.name(), gk.str(), detail::gpu_gemm_kernel(gk, d.index), d);
      }
      continue;
    }
    const auto& ks = std::get<detail::KernelStep>(step.op);
    ptx_of->push_back([k = ks.kernel](int sm) {
      detail::EmitOptions nv;
      nv.target = detail::EmitOptions::Target::Nvptx;
      return "// ---- " + k.name + "\n" + detail::emit_ptx(k, sm, nv).ptx;
    });
    Device d = sched.slots[ks.outputs[0]].device;
    if (d.kind == Device::Kind::CPU) {
      s.target = detail::host_target_description();
      detail::EmitOptions ko = detail::kernel_options(ks, sched, emit);
      const detail::CompiledKernel& ck = detail::host_kernel(ks.kernel, ko);
      std::string text = ks.kernel.str();
      auto ptr_list = [](const std::vector<int>& ptrs) {  // "ptr1, ptr2"
        std::string out;
        for (size_t i = 0; i < ptrs.size(); ++i) out += (i ? ", ptr" : "ptr") + std::to_string(ptrs[i]);
        return out;
      };
      std::vector<int> streamed_ptrs, tiled_ptrs;
      if (ko.stream_stores)
        for (int o : ks.kernel.streamed_outputs()) streamed_ptrs.push_back(ks.kernel.outputs[o].ptr);
      for (int l : ks.kernel.tiled_leaves()) tiled_ptrs.push_back(ks.kernel.leaves[l].ptr);
      if (!streamed_ptrs.empty())
        text += "  ; non-temporal stores to " + ptr_list(streamed_ptrs) + ": outputs of " +
                std::to_string(detail::output_bytes(ks, sched)) + " bytes, streaming threshold " +
                std::to_string(detail::stream_threshold_bytes()) + " bytes (ARRAYC_STREAM_BYTES)\n";
      if (!tiled_ptrs.empty())
        text += "  ; tiles of " + std::to_string(detail::kHostTileRows) + " rows x " +
                std::to_string(detail::kHostTileCols) + " columns, each tile of " + ptr_list(tiled_ptrs) +
                " copied to a buffer first: read across its rows\n";
      detail::HostStages st = detail::host_stages(ks.kernel, ko, ck.symbol);
      s.kernels.push_back(KernelStages{ks.kernel.name, text, std::move(st.ir), std::move(st.opt_ir), std::move(st.assembly), ""});
    } else {
      gpu_stages(ks.kernel.name, ks.kernel.str(), detail::gpu_kernel(ks.kernel, d.index, emit), d);
    }
  }
  s.ptx = [ptx_of](int sm) {
    std::string out;
    for (const PtxOf& f : *ptx_of) out += f(sm);
    return out;
  };
  return s;
}

}  // namespace arrayc
