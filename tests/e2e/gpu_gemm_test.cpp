// The GPU's tiled matrix-product kernel (codegen/nvptx/gemm.h) with every built-in tile forced in turn
// (ARRAYC_GEMM_TILE), on the layouts that select different load paths: k-contiguous and
// outer-contiguous operands with 16-byte loads, strides that rule vector loads out, operands
// with no unit stride, batches (broadcast ones too), and shapes that leave partial tiles in m, n
// and k. GPU only: the CPU runs products through OpenBLAS (products_test.cpp covers both).
#include <cmath>
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

const std::pair<DType, std::vector<const char*>> kBuiltInTiles[] = {
    {DType::Float32, {"128x128x16/8x8", "128x64x16/8x4", "64x64x16/4x4", "32x32x32/2x2", "32x16x32/2x2"}},
    // float64: the tensor-core tiles (a (4 tm) x (8 tn) warp tile), with 2 to 4 cp.async stages
    // and over 48 KiB of shared memory (64x128x32/s4: 204 KiB), the same on FMAs (/simt), the
    // FMA tiles.
    {DType::Float64, {"64x64x16/8x4", "32x64x16/8x4", "32x32x16/8x4", "64x128x8/8x4/s2", "64x128x32/8x4/s4",
                      "128x128x16/8x8/s3", "128x64x16/16x4", "128x64x8/8x4/simt", "64x64x8/4x4", "32x32x16/2x2",
                      "32x32x32/2x2", "32x16x32/2x2"}}};

TEST_P(GemmTiles, EveryBuiltInTile) {
  for (const auto& [t, list] : kBuiltInTiles)
    for (const char* tile : list) {
      SCOPED_TRACE(tile);
      setenv("ARRAYC_GEMM_TILE", tile, 1);
      check_layouts(t, 200);
    }
}

// A reduction epilogue (sum, a mean squared error, max) on every built-in tile, partial edge
// tiles included (300 x 260), against the interpreter.
TEST_P(GemmTiles, ReductionEpilogueOnEveryBuiltInTile) {
  for (const auto& [t, list] : kBuiltInTiles) {
    Array x = random_array(t, {300, 200}, 90).eval(), w = random_array(t, {200, 260}, 91).eval();
    Array y = random_array(t, {300, 260}, 92).eval();
    for (const char* tile : list) {
      SCOPED_TRACE(tile);
      setenv("ARRAYC_GEMM_TILE", tile, 1);
      std::string names;
      for (const KernelStages& k : inspect({sum(dot(x, w))}, true).kernels) names += k.name + "\n";
      EXPECT_NE(names.find("_ep_sum"), std::string::npos) << names;
      EXPECT_MATCHES_REFERENCE(sum(dot(x, w)));
      EXPECT_MATCHES_REFERENCE(mean((dot(x, w) - y) * (dot(x, w) - y)));
      EXPECT_MATCHES_REFERENCE(max(dot(x, w)));
    }
  }
  unsetenv("ARRAYC_GEMM_TILE");
}

// float64 on Hopper's m16n8kK mma shapes (sm_90; older GPUs run the same tiles on m8n8k4):
// every layout, partial tiles (1, 7, 33, 1000 and other sizes that are no multiple of a tile),
// transposed views and batches. DMMA is float64 arithmetic rounded to nearest, summed in another
// order than the reference's: the check allows each output the reference's bound for a sum of k
// terms, 2 eps sqrt(k) (sqrt(sum t^2) + |sum t|) (tests/support/reference.h).
TEST_P(GemmTiles, Float64HopperShapes) {
  for (const char* tile : {"64x64x16/8x4/m16k16", "64x64x16/8x4/m16k8/s4", "64x64x16/8x4/m16k4/s2",
                           "128x64x16/16x4/m16k8", "32x64x32/8x4/m16k16/s3", "64x128x16/8x8/m16k4"}) {
    SCOPED_TRACE(tile);
    setenv("ARRAYC_GEMM_TILE", tile, 1);
    check_layouts(DType::Float64, 300);
    EXPECT_MATCHES_REFERENCE(dot(random_array(DType::Float64, {1000, 40}, 320), random_array(DType::Float64, {40, 1000}, 321)));
    EXPECT_MATCHES_REFERENCE(dot(random_array(DType::Float64, {7, 1000}, 322), random_array(DType::Float64, {1000, 33}, 323)));
    Array x = random_array(DType::Float64, {2, 33, 70}, 324);
    EXPECT_MATCHES_REFERENCE(matmul(transpose(x, {0, 2, 1}), x));  // rank-3 batched, a transposed view
  }
}

