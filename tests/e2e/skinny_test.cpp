// Skinny products on the CPU (issue 29; docs/blas.md, "Skinny products"): a product with few
// columns of b and many rows runs the LLVM-generated skinny kernel (backend/host/skinny.h).
// Results against the reference interpreter for every float dtype, views, edge shapes and
// non-finite values; the kernel itself directly against a plain loop for the shapes the products
// pass never sends it (m = 0, k = 0, wide b in column chunks); the choice as `:fused` text.
#include <cmath>

#include "arrayc/indexing.h"
#include "backend/host/host_jit.h"
#include "backend/host/skinny.h"
#include "codegen/cpu/skinny_gemm.h"
#include "codegen/llvm_util.h"
#include "support/data.h"
#include "support/devices.h"
#include "support/pipeline.h"
#include "support/reference.h"

namespace {

using namespace arrayc;
using namespace arrayc_test;

class SkinnyProducts : public DeviceTest {};
ARRAYC_DEVICE_SUITE(SkinnyProducts);

const char* kSkinny = "generated skinny kernel";

TEST_P(SkinnyProducts, MatchTheInterpreter) {
  // k across whole vectors and partial ones (of 2, 4, 8, 16 lanes), rows not a multiple of the
  // rows per step, 2 to 24 columns.
  const int64_t sizes[][3] = {{128, 784, 10}, {300, 33, 2}, {130, 17, 24}, {129, 1, 5}, {197, 64, 3}, {200, 7, 23}, {170, 129, 16}};
  for (const auto& s : sizes) {
    SCOPED_TRACE("m, k, n = " + std::to_string(s[0]) + ", " + std::to_string(s[1]) + ", " + std::to_string(s[2]));
    for (DType t : kFloatTypes) {
      SCOPED_TRACE(dt(t));
      Array x = random_array(t, {s[0], s[1]}, 51), w = random_array(t, {s[1], s[2]}, 52);
      EXPECT_MATCHES_REFERENCE(dot(x, w));
      EXPECT_MATCHES_REFERENCE(matmul(x, w));
      if (!on_gpu()) EXPECT_TRUE(contains(fused_text(dot(x, w)), kSkinny)) << fused_text(dot(x, w));
    }
  }
}

TEST_P(SkinnyProducts, KernelsTextNamesTheKernel) {
  if (on_gpu()) GTEST_SKIP() << "a CPU choice";
  Array x = random_array(DType::Float32, {500, 30}, 70), w = random_array(DType::Float32, {30, 10}, 71);
  std::string kernels = inspect({dot(x, w)}, true).all(&KernelStages::kernel);
  std::string bits = std::to_string(detail::host_vector_bits());
  EXPECT_TRUE(contains(kernels, "generated skinny kernel arrayc_skinny_f32_10_" + bits + ": [500 x 30] . [30 x 10], " +
                                    bits + "-bit vectors along k"))
      << kernels;
  // A view with strided columns of a: BLAS at run time, and the text says so.
  Array big = random_array(DType::Float32, {500, 60}, 72).eval();
  kernels = inspect({dot(big[{_, Slice(0, 60, 2)}], w)}, true).all(&KernelStages::kernel);
  EXPECT_TRUE(contains(kernels, "BLAS sgemm: [500 x 30] . [30 x 10]")) << kernels;
}

TEST_P(SkinnyProducts, WhatItDoesNotTake) {
  if (on_gpu()) GTEST_SKIP() << "a CPU choice";
  Array x = random_array(DType::Float32, {200, 40}, 53);
  // 25 columns, 127 rows, one column, a transposed a: BLAS.
  for (const Array& p : {dot(x, random_array(DType::Float32, {40, 25}, 54)),
                         dot(random_array(DType::Float32, {127, 40}, 55), random_array(DType::Float32, {40, 8}, 56)),
                         dot(x, random_array(DType::Float32, {40, 1}, 57)),
                         dot(transpose(random_array(DType::Float32, {40, 200}, 58)), random_array(DType::Float32, {40, 8}, 59))}) {
    EXPECT_FALSE(contains(fused_text(p), kSkinny)) << fused_text(p);
    EXPECT_MATCHES_REFERENCE(p);
  }
  // Integers are generated loops, as before.
  EXPECT_MATCHES_REFERENCE(dot(random_array(DType::Int32, {100, 9}, 60), random_array(DType::Int32, {9, 4}, 61)));
}

TEST_P(SkinnyProducts, Views) {
  for (DType t : {DType::Float32, DType::Float64, DType::Float16}) {
    SCOPED_TRACE(dt(t));
    Array big = random_array(t, {300, 100}, 62).eval();
    Array w = random_array(t, {47, 12}, 63);
    Array wt = random_array(t, {12, 47}, 64).eval();
    EXPECT_MATCHES_REFERENCE(dot(big[{_, Slice(3, 50)}], w));                   // rows of a spaced by 100
    EXPECT_MATCHES_REFERENCE(dot(big[{Slice(none, none, 2), Slice(40, 87)}], w));  // every other row
    EXPECT_MATCHES_REFERENCE(dot(big[{_, Slice(0, 94, 2)}], w));                 // strided columns: BLAS
    EXPECT_MATCHES_REFERENCE(dot(big[{Slice(none, none, -1), Slice(3, 50)}], w));  // rows backwards
    EXPECT_MATCHES_REFERENCE(dot(big[{_, Slice(3, 50)}], transpose(wt)));       // b transposed
    EXPECT_MATCHES_REFERENCE(dot(big[{_, Slice(3, 50)}], transpose(wt[{_, Slice(none, none, -1)}])));
  }
}

TEST_P(SkinnyProducts, NonFiniteValues) {
  for (DType t : kFloatTypes) {
    SCOPED_TRACE(dt(t));
    std::vector<double> xv(130 * 19), wv(19 * 3);
    for (size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<double>(i % 7) - 3;
    for (size_t i = 0; i < wv.size(); ++i) wv[i] = static_cast<double>(i % 5) * 0.5;
    xv[5] = NAN, xv[19 * 7 + 18] = INFINITY, xv[19 * 70] = -INFINITY, xv[19 * 129 + 18] = INFINITY;  // the last partial vector
    wv[3 * 18 + 2] = INFINITY;  // with a's last column
    Array x = make_array(t, {130, 19}, xv), w = make_array(t, {19, 3}, wv);
    EXPECT_MATCHES_REFERENCE(dot(x, w));
    EXPECT_MATCHES_REFERENCE(dot(x * 0.0, w));  // -0.0 products sum to +0
  }
}

TEST_P(SkinnyProducts, EpiloguesStillFuse) {
  for (DType t : kFloatTypes) {
    SCOPED_TRACE(dt(t));
    Array x = random_array(t, {3000, 70}, 65), w = random_array(t, {70, 10}, 66), b = random_array(t, {10}, 67);
    Array layer = maximum(dot(x, w) + b, 0.0);
    std::string text = fused_text(layer);  // before the layer is evaluated
    EXPECT_MATCHES_REFERENCE(layer);
    EXPECT_MATCHES_REFERENCE(cast(dot(x, w) * 2.0, DType::Float64));
    if (!on_gpu() && (t == DType::Float32 || t == DType::Float64)) {
      EXPECT_TRUE(contains(text, kSkinny) && contains(text, "epilogue of")) << text;
    }
  }
  // Enough rows for several panels of the product (1 MiB each).
  Array x = random_array(DType::Float32, {60000, 9}, 68), w = random_array(DType::Float32, {9, 8}, 69);
  EXPECT_MATCHES_REFERENCE(tanh(dot(x, w)) - 1.0);
}

// ---- The kernel itself, against a plain loop ------------------------------------------------------

template <typename T>
void check_direct(int64_t m, int64_t k, int64_t n, int64_t a_pad, bool b_transposed) {
  SCOPED_TRACE("direct m, k, n = " + std::to_string(m) + ", " + std::to_string(k) + ", " + std::to_string(n));
  int64_t lda = k + a_pad;
  std::vector<T> a(std::max<int64_t>(1, m * lda)), b(std::max<int64_t>(1, k * n)), c(std::max<int64_t>(1, m * n), T(NAN));
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<T>(static_cast<double>((i * 7) % 13) - 6);
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<T>(static_cast<double>((i * 5) % 11) * 0.25 - 1);
  detail::MatrixRef ar{a.data(), m, k, lda, 1};
  // b row-major k x n, or stored as its transpose (n x k)
  detail::MatrixRef br = b_transposed ? detail::MatrixRef{b.data(), k, n, 1, k} : detail::MatrixRef{b.data(), k, n, n, 1};
  detail::skinny_gemm(dtype_of<T>(), ar, br, c.data());
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double want = 0;
      for (int64_t p = 0; p < k; ++p) want += static_cast<double>(a[i * lda + p]) * b[p * br.row_stride + j * br.col_stride];
      // Small integers and quarters: every partial sum is exact in float32.
      ASSERT_EQ(static_cast<double>(c[i * n + j]), want) << "at " << i << ", " << j;
    }
}

// The kernel's IR at each vector width, whatever the host: whole vectors of the width asked for.
TEST(SkinnyKernel, VectorWidths) {
  for (int bits : {128, 256, 512})
    for (DType t : {DType::Float32, DType::Float64}) {
      llvm::LLVMContext ctx;
      std::unique_ptr<llvm::Module> m = detail::emit_skinny_gemm(t, 10, bits, ctx);
      detail::verify_module(*m);
      int lanes = bits / (t == DType::Float64 ? 64 : 32);
      std::string vec = "<" + std::to_string(lanes) + (t == DType::Float64 ? " x double>" : " x float>");
      std::string text = detail::module_text(*m);
      EXPECT_TRUE(contains(text, "define void @" + detail::skinny_symbol(t, 10, bits))) << text;
      EXPECT_TRUE(contains(text, "llvm.fmuladd.v" + std::to_string(lanes))) << text;
      EXPECT_TRUE(contains(text, "llvm.masked.load.v" + std::to_string(lanes))) << text;  // the partial vector of k
      EXPECT_TRUE(contains(text, vec)) << text;
    }
  EXPECT_EQ(detail::skinny_rows_per_step(10, 512), 2);
  EXPECT_EQ(detail::skinny_rows_per_step(10, 256), 1);
  EXPECT_EQ(detail::skinny_rows_per_step(1, 256), 4);
}

TEST(SkinnyKernel, EdgeShapesAndColumnChunks) {
  for (bool bt : {false, true}) {
    check_direct<float>(0, 5, 3, 0, bt);
    check_direct<float>(7, 0, 3, 0, bt);  // k == 0: zeros
    check_direct<double>(5, 0, 1, 0, bt);
    check_direct<float>(3, 5, 0, 0, bt);
    check_direct<float>(9, 31, 70, 3, bt);  // more columns than one call takes: chunks
    check_direct<double>(11, 45, 57, 0, bt);
    check_direct<float>(1, 1, 1, 0, bt);
    check_direct<double>(300, 100, 29, 5, bt);
  }
}

}  // namespace
