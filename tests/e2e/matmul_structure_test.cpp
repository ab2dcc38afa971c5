// Matrix products with structure and with their consumers fused in (issue 29): x @ x.T computed
// as one triangle (syrk) and mirrored, matrix-vector products, epilogues (bias, activation,
// scale, cast) fused into the product's step, OpenBLAS's core and thread choice. Every result
// is checked against the reference interpreter; the decisions are checked as `:fused` text.
#include <cblas.h>
#include <dlfcn.h>

#include <cmath>

#include "backend/host/blas_config.h"
#include "backend/host/tiled.h"
#include "support/data.h"
#include "support/devices.h"
#include "support/pipeline.h"
#include "support/errors.h"
#include "support/reference.h"

namespace {

using namespace arrayc;
using namespace arrayc_test;

class MatmulStructure : public DeviceTest {};
ARRAYC_DEVICE_SUITE(MatmulStructure);


const char* kGram = "product-structure: x @ x.T";

// Whether a square result is exactly symmetric (a mirrored triangle is).
template <typename T>
bool exactly_symmetric(const Array& c) {
  std::vector<T> v = c.to_vector<T>();
  int64_t n = c.shape()[0];
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < i; ++j)
      if (!(v[i * n + j] == v[j * n + i]) && !(v[i * n + j] != v[i * n + j])) return false;
  return true;
}

TEST_P(MatmulStructure, GramProductsMatchTheInterpreter) {
  const int64_t shapes[][2] = {{2, 3}, {5, 1}, {17, 33}, {65, 63}, {300, 40}, {3, 0}, {0, 4}};
  for (const auto& s : shapes) {
    SCOPED_TRACE("x: " + std::to_string(s[0]) + " x " + std::to_string(s[1]));
    for (DType t : kFloatTypes) {
      SCOPED_TRACE(dt(t));
      Array x = random_array(t, {s[0], s[1]}, 31);
      EXPECT_MATCHES_REFERENCE(dot(x, transpose(x)));
      EXPECT_MATCHES_REFERENCE(dot(transpose(x), x));
      EXPECT_MATCHES_REFERENCE(matmul(x, transpose(x)));
      if (s[0] > 1 && s[1] > 0) {
        Array c = dot(x, transpose(x)).eval();
        // float32 and float64 go through syrk and a mirror: exactly symmetric. float16 and
        // bfloat16 products run as a general float32 product rounded at the end, which some
        // OpenBLAS cores (SkylakeX on the 16-core Xeon) sum in a different order for (i, j) and
        // (j, i): not checked for exact symmetry.
        if (t == DType::Float32) EXPECT_TRUE(exactly_symmetric<float>(c));
        else if (t == DType::Float64) EXPECT_TRUE(exactly_symmetric<double>(c));
      }
    }
  }
}

TEST_P(MatmulStructure, GramOfViewsAndComputedOperands) {
  for (DType t : kFloatTypes) {
    SCOPED_TRACE(dt(t));
    Array y = random_array(t, {40, 70}, 32).eval();
    Array x = transpose(y);  // [70, 40], read across its memory rows: syrk's transposed form
    EXPECT_MATCHES_REFERENCE(dot(x, transpose(x)));
    EXPECT_TRUE(contains(fused_text(dot(x, transpose(x))), kGram));
    Array e = exp(y * 0.1);  // a computed operand: materialized once, read twice
    EXPECT_MATCHES_REFERENCE(dot(e, transpose(e)));
    EXPECT_TRUE(contains(fused_text(dot(e, transpose(e))), kGram));
    // Non-finite values propagate as through a general product.
    Array z = make_array(t, {2, 3}, {1, NAN, 2, 3, INFINITY, -1});
    EXPECT_MATCHES_REFERENCE(dot(z, transpose(z)));
  }
}

// How `:fused` names a general float product on the device under test.
std::string product_text(bool gpu) { return gpu ? "matrix product (tiled product kernel)" : "matrix product (BLAS call)"; }

