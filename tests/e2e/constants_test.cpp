// Scalar constants are kernel parameters: a loop over many scalar values (a learning rate, a
// scale) compiles one kernel, not one per value, in eager code and through jit's number
// arguments alike. Values that change the code (small integers, NaN, the infinities, a small
// exponent of pow) stay compiled in, and the kernel text says which is which.
#include "support/data.h"
#include "support/devices.h"
#include "support/reference.h"

namespace {

using namespace arrayc;
using namespace arrayc_test;

class Constants : public DeviceTest {};
ARRAYC_DEVICE_SUITE(Constants);

TEST_P(Constants, AnEagerLoopOverScalarValuesCompilesOnce) {
  Array x = random_array(DType::Float32, {1000}, 1).eval();
  StatsDelta d = stats_delta([&] {
    for (int i = 0; i < 300; ++i) {
      float s = 0.1f + 0.001f * static_cast<float>(i);  // never an integer or a half
      Array y = sum(x * s + 0.25f * s);
      EXPECT_MATCHES_REFERENCE(y);
    }
  });
  EXPECT_EQ(d.compiles, 1);
}

// The loop of issue 26: every float value is a parameter, 0 and 1 included. x * 1 is folded
// (exactly) by the simplify pass, so i = 1 runs sum(x + 1): the second of two kernels.
TEST_P(Constants, AnEagerLoopOver3000ScaleValuesCompilesTwoKernels) {
  Array x = random_array(DType::Float32, {64}, 5).eval();
  StatsDelta d = stats_delta([&] {
    for (int i = 0; i < 3000; ++i) {
      Array y = sum(x * static_cast<float>(i) + 1.0f);
      if (i % 500 == 0 || i < 3) EXPECT_MATCHES_REFERENCE(y);
      else y.eval();
    }
  });
  EXPECT_LE(d.compiles, 2);  // fewer when an earlier test of this process compiled them
}

TEST_P(Constants, JitNumberArgumentsRetraceButDoNotRecompile) {
  auto f = jit([](const Array& x, double lr) { return x - lr * (x * x); });
  Array x = random_array(DType::Float64, {100}, 2).eval();
  StatsDelta d = stats_delta([&] {
    for (int i = 0; i < 100; ++i) {
      double lr = 0.001 * (i + 0.3);
      EXPECT_MATCHES_REFERENCE(f(x, lr), (x - lr * (x * x)).node());
    }
  });
  EXPECT_EQ(d.traces, 100);  // a number argument is static: each value traces
  EXPECT_EQ(d.compiles, 1);  // and finds the one kernel
}

TEST_P(Constants, ExactInEveryDtype) {
  for (DType t : {DType::Int32, DType::Int64, DType::Float32, DType::Float64}) {
    SCOPED_TRACE(dtype_name(t));
    Array x = random_array(t, {257}, 3).eval();
    for (double v : {1000.0, -123456.0, 0.3, -7.25e-3, 65.5})
      if (is_float(t) || v == static_cast<int64_t>(v)) EXPECT_MATCHES_REFERENCE(x * full({}, v, t) + full({}, v, t));
  }
  // int64 beyond 2^53: exact through the parameter's 64 bits.
  Array big = arange(4) + full({}, int64_t{9007199254740993}, DType::Int64);
  EXPECT_EQ(big.to_vector<int64_t>(),
            (std::vector<int64_t>{9007199254740993, 9007199254740994, 9007199254740995, 9007199254740996}));
}

TEST_P(Constants, TheKernelTextShowsParametersAndInlinedValues) {
  Array x = random_array(DType::Float32, {10}, 4);
  Stages st = inspect({x * 0.3f + 2.0f});
  ASSERT_EQ(st.kernels.size(), 1u);
  const std::string& k = st.kernels[0].kernel;
  EXPECT_NE(k.find("const $0 : float32"), std::string::npos) << k;  // 0.3: a parameter
  EXPECT_NE(k.find("const $1 : float32"), std::string::npos) << k;  // 2 as well
  // pow's small exponents keep their specialized code (x ** 3: two multiplies and an fma).
  std::string p = inspect({arrayc::pow(x, 3.0f)}).kernels.at(0).kernel;
  EXPECT_EQ(p.find("$"), std::string::npos) << p;
  // Small integers stay compiled in (a remainder by a constant becomes multiplies).
  Array xi = random_array(DType::Int32, {10}, 6);
  std::string q = inspect({xi % 3}).kernels.at(0).kernel;
  EXPECT_NE(q.find("const 3 : int32"), std::string::npos) << q;
}

}  // namespace
