// inspect(): the stages of the compile that eval() would run, recorded by the compile driver.
#include "arrayc/inspect.h"

#include "engine/compile.h"
#include "support/interrupt.h"

namespace arrayc {

std::string Stages::all(std::string KernelStages::*stage) const {
  std::string out;
  for (const KernelStages& k : kernels) out += "; ---- " + k.name + "\n" + k.*stage;
  return out;
}

Stages inspect(const std::vector<Array>& outputs, bool fuse) {
  detail::Graph g;
  for (const Array& a : outputs) g.outputs.push_back(a.node());
  detail::CompileOptions o = detail::user_compile_options();
  o.fuse = fuse;
  detail::StageLog log;
  detail::clear_interrupt();  // as eval(): an old request is dropped; one made now stops it
  detail::compile(g, o, &log);
  Stages s;
  s.graph = std::move(log.graph);
  s.optimized = std::move(log.optimized);
  s.fused = std::move(log.fused);
  s.target = std::move(log.target);
  s.ptx = std::move(log.ptx);
  for (detail::StageTexts& k : log.kernels)
    s.kernels.push_back(KernelStages{std::move(k.name), std::move(k.kernel), std::move(k.ir), std::move(k.opt_ir),
                                     std::move(k.code), std::move(k.binary)});
  return s;
}

}  // namespace arrayc
