// Host gather bandwidth (issue 28): with ARRAYC_GATHER_PREFETCH (set_gather_prefetch_distance
// here), a host gather whose index is read from memory along the row prefetches its source
// elements ahead, one block of 512 at a time (codegen/cpu/gather_prefetch.h). These tests check
// the results against the reference interpreter and bit for bit against the kernel without
// prefetching: every source dtype, every index dtype, negative and out-of-range indices
// (clamped, as without prefetching), distances shorter and longer than a block, rows of a 2-D
// gather, streaming stores; and what :kernels and the optimized IR show.
#include <cstring>
#include <limits>

#include "backend/host/host_backend.h"
#include "codegen/cpu/gather_prefetch.h"
#include "support/data.h"
#include "support/reference.h"

namespace {

using namespace arrayc;
using namespace arrayc_test;
using detail::set_gather_prefetch_distance;

class GatherPrefetch : public ::testing::Test {
 protected:
  void SetUp() override {
    if (default_device().kind != Device::Kind::CPU) GTEST_SKIP() << "host kernels only";
    saved_ = detail::gather_prefetch_distance();
    saved_stream_ = detail::stream_threshold_bytes();
  }
  void TearDown() override {
    if (saved_ < 0) return;
    set_gather_prefetch_distance(saved_);
    detail::set_stream_threshold_bytes(saved_stream_);
  }

  // f's result with prefetching at `distance` against the reference, and bit for bit against
  // f's result without prefetching.
  void check(int64_t distance, const std::function<Array()>& f) {
    set_gather_prefetch_distance(0);
    Array plain = f().eval();
    set_gather_prefetch_distance(distance);
    Array got = f();
    EXPECT_MATCHES_REFERENCE(got);
    HostView a = host_view(got), b = host_view(plain);
    ASSERT_EQ(a.shape, b.shape);
    size_t bytes = shape_numel(a.shape) * dtype_size(a.dtype);
    EXPECT_TRUE(bytes == 0 || std::memcmp(a.data, b.data, bytes) == 0) << "differs from the kernel without prefetching";
  }

  int64_t saved_ = -1, saved_stream_ = 0;
};

TEST_F(GatherPrefetch, EverySourceAndIndexDtype) {
  for (DType t : kAllDTypes) {
    SCOPED_TRACE(dtype_name(t));
    Array x = random_array(t, {37}, 5).eval();
    for (DType it : kIntTypes) {
      SCOPED_TRACE(dtype_name(it));
      // Indices in [-45, 45): negative ones wrap, those outside [-37, 37) are clamped.
      Array idx = random_array(it, {1500}, 6, is_unsigned(it) ? 0 : -45, 45).eval();
      for (int64_t d : {1, 100, 700}) check(d, [&] { return take(x, idx); });
    }
  }
}

TEST_F(GatherPrefetch, LengthsRowsAndStreamingStores) {
  Array x = random_array(DType::Float32, {100000}, 7, -4, 4).eval();
  for (int64_t n : {0, 1, 511, 512, 513, 5000}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    Array idx = random_array(DType::Int64, {n}, 8, -100000, 100000).eval();
    check(64, [&] { return take(x, idx) * 2.0f + 1.0f; });
  }
  // Rows: a 2-D gather along the last axis, rows of 700 (blocks cross no row).
  Array m = random_array(DType::Float64, {6, 900}, 9).eval();
  Array j = random_array(DType::Int32, {700}, 10, -900, 900).eval();
  check(32, [&] { return take(m, j, 1); });
  detail::set_stream_threshold_bytes(0);
  Array idx = random_array(DType::Int64, {3001}, 11, 0, 100000).eval();
  check(256, [&] { return take(x, idx); });
}

TEST_F(GatherPrefetch, KernelsTextAndIR) {
  Array x = random_array(DType::Float32, {1000}, 7).eval();
  Array idx = random_array(DType::Int64, {1000}, 8, 0, 1000).eval();
  set_gather_prefetch_distance(128);
  Stages st = inspect({take(x, idx)});
  ASSERT_EQ(st.kernels.size(), 1u);
  EXPECT_NE(st.kernels[0].kernel.find("; the gather from ptr1 prefetched 128 elements ahead into L2, in blocks of 512 "
                                      "(ARRAYC_GATHER_PREFETCH)"),
            std::string::npos)
      << st.kernels[0].kernel;
  EXPECT_NE(st.kernels[0].opt.find("@llvm.prefetch"), std::string::npos);
  set_gather_prefetch_distance(0);
  st = inspect({take(x, idx)});
  EXPECT_EQ(st.kernels[0].kernel.find("prefetched"), std::string::npos);
  EXPECT_EQ(st.kernels[0].opt.find("@llvm.prefetch"), std::string::npos);
  // An index computed in the kernel (i + 1) is not read from memory as is: no prefetching.
  set_gather_prefetch_distance(128);
  st = inspect({take(x, idx + int64_t{1})});
  EXPECT_EQ(st.kernels[0].kernel.find("prefetched"), std::string::npos);
}

}  // namespace
