// The GPU matrix-product kernel without a GPU: which kernel a product gets (tile, layouts, vector
// loads), the structure of its PTX (register-tile FMAs, 16-byte shared and global loads, one
// barrier per k-step, nothing spilled to local memory), the tuning override and its errors.
#include "codegen/nvptx/gemm.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>

#include "arrayc/arrayc.h"
#include "ir/build.h"
#include "kernel/half_table.h"
#include "passes/products.h"
#include "support/errors.h"
#include "support/pipeline.h"

namespace {

using namespace arrayc;
using detail::choose_gemm;
using detail::GemmProblem;
using arrayc_test::ptx_count;

GemmProblem problem(DType t, int64_t m, int64_t k, int64_t n, int64_t a_rs, int64_t a_cs, int64_t b_rs, int64_t b_cs) {
  GemmProblem p;
  p.dtype = t;
  p.m = m;
  p.k = k;
  p.n = n;
  p.a_rs = a_rs;
  p.a_cs = a_cs;
  p.b_rs = b_rs;
  p.b_cs = b_cs;
  return p;
}

constexpr int kSMs = 132;

TEST(GemmTest, ChoosesTileLayoutAndVectorLoads) {
  // W5: x . x^T, both operands contiguous along k.
  EXPECT_EQ(choose_gemm(problem(DType::Float32, 3000, 3000, 3000, 3000, 1, 1, 3000), kSMs).name(),
            "gemm_float32_128x128x16_8x8_ak4_bk4");
  // W3: w (784 x 10) is contiguous along n, but rows of 40 bytes rule out 16-byte loads.
  EXPECT_EQ(choose_gemm(problem(DType::Float32, 10000, 784, 10, 784, 1, 10, 1), kSMs).name(),
            "gemm_float32_32x16x32_2x2_ak4_bn1");
  // W4 in float64: two elements per 16-byte load, on the tensor cores (m16n8k4 on sm_90).
  EXPECT_EQ(choose_gemm(problem(DType::Float64, 1000, 1000, 1000, 1000, 1, 1000, 1), kSMs).name(),
            "gemm_float64_64x64x16_8x4_ak2_bn2_mma_s4_k4");
  // Too few big tiles to fill the GPU: smaller ones.
  EXPECT_EQ(choose_gemm(problem(DType::Float32, 100, 100, 100, 100, 1, 100, 1), kSMs).tile.bm, 32);
  // A transposed A (contiguous along m); an operand with no unit stride.
  EXPECT_EQ(choose_gemm(problem(DType::Float32, 2048, 2048, 2048, 1, 2048, 2048, 1), kSMs).name(),
            "gemm_float32_128x128x16_8x8_am4_bn4");
  EXPECT_EQ(choose_gemm(problem(DType::Float32, 2048, 2048, 2048, 2, 4096, 2048, 1), kSMs).name(),
            "gemm_float32_128x128x16_8x8_as1_bn4");
  // A first element off 16-byte alignment: scalar loads for that operand only.
  GemmProblem p = problem(DType::Float32, 3000, 3000, 3000, 3000, 1, 1, 3000);
  p.a_addr = 4;
  EXPECT_EQ(choose_gemm(p, kSMs).name(), "gemm_float32_128x128x16_8x8_ak1_bk4");
  // Batches: a batch stride that is not a whole number of vectors rules them out.
  p = problem(DType::Float32, 64, 64, 64, 64, 1, 64, 1);
  p.batch = 3;
  p.a_bs = 4098;
  p.b_bs = 0;
  // (12 small tiles for 132 SMs: the narrow tile, twice as many.)
  EXPECT_EQ(choose_gemm(p, kSMs).name(), "gemm_float32_32x16x32_2x2_ak1_bn4");
}

TEST(GemmTest, PtxIsARegisterTiledLoopOverSharedMemory) {
  detail::GemmKernel g = choose_gemm(problem(DType::Float32, 3000, 3000, 3000, 3000, 1, 1, 3000), kSMs);
  std::string ptx = detail::emit_gemm_ptx(g, 90).ptx;
  const detail::GemmTile& t = g.tile;
  // The k-step's products, once each (the k-step loop is unrolled by two): tm * tn FMAs per k.
  EXPECT_EQ(ptx_count(ptx, "fma.rn.f32"), 2 * t.tm * t.tn * t.bk) << ptx;
  // Each k reads the thread's A rows and B columns as 16-byte vectors, and nothing else.
  EXPECT_EQ(ptx_count(ptx, "ld.shared.v4.f32"), 2 * (t.tm / 4 + t.tn / 4) * t.bk);
  EXPECT_EQ(ptx_count(ptx, "ld.shared.f32"), 0);
  EXPECT_GE(ptx_count(ptx, "ld.global.nc.v4.f32"), 2);
  EXPECT_GE(ptx_count(ptx, "bar.sync"), 2);
  EXPECT_EQ(ptx.find(".local"), std::string::npos) << "the register tile spilled";
  EXPECT_NE(ptx.find(".entry arrayc_gemm_float32_128x128x16_8x8_ak4_bk4"), std::string::npos);

  // float64 on the tensor cores: per k-slice of 4 on sm_90, 8 m16n8k4 mma (a 32 x 32 warp tile of
  // 16 x 8 ones) from 2 x 2 + 4 x 1 shared reads; on sm_80, 16 m8n8k4 mma from 4 + 4 reads; no
  // FMAs in the product. The tiles arrive by cp.async (16 bytes, zero-filled at the edges) into
  // dynamic shared memory, 4 stages of 64 x (16 + 4) and 16 x (64 + 4) doubles.
  detail::GemmKernel d = choose_gemm(problem(DType::Float64, 1000, 1000, 1000, 1000, 1, 1000, 1), kSMs);
  ASSERT_TRUE(d.mma);
  std::string mma = detail::emit_gemm_ptx(d, 90).ptx;
  auto count = [](const std::string& ptx, const std::string& what) {  // ptx_count wants its operands on the line
    int n = 0;
    for (size_t at = ptx.find(what); at != std::string::npos; at = ptx.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count(mma, "mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64"), (d.tile.bk / 4) * 8);
  EXPECT_EQ(ptx_count(mma, "ld.shared.f64"), (d.tile.bk / 4) * 8);
  std::string ampere = detail::emit_gemm_ptx(d, 80).ptx;
  EXPECT_EQ(count(ampere, "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64"), (d.tile.bk / 4) * 16);
  EXPECT_EQ(ptx_count(ampere, "ld.shared.f64"), (d.tile.bk / 4) * 8);
  EXPECT_EQ(ptx_count(mma, "fma.rn.f64"), 0);
  EXPECT_EQ(mma.find(".local"), std::string::npos);
  EXPECT_EQ(count(mma, "cp.async.cg.shared.global"), 4 * (64 * 16 + 16 * 64) / (128 * 2));  // 3 ahead + 1 in the loop
  EXPECT_EQ(count(mma, "cp.async.wait_group 2"), 1);
  EXPECT_NE(mma.find(".extern .shared .align 16"), std::string::npos);
  EXPECT_EQ(detail::gemm_dynamic_shared(d, 90), 4u * (64 * 20 + 16 * 68) * 8);
  EXPECT_EQ(detail::gemm_dynamic_shared(d, 75), 0u);
  // The same tile on FMAs (before sm_80, or ARRAYC_GEMM_TILE=.../simt).
  EXPECT_EQ(detail::emit_gemm_ptx(d, 75).ptx.find("mma.sync"), std::string::npos);
  d.mma = false;
  std::string ptx64 = detail::emit_gemm_ptx(d, 90).ptx;
  EXPECT_EQ(ptx_count(ptx64, "fma.rn.f64"), 2 * d.tile.tm * d.tile.tn * d.tile.bk);
  EXPECT_EQ(ptx_count(ptx64, "ld.shared.v2.f64"), 2 * (d.tile.tm / 2 + d.tile.tn / 2) * d.tile.bk);
  EXPECT_GE(ptx_count(ptx64, "ld.global.nc.v2.f64"), 2);
  EXPECT_EQ(ptx64.find(".local"), std::string::npos);
}

// float64 on Hopper's m16n8kK shapes (ARRAYC_GEMM_TILE=.../m16kK): per k-slice of K, a 32 x 32
// warp tile is 2 x 4 mma tiles, read as 2 x K/2 A and 4 x K/4 B fragment elements; sm_80 runs
// the same kernel on m8n8k4.
TEST(GemmTest, Float64HopperShapes) {
  GemmProblem p = problem(DType::Float64, 1000, 1000, 1000, 1000, 1, 1000, 1);
  for (int k : {4, 8, 16}) {
    SCOPED_TRACE(k);
    std::string forced = "64x64x16/8x4/m16k" + std::to_string(k);
    setenv("ARRAYC_GEMM_TILE", forced.c_str(), 1);
    detail::GemmKernel g = choose_gemm(p, kSMs);
    ASSERT_TRUE(g.mma);
    EXPECT_EQ(g.name(), "gemm_float64_64x64x16_8x4_ak2_bn2_mma_s3_k" + std::to_string(k));
    std::string ptx = detail::emit_gemm_ptx(g, 90).ptx;
    int mmas = 0;
    std::string op = "mma.sync.aligned.m16n8k" + std::to_string(k) + ".row.col.f64.f64.f64.f64";
    for (size_t at = ptx.find(op); at != std::string::npos; at = ptx.find(op, at + 1)) ++mmas;
    EXPECT_EQ(mmas, (16 / k) * 8);
    EXPECT_EQ(ptx_count(ptx, "ld.shared.f64"), (16 / k) * (2 * k / 2 + 4 * k / 4));
    EXPECT_EQ(ptx_count(ptx, "fma.rn.f64"), 0);
    EXPECT_EQ(ptx.find(".local"), std::string::npos);
    std::string old = detail::emit_gemm_ptx(g, 80).ptx;
    EXPECT_EQ(old.find("m16n8k"), std::string::npos);
    EXPECT_NE(old.find("mma.sync.aligned.m8n8k4.row.col.f64"), std::string::npos);
  }
  setenv("ARRAYC_GEMM_TILE", "64x64x16/8x4/m8k4", 1);
  EXPECT_EQ(choose_gemm(p, kSMs).name(), "gemm_float64_64x64x16_8x4_ak2_bn2_mma_s3");
  setenv("ARRAYC_GEMM_TILE", "64x64x8/8x4/m16k16", 1);
  EXPECT_ARRAYC_ERROR(choose_gemm(p, kSMs), "ARRAYC_GEMM_TILE=64x64x8/8x4/m16k16: /m16kK and /m8k4 are float64 "
                                            "tensor-core shapes, which this tile cannot use for float64");
  setenv("ARRAYC_GEMM_TILE", "64x64x16/8x4/m16k2", 1);
  EXPECT_ARRAYC_ERROR(choose_gemm(p, kSMs), "expected BMxBNxBK/TMxTN[/sS][/simt][/wg[/cp|/c1|/c2]][/m16kK|/m8k4]");
  p.dtype = DType::Float32;
  setenv("ARRAYC_GEMM_TILE", "64x64x16/8x4/m16k8", 1);
  EXPECT_ARRAYC_ERROR(choose_gemm(p, kSMs), "cannot use for float32");
  unsetenv("ARRAYC_GEMM_TILE");
}

TEST(GemmTest, ForcedTileAndItsErrors) {
  GemmProblem p = problem(DType::Float32, 3000, 3000, 3000, 3000, 1, 1, 3000);
  setenv("ARRAYC_GEMM_TILE", "64x64x16/4x4", 1);
  EXPECT_EQ(choose_gemm(p, kSMs).name(), "gemm_float32_64x64x16_4x4_ak4_bk4");
  setenv("ARRAYC_GEMM_TILE", "64x64", 1);
  EXPECT_ARRAYC_ERROR(choose_gemm(p, kSMs),
                      "ARRAYC_GEMM_TILE=64x64: expected BMxBNxBK/TMxTN[/sS][/simt][/wg[/cp|/c1|/c2]][/m16kK|/m8k4] (S: 2 to 8 stages; K: 4, 8 "
                      "or 16), e.g. 128x128x8/8x4/s3");
  setenv("ARRAYC_GEMM_TILE", "64x64x16/8x4/s1", 1);
  EXPECT_ARRAYC_ERROR(choose_gemm(p, kSMs), "expected BMxBNxBK/TMxTN[/sS][/simt]");
  setenv("ARRAYC_GEMM_TILE", "64x64x16/8x4/s4", 1);
  EXPECT_ARRAYC_ERROR(choose_gemm(p, kSMs), "ARRAYC_GEMM_TILE=64x64x16/8x4/s4: stages are for the tensor cores, which this "
                                            "tile cannot use for float32 (TF32 is off)");
  p.tf32 = true;
  EXPECT_EQ(choose_gemm(p, kSMs).name(), "gemm_float32_64x64x16_8x4_ak4_bk4_tf32_s4");
  setenv("ARRAYC_GEMM_TILE", "64x64x16/8x4/simt", 1);
  EXPECT_EQ(choose_gemm(p, kSMs).name(), "gemm_float32_64x64x16_8x4_ak4_bk4");
  p.tf32 = false;
  setenv("ARRAYC_GEMM_TILE", "96x64x16/4x4", 1);
  EXPECT_ARRAYC_ERROR(choose_gemm(p, kSMs), "cannot be used for float32: every size must be a power of two");
  setenv("ARRAYC_GEMM_TILE", "128x128x8/2x2", 1);
  EXPECT_ARRAYC_ERROR(choose_gemm(p, kSMs), "it gives 4096 threads per block (32 to 1024 work)");
  setenv("ARRAYC_GEMM_TILE", "128x128x64/8x8", 1);
  EXPECT_ARRAYC_ERROR(choose_gemm(p, kSMs), "it needs 135168 bytes of shared memory");
  setenv("ARRAYC_GEMM_TILE", "128x128x16/16x16", 1);
  EXPECT_ARRAYC_ERROR(choose_gemm(p, kSMs), "more than 128 accumulators per thread");
  unsetenv("ARRAYC_GEMM_TILE");
}

// TF32, when allowed: float32 products on the m16n8k8 tensor-core instruction, each operand
// rounded to TF32 first (cvt.rna); never for Gram products or products with few columns.
TEST(GemmTest, Tf32OnlyWhenAllowed) {
  GemmProblem p = problem(DType::Float32, 4096, 4096, 4096, 4096, 1, 4096, 1);
  EXPECT_FALSE(choose_gemm(p, kSMs).mma);
  p.tf32 = true;
  detail::GemmKernel g = choose_gemm(p, kSMs);
  ASSERT_TRUE(g.mma);
  EXPECT_EQ(g.name(), "gemm_float32_256x128x32_16x8_ak4_bn4_tf32_s3");
  std::string ptx = detail::emit_gemm_ptx(g, 90).ptx;
  // A 64 x 64 warp tile: 4 x 8 mma tiles per k-slice of 8; each slice reads 4 x 4 A and 8 x 2 B
  // fragment elements, each rounded once.
  int mmas = 0;
  for (size_t at = ptx.find("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"); at != std::string::npos;
       at = ptx.find("mma.sync", at + 1))
    ++mmas;
  EXPECT_EQ(mmas, (g.tile.bk / 8) * 32);
  EXPECT_EQ(ptx_count(ptx, "cvt.rna.tf32.f32"), (g.tile.bk / 8) * (16 + 16));
  EXPECT_EQ(ptx.find(".local"), std::string::npos);
  p.gram = true;  // x @ x.T stays exact (its mirror relies on the FMAs' symmetry)
  p.b_rs = 1, p.b_cs = 4096;
  EXPECT_FALSE(choose_gemm(p, kSMs).mma);
  GemmProblem w3 = problem(DType::Float32, 10000, 784, 10, 784, 1, 10, 1);
  w3.tf32 = true;
  EXPECT_FALSE(choose_gemm(w3, kSMs).mma);
}

// `:fused` names what computes a product: a BLAS call on the CPU, the tiled kernel on a GPU
// (graphs of parameters need no GPU).
TEST(GemmTest, ProductReasonNamesTheDevicesKernel) {
  for (Device d : {cpu(), Device{Device::Kind::GPU, 0}}) {
    detail::NodeRef x = detail::make_param(0, DType::Float32, {64, 32}, d), w = detail::make_param(1, DType::Float32, {32, 48}, d);
    detail::NodeRef v = detail::make_param(2, DType::Float32, {32, 1}, d);
    const bool on_cpu = d.kind == Device::Kind::CPU;
    EXPECT_EQ(detail::product_reason(*detail::make_dot(x, w)),
              on_cpu ? "matrix product (BLAS call)" : "matrix product (tiled product kernel)");
    EXPECT_EQ(detail::product_reason(*detail::make_dot(x, detail::make_transpose(x, {1, 0}))),
              on_cpu ? "matrix product (BLAS call); product-structure: x @ x.T, one triangle (syrk), mirrored"
                     : "matrix product (tiled product kernel); product-structure: x @ x.T, the tiles of one triangle, mirrored");
    EXPECT_EQ(detail::product_reason(*detail::make_dot(x, v)),
              on_cpu ? "matrix product (BLAS call); product-structure: one row or column, gemv"
                     : "matrix product (tiled product kernel); product-structure: one row or column");
  }
}

TEST(GemmTest, InspectShowsTheProductKernelsPtx) {
  Array x = array(std::vector<float>(64 * 48, 1.0f), {64, 48});
  Stages s = inspect({sum(dot(x, transpose(x)), {0})});  // a reduction along an axis: a kernel of its own
  std::string ptx = s.ptx(90);
  EXPECT_NE(ptx.find("// ---- gemm_float32_32x32x32_2x2_ak4_bk4_gram\n"), std::string::npos) << ptx.substr(0, 2000);
  EXPECT_LT(ptx.find("// ---- gemm_"), ptx.find("// ---- sum"));  // in step order

  // On the CPU the product's tile is chosen only when its PTX is asked for, so a bad tuning
  // variable fails there, with its message, and not the inspection itself.
  setenv("ARRAYC_GEMM_TILE", "64x64", 1);
  Stages t = inspect({dot(x, transpose(x))});
  EXPECT_ARRAYC_ERROR(t.ptx(90), "ARRAYC_GEMM_TILE=64x64: expected BMxBNxBK/TMxTN");
  unsetenv("ARRAYC_GEMM_TILE");
}

// The PTX made without a GPU follows the matmul precision of the inspection: at High, a float32
// x @ w of enough rows for sm_90 is w copied along k, then the TF32 warpgroup kernel; for sm_80,
// mma.sync on TF32; at Highest, the exact kernel. A long float16 chain shows its table's lookup.
TEST(GemmTest, PtxWithoutAGpuFollowsThePrecision) {
  Array x = zeros({1024, 512}), w = zeros({512, 1024});
  set_matmul_precision(MatmulPrecision::High);
  Stages high = inspect({dot(x, w)});
  set_matmul_precision(MatmulPrecision::Highest);
  const std::string h90 = high.ptx(90), h80 = high.ptx(80), exact = inspect({dot(x, w)}).ptx(90);
  EXPECT_NE(h90.find("// ---- transpose_32bit (B)\n"), std::string::npos) << h90.substr(0, 300);
  EXPECT_NE(h90.find("_ak4_bk4_tf32_s4_wg_tma\n"), std::string::npos);
  EXPECT_EQ(h80.find("transpose_32bit"), std::string::npos);
  EXPECT_NE(h80.find("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"), std::string::npos);
  EXPECT_EQ(exact.find("tf32"), std::string::npos);
  const int64_t saved = detail::half_table_min_elements();
  detail::set_half_table_min_elements(1000);
  Array h = cast(arange(1000), DType::Float16).eval();  // an array in memory
  const std::string half = inspect({exp(h) * 0.5}).ptx(90);
  detail::set_half_table_min_elements(saved);
  EXPECT_NE(half.find("// ---- half_lookup_16\n"), std::string::npos) << half.substr(0, 300);
}


// The largest basic block (split at labels and branches) of the kernel `name` in `ptx`: how many
// `store`s it holds, and how many `load`s come before them in it.
std::pair<int, int> largest_store_block(const std::string& ptx, const std::string& name, const std::string& store,
                                        const std::string& load) {
  const size_t at = ptx.find("// ---- " + name);
  if (at == std::string::npos) return {-1, -1};
  int most = 0, in_block = 0, loads_before = 0, loads = 0;
  std::istringstream lines(ptx.substr(at));
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("$L__", 0) == 0 || line.find(" bra") != std::string::npos) {
      if (in_block > most) most = in_block, loads_before = loads;
      in_block = loads = 0;
    }
    if (line.find(load) != std::string::npos) ++loads;
    if (line.find(store) != std::string::npos) ++in_block;
  }
  return {most, loads_before};
}

