// Bools made signed integers, then floats (issue 26), on every device: expm1 of a transposed
// `bool - 1` gave expm1(1) in one element on an H100 (LLVM 19's NVPTX backend lowers the
// optimizer's signed bool-to-float conversion as +1; codegen/nvptx/bool_to_float.h). Generated
// cases: shapes with odd extents and views (transposed, sliced, broadcast), every signed integer
// type in between, every float type out, several ops that keep the sign.
#include <string>
#include <vector>

#include "support/data.h"
#include "support/devices.h"
#include "support/reference.h"

namespace {

using namespace arrayc;
using namespace arrayc_test;

class BoolToFloat : public DeviceTest {};
ARRAYC_DEVICE_SUITE(BoolToFloat);

TEST_P(BoolToFloat, SignedBoolsKeepTheirSignInEveryFloat) {
  const Shape shapes[] = {{7, 5}, {65, 3}, {2, 3, 9}};
  uint64_t seed = 100;
  for (const Shape& s : shapes) {
    Array b = random_array(DType::Bool, s, seed++).eval();
    std::vector<int64_t> perm;
    for (size_t d = s.size(); d-- > 0;) perm.push_back(static_cast<int64_t>(d));
    const Array views[] = {transpose(b, perm), b, b[{ellipsis, Slice(1, std::nullopt, 2)}]};
    for (const Array& v : views)
      for (DType it : {DType::Int8, DType::Int32, DType::Int64})
        for (DType ft : {DType::Float16, DType::Float32, DType::Float64}) {
          SCOPED_TRACE(shape_str(v.shape()) + " " + dtype_name(it) + " -> " + dtype_name(ft));
          Array i = cast(v, it);
          Array minus = i - full({}, 1, it);  // 0 or -1
          EXPECT_MATCHES_REFERENCE(expm1(cast(minus, ft)));
          EXPECT_MATCHES_REFERENCE(cast(-i, ft) * full({}, 2.5, ft));
          EXPECT_MATCHES_REFERENCE(exp(cast(i * full({}, -3, it), ft)));
        }
  }
  // The tester's program: expm1 of a transposed bool - 1 (int64, then float64 by expm1).
  Array b = random_array(DType::Bool, {9, 14}, 7).eval();
  Array y = expm1(transpose(b - 1));
  EXPECT_EQ(y.dtype(), DType::Float64);
  EXPECT_MATCHES_REFERENCE(y);
}

}  // namespace