TEST_P(MatmulStructure, NotGramProducts) {
  Array x = random_array(DType::Float32, {6, 6}, 33), y = random_array(DType::Float32, {6, 6}, 34);
  for (const Array& p : {dot(x, transpose(y)), dot(x, x), dot(transpose(x), transpose(x)), dot(y, transpose(x))}) {
    std::string text = fused_text(p);
    EXPECT_FALSE(contains(text, kGram)) << text;
    EXPECT_TRUE(contains(text, product_text(on_gpu()))) << text;
    EXPECT_MATCHES_REFERENCE(p);
  }
  // A Gram product of integers is lowered to loops like any integer product.
  Array xi = random_array(DType::Int32, {5, 7}, 35);
  EXPECT_MATCHES_REFERENCE(dot(xi, transpose(xi)));
}

TEST_P(MatmulStructure, GramTextOnEachDevice) {
  Array x = random_array(DType::Float64, {8, 3}, 36);
  std::string text = fused_text(dot(x, transpose(x)));
  if (on_gpu()) EXPECT_TRUE(contains(text, "x @ x.T, the tiles of one triangle, mirrored")) << text;
  else EXPECT_TRUE(contains(text, "x @ x.T, one triangle (syrk), mirrored")) << text;
}

TEST_P(MatmulStructure, MatrixVectorProducts) {
  for (DType t : kFloatTypes) {
    Array a = random_array(t, {9, 13}, 37), v = random_array(t, {13}, 38), r = random_array(t, {1, 9}, 39);
    EXPECT_MATCHES_REFERENCE(dot(a, v));
    EXPECT_MATCHES_REFERENCE(dot(r, a));
    EXPECT_MATCHES_REFERENCE(dot(transpose(a), random_array(t, {9, 1}, 40)));
    EXPECT_TRUE(contains(fused_text(dot(r, a)), on_gpu() ? "one row or column" : "one row or column, gemv"));
    if (on_gpu()) EXPECT_FALSE(contains(fused_text(dot(r, a)), "gemv"));
  }
}

// ---- Epilogues ----------------------------------------------------------------------------------

TEST_P(MatmulStructure, EpiloguesMatchTheInterpreter) {
  // Shapes include several panels of rows (3000 x 500 f32 is 6 MB of product), one row, one
  // column, and empty ones.
  const int64_t sizes[][3] = {{5, 7, 3}, {1, 9, 6}, {6, 9, 1}, {0, 4, 3}, {4, 0, 3}, {300, 200, 100}, {3000, 20, 500}};
  for (const auto& s : sizes) {
    SCOPED_TRACE("m, k, n = " + std::to_string(s[0]) + ", " + std::to_string(s[1]) + ", " + std::to_string(s[2]));
    for (DType t : kFloatTypes) {
      SCOPED_TRACE(dt(t));
      Array x = random_array(t, {s[0], s[1]}, 41), w = random_array(t, {s[1], s[2]}, 42);
      Array b = random_array(t, {s[2]}, 43);
      Array d = dot(x, w);
      EXPECT_MATCHES_REFERENCE(maximum(d + b, 0.0));                 // a dense layer
      EXPECT_MATCHES_REFERENCE(d * 0.5 + 1.0);                       // scale and shift
      EXPECT_MATCHES_REFERENCE(where(d > 0.0, d, d * 0.1));          // leaky relu: the product read twice
      EXPECT_MATCHES_REFERENCE(cast(tanh(d + b), t == DType::Float32 ? DType::Float64 : DType::Float32));  // a cast
    }
  }
}

TEST_P(MatmulStructure, EpiloguesOfViewsBatchesAndGramProducts) {
  for (DType t : kFloatTypes) {
    SCOPED_TRACE(dt(t));
    Array x = random_array(t, {40, 40}, 44), w = random_array(t, {40, 40}, 45);
    Array c = random_array(t, {40, 40}, 46);
    EXPECT_MATCHES_REFERENCE(transpose(maximum(dot(x, w), 0.0)) + c);  // read across: whole product
    EXPECT_MATCHES_REFERENCE(maximum(dot(x, transpose(x)), 1.0));      // a Gram product's epilogue
    EXPECT_MATCHES_REFERENCE(dot(transpose(x), w) + c);                // transposed operand
    Array a3 = random_array(t, {3, 5, 7}, 47), b3 = random_array(t, {3, 7, 4}, 48);
    EXPECT_MATCHES_REFERENCE(exp(matmul(a3, b3) * 0.1));               // a batch
  }
}

