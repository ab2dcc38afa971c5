// Streaming (non-temporal) stores: host kernels whose outputs and full-size inputs take at least
// the streaming threshold (ARRAYC_STREAM_BYTES, default the last-level cache) write their outputs (those of
// the first output's element size) around the caches, from the first 64-byte boundary on.
// These tests lower the threshold so that small arrays take that path, and check every result
// against the reference interpreter and bit for bit against the plain-store kernel: every
// output dtype, lengths around the vector width and the alignment step, thread chunks that
// start mid-line, rows of a strided kernel, several outputs, outputs aligned unlike the first,
// and what the stage dumps show.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <sstream>

#include "kernel/kernel.h"
#include "backend/host/host_backend.h"
#include "backend/host/host_jit.h"
#include "codegen/cpu/host_policy.h"
#include "backend/host/thread_pool.h"
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
  // A broadcast column makes a rank-2 kernel: every row of the output has its own head of plain
  // stores up to its first 64-byte boundary (129 floats a row: rows start mid-line).
  for (int64_t cols : {int64_t{129}, int64_t{16}, int64_t{3}}) {
    SCOPED_TRACE("cols = " + std::to_string(cols));
    check<float>([&] {
      return random_array(DType::Float32, {37, cols}, 9, -4, 4) + random_array(DType::Float32, {37, 1}, 14, -4, 4);
    });
  }
  // A transposed operand makes a tiled kernel (tiled_test.cpp), which keeps plain stores.
  check<float>([&] { return transpose(random_array(DType::Float32, {129, 37}, 9, -4, 4)) + 1.0f; });
}

TEST_F(Streaming, BroadcastOperands) {
  check<float>([&] {
    Array col = random_array(DType::Float32, {300, 1}, 10, -4, 4);
    Array row = random_array(DType::Float32, {1, 257}, 11, -4, 4);
    return col * row + 2.0f;
  });
}

// Whether two arrays of one dtype hold the same bits.
template <typename T> bool same_bits_as(const Array& a, const Array& b) {
  std::vector<T> x = a.to_vector<T>(), y = b.to_vector<T>();
  return x.size() == y.size() && (x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof(T)) == 0);
}
bool same_bits(const Array& a, const Array& b) {
  if (a.dtype() != b.dtype()) return false;
  switch (a.dtype()) {
    case DType::Float32: return same_bits_as<float>(a, b);
    case DType::Float64: return same_bits_as<double>(a, b);
    case DType::Int32: return same_bits_as<int32_t>(a, b);
    default: return same_bits_as<int64_t>(a, b);
  }
}

TEST_F(Streaming, EveryOutputOfTheFirstOnesSizeStreams) {
  // One kernel, four outputs: the two float32 ones and the int32 one stream (the element size of
  // the first), the float64 one keeps plain stores. Lengths and thread chunks as above; each
  // output against the reference and bit for bit against plain stores.
  auto outputs = [](int64_t n) {
    Array x = random_array(DType::Float32, {n}, 14, -4, 4);
    return std::vector<Array>{x * 1.5f + 0.25f, arrayc::exp(x) - 1.0f, cast(x * 3.0f, DType::Int32),
                              cast(x, DType::Float64) * 2.0};
  };
  for (int64_t n : kLengths) {
    SCOPED_TRACE("n = " + std::to_string(n));
    set_stream_threshold_bytes(0);
    std::vector<Array> streamed = outputs(n);
    eval(streamed);
    set_stream_threshold_bytes(kNever);
    std::vector<Array> plain = outputs(n);
    eval(plain);
    for (size_t i = 0; i < streamed.size(); ++i) {
      SCOPED_TRACE("output " + std::to_string(i));
      EXPECT_MATCHES_REFERENCE(streamed[i]);
      EXPECT_TRUE(same_bits(streamed[i], plain[i]));
    }
  }
  set_stream_threshold_bytes(0);
  std::vector<Array> four = outputs(1000);
  Stages st = inspect(four);
  ASSERT_EQ(st.kernels.size(), 1u) << "the four outputs are not one kernel";
  const KernelStages& k = st.kernels[0];
  EXPECT_NE(k.kernel.find("; non-temporal stores to ptr1, ptr2, ptr3: outputs and inputs of 24000 bytes"), std::string::npos)
      << k.kernel;
  // The vector loop's stores: non-temporal ones of floats and of int32s (not the first output),
  // plain ones of doubles.
  int nt_float = 0, nt_int = 0, nt_double = 0, plain_double = 0;
  std::istringstream lines(k.opt);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("  store <") == std::string::npos) continue;
    bool nt = line.find("!nontemporal") != std::string::npos;
    nt_float += nt && line.find(" x float> ") != std::string::npos;
    nt_int += nt && line.find(" x i32> ") != std::string::npos;
    nt_double += nt && line.find(" x double> ") != std::string::npos;
    plain_double += !nt && line.find(" x double> ") != std::string::npos;
  }
  EXPECT_GT(nt_float, 0) << k.opt;
  EXPECT_GT(nt_int, 0) << k.opt;
  EXPECT_EQ(nt_double, 0) << k.opt;
  EXPECT_GT(plain_double, 0) << k.opt;
}

