// Device selection and transfers: errors that name the device and say why, and copies that keep
// values (on machines with a GPU; without one, the "why" is what is checked).
#include <gtest/gtest.h>

#include "arrayc/arrayc.h"
#include "support/errors.h"

namespace {

using namespace arrayc;

TEST(DeviceSelection, GpuIndexErrorsSayWhy) {
  int n = gpu_count();
  if (n == 0) {
    EXPECT_ARRAYC_ERROR(gpu(0), "gpu(0): no CUDA device is available (");
    EXPECT_ARRAYC_ERROR(array(std::vector<float>{1, 2}).to(gpu(0)), "no CUDA device is available");
  } else {
    EXPECT_ARRAYC_ERROR(gpu(n), "gpu(" + std::to_string(n) + "): no such CUDA device; this machine has " +
                                    std::to_string(n));
    EXPECT_ARRAYC_ERROR(gpu(-1), "gpu(-1): no such CUDA device");
  }
  // The process goes on.
  EXPECT_EQ(sum(arange(10)).item<int64_t>(), 45);
}

TEST(DeviceSelection, SynchronizeWaitsForQueuedWork) {
  // The CPU has nothing queued; a GPU that does not exist is an error saying why.
  Array c = arange(1000) * 2;
  c.eval();
  synchronize(cpu());
  synchronize(c.device());
  int n = gpu_count();
  EXPECT_ARRAYC_ERROR(synchronize(Device{Device::Kind::GPU, n}),
                      "gpu(" + std::to_string(n) + "): " +
                          (n == 0 ? "no CUDA device is available (" : "no such CUDA device; this machine has "));
  if (n == 0) return;
  // A jit call on a GPU returns once its kernel is queued; after synchronize its output is
  // final, and reading it back agrees.
  auto f = jit([](const Array& x) { return sum(x * x); });
  Array x = arange(1 << 20, DType::Int64).to(gpu(0));
  Array y = f(x);
  synchronize(y.device());
  int64_t k = 1 << 20;
  EXPECT_EQ(y.item<int64_t>(), (k - 1) * k * (2 * k - 1) / 6);
}

TEST(DeviceSelection, CopyToTheSameDeviceIsTheSameArray) {
  Array a = array(std::vector<int32_t>{1, 2, 3});
  Array b = a.to(cpu());
  EXPECT_EQ(b.node(), a.node());
  EXPECT_EQ(cpu().str(), "cpu");
}

TEST(DeviceSelection, RoundTripsThroughEveryGpu) {
  if (gpu_count() == 0) GTEST_SKIP() << "no GPU";
  for (int i = 0; i < gpu_count(); ++i) {
    Array m = reshape(arange(0.0, 12.0, 1.0, DType::Float64), {3, 4}).eval();
    Array t = transpose(m).eval();  // a strided view: packed before the copy
    Array g = t.to(gpu(i));
    EXPECT_EQ(g.device(), gpu(i));
    EXPECT_EQ(g.to(cpu()).to_vector<double>(), t.to_vector<double>());
    EXPECT_EQ((g * 2.0).to_vector<double>()[1], 8.0);
  }
}

}  // namespace
