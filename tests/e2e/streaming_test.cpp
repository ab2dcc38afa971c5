// Streaming (non-temporal) stores: host kernels whose outputs take at least the streaming
// threshold (ARRAYC_STREAM_BYTES, default the last-level cache) write their first output around
// the caches, from its first 64-byte boundary on. These tests lower the threshold so that small
// arrays take that path, and check every result against the reference interpreter and bit for
// bit against the plain-store kernel: every output dtype, lengths around the vector width and
// the alignment step, thread chunks that start mid-line, rows of a strided kernel, and what the
// stage dumps show.
#include <cstdlib>
#include <cstring>
#include <limits>

#include "runtime/executor.h"
#include "runtime/thread_pool.h"
#include "support/data.h"
#include "support/errors.h"
#include "support/reference.h"

namespace {

using namespace arrayc;
using namespace arrayc_test;
using detail::set_stream_threshold_bytes;
using detail::stream_threshold_bytes;

constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

class Streaming : public ::testing::Test {
 protected:
  void SetUp() override {
    if (default_device().kind != Device::Kind::CPU) GTEST_SKIP() << "host kernels only";
    saved_threshold_ = stream_threshold_bytes();
    saved_threads_ = detail::num_threads();
    // Four chunks even on two cores, so that chunks start in the middle of cache lines.
    detail::set_num_threads(4);
  }
  void TearDown() override {
    if (saved_threshold_ < 0) return;
    set_stream_threshold_bytes(saved_threshold_);
    detail::set_num_threads(saved_threads_);
  }

  // f's result with streaming stores (threshold 0) and without; expects the first to match the
  // reference and both to be equal bit for bit.
  template <typename T, typename F> void check(F f) {
    set_stream_threshold_bytes(0);
    Array streamed = f();
    EXPECT_MATCHES_REFERENCE(streamed);
    set_stream_threshold_bytes(kNever);
    Array plain = f().eval();
    std::vector<T> a = streamed.to_vector<T>(), b = plain.to_vector<T>();
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i)
      if (std::memcmp(&a[i], &b[i], sizeof(T)) != 0) {
        ADD_FAILURE() << "element " << i << " of " << a.size() << ": streamed " << a[i] << ", plain " << b[i];
        return;
      }
  }

  int64_t saved_threshold_ = -1;
  int saved_threads_ = 1;
};

// Lengths: below, at and past a vector and a cache line of each element size, and past the
// thread pool's grain (1 << 15) so that the range splits into chunks at odd offsets.
const int64_t kLengths[] = {0, 1, 7, 15, 16, 17, 63, 64, 65, 1000, 100003};

TEST_F(Streaming, EveryOutputDtypeAndLength) {
  for (int64_t n : kLengths) {
    SCOPED_TRACE("n = " + std::to_string(n));
    check<float>([&] { return random_array(DType::Float32, {n}, 1, -4, 4) * 1.5f + 0.25f; });
    check<double>([&] { return arrayc::exp(random_array(DType::Float64, {n}, 2, -4, 4)) - 1.0; });
    check<int32_t>([&] { return random_array(DType::Int32, {n}, 3, -100, 100) * 3 + 1; });
    check<int64_t>([&] { return random_array(DType::Int64, {n}, 4, -100, 100) - 7; });
    check<int64_t>([&] { return random_array(DType::Float32, {n}, 5, -4, 4) > 0.0f; });  // bool
  }
}

TEST_F(Streaming, FusedTranscendentalChain) {
  // W8's kernel: the packed sincos asks its loop for 16 lanes; the streamed loop keeps that.
  for (int64_t n : {int64_t{33}, int64_t{100003}}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    check<float>([&] {
      Array x = normal({n}, 8);
      return arrayc::where(x > 0.0f, x * 1.5f + 0.25f, arrayc::exp(x) - 1.0f) * arrayc::cos(x) + arrayc::sin(x) * 0.5f;
    });
  }
}