TEST_P(GemmTiles, BadTileIsAnError) {
  Array a = random_array(DType::Float32, {8, 8}, 1);
  setenv("ARRAYC_GEMM_TILE", "128x128", 1);
  EXPECT_ARRAYC_ERROR(dot(a, a).eval(), "ARRAYC_GEMM_TILE=128x128: expected BMxBNxBK/TMxTN[/sS][/simt]");
  setenv("ARRAYC_GEMM_TILE", "128x128x8/2x2", 1);
  EXPECT_ARRAYC_ERROR(dot(a, a).eval(), "ARRAYC_GEMM_TILE=128x128x8/2x2 cannot be used for float32: it gives 4096 threads");
  unsetenv("ARRAYC_GEMM_TILE");
  EXPECT_MATCHES_REFERENCE(dot(a, a));  // and the process goes on
}

// set_matmul_precision(High): float32 products on the TF32 tensor cores, every layout and tile;
// each result within TF32's bound, |c - exact| <= (2^-10 + k 2^-23) (|a| @ |b|) (each operand
// rounded to 11 significant bits, float32 accumulation), the exact product and the bound
// computed in float64 on the CPU. The default stays exact float32.
class Tf32Products : public GemmTiles {
 protected:
  void TearDown() override {
    set_matmul_precision(MatmulPrecision::Highest);
    GemmTiles::TearDown();
  }

  // Whether one of a's kernels is a TF32 product kernel.
  static bool on_tf32(const Array& a) {
    for (const KernelStages& k : inspect({a}, true).kernels)
      if (k.kernel.find("_tf32_") != std::string::npos) return true;
    return false;
  }

  // The names of the kernels that compute a, one a line.
  static std::string kernels_of(const Array& a) {
    std::string names;
    for (const KernelStages& k : inspect({a}, true).kernels) names += k.name + "\n";
    return names;
  }

  static void expect_within_tf32(const Array& a, const Array& b, const Array& got) {
    Array a64 = cast(a, DType::Float64).to(cpu()), b64 = cast(b, DType::Float64).to(cpu());
    const int64_t k = a.shape().back();
    Array exact = matmul(a64, b64), bound = matmul(abs(a64), abs(b64)) * (std::ldexp(1.0, -10) + k * std::ldexp(1.0, -23));
    Array excess = abs(cast(got, DType::Float64).to(cpu()) - exact) - bound;
    EXPECT_LE(max(excess).item<double>(), 0.0) << "k = " << k;
  }

  static void check(uint64_t seed) {
    const int64_t shapes[][3] = {{1, 1, 1}, {5, 7, 3}, {33, 17, 65}, {130, 67, 200}, {257, 129, 33}, {300, 520, 260}};
    for (const auto& s : shapes) {
      SCOPED_TRACE("m, k, n = " + std::to_string(s[0]) + ", " + std::to_string(s[1]) + ", " + std::to_string(s[2]));
      Array a = random_array(DType::Float32, {s[0], s[1]}, seed), b = random_array(DType::Float32, {s[1], s[2]}, seed + 1);
      Array at = transpose(random_array(DType::Float32, {s[1], s[0]}, seed + 2));
      Array bt = transpose(random_array(DType::Float32, {s[2], s[1]}, seed + 3));
      expect_within_tf32(a, b, dot(a, b));
      expect_within_tf32(at, bt, dot(at, bt));
      expect_within_tf32(a, bt, dot(a, bt));
    }
    Array x = random_array(DType::Float32, {3, 40, 24}, seed + 4), y = random_array(DType::Float32, {3, 24, 36}, seed + 5);
    Array xy = matmul(x, y);
    for (int64_t i = 0; i < 3; ++i) expect_within_tf32(x[i], y[i], xy[i]);
  }
};
INSTANTIATE_TEST_SUITE_P(Gpu, Tf32Products, ::testing::Values(Device{Device::Kind::GPU, 0}), device_name);

