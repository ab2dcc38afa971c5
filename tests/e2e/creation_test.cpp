// Creation end to end: host data of every dtype, zeros/ones/full, arange, and the Philox random
// streams (element values equal philox.h's reference, same seed same numbers, moments).
#include <cmath>

#include "ir/philox.h"
#include "support/data.h"
#include "support/devices.h"
#include "support/reference.h"

namespace {

using namespace arrayc;
using namespace arrayc_test;

class Creation : public DeviceTest {};
ARRAYC_DEVICE_SUITE(Creation);

double mean_of(const Array& a) { return arrayc::mean(arrayc::cast(a, DType::Float64)).item<double>(); }

TEST_P(Creation, HostDataRoundTrips) {
  EXPECT_EQ(arrayc::array(std::vector<int32_t>{1, -2, 3}).to_vector<int32_t>(), (std::vector<int32_t>{1, -2, 3}));
  EXPECT_EQ(arrayc::array(std::vector<int64_t>{1LL << 40, -5}).to_vector<int64_t>(),
            (std::vector<int64_t>{1LL << 40, -5}));
  EXPECT_EQ(arrayc::array(std::vector<float>{0.5f, -1e30f}).to_vector<float>(), (std::vector<float>{0.5f, -1e30f}));
  EXPECT_EQ(arrayc::array(std::vector<double>{0.1, 1e300}).to_vector<double>(), (std::vector<double>{0.1, 1e300}));
  EXPECT_EQ(arrayc::array(std::vector<bool>{true, false, true}).to_vector<bool>(),
            (std::vector<bool>{true, false, true}));
  Array m = arrayc::array(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(m.shape(), (Shape{2, 3}));
  EXPECT_EQ(m.dtype(), DType::Float32);
  EXPECT_EQ(m.device(), device());
  EXPECT_EQ(m.size(), 6);
  EXPECT_EQ(transpose(m).to_vector<float>(), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  // to_vector converts.
  EXPECT_EQ(m.to_vector<int32_t>(), (std::vector<int32_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(arrayc::array(std::vector<double>{}, {0, 3}).size(), 0);
  EXPECT_EQ(arrayc::array(std::vector<int32_t>{9}, {}).item<int32_t>(), 9);
}

TEST_P(Creation, ZerosOnesFull) {
  for (DType t : kAllDTypes) {
    SCOPED_TRACE(dt(t));
    EXPECT_MATCHES_REFERENCE(zeros({2, 3}, t));
    EXPECT_MATCHES_REFERENCE(ones({4}, t));
    EXPECT_MATCHES_REFERENCE(full({3, 1, 2}, 2.75, t));
    EXPECT_MATCHES_REFERENCE(full({}, -7.5, t));
    EXPECT_MATCHES_REFERENCE(full({5}, 3.0, t) + ones({5}, t));
    EXPECT_EQ(zeros({2, 0}, t).size(), 0);
    EXPECT_EQ(full({2}, 1.0, t).dtype(), t);
  }
  EXPECT_EQ(full({2}, 2.75, DType::Int32).to_vector<int32_t>(), (std::vector<int32_t>{2, 2}));
  EXPECT_EQ(ones({3}).dtype(), DType::Float32);
  EXPECT_EQ(full({2}, -0.0, DType::Float64).to_vector<double>()[0], 0.0);
  EXPECT_TRUE(std::signbit(full({2}, -0.0, DType::Float64).to_vector<double>()[0]));
}

TEST_P(Creation, Arange) {
  Array a = arange(10);
  EXPECT_EQ(a.dtype(), DType::Int64);
  EXPECT_EQ(a.to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_MATCHES_REFERENCE(arange(67, DType::Int32));
  EXPECT_MATCHES_REFERENCE(arange(1000003, DType::Float32));
  EXPECT_EQ(arange(0).size(), 0);
  EXPECT_EQ(arange(5, DType::Float64).to_vector<double>(), (std::vector<double>{0, 1, 2, 3, 4}));
  // Float ranges: numpy's length ceil((stop - start) / step) and values start + i * step.
  struct Case {
    double start, stop, step;
    DType t;
  };
  const Case cases[] = {{0.5, 3.0, 0.25, DType::Float64}, {0.5, 3.0, 0.25, DType::Float32},
                        {3.0, -1.0, -0.5, DType::Float64}, {0, 1, 0.1, DType::Float64},
                        {-2, 2, 1, DType::Int32},          {0, 7.5, 1, DType::Int64},
                        {1, 1, 1, DType::Float32},         {5, 1, 1, DType::Float64}};
  for (const Case& c : cases) {
    SCOPED_TRACE(std::to_string(c.start) + ", " + std::to_string(c.stop) + ", " + std::to_string(c.step) +
                 " " + dt(c.t));
    Array r = arange(c.start, c.stop, c.step, c.t);
    int64_t n = static_cast<int64_t>(std::max(0.0, std::ceil((c.stop - c.start) / c.step)));
    ASSERT_EQ(r.size(), n);
    EXPECT_EQ(r.dtype(), c.t);
    EXPECT_MATCHES_REFERENCE(r);
    std::vector<double> v = r.to_vector<double>();
    for (int64_t i = 0; i < n; ++i) EXPECT_NEAR(v[i], c.start + i * c.step, 1e-6 * (1 + std::fabs(v[i])));
  }
}

TEST_P(Creation, UniformMatchesPhilox) {
  Array u = uniform({1000}, 1234);
  EXPECT_EQ(u.dtype(), DType::Float32);
  EXPECT_MATCHES_REFERENCE(u);
  std::vector<float> v = u.to_vector<float>();
  for (int i = 0; i < 1000; ++i)
    ASSERT_EQ(v[i], detail::uniform_value<float>(1234, i)) << "element " << i;
  Array d = uniform({7, 11}, 0xfedcba9876543210ULL, 0, 1, DType::Float64);
  std::vector<double> w = d.to_vector<double>();
  for (int i = 0; i < 77; ++i)
    ASSERT_EQ(w[i], detail::uniform_value<double>(0xfedcba9876543210ULL, i)) << "element " << i;
  // Same seed, same numbers; another seed, other numbers.
  EXPECT_EQ(uniform({1000}, 1234).to_vector<float>(), v);
  EXPECT_NE(uniform({1000}, 1235).to_vector<float>(), v);
  // Scaled to [low, high).
  Array s = uniform({3, 100}, 5, -2.0, 3.0);
  EXPECT_MATCHES_REFERENCE(s);
  for (float x : s.to_vector<float>()) {
    EXPECT_GE(x, -2.0f);
    EXPECT_LE(x, 3.0f);
  }
  EXPECT_MATCHES_REFERENCE(uniform({2, 3, 4, 5}, 9, 0, 1, DType::Float64) * 2.0);
  EXPECT_EQ(uniform({0}, 1).size(), 0);
}

TEST_P(Creation, NormalMatchesPhilox) {
  Array z = normal({1000}, 77);
  EXPECT_MATCHES_REFERENCE(z);
  std::vector<float> v = z.to_vector<float>();
  for (int i = 0; i < 1000; ++i) {
    float want = detail::normal_value<float>(77, i);
    ASSERT_NEAR(v[i], want, 1e-5f * (1 + std::fabs(want))) << "element " << i;
  }
  Array d = normal({500}, 78, 0, 1, DType::Float64);
  EXPECT_MATCHES_REFERENCE(d);
  std::vector<double> w = d.to_vector<double>();
  for (int i = 0; i < 500; ++i) {
    double want = detail::normal_value<double>(78, i);
    ASSERT_NEAR(w[i], want, 1e-12 * (1 + std::fabs(want))) << "element " << i;
  }
  EXPECT_EQ(normal({1000}, 77).to_vector<float>(), v);
  EXPECT_MATCHES_REFERENCE(normal({4, 5}, 3, 10.0, 0.5));
}

TEST_P(Creation, NormalMoments) {
  const int64_t n = 1000000;
  for (DType t : kFloatTypes) {
    SCOPED_TRACE(dt(t));
    Array z = normal({n}, 2024, 3.0, 2.0, t);
    double mean = mean_of(z);
    double var = mean_of((z - 3.0) * (z - 3.0));
    EXPECT_NEAR(mean, 3.0, 0.01);        // std error 2 / 1000
    EXPECT_NEAR(std::sqrt(var), 2.0, 0.01);
    Array u = uniform({n}, 2025, 0, 1, t);
    EXPECT_NEAR(mean_of(u), 0.5, 0.002);
    EXPECT_NEAR(mean_of(u * u) - 0.25, 1.0 / 12, 0.002);
  }
}

}  // namespace