TEST_P(MatmulStructure, EpilogueFusionAsText) {
  Array x = random_array(DType::Float32, {30, 20}, 49), w = random_array(DType::Float32, {20, 10}, 50);
  Array b = random_array(DType::Float32, {10}, 51);
  std::string text = fused_text(maximum(dot(x, w) + b, 0.0));
  EXPECT_EQ(text,
            "kernel 0: dot+fused_add_maximum (%2 dot, %6 add, %8 maximum)\n"
            "  materializes %8 float32[30, 10]: requested output\n"
            "  epilogue of %2 dot: " + product_text(on_gpu()) + "; its elementwise consumers run in the product's step\n");
  // A product whose consumers are in two kernels is materialized.
  Array d = dot(x, w);
  text = inspect({d + 1.0, sum(d * 2.0, {0})}, true).fused;
  EXPECT_TRUE(contains(text, "its consumers are in 2 kernels")) << text;
  EXPECT_MATCHES_REFERENCE(sum(exp(dot(x, w) * 0.1), {1}));
  // A requested product is materialized even when something else reads it too.
  text = inspect({d, d + 1.0}, true).fused;
  EXPECT_FALSE(contains(text, "epilogue of")) << text;
  // Two products in one elementwise kernel: the second is materialized.
  Array w2 = random_array(DType::Float32, {20, 10}, 52);
  text = fused_text(dot(x, w) + dot(x, w2));
  EXPECT_TRUE(contains(text, "its consumers' kernel takes another product")) << text;
  EXPECT_MATCHES_REFERENCE(dot(x, w) + dot(x, w2));
  // Turned off, the product and its consumers are two kernels.
  set_epilogue_fusion(false);
  text = fused_text(maximum(dot(x, w) + b, 0.0));
  set_epilogue_fusion(true);
  EXPECT_FALSE(contains(text, "epilogue of")) << text;
  EXPECT_TRUE(contains(text, "kernel 1: fused_add_maximum")) << text;
}

// A reduction of a product, or of elementwise work on it (W7's sum(M * M), a mean squared
// error), runs in the product's step: the product is never a buffer of the schedule.
TEST_P(MatmulStructure, ReductionEpilogues) {
  for (DType t : kFloatTypes) {
    SCOPED_TRACE(dt(t));
    Array x = random_array(t, {37, 29}, 70), w = random_array(t, {29, 23}, 71), y = random_array(t, {37, 23}, 72);
    Array b = random_array(t, {23}, 73), a = random_array(t, {29, 29}, 74);
    Array m = dot(a, a);
    EXPECT_MATCHES_REFERENCE(sum(m * m));                                // W7
    EXPECT_MATCHES_REFERENCE(sum(dot(x, w)));                            // the product itself
    EXPECT_MATCHES_REFERENCE(mean((dot(x, w) + b - y) * (dot(x, w) + b - y)));  // a mean squared error
    EXPECT_MATCHES_REFERENCE(max(dot(x, w)));
    EXPECT_MATCHES_REFERENCE(min(maximum(dot(x, w) + b, 0.0)));
    EXPECT_MATCHES_REFERENCE(sum(exp(dot(x, w) * 0.1), {1}));            // along the rows
    EXPECT_MATCHES_REFERENCE(sum(dot(x, w), {0}));                       // down the columns
    EXPECT_MATCHES_REFERENCE(prod(dot(x, w) * 0.01 + 1.0));
    EXPECT_MATCHES_REFERENCE(sum(dot(x, transpose(x))));                 // a Gram product
    EXPECT_MATCHES_REFERENCE(sum(dot(transpose(x), y)));                 // a transposed operand
    Array a3 = random_array(t, {3, 5, 7}, 75), b3 = random_array(t, {3, 7, 4}, 76);
    EXPECT_MATCHES_REFERENCE(sum(matmul(a3, b3)));                       // a batch
    EXPECT_MATCHES_REFERENCE(sum(matmul(a3, b3), {0, 2}));
    // NaN and inf propagate as in the unfused reduction.
    std::vector<double> v = random_values(37 * 29, 78);
    v[100] = NAN;
    Array xn = make_array(t, {37, 29}, v);
    EXPECT_MATCHES_REFERENCE(sum(dot(xn, w)));
    EXPECT_MATCHES_REFERENCE(max(dot(xn, w)));
    v[100] = INFINITY;  // row 3 of the product: inf times column 13 of w, of both signs
    EXPECT_EQ(cast(min(dot(make_array(t, {37, 29}, v), w)), DType::Float64).item<double>(), -INFINITY);
    EXPECT_EQ(cast(max(dot(make_array(t, {37, 29}, v), w)), DType::Float64).item<double>(), INFINITY);
    // An empty k: a product of zeros, reduced; empty products reduce to the identity.
    EXPECT_MATCHES_REFERENCE(sum(dot(zeros({4, 0}, t), zeros({0, 3}, t)) + 1.0));
    EXPECT_MATCHES_REFERENCE(sum(dot(zeros({0, 5}, t), zeros({5, 3}, t))));
  }
}

