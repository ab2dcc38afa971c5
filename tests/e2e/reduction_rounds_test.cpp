// Reductions too long for one launch or one round, on every device. The GPU runs a reduction
// whose work (outputs x reduced indices) passes detail::gpu_round_work() in rounds that fold
// into a running result, checking arrayc::interrupt() between rounds (backend/cuda/launch_plan.h);
// the host splits long reduced ranges in rounds of detail::split_round() indices
// (tests/unit/split_rounds_test.cpp). Both are set small here, so that short arrays run in many
// rounds: full reductions and reductions along and across rows, every reduce op, integers exact,
// floats against the reference interpreter, NaN and -inf in the last and first rounds.
#include <arrayc/arrayc.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "backend/cuda/launch_plan.h"
#include "backend/host/host_backend.h"
#include "support/devices.h"
#include "support/interrupt.h"
#include "support/reference.h"

namespace {

using namespace arrayc;

class ReductionRounds : public arrayc_test::DeviceTest {
 protected:
  void SetUp() override {
    DeviceTest::SetUp();
    saved_work_ = detail::gpu_round_work();
    saved_round_ = detail::split_round();
  }
  void TearDown() override {
    detail::set_gpu_round_work(saved_work_);
    detail::set_split_round(saved_round_);
    DeviceTest::TearDown();
  }
  // Runs f once with the default rounds and once with small ones.
  template <typename F> void for_round_lengths(F f) {
    for (int64_t work : {detail::gpu_round_work(), int64_t{997}}) {
      detail::set_gpu_round_work(work);
      detail::set_split_round(work == 997 ? 1009 : saved_round_);
      SCOPED_TRACE("round work " + std::to_string(work));
      f();
    }
  }

 private:
  int64_t saved_work_ = 0, saved_round_ = 0;
};

constexpr int64_t kN = 300 * 1001;

TEST_P(ReductionRounds, IntegerReductionsAreExact) {
  for_round_lengths([] {
    EXPECT_EQ(sum(arange(kN)).item<int64_t>(), kN * (kN - 1) / 2);
    Array r = remainder(arange(kN) * 7, full({}, 100003.0, DType::Int64)) - 5;  // extremes inside
    EXPECT_EQ(min(r).item<int64_t>(), -5);
    EXPECT_EQ(max(r).item<int64_t>(), 99997);
    EXPECT_EQ(sum(full({kN}, 70000.0, DType::Int32)).item<int64_t>(), kN * 70000);
    Array m = reshape(arange(kN), {300, 1001});
    std::vector<int64_t> rows = sum(m, std::vector<int64_t>{1}).to_vector<int64_t>();
    std::vector<int64_t> cols = sum(m, std::vector<int64_t>{0}).to_vector<int64_t>();
    ASSERT_EQ(rows.size(), 300u);
    ASSERT_EQ(cols.size(), 1001u);
    for (int64_t i = 0; i < 300; ++i) EXPECT_EQ(rows[i], 1001 * (1001 * i) + 1001 * 1000 / 2) << i;
    for (int64_t j = 0; j < 1001; ++j) EXPECT_EQ(cols[j], 300 * j + 1001 * (300 * 299 / 2)) << j;
    EXPECT_TRUE(any(arange(kN) == kN - 1).item<bool>());
    EXPECT_FALSE(all(arange(kN) != kN - 1).item<bool>());
    EXPECT_FALSE(any(arange(kN) == kN).item<bool>());
  });
}

TEST_P(ReductionRounds, FloatReductionsMatchTheReference) {
  Array x = arange(0.0, static_cast<double>(kN), 1.0, DType::Float64) * 1e-3;
  Array m = reshape(cast(x, DType::Float32), {300, 1001});
  Array f = sin(x) * 0.5 + 1.0;
  std::vector<Array> graphs = {mean(x),
                               sum(full({kN}, 0.1, DType::Float32)),
                               mean(m, std::vector<int64_t>{1}),
                               sum(m, std::vector<int64_t>{0}),
                               prod(reshape(f, {1001, 300}), std::vector<int64_t>{1}),
                               max(sin(m), std::vector<int64_t>{0})};
  std::vector<arrayc_test::HostArray> want;
  for (const Array& g : graphs) want.push_back(arrayc_test::reference_of(g.node()));
  Array i = arange(kN);
  for_round_lengths([&] {
    for (size_t k = 0; k < graphs.size(); ++k) {
      Array fresh(graphs[k].node());  // unevaluated: runs again with these rounds
      EXPECT_TRUE(arrayc_test::matches_values(arrayc_test::values_of(fresh), want[k])) << k;
    }
    Array y = where(i == kN - 7, full({}, std::nan(""), DType::Float32), cast(i, DType::Float32));
    EXPECT_TRUE(std::isnan(max(y).item<float>()));
    Array z = where(i == 3, full({}, -INFINITY, DType::Float32), cast(i, DType::Float32));
    EXPECT_EQ(min(z).item<float>(), -std::numeric_limits<float>::infinity());
  });
}

// A reduction of 1e15 elements that are never in memory: minutes of one GPU launch before
// rounds (the evaluator fuzzer's 2 s watchdog waited 34 s in vain on an H100, where an earlier
// input had chosen the GPU). It stops after the round in which the request came.
TEST_P(ReductionRounds, AHugeReductionStopsOnInterrupt) {
  Array big = sum(arange(0.0, 1e15, 1.0, DType::Float64));
  EXPECT_TRUE(arrayc_test::interrupted_after_first_launch(big));
  EXPECT_EQ(sum(arange(10)).item<int64_t>(), 45);  // the device goes on
}

ARRAYC_DEVICE_SUITE(ReductionRounds);

}  // namespace
