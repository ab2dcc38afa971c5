// Evaluation semantics end to end: copies of an Array share one value, evaluated arrays feed
// later expressions, eval() of several arrays, and conversions when reading values.
#include <atomic>
#include <thread>

#include "support/data.h"
#include "support/devices.h"
#include "support/reference.h"

namespace {

using namespace arrayc;
using namespace arrayc_test;

class Evaluation : public DeviceTest {};
ARRAYC_DEVICE_SUITE(Evaluation);

TEST_P(Evaluation, CopiesShareTheValue) {
  Array x = random_array(DType::Float32, {10}, 1);
  Array y = arrayc::exp(x) + 1.0f;
  HostArray want = reference_of(y.node());
  Array z = y;
  EXPECT_FALSE(z.is_evaluated());
  y.eval();
  EXPECT_TRUE(y.is_evaluated());
  EXPECT_TRUE(z.is_evaluated());
  EXPECT_TRUE(matches_values(values_of(z), want));
}

// Copies of one unevaluated Array read from several threads at once while one of them (or
// several) evaluates it: each read sees either the graph or the value, never a node freed under
// it (to_vector held a plain reference to the node that eval replaced). Run under ASan/TSan
// (scripts/sanitize.sh) for the strict check.
TEST_P(Evaluation, CopiesReadFromSeveralThreadsWhileOneEvaluates) {
  for (int round = 0; round < 20; ++round) {
    Array x = random_array(DType::Float32, {1000}, 40 + round);
    auto make = [&] { return arrayc::sin(x) * 2.0f + static_cast<float>(round); };
    Array y = make();
    std::vector<float> want = make().to_vector<float>();  // another Array: y stays unevaluated
    ASSERT_FALSE(y.is_evaluated());
    std::vector<std::thread> threads;
    std::atomic<int> bad{0};
    for (int t = 0; t < 6; ++t)
      threads.emplace_back([y, t, &want, &bad] {  // each thread its own copy
        for (int i = 0; i < 3; ++i) {
          if (y.shape() != Shape{1000} || y.dtype() != DType::Float32 || y.size() != 1000) ++bad;
          (void)y.is_evaluated();
          (void)y.node();
          if (t % 2 == 0) {
            std::vector<float> got = y.to_vector<float>();
            if (got != want) ++bad;
          }
        }
      });
    for (std::thread& th : threads) th.join();
    EXPECT_EQ(bad.load(), 0);
    EXPECT_TRUE(y.is_evaluated());
  }
}

// Single flight: threads that evaluate one Array at once run its program once between them. Each
// round counts the kernels run; a second evaluation of the same graph would run its kernel again.
TEST_P(Evaluation, ThreadsEvaluatingOneArrayComputeItOnce) {
  Array x = random_array(DType::Float32, {1 << 20}, 7);
  auto make = [&](float k) { return arrayc::sum(arrayc::exp(arrayc::sin(x) * k)); };
  std::vector<float> want = make(2.0f).to_vector<float>();  // compiles the kernel
  int64_t launches_alone = 0;
  {
    reset_stats();
    (void)make(2.0f).to_vector<float>();
    launches_alone = stats().kernel_launches;
  }
  ASSERT_GE(launches_alone, 1);
  for (int round = 0; round < 10; ++round) {
    Array y = make(2.0f);
    reset_stats();
    std::atomic<int> ready{0}, bad{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t)
      threads.emplace_back([y, &ready, &bad, &want] {
        ++ready;
        while (ready.load() < 8) std::this_thread::yield();
        if (y.to_vector<float>() != want) ++bad;
      });
    for (std::thread& th : threads) th.join();
    EXPECT_EQ(bad.load(), 0);
    EXPECT_EQ(stats().kernel_launches, launches_alone) << "round " << round;
  }
}

TEST_P(Evaluation, EvaluatedArraysFeedLaterExpressions) {
  Array x = random_array(DType::Float64, {3, 4}, 2);
  Array a = arrayc::sin(x) * 2.0;
  Array b = a + x;
  HostArray want_b = reference_of(b.node());
  a.eval();
  EXPECT_MATCHES_REFERENCE(a * a - 1.0);  // reads a's buffer
  EXPECT_TRUE(matches_values(values_of(b), want_b));
  Array c = (b * 3.0).eval();
  EXPECT_MATCHES_REFERENCE(c + a + b);
}

TEST_P(Evaluation, EvalSeveralArrays) {
  Array x = random_array(DType::Float32, {4, 6}, 3);
  Array a = x * 2.0f, b = sum(x, {1}, false), c = arrayc::cast(x > 0, DType::Int32), d = transpose(x) - 1.0f;
  std::vector<HostArray> want;
  for (const Array& r : {a, b, c, d}) want.push_back(reference_of(r.node()));
  arrayc::eval({a, b, c, d});
  std::vector<Array> got{a, b, c, d};
  for (size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE("output " + std::to_string(i));
    EXPECT_TRUE(got[i].is_evaluated());
    EXPECT_TRUE(matches_values(values_of(got[i]), want[i]));
  }
  arrayc::eval({});  // nothing to do
  arrayc::eval({a, a});
  EXPECT_TRUE(matches_values(values_of(a), want[0]));
}

TEST_P(Evaluation, ReadingConverts) {
  Array x = make_array(DType::Float64, {4}, {-1.5, 0.0, 2.7, 1e10});
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{-1.5f, 0.0f, 2.7f, 1e10f}));
  EXPECT_EQ(x.to_vector<bool>(), (std::vector<bool>{true, false, true, true}));
  Array i = make_array(DType::Int32, {3}, {-2, 0, 7});
  EXPECT_EQ(i.to_vector<double>(), (std::vector<double>{-2, 0, 7}));
  EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{-2, 0, 7}));
  EXPECT_EQ((i > 0).to_vector<int32_t>(), (std::vector<int32_t>{0, 0, 1}));
  EXPECT_FALSE(x.graph_text().empty());
}

TEST_P(Evaluation, DefaultArrayIsAFloatZero) {
  Array a;
  EXPECT_EQ(a.dtype(), DType::Float32);
  EXPECT_EQ(a.shape(), Shape{});
  EXPECT_EQ(a.item<float>(), 0.0f);
  EXPECT_MATCHES_REFERENCE(a + 1.0f);
}

}  // namespace
