// Scalar constants are kernel parameters: a loop over many scalar values (a learning rate, a
// scale) compiles one kernel, not one per value, in eager code and through jit's number
// arguments alike. Values that change the code (small integers, NaN, the infinities, a small
// exponent of pow) stay compiled in, and the kernel text says which is which.
#include <cmath>

#include "support/data.h"
#include "support/devices.h"
#include "support/reference.h"

namespace {

using namespace arrayc;
using namespace arrayc_test;

class Constants : public DeviceTest {};
ARRAYC_DEVICE_SUITE(Constants);

// x: a transposed float64 view (a rank-2 strided kernel), so that no earlier test in the process
// compiled this kernel (the suite also runs as one process).
TEST_P(Constants, AnEagerLoopOverScalarValuesCompilesOnce) {
  Array x = transpose(random_array(DType::Float64, {25, 40}, 1).eval());
  StatsDelta d = stats_delta([&] {
    for (int i = 0; i < 300; ++i) {
      double s = 0.1 + 0.001 * i;  // never an integer or a half
      Array y = sum(x * s + 0.25 * s);
      EXPECT_MATCHES_REFERENCE(y);
    }
  });
  EXPECT_EQ(d.compiles, 1);
}

// The loop of issue 26: every float value is a parameter, 0 and 1 included, and x * 1.0 is not
// folded away (simplify folds an identity only by a compiled-in constant): one kernel for all
// 3000 values. x is a rank-3 transposed view (its kernel keeps 3 strided dims), which no other
// test of the suite sums in this form, so that the kernel is this test's own and the count is
// exact whatever ran before in the process.
TEST_P(Constants, AnEagerLoopOver3000ScaleValuesCompilesOneKernel) {
  Array x = transpose(random_array(DType::Float32, {3, 5, 7}, 5).eval(), {2, 0, 1});
  StatsDelta d = stats_delta([&] {
    for (int i = 0; i < 3000; ++i) {
      Array y = sum(x * static_cast<float>(i) + 1.0f);
      if (i % 500 == 0 || i < 3) EXPECT_MATCHES_REFERENCE(y);
      else y.eval();
    }
  });
  EXPECT_EQ(d.compiles, 1);
  // The kernel text of every value is the same, the scale a parameter: 1 as well as 2.
  auto kernel_of = [&](float s) {
    Stages st = inspect({sum(x * s + 1.0f)});
    return st.kernels.size() == 1 ? st.kernels[0].kernel : "(" + std::to_string(st.kernels.size()) + " kernels)";
  };
  std::string k1 = kernel_of(1.0f);
  EXPECT_EQ(k1, kernel_of(2.0f));
  EXPECT_EQ(k1, kernel_of(0.0f));
  EXPECT_NE(k1.find("mul %0, %1"), std::string::npos) << k1;
  EXPECT_NE(k1.find("const $0 : float32"), std::string::npos) << k1;
}

// The identities by a float 1 or 0 stay exact without the fold: x * 1, x / 1, x + (-0.0) and
// x - 0 give x bit for bit (NaN, the infinities and -0.0 included); integers still fold.
TEST_P(Constants, IdentitiesByAFloatParameterAreExact) {
  for (DType t : {DType::Float32, DType::Float64, DType::Float16}) {
    SCOPED_TRACE(dtype_name(t));
    Array x = cast(array(std::vector<double>{0.0, -0.0, 1.5, -2.25, NAN, INFINITY, -INFINITY, 1e-30}, {8}, device()), t);
    Array one = full({}, 1.0, t, device()), zero = full({}, 0.0, t, device()), minus_zero = full({}, -0.0, t, device());
    for (const Array& y : {x * one, one * x, x / one, x + minus_zero, minus_zero + x, x - zero}) {
      std::vector<double> got = y.to_vector<double>(), want = x.to_vector<double>();
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(std::isnan(got[i]), std::isnan(want[i])) << i;
        if (!std::isnan(want[i])) {
          EXPECT_EQ(got[i], want[i]) << i;
          EXPECT_EQ(std::signbit(got[i]), std::signbit(want[i])) << i;
        }
      }
    }
  }
  // Integers: x * 1 + 0 - 0 is x itself, no kernel at all.
  Array xi = random_array(DType::Int32, {10}, 7).eval();
  EXPECT_EQ(inspect({xi * 1 + 0 - 0}).kernels.size(), 0u);
  EXPECT_EQ((xi * 1 + 0 - 0).to_vector<int32_t>(), xi.to_vector<int32_t>());
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

namespace {

using namespace arrayc;
using namespace arrayc_test;

// An integer exponent array whose values are a constant (a view of full(), folded by simplify)
// follows the array rule (1/x^|e| truncated), as the reference does; numpy's error is for an
// exponent given as a constant only (arrayc-difftest, seed 1002, programs 6208 and 6693).
TEST_P(Constants, AnIntegerExponentArrayThatFoldsToAConstantIsNotAnError) {
  for (DType t : {DType::Int8, DType::Int32, DType::Int64}) {
    for (int64_t e : std::vector<int64_t>{-1, -2, -6, -17, INT8_MIN}) {
      SCOPED_TRACE(std::string(dtype_name(t)) + " " + std::to_string(e));
      Array x = cast(array(std::vector<int64_t>{-6, -2, -1, 0, 1, 2, 7}, {7}, device()), t);
      Array ex = reshape(full({}, e, t, device()), {1});
      EXPECT_MATCHES_REFERENCE(arrayc::pow(x, ex));
      EXPECT_MATCHES_REFERENCE(arrayc::pow(ex, ex));
    }
  }
}

}  // namespace
