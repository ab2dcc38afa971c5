// float16 and bfloat16 matrix products on a GPU (issue 29): the product kernel reads the 16-bit
// operands as they are and, on sm_80+, multiplies them on the tensor cores (mma.sync m16n8k16,
// on sm_90 wgmma m64nNk16 (below); float32 accumulators), rounding each result once to the
// operands' dtype. Each result is checked
// against the exact product (float64 on the host) with the bound of docs/cuda.md,
//   |c - exact| <= u |exact| + 1.01 k 2^-23 (|a| @ |b|) + s
// (u = 2^-11 for float16, 2^-8 for bfloat16: the final rounding; k 2^-23: float32 accumulation of
// exact products in any order, even truncating; s: half the smallest subnormal), and against
// the reference interpreter (numpy's rule: float32 products and sum in k order, one rounding),
// which is within the same bound, so within twice it of the GPU. NaN and infinities must match
// the reference exactly. GPU only: on the CPU these products run through OpenBLAS's sgemm
// (products_test.cpp).
#include <array>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "support/data.h"
#include "support/devices.h"
#include "support/reference.h"

namespace {

using namespace arrayc;
using namespace arrayc_test;

class HalfProducts : public DeviceTest {
 protected:
  void TearDown() override {
    unsetenv("ARRAYC_GEMM_TILE");
    unsetenv("ARRAYC_GEMM_GROUP");
    DeviceTest::TearDown();
  }

  // The names of the product kernels that computing `a` runs.
  static std::string kernels_of(const Array& a) {
    std::string names;
    for (const KernelStages& k : inspect({a}, true).kernels) names += k.kernel.substr(0, k.kernel.find('\n')) + "\n";
    return names;
  }

  static double unit(DType t) { return t == DType::Float16 ? std::ldexp(1.0, -11) : std::ldexp(1.0, -8); }
  static double tiny(DType t) { return t == DType::Float16 ? std::ldexp(1.0, -25) : std::ldexp(1.0, -134); }

  // got = a @ b (batched over got's first dim when it has three; a or b may have two dims then,
  // broadcast); `slack` multiplies the bound for the comparison with the reference.
  static void expect_within_bound(const Array& a, const Array& b, const Array& got) {
    const DType t = got.dtype();
    HostArray want = reference_of(got.node());
    HostArray av = values_of(a), bv = values_of(b), gv = values_of(got);
    const Shape& s = got.shape();
    const size_t r = s.size();
    const int64_t batch = r == 3 ? s[0] : 1, m = s[r - 2], n = s[r - 1], k = a.shape().back();
    const bool a3 = a.shape().size() == 3, b3 = b.shape().size() == 3;
    int bad = 0;
    for (int64_t p = 0; p < batch; ++p)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double exact = 0, mag = 0;
          for (int64_t l = 0; l < k; ++l) {
            double x = av.f[static_cast<size_t>(((a3 ? p : 0) * m + i) * k + l)];
            double y = bv.f[static_cast<size_t>(((b3 ? p : 0) * k + l) * n + j)];
            exact += x * y;
            mag += std::fabs(x * y);
          }
          const size_t o = static_cast<size_t>((p * m + i) * n + j);
          const double c = gv.f[o], ref = want.f[o];
          const double bound = unit(t) * std::fabs(exact) + 1.01 * k * std::ldexp(1.0, -23) * mag + tiny(t);
          bool ok = std::fabs(c - exact) <= bound && std::fabs(c - ref) <= 2 * bound;
          if (std::isnan(ref) || std::isinf(ref)) ok = std::isnan(ref) ? std::isnan(c) : c == ref;
          if (!ok && bad++ < 5)
            ADD_FAILURE() << dtype_name(t) << " [" << p << ", " << i << ", " << j << "] of " << batch << "x" << m << "x"
                          << n << " (k = " << k << "): got " << c << ", reference " << ref << ", exact " << exact
                          << ", bound " << bound;
        }
    EXPECT_EQ(bad, 0);
  }

