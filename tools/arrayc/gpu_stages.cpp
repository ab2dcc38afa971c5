#include "gpu_stages.h"

#include <cstdlib>

#include "session.h"

namespace arrayc::tool {

namespace {

const char* kNoBackend =
    "the CUDA backend of libarrayc is not built yet (kernels compile for the host CPU only)";

}  // namespace

Device parse_device(const std::string& name) {
  if (name == "cpu") return cpu();
  std::string rest;
  if (name.rfind("gpu", 0) == 0) rest = name.substr(3);
  if (!rest.empty() && rest[0] == ':') rest = rest.substr(1);
  bool gpu_name = name.rfind("gpu", 0) == 0 &&
                  rest.find_first_not_of("0123456789") == std::string::npos && rest.size() < 6;
  if (!gpu_name) throw UserError{{}, "unknown device '" + name + "' (expected cpu, gpu0, gpu1, ...)"};
  int index = rest.empty() ? 0 : std::atoi(rest.c_str());
  if (!kCudaBackendBuilt)
    throw UserError{{}, "cannot use " + name + ": " + kNoBackend + "; staying on cpu"};
  try {
    return gpu(index);
  } catch (const Error& e) {
    throw UserError{{}, "cannot use " + name + ": " + e.what()};
  }
}

std::string ptx_text(const Stages&, const std::string& sm) {
  throw UserError{{}, "no PTX for " + sm + ": " + kNoBackend + "; try :llvm, :opt or :asm"};
}

std::string cubin_text(const Stages&) {
  throw UserError{{}, std::string("no cubin (registers, shared memory, spills): ") + kNoBackend +
                          "; try :asm"};
}

}  // namespace arrayc::tool
