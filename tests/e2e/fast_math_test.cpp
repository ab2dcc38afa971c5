// arrayc::set_fast_math (ARRAYC_FAST_MATH): on the CPU it gives up the exact reduction of huge
// sin/cos arguments and float64 pow's extended-precision log, and nothing else (jit.h). These
// tests pin that: below the huge thresholds fast results meet the default error bounds, shared
// (sin and cos of one x) and separate, huge arguments give NaN
// instead of accurate values, and jit() compiles separately for each mode.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "arrayc/arrayc.h"
#include "support/reference.h"

namespace {

using namespace arrayc;
using arrayc_test::stats_delta;

class FastMathScope {
 public:
  explicit FastMathScope(bool enabled) : saved_(fast_math_enabled()) { set_fast_math(enabled); }
  ~FastMathScope() { set_fast_math(saved_); }
  FastMathScope(const FastMathScope&) = delete;
  FastMathScope& operator=(const FastMathScope&) = delete;

 private:
  bool saved_;
};

// Small, mid-sized and large (below 2^40) arguments, zeros, infinities and NaN, in whole
// 64-element blocks (see sincos_test.cpp for why).
std::vector<float> below_huge_inputs() {
  std::vector<float> v = {0.0f, -0.0f, 1e-45f, -1e-38f, 4194303.5f, 4194304.0f, -4194305.0f, 1e10f,
                          0x1p39f, -0x1p39f, std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()};
  std::mt19937 g(11);
  std::uniform_real_distribution<float> small(-100.0f, 100.0f), expo(0.0f, 12.0f);
  for (int i = 0; i < 3000; ++i) v.push_back(small(g));
  for (int i = 0; i < 1000; ++i) v.push_back((i % 2 ? -1.0f : 1.0f) * std::pow(10.0f, expo(g)));
  while (v.size() % 64) v.push_back(small(g));
  return v;
}

TEST(FastMath, OffByDefault) {
  // CI and the test scripts do not set ARRAYC_FAST_MATH.
  EXPECT_FALSE(fast_math_enabled());
}

TEST(FastMath, SinCosBelowTheHugeThresholdMeetTheDefaultBounds) {
  if (default_device().kind != Device::Kind::CPU) GTEST_SKIP() << "fast math changes CPU kernels only";
  FastMathScope fast(true);
  std::vector<float> in = below_huge_inputs();
  Array x = array(in, {static_cast<int64_t>(in.size())});
  auto both = jit([](const Array& a) { return std::vector<Array>{arrayc::sin(a), arrayc::cos(a)}; });
  std::vector<Array> sc = both(x);
  EXPECT_TRUE(arrayc_test::matches_reference(sc[0], arrayc::sin(x).node()));
  EXPECT_TRUE(arrayc_test::matches_reference(sc[1], arrayc::cos(x).node()));
  // Alone, each takes its own path below 2^10 (one polynomial after a reduction modulo pi).
  Array s1 = arrayc::sin(x).eval(), c1 = arrayc::cos(x).eval();
  EXPECT_TRUE(arrayc_test::matches_reference(s1, arrayc::sin(x).node()));
  EXPECT_TRUE(arrayc_test::matches_reference(c1, arrayc::cos(x).node()));
}

TEST(FastMath, HugeArgumentsGiveNaN) {
  if (default_device().kind != Device::Kind::CPU) GTEST_SKIP() << "fast math changes CPU kernels only";
  std::vector<float> f32 = {1e30f, -3e38f, 0x1.000002p40f, 1e20f};
  std::vector<double> f64 = {1e300, -1e200, 0x1.0000000000001p30, 1e20};
  while (f32.size() < 64) f32.push_back(f32[f32.size() % 4]);
  while (f64.size() < 64) f64.push_back(f64[f64.size() % 4]);
  Array x32 = array(f32, {64}), x64 = array(f64, {64});
  {
    FastMathScope fast(true);
    // Shared (sin and cos of one x) and separate evaluation.
    for (const Array& r : {arrayc::sin(x32) + arrayc::cos(x32), arrayc::sin(x32), arrayc::cos(x32)})
      for (float v : r.to_vector<float>()) EXPECT_TRUE(std::isnan(v)) << v;
    for (const Array& r : {arrayc::sin(x64) + arrayc::cos(x64), arrayc::cos(x64)})
      for (double v : r.to_vector<double>()) EXPECT_TRUE(std::isnan(v)) << v;
    // Just below the thresholds: accurate.
    Array edge32 = array(std::vector<float>(64, 0x1p39f), {64});
    Array edge64 = array(std::vector<double>(64, 0x1p29), {64});
    EXPECT_TRUE(arrayc_test::matches_reference(arrayc::sin(edge32)));
    EXPECT_TRUE(arrayc_test::matches_reference(arrayc::cos(edge64)));
  }
  // The default mode is accurate there.
  EXPECT_TRUE(arrayc_test::matches_reference(arrayc::sin(x32)));
  EXPECT_TRUE(arrayc_test::matches_reference(arrayc::cos(x64)));
}

TEST(FastMath, JitCompilesEachModeOnceAndReusesBoth) {
  auto f = jit([](const Array& a) { return arrayc::sin(a) * arrayc::exp(a); });
  Array x = arrayc::normal({1000}, 3);
  EXPECT_EQ(stats_delta([&] { f(x); }).traces, 1);
  {
    FastMathScope fast(true);
    auto d = stats_delta([&] { f(x); });
    EXPECT_EQ(d.traces, 1) << "a new mode is a new signature";
    if (default_device().kind == Device::Kind::CPU) EXPECT_GE(d.compiles, 1);
    EXPECT_EQ(stats_delta([&] { f(x); }).traces, 0);
  }
  EXPECT_EQ(stats_delta([&] { f(x); }).traces, 0) << "the default mode's program is still cached";
  EXPECT_EQ(f.num_traces(), 2);
}

}  // namespace