TEST_F(Streaming, RowsOfAStridedKernel) {
  // A transposed operand makes a rank-2 kernel: every row of the output has its own head of
  // plain stores up to its first 64-byte boundary (129 floats a row: rows start mid-line).
  for (int64_t cols : {int64_t{129}, int64_t{16}, int64_t{3}}) {
    SCOPED_TRACE("cols = " + std::to_string(cols));
    check<float>([&] { return transpose(random_array(DType::Float32, {cols, 37}, 9, -4, 4)) + 1.0f; });
  }
}

TEST_F(Streaming, BroadcastOperands) {
  check<float>([&] {
    Array col = random_array(DType::Float32, {300, 1}, 10, -4, 4);
    Array row = random_array(DType::Float32, {1, 257}, 11, -4, 4);
    return col * row + 2.0f;
  });
}

TEST_F(Streaming, KernelsShowTheirStoresInEveryStage) {
  Array x = random_array(DType::Float32, {1000}, 12, -4, 4).eval();
  set_stream_threshold_bytes(4000);  // exactly the output's size: streamed
  Stages st = inspect({x * 2.0f + 1.0f});
  ASSERT_EQ(st.kernels.size(), 1u);
  const KernelStages& k = st.kernels[0];
  EXPECT_NE(k.kernel.find("; non-temporal stores to ptr1: outputs of 4000 bytes, streaming threshold 4000 bytes"),
            std::string::npos)
      << k.kernel;
  EXPECT_NE(k.opt.find("!nontemporal"), std::string::npos) << k.opt;
  EXPECT_NE(k.opt.find("llvm.x86.sse.sfence"), std::string::npos) << k.opt;
  EXPECT_NE(k.assembly.find("movnt"), std::string::npos) << k.assembly;
  EXPECT_NE(k.assembly.find("sfence"), std::string::npos) << k.assembly;

  set_stream_threshold_bytes(4001);  // one byte more than the output: plain stores
  st = inspect({x * 2.0f + 1.0f});
  ASSERT_EQ(st.kernels.size(), 1u);
  EXPECT_EQ(st.kernels[0].kernel.find("non-temporal"), std::string::npos) << st.kernels[0].kernel;
  EXPECT_EQ(st.kernels[0].assembly.find("movnt"), std::string::npos);
  EXPECT_EQ(st.kernels[0].assembly.find("sfence"), std::string::npos);
}

TEST_F(Streaming, ReductionsKeepPlainStores) {
  set_stream_threshold_bytes(0);
  Array x = random_array(DType::Float32, {64, 100}, 13, -4, 4).eval();
  Stages st = inspect({sum(x * 2.0f, {1})});
  for (const KernelStages& k : st.kernels) {
    EXPECT_EQ(k.kernel.find("non-temporal"), std::string::npos) << k.kernel;
    EXPECT_EQ(k.assembly.find("movnt"), std::string::npos) << k.assembly;
  }
  EXPECT_MATCHES_REFERENCE(sum(x * 2.0f, {1}));
}

TEST_F(Streaming, BadThresholdIsAnErrorNamingTheVariable) {
  const char* old = std::getenv("ARRAYC_STREAM_BYTES");
  std::string saved = old ? old : "";
  for (const char* bad : {"abc", "-1", "12MB", "1e9"}) {
    SCOPED_TRACE(bad);
    setenv("ARRAYC_STREAM_BYTES", bad, 1);
    set_stream_threshold_bytes(-1);  // read the variable again at the next kernel
    EXPECT_ARRAYC_ERROR((random_array(DType::Float32, {10}, 14, -1, 1) + 1.0f).eval(),
                        "ARRAYC_STREAM_BYTES must be an integer >= 0 (bytes), got '" + std::string(bad) + "'");
  }
  setenv("ARRAYC_STREAM_BYTES", "4096", 1);
  set_stream_threshold_bytes(-1);
  EXPECT_EQ(stream_threshold_bytes(), 4096);
  if (old) setenv("ARRAYC_STREAM_BYTES", saved.c_str(), 1);
  else unsetenv("ARRAYC_STREAM_BYTES");
  set_stream_threshold_bytes(-1);
  EXPECT_GT(stream_threshold_bytes(), 0);  // the cache size, or 32 MiB
}

}  // namespace
