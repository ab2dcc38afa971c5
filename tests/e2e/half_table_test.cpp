// Float16 speed (issue 28): an elementwise kernel whose only array operand is a contiguous
// float16/bfloat16 array runs, for long arrays, through a table of its own results over the
// 65536 16-bit patterns (kernel/half_table.h; the host's lookup in backend/host/half_table.h, the
// GPU's a kernel of its own). These tests, on both devices, lower the length from which the table
// is used, and check the results against the reference interpreter and bit for bit against the
// kernel run directly: both 16-bit dtypes, every 16-bit pattern as input (NaNs, infinities, -0,
// subnormals), outputs of 1, 2 and 4 bytes, streaming stores on and off (host), an input that
// starts at an offset, thread chunks that start mid-line, lengths that are no multiple of the
// GPU lookup's runs, and kernels that must not take the table. The suite runs again under
// ARRAYC_HOST_CPU=x86-64-v3 (the AVX2 lookup).
#include <cstring>
#include <limits>

#include "backend/host/half_table.h"
#include "backend/host/host_backend.h"
#include "backend/host/thread_pool.h"
#include "support/data.h"
#include "support/devices.h"
#include "support/host_cpu.h"
#include "support/reference.h"

namespace {

using namespace arrayc;
using namespace arrayc_test;
using detail::half_table_runs;
using detail::set_half_table_min_elements;
using detail::set_stream_threshold_bytes;

constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

class HalfTable : public DeviceTest {
 protected:
  void SetUp() override {
    DeviceTest::SetUp();
    if (IsSkipped()) return;
    saved_min_ = detail::half_table_min_elements();
    saved_stream_ = detail::stream_threshold_bytes();
    saved_threads_ = detail::num_threads();
    detail::set_num_threads(4);  // chunks that start in the middle of cache lines
  }
  void TearDown() override {
    if (saved_min_ >= 0) {
      set_half_table_min_elements(saved_min_);
      set_stream_threshold_bytes(saved_stream_);
      detail::set_num_threads(saved_threads_);
    }
    DeviceTest::TearDown();
  }

  // Every 16-bit pattern, then `extra` more from a fixed hash, as an array of dtype t over
  // memory this fixture keeps.
  Array all_patterns(DType t, int64_t extra) {
    auto bits = std::make_shared<std::vector<uint16_t>>(65536 + extra);
    for (size_t i = 0; i < bits->size(); ++i)
      (*bits)[i] = static_cast<uint16_t>(i < 65536 ? i : (i * 2654435761u) >> 7);
    keep_.push_back(bits);
    return from_host_memory(bits->data(), t, {static_cast<int64_t>(bits->size())}).to(device());
  }

  // f's result through the table (with and without streaming stores) and directly: the table's
  // must match the reference and the direct one bit for bit. `table` says whether f's kernel
  // should take it.
  void check(const std::function<Array()>& f, bool table = true) {
    set_stream_threshold_bytes(kNever);
    set_half_table_min_elements(kNever);
    Array direct = f().eval();
    for (int64_t stream : {kNever, int64_t{0}}) {
      SCOPED_TRACE(stream ? "plain stores" : "streaming stores");
      set_stream_threshold_bytes(stream);
      set_half_table_min_elements(1);
      int64_t runs = half_table_runs();
      Array tabled = f();
      EXPECT_MATCHES_REFERENCE(tabled);
      EXPECT_EQ(half_table_runs() - runs, table ? 1 : 0);
      HostView a = host_view(tabled.to(cpu())), b = host_view(direct.to(cpu()));
      ASSERT_EQ(a.dtype, b.dtype);
      ASSERT_EQ(a.shape, b.shape);
      size_t size = dtype_size(a.dtype);
      for (int64_t i = 0; i < shape_numel(a.shape); ++i)
        if (std::memcmp(static_cast<const char*>(a.data) + i * size, static_cast<const char*>(b.data) + i * size, size)) {
          ADD_FAILURE() << "element " << i << " differs from the direct kernel's";
          break;
        }
    }
  }

