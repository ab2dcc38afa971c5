// The GPU's product kernel with structure and epilogues (issue 29; codegen/nvptx/gemm.h):
// x @ x.T as the tiles of one triangle, mirrored (exactly symmetric), with every square built-in
// tile forced in turn and shapes that leave partial and many tiles; elementwise consumers of a
// product (bias, activation, scale, residual, cast) run on its register tiles inside the product
// kernel, in one launch, on odd shapes, transposed operands and batches; epilogues the kernel
// cannot take (a product read at other elements) run after it, still correct. Every result is
// checked against the reference interpreter. GPU only (matmul_structure_test.cpp covers both
// devices' shared behaviour).
#include <cstdlib>

#include "support/data.h"
#include "support/devices.h"
#include "support/pipeline.h"
#include "support/reference.h"

namespace {

using namespace arrayc;
using namespace arrayc_test;

class GpuProducts : public DeviceTest {
 protected:
  void TearDown() override {
    unsetenv("ARRAYC_GEMM_TILE");
    DeviceTest::TearDown();
  }
};
INSTANTIATE_TEST_SUITE_P(Gpu, GpuProducts, ::testing::Values(Device{Device::Kind::GPU, 0}), device_name);


// Whether a square result is exactly symmetric (no element differs from its mirror image).
bool exactly_symmetric(const Array& c) { return !any(c != transpose(c)).item<bool>(); }

// The product kernel's text (its name says gram, and its epilogue when fused) of a's step 0.
std::string product_kernel(const Array& a) { return inspect({a}, true).kernels.at(0).kernel; }

void check_gram(DType t, uint64_t seed) {
  const int64_t shapes[][2] = {{1, 5}, {2, 3}, {33, 17}, {129, 64}, {257, 9}, {300, 1}, {513, 130}, {4, 0}};
  for (const auto& s : shapes) {
    SCOPED_TRACE(std::string(dtype_name(t)) + " x: " + std::to_string(s[0]) + " x " + std::to_string(s[1]));
    Array x = random_array(t, {s[0], s[1]}, seed);
    EXPECT_MATCHES_REFERENCE(dot(x, transpose(x)));
    EXPECT_MATCHES_REFERENCE(dot(transpose(x), x));
    EXPECT_TRUE(exactly_symmetric(dot(x, transpose(x)).eval()));
  }
}

TEST_P(GpuProducts, GramIsOneTriangleMirrored) {
  for (DType t : {DType::Float32, DType::Float64}) check_gram(t, 300);
  Array x = random_array(DType::Float32, {200, 30}, 301);
  EXPECT_TRUE(contains(product_kernel(dot(x, transpose(x))), "_gram")) << product_kernel(dot(x, transpose(x)));
  // Not a Gram product: another array of the same values.
  Array y = random_array(DType::Float32, {200, 30}, 301);
  EXPECT_FALSE(contains(product_kernel(dot(x, transpose(y))), "_gram"));
}

TEST_P(GpuProducts, GramWithEveryTile) {
  // Square tiles compute the triangle; the others a general product (still symmetric: each
  // (i, j) and (j, i) are the same multiply-adds in the same order).
  const std::pair<DType, std::vector<const char*>> tiles[] = {
      {DType::Float32, {"128x128x16/8x8", "64x64x16/4x4", "32x32x32/2x2", "128x64x16/8x4"}},
      {DType::Float64, {"64x64x8/4x4", "32x32x16/2x2", "128x64x8/8x4/simt"}}};
  for (const auto& [t, list] : tiles)
    for (const char* tile : list) {
      SCOPED_TRACE(tile);
      setenv("ARRAYC_GEMM_TILE", tile, 1);
      check_gram(t, 310);
    }
}

TEST_P(GpuProducts, GramEpilogues) {
  for (DType t : {DType::Float32, DType::Float64}) {
    SCOPED_TRACE(dtype_name(t));
    Array x = random_array(t, {150, 70}, 320), b = random_array(t, {150}, 321);
    Array g = dot(x, transpose(x));
    EXPECT_MATCHES_REFERENCE(maximum(g, 1.0));
    EXPECT_MATCHES_REFERENCE(g + b);             // not symmetric: the mirror applies it at its own place
    EXPECT_MATCHES_REFERENCE(g * 0.5 + reshape(b, {150, 1}));
  }
}

TEST_P(GpuProducts, EpiloguesRunInTheProductKernel) {
  const int64_t sizes[][3] = {{1, 7, 9}, {9, 7, 1}, {1, 1, 1}, {5, 0, 3}, {33, 65, 17}, {130, 200, 67}, {256, 784, 256}};
  for (const auto& s : sizes) {
    SCOPED_TRACE("m, k, n = " + std::to_string(s[0]) + ", " + std::to_string(s[1]) + ", " + std::to_string(s[2]));
    for (DType t : {DType::Float32, DType::Float64}) {
      SCOPED_TRACE(dtype_name(t));
      Array x = random_array(t, {s[0], s[1]}, 330), w = random_array(t, {s[1], s[2]}, 331);
      Array b = random_array(t, {s[2]}, 332), rb = random_array(t, {s[0], 1}, 333);
      Array res = random_array(t, {s[0], s[2]}, 334);
      Array d = dot(x, w);
      EXPECT_MATCHES_REFERENCE(maximum(d + b, 0.0));               // bias, relu
      EXPECT_MATCHES_REFERENCE(d * 0.25 + res);                    // scale, residual
      EXPECT_MATCHES_REFERENCE(tanh(d - rb));                      // a bias per row, math
      EXPECT_MATCHES_REFERENCE(cast(d + b, DType::Float16));       // a cast
      EXPECT_MATCHES_REFERENCE(where(d > 0.0, d, d * 0.1));        // the product read twice
      EXPECT_MATCHES_REFERENCE(dot(transpose(transpose(x)), w) + 1.0);
      EXPECT_MATCHES_REFERENCE(dot(transpose(random_array(t, {s[1], s[0]}, 335)), w) * 2.0);  // transposed operand
    }
  }
}

TEST_P(GpuProducts, EpilogueIsOneLaunch) {
  Array x = random_array(DType::Float32, {100, 50}, 340).eval(), w = random_array(DType::Float32, {50, 70}, 341).eval();
  Array b = random_array(DType::Float32, {70}, 342).eval();
  auto layer = [&] { return maximum(dot(x, w) + b, 0.0); };  // a fresh (unevaluated) expression
  Array y = layer();
  StatsDelta s = stats_delta([&] { y.eval(); });
  EXPECT_EQ(s.kernel_launches, 1);
  EXPECT_MATCHES_REFERENCE(layer());
  std::string k = product_kernel(layer());
  EXPECT_TRUE(contains(k, "_ep_fused_add_maximum")) << k;
  EXPECT_TRUE(contains(k, "epilogue (product leaf")) << k;
  // Off: the product, then the epilogue's kernel.
  set_epilogue_fusion(false);
  Array y2 = maximum(dot(x, w) + b, 0.0);
  s = stats_delta([&] { y2.eval(); });
  set_epilogue_fusion(true);
  EXPECT_EQ(s.kernel_launches, 2);
  EXPECT_MATCHES_REFERENCE(y2);
}

TEST_P(GpuProducts, EpiloguesTheKernelCannotTake) {
  // Read across (the transpose of the product): the product goes to scratch memory and the
  // epilogue runs after it, as its own kernel; the stage text says why.
  for (DType t : {DType::Float32, DType::Float64}) {
    Array x = random_array(t, {40, 40}, 350), w = random_array(t, {40, 40}, 351), c = random_array(t, {40, 40}, 352);
    EXPECT_MATCHES_REFERENCE(transpose(maximum(dot(x, w), 0.0)) + c);
    std::vector<KernelStages> st = inspect({transpose(maximum(dot(x, w), 0.0)) + c}, true).kernels;
    bool said = false;
    for (const KernelStages& k : st) said |= contains(k.kernel, "not inside the product kernel: it reads the product at other elements");
    EXPECT_TRUE(said);
    // A batch whose epilogue broadcasts along the batch.
    Array a3 = random_array(t, {3, 5, 7}, 353), b3 = random_array(t, {3, 7, 4}, 354), r = random_array(t, {5, 4}, 355);
    EXPECT_MATCHES_REFERENCE(exp(matmul(a3, b3) * 0.1) + r);
    EXPECT_MATCHES_REFERENCE(matmul(a3, b3) + 1.0);
  }
}

// The PTX of the fused and triangle kernels is made without a GPU (Stages::ptx), so that the
// emitter is exercised on every machine.
TEST(GpuProductsPtx, FusedAndTriangleKernelsCompileWithoutAGpu) {
  for (DType t : {DType::Float32, DType::Float64}) {
    SCOPED_TRACE(dtype_name(t));
    Array x = random_array(t, {64, 32}, 360), w = random_array(t, {32, 48}, 361), b = random_array(t, {48}, 362);
    std::string ptx = inspect({maximum(dot(x, w) + b, 0.0)}).ptx(90);
    EXPECT_TRUE(contains(ptx, "_ep_fused_add_maximum")) << ptx.substr(0, 2000);
    EXPECT_FALSE(contains(ptx, "// ---- fused_add_maximum")) << "the epilogue is not a kernel of its own";
    EXPECT_FALSE(contains(ptx, ".local")) << "the product's values stay in registers";
    ptx = inspect({cast(tanh(dot(x, transpose(x)) * 0.5), DType::Float16)}).ptx(90);
    EXPECT_TRUE(contains(ptx, "_gram_ep_")) << ptx.substr(0, 2000);
    ptx = inspect({transpose(dot(x, w) + 1.0) * 2.0}).ptx(80);  // read across: two kernels
    EXPECT_TRUE(contains(ptx, "// ---- fused_")) << ptx.substr(0, 2000);
  }
  // float64 products on the FP64 tensor cores from sm_80 on (m16n8k16 from sm_90), FMAs before.
  Array a = random_array(DType::Float64, {512, 64}, 363), c = random_array(DType::Float64, {64, 512}, 364);
  std::string ptx = inspect({dot(a, c) + 1.0}).ptx(90);
  EXPECT_TRUE(contains(ptx, "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64")) << ptx.substr(0, 2000);
  EXPECT_TRUE(contains(ptx, "_mma_s4_k16_ep_")) << ptx.substr(0, 2000);
  EXPECT_FALSE(contains(ptx, ".local"));
  EXPECT_TRUE(contains(inspect({dot(a, c) + 1.0}).ptx(80), "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64"));
  EXPECT_FALSE(contains(inspect({dot(a, c)}).ptx(75), "mma.sync"));
  EXPECT_FALSE(contains(inspect({dot(a, transpose(a))}).ptx(90), "mma.sync"));  // Gram: FMAs
}

}  // namespace
