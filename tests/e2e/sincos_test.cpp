// sin(x) and cos(x) of one float32 x in one kernel share their argument reduction on the CPU
// (vmath's packed sincos), and so do those of one float64 x (the pair functions). Alone, each
// reduces modulo pi and evaluates one polynomial where that is cheaper (float32 below 2^10,
// float64 below the huge bound); elsewhere float32 alone takes the packed sincos's own paths
// and gives its bits. Tested here: both ways within the bound on every kind of input (small,
// near the float paths' limits, huge, zeros of both signs, subnormals, infinities, NaN), never
// above 1 in magnitude; bit for bit equal where the paths are shared, also when one 16-lane
// vector mixes small and huge lanes; and the loops still vectorize at 16 lanes.
//
// A vector whose lanes are not all below 2^22 computes every lane on the double path, which can
// differ from the float path by an ulp (both within the documented bound), so a lane's bits
// depend on which lanes share its vector. The kernels compared here group lanes differently only
// in a loop's remainder, so the input is a whole number of 64-element blocks.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>

#include "arrayc/arrayc.h"
#include "support/host_cpu.h"
#include "support/reference.h"
#include "support/ulp.h"

namespace {

using namespace arrayc;
using arrayc_test::CpuWidth;
using arrayc_test::stages_for_cpu;
using arrayc_test::x86_widths;

std::vector<float> trig_edge_inputs() {
  std::vector<float> v = {0.0f, -0.0f, 1e-45f, -1e-45f, 1e-38f, std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(),
                          4194303.5f, 4194304.0f, 4194305.0f, -4194304.0f, 1e5f, 1e10f, 3.4e38f, -3.4e38f,
                          1.5707963f, 3.1415927f, 0.7853982f, -0.7853982f, 2.3561945f, 105615.0f, 8.388608e6f};
  std::mt19937 g(7);
  std::uniform_real_distribution<float> small(-100.0f, 100.0f);
  std::uniform_real_distribution<float> expo(0.0f, 38.0f);
  for (int i = 0; i < 4000; ++i) v.push_back(small(g));
  for (int i = 0; i < 1000; ++i) v.push_back((i % 2 ? -1.0f : 1.0f) * std::pow(10.0f, expo(g)));
  // Vectors of 16 lanes with one huge lane each, at every position.
  while (v.size() % 16) v.push_back(small(g));
  for (int pos = 0; pos < 16; ++pos)
    for (int i = 0; i < 16; ++i) v.push_back(i == pos ? 1e20f + static_cast<float>(pos) : small(g));
  while (v.size() % 64) v.push_back(small(g));
  return v;
}

bool same_bits(float a, float b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  return std::memcmp(&a, &b, sizeof a) == 0;
}

// The inputs of trig_edge_inputs() from 2^10 up (and the non-finite ones), in whole 64-element
// blocks: there the separate float32 functions take the packed sincos's paths.
std::vector<float> shared_path_inputs() {
  std::vector<float> v;
  for (float x : trig_edge_inputs())
    if (!(std::fabs(x) < 1024.0f)) v.push_back(x);
  for (size_t i = 0; v.size() % 64; ++i) v.push_back(2048.0f + static_cast<float>(i));
  return v;
}

TEST(SinCos, SharedReductionGivesTheSeparateResultsBitForBitFromTwoToTheTen) {
  std::vector<float> in = shared_path_inputs();
  Array x = array(in, {static_cast<int64_t>(in.size())});
  auto both = jit([](const Array& a) { return std::vector<Array>{arrayc::sin(a), arrayc::cos(a)}; });
  reset_stats();
  std::vector<Array> sc = both(x);
  EXPECT_EQ(stats().kernel_launches, 1);  // one kernel computes both
  std::vector<float> s = sc[0].to_vector<float>(), c = sc[1].to_vector<float>();
  std::vector<float> s1 = arrayc::sin(x).to_vector<float>(), c1 = arrayc::cos(x).to_vector<float>();
  int bad = 0;
  for (size_t i = 0; i < in.size() && bad < 10; ++i) {
    if (!same_bits(s[i], s1[i])) ++bad, ADD_FAILURE() << "sin(" << in[i] << "): " << s[i] << " vs " << s1[i];
    if (!same_bits(c[i], c1[i])) ++bad, ADD_FAILURE() << "cos(" << in[i] << "): " << c[i] << " vs " << c1[i];
  }
}

// The kernel's own function in an optimized module (the math functions it calls are beside it).
std::string kernel_function(const std::string& module) {
  size_t begin = module.find("define void @");
  if (begin == std::string::npos) return "";
  return module.substr(begin, module.find("\n}\n", begin) - begin);
}

TEST(SinCos, TheLoopStillVectorizesAtSixteenLanes) {
  if (default_device().kind != Device::Kind::CPU) GTEST_SKIP();
  Array x = array(std::vector<float>(64, 0.5f), {64});
  Stages st = inspect({arrayc::cos(x) * arrayc::cos(x) + arrayc::sin(x) * arrayc::sin(x)});
  ASSERT_EQ(st.kernels.size(), 1u);
  // The vector loop's packed sincos is inlined: its 16-lane polynomials are in the kernel, and
  // only the remainder loop calls the scalar function.
  std::string body = kernel_function(st.kernels[0].opt);
  EXPECT_NE(body.find("fmul <16 x float>"), std::string::npos) << body;
  EXPECT_EQ(body.find("call <16 x i64>"), std::string::npos) << body;
  EXPECT_NE(body.find("call i64 @arrayc_sincos_f32("), std::string::npos) << body;
  // float64 and the fast mode keep separate calls.
  Array xd = array(std::vector<double>(64, 0.5), {64});
  EXPECT_EQ(inspect({arrayc::sin(xd) + arrayc::cos(xd)}).kernels[0].opt.find("sincos"), std::string::npos);
}

// The stages of W8's kernel on 64 floats.
Stages w8_stages() {
  Array x = array(std::vector<float>(64, 0.5f), {64});
  return inspect({arrayc::where(x > 0.0f, x * 1.5f + 0.25f, arrayc::exp(x) - 1.0f) * arrayc::cos(x) +
                  arrayc::sin(x) * 0.5f});
}

TEST(SinCos, KernelFramesAreAlignedForTheirVectorSpills) {
  // W8's loop reloads spilled zmm constants every iteration; in a 16-byte aligned frame those
  // reloads straddled cache lines whenever the caller's stack offset was unlucky (W8 1.27x
  // slower in such processes). The host JIT asks for 64-byte aligned frames.
  if (default_device().kind != Device::Kind::CPU) GTEST_SKIP();
  Stages st = w8_stages();
  ASSERT_EQ(st.kernels.size(), 1u);
  EXPECT_NE(st.kernels[0].opt.find("alignstack=64"), std::string::npos) << st.kernels[0].opt;
}

// The lines of `body` that use the value `name` (e.g. "%56") as an operand.
std::vector<std::string> uses(const std::string& body, const std::string& name) {
  std::vector<std::string> out;
  size_t at = 0;
  while ((at = body.find(name, at)) != std::string::npos) {
    size_t end = at + name.size();
    bool whole = end == body.size() || !(std::isalnum(static_cast<unsigned char>(body[end])) || body[end] == '.' || body[end] == '_');
    size_t bol = body.rfind('\n', at) + 1, eol = body.find('\n', at);
    std::string line = body.substr(bol, eol - bol);
    if (whole && line.find(name + " =") == std::string::npos) out.push_back(line);
    at = eol == std::string::npos ? body.size() : eol;
  }
  return out;
}

// The value a line defines ("%x = ..." gives "%x").
std::string defined(const std::string& line) {
  size_t b = line.find('%'), e = line.find(" =");
  return b == std::string::npos || e == std::string::npos ? "" : line.substr(b, e - b);
}

TEST(SinCos, ExpSinAndCosOfOneArgumentTestItsRangeOnce) {
  // exp, sin and cos of float32 start with the same test, every lane below 16 (exp then reduces
  // in one step, sin and cos take their shortest path): in W8's loop it is one compare, and one
  // branch on it, where the functions have one each (LLVM merges the compares and threads the
  // second branch). Each compare and branch takes a slot of the FMA pipes on Zen 4.
  if (default_device().kind != Device::Kind::CPU) GTEST_SKIP();
  Stages st = w8_stages();
  ASSERT_EQ(st.kernels.size(), 1u);
  std::string body = kernel_function(st.kernels[0].opt);
  // 16.0f is 0x41800000: "above 16" is abs(bits) > 0x417fffff = 1098907647.
  std::vector<std::string> compares;
  std::istringstream lines(body);
  for (std::string line; std::getline(lines, line);)
    if (line.find(" icmp ") != std::string::npos && line.find("<16 x i32>") != std::string::npos &&
        line.find("1098907647") != std::string::npos)
      compares.push_back(line);
  ASSERT_EQ(compares.size(), 1u) << body;
  // The compare -> bitcast to i16 -> "none above" -> branches.
  int branches = 0;
  for (const std::string& u : uses(body, defined(compares[0])))
    if (u.find("bitcast") != std::string::npos)
      for (const std::string& v : uses(body, defined(u)))
        for (const std::string& w : uses(body, defined(v))) branches += w.find("br i1") != std::string::npos;
  EXPECT_EQ(branches, 1) << body;
}

// How many blocks of `text` have names that start with `label` ("lane.huge" counts
// "lane.huge:", "lane.huge.i:", "lane.huge.i.3:").
int blocks_named(const std::string& text, const std::string& label) {
  int n = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    size_t colon = line.find(':');
    n += line.rfind(label, 0) == 0 && colon != std::string::npos && line.find(' ') > colon;
  }
  return n;
}

