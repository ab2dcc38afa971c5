// Devices are explicit: every Array lives on one, `x.to(d)` copies between them, and an op on
// arrays of two devices is an error naming both (never a silent copy).
#pragma once
#include <string>

namespace arrayc {

struct Device {
  enum class Kind : unsigned char { CPU, GPU };
  Kind kind = Kind::CPU;
  int index = 0;

  bool operator==(const Device&) const = default;
  std::string str() const;  // "cpu", "gpu:0"
};

inline Device cpu() { return Device{Device::Kind::CPU, 0}; }
Device gpu(int index = 0);  // raises arrayc::Error when there is no such CUDA device, saying why

int gpu_count();  // 0 without a driver or a device

// The device that creation functions use when none is given: ARRAYC_DEVICE ("cpu", "gpu",
// "gpu:1") at start-up, else the CPU.
Device default_device();
void set_default_device(Device d);

// Waits until the work queued on a device has finished. Kernels on a GPU run asynchronously:
// eval() and a jit call return once they are queued, so time GPU work up to synchronize() (or
// read a value back). A kernel's failure on the device (an illegal address) is raised here as
// arrayc::Error. On the CPU, work is done when eval() returns and this does nothing.
void synchronize(Device d);
// Waits for every device this process has used (several GPUs, each with its own stream).
void synchronize();

}  // namespace arrayc