  int64_t saved_min_ = -1, saved_stream_ = 0;
  int saved_threads_ = 1;
  std::vector<std::shared_ptr<std::vector<uint16_t>>> keep_;
};

ARRAYC_DEVICE_SUITE(HalfTable);

Array w8(const Array& x) {
  return arrayc::where(x > 0.0f, x * 1.5f + 0.25f, arrayc::exp(x) - 1.0f) * arrayc::cos(x) + arrayc::sin(x) * 0.5f;
}

TEST_P(HalfTable, W8OverEveryPattern) {
  for (DType t : {DType::Float16, DType::BFloat16}) {
    SCOPED_TRACE(dtype_name(t));
    for (int64_t extra : {0, 1, 37, 70001}) {
      SCOPED_TRACE("n = 65536 + " + std::to_string(extra));
      check([&] { return w8(all_patterns(t, extra)); });
    }
  }
}

TEST_P(HalfTable, OutputsOfOneTwoAndFourBytes) {
  for (DType t : {DType::Float16, DType::BFloat16}) {
    SCOPED_TRACE(dtype_name(t));
    check([&] { return arrayc::exp(all_patterns(t, 101)) > 1.5f; });                         // bool
    check([&] { return cast(all_patterns(t, 101) * 3.0f, DType::Int8); });                 // saturating
    check([&] { return cast(arrayc::sqrt(all_patterns(t, 101)) * 7.0f, DType::UInt8); });
    check([&] { return cast(all_patterns(t, 101), DType::Float32) * 1.25f - 3.0f; });       // float32
    check([&] { return cast(arrayc::abs(all_patterns(t, 101)) * 1000.0f, DType::Int32); });
    check([&] { return arrayc::tanh(all_patterns(t, 101)) / 3.0f; });                       // its own dtype
  }
}

TEST_P(HalfTable, InputAtAnOffsetAndOddLengths) {
  for (int64_t start : {1, 5, 33}) {
    SCOPED_TRACE("x[" + std::to_string(start) + ":]");
    check([&] { return arrayc::exp(all_patterns(DType::Float16, 999)[Slice(start, none)]) * 0.5f; });
  }
  for (int64_t n : {2, 15, 16, 17, 63, 64, 65, 1000, 2047, 2049, 4097}) {  // (one element: a rank-0 kernel, no table)
    SCOPED_TRACE("x[:" + std::to_string(n) + "]");
    check([&] { return arrayc::sin(all_patterns(DType::BFloat16, 0)[Slice(n)]) + 1.0f; });
  }
}

TEST_P(HalfTable, KernelsThatDoNotTakeIt) {
  Array x = all_patterns(DType::Float16, 10), y = all_patterns(DType::Float16, 10);
  check([&] { return arrayc::exp(x[Slice(none, none, 2)]) * 2.0f; }, false);  // strided input
  check([&] { return x * y; }, false);                                        // two arrays
  check([&] { return cast(x, DType::Float32); }, false);                      // a cast alone
  check([&] { return cast(x, DType::Float64) * 2.0; }, false);                // 8-byte output
  check([&] { return x * 2.0f + cast(arange(x.shape()[0]), DType::Float16); }, false);  // iota
  check([&] { return cast(all_patterns(DType::Int16, 10), DType::Float32) + 1.0f; }, false);  // not a 16-bit float
}

TEST_P(HalfTable, NoScalarHalfLibcallsAtAnyWidth) {
  // W8's float16 kernel as compiled (text only, nothing runs) for AVX2, AVX-512 and a CPU with
  // AVX512-FP16: its conversions are vector instructions, never the scalar runtime calls.
  if (on_gpu()) GTEST_SKIP() << "host kernels";
  Array x = random_array(DType::Float16, {1000}, 3, -4, 4);
  for (const char* cpu : {"x86-64-v3", "x86-64-v4", "sapphirerapids"}) {
    SCOPED_TRACE(cpu);
    for (const detail::HostStages& s : stages_for_cpu({w8(x)}, cpu)) {
      EXPECT_EQ(s.assembly.find("__extendhfsf2"), std::string::npos);
      EXPECT_EQ(s.assembly.find("__truncsfhf2"), std::string::npos);
      EXPECT_NE(s.assembly.find("vcvtps2ph"), std::string::npos);
      EXPECT_NE(s.assembly.find("vcvtph2ps"), std::string::npos);
    }
  }
}

TEST_P(HalfTable, KernelsTextSaysSo) {
  // On a GPU from the length on where the table is taken, with the lookup as a kernel of its own.
  set_half_table_min_elements(1000);
  Stages st = inspect({w8(random_array(DType::Float16, {1000}, 3, -4, 4))});
  ASSERT_EQ(st.kernels.size(), on_gpu() ? 2u : 1u);
  EXPECT_NE(st.kernels[0].kernel.find("run over the 65536 16-bit inputs into a table, then"), std::string::npos)
      << st.kernels[0].kernel;
  if (on_gpu()) EXPECT_EQ(st.kernels[1].name, "half_lookup_16");
  if (!on_gpu()) return;
  set_half_table_min_elements(1001);
  EXPECT_EQ(inspect({w8(random_array(DType::Float16, {1000}, 3, -4, 4))}).kernels.size(), 1u);
}

}  // namespace

// A step run again reuses its table (on a GPU it is kept with the launch: one kernel, the lookup,
// from the second run on), and tables never mix: calls alternate between two constants and new
// inputs, each checked against the reference and bit for bit against the kernel run directly.
TEST_P(HalfTable, RunAgainWithOtherInputsAndConstants) {
  auto f = [](const Array& x, float c) { return arrayc::exp(x) * c + 0.5f; };
  for (int round = 0; round < 3; ++round)
    for (float c : {0.25f, 3.0f}) {
      SCOPED_TRACE("round " + std::to_string(round) + ", c = " + std::to_string(c));
      Array x = all_patterns(round % 2 ? DType::Float16 : DType::BFloat16, 1000 + round);
      check([&] { return f(x, c); });
    }
  set_half_table_min_elements(1);
  Array x = all_patterns(DType::Float16, 3);
  auto layer = jit([](const Array& a) { return arrayc::sin(a) * 1.5f; });
  Array first = layer(x).eval();
  reset_stats();
  Array again = layer(all_patterns(DType::Float16, 3)).eval();
  EXPECT_MATCHES_REFERENCE(again);
  HostView a = host_view(first.to(cpu())), b = host_view(again.to(cpu()));
  ASSERT_EQ(a.shape, b.shape);
  EXPECT_EQ(std::memcmp(a.data, b.data, shape_numel(a.shape) * dtype_size(a.dtype)), 0);  // NaNs too
  if (on_gpu()) EXPECT_EQ(stats().kernel_launches, 1);  // the lookup alone
}
