#include "ir/node.h"
#include "backend/host/cpu_allocator.h"
#include "backend/cuda/cuda_driver.h"

namespace arrayc::detail {

Storage::Storage(Device d, size_t n) : device(d), bytes(n) {
  data = d.kind == Device::Kind::CPU ? cpu_alloc(n) : cuda::alloc(d.index, n);
}

Storage::~Storage() {
  if (device.kind == Device::Kind::CPU) cpu_free(data, bytes);
  else cuda::free(device.index, data, bytes);
}

}  // namespace arrayc::detail