TEST_P(Tf32Products, DefaultIsExactFloat32) {
  // 1 + 2^-15 is a float32 but not a TF32 number (it rounds to 1): 64 of them sum to 64 + 2^-9
  // exactly in float32, and to 64 on the TF32 tensor cores.
  EXPECT_EQ(matmul_precision(), MatmulPrecision::Highest);
  Array a = full({1024, 64}, 1.0 + std::ldexp(1.0, -15)), b = ones({64, 1024});
  EXPECT_EQ(max(abs(dot(a, b) - (64.0 + std::ldexp(1.0, -9)))).item<float>(), 0.0f);
  set_matmul_precision(MatmulPrecision::High);
  EXPECT_EQ(max(abs(dot(a, b) - 64.0)).item<float>(), 0.0f);
  EXPECT_TRUE(on_tf32(dot(a, b)));
  // The setting is part of a jit function's key: each precision keeps its own program.
  set_matmul_precision(MatmulPrecision::Highest);
  auto f = jit([](const Array& a, const Array& b) { return dot(a, b); });
  EXPECT_EQ(max(abs(f(a, b) - (64.0 + std::ldexp(1.0, -9)))).item<float>(), 0.0f);
  set_matmul_precision(MatmulPrecision::High);
  EXPECT_EQ(max(abs(f(a, b) - 64.0)).item<float>(), 0.0f);
  set_matmul_precision(MatmulPrecision::Highest);
  EXPECT_EQ(max(abs(f(a, b) - (64.0 + std::ldexp(1.0, -9)))).item<float>(), 0.0f);
}

TEST_P(Tf32Products, WithinTheTf32Bound) {
  set_matmul_precision(MatmulPrecision::High);
  check(500);
  for (const char* tile : {"128x128x16/16x8", "64x64x16/8x4/s2", "32x32x16/8x4/s4", "128x128x32/16x8/s4", "64x64x8/8x4",
                           "128x128x16/8x8", "128x256x16/16x8", "256x128x32/16x8", "128x64x16/16x4"}) {
    SCOPED_TRACE(tile);
    setenv("ARRAYC_GEMM_TILE", tile, 1);
    check(600);
  }
  unsetenv("ARRAYC_GEMM_TILE");
  // An epilogue on the TF32 register tiles: relu(x @ w + b) (enough tiles for the tensor cores).
  Array x = random_array(DType::Float32, {600, 520}, 700), w = random_array(DType::Float32, {520, 520}, 701);
  Array b = random_array(DType::Float32, {520}, 702);
  Array fused = maximum(dot(x, w) + b, 0.0).eval();
  EXPECT_TRUE(on_tf32(maximum(dot(x, w) + b, 0.0)));
  Array exact = maximum(dot(cast(x, DType::Float64).to(cpu()), cast(w, DType::Float64).to(cpu())) +
                            cast(b, DType::Float64).to(cpu()), 0.0);
  Array bound = matmul(abs(cast(x, DType::Float64).to(cpu())), abs(cast(w, DType::Float64).to(cpu()))) *
                (std::ldexp(1.0, -10) + 520 * std::ldexp(1.0, -23)) + 1e-6 * abs(exact);
  EXPECT_LE(max(abs(cast(fused, DType::Float64).to(cpu()) - exact) - bound).item<double>(), 0.0);
}