TEST_P(MatmulStructure, ReductionEpilogueAsTextAndOneLaunch) {
  Array a = random_array(DType::Float32, {50, 50}, 77).eval();
  Array m = dot(a, a);
  EXPECT_EQ(fused_text(sum(m * m)),
            "kernel 0: dot+fused_sum_mul (%1 dot, %2 mul, %3 sum)\n"
            "  materializes %3 float32[]: requested output\n"
            "  epilogue of %1 dot: " + product_text(on_gpu()) +
                "; its consumers and their reduction run in the product's step\n");
  Array s = sum(m * m);
  StatsDelta d = stats_delta([&] { s.eval(); });
  EXPECT_EQ(d.kernel_launches, 1);
  // On the CPU the fused reduction folds the same product in the same order as the unfused one.
  if (!on_gpu()) {
    set_epilogue_fusion(false);
    Array unfused = sum(m * m).eval();
    set_epilogue_fusion(true);
    EXPECT_EQ(unfused.item<float>(), sum(m * m).eval().item<float>());
  }
}

TEST_P(MatmulStructure, EpilogueStepIsOneLaunch) {
  Array x = random_array(DType::Float32, {64, 32}, 53).eval(), w = random_array(DType::Float32, {32, 16}, 54).eval();
  Array b = random_array(DType::Float32, {16}, 55).eval();
  Array y = maximum(dot(x, w) + b, 0.0);
  StatsDelta s = stats_delta([&] { y.eval(); });
  EXPECT_EQ(s.kernel_launches, 1);
  if (on_gpu()) return;  // the GPU's product kernel applies it to its tiles (gpu_products_test.cpp)
  // BLAS's panels, whatever the host (with AVX-512 the tiled kernel takes the larger products
  // below by default: tiled_product_test.cpp)
  detail::set_tiled_on_host(-1);
  std::string kernels = inspect({maximum(dot(x, w) + b, 0.0)}, true).kernels.at(0).kernel;
  EXPECT_TRUE(contains(kernels, "; BLAS sgemm: [64 x 32] . [32 x 16]")) << kernels;
  EXPECT_TRUE(contains(kernels, "; epilogue: the kernel below, on the whole product after BLAS")) << kernels;
  // A tall product of a small b runs in panels of about 1 MiB (524 rows of 500 floats).
  Array xt = random_array(DType::Float32, {3000, 20}, 60), wt = random_array(DType::Float32, {20, 500}, 61);
  kernels = inspect({maximum(dot(xt, wt), 0.0)}, true).kernels.at(0).kernel;
  EXPECT_TRUE(contains(kernels, "; epilogue: the kernel below, on each panel of 524 rows as BLAS computes it")) << kernels;
  // With a b larger than a panel, the whole product: each panel would pack b again.
  Array xb = random_array(DType::Float32, {600, 600}, 62), wb = random_array(DType::Float32, {600, 600}, 63);
  kernels = inspect({maximum(dot(xb, wb), 0.0)}, true).kernels.at(0).kernel;
  EXPECT_TRUE(contains(kernels, "on the whole product after BLAS")) << kernels;
  EXPECT_MATCHES_REFERENCE(maximum(dot(xb, wb), 0.0));
  detail::set_tiled_on_host(0);
}

