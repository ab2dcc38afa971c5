// The CUDA driver layer. Without a GPU only the "unavailable" behaviour is checked and the rest
// skips; with ARRAYC_REQUIRE_GPU=1 a missing GPU fails instead. With a GPU: allocation and
// transfers, the caching allocator, out-of-memory errors, PTX from emit_ptx loaded and launched
// (SELU elementwise, a split reduction), and a kernel fault surfacing at synchronize.
//
// A kernel fault poisons the CUDA context for the rest of the process, so that test runs its
// body in a fresh process (a "threadsafe" death test re-executes the test binary for just that
// test) and the other tests keep a healthy device.
#include "backend/cuda/cuda_driver.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <iostream>

#include "arrayc/arrayc.h"
#include "backend/cuda/launch_plan.h"
#include "passes/pipeline.h"
#include "support/devices.h"
#include "support/pipeline.h"

namespace {

using namespace arrayc;
namespace cuda = arrayc::detail::cuda;
using detail::KernelStep;
using arrayc_test::kernel_steps;

#define ARRAYC_REQUIRE_CUDA()                                                                     \
  do {                                                                                            \
    if (cuda::device_count() == 0) {                                                              \
      if (arrayc_test::gpu_required()) FAIL() << "ARRAYC_REQUIRE_GPU=1 but " << cuda::unavailable_reason(); \
      GTEST_SKIP() << cuda::unavailable_reason();                                                 \
    }                                                                                             \
  } while (0)

// A device buffer freed at scope exit.
struct Buffer {
  int dev;
  size_t bytes;
  void* p;
  Buffer(int dev, size_t bytes) : dev(dev), bytes(bytes), p(cuda::alloc(dev, bytes)) {}
  ~Buffer() { cuda::free(dev, p, bytes); }
};

TEST(CudaTest, UnavailableSaysWhy) {
  if (cuda::device_count() > 0) {
    EXPECT_EQ(cuda::unavailable_reason(), "");
    return;
  }
  if (arrayc_test::gpu_required()) FAIL() << "ARRAYC_REQUIRE_GPU=1 but " << cuda::unavailable_reason();
  EXPECT_FALSE(cuda::unavailable_reason().empty());
  try {
    cuda::alloc(0, 16);
    FAIL() << "alloc without a GPU did not throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("gpu:0 is not available: " + cuda::unavailable_reason()), std::string::npos)
        << e.what();
  }
  cuda::free(0, nullptr, 0);  // never throws
}

TEST(CudaTest, DeviceInfo) {
  ARRAYC_REQUIRE_CUDA();
  const cuda::DeviceInfo& info = cuda::device_info(0);
  EXPECT_FALSE(info.name.empty());
  EXPECT_GE(info.cc_major, 5);
  EXPECT_GT(info.multiprocessors, 0);
  EXPECT_EQ(info.warp_size, 32);
  auto [free, total] = cuda::memory_info(0);
  EXPECT_EQ(total, info.total_memory);
  EXPECT_LE(free, total);
  EXPECT_THROW(cuda::device_info(cuda::device_count()), Error);
}

TEST(CudaTest, AllocAndCopyRoundTrip) {
  ARRAYC_REQUIRE_CUDA();
  std::vector<int32_t> host(100000), back(host.size(), 0);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<int32_t>(i * 7 + 1);
  const size_t bytes = host.size() * sizeof(int32_t);
  Buffer a(0, bytes), b(0, bytes);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.p) % 256, 0u);
  cuda::copy_to_device(0, a.p, host.data(), bytes);
  cuda::copy_device(0, b.p, a.p, bytes);
  cuda::copy_to_host(0, back.data(), b.p, bytes);
  EXPECT_EQ(back, host);
  if (cuda::device_count() > 1) {
    Buffer c(1, bytes);
    cuda::copy_peer(1, c.p, 0, a.p, bytes);
    std::fill(back.begin(), back.end(), 0);
    cuda::copy_to_host(1, back.data(), c.p, bytes);
    EXPECT_EQ(back, host);
  }
}

TEST(CudaTest, FreedBlocksAreReused) {
  ARRAYC_REQUIRE_CUDA();
  cuda::release_cache(0);  // else a cached block of up to twice 1 KiB serves the third request
  void* p = cuda::alloc(0, 1000);
  cuda::free(0, p, 1000);
  long before = cuda::allocator_stats(0).driver_allocs;
  void* q = cuda::alloc(0, 1000);
  EXPECT_EQ(q, p);
  void* r = cuda::alloc(0, 1000);  // the cache is empty again: a new block
  EXPECT_NE(r, q);
  EXPECT_EQ(cuda::allocator_stats(0).driver_allocs, before + 1);
  cuda::free(0, q, 1000);
  cuda::free(0, r, 1000);
  EXPECT_GE(cuda::allocator_stats(0).cached_bytes, 2048u);
  cuda::release_cache(0);
  EXPECT_EQ(cuda::allocator_stats(0).cached_bytes, 0u);
}

