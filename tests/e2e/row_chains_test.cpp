// Row chains end to end (issue 29): softmax and layer-norm-like chains, where reductions along
// the last axis are read back broadcast, run as one kernel per row block (passes/row_chains.h).
// Every result is checked against the interpreter, for every float dtype, NaN and infinite rows,
// rows of length 1, empty arrays, views, and the variants that must not fuse.
#include <cmath>
#include <limits>

#include "support/data.h"
#include "support/devices.h"
#include "support/reference.h"

namespace {

using namespace arrayc;
using namespace arrayc_test;

class RowChains : public DeviceTest {};
ARRAYC_DEVICE_SUITE(RowChains);

Array softmax(const Array& x, int64_t axis = -1) {
  Array e = exp(x - max(x, {axis}, true));
  return e / sum(e, {axis}, true);
}

Array layer_norm(const Array& x) {
  Array d = x - mean(x, {-1}, true);
  Array var = mean(d * d, {-1}, true);
  return d / sqrt(var + full({}, 1e-5, x.dtype(), x.device()));
}

// Kernels launched to evaluate a.
int64_t launches(Array a) {
  return stats_delta([&] { a.eval(); }).kernel_launches;
}

TEST_P(RowChains, SoftmaxIsOneKernelAndMatches) {
  for (const Shape& s : std::vector<Shape>{{4, 4}, {33, 257}, {3, 5000}, {2, 3, 70}, {7}, {1, 1}}) {
    SCOPED_TRACE(shape_str(s));
    Array x = random_array(DType::Float32, s, 3, -8, 8);
    EXPECT_MATCHES_REFERENCE(softmax(x));
    EXPECT_EQ(launches(softmax(x)), 1);
  }
}

TEST_P(RowChains, EveryFloatDtype) {
  for (DType t : {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64}) {
    SCOPED_TRACE(dt(t));
    Array x = random_array(t, {9, 131}, 5, -6, 6);
    EXPECT_MATCHES_REFERENCE(softmax(x));
    EXPECT_MATCHES_REFERENCE(layer_norm(x));
    EXPECT_MATCHES_REFERENCE(x - max(x, {1}, true));
    EXPECT_EQ(launches(softmax(x)), 1);  // half sums, in float32 cast back, too
    EXPECT_EQ(launches(layer_norm(x)), 1);
  }
}

TEST_P(RowChains, LayerNormNestsTwoLevels) {
  Array x = random_array(DType::Float32, {40, 1000}, 11, -3, 5);
  EXPECT_MATCHES_REFERENCE(layer_norm(x));
  Stages st = inspect({layer_norm(x)});
  EXPECT_EQ(st.kernels.size(), 1u) << st.fused;
  EXPECT_NE(st.fused.find("row chain"), std::string::npos) << st.fused;
}

TEST_P(RowChains, NaNAndInfiniteRows) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  for (DType t : {DType::Float32, DType::Float64}) {
    SCOPED_TRACE(dt(t));
    // Rows: ordinary; a NaN; +inf; all -inf (max is -inf, so x - max is NaN); -inf and finite.
    Array x = make_array(t, {5, 4},
                         {1, 2, 3, 4, 1, nan, 3, 4, 1, inf, 3, 4, -inf, -inf, -inf, -inf, -inf, 0, -inf, 2});
    EXPECT_MATCHES_REFERENCE(softmax(x));
    EXPECT_MATCHES_REFERENCE(layer_norm(x));
    EXPECT_MATCHES_REFERENCE(x - max(x, {1}, true));
  }
}

TEST_P(RowChains, RowsOfLengthOneAndEmpty) {
  Array one = random_array(DType::Float32, {6, 1}, 2);
  EXPECT_MATCHES_REFERENCE(softmax(one));
  EXPECT_MATCHES_REFERENCE(layer_norm(one));
  Array no_rows = random_array(DType::Float32, {0, 5}, 2);
  EXPECT_MATCHES_REFERENCE(softmax(no_rows));
  EXPECT_EQ(softmax(no_rows).shape(), (Shape{0, 5}));
  Array empty_rows = random_array(DType::Float32, {3, 0}, 2);  // max has no identity: a sum
  Array y = empty_rows - sum(empty_rows, {1}, true);
  EXPECT_MATCHES_REFERENCE(y);
  EXPECT_EQ(y.shape(), (Shape{3, 0}));
  Array scalar_rows = random_array(DType::Float32, {4}, 2);
  EXPECT_MATCHES_REFERENCE(scalar_rows / sum(scalar_rows));
}

TEST_P(RowChains, NonContiguousInputs) {
  Array m = random_array(DType::Float32, {30, 48}, 8);
  EXPECT_MATCHES_REFERENCE(softmax(transpose(m)));
  EXPECT_MATCHES_REFERENCE(softmax(m[{Slice(0, 30, 2), Slice(1, 48, 3)}]));
  Array b = broadcast_to(random_array(DType::Float32, {1, 48}, 9), {5, 48});
  EXPECT_MATCHES_REFERENCE(softmax(b));
  EXPECT_MATCHES_REFERENCE(softmax(m * 2.0f + 1.0f));  // a computed row, computed once per pass
}

