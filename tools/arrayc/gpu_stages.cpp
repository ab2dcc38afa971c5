#include "gpu_stages.h"

#include <cstdlib>

#include "session.h"

namespace arrayc::tool {

Device parse_device(const std::string& name) {
  if (name == "cpu") return cpu();
  std::string rest;
  if (name.rfind("gpu", 0) == 0) rest = name.substr(3);
  if (!rest.empty() && rest[0] == ':') rest = rest.substr(1);
  bool gpu_name = name.rfind("gpu", 0) == 0 &&
                  rest.find_first_not_of("0123456789") == std::string::npos && rest.size() < 6;
  if (!gpu_name) throw UserError{{}, "unknown device '" + name + "' (expected cpu, gpu0, gpu1, ...)"};
  int index = rest.empty() ? 0 : std::atoi(rest.c_str());
  try {
    return gpu(index);
  } catch (const Error& e) {
    throw UserError{{}, "cannot use " + name + ": " + e.what()};
  }
}

std::string ptx_text(const Stages& stages, const std::string& sm) {
  std::string digits = sm.rfind("sm_", 0) == 0 ? sm.substr(3) : sm;
  if (digits.empty() || digits.size() > 3 || digits.find_first_not_of("0123456789") != std::string::npos)
    throw UserError{{}, "bad target '" + sm + "' (expected sm_NN, e.g. sm_90)"};
  if (stages.kernels.empty()) return "// no compiled kernels (see :fused)\n";
  try {
    return stages.ptx(std::atoi(digits.c_str()));
  } catch (const Error& e) {
    throw UserError{{}, std::string("no PTX for ") + sm + ": " + e.what()};
  }
}

std::string cubin_text(const Stages& stages) {
  std::string out;
  for (const KernelStages& k : stages.kernels) {
    if (k.cubin.empty())
      throw UserError{{}, "no cubin for " + k.name + ": its arrays are on the cpu (use :device gpu0 first)"};
    out += "// ---- " + k.name + "\n" + k.cubin;
  }
  return out.empty() ? "// no compiled kernels (see :fused)\n" : out;
}

}  // namespace arrayc::tool
