#include "support/devices.h"

#include <cstdlib>
#include <cstring>

namespace arrayc_test {

namespace {
// The suite runs without the disk cache, however it is started (ctest, by hand, on the GPU
// machine): counts of compiles are part of what it checks, and it must not fill the user's
// cache. The disk cache's own tests turn it on, with a directory of their own.
const bool kNoDiskCache = [] { return setenv("ARRAYC_CACHE", "0", /*overwrite=*/0) == 0; }();
}  // namespace

std::vector<arrayc::Device> all_devices() {
  return {arrayc::cpu(), arrayc::Device{arrayc::Device::Kind::GPU, 0}};
}

std::string device_name(const ::testing::TestParamInfo<arrayc::Device>& info) {
  return info.param.kind == arrayc::Device::Kind::CPU ? "cpu" : "gpu" + std::to_string(info.param.index);
}

bool gpu_required() {
  const char* v = std::getenv("ARRAYC_REQUIRE_GPU");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

void DeviceTest::SetUp() {
  const arrayc::Device d = device();
  if (d.kind == arrayc::Device::Kind::GPU && arrayc::gpu_count() <= d.index) {
    if (gpu_required())
      FAIL() << "ARRAYC_REQUIRE_GPU=1 but arrayc::gpu_count() is " << arrayc::gpu_count()
             << ": no " << d.str();
    GTEST_SKIP() << "no " << d.str() << " (arrayc::gpu_count() == " << arrayc::gpu_count() << ")";
  }
  saved_default_ = arrayc::default_device();
  arrayc::set_default_device(d);
  restore_ = true;
}

void DeviceTest::TearDown() {
  if (restore_) arrayc::set_default_device(saved_default_);
}

}  // namespace arrayc_test
