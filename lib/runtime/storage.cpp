#include "ir/node.h"
#include "runtime/cpu_allocator.h"
#include "runtime/cuda.h"

namespace arrayc::detail {

Storage::Storage(Device d, size_t n) : device(d), bytes(n) {
  data = d.kind == Device::Kind::CPU ? cpu_alloc(n) : cuda::alloc(d.index, n);
}

Storage::~Storage() {
  if (device.kind == Device::Kind::CPU) cpu_free(data, bytes);
  else cuda::free(device.index, data, bytes);
}

}  // namespace arrayc::detail