TEST(CudaTest, OutOfMemoryNamesTheSizes) {
  ARRAYC_REQUIRE_CUDA();
  const size_t total = cuda::device_info(0).total_memory;
  const size_t huge = total * 2;
  try {
    cuda::alloc(0, huge);
    FAIL() << "allocating twice the device memory did not throw";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("gpu:0: out of memory allocating " + std::to_string(huge) + " bytes (free "), std::string::npos)
        << msg;
    EXPECT_NE(msg.find(" of " + std::to_string(total) + " bytes)"), std::string::npos) << msg;
  }
  Buffer ok(0, 1 << 20);  // the device is still usable
  EXPECT_NE(ok.p, nullptr);
}

TEST(CudaTest, SeluKernelMatchesHost) {
  ARRAYC_REQUIRE_CUDA();
  const int64_t n = 1000000;
  std::vector<float> x(n);
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(i % 2001 - 1000) / 100.0f;
  Array xa = array(x, {n});
  KernelStep ks = kernel_steps({1.05f * where(xa > 0.0f, xa, 1.67f * exp(xa) - 1.67f)}).at(0);
  const cuda::DeviceInfo& info = cuda::device_info(0);
  detail::PtxKernel ptx = detail::emit_ptx(ks.kernel, info.sm(), detail::EmitOptions{});
  const cuda::Function& f = cuda::load(0, ptx.ptx, ptx.entry);
  EXPECT_EQ(&cuda::load(0, ptx.ptx, ptx.entry), &f);  // cached
  EXPECT_GT(f.registers, 0);
  EXPECT_EQ(f.local_bytes, 0) << f.jit_log;  // no spills
  // The same PTX linked to a cubin (what the disk cache stores) loads as another module of the
  // same kernel, with the linker's log in place of the loader's.
  std::string log;
  std::string cubin = cuda::link_cubin(0, ptx.ptx, ptx.entry, log);
  ASSERT_GT(cubin.size(), 4u);
  EXPECT_EQ(cubin.substr(0, 4), "\x7f" "ELF");
  const cuda::Function& fc = cuda::load(0, cubin, ptx.entry);
  EXPECT_NE(&fc, &f);
  EXPECT_EQ(fc.registers, f.registers);
  EXPECT_EQ(fc.jit_log, "");

  const size_t bytes = n * sizeof(float);
  Buffer in(0, bytes), out(0, bytes);
  cuda::copy_to_device(0, in.p, x.data(), bytes);
  auto run = [&](int64_t begin) {
    std::vector<float> zeros(n, 0.0f), y(n);
    cuda::copy_to_device(0, out.p, zeros.data(), bytes);
    detail::PtxArgs args(ks.kernel, {in.p, out.p}, ks.launch.params, begin, n);
    detail::PtxLaunchConfig c = detail::ptx_launch_config(ks.kernel, ptx, ks.launch, info.multiprocessors);
    cuda::launch(0, f, c.grid, c.block, args.data());
    cuda::synchronize(0);
    cuda::copy_to_host(0, y.data(), out.p, bytes);
    for (int64_t i = 0; i < n; ++i) {
      float want = i < begin ? 0.0f : static_cast<float>(1.05 * (x[i] > 0 ? x[i] : 1.67 * std::exp(double(x[i])) - 1.67));
      ASSERT_NEAR(y[i], want, 2e-6f * std::max(1.0f, std::fabs(want))) << "at " << i << " (begin " << begin << ")";
    }
  };
  run(0);  // aligned: the vector path
  run(3);  // misaligned start: the scalar fallback
}