// TF32 on Hopper's warpgroup kernel (sm_90): operands both along k go to wgmma as they are; x @ w
// (B along n), x.T @ w.T (A along m) and x.T @ w (both) copy such operands transposed first where
// each copy is read by at least 512 rows (columns) of the product. The TMA rounds the operands to TF32 as it loads them, as
// cvt.rna does on mma.sync: 1 + 3 2^-12 becomes 1 + 2^-10 (truncated, it would be 1).
TEST_P(Tf32Products, WarpgroupKernel) {
  set_matmul_precision(MatmulPrecision::High);
  Array r = full({1024, 64}, 1.0 + 3 * std::ldexp(1.0, -12)), along_k = transpose(ones({1024, 64})), along_n = ones({64, 1024});
  const std::string probe = kernels_of(dot(r, along_k));
  if (probe.find("_wg") == std::string::npos) GTEST_SKIP() << "not an sm_90 GPU: " << probe;
  const float rounded = 64.0f + 64.0f * std::ldexp(1.0f, -10);
  EXPECT_EQ(max(abs(dot(r, along_k) - rounded)).item<float>(), 0.0f);
  EXPECT_EQ(max(abs(dot(r, along_n) - rounded)).item<float>(), 0.0f);
  const std::string copied = kernels_of(dot(r, along_n));
  EXPECT_NE(copied.find("transpose_32bit"), std::string::npos) << copied;
  EXPECT_NE(copied.find("_ak4_bk4_tf32_s4_wg_tma"), std::string::npos) << copied;
  const int64_t shapes[][3] = {{600, 520, 700}, {8, 8, 8}, {72, 40, 136}, {530, 1000, 72}, {520, 36, 264}, {1030, 12, 600}};
  for (const char* tile : {"", "128x256x32/4x32/wg", "64x64x32/4x8/s3/wg", "128x128x32/4x16/wg/c2", "256x128x32/4x16/s3/wg/c1",
                           "128x192x32/4x24/s5/wg"}) {
    SCOPED_TRACE(tile);
    if (*tile) setenv("ARRAYC_GEMM_TILE", tile, 1);
    for (const auto& s : shapes) {
      SCOPED_TRACE("m, k, n = " + std::to_string(s[0]) + ", " + std::to_string(s[1]) + ", " + std::to_string(s[2]));
      Array a = random_array(DType::Float32, {s[0], s[1]}, 800), b = random_array(DType::Float32, {s[1], s[2]}, 801);
      Array bt = transpose(random_array(DType::Float32, {s[2], s[1]}, 802));
      Array at = transpose(random_array(DType::Float32, {s[1], s[0]}, 803));
      EXPECT_NE(kernels_of(dot(a, bt)).find("_wg"), std::string::npos);
      expect_within_tf32(a, bt, dot(a, bt));
      // A forced /wg tile is refused where no operand is copied (tests/unit: gemm_half_test.cpp).
      if (!*tile || s[0] >= 512) expect_within_tf32(a, b, dot(a, b));
      if (!*tile || s[2] >= 512) expect_within_tf32(at, bt, dot(at, bt));
      if (!*tile || (s[0] >= 512 && s[2] >= 512)) expect_within_tf32(at, b, dot(at, b));  // both copied
      if (s[0] >= 512) EXPECT_NE(kernels_of(dot(a, b)).find("transpose_32bit"), std::string::npos);
      if (s[2] >= 512) EXPECT_NE(kernels_of(dot(at, bt)).find("transpose_32bit"), std::string::npos);
      if (s[0] >= 512 && s[2] >= 512) EXPECT_NE(kernels_of(dot(at, b)).find("_wg"), std::string::npos);
    }
    // Batches: one B for every product (copied once), and a B each.
    Array x = random_array(DType::Float32, {3, 600, 40}, 804), w = random_array(DType::Float32, {40, 72}, 805);
    Array y = random_array(DType::Float32, {3, 40, 64}, 806);
    EXPECT_NE(kernels_of(matmul(x, w)).find("transpose_32bit"), std::string::npos);
    Array xw = matmul(x, w), xy = matmul(x, y);
    for (int64_t i = 0; i < 3; ++i) expect_within_tf32(x[i], w, xw[i]), expect_within_tf32(x[i], y[i], xy[i]);
  }
  unsetenv("ARRAYC_GEMM_TILE");
  // An epilogue on the warpgroup kernel's tiles, B copied first: relu(x @ w + b).
  Array x = random_array(DType::Float32, {600, 520}, 810), w = random_array(DType::Float32, {520, 264}, 811);
  Array b = random_array(DType::Float32, {264}, 812);
  Array fused = maximum(dot(x, w) + b, 0.0);
  const std::string k = kernels_of(fused);
  EXPECT_NE(k.find("_wg_tma"), std::string::npos) << k;
  EXPECT_NE(k.find("_ep_"), std::string::npos) << k;  // the bias and relu inside the product kernel
  Array x64 = cast(x, DType::Float64).to(cpu()), w64 = cast(w, DType::Float64).to(cpu());
  Array exact = maximum(dot(x64, w64) + cast(b, DType::Float64).to(cpu()), 0.0);
  Array bound = matmul(abs(x64), abs(w64)) * (std::ldexp(1.0, -10) + 520 * std::ldexp(1.0, -23)) + 1e-6 * abs(exact);
  EXPECT_LE(max(abs(cast(fused, DType::Float64).to(cpu()) - exact) - bound).item<double>(), 0.0);
  // A wide product: its tiles walked in groups of 16 rows (gemm_tile_group; 18 rows of tiles).
  Array wa = random_array(DType::Float32, {2200, 8}, 813), wb = transpose(random_array(DType::Float32, {6144, 8}, 814));
  EXPECT_NE(kernels_of(dot(wa, wb)).find("_128x256x32_"), std::string::npos) << kernels_of(dot(wa, wb));
  expect_within_tf32(wa, wb, dot(wa, wb));
}