// A fused epilogue that loads memory (W9's bias), where the whole tile is inside the product: every
// run's loads and results come before one branch-free block of the thread's vector stores; the
// edge tiles keep the run-by-run path. Run by run, each run's bias load waited for the run before
// it, and the epilogue cost half a separate pass. At 4096 x 256 x 4096:
// - on TF32, the 128 x 256 warpgroup tile: 256 consumer threads of 128 accumulators, 64 runs of
//   two, b loaded at each of the thread's 64 columns once for both its rows;
// - in exact float32, the 128 x 128 FMA tile: 8 x 8 a thread, 16 runs of four, 8 columns of b.
TEST(GemmTest, EpilogueOfAWholeTileStoresWithoutBranches) {
  Array x = zeros({4096, 256}), w = zeros({256, 4096}), b = zeros({4096}).eval();  // b in memory
  set_matmul_precision(MatmulPrecision::High);
  const std::string tf32 = inspect({maximum(dot(x, w) + b, 0.0)}).ptx(90);
  set_matmul_precision(MatmulPrecision::Highest);
  const std::string exact = inspect({maximum(dot(x, w) + b, 0.0)}).ptx(90);
  EXPECT_EQ(largest_store_block(tf32, "gemm_float32_128x256x32_4x32_ak4_bk4_tf32_s4_wg_tma_ep_fused_add_maximum",
                                "st.global.v2.f32", "ld.global.nc.f32"),
            std::make_pair(64, 64))
      << tf32.substr(0, 2000);
  EXPECT_EQ(largest_store_block(exact, "gemm_float32_128x128x16_8x8_ak4_bn4_ep_fused_add_maximum", "st.global.v4.f32",
                                "ld.global.nc.f32"),
            std::make_pair(16, 8))
      << exact.substr(0, 2000);
}