TEST(SinCos, MathKernelsCompileOneVectorLoopWithTheirRareLanesRolled) {
  // What compile time depends on: the inlined math appears in one vector loop (no second,
  // 8-lane loop for the leftovers: host_jit.cpp turns LLVM's epilogue vectorization off), and
  // the per-lane loop of huge sin/cos arguments stays a loop (not one call per lane). Here sin
  // and cos have different arguments, so each is inlined with its own huge path.
  if (default_device().kind != Device::Kind::CPU) GTEST_SKIP();
  Array x = array(std::vector<float>(64, 0.5f), {64});
  Stages st = inspect({arrayc::sin(x) * 0.5f + arrayc::cos(x * 2.0f)});
  ASSERT_EQ(st.kernels.size(), 1u);
  const std::string& opt = st.kernels[0].opt;
  EXPECT_EQ(blocks_named(opt, "vector.body"), 1) << opt;
  EXPECT_EQ(blocks_named(opt, "vec.epilog.vector.body"), 0) << opt;
  // One each for the vector loop's sin and cos (the scalar loop calls them without a lane loop).
  EXPECT_EQ(blocks_named(opt, "lane.huge"), 2) << opt;
}

// sin and cos alone and of one x in one kernel (paired), both dtypes: within the bound of
// docs/math_accuracy.md, never above 1 in magnitude (near |r| = pi/2 the float64 one-polynomial
// path's rounding could give cos(1e-9) = 1.0000000000000002: it clamps), exact at 0
// (sin(-0) = -0), NaN for NaN and infinities; huge arguments take the exact reduction (NaN in
// fast mode, above 2^40 for float32 and 2^30 for float64).
std::vector<double> trig_inputs_f64() {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> v = {0.0, -0.0, 5e-324, -5e-324, 1e-300, 1e-9, 2.6474255657715685e-08, -1e-9,
                           0.25, 0.5, 1.0, 1.5707963267948966, -1.5707963267948966, 3.141592653589793,
                           4.71238898038469, 1e5, 1e9, 1073741823.0, 1073741824.0, 1073741825.0, -1e15,
                           1e300, -1e300, inf, -inf, std::numeric_limits<double>::quiet_NaN()};
  std::mt19937_64 g(11);
  std::uniform_real_distribution<double> u(-20, 20);
  for (int i = 0; i < 20000; ++i) v.push_back(u(g));
  for (int i = 0; i < 8000; ++i) v.push_back(std::ldexp(1.0 + u(g) / 40, -static_cast<int>(g() % 60)));
  // Multiples of pi/2 (zeros and peaks of both) and their neighbours.
  for (int k = -3000; k <= 3000; ++k) {
    double x = k * 1.5707963267948966;
    v.insert(v.end(), {x, std::nextafter(x, -inf), std::nextafter(x, inf)});
  }
  return v;
}

