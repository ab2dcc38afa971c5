// Kernel parameters keep their identity (issue 26). A scalar float constant (and an integer
// outside [-16, 16]) is a kernel parameter, and so is a random op's seed: a loop over their values
// must compile one kernel. Hash-consing merged two equal ones, and with them the expressions
// above (x*a + x*b at a == b became one product used twice): that pair of values compiled a
// kernel of its own. Now such leaves are never merged; copies of one Array still are one node.
#include <string>
#include <vector>

#include "support/data.h"
#include "support/devices.h"
#include "support/pipeline.h"
#include "support/reference.h"

namespace {

using namespace arrayc;
using namespace arrayc_test;

class ParamIdentity : public DeviceTest {};
ARRAYC_DEVICE_SUITE(ParamIdentity);

// The kernels' text of some outputs, joined (the kernel cache's key: what decides the compiles).
std::string kernels_text(const std::vector<Array>& outs) {
  std::string s;
  for (const detail::KernelStep& k : kernel_steps(outs)) s += k.kernel->str() + "\n";
  return s;
}

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

// Pairs (a, b) of scalar values with many equal pairs among them: a loop of the form.
std::vector<std::pair<double, double>> value_pairs() {
  const double vals[] = {0.3, 1.7, -2.45, 0.3, 1e-3, 7.125, -2.45};
  std::vector<std::pair<double, double>> out;
  for (int i = 0; i < 14; ++i) out.push_back({vals[i % 7], vals[(3 * i + (i / 7)) % 7]});
  out.push_back({5.5, 5.5});
  return out;
}

struct Template {
  const char* name;
  Array (*f)(const Array& x, double a, double b, DType t);
};

// Each expression uses the two scalars a and b the way user code does (a C++ scalar next to an
// array, or full()), so equal values made equal nodes before.
const Template kTemplates[] = {
    {"sum(x*a + x*b)", [](const Array& x, double a, double b, DType t) {
       return sum(x * full({}, a, t) + x * full({}, b, t));
     }},
    {"x*a - x*b", [](const Array& x, double a, double b, DType t) { return x * full({}, a, t) - x * full({}, b, t); }},
    {"exp(x+a) * exp(x+b)", [](const Array& x, double a, double b, DType t) {
       return exp(x + full({}, a, t)) * exp(x + full({}, b, t));
     }},
    {"where(x > a, x*a, x*b)", [](const Array& x, double a, double b, DType t) {
       return where(x > full({}, a, t), x * full({}, a, t), x * full({}, b, t));
     }},
    {"(x*a) / (x*b + a)", [](const Array& x, double a, double b, DType t) {
       return (x * full({}, a, t)) / (x * full({}, b, t) + full({}, a, t));
     }},
    {"max(sin(x*a), 1) + mean(sin(x*b))", [](const Array& x, double a, double b, DType t) {
       return max(sin(x * full({}, a, t))) + mean(sin(x * full({}, b, t)));
     }},
};

TEST_P(ParamIdentity, EqualScalarValuesCompileNoKernelOfTheirOwn) {
  int which = 0;
  for (DType t : {DType::Float32, DType::Float64, DType::Float16}) {
    for (const Template& tp : kTemplates) {
      SCOPED_TRACE(std::string(tp.name) + " " + dtype_name(t));
      // A transposed rank-3 view of a shape no other test uses: the kernels are this test's own.
      Array x = transpose(cast(random_array(DType::Float64, {3, 11, 2 + which++ % 5}, 40 + which, -1, 1), t).eval(),
                          {2, 0, 1});
      const std::string want = kernels_text({tp.f(x, 0.3, 1.7, t)});
      StatsDelta d = stats_delta([&] {
        for (auto [a, b] : value_pairs()) {
          Array y = tp.f(x, a, b, t);
          EXPECT_EQ(kernels_text({y}), want) << "a = " << a << ", b = " << b;
          EXPECT_TRUE(matches_reference(y)) << "a = " << a << ", b = " << b;
        }
      });
      EXPECT_LE(d.compiles, count(want, "kernel "));
    }
  }
}

// Integer parameters (outside [-16, 16]) alike; small integers are compiled in, so their pairs
// are not part of this.
TEST_P(ParamIdentity, EqualIntegerParametersCompileNoKernelOfTheirOwn) {
  for (DType t : {DType::Int32, DType::Int64, DType::UInt16}) {
    SCOPED_TRACE(dtype_name(t));
    Array x = transpose(random_array(t, {6, 13}, 9, 0, 50).eval());
    auto f = [&](int64_t a, int64_t b) { return x * full({}, a, t) + x * full({}, b, t); };
    const std::string want = kernels_text({f(100, 200)});
    StatsDelta d = stats_delta([&] {
      for (auto [a, b] : std::vector<std::pair<int64_t, int64_t>>{{100, 200}, {300, 300}, {17, 17}, {1000, 999}, {40000, 40000}}) {
        Array y = f(a, b);
        EXPECT_EQ(kernels_text({y}), want) << a << " " << b;
        EXPECT_MATCHES_REFERENCE(y);
      }
    });
    EXPECT_LE(d.compiles, 1);
  }
}

// Genuine common subexpressions still merge: an Array used twice is one node, one computation.
TEST_P(ParamIdentity, IdenticalSubexpressionsStillMerge) {
  Array x = random_array(DType::Float32, {37}, 3).eval();
  Array a = full({}, 2.5f);
  Array y = x * 0.7f;
  EXPECT_EQ(count(kernels_text({y + y}), "= mul"), 1);
  EXPECT_EQ(count(kernels_text({x * a + x * a}), "= mul"), 1);  // one constant node: one product
  EXPECT_EQ(count(kernels_text({sin(x) + sin(x)}), "= sin"), 1);
  EXPECT_EQ(count(kernels_text({x * 0.5f + x * 0.25f}), "= mul"), 2);
  // Values that change the code are compiled in and still merge: x*2 + x*2 on integers.
  Array xi = random_array(DType::Int32, {37}, 4).eval();
  EXPECT_EQ(count(kernels_text({xi * 2 + xi * 2}), "= mul"), 1);
  EXPECT_MATCHES_REFERENCE(y + y);
  EXPECT_MATCHES_REFERENCE(x * a + x * a);
  EXPECT_MATCHES_REFERENCE(xi * 2 + xi * 2);
}

// A random op's seed is a parameter: a loop over seeds compiles once, and each seed gives the
// reference interpreter's numbers. Two draws that happen to share a seed do not merge either.
TEST_P(ParamIdentity, ALoopOverSeedsCompilesOnce) {
  for (DType t : {DType::Float32, DType::Float64}) {
    SCOPED_TRACE(dtype_name(t));
    struct Form {
      const char* name;
      Array (*f)(uint64_t s1, uint64_t s2, DType t);
    };
    const Form forms[] = {
        {"normal", [](uint64_t s, uint64_t, DType t) { return normal({3, 41}, s, 0.0, 1.0, t); }},
        {"uniform(low, high)", [](uint64_t s, uint64_t, DType t) { return uniform({43}, s, -2.0, 3.5, t); }},
        {"sum(normal(mean, std))", [](uint64_t s, uint64_t, DType t) { return sum(normal({47}, s, 1.5, 0.25, t)); }},
        {"uniform(s1) + uniform(s2)", [](uint64_t s1, uint64_t s2, DType t) {
           return uniform({53}, s1, 0.0, 1.0, t) + uniform({53}, s2, 0.0, 1.0, t);
         }},
    };
    const std::vector<std::pair<uint64_t, uint64_t>> seeds = {
        {1, 2}, {7, 7}, {123456789, 0}, {~uint64_t{0}, ~uint64_t{0}}, {uint64_t{1} << 40, 3}, {0, 0}, {42, 43}};
    for (const Form& form : forms) {
      SCOPED_TRACE(form.name);
      const std::string want = kernels_text({form.f(1, 2, t)});
      EXPECT_EQ(count(want, "seed=$"), std::string(form.name).find("s2") != std::string::npos ? 2 : 1) << want;
      StatsDelta d = stats_delta([&] {
        for (auto [s1, s2] : seeds) {
          Array y = form.f(s1, s2, t);
          EXPECT_EQ(kernels_text({y}), want) << s1 << " " << s2;
          EXPECT_TRUE(matches_reference(y)) << s1 << " " << s2;
        }
      });
      EXPECT_LE(d.compiles, 1);
    }
  }
  // One seed, the same numbers; one Array used twice is one draw (u - u is 0).
  Array u = uniform({64}, 99);
  EXPECT_EQ(uniform({64}, 99).to_vector<float>(), u.to_vector<float>());
  for (float v : (u - u).to_vector<float>()) EXPECT_EQ(v, 0.0f);
  EXPECT_NE(uniform({64}, 100).to_vector<float>(), u.to_vector<float>());
}

}  // namespace