  // Every layout of the product kernel (A along k or m, B along n or k) for each m, k, n of
  // `shapes`; batches of `batch` (one broadcast) and x @ x.T of `gram`. `kernel`: a part of the
  // name of each layout's product kernel.
  using Sizes = std::vector<std::array<int64_t, 3>>;
  static void check_products(DType t, uint64_t seed, const Sizes& shapes, std::array<int64_t, 3> batch,
                             std::array<int64_t, 2> gram, const std::string& kernel = "") {
    for (const auto& [m, k, n] : shapes) {
      SCOPED_TRACE(std::string(dtype_name(t)) + " m, k, n = " + std::to_string(m) + ", " + std::to_string(k) + ", " +
                   std::to_string(n));
      Array a = random_array(t, {m, k}, seed), b = random_array(t, {k, n}, seed + 1);
      Array at = transpose(random_array(t, {k, m}, seed + 2)), bt = transpose(random_array(t, {n, k}, seed + 3));
      for (const auto& [x, y] : {std::pair{a, b}, std::pair{at, bt}, std::pair{a, bt}, std::pair{at, b}}) {
        if (!kernel.empty()) EXPECT_NE(kernels_of(dot(x, y)).find(kernel), std::string::npos) << kernels_of(dot(x, y));
        expect_within_bound(x, y, dot(x, y));
      }
    }
    const auto [m, k, n] = batch;
    Array x = random_array(t, {3, m, k}, seed + 4), y = random_array(t, {3, k, n}, seed + 5);
    expect_within_bound(x, y, matmul(x, y));
    Array w = random_array(t, {m, k}, seed + 6), z = random_array(t, {5, k, n}, seed + 7);
    expect_within_bound(w, z, matmul(w, z));
    Array g = random_array(t, {gram[0], gram[1]}, seed + 8);
    expect_within_bound(g, transpose(g), dot(g, transpose(g)));
  }

  // Shapes with partial tiles in every dim and odd k, and a single column.
  static void check_layouts(DType t, uint64_t seed) {
    check_products(t, seed, {{1, 1, 1}, {7, 7, 7}, {16, 16, 16}, {33, 17, 65}, {257, 129, 33}, {130, 67, 200}}, {40, 24, 36},
                   {64, 33});
    Array c = random_array(t, {300, 96}, seed + 9), v = random_array(t, {96, 1}, seed + 10);
    expect_within_bound(c, v, dot(c, v));
  }
};
INSTANTIATE_TEST_SUITE_P(Gpu, HalfProducts, ::testing::Values(Device{Device::Kind::GPU, 0}), device_name);

TEST_P(HalfProducts, OnTheTensorCoresWithinTheBound) {
  for (DType t : {DType::Float16, DType::BFloat16}) {
    check_layouts(t, 100);
    // The default path: the 16-bit operands read as they are (no widening kernels), on the
    // tensor cores; x @ x.T too (the general kernel, both triangles).
    Array a = random_array(t, {300, 200}, 1), b = random_array(t, {200, 100}, 2);
    std::string k = kernels_of(dot(a, b));
    EXPECT_NE(k.find("kernel gemm_" + std::string(dtype_name(t)) + "_float32_"), std::string::npos) << k;
    EXPECT_NE(k.find("_mma_s"), std::string::npos) << k;
    EXPECT_EQ(inspect({dot(a, b)}, true).kernels.size(), 1u) << k;
    EXPECT_EQ(kernels_of(dot(a, transpose(a))).find("_gram"), std::string::npos);
  }
}

TEST_P(HalfProducts, EveryTile) {
  // The tensor-core tiles (a (4 tm) x (8 tn) warp tile, tn even) with 2 to 5 stages, and the
  // FMA kernel that widens each element as it loads it (GPUs before sm_80; /simt).
  for (const char* tile : {"256x128x32/16x8", "128x64x32/8x4", "64x64x32/8x4", "128x128x64/16x8/s3", "64x64x16/8x4/s2",
                           "128x128x32/8x8/s5", "128x128x16/8x8/simt", "64x64x16/4x4", "32x16x32/2x2"}) {
    SCOPED_TRACE(tile);
    setenv("ARRAYC_GEMM_TILE", tile, 1);
    for (DType t : {DType::Float16, DType::BFloat16}) check_layouts(t, 200);
  }
}