// trig_edge_inputs() (whose first two are 0 and -0), then float32's own peaks and zeros: the
// floats nearest multiples of pi/4 and their neighbours, below the one-polynomial path's 2^10
// and above.
// Every float below 2^10 was checked once, outside the suite (docs/math_accuracy.md).
std::vector<float> trig_inputs_f32() {
  std::vector<float> v = trig_edge_inputs();
  // Near sin's peaks, where evaluating the one polynomial as r + r (z S(z)) rounded these two
  // to 1.0000001 and -1.0000001 (vmath's trig_one evaluates r + (r z) S(z)).
  v.insert(v.end(), {0x1.2f29e8p+8f, 0x1.032e7p+9f, -0x1.2f29e8p+8f, -0x1.032e7p+9f});
  const float inf = std::numeric_limits<float>::infinity();
  // Multiples of pi/4 to 1100 (next to their odd ones the packed sincos's q may be one off),
  // then multiples of 3 pi/2 to 3300.
  for (int k = -1400; k <= 1400; ++k)
    for (double step : {0.7853981633974483, 4.71238898038469}) {
      float x = static_cast<float>(k * step);
      v.insert(v.end(), {x, std::nextafter(x, -inf), std::nextafter(x, inf)});
    }
  while (v.size() % 64) v.push_back(0.5f);
  return v;
}