TEST(CudaTest, SplitReductionMatchesHost) {
  ARRAYC_REQUIRE_CUDA();
  const int64_t n = 3000001;
  std::vector<float> x(n);
  double want = 0;
  for (int64_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i % 17) / 16.0f;
    want += double(x[i]) * x[i];
  }
  Array xa = array(x, {n});
  for (bool mean_of : {false, true}) {
    KernelStep ks = kernel_steps({mean_of ? mean(xa * xa) : sum(xa * xa)}).at(0);
    const cuda::DeviceInfo& info = cuda::device_info(0);
    detail::PtxKernel ptx = detail::emit_ptx(ks.kernel, info.sm(), detail::EmitOptions{});
    detail::PtxLaunchConfig c = detail::ptx_launch_config(ks.kernel, ptx, ks.launch, info.multiprocessors);
    ASSERT_GT(c.chunks, 1);
    detail::ReductionSplit s = detail::split_reduction(ks.kernel, ks.launch, c.chunks);
    detail::PtxKernel comb = detail::emit_ptx(s.combine, info.sm(), detail::EmitOptions{});

    Buffer in(0, n * sizeof(float)), out(0, sizeof(float)), partials(0, s.partial_bytes);
    cuda::copy_to_device(0, in.p, x.data(), n * sizeof(float));
    detail::PtxArgs a1(ks.kernel, {in.p, partials.p}, s.first.params, 0, 1, s.outputs, 0);
    cuda::launch(0, cuda::load(0, ptx.ptx, ptx.entry), c.grid, c.block, a1.data(), 0, static_cast<unsigned>(c.chunks));
    detail::PtxArgs a2(s.combine, {partials.p, out.p}, s.second.params, 0, 1, 0, s.mean_count);
    cuda::launch(0, cuda::load(0, comb.ptx, comb.entry), 1, 256, a2.data());
    float got = 0;
    cuda::copy_to_host(0, &got, out.p, sizeof(float));
    double expect = mean_of ? want / n : want;
    EXPECT_NEAR(got, expect, 1e-5 * expect) << (mean_of ? "mean" : "sum");
  }
}

// Writes 1 to address 8: an illegal address.
const char* kFaultPtx = R"(
.version 6.0
.target sm_50
.address_size 64
.visible .entry arrayc_fault()
{
  .reg .b32 %r<2>;
  .reg .b64 %rd<2>;
  mov.u64 %rd1, 8;
  mov.u32 %r1, 1;
  st.global.u32 [%rd1], %r1;
  ret;
}
)";

