#include "arrayc/device.h"

namespace arrayc {

std::string Device::str() const { return kind == Kind::CPU ? "cpu" : "gpu:" + std::to_string(index); }

}  // namespace arrayc