template <class T>
void check_alone_and_paired(const std::vector<T>& in, double huge) {
  Array x = array(in, {static_cast<int64_t>(in.size())});
  auto both = jit([](const Array& a) { return std::vector<Array>{arrayc::sin(a), arrayc::cos(a)}; });
  auto sin_alone = jit([](const Array& a) { return arrayc::sin(a); });
  auto cos_alone = jit([](const Array& a) { return arrayc::cos(a); });
  const char* dtype = sizeof(T) == 4 ? "f32" : "f64";
  for (bool fast : {false, true}) {
    set_fast_math(fast);
    std::vector<Array> sc = both(x);
    std::vector<std::vector<T>> got = {sin_alone(x).template to_vector<T>(), cos_alone(x).template to_vector<T>(),
                                       sc[0].template to_vector<T>(), sc[1].template to_vector<T>()};
    const char* what[] = {"sin alone", "cos alone", "sin paired", "cos paired"};
    for (int k = 0; k < 4; ++k) {
      bool is_cos = k % 2;
      double worst = 0, worst_x = 0;
      int bad = 0;
      for (size_t i = 0; i < in.size() && bad < 10; ++i) {
        T y = got[k][i];
        if (fast && std::fabs(in[i]) > huge && std::isfinite(in[i])) {
          if (!std::isnan(y)) ++bad, ADD_FAILURE() << dtype << " " << what[k] << " fast (" << in[i] << ") = " << y << ", not NaN";
          continue;
        }
        long double ref = is_cos ? cosl(in[i]) : sinl(in[i]);
        double err = arrayc_test::ulp_error(y, ref);
        if (err > worst) worst = err, worst_x = in[i];
        if (std::fabs(y) > 1) ++bad, ADD_FAILURE() << dtype << " " << what[k] << "(" << in[i] << ") = " << y;
      }
      std::printf("  %s %s%s: max %.3f ulp (x = %.9g)\n", dtype, what[k], fast ? " fast" : "", worst, worst_x);
      EXPECT_LE(worst, 4.0) << dtype << " " << what[k] << (fast ? " fast" : "") << " at " << worst_x;
      // in[0] = 0, in[1] = -0
      EXPECT_EQ(got[k][0], is_cos ? 1 : 0) << dtype << " " << what[k];
      EXPECT_EQ(got[k][1], is_cos ? 1 : 0) << dtype << " " << what[k];
      if (!is_cos) EXPECT_TRUE(std::signbit(got[k][1])) << dtype << " " << what[k] << "(-0) must be -0";
    }
  }
  set_fast_math(false);
}

