// The end-to-end suite is one suite run on every device. A test fixture derives from DeviceTest
// and is instantiated with ARRAYC_DEVICE_SUITE(Fixture); each test runs on the CPU and on GPU 0.
// Without a GPU the GPU cases skip, unless ARRAYC_REQUIRE_GPU=1, where they fail.
// While a test runs, its device is the default device, so creation functions land on it.
#pragma once
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "arrayc/arrayc.h"

namespace arrayc_test {

// {cpu, gpu:0}. The GPU entry is built directly (not with arrayc::gpu(), which raises when there
// is no GPU), so that the list can be made on any machine.
std::vector<arrayc::Device> all_devices();
std::string device_name(const ::testing::TestParamInfo<arrayc::Device>& info);  // "cpu", "gpu0"

// Whether ARRAYC_REQUIRE_GPU=1 is set.
bool gpu_required();

class DeviceTest : public ::testing::TestWithParam<arrayc::Device> {
 protected:
  void SetUp() override;
  void TearDown() override;
  arrayc::Device device() const { return GetParam(); }
  bool on_gpu() const { return GetParam().kind == arrayc::Device::Kind::GPU; }

 private:
  arrayc::Device saved_default_;
  bool restore_ = false;
};

}  // namespace arrayc_test

namespace arrayc {
// Prints a Device in test names and messages ("cpu", "gpu:0"); found by GoogleTest through ADL.
inline void PrintTo(const Device& d, std::ostream* os) { *os << d.str(); }
}  // namespace arrayc

#define ARRAYC_DEVICE_SUITE(Fixture)                                                     \
  INSTANTIATE_TEST_SUITE_P(Devices, Fixture, ::testing::ValuesIn(::arrayc_test::all_devices()), \
                           ::arrayc_test::device_name)