TEST(CudaTest, TheLinkerRejectsBadPtxWithTheDriversLog) {
  ARRAYC_REQUIRE_CUDA();
  std::string log;
  try {
    cuda::link_cubin(0, ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() { bogus; }\n", "k", log);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("gpu:0: the driver rejected the PTX of k: "), std::string::npos) << e.what();
  }
}

TEST(CudaDeathTest, KernelFaultSurfacesAtSynchronize) {
  ARRAYC_REQUIRE_CUDA();
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // a fresh process: the fault poisons the context
  EXPECT_EXIT(
      {
        try {
          cuda::launch(0, cuda::load(0, kFaultPtx, "arrayc_fault"), 1, 1, nullptr);
          cuda::synchronize(0);
          std::cerr << "no error\n";
          std::exit(1);
        } catch (const Error& e) {
          std::cerr << e.what() << "\n";
        }
        try {
          cuda::alloc(0, 16);
          std::cerr << "device still usable\n";
        } catch (const Error& e) {
          std::cerr << e.what() << "\n";
          std::exit(0);
        }
        std::exit(1);
      },
      ::testing::ExitedWithCode(0),
      "gpu:0: kernel arrayc_fault failed \\(seen while synchronizing\\): CUDA_ERROR_[A-Z_]+.*\n"
      "gpu:0 is unusable after an earlier failure");
}

// The caching allocator's reuse of a larger cached block (new lengths, issue 27): a request whose
// class has nothing cached takes a cached block of up to twice its class, and freeing it files
// it under its real class again.
TEST(CudaAllocator, AShorterRequestReusesALargerCachedBlock) {
  ARRAYC_REQUIRE_CUDA();
  cuda::release_cache(0);
  const size_t big = size_t{4} << 20, half = size_t{2} << 20, quarter = size_t{1} << 20;
  void* p = cuda::alloc(0, big);
  cuda::free(0, p, big);
  cuda::AllocatorStats before = cuda::allocator_stats(0);
  void* q = cuda::alloc(0, half);  // class 2 MiB, none cached: takes the 4 MiB block
  EXPECT_EQ(q, p);
  EXPECT_EQ(cuda::allocator_stats(0).driver_allocs, before.driver_allocs);
  EXPECT_EQ(cuda::allocator_stats(0).in_use_bytes - before.in_use_bytes, big);
  void* r = cuda::alloc(0, quarter);  // nothing cached within twice 1 MiB: a new block
  EXPECT_NE(r, p);
  EXPECT_EQ(cuda::allocator_stats(0).driver_allocs, before.driver_allocs + 1);
  cuda::free(0, q, half);  // filed under 4 MiB again
  EXPECT_EQ(cuda::allocator_stats(0).in_use_bytes, before.in_use_bytes + quarter);
  void* s = cuda::alloc(0, big);
  EXPECT_EQ(s, p);
  cuda::free(0, s, big);
  cuda::free(0, r, quarter);
  cuda::AllocatorStats after = cuda::allocator_stats(0);
  EXPECT_EQ(after.in_use_bytes, before.in_use_bytes);
  EXPECT_EQ(after.cached_bytes, big + quarter);
  cuda::release_cache(0);
}

TEST(CudaAllocator, ABlockMoreThanTwiceTheRequestIsNotTaken) {
  ARRAYC_REQUIRE_CUDA();
  cuda::release_cache(0);
  const size_t big = size_t{10} << 20;
  void* p = cuda::alloc(0, big);
  cuda::free(0, p, big);
  long allocs = cuda::allocator_stats(0).driver_allocs;
  void* q = cuda::alloc(0, size_t{3} << 20);  // class 4 MiB; 10 MiB is more than twice that
  EXPECT_NE(q, p);
  EXPECT_EQ(cuda::allocator_stats(0).driver_allocs, allocs + 1);
  void* s = cuda::alloc(0, 1000);  // class 1 KiB
  EXPECT_NE(s, p);
  void* t = cuda::alloc(0, (size_t{5} << 20) + 1);  // class 6 MiB: takes the 10 MiB block
  EXPECT_EQ(t, p);
  cuda::free(0, q, size_t{3} << 20);
  cuda::free(0, s, 1000);
  cuda::free(0, t, (size_t{5} << 20) + 1);
  cuda::release_cache(0);
}

// Random sizes, allocated and freed in random order: live blocks never overlap and keep what was
// written to them, every block comes back, and repeating the same sequence soon stops calling
// the driver (the cache holds what the sequence needs; it does not keep growing).
TEST(CudaAllocator, InterleavedSizesNeverShareMemoryAndStayFlat) {
  ARRAYC_REQUIRE_CUDA();
  cuda::release_cache(0);
  struct Live {
    void* p;
    size_t bytes;
    uint32_t tag;
  };
  uint32_t tag = 0;
  auto round = [&] {
    uint64_t state = 7;
    auto rng = [&state] {  // xorshift64: the same sequence each round
      state ^= state << 13;
      state ^= state >> 7;
      state ^= state << 17;
      return state;
    };
    std::vector<size_t> sizes;
    for (int i = 0; i < 12; ++i) sizes.push_back((256 + rng() % (size_t{6} << 20)) / 4 * 4);
    std::vector<Live> live;
    for (int step = 0; step < 200; ++step) {
      if (!live.empty() && (rng() % 2 == 0 || live.size() >= 6)) {
        size_t i = rng() % live.size();
        // Its first and last words still hold its tag: no other live block was written over them.
        uint32_t got[2] = {0, 0};
        cuda::copy_to_host(0, &got[0], live[i].p, 4);
        cuda::copy_to_host(0, &got[1], static_cast<char*>(live[i].p) + live[i].bytes - 4, 4);
        EXPECT_EQ(got[0], live[i].tag);
        EXPECT_EQ(got[1], live[i].tag);
        cuda::free(0, live[i].p, live[i].bytes);
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
        continue;
      }
      size_t bytes = sizes[rng() % sizes.size()];
      void* p = cuda::alloc(0, bytes);
      auto lo = reinterpret_cast<uintptr_t>(p);
      for (const Live& l : live) {
        auto b = reinterpret_cast<uintptr_t>(l.p);
        EXPECT_TRUE(lo + bytes <= b || b + l.bytes <= lo) << "blocks overlap";
      }
      ++tag;
      cuda::copy_to_device(0, p, &tag, 4);
      cuda::copy_to_device(0, static_cast<char*>(p) + bytes - 4, &tag, 4);
      live.push_back({p, bytes, tag});
    }
    for (const Live& l : live) cuda::free(0, l.p, l.bytes);
  };
  cuda::AllocatorStats start = cuda::allocator_stats(0);
  int rounds = 0;
  for (long allocs = -1; allocs != cuda::allocator_stats(0).driver_allocs && rounds < 20; ++rounds) {
    allocs = cuda::allocator_stats(0).driver_allocs;
    round();
  }
  EXPECT_LT(rounds, 20) << "every round still called cuMemAlloc";
  cuda::AllocatorStats settled = cuda::allocator_stats(0);
  round();
  round();
  cuda::AllocatorStats end = cuda::allocator_stats(0);
  EXPECT_EQ(end.driver_allocs, settled.driver_allocs);
  EXPECT_EQ(end.cached_bytes, settled.cached_bytes);
  EXPECT_EQ(end.in_use_bytes, start.in_use_bytes);
  cuda::release_cache(0);
}

}  // namespace
