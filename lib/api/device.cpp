#include <atomic>
#include <mutex>
#include <optional>

#include "arrayc/device.h"
#include "arrayc/error.h"
#include "ir/build.h"
#include "ir/interpreter.h"
#include "backend/cuda/cuda_driver.h"
#include "support/env.h"

namespace arrayc {
namespace {

// Lets the reference interpreter read GPU buffers (installed when a GPU is first used).
void install_host_copy() {
  static std::once_flag once;
  std::call_once(once, [] {
    detail::copy_to_host = [](const detail::Storage& s, void* host, size_t bytes) {
      detail::cuda::copy_to_host(s.device.index, host, s.data, bytes);
    };
  });
}

std::mutex default_mu;
std::optional<Device> default_dev;

}  // namespace

std::string Device::str() const {
  return kind == Kind::CPU ? "cpu" : "gpu:" + std::to_string(index);
}

int gpu_count() { return detail::cuda::device_count(); }

void synchronize(Device d) {
  detail::check_device("synchronize", d);
  if (d.kind == Device::Kind::GPU) detail::cuda::synchronize(gpu(d.index).index);
}

Device gpu(int index) {
  int n = gpu_count();
  if (n == 0)
    throw Error("gpu(" + std::to_string(index) + "): no CUDA device is available (" +
                detail::cuda::unavailable_reason() + ")");
  if (index < 0 || index >= n)
    throw Error("gpu(" + std::to_string(index) + "): no such CUDA device; this machine has " +
                std::to_string(n) + " (gpu(0) .. gpu(" + std::to_string(n - 1) + "))");
  install_host_copy();
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
  detail::check_device("set_default_device", d);
  if (d.kind == Device::Kind::GPU) d = gpu(d.index);  // validates
  std::lock_guard<std::mutex> lock(default_mu);
  default_dev = d;
}

}  // namespace arrayc