// A reduction epilogue on the warpgroup kernel: its consumer warpgroups fold the tiles and meet at
// a named barrier, without the producer; in single blocks (persistent) and in clusters of two.
// The products are exact (each element 64 + 64 2^-10 on TF32, 64 in float16), and so are their
// sums, which accumulate in double: any lost, doubled or misplaced tile shows.
TEST_P(Tf32Products, ReductionEpilogueOnTheWarpgroupKernel) {
  set_matmul_precision(MatmulPrecision::High);
  Array r = full({1024, 64}, 1.0 + 3 * std::ldexp(1.0, -12)), along_k = transpose(ones({1024, 64}));
  const std::string probe = kernels_of(sum(dot(r, along_k)));
  if (probe.find("_wg") == std::string::npos) GTEST_SKIP() << "not an sm_90 GPU: " << probe;
  EXPECT_NE(probe.find("_wg_tma_ep_sum"), std::string::npos) << probe;
  Array h = cast(ones({1024, 64}), DType::Float16).eval(), hk = cast(ones({64, 1024}), DType::Float16).eval();
  for (const char* tile : {"", "128x256x32/4x32/wg/c1", "128x128x32/4x16/wg/c2", "64x64x32/4x8/s3/wg"}) {
    SCOPED_TRACE(tile);
    if (*tile) setenv("ARRAYC_GEMM_TILE", tile, 1);
    EXPECT_EQ(sum(dot(r, along_k)).item<float>(), 1024.0f * 1024.0f * (64.0f + 64.0f * std::ldexp(1.0f, -10)));
    EXPECT_EQ(mean(dot(r, along_k)).item<float>(), 64.0f + 64.0f * std::ldexp(1.0f, -10));
    EXPECT_EQ(min(dot(r, along_k) - 64.0).item<float>(), 64.0f * std::ldexp(1.0f, -10));
    unsetenv("ARRAYC_GEMM_TILE");
  }
  for (const char* tile : {"", "128x256x64/4x32/wg/c1", "128x128x64/4x16/wg/c2", "128x128x64/4x16/wg/cp"}) {
    SCOPED_TRACE(tile);
    if (*tile) setenv("ARRAYC_GEMM_TILE", tile, 1);
    Array total = sum(cast(dot(h, hk), DType::Float32));  // 2^26: past float16's range
    const std::string k = kernels_of(total);
    EXPECT_NE(k.find("_wg"), std::string::npos) << k;
    EXPECT_NE(k.find("_ep_"), std::string::npos) << k;
    EXPECT_EQ(total.item<float>(), 64.0f * 1024.0f * 1024.0f);
    unsetenv("ARRAYC_GEMM_TILE");
  }
  // Random operands against the interpreter (small enough that float16 squares stay finite).
  Array x = random_array(DType::Float16, {384, 192}, 820, -0.5, 0.5), w = random_array(DType::Float16, {192, 320}, 821, -0.5, 0.5);
  Array y = random_array(DType::Float16, {384, 320}, 822);
  EXPECT_MATCHES_REFERENCE(mean((dot(x, w) - y) * (dot(x, w) - y)));
  EXPECT_MATCHES_REFERENCE(max(dot(x, w)));
  set_matmul_precision(MatmulPrecision::Highest);
}

}  // namespace