// Hopper's warpgroup kernel (wgmma, sm_90; its stages loaded by TMA or by cp.async): every
// layout whose unit-stride dims take 16-byte runs (A along k or m, B along n or k), partial tiles
// in m, n and k, k of 8 and of 1000, batches (one broadcast) and x @ x.T, with the default tiles
// and forced ones (one to four warpgroups, 64 to 256 columns, 3 to 5 stages, clusters or not).
TEST_P(HalfProducts, WarpgroupKernel) {
  const std::string probe = kernels_of(dot(random_array(DType::Float16, {64, 64}, 1), random_array(DType::Float16, {64, 64}, 2)));
  if (probe.find("_wg") == std::string::npos) GTEST_SKIP() << "not an sm_90 GPU: " << probe;
  // TMA loads and a producer warpgroup (with tensor maps: CUDA 12+) in clusters of two blocks
  // (an odd number of tile rows leaves a pair's second tile past the end) or single (/c1), or
  // cp.async (/cp).
  for (const char* tile : {"", "128x256x64/4x32/wg", "128x128x64/4x16/s3/wg", "64x64x64/4x8/s5/wg", "256x128x64/4x16/s3/wg",
                           "64x256x64/4x32/wg", "128x192x64/4x24/wg", "128x256x64/4x32/wg/c1", "64x64x64/4x8/s3/wg/c1",
                           "128x256x64/4x32/wg/c2", "64x64x64/4x8/s3/wg/c2", "256x128x64/4x16/s3/wg/c2",
                           "128x256x64/4x32/s4/wg/cp", "64x64x64/4x8/s3/wg/cp", "256x128x64/4x16/wg/cp"}) {
    SCOPED_TRACE(tile);
    if (*tile) setenv("ARRAYC_GEMM_TILE", tile, 1);
    for (DType t : {DType::Float16, DType::BFloat16}) {
      check_products(t, 400, {{8, 8, 8}, {1, 8, 8}, {72, 40, 136}, {136, 200, 264}, {264, 72, 320}, {64, 1000, 72}},
                     {48, 40, 56}, {72, 40}, "_wg");
      if (*tile) continue;
      // Operands a tensor map does not describe (rows that overlap: a broadcast row) take the
      // cp.async kernel; an empty k, whichever kernel takes it, gives zeros.
      Array row = broadcast_to(random_array(t, {1, 40}, 450), {72, 40}), w = random_array(t, {40, 56}, 451);
      expect_within_bound(row, w, dot(row, w));
      Array e = random_array(t, {16, 0}, 452), f = random_array(t, {0, 24}, 453);
      expect_within_bound(e, f, dot(e, f));
    }
  }
}

// The TMA kernel walks a wide product's tiles in groups of rows (gemm_tile_group): every tile
// computed once, in single blocks and in clusters (units of two rows), with partial groups at
// the end, in batches (a group never spans two products) and with B along k. Forced groups
// (ARRAYC_GEMM_GROUP) of 3 units on 1000 rows (8 rows of 128: groups of 3, 3, 2; 4 pairs: 3, 1),
// and the rule's own choice on a wide product (18 rows of 128x256 tiles: 16, then 2).
TEST_P(HalfProducts, TileGroupsCoverEveryTile) {
  const std::string probe = kernels_of(dot(random_array(DType::Float16, {64, 64}, 1), random_array(DType::Float16, {64, 64}, 2)));
  if (probe.find("_wg") == std::string::npos) GTEST_SKIP() << "not an sm_90 GPU: " << probe;
  for (const char* tile : {"128x256x64/4x32/wg/c1", "128x256x64/4x32/wg/c2", "64x64x64/4x8/s3/wg/c1"}) {
    SCOPED_TRACE(tile);
    setenv("ARRAYC_GEMM_TILE", tile, 1);
    setenv("ARRAYC_GEMM_GROUP", "3", 1);
    Array a = random_array(DType::Float16, {1000, 24}, 460), b = random_array(DType::Float16, {24, 1536}, 461);
    expect_within_bound(a, b, dot(a, b));
    Array bt = transpose(random_array(DType::Float16, {1536, 24}, 462));
    expect_within_bound(a, bt, dot(a, bt));
    Array x = random_array(DType::BFloat16, {2, 1000, 24}, 463), y = random_array(DType::BFloat16, {2, 24, 1536}, 464);
    expect_within_bound(x, y, matmul(x, y));
    unsetenv("ARRAYC_GEMM_GROUP");
  }
  setenv("ARRAYC_GEMM_TILE", "128x256x64/4x32/wg/c1", 1);
  Array a = random_array(DType::Float16, {2200, 8}, 465), b = random_array(DType::Float16, {8, 6144}, 466);
  expect_within_bound(a, b, dot(a, b));
}