TEST(SinCos, Float32AloneAndPairedStayWithinTheBoundAndAtMostOne) {
  check_alone_and_paired(trig_inputs_f32(), 0x1p40);
}

TEST(SinCos, Float64AloneAndPairedStayWithinTheBoundAndAtMostOne) {
  check_alone_and_paired(trig_inputs_f64(), 0x1p30);
}

TEST(SinCos, Float64PairsCallThePairFunctions) {
  // sin and cos of one float64 x call vmath's pair functions (which share their reduction once
  // inlined); a sin or cos alone calls its own, and so do sin and cos of different arguments.
  if (default_device().kind != Device::Kind::CPU) GTEST_SKIP();
  Array x = array(std::vector<double>(64, 0.5), {64});
  const std::string paired = inspect({arrayc::sin(x) * arrayc::cos(x)}).kernels[0].opt;
  EXPECT_NE(paired.find("@arrayc_sin_f64_pair("), std::string::npos) << paired;
  EXPECT_NE(paired.find("@arrayc_cos_f64_pair("), std::string::npos) << paired;
  const std::string apart = inspect({arrayc::sin(x) * arrayc::cos(x * 2.0)}).kernels[0].opt;
  EXPECT_EQ(apart.find("_pair"), std::string::npos) << apart;
  EXPECT_NE(apart.find("@arrayc_sin_f64("), std::string::npos) << apart;
  EXPECT_NE(apart.find("@arrayc_cos_f64("), std::string::npos) << apart;
}

TEST(SinCos, PowWithAConstantExponentVectorizes) {
  // Interprocedural constant propagation once dropped the constant exponent from the scalar
  // pow, and the call no longer matched its vector variants.
  if (default_device().kind != Device::Kind::CPU) GTEST_SKIP();
  Array x = array(std::vector<float>(64, 0.5f), {64});
  Array y = arrayc::pow(x, 2.5f);  // 2.0 would become x*x (simplify)
  for (const CpuWidth& w : x86_widths()) {
    SCOPED_TRACE(w.cpu);
    std::vector<detail::HostStages> st = stages_for_cpu({y}, w.cpu);
    ASSERT_EQ(st.size(), 1u);
    std::string body = kernel_function(st[0].opt_ir);
    EXPECT_NE(body.find(w.floats), std::string::npos) << body;
    std::string variant = "@arrayc_pow_f32_v" + std::to_string(w.lanes) + "(";
    EXPECT_EQ(body.find(variant), std::string::npos) << "inlined: " << body;
    // Unused vector variants are not compiled.
    EXPECT_EQ(st[0].opt_ir.find("define internal <4 x float> @arrayc_pow_f32_v4"), std::string::npos);
  }
  EXPECT_MATCHES_REFERENCE(y);  // as compiled for this machine
}

}  // namespace
