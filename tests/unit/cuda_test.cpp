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

}  // namespace