// A reduction epilogue (W7's sum(M * M), a mean squared error): the product kernel folds its
// tiles' values into one per thread, then per block, and the last block to finish (by an atomic
// counter, after a fence) combines the blocks' partials: one launch, the product never stored.
// float32 sums accumulate in double. A reduction along an axis runs as a kernel of its own. In
// the TMA kernel the consumer warpgroups alone reduce, meeting at a named barrier.
TEST(GemmTest, ReductionEpilogueInTheProductKernel) {
  Array a = zeros({100, 100}).eval(), y = zeros({100, 100}).eval();
  Array m = dot(a, a);
  const std::string w7 = inspect({sum(m * m)}).ptx(90);
  EXPECT_EQ(w7.find("not inside the product kernel"), std::string::npos) << w7.substr(0, 2000);
  // A Gram product's too: both triangles' tiles fold, the mirrored ones as they are stored.
  Array g = array(std::vector<float>(64 * 48, 1.0f), {64, 48});
  EXPECT_NE(inspect({sum(dot(g, transpose(g)))}).ptx(90).find("// ---- gemm_float32_32x32x32_2x2_ak4_bk4_gram_ep_sum\n"),
            std::string::npos);
  EXPECT_NE(w7.find("_ep_fused_sum_mul"), std::string::npos) << w7.substr(0, 2000);
  EXPECT_NE(w7.find("atom.global.add.u32"), std::string::npos);
  EXPECT_NE(w7.find("membar.gl"), std::string::npos);
  EXPECT_NE(w7.find("add.rn.f64"), std::string::npos);
  // The product kernel's one float store: the result (the partials are volatile f64 stores).
  const std::string gemm = w7.substr(0, w7.find("// ---- ", 8));
  size_t stores = 0;
  for (size_t at = gemm.find("st.global"); at != std::string::npos; at = gemm.find("st.global", at + 1)) ++stores;
  EXPECT_EQ(stores, 1u) << gemm;
  EXPECT_NE(gemm.find("st.volatile.global.f64"), std::string::npos);
  const std::string mse = inspect({mean((m - y) * (m - y))}).ptx(90);
  EXPECT_EQ(mse.find("not inside the product kernel"), std::string::npos) << mse.substr(0, 2000);
  const std::string rows = inspect({sum(m, {1})}).ptx(90);
  EXPECT_NE(rows.find("// not inside the product kernel: it reduces along some axes only\n"), std::string::npos)
      << rows.substr(0, 2000);
  Array x = zeros({4096, 256}).eval(), w = zeros({4096, 256}).eval();
  set_matmul_precision(MatmulPrecision::High);
  const std::string tf32 = inspect({sum(dot(x, transpose(w)))}).ptx(90);
  set_matmul_precision(MatmulPrecision::Highest);
  EXPECT_EQ(tf32.find("not inside the product kernel"), std::string::npos) << tf32.substr(0, 2000);
  EXPECT_NE(tf32.find("// ---- gemm_float32_128x256x32_4x32_ak4_bk4_tf32_s4_wg_tma_ep_sum\n"), std::string::npos)
      << tf32.substr(0, 2000);
  EXPECT_NE(tf32.find("bar.sync 1, 256;"), std::string::npos);  // the 256 consumer threads
}

}  // namespace