TEST_P(HalfProducts, NanAndInfinityPropagate) {
  for (DType t : {DType::Float16, DType::BFloat16}) {
    SCOPED_TRACE(dtype_name(t));
    const int64_t m = 20, k = 33, n = 24;
    std::vector<double> av = random_values(m * k, 1), bv = random_values(k * n, 2);
    av[0 * k + 5] = NAN;                 // row 0: NaN everywhere
    av[1 * k + 0] = INFINITY;            // row 1: inf, NaN where b[0][j] is 0 or meets -inf
    bv[0 * n + 10] = 0.0;                // inf * 0
    bv[7 * n + 3] = -INFINITY;           // column 3: -inf, NaN in row 1 only if it meets +inf: b[0][3] finite
    av[2 * k + 7] = 0.0;                 // row 2, column 3: 0 * -inf
    Array a = make_array(t, {m, k}, av), b = make_array(t, {k, n}, bv);
    expect_within_bound(a, b, dot(a, b));
    // Overflow: 2 * 300^2 > float16's 65504 rounds to inf (bfloat16 keeps it finite).
    Array big = full({16, 2}, 300.0, t);
    expect_within_bound(big, transpose(big), dot(big, transpose(big)));
  }
}

TEST_P(HalfProducts, EpilogueRunsOnTheTensorCoreTiles) {
  for (DType t : {DType::Float16, DType::BFloat16}) {
    SCOPED_TRACE(dtype_name(t));
    Array x = random_array(t, {600, 520}, 700, -1, 1), w = random_array(t, {520, 264}, 701, -1, 1);
    Array b = random_array(t, {264}, 702, -1, 1);
    Array layer = maximum(dot(x, w) + b, 0.0);
    std::string k = kernels_of(layer);
    EXPECT_NE(k.find("_mma_s"), std::string::npos) << k;
    EXPECT_NE(k.find("_ep_"), std::string::npos) << k;  // the bias and relu inside the product kernel
    // The product rounded once, then the bias added and rounded: within twice the product's
    // bound and one more rounding of the reference.
    HostArray want = reference_of(layer.node());
    HostArray got = values_of(layer);
    HostArray prod = values_of(dot(cast(x, DType::Float64).to(cpu()), cast(w, DType::Float64).to(cpu())));
    HostArray mag = values_of(dot(abs(cast(x, DType::Float64)).to(cpu()), abs(cast(w, DType::Float64)).to(cpu())));
    int bad = 0;
    for (size_t i = 0; i < got.f.size(); ++i) {
      double bound = 2 * (unit(t) * std::fabs(prod.f[i]) + 1.01 * 520 * std::ldexp(1.0, -23) * mag.f[i]) +
                     2 * unit(t) * std::fabs(want.f[i]) + tiny(t);
      if (!(std::fabs(got.f[i] - want.f[i]) <= bound) && bad++ < 5)
        ADD_FAILURE() << "element " << i << ": got " << got.f[i] << ", reference " << want.f[i] << ", bound " << bound;
    }
    EXPECT_EQ(bad, 0);
  }
}

}  // namespace
