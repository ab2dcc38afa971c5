// Host kernels as compiled for a named CPU, whatever this machine's: tests of vector widths ask
// for each width they check (x86-64-v3: AVX2, 8 floats; x86-64-v4: AVX-512, 16 floats) instead of
// assuming the host's. Text only: nothing compiled this way runs.
#pragma once
#include <string>
#include <vector>

#include "backend/host/host_jit.h"
#include "support/pipeline.h"

namespace arrayc_test {

// The CPUs of the two x86-64 vector widths, with the float vector type of each.
struct CpuWidth {
  const char* cpu;
  const char* floats;  // "<8 x float>"
  int lanes;           // float lanes
};
inline const std::vector<CpuWidth>& x86_widths() {
  static const std::vector<CpuWidth> w{{"x86-64-v3", "<8 x float>", 8}, {"x86-64-v4", "<16 x float>", 16}};
  return w;
}

// The stages (IR, optimized IR, assembly) of each kernel that `outputs` need, compiled for `cpu`
// with the default options.
inline std::vector<arrayc::detail::HostStages> stages_for_cpu(const std::vector<arrayc::Array>& outputs,
                                                              const std::string& cpu) {
  std::vector<arrayc::detail::HostStages> out;
  for (const arrayc::detail::KernelStep& ks : kernel_steps(outputs))
    out.push_back(arrayc::detail::host_stages_for_cpu(ks.kernel, {}, "arrayc_" + ks.kernel->name, cpu));
  return out;
}

}  // namespace arrayc_test