TEST_P(RowChains, OtherAxesAreNotFusedAndStayCorrect) {
  Array m = random_array(DType::Float32, {6, 6}, 4);
  Array y = softmax(m, 0);  // along columns: ordinary reductions
  Stages st = inspect({y});   // (before evaluating: then y is a buffer)
  EXPECT_EQ(st.fused.find("row chain"), std::string::npos) << st.fused;
  EXPECT_MATCHES_REFERENCE(y);
  // A row's max broadcast down the columns (numpy aligns the [6] with the last axis): read
  // across its rows, so materialized, with its reason.
  Array across = m - max(m, {1});
  std::string fused = inspect({across}).fused;
  EXPECT_NE(fused.find("not in a row chain: read across its rows"), std::string::npos) << fused;
  EXPECT_MATCHES_REFERENCE(across);
}

TEST_P(RowChains, LongRowsAndFewRowsStayApart) {
  // Rows past 65536 elements, and fewer than 256 rows of much work, are split reductions and a
  // parallel kernel instead (only the plan is checked: nothing is evaluated).
  Array long_rows = random_array(DType::Float32, {2, 70000}, 1);
  EXPECT_NE(inspect({softmax(long_rows)}).fused.find("not in a row chain: rows of 70000 > 65536"), std::string::npos);
  Array few = random_array(DType::Float32, {32, 60000}, 1);
  EXPECT_NE(inspect({softmax(few)}).fused.find("32 rows of 60000: too few to share out"), std::string::npos);
  Array small = random_array(DType::Float32, {8, 60000}, 1);
  EXPECT_EQ(inspect({softmax(small)}).kernels.size(), 1u);
}

TEST_P(RowChains, IntegerAndBoolChains) {
  Array i = random_array(DType::Int32, {7, 19}, 6, -50, 50);
  EXPECT_MATCHES_REFERENCE(i - max(i, {1}, true));
  EXPECT_MATCHES_REFERENCE(i * sum(i, {1}, true));
  Array b = i > 0;
  EXPECT_MATCHES_REFERENCE(logical_and(b, max(b, {1}, true)));
}

TEST_P(RowChains, SeveralOutputsAndARequestedReduction) {
  Array x = random_array(DType::Float32, {12, 300}, 12);
  Array s = softmax(x);
  Array ls = x - max(x, {1}, true) - log(sum(exp(x - max(x, {1}, true)), {1}, true));
  Array mx = max(x, {1});
  std::vector<Array> outs{s, ls, mx};
  eval(outs);
  EXPECT_MATCHES_REFERENCE(s);
  EXPECT_MATCHES_REFERENCE(ls);
  EXPECT_MATCHES_REFERENCE(mx);
}

// The GPU's register path (rows of up to 16 elements per thread of a block of at most 1024)
// and its edges: rows not a multiple of the 4-element vectors, rows whose starts are not
// 16-byte aligned (odd lengths, a view starting at column 1), the longest row that fits and the
// first that does not (the strided path), on every float dtype; a layer norm with a scale and a
// shift read along the row; NaN and infinities inside long rows.
TEST_P(RowChains, RowLengthsAroundTheRegisterPath) {
  for (const Shape& s : std::vector<Shape>{{5, 4096}, {3, 4095}, {3, 4097}, {4, 4094}, {3, 2},
                                           {2, 31}, {2, 33}, {2, 16384}, {2, 16385}, {2, 20000}}) {
    SCOPED_TRACE(shape_str(s));
    Array x = random_array(DType::Float32, s, 21, -8, 8);
    EXPECT_MATCHES_REFERENCE(softmax(x));
    EXPECT_MATCHES_REFERENCE(layer_norm(x));
    EXPECT_EQ(launches(softmax(x)), 1);
  }
  for (DType t : {DType::Float16, DType::BFloat16, DType::Float64}) {
    SCOPED_TRACE(dt(t));
    for (const Shape& s : std::vector<Shape>{{3, 4096}, {3, 1001}, {2, 16385}}) {
      Array x = random_array(t, s, 22, -6, 6);
      EXPECT_MATCHES_REFERENCE(softmax(x));
      EXPECT_MATCHES_REFERENCE(layer_norm(x));
    }
  }
  Array m = random_array(DType::Float32, {4, 4100}, 23, -5, 5);
  EXPECT_MATCHES_REFERENCE(softmax(m[{Slice(0, 4), Slice(1, 4097)}]));  // rows start 4 bytes in
  Array g = random_array(DType::Float32, {4096}, 24, -2, 2), b = random_array(DType::Float32, {4096}, 25, -1, 1);
  Array x = random_array(DType::Float32, {6, 4096}, 26, -3, 3);
  EXPECT_MATCHES_REFERENCE(layer_norm(x) * g + b);
  EXPECT_EQ(launches(layer_norm(x) * g + b), 1);
  std::vector<double> v(4 * 4096);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i % 97) / 13.0 - 3.0;
  v[100] = std::nan("");                                   // row 0: a NaN
  v[4096 + 4000] = std::numeric_limits<double>::infinity();  // row 1: +inf
  for (int i = 0; i < 4096; ++i) v[2 * 4096 + i] = -std::numeric_limits<double>::infinity();  // row 2
  Array special = make_array(DType::Float32, {4, 4096}, v);
  EXPECT_MATCHES_REFERENCE(softmax(special));
  EXPECT_MATCHES_REFERENCE(layer_norm(special));
}

TEST_P(RowChains, OffMaterializesEveryReduction) {
  Array x = random_array(DType::Float32, {8, 64}, 13);
  set_row_chain_fusion(false);
  Array y = softmax(x);
  int64_t n = launches(y);
  set_row_chain_fusion(true);
  EXPECT_EQ(n, 4);  // max; x - max, read by two kernels; sum; the division
  EXPECT_MATCHES_REFERENCE(softmax(x));
}

}  // namespace
