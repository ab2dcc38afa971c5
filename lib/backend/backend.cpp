#include "backend/backend.h"

#include "arrayc/error.h"

#include "backend/cuda/cuda_backend.h"
#include "backend/host/host_backend.h"

namespace arrayc::detail {

Backend& backend_for(Device d) {
  switch (d.kind) {
    case Device::Kind::CPU: return host_backend();
    case Device::Kind::GPU: return cuda_backend();
  }
  throw Error("unknown device kind " + std::to_string(static_cast<int>(d.kind)));
}

Device checked(Device d) {
  backend_for(d).check(d);
  return d;
}

StorageRef allocate(Device d, size_t bytes) {
  Backend& b = backend_for(d);
  return std::make_shared<Storage>(d, b.alloc(d, bytes), bytes, &b);
}

void copy_bytes(Device to, void* dst, Device from, const void* src, size_t bytes) {
  if (bytes == 0) return;
  Backend& bt = backend_for(to);
  Backend& bf = backend_for(from);
  if (&bf == &host_backend()) return bt.upload(to, dst, src, bytes);
  if (&bt == &host_backend()) return bf.read(from, dst, src, bytes);
  ARRAYC_INTERNAL_CHECK(&bt == &bf, "copy_bytes: no path from " + from.str() + " to " + to.str());
  bt.copy(to, dst, from, src, bytes);
}

}  // namespace arrayc::detail