TEST_F(Streaming, OutputsAlignedUnlikeTheFirstTakeTheScalarLoop) {
  // The executor's outputs are 64-byte aligned alike; a kernel called with a second output one
  // float off (as a hand-made kernel can be) must still be right: the rows take the scalar loop
  // where the outputs do not line up. A copy of one float32 input to two outputs.
  using namespace arrayc::detail;
  Kernel k;
  k.name = "copy_twice";
  k.rank = 1;
  k.leaves.push_back(KernelLeaf{Op::Buffer, DType::Float32, {StrideKind::Unit}, {}, 0, 0, 0});
  k.body.push_back(KernelInstr{Op::Buffer, DType::Float32, {}, 0});
  k.outputs.push_back(KernelOutput{0, DType::Float32, {StrideKind::Unit}, 1, 1});
  k.outputs.push_back(KernelOutput{0, DType::Float32, {StrideKind::Unit}, 2, 2});
  k.num_ptrs = 3;
  k.num_indexed = 3;
  ASSERT_EQ(streamed_outputs(k), (std::vector<int>{0, 1}));
  EmitOptions opts;
  opts.stream_stores = true;
  std::unique_ptr<HostBinary> ck = compile_host_kernel(k, opts);
  for (int64_t n : {int64_t{5}, int64_t{100}, int64_t{1000}}) {
    for (int shift : {0, 1}) {
      SCOPED_TRACE("n = " + std::to_string(n) + ", second output shifted by " + std::to_string(shift));
      alignas(64) static float in[1040], out1[1040], out2[1040 + 16];
      for (int64_t i = 0; i < n; ++i) in[i] = static_cast<float>(i) + 0.5f;
      std::fill(std::begin(out1), std::end(out1), -1.0f);
      std::fill(std::begin(out2), std::end(out2), -1.0f);
      void* ptrs[] = {in, out1, out2 + shift};
      std::vector<int64_t> params(k.num_params(), 0);
      params[0] = n;
      for (int j = 0; j < k.num_indexed; ++j) params[k.param_block(j) + 1] = 1;  // offset 0, stride 1
      ck->fn(ptrs, params.data(), 0, n);
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(out1[i], in[i]) << "first output, element " << i;
        ASSERT_EQ(out2[shift + i], in[i]) << "second output, element " << i;
      }
      EXPECT_EQ(out1[n], -1.0f);
      EXPECT_EQ(out2[shift + n], -1.0f);
    }
  }
}

TEST_F(Streaming, KernelsShowTheirStoresInEveryStage) {
  Array x = random_array(DType::Float32, {1000}, 12, -4, 4).eval();
  set_stream_threshold_bytes(8000);  // exactly the output's and the input's size: streamed
  Stages st = inspect({x * 2.0f + 1.0f});
  ASSERT_EQ(st.kernels.size(), 1u);
  const KernelStages& k = st.kernels[0];
  EXPECT_NE(k.kernel.find("; non-temporal stores to ptr1: outputs and inputs of 8000 bytes, streaming threshold 8000 bytes"),
            std::string::npos)
      << k.kernel;
  // A broadcast operand is read again from cache and does not count: m's 4000 bytes and the
  // output's reach 8000, v's 400 do not add.
  Array m = reshape(x, {10, 100}), v = random_array(DType::Float32, {100}, 13, -4, 4).eval();
  set_stream_threshold_bytes(8000);
  EXPECT_NE(inspect({m + v}).kernels.at(0).kernel.find("outputs and inputs of 8000 bytes"), std::string::npos)
      << inspect({m + v}).kernels.at(0).kernel;
  set_stream_threshold_bytes(8001);
  EXPECT_EQ(inspect({m + v}).kernels.at(0).kernel.find("non-temporal"), std::string::npos);
  set_stream_threshold_bytes(8000);
  EXPECT_NE(k.opt.find("!nontemporal"), std::string::npos) << k.opt;
  EXPECT_NE(k.opt.find("llvm.x86.sse.sfence"), std::string::npos) << k.opt;
  EXPECT_NE(k.assembly.find("movnt"), std::string::npos) << k.assembly;
  EXPECT_NE(k.assembly.find("sfence"), std::string::npos) << k.assembly;

  set_stream_threshold_bytes(8001);  // one byte more than the output and the input: plain stores
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
  for (const char* bad : {"abc", "-1", "12MB", "1e9", "99999999999999999999"}) {
    SCOPED_TRACE(bad);
    setenv("ARRAYC_STREAM_BYTES", bad, 1);
    set_stream_threshold_bytes(-1);  // read the variable again at the next kernel
    EXPECT_ARRAYC_ERROR((random_array(DType::Float32, {10}, 14, -1, 1) + 1.0f).eval(),
                        "ARRAYC_STREAM_BYTES must be an integer >= 0 (bytes), got '" + std::string(bad) + "'" +
                            (std::string(bad).size() > 12 ? " (out of range)" : ""));
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
