#include "ir/node.h"
#include "runtime/cpu_allocator.h"

namespace arrayc::detail {

Storage::Storage(Device d, size_t n) : device(d), bytes(n) {
  ARRAYC_INTERNAL_CHECK(d.kind == Device::Kind::CPU, "GPU storage without a CUDA backend");
  data = cpu_alloc(n);
}

Storage::~Storage() { cpu_free(data, bytes); }

}  // namespace arrayc::detail
