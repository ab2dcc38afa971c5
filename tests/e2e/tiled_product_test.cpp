// Tiled products on the CPU (issue 29; docs/blas.md, "Tiled products"): a small general product
// runs the LLVM-generated register-tiled kernel (backend/host/tiled.h), with a fused epilogue
// applied to each block of the output in the block's task. Results against the reference
// interpreter for every float dtype, views, edge shapes and non-finite values; the kernel itself
// against a plain loop for partial tiles and the shapes the products pass never sends it; the
// choice as `:fused` and `:kernels` text; the kernel's IR at each vector width.
#include <array>
#include <cmath>
#include <cstdlib>
#include <fstream>

#include "arrayc/indexing.h"
#include "backend/host/host_jit.h"
#include "backend/host/thread_pool.h"
#include "backend/host/tiled.h"
#include "codegen/cpu/tile_gemm.h"
#include "codegen/llvm_util.h"
#include "kernel/schedule.h"
#include "passes/products.h"
#include "support/data.h"
#include "support/devices.h"
#include "support/pipeline.h"
#include "support/reference.h"

namespace {

using namespace arrayc;
using namespace arrayc_test;

class TiledProducts : public DeviceTest {};
ARRAYC_DEVICE_SUITE(TiledProducts);

const char* kTiled = "generated tiled kernel arrayc_tile_";

// The kernel for every general product on any host for the test's life (the rule takes it from
// 2^21 multiply-adds, with 256-bit vectors below 2^22 only), so that small products and the 256- and 128-bit
// kernels run too (the suite runs again with ARRAYC_HOST_CPU=x86-64-v3).
// `packed`: 1 takes the packed path (backend/host/tiled.h, tiled_packs) for every product, -1 the
// blocks, 0 the rule (the blocks, at the tests' sizes).
struct TiledAlways {
  explicit TiledAlways(int packed = 0) {
    detail::set_tiled_on_host(1);
    detail::set_tiled_packed(packed);
  }
  ~TiledAlways() {
    detail::set_tiled_on_host(0);
    detail::set_tiled_packed(0);
  }
};
// f() under each of the kernel's paths: the blocks, then the packed steps.
template <typename F>
void for_both_paths(F f) {
  for (int packed : {-1, 1}) {
    SCOPED_TRACE(packed > 0 ? "packed path" : "blocks path");
    TiledAlways always(packed);
    f();
  }
}

std::string kernels_text(const Array& a) { return inspect({a}, true).all(&KernelStages::kernel); }

TEST_P(TiledProducts, MatchTheInterpreter) {
  // Partial tiles in both directions, k across several panels, one row of tiles, k shorter than
  // the unrolling, products in the rule's bounds (2^21 to 2^30 multiply-adds).
  const int64_t sizes[][3] = {{64, 128, 64}, {100, 90, 70}, {129, 257, 33}, {37, 1000, 20}, {300, 40, 65},
                              {13, 2500, 17}, {700, 3, 300}, {200, 700, 100}, {3, 5, 7}};
  for_both_paths([&] {
  for (const auto& s : sizes) {
    SCOPED_TRACE("m, k, n = " + std::to_string(s[0]) + ", " + std::to_string(s[1]) + ", " + std::to_string(s[2]));
    for (DType t : kFloatTypes) {
      SCOPED_TRACE(dt(t));
      Array x = random_array(t, {s[0], s[1]}, 81), w = random_array(t, {s[1], s[2]}, 82);
      EXPECT_MATCHES_REFERENCE(dot(x, w));
      EXPECT_MATCHES_REFERENCE(matmul(x, w));
      if (!on_gpu()) {
        bool in_bounds = s[0] * s[1] * s[2] >= detail::kTiledMinWork;
        EXPECT_EQ(contains(fused_text(dot(x, w)), "2^21 to 2^30 multiply-adds"), in_bounds) << fused_text(dot(x, w));
        EXPECT_TRUE(contains(kernels_text(dot(x, w)), kTiled)) << kernels_text(dot(x, w));
      }
    }
  }
  });
}

// The host's own rule, unless ARRAYC_TILED_PRODUCTS overrides it for the whole run.
bool rule_overridden() { return std::getenv("ARRAYC_TILED_PRODUCTS") != nullptr; }

TEST_P(TiledProducts, KernelsText) {
  if (on_gpu() || rule_overridden()) GTEST_SKIP() << "a CPU choice, by the host's rule";
  Array x = random_array(DType::Float32, {256, 784}, 83), w = random_array(DType::Float32, {784, 256}, 84);
  std::string bits = std::to_string(detail::host_vector_bits());
  std::string want = "generated tiled kernel " + detail::tile_symbol(DType::Float32, detail::host_vector_bits()) +
                     ": [256 x 784] . [784 x 256], tiles of " + std::to_string(detail::tile_rows(detail::host_vector_bits())) +
                     " x " + std::to_string(detail::tile_cols(DType::Float32, detail::host_vector_bits())) + " in " + bits +
                     "-bit registers, ";
  {
    TiledAlways always;
    EXPECT_TRUE(contains(kernels_text(dot(x, w)), want)) << kernels_text(dot(x, w));
    std::string layer = kernels_text(maximum(dot(x, w) + 1.0, 0.0));
    EXPECT_TRUE(contains(layer, "; epilogue: the kernel below, on each block's rows in its task, as the tiled kernel finishes it"))
        << layer;
    // A view with strided columns of a, and a transposed a: the kernel too (it packs a).
    Array big = random_array(DType::Float32, {256, 1568}, 85).eval();
    EXPECT_TRUE(contains(kernels_text(dot(big[{_, Slice(0, 1568, 2)}], w)), want)) << kernels_text(dot(big[{_, Slice(0, 1568, 2)}], w));
    Array xt = random_array(DType::Float32, {784, 256}, 110).eval();
    std::string symbol = detail::tile_symbol(DType::Float32, detail::host_vector_bits());
    std::string strided = kernels_text(dot(big[{_, Slice(0, 1568, 2)}], w)), transposed = kernels_text(dot(transpose(xt), w));
    EXPECT_TRUE(contains(strided, "threads, each block's rows of a packed a panel at a time")) << strided;
    EXPECT_TRUE(contains(transposed, "generated tiled kernel " + symbol + "_at: [256 x 784] . [784 x 256]")) << transposed;
    EXPECT_TRUE(contains(transposed, "threads, a read by columns in place")) << transposed;
  }
  // The host's own rule: the kernel with 512-bit vectors, BLAS otherwise.
  EXPECT_EQ(contains(kernels_text(dot(x, w)), kTiled), detail::host_vector_bits() >= 512) << kernels_text(dot(x, w));
  detail::set_tiled_on_host(-1);
  EXPECT_TRUE(contains(kernels_text(dot(x, w)), "BLAS sgemm: [256 x 784] . [784 x 256]")) << kernels_text(dot(x, w));
  detail::set_tiled_on_host(0);
}

TEST_P(TiledProducts, WhatItDoesNotTake) {
  if (on_gpu() || rule_overridden()) GTEST_SKIP() << "a CPU choice, by the host's rule";
  Array small = dot(random_array(DType::Float32, {60, 128}, 86), random_array(DType::Float32, {128, 64}, 87));
  Array big = dot(random_array(DType::Float32, {256, 784}, 104), random_array(DType::Float32, {784, 256}, 105));
  Array medium = dot(random_array(DType::Float32, {128, 128}, 106), random_array(DType::Float32, {128, 128}, 107));
  // The host's rule: from 2^21 multiply-adds, with 256-bit vectors below 2^22 only.
  EXPECT_FALSE(contains(kernels_text(small), kTiled)) << kernels_text(small);
  EXPECT_EQ(contains(kernels_text(medium), kTiled), detail::host_vector_bits() >= 256) << kernels_text(medium);
  EXPECT_TRUE(contains(fused_text(medium), "128 x 128 x 128 (2^21 to 2^30 multiply-adds), the generated tiled kernel where the host has 256- or 512-bit vectors"))
      << fused_text(medium);
  EXPECT_EQ(contains(kernels_text(big), kTiled), detail::host_vector_bits() >= 512) << kernels_text(big);
  EXPECT_TRUE(contains(fused_text(big), "(2^21 to 2^30 multiply-adds), the generated tiled kernel where the host has 512-bit vectors"))
      << fused_text(big);
  TiledAlways always;
  // Integers, alone or in a batch: never.
  for (const Array& p : {dot(random_array(DType::Int32, {100, 90}, 92), random_array(DType::Int32, {90, 70}, 93)),
                         matmul(random_array(DType::Int32, {2, 100, 90}, 91), random_array(DType::Int32, {90, 70}, 94))}) {
    EXPECT_FALSE(contains(kernels_text(p), kTiled)) << kernels_text(p);
    EXPECT_MATCHES_REFERENCE(p);
  }
  // Above 2^30 multiply-adds with fewer than 2^20 outputs: BLAS.
  Array deep = dot(zeros({256, 16400}, DType::Float32), zeros({16400, 256}, DType::Float32));
  EXPECT_FALSE(contains(fused_text(deep), "tiled kernel")) << fused_text(deep);
  EXPECT_FALSE(contains(kernels_text(deep), kTiled)) << kernels_text(deep);
}

// Above 2^30 multiply-adds with 2^20 outputs or more: the packed path, on 512-bit hosts (not run
// here: the tests check the path's results at small sizes, forced, above).
TEST_P(TiledProducts, LargeProductsPacked) {
  if (on_gpu() || rule_overridden()) GTEST_SKIP() << "a CPU choice, by the host's rule";
  Array huge = dot(zeros({1025, 1024}, DType::Float32), zeros({1024, 1024}, DType::Float32));
  EXPECT_TRUE(contains(fused_text(huge), "1025 x 1024 x 1024 (over 2^30 multiply-adds, 2^20 outputs or more), the generated tiled kernel, both operands packed a step of k at a time, where the host has 512-bit vectors"))
      << fused_text(huge);
  EXPECT_EQ(contains(kernels_text(huge), kTiled), detail::host_vector_bits() >= 512) << kernels_text(huge);
  TiledAlways always;
  int bits = detail::host_vector_bits();
  int64_t depth = detail::tile_depth(DType::Float32, bits);
  std::string text = kernels_text(maximum(huge + 1.0, 0.0));
  EXPECT_TRUE(contains(text, "in " + std::to_string(bits) + "-bit registers, both operands packed, k in " +
                                 std::to_string((1024 + depth - 1) / depth) + " steps of " + std::to_string(depth) + ", each "))
      << text;
  EXPECT_TRUE(contains(text, "; epilogue: the kernel below, on each block's rows in its task, as the tiled kernel finishes it")) << text;
  // Forced at a small size: the text names the packed path too.
  detail::set_tiled_packed(1);
  Array small = dot(random_array(DType::Float64, {100, 300}, 108), random_array(DType::Float64, {300, 50}, 109));
  EXPECT_TRUE(contains(kernels_text(small), "both operands packed")) << kernels_text(small);
  EXPECT_MATCHES_REFERENCE(small);
}

// Batches (tiled_gemm_batched): the blocks of every product share the pool. Broadcast and
// transposed operands, partial tiles, a rank-4 batch, an epilogue after the whole batch.
TEST_P(TiledProducts, Batches) {
  TiledAlways always;
  for (DType t : kFloatTypes) {
    SCOPED_TRACE(dt(t));
    Array a = random_array(t, {3, 37, 50}, 112), b = random_array(t, {3, 50, 29}, 113);
    EXPECT_MATCHES_REFERENCE(matmul(a, b));
    EXPECT_MATCHES_REFERENCE(matmul(a, random_array(t, {50, 29}, 114)));         // b broadcast over the batch
    EXPECT_MATCHES_REFERENCE(matmul(a, swapaxes(random_array(t, {3, 29, 50}, 115), 1, 2)));  // q @ k.T
    EXPECT_MATCHES_REFERENCE(matmul(swapaxes(random_array(t, {3, 50, 37}, 116), 1, 2), b));  // a transposed
    EXPECT_MATCHES_REFERENCE(matmul(random_array(t, {2, 3, 13, 200}, 117), random_array(t, {2, 3, 200, 70}, 118)));
    EXPECT_MATCHES_REFERENCE(maximum(matmul(a, b) + random_array(t, {29}, 119), 0.0));
    EXPECT_MATCHES_REFERENCE(matmul(random_array(t, {4, 0, 5}, 120), random_array(t, {4, 5, 6}, 121)));
    EXPECT_MATCHES_REFERENCE(matmul(random_array(t, {4, 3, 0}, 122), random_array(t, {4, 0, 6}, 123)));  // k == 0: zeros
    // An epilogue broadcast over the batch and along rows, applied in the blocks' tasks.
    Array scaled = matmul(a, b) * 0.125 + random_array(t, {37, 1}, 130);
    EXPECT_MATCHES_REFERENCE(scaled);
    if (!on_gpu() && (t == DType::Float32 || t == DType::Float64)) {
      EXPECT_TRUE(contains(kernels_text(matmul(a, b)), "batch of 3, tiles of")) << kernels_text(matmul(a, b));
      std::string text = kernels_text(maximum(matmul(a, b) + random_array(t, {29}, 131), 0.0));
      EXPECT_TRUE(contains(text, "; epilogue: the kernel below, on each block's rows in its task")) << text;
    }
  }
}

// The rule for batches: 2^16 to 2^27 multiply-adds a product, the kernel on 256- and 512-bit hosts.
TEST_P(TiledProducts, BatchRule) {
  if (on_gpu() || rule_overridden()) GTEST_SKIP() << "a CPU choice, by the host's rule";
  Array heads = matmul(random_array(DType::Float32, {96, 128, 64}, 124), swapaxes(random_array(DType::Float32, {96, 128, 64}, 125), 1, 2));
  EXPECT_TRUE(contains(fused_text(heads), "product-structure: a batch of 96 products of 128 x 64 x 128 (2^16 to 2^27 multiply-adds each), the generated tiled kernel where the host has 256- or 512-bit vectors"))
      << fused_text(heads);
  EXPECT_EQ(contains(kernels_text(heads), kTiled), detail::host_vector_bits() >= 256) << kernels_text(heads);
  EXPECT_MATCHES_REFERENCE(heads);
  Array tiny = matmul(random_array(DType::Float32, {256, 32, 32}, 126), random_array(DType::Float32, {256, 32, 32}, 127));
  EXPECT_FALSE(contains(fused_text(tiny), "batch of")) << fused_text(tiny);
  EXPECT_FALSE(contains(kernels_text(tiny), kTiled)) << kernels_text(tiny);
}

TEST_P(TiledProducts, Views) {
  for_both_paths([&] {
  for (DType t : {DType::Float32, DType::Float64, DType::Float16}) {
    SCOPED_TRACE(dt(t));
    Array big = random_array(t, {300, 200}, 94).eval();
    Array w = random_array(t, {97, 60}, 95);
    Array wt = random_array(t, {60, 97}, 96).eval();
    EXPECT_MATCHES_REFERENCE(dot(big[{_, Slice(3, 100)}], w));                    // rows of a spaced by 200
    EXPECT_MATCHES_REFERENCE(dot(big[{Slice(none, none, 2), Slice(40, 137)}], w));  // every other row
    EXPECT_MATCHES_REFERENCE(dot(big[{_, Slice(0, 194, 2)}], w));                 // strided columns: packed
    Array at = random_array(t, {97, 150}, 111).eval();
    EXPECT_MATCHES_REFERENCE(dot(transpose(at), w));                               // a transposed: packed
    EXPECT_MATCHES_REFERENCE(dot(transpose(big[{Slice(0, 194, 2), Slice(0, 150)}]), w));  // transposed, rows spaced
    EXPECT_MATCHES_REFERENCE(maximum(dot(transpose(at), w) + 1.0, 0.0));           // with its epilogue
    EXPECT_MATCHES_REFERENCE(dot(big[{Slice(none, none, -1), Slice(3, 100)}], w));  // rows backwards
    EXPECT_MATCHES_REFERENCE(dot(big[{_, Slice(3, 100)}], transpose(wt)));        // b transposed: packed
    EXPECT_MATCHES_REFERENCE(dot(big[{_, Slice(3, 100)}], transpose(wt[{_, Slice(none, none, -1)}])));
    EXPECT_MATCHES_REFERENCE(dot(big[{_, Slice(3, 100)}], big[{Slice(0, 97), Slice(none, none, -3)}]));  // b's columns backwards, spaced
  }
  });
}

TEST_P(TiledProducts, NonFiniteValues) {
  for_both_paths([&] {
  for (DType t : kFloatTypes) {
    SCOPED_TRACE(dt(t));
    const int64_t m = 70, k = 90, n = 100;
    std::vector<double> xv(m * k), wv(k * n);
    for (size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<double>(i % 7) - 3;
    for (size_t i = 0; i < wv.size(); ++i) wv[i] = static_cast<double>(i % 5) * 0.5;
    xv[5] = NAN, xv[k * 7 + 89] = INFINITY, xv[k * 69] = -INFINITY, xv[k * 65 + 3] = INFINITY;  // the last, partial row tile
    wv[n * 89 + 99] = INFINITY;  // the last partial column tile, with a's last column
    wv[n * 40 + 2] = NAN;
    Array x = make_array(t, {m, k}, xv), w = make_array(t, {k, n}, wv);
    EXPECT_MATCHES_REFERENCE(dot(x, w));
    EXPECT_MATCHES_REFERENCE(dot(x * 0.0, w));  // -0.0 products sum to +0
    EXPECT_MATCHES_REFERENCE(maximum(dot(x, w) + 1.0, 0.0));
  }
  });
}

TEST_P(TiledProducts, Epilogues) {
  for_both_paths([&] {
  for (DType t : kFloatTypes) {
    SCOPED_TRACE(dt(t));
    Array x = random_array(t, {300, 70}, 97), w = random_array(t, {70, 90}, 98), b = random_array(t, {90}, 99);
    Array layer = maximum(dot(x, w) + b, 0.0);
    std::string text = fused_text(layer), kernels = kernels_text(layer);  // before the layer is evaluated
    EXPECT_MATCHES_REFERENCE(layer);
    EXPECT_MATCHES_REFERENCE(cast(dot(x, w) * 2.0, DType::Float64));
    EXPECT_MATCHES_REFERENCE(tanh(dot(x, w)) - 1.0);
    Array sq = random_array(t, {120, 120}, 100);
    Array p = dot(sq, random_array(t, {120, 120}, 101));
    EXPECT_MATCHES_REFERENCE(p + transpose(p));  // reads the product twice, once transposed: after the whole product
    detail::set_tiled_on_host(-1);
    EXPECT_MATCHES_REFERENCE(p + transpose(p));  // the same after BLAS
    detail::set_tiled_on_host(1);
    if (!on_gpu() && (t == DType::Float32 || t == DType::Float64)) {
      EXPECT_TRUE(contains(text, "epilogue of")) << text;
      EXPECT_TRUE(contains(kernels, kTiled) && contains(kernels, "on each block's rows in its task")) << kernels;
    }
    set_epilogue_fusion(false);
    EXPECT_MATCHES_REFERENCE(maximum(dot(x, w) + b, 0.0));
    set_epilogue_fusion(true);
  }
  });
}

// And the same bits on either path: each output sums its k products in k order from +0.
TEST_P(TiledProducts, SameBitsOnAnyThreadCount) {
  if (on_gpu()) GTEST_SKIP() << "the host's thread pool";
  Array x = random_array(DType::Float32, {333, 1000}, 102).eval(), w = random_array(DType::Float32, {1000, 150}, 103).eval();
  auto run = [&](int threads, int packed) {
    TiledAlways always(packed);
    detail::set_num_threads(threads);
    std::vector<float> out = maximum(dot(x, w) + 0.5, 0.0).to_vector<float>();
    return out;
  };
  int before = detail::num_threads();
  std::vector<float> one = run(1, -1), many = run(16, -1), two = run(2, -1);
  std::vector<float> packed_one = run(1, 1), packed_many = run(16, 1), packed_three = run(3, 1);
  // A batch: each product's bits as the product alone.
  Array xb = random_array(DType::Float32, {3, 120, 300}, 128).eval(), wb = random_array(DType::Float32, {300, 70}, 129).eval();
  auto batch = [&](int threads) {
    TiledAlways always;
    detail::set_num_threads(threads);
    return matmul(xb, wb).to_vector<float>();
  };
  std::vector<float> batch_one = batch(1), batch_many = batch(16);
  std::vector<float> second = [&] {
    TiledAlways always;
    return dot(xb[1], wb).to_vector<float>();
  }();
  detail::set_num_threads(before);
  EXPECT_EQ(batch_one, batch_many);
  EXPECT_EQ(std::vector<float>(batch_one.begin() + 120 * 70, batch_one.begin() + 240 * 70), second);
  EXPECT_EQ(one, many);
  EXPECT_EQ(one, two);
  EXPECT_EQ(one, packed_one);
  EXPECT_EQ(one, packed_many);
  EXPECT_EQ(one, packed_three);
}

// The kernel's IR at each vector width, whatever the host: whole vectors of the width asked for,
// masked loads and stores for the last columns. DUMP_TILE_IR=prefix writes each module's text.
TEST(TileKernel, VectorWidths) {
  for (int bits : {128, 256, 512})
    for (DType t : {DType::Float32, DType::Float64}) {
      llvm::LLVMContext ctx;
      std::unique_ptr<llvm::Module> m = detail::emit_tile_gemm(t, bits, ctx);
      detail::verify_module(*m);
      int lanes = bits / (t == DType::Float64 ? 64 : 32);
      std::string vec = std::to_string(lanes) + (t == DType::Float64 ? "f64" : "f32");
      std::string text = detail::module_text(*m);
      if (const char* dump = std::getenv("DUMP_TILE_IR")) std::ofstream(dump + detail::tile_symbol(t, bits) + ".ll") << text;
      EXPECT_TRUE(contains(text, "define void @" + detail::tile_symbol(t, bits))) << text;
      EXPECT_TRUE(contains(text, "llvm.fmuladd.v" + vec)) << text;
      EXPECT_TRUE(contains(text, "llvm.masked.load.v" + vec)) << text;
      EXPECT_TRUE(contains(text, "llvm.masked.store.v" + vec)) << text;
      EXPECT_EQ(detail::tile_cols(t, bits), 2 * lanes);
      // The variant reading a by columns (a transposed): one multiply by lda a step along k.
      std::unique_ptr<llvm::Module> at = detail::emit_tile_gemm(t, bits, ctx, true);
      detail::verify_module(*at);
      EXPECT_TRUE(contains(detail::module_text(*at), "define void @" + detail::tile_symbol(t, bits) + "_at("));
    }
  EXPECT_EQ(detail::tile_symbol(DType::Float32, 512), "arrayc_tile_f32_12x32_512");
  EXPECT_EQ(detail::tile_symbol(DType::Float64, 256), "arrayc_tile_f64_6x8_256");
}

// ---- The kernel itself, against a plain loop ------------------------------------------------------

template <typename T>
void check_direct(int64_t m, int64_t k, int64_t n, int64_t a_pad, int b_layout) {
  SCOPED_TRACE("direct m, k, n = " + std::to_string(m) + ", " + std::to_string(k) + ", " + std::to_string(n) +
               " layout " + std::to_string(b_layout));
  int64_t lda = k + a_pad;
  std::vector<T> a(std::max<int64_t>(1, 2 * std::max(m, k) * (std::max(m, k) + a_pad))), b(std::max<int64_t>(1, 2 * k * n)),
      c(std::max<int64_t>(1, m * n), T(NAN));
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<T>(static_cast<double>((i * 7) % 13) - 6);
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<T>(static_cast<double>((i * 5) % 11) * 0.25 - 1);
  // a with the same layouts: rows contiguous (read in place), transposed, every other column
  detail::MatrixRef ar = b_layout == 0   ? detail::MatrixRef{a.data(), m, k, lda, 1}
                         : b_layout == 1 ? detail::MatrixRef{a.data(), m, k, 1, m + a_pad}
                                         : detail::MatrixRef{a.data(), m, k, 2 * lda, 2};
  // b row-major k x n, stored as its transpose (n x k), or every other column of a k x 2n
  detail::MatrixRef br = b_layout == 0   ? detail::MatrixRef{b.data(), k, n, n, 1}
                         : b_layout == 1 ? detail::MatrixRef{b.data(), k, n, 1, k}
                                         : detail::MatrixRef{b.data(), k, n, 2 * n, 2};
  detail::tiled_gemm(dtype_of<T>(), ar, br, c.data());
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double want = 0;
      for (int64_t p = 0; p < k; ++p)
        want += static_cast<double>(a[i * ar.row_stride + p * ar.col_stride]) * b[p * br.row_stride + j * br.col_stride];
      // Small integers and quarters: every partial sum is exact in float32.
      ASSERT_EQ(static_cast<double>(c[i * n + j]), want) << "at " << i << ", " << j;
    }
}

TEST(TileKernel, EdgeShapesAndPanels) {
  for (int packed : {-1, 1}) {
  SCOPED_TRACE(packed > 0 ? "packed path" : "blocks path");
  detail::set_tiled_packed(packed);
  for (int layout : {0, 1, 2}) {
    check_direct<float>(0, 5, 3, 0, layout);
    check_direct<float>(7, 0, 3, 0, layout);  // k == 0: zeros
    check_direct<double>(5, 0, 1, 0, layout);
    check_direct<float>(3, 5, 0, 0, layout);
    check_direct<float>(1, 1, 1, 0, layout);
    check_direct<float>(13, 31, 70, 3, layout);    // partial tiles both ways
    check_direct<double>(25, 45, 17, 0, layout);
    check_direct<float>(30, 1001, 40, 1, layout);  // several panels of k
    check_direct<double>(12, 700, 33, 0, layout);
    check_direct<float>(97, 161, 65, 0, layout);  // k one past a panel's depth at 512 bits
  }
  }
  detail::set_tiled_packed(0);
}

TEST(TileKernel, BlocksForThreadsAndCache) {
  for (int bits : {256, 512})
    for (DType t : {DType::Float32, DType::Float64})
      for (int threads : {1, 2, 16})
        for (const auto& s : std::vector<std::array<int64_t, 3>>{{256, 784, 256}, {1000, 1000, 1000}, {7, 5, 3}, {4096, 64, 8}}) {
          detail::TileBlocks bl = detail::tile_blocks(t, s[0], s[2], s[1], threads, bits);
          int64_t tr = detail::tile_rows(bits), tc = detail::tile_cols(t, bits);
          SCOPED_TRACE(std::to_string(bits) + " bits, " + std::to_string(threads) + " threads, " + std::to_string(s[0]) +
                       " x " + std::to_string(s[1]) + " x " + std::to_string(s[2]));
          EXPECT_EQ(bl.rows % tr, 0);
          EXPECT_EQ(bl.cols % tc, 0);
          bool whole_tiles = bl.rows == tr && bl.cols == tc;  // cannot split further
          if (!whole_tiles) {
            EXPECT_GE(bl.count(s[0], s[2]), std::min<int64_t>(threads, ((s[0] + tr - 1) / tr) * ((s[2] + tc - 1) / tc)));
            int64_t elem = t == DType::Float64 ? 8 : 4;
            EXPECT_LE((bl.rows + bl.cols) * std::min(s[1], detail::tile_depth(t, bits)) * elem, 1 << 20);
          }
        }
  // The packed path's tasks: whole tiles, a's rows within 256 KiB over a step, two a thread where
  // the tiles allow.
  for (int bits : {256, 512})
    for (DType t : {DType::Float32, DType::Float64})
      for (int threads : {1, 2, 16})
        for (const auto& s : std::vector<std::array<int64_t, 3>>{{4096, 4096, 4096}, {2048, 784, 256}, {24, 5000, 4096}, {7, 5, 3}}) {
          SCOPED_TRACE("packed, " + std::to_string(bits) + " bits, " + std::to_string(threads) + " threads, " +
                       std::to_string(s[0]) + " x " + std::to_string(s[1]) + " x " + std::to_string(s[2]));
          detail::TilePackedPlan plan = detail::tile_packed_plan(t, s[0], s[2], s[1], threads, bits);
          int64_t tr = detail::tile_rows(bits), tc = detail::tile_cols(t, bits), elem = t == DType::Float64 ? 8 : 4;
          int64_t row_tiles = (s[0] + tr - 1) / tr, panels = (s[2] + tc - 1) / tc;
          EXPECT_EQ(plan.rows % tr, 0);
          EXPECT_GE(plan.panels, 1);
          EXPECT_LE(plan.rows * std::min(s[1], detail::tile_depth(t, bits)) * elem, 256 << 10);
          int64_t tasks = ((s[0] + plan.rows - 1) / plan.rows) * ((panels + plan.panels - 1) / plan.panels);
          EXPECT_GE(tasks, std::min<int64_t>(2 * threads, row_tiles * panels));
        }
  // The W9 layer on 16 threads with AVX-512: 16 blocks of 72 x 64.
  detail::TileBlocks w9 = detail::tile_blocks(DType::Float32, 256, 256, 784, 16, 512);
  EXPECT_EQ(w9.rows, 72);
  EXPECT_EQ(w9.cols, 64);
  EXPECT_EQ(w9.count(256, 256), 16);
}

}  // namespace
