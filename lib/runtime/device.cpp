#include <dlfcn.h>

#include <atomic>
#include <mutex>
#include <optional>

#include "arrayc/device.h"
#include "arrayc/error.h"
#include "support/env.h"

namespace arrayc {
namespace {

// Why no GPU can be used, or empty. The CUDA backend is not part of this build yet, so even a
// machine with a driver and a device has none; the message says which of the reasons applies.
std::string no_gpu_reason() {
  void* h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!h) return "the CUDA driver (libcuda.so.1) could not be loaded";
  dlclose(h);
  return "this build of arrayc has no CUDA backend yet";
}

std::mutex default_mu;
std::optional<Device> default_dev;

}  // namespace

std::string Device::str() const {
  return kind == Kind::CPU ? "cpu" : "gpu:" + std::to_string(index);
}

int gpu_count() { return 0; }

Device gpu(int index) {
  if (index < 0 || index >= gpu_count())
    throw Error("gpu(" + std::to_string(index) + "): no CUDA device is available (" + no_gpu_reason() + ")");
  return Device{Device::Kind::GPU, index};
}

Device default_device() {
  std::lock_guard<std::mutex> lock(default_mu);
  if (!default_dev) {
    std::string s = detail::env_string("ARRAYC_DEVICE", "cpu");
    if (s == "cpu") {
      default_dev = cpu();
    } else if (s.rfind("gpu", 0) == 0) {
      int i = s.size() > 4 && (s[3] == ':' || s[3] == '0') ? std::atoi(s.c_str() + (s[3] == ':' ? 4 : 3)) : 0;
      default_dev = gpu(i);
    } else {
      throw Error("ARRAYC_DEVICE: unknown device '" + s + "' (expected cpu, gpu or gpu:N)");
    }
  }
  return *default_dev;
}

void set_default_device(Device d) {
  if (d.kind == Device::Kind::GPU) d = gpu(d.index);  // validates
  std::lock_guard<std::mutex> lock(default_mu);
  default_dev = d;
}

}  // namespace arrayc
