// The GPU's tiled matrix-product kernel (codegen/nvptx/gemm.h) with every built-in tile forced in turn
// (ARRAYC_GEMM_TILE), on the layouts that select different load paths: k-contiguous and
// outer-contiguous operands with 16-byte loads, strides that rule vector loads out, operands
// with no unit stride, batches (broadcast ones too), and shapes that leave partial tiles in m, n
// and k. GPU only: the CPU runs products through OpenBLAS (products_test.cpp covers both).
#include <cstdlib>

#include "support/data.h"
#include "support/devices.h"
#include "support/errors.h"
#include "support/reference.h"

namespace {

using namespace arrayc;
using namespace arrayc_test;

class GemmTiles : public DeviceTest {
 protected:
  void TearDown() override {
    unsetenv("ARRAYC_GEMM_TILE");
    DeviceTest::TearDown();
  }

  void check_layouts(DType t, uint64_t seed) {
    const int64_t shapes[][3] = {{1, 1, 1}, {5, 7, 3}, {33, 17, 65}, {130, 67, 200}, {257, 129, 33}, {64, 0, 16}};
    for (const auto& s : shapes) {
      const int64_t m = s[0], k = s[1], n = s[2];
      SCOPED_TRACE(std::string(dtype_name(t)) + " m, k, n = " + std::to_string(m) + ", " + std::to_string(k) + ", " +
                   std::to_string(n));
      Array a = random_array(t, {m, k}, seed), b = random_array(t, {k, n}, seed + 1);
      Array at = random_array(t, {k, m}, seed + 2), bt = random_array(t, {n, k}, seed + 3);
      EXPECT_MATCHES_REFERENCE(dot(a, b));                        // A along k, B along n
      EXPECT_MATCHES_REFERENCE(dot(transpose(at), transpose(bt)));  // A along m, B along k
      EXPECT_MATCHES_REFERENCE(dot(a, transpose(bt)));             // W5's layout
    }
    // No unit stride: transpose(x, {2, 0, 1}) is [3, 4, 5] with strides (1, 15, 3), a batch of
    // three [4, 5] matrices with strides (15, 3).
    Array x = random_array(t, {4, 5, 3}, seed + 4);
    Array none = transpose(x, {2, 0, 1}).eval();  // evaluated: contiguous [3, 4, 5]
    EXPECT_MATCHES_REFERENCE(matmul(transpose(x, {2, 0, 1}), random_array(t, {3, 5, 6}, seed + 5)));
    EXPECT_MATCHES_REFERENCE(matmul(none, transpose(random_array(t, {6, 5}, seed + 6))));
    // Batches, one of them broadcast (batch stride 0).
    EXPECT_MATCHES_REFERENCE(matmul(random_array(t, {3, 40, 24}, seed + 7), random_array(t, {3, 24, 36}, seed + 8)));
    EXPECT_MATCHES_REFERENCE(matmul(random_array(t, {40, 24}, seed + 9), random_array(t, {5, 24, 36}, seed + 10)));
    // Few columns (the narrow tile), and one column (matrix-vector).
    EXPECT_MATCHES_REFERENCE(dot(random_array(t, {300, 96}, seed + 11), random_array(t, {96, 10}, seed + 12)));
    EXPECT_MATCHES_REFERENCE(dot(random_array(t, {300, 96}, seed + 13), random_array(t, {96}, seed + 14)));
  }
};
INSTANTIATE_TEST_SUITE_P(Gpu, GemmTiles, ::testing::Values(Device{Device::Kind::GPU, 0}), device_name);

TEST_P(GemmTiles, ChosenTiles) {
  for (DType t : {DType::Float32, DType::Float64}) check_layouts(t, 100);
}

TEST_P(GemmTiles, EveryBuiltInTile) {
  const std::pair<DType, std::vector<const char*>> tiles[] = {
      {DType::Float32, {"128x128x16/8x8", "128x64x16/8x4", "64x64x16/4x4", "32x32x32/2x2", "32x16x32/2x2"}},
      // float64: the tensor-core tiles (8x4 per thread), the same on FMAs (/simt), the FMA tiles.
      {DType::Float64, {"64x128x8/8x4", "128x64x8/8x4", "64x64x8/8x4", "32x32x16/8x4", "128x64x8/8x4/simt", "64x64x8/4x4",
                        "32x32x16/2x2", "32x32x32/2x2", "32x16x32/2x2"}}};
  for (const auto& [t, list] : tiles)
    for (const char* tile : list) {
      SCOPED_TRACE(tile);
      setenv("ARRAYC_GEMM_TILE", tile, 1);
      check_layouts(t, 200);
    }
}

TEST_P(GemmTiles, BadTileIsAnError) {
  Array a = random_array(DType::Float32, {8, 8}, 1);
  setenv("ARRAYC_GEMM_TILE", "128x128", 1);
  EXPECT_ARRAYC_ERROR(dot(a, a).eval(), "ARRAYC_GEMM_TILE=128x128: expected BMxBNxBK/TMxTN, e.g. 128x128x8/8x8");
  setenv("ARRAYC_GEMM_TILE", "128x128x8/2x2", 1);
  EXPECT_ARRAYC_ERROR(dot(a, a).eval(), "ARRAYC_GEMM_TILE=128x128x8/2x2 cannot be used for float32: it gives 4096 threads");
  unsetenv("ARRAYC_GEMM_TILE");
  EXPECT_MATCHES_REFERENCE(dot(a, a));  // and the process goes on
}

}  // namespace