// ---- OpenBLAS's configuration -----------------------------------------------------------------------

TEST(BlasConfig, EveryCandidateCoreComputesTheSameProducts) {
  std::string chosen = blas_info().core;
  std::vector<std::string> cores = detail::blas_core_candidates();
  Array x = random_array(DType::Float64, {70, 50}, 56), w = random_array(DType::Float64, {50, 30}, 57);
  for (const std::string& core : cores) {
    SCOPED_TRACE(core);
    detail::set_blas_core(core);
    EXPECT_EQ(blas_info().core, core);
    EXPECT_MATCHES_REFERENCE(dot(x, w));
    EXPECT_MATCHES_REFERENCE(dot(x, transpose(x)));
  }
  detail::set_blas_core("openblas");
  EXPECT_EQ(blas_info().core, blas_info().detected_core);
  EXPECT_MATCHES_REFERENCE(dot(x, w));
  detail::set_blas_core("default");
  EXPECT_EQ(blas_info().core, chosen);
}

TEST(BlasConfig, ThreadsFollowThePoolUnlessSet) {
  detail::set_blas_thread_count(1);
  EXPECT_EQ(blas_info().threads, 1);
  Array x = random_array(DType::Float32, {200, 300}, 58), w = random_array(DType::Float32, {300, 100}, 59);
  EXPECT_MATCHES_REFERENCE(dot(x, w));
  detail::set_blas_thread_count(0);
  EXPECT_MATCHES_REFERENCE(dot(x, w));
  EXPECT_NE(blas_info().str().find("OpenBLAS"), std::string::npos);
}

// OpenBLAS's idle workers sleep at once (2^4 cycles) instead of spinning for 2^28 beside the pool
// (blas_config.cpp), unless the environment says otherwise; the setting OpenBLAS read is checked.
TEST(BlasConfig, IdleThreadsSleepSoon) {
  BlasInfo info = blas_info();
  EXPECT_NE(info.str().find("; idle threads sleep " + info.idle_threads), std::string::npos) << info.str();
  if (std::getenv("OPENBLAS_THREAD_TIMEOUT") || std::getenv("GOTO_THREAD_TIMEOUT")) {
    EXPECT_EQ(info.idle_threads.rfind("as ", 0), 0u) << info.idle_threads;
    return;
  }
  if (openblas_get_parallel() != 1) GTEST_SKIP() << "this OpenBLAS has no thread server: " << info.idle_threads;
  EXPECT_EQ(info.idle_threads, "at once (2^4 cycles, arrayc's choice; OpenBLAS's own is 2^28, about 0.1 s)");
  auto timeout = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "openblas_thread_timeout"));
  ASSERT_NE(timeout, nullptr);
  EXPECT_EQ(timeout(), 4);
  EXPECT_EQ(std::getenv("OPENBLAS_THREAD_TIMEOUT"), nullptr);  // set only while OpenBLAS read it
  Array x = random_array(DType::Float32, {120, 90}, 60), w = random_array(DType::Float32, {90, 70}, 61);
  EXPECT_MATCHES_REFERENCE(dot(x, w));  // the restarted server computes
}

TEST(BlasConfig, BadCoreNames) {
  std::string before = blas_info().core;
  EXPECT_ARRAYC_ERROR(detail::set_blas_core("Bogus"),
                      "set_blas_core must be 'openblas', 'default', or one of Sandybridge, Haswell, Zen, SkylakeX, Cooperlake, got 'Bogus'");
  if (!__builtin_cpu_supports("avx512f"))
    EXPECT_ARRAYC_ERROR(detail::set_blas_core("SkylakeX"),
                        "set_blas_core=SkylakeX: this CPU lacks the instructions OpenBLAS's SkylakeX kernels use");
  EXPECT_EQ(blas_info().core, before);  // a refused switch changes nothing
}

}  // namespace
