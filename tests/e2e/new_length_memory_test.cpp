// Memory at new lengths (docs/architecture.md, "A new length"): a jit function called at many new
// lengths, its results kept and dropped in a shuffled order, computes every result right (against
// the reference interpreter) and does not make its device's memory grow. A shorter call takes a
// cached block of up to twice its size on the host and on a GPU alike (cpu_allocator.h,
// cuda_driver.h); these tests are what says such a block is never one still in use.
#include <random>

#include "backend/cuda/cuda_driver.h"
#include "backend/host/cpu_allocator.h"
#include "support/data.h"
#include "support/devices.h"
#include "support/reference.h"

namespace {

using namespace arrayc;
using namespace arrayc_test;

class NewLengthMemory : public DeviceTest {
 protected:
  // Bytes the device's allocator holds (in use and cached), and how often it asked the system or
  // the driver for a block (the GPU's cuMemAlloc count; 0 on the host, whose cache hit count
  // stands in below).
  struct Held {
    int64_t bytes = 0;
    int64_t fresh = 0;
  };
  Held held() const {
    if (on_gpu()) {
      detail::cuda::AllocatorStats s = detail::cuda::allocator_stats(0);
      return {static_cast<int64_t>(s.in_use_bytes + s.cached_bytes), s.driver_allocs};
    }
    detail::CpuAllocStats s = detail::cpu_alloc_stats();
    return {s.bytes_in_use + s.bytes_cached, s.allocs - s.cache_hits};
  }
};
ARRAYC_DEVICE_SUITE(NewLengthMemory);

Array selu(const Array& a) { return 1.05 * arrayc::where(a > 0.0, a, 1.67 * arrayc::exp(a) - 1.67); }

// Lengths from 4 KiB to 1.6 MiB of float32, longer and shorter in turn (above 1 MiB the host
// reuses larger blocks too). Each is 1 mod 16, and a pass adds 1 to each: the byte sizes of one
// length in passes 0 to 3 share their size class on either device (class boundaries are
// multiples of 64 bytes), so a later pass needs no block that an earlier one did not.
constexpr int64_t kLengths[] = {400001, 1025, 290017, 60017, 330001, 4097, 150017};

TEST_P(NewLengthMemory, ManyLengthsWithResultsFreedInShuffledOrder) {
  auto f = jit([](const Array& a) { return selu(a); });
  f(random_array(DType::Float32, {1000}, 1).eval());  // the class is known from here on
  Held after_pass[4];
  for (int pass = 0; pass < 4; ++pass) {
    SCOPED_TRACE("pass " + std::to_string(pass));
    std::mt19937 rng(11);  // the same keeps and drops in every pass
    std::vector<Array> kept;
    for (int64_t n0 : kLengths) {
      int64_t n = n0 + pass;
      Array x = random_array(DType::Float32, {n}, static_cast<uint64_t>(n)).eval();
      Array y = f(x);
      EXPECT_MATCHES_REFERENCE(y, selu(x).node());
      kept.push_back(y);
      while (kept.size() > 3 || (!kept.empty() && rng() % 3 == 0))
        kept.erase(kept.begin() + static_cast<std::ptrdiff_t>(rng() % kept.size()));
    }
    // The results still held were not overwritten by later calls.
    for (const Array& y : kept) {
      Array x = random_array(DType::Float32, y.shape(), static_cast<uint64_t>(y.size())).eval();
      EXPECT_MATCHES_REFERENCE(y, selu(x).node());
    }
    kept.clear();
    after_pass[pass] = held();
  }
  // Flat: after two passes the allocator holds what the pattern needs and asks for nothing more.
  EXPECT_EQ(after_pass[3].bytes, after_pass[1].bytes);
  EXPECT_EQ(after_pass[3].fresh, after_pass[1].fresh);
}

}  // namespace
