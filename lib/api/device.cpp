#include <atomic>
#include <mutex>
#include <optional>

#include "arrayc/device.h"
#include "arrayc/error.h"
#include "backend/backend.h"
#include "ir/build.h"
#include "ir/interpreter.h"
#include "backend/cuda/cuda_driver.h"
#include "support/env.h"

namespace arrayc {
namespace {

std::mutex default_mu;
std::optional<Device> default_dev;

}  // namespace

int gpu_count() { return detail::cuda::device_count(); }

void synchronize(Device d) {
  detail::check_device("synchronize", d);
  d = detail::checked(d);
  detail::backend_for(d).synchronize(d);
}

void synchronize() { detail::cuda::synchronize_all(); }

Device gpu(int index) { return detail::checked(Device{Device::Kind::GPU, index}); }

Device default_device() {
  std::lock_guard<std::mutex> lock(default_mu);
  if (!default_dev) {
    std::string s = detail::device_setting();
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
  d = detail::checked(d);
  std::lock_guard<std::mutex> lock(default_mu);
  default_dev = d;
}

}  // namespace arrayc
