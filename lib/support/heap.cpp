#include "support/heap.h"

#include <cstdlib>

namespace arrayc::detail {

void settle_heap() {
  // A request past glibc's per-thread cache (1032 bytes) and in its large-bin range (1 KiB and
  // more) merges the fastbins first. `volatile`: the pair must not be optimized away.
  void* volatile block = std::malloc(4096);
  std::free(block);
}

}  // namespace arrayc::detail
