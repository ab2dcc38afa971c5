// GPU products of float16 and bfloat16 without a GPU (issue 29): the schedule reads the 16-bit
// operands as they are (no widening kernels), the kernel it gets, and that kernel's PTX, pinned
// as text: mma.sync m16n8k16 with float32 accumulators, fragments by ldmatrix (.trans for an
// operand staged k-major), tiles by 16-byte cp.async, nothing spilled; before sm_80 the FMA
// kernel, widening each element as it loads it.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "arrayc/arrayc.h"
#include "codegen/nvptx/gemm.h"
#include "engine/compile.h"
#include "ir/build.h"
#include "passes/products.h"
#include "passes/schedule.h"
#include "support/errors.h"
#include "support/pipeline.h"

namespace {

using namespace arrayc;
using arrayc_test::ptx_count;
using detail::choose_gemm;
using detail::GemmProblem;

constexpr int kSMs = 132;

// m x k by k x n, A contiguous along k, B along n, 16-bit operands.
GemmProblem half_problem(DType t, int64_t m, int64_t k, int64_t n) {
  GemmProblem p;
  p.dtype = DType::Float32;
  p.in_dtype = t;
  p.half_mma = true;
  p.m = m, p.k = k, p.n = n;
  p.a_rs = k, p.a_cs = 1;
  p.b_rs = n, p.b_cs = 1;
  return p;
}

// The same on an sm_90 GPU: the warpgroup kernel allowed, with TMA loads, in clusters, or not.
GemmProblem hopper_problem(DType t, int64_t m, int64_t k, int64_t n, bool tma, bool clusters = false) {
  GemmProblem p = half_problem(t, m, k, n);
  p.wgmma = true;
  p.tma = tma;
  p.clusters = clusters;
  return p;
}

// DUMP_WGMMA_PTX=PREFIX writes a kernel's PTX to PREFIX_<what>.ptx, for ptxas by hand (the
// sm_90a kernels cannot run without an H100; ptxas -arch=sm_90a -v says what they would use).
void dump_ptx(const std::string& what, const std::string& ptx) {
  if (const char* prefix = std::getenv("DUMP_WGMMA_PTX")) {
    if (FILE* f = std::fopen((std::string(prefix) + "_" + what + ".ptx").c_str(), "w"))
      std::fputs(ptx.c_str(), f), std::fclose(f);
  }
}

// Occurrences of `what` anywhere (ptx_count wants an instruction followed by its operands).
int count(const std::string& ptx, const std::string& what) {
  int n = 0;
  for (size_t at = ptx.find(what); at != std::string::npos; at = ptx.find(what, at + 1)) ++n;
  return n;
}

// Each of `counts`: how often its text occurs in ptx.
void expect_counts(const std::string& ptx, const std::vector<std::pair<std::string, int>>& counts) {
  for (const auto& [what, n] : counts) EXPECT_EQ(count(ptx, what), n) << what;
}

TEST(GemmHalfTest, TensorCoreKernelPtx) {
  for (DType t : {DType::Float16, DType::BFloat16}) {
    SCOPED_TRACE(dtype_name(t));
    const std::string name = dtype_name(t), ab = t == DType::Float16 ? "f16.f16" : "bf16.bf16";
    detail::GemmKernel g = choose_gemm(half_problem(t, 4096, 4096, 4096), kSMs);
    ASSERT_TRUE(g.mma);
    EXPECT_EQ(g.name(), "gemm_" + name + "_float32_256x128x64_16x8_ak8_bn8_mma_s3");
    std::string ptx = detail::emit_gemm_ptx(g, 90).ptx;
    // A 64 x 64 warp tile: per k-slice of 16, 4 x 8 mmas from 4 ldmatrix.x4 of A (row-major in
    // shared memory: no transpose) and 4 of B (k-major: transposed), two n-tiles each.
    const int slices = g.tile.bk / 16;
    EXPECT_EQ(count(ptx, "mma.sync.aligned.m16n8k16.row.col.f32." + ab + ".f32"), slices * 4 * 8);
    EXPECT_EQ(count(ptx, "ldmatrix.sync.aligned.m8n8.x4.shared.b16"), slices * 4);
    EXPECT_EQ(count(ptx, "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"), slices * 4);
    EXPECT_EQ(ptx_count(ptx, "fma.rn.f32"), 0);
    // Per k-step each thread copies 256 x 64 / (256 x 8) runs of A and 128 x 64 / 2048 of B, 16
    // bytes each, issued in 3 places (2 stages ahead, unrolled, and once in the loop).
    EXPECT_EQ(count(ptx, "cp.async.cg.shared.global"), 3 * (8 + 4));
    EXPECT_EQ(ptx.find(".local"), std::string::npos) << "the register tile spilled";
    // Three stages of 256 x (64 + 8) and 64 x (128 + 8) 16-bit elements.
    EXPECT_EQ(detail::gemm_dynamic_shared(g, 90), 3u * (256 * 72 + 64 * 136) * 2);

    // A transposed A (contiguous along m) is staged k-major and read with ldmatrix.trans; a B
    // contiguous along k row-major, read without; W5's layout, x @ x.T, is a general product.
    GemmProblem p = half_problem(t, 4096, 4096, 4096);
    p.a_rs = 1, p.a_cs = 4096, p.b_rs = 1, p.b_cs = 4096;
    p.gram = true;
    g = choose_gemm(p, kSMs);
    EXPECT_EQ(g.name(), "gemm_" + name + "_float32_256x128x64_16x8_am8_bk8_mma_s3");
    ptx = detail::emit_gemm_ptx(g, 90).ptx;
    EXPECT_EQ(count(ptx, "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"), slices * 4);
    EXPECT_EQ(count(ptx, "ldmatrix.sync.aligned.m8n8.x4.shared.b16"), slices * 4);

    // Rows of 33 elements: no aligned 16-byte runs; those elements are copied one by one (a
    // 16-bit load and store), still on the tensor cores.
    g = choose_gemm(half_problem(t, 500, 33, 520), kSMs);
    EXPECT_EQ(g.name(), "gemm_" + name + "_float32_64x64x32_8x4_ak1_bn8_mma_s4");
    ptx = detail::emit_gemm_ptx(g, 90).ptx;
    EXPECT_GT(count(ptx, "mma.sync.aligned.m16n8k16"), 0);
    EXPECT_GT(ptx_count(ptx, "st.shared.b16"), 0);

    // Before sm_80: the FMA kernel with float32 tiles, each 16-bit element widened as it loads
    // (8-byte loads of 4).
    p = half_problem(t, 4096, 4096, 4096);
    p.half_mma = false;
    g = choose_gemm(p, kSMs);
    EXPECT_FALSE(g.mma);
    EXPECT_EQ(g.name(), "gemm_" + name + "_float32_128x128x16_8x8_ak4_bn4");
    ptx = detail::emit_gemm_ptx(g, 75).ptx;
    EXPECT_EQ(ptx.find("mma.sync"), std::string::npos);
    EXPECT_EQ(ptx_count(ptx, "fma.rn.f32"), 2 * 8 * 8 * 16);
    EXPECT_EQ(ptx_count(ptx, "ld.global.nc.v4.f32") + ptx_count(ptx, "ld.global.nc.f32"), 0);
    if (t == DType::Float16) EXPECT_GT(ptx_count(ptx, "cvt.f32.f16"), 0);
    EXPECT_EQ(ptx.find(".local"), std::string::npos);
  }
}

// On sm_90 the 16-bit products whose operands take 16-byte runs go to the warpgroup kernel:
// wgmma.mma_async m64nNk16 reading both operands through swizzled shared-memory descriptors,
// four per k-step of 64, compiled for sm_90a (its code runs on sm_90 only). Pinned as text:
// the instructions and their counts, the descriptors' transposes, the fences, nothing spilled.
TEST(GemmHalfTest, WarpgroupKernelPtx) {
  for (DType t : {DType::Float16, DType::BFloat16}) {
    SCOPED_TRACE(dtype_name(t));
    const std::string name = dtype_name(t), ab = t == DType::Float16 ? "f16.f16" : "bf16.bf16";
    GemmProblem p = hopper_problem(t, 4096, 4096, 4096, false);
    detail::GemmKernel g = choose_gemm(p, kSMs);
    ASSERT_TRUE(g.wgmma);
    EXPECT_EQ(g.name(), "gemm_" + name + "_float32_128x256x64_4x32_ak8_bn8_mma_s4_wg");
    detail::PtxKernel k = detail::emit_gemm_ptx(g, 90);
    dump_ptx(name, k.ptx);
    const std::string& ptx = k.ptx;
    EXPECT_NE(ptx.find(".target sm_90a"), std::string::npos);
    // A row-major (K-major), B contiguous along n (MN-major: transposed); two warpgroups of 64
    // rows by 256 columns, 128 float32 accumulators a thread.
    expect_counts(ptx, {
                           {"wgmma.mma_async.sync.aligned.m64n256k16.f32." + ab, 4},
                           {"p, 1, 1, 0, 1;", 4},
                           {"wgmma.fence.sync.aligned;", 1},
                           {"wgmma.commit_group.sync.aligned;", 1},
                           {"wgmma.wait_group.sync.aligned 1;", 1},
                           {"wgmma.wait_group.sync.aligned 0;", 1},
                           {"fence.proxy.async.shared::cta;", 1},
                           {"ldmatrix", 0},
                           {"mma.sync", 0},
                       });
    // 128 x 64 / (256 x 8) runs of A and 64 x 256 / 2048 of B a k-step, issued in 3 places
    // (2 stages ahead, unrolled, and once in the loop).
    EXPECT_EQ(count(ptx, "cp.async.cg.shared.global"), 3 * (4 + 8));
    EXPECT_EQ(ptx.find(".local"), std::string::npos) << "the accumulators spilled";
    // Four stages of 128 x 64 and 64 x 256 elements, and 1024 bytes to align them.
    EXPECT_EQ(detail::gemm_dynamic_shared(g, 90), 4u * (128 * 64 + 64 * 256) * 2 + 1024);

    // x @ x.T: B contiguous along k (K-major, not transposed); a transposed A is MN-major.
    p.a_rs = 1, p.a_cs = 4096, p.b_rs = 1, p.b_cs = 4096;
    g = choose_gemm(p, kSMs);
    EXPECT_EQ(g.name(), "gemm_" + name + "_float32_128x256x64_4x32_am8_bk8_mma_s4_wg");
    EXPECT_EQ(count(detail::emit_gemm_ptx(g, 90).ptx, "p, 1, 1, 1, 0;"), 4);
    // Few tiles: 64 x 64 (one warpgroup); no 16-byte runs (rows of 33): the mma.sync kernel.
    g = choose_gemm(hopper_problem(t, 256, 512, 256, false), kSMs);
    EXPECT_EQ(g.name(), "gemm_" + name + "_float32_64x64x64_4x8_ak8_bn8_mma_s4_wg");
    EXPECT_EQ(count(detail::emit_gemm_ptx(g, 90).ptx, "wgmma.mma_async.sync.aligned.m64n64k16"), 4);
    g = choose_gemm(hopper_problem(t, 500, 33, 520, false), kSMs);
    EXPECT_FALSE(g.wgmma);
    EXPECT_EQ(g.name(), "gemm_" + name + "_float32_64x64x32_8x4_ak1_bn8_mma_s4");
  }
}

// With tensor maps (a CUDA 12+ driver), the warpgroup kernel's stages are loaded by TMA, and a
// producer warpgroup runs ahead of the consumers through mbarriers. Pinned as text: the TMA
// loads (one box of A, four 64-column atoms of B a k-step), the mbarrier waits and arrivals,
// the register hand-over, a single block-wide barrier (after the mbarriers' set-up), the
// tensor maps as 64-byte-aligned parameters, read in place; and the maps' geometry.
TEST(GemmHalfTest, TmaKernelPtx) {
  GemmProblem p = hopper_problem(DType::BFloat16, 4096, 4096, 4096, true);
  detail::GemmKernel g = choose_gemm(p, kSMs);
  EXPECT_EQ(g.name(), "gemm_bfloat16_float32_128x256x64_4x32_ak8_bn8_mma_s4_wg_tma");
  EXPECT_EQ(g.threads(), 384);
  detail::PtxKernel k = detail::emit_gemm_ptx(g, 90);
  dump_ptx("tma", k.ptx);
  const std::string& ptx = k.ptx;
  expect_counts(ptx, {
                         {"cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes", 5},
                         {"wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16", 4},
                         {"mbarrier.try_wait.parity.shared::cta.b64", 2},
                         {"mbarrier.arrive.expect_tx.shared::cta.b64", 1},
                         {"mbarrier.arrive.shared::cta.b64", 2},  // in the loop, and after a tile's last step
                         {"mbarrier.init.shared::cta.b64", 8},
                         {"setmaxnreg.dec.sync.aligned.u32 40;", 1},
                         {"setmaxnreg.inc.sync.aligned.u32 232;", 1},
                         {"bar.sync", 1},
                         {"cp.async.cg", 0},
                         {".param .align 64 .b8", 2},
                     });
  EXPECT_EQ(ptx.find(".local"), std::string::npos) << "a tensor map or the accumulators in local memory";
  EXPECT_EQ(detail::gemm_dynamic_shared(g, 90), 4u * (128 * 64 + 64 * 256) * 2 + 1024 + 4 * 16);
  // One block an SM, each walking its tiles (512 of them).
  EXPECT_EQ(detail::gemm_grid(g, p), 132u);
  // The tile order (gemm_tile_group): at 4096^3 the 132 resident tiles cover 9 rows of tiles by
  // all 16 columns (9 x 128 + 16 x 256 elements of k-slab), a group of 16 rows 16 x 128 + 9 x 256:
  // too little gained, row order. At 8192 columns, 5 x 128 + 32 x 256 against the same: groups.
  EXPECT_EQ(detail::resident_blocks(g, kSMs), 132);
  EXPECT_EQ(detail::gemm_tile_group(g, p, kSMs), 1);
  for (int64_t n : {6144, 8192, 65536}) {
    GemmProblem wide = half_problem(DType::BFloat16, 4096, 4096, n);
    EXPECT_EQ(detail::gemm_tile_group(g, wide, kSMs), 16) << n;
  }
  EXPECT_EQ(detail::gemm_tile_group(g, half_problem(DType::BFloat16, 4096, 4096, 5120), kSMs), 1);
  // Fewer rows of tiles than a group: as many as there are (then column order), or none at one.
  EXPECT_EQ(detail::gemm_tile_group(g, half_problem(DType::BFloat16, 1024, 4096, 8192), kSMs), 8);
  EXPECT_EQ(detail::gemm_tile_group(g, half_problem(DType::BFloat16, 128, 4096, 65536), kSMs), 1);
  // ARRAYC_GEMM_GROUP forces it (at most the rows there are), or is refused.
  setenv("ARRAYC_GEMM_GROUP", "4", 1);
  EXPECT_EQ(detail::gemm_tile_group(g, p, kSMs), 4);
  EXPECT_EQ(detail::gemm_tile_group(g, half_problem(DType::BFloat16, 300, 4096, 4096), kSMs), 3);
  for (const char* bad : {"0", "x", "-2", "65537", "3 "}) {
    setenv("ARRAYC_GEMM_GROUP", bad, 1);
    EXPECT_ARRAYC_ERROR(detail::gemm_tile_group(g, p, kSMs),
                        "ARRAYC_GEMM_GROUP must be an integer from 1 to 65536 (rows of tiles; 1: row order), got '" +
                            std::string(bad) + "'");
  }
  unsetenv("ARRAYC_GEMM_GROUP");
  // 3000^2: 128x192 tiles, in as many waves (3) as 128x256 would take.
  GemmProblem w5 = half_problem(DType::Float16, 3000, 3000, 3000);
  w5.wgmma = w5.tma = true;
  EXPECT_EQ(choose_gemm(w5, kSMs).name(), "gemm_float16_float32_128x192x64_4x24_ak8_bn8_mma_s4_wg_tma");

  // The maps: A row-major (k innermost), one box of 64 k by 128 rows; B along n, boxes of 64 n
  // by 64 k; byte strides of rows. A batch shared by every product is a batch of one.
  detail::TmaOperand a = detail::gemm_tma_operand(g, p, true), b = detail::gemm_tma_operand(g, p, false);
  EXPECT_EQ(a.dims, (std::array<uint64_t, 3>{4096, 4096, 1}));
  EXPECT_EQ(a.strides, (std::array<uint64_t, 2>{8192, 16}));
  EXPECT_EQ(a.box, (std::array<uint32_t, 3>{64, 128, 1}));
  EXPECT_EQ(b.box, (std::array<uint32_t, 3>{64, 64, 1}));
  p = hopper_problem(DType::Float16, 100, 24, 40, true);
  p.batch = 3, p.a_bs = 0, p.b_bs = 24 * 40;
  p.a_rs = 1, p.a_cs = 104;  // A along m, rows of 104 (a view)
  g = choose_gemm(p, kSMs);
  EXPECT_EQ(g.name(), "gemm_float16_float32_64x64x64_4x8_am8_bn8_mma_s4_wg_tma");
  a = detail::gemm_tma_operand(g, p, true), b = detail::gemm_tma_operand(g, p, false);
  EXPECT_EQ(a.dims, (std::array<uint64_t, 3>{100, 24, 1}));
  EXPECT_EQ(a.strides, (std::array<uint64_t, 2>{208, 16}));
  EXPECT_EQ(a.box, (std::array<uint32_t, 3>{64, 64, 1}));
  EXPECT_EQ(b.dims, (std::array<uint64_t, 3>{40, 24, 3}));
  EXPECT_EQ(b.strides, (std::array<uint64_t, 2>{80, 1920}));
  // Clusters of two blocks (where the driver launches them), one tile above the other, where a
  // row of A or B is no multiple of 128 bytes (3000^2: 6000): each loads its half of their B
  // tile into both blocks' stages (multicast: of B's three 64-column atoms, 0 and 2 by rank 0,
  // 1 by rank 1), and releases a stage in both blocks (a remote arrival through mapa).
  {
    GemmProblem q = hopper_problem(DType::Float16, 3000, 3000, 3000, true, true);
    detail::GemmKernel c = choose_gemm(q, kSMs);
    EXPECT_EQ(c.name(), "gemm_float16_float32_128x192x64_4x24_ak8_bn8_mma_s4_wg_tma_c2");
    EXPECT_EQ(detail::gemm_grid(c, q), 2u * 12 * 16);  // a pair of tiles a cluster
    const std::string text = detail::emit_gemm_ptx(c, 90).ptx;
    dump_ptx("tma_c2", text);
    expect_counts(text, {
                            {"cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [", 1},  // A
                            {"complete_tx::bytes.multicast::cluster [", 3},
                            {"mapa.shared::cluster.u32", 2},
                            {"mbarrier.arrive.shared::cluster.b64", 2},
                            {"barrier.cluster.arrive.release;", 2},
                            {"barrier.cluster.wait.acquire;", 2},
                            {"bar.sync", 0},
                        });
    EXPECT_EQ(text.find(".local"), std::string::npos);
    // B along k (x @ x.T): each rank's half is 96 of the 192 rows: the map's box.
    q.b_rs = 1, q.b_cs = 3000;
    c = choose_gemm(q, kSMs);
    EXPECT_EQ(detail::gemm_tma_operand(c, q, false).box, (std::array<uint32_t, 3>{64, 96, 1}));
    EXPECT_EQ(detail::gemm_tma_operand(c, q, true).box, (std::array<uint32_t, 3>{64, 128, 1}));
    // One row of tiles: single blocks; /c1 asks for them, /c2 for clusters.
    EXPECT_EQ(choose_gemm([&] { GemmProblem r = q; r.m = 60; return r; }(), kSMs).cluster, 1);
    setenv("ARRAYC_GEMM_TILE", "128x256x64/4x32/wg/c1", 1);
    EXPECT_EQ(choose_gemm(q, kSMs).name(), "gemm_float16_float32_128x256x64_4x32_ak8_bk8_mma_s4_wg_tma");
    // Rows of 8192 bytes: single blocks, unless asked.
    GemmProblem aligned = hopper_problem(DType::Float16, 4096, 4096, 4096, true, true);
    setenv("ARRAYC_GEMM_TILE", "128x256x64/4x32/wg/c2", 1);
    EXPECT_EQ(choose_gemm(aligned, kSMs).name(), "gemm_float16_float32_128x256x64_4x32_ak8_bn8_mma_s4_wg_tma_c2");
    unsetenv("ARRAYC_GEMM_TILE");
    EXPECT_EQ(choose_gemm(aligned, kSMs).cluster, 1);
  }
  // The registers the producer hands over: four consumer warpgroups get 112 each, one needs
  // none (256 threads have 255 registers each).
  for (auto [tile, inc] : {std::pair{"256x128x64/4x16/s3/wg", "setmaxnreg.inc.sync.aligned.u32 112;"},
                           std::pair{"64x64x64/4x8/s5/wg", ""}}) {
    SCOPED_TRACE(tile);
    setenv("ARRAYC_GEMM_TILE", tile, 1);
    const std::string text = detail::emit_gemm_ptx(choose_gemm(p, kSMs), 90).ptx;
    dump_ptx("tma_" + std::to_string(*inc != 0), text);
    EXPECT_EQ(count(text, "setmaxnreg"), *inc ? 2 : 0);
    if (*inc) EXPECT_EQ(count(text, inc), 1);
    EXPECT_EQ(text.find(".local"), std::string::npos);
  }
  // What a tensor map cannot describe (or the driver might refuse) takes the cp.async kernel: an
  // empty k, rows that overlap (a broadcast, stride 0), batches that overlap.
  for (auto change : std::vector<std::function<void(GemmProblem&)>>{
           [](GemmProblem& q) { q.k = 0; }, [](GemmProblem& q) { q.a_cs = 0; },
           [](GemmProblem& q) { q.b_bs = 8; }}) {
    GemmProblem q = p;
    change(q);
    EXPECT_EQ(choose_gemm(q, kSMs).name().find("_tma"), std::string::npos) << choose_gemm(q, kSMs).name();
    EXPECT_NE(choose_gemm(q, kSMs).name().find("_wg"), std::string::npos) << choose_gemm(q, kSMs).name();
  }
  setenv("ARRAYC_GEMM_TILE", "64x64x64/4x8/wg/cp", 1);  // the cp.async kernel, asked for
  EXPECT_EQ(choose_gemm(p, kSMs).name(), "gemm_float16_float32_64x64x64_4x8_am8_bn8_mma_s4_wg");
  unsetenv("ARRAYC_GEMM_TILE");
}

// TF32 on the warpgroup kernel (set_matmul_precision(High) on sm_90): float32 operands both
// along k (x @ y.T), loaded by the TMA (whose tf32 element type rounds them); 128-byte rows are
// bk = 32, and each k-step is four wgmma k8. Other layouts keep mma.sync (its cvt.rna rounding).
TEST(GemmHalfTest, Tf32WarpgroupKernelPtx) {
  GemmProblem p;
  p.dtype = DType::Float32;
  p.tf32 = p.wgmma = p.tma = true;
  p.m = p.n = p.k = 4096;
  p.a_rs = 4096, p.a_cs = 1, p.b_rs = 1, p.b_cs = 4096;
  detail::GemmKernel g = choose_gemm(p, kSMs);
  EXPECT_EQ(g.name(), "gemm_float32_128x256x32_4x32_ak4_bk4_tf32_s4_wg_tma");
  detail::PtxKernel k = detail::emit_gemm_ptx(g, 90);
  dump_ptx("tf32", k.ptx);
  expect_counts(k.ptx, {
                           {"wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32", 4},
                           {"cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes", 2},
                           {"cvt.rna.tf32.f32", 0},
                           {"setmaxnreg.inc.sync.aligned.u32 232;", 1},
                       });
  EXPECT_EQ(k.ptx.find(".local"), std::string::npos);
  EXPECT_EQ(detail::gemm_dynamic_shared(g, 90), 4u * (128 + 256) * 32 * 4 + 1024 + 4 * 16);
  EXPECT_EQ(detail::gemm_tma_operand(g, p, true).box, (std::array<uint32_t, 3>{32, 128, 1}));
  EXPECT_EQ(detail::gemm_tma_operand(g, p, false).box, (std::array<uint32_t, 3>{32, 256, 1}));
  // Small products take the small tile; 3000^2 (rows of 12000 bytes) clusters of two.
  GemmProblem q = p;
  q.m = q.n = q.k = q.a_rs = q.b_cs = 3000;
  q.clusters = true;
  EXPECT_EQ(choose_gemm(q, kSMs).name(), "gemm_float32_128x192x32_4x24_ak4_bk4_tf32_s4_wg_tma_c2");
  q.m = q.n = 200;
  q.k = q.a_rs = q.b_cs = 256;  // rows of 1024 bytes
  EXPECT_EQ(choose_gemm(q, kSMs).name(), "gemm_float32_64x64x32_4x8_ak4_bk4_tf32_s4_wg_tma");
  // Not the warpgroup kernel: B along n, no tensor maps, TF32 off, a Gram product.
  for (auto change : std::vector<std::function<void(GemmProblem&)>>{
           [](GemmProblem& q) { q.b_rs = 4096, q.b_cs = 1; }, [](GemmProblem& q) { q.tma = false; },
           [](GemmProblem& q) { q.tf32 = false; }, [](GemmProblem& q) { q.gram = true; }}) {
    GemmProblem r = p;
    change(r);
    EXPECT_EQ(choose_gemm(r, kSMs).name().find("_wg"), std::string::npos) << choose_gemm(r, kSMs).name();
  }
  // x @ w (B along n): B is copied transposed first ([n][k]), where m is large enough to pay.
  GemmProblem xw = p;
  xw.b_rs = 4096, xw.b_cs = 1;
  EXPECT_EQ(detail::gemm_transposed_operand(xw, kSMs), 2);
  GemmProblem staged = detail::gemm_transposed_problem(xw, 2);
  EXPECT_EQ(choose_gemm(staged, kSMs).name(), "gemm_float32_128x256x32_4x32_ak4_bk4_tf32_s4_wg_tma");
  detail::GemmTranspose t = detail::gemm_transpose(xw, 2);
  EXPECT_EQ((std::array<int64_t, 6>{t.x, t.y, t.batch, t.x_stride, t.y_stride, t.batch_stride}),
            (std::array<int64_t, 6>{4096, 4096, 1, 1, 4096, 0}));
  xw.m = detail::kTransposeMinOther - 1;
  EXPECT_EQ(detail::gemm_transposed_operand(xw, kSMs), 0);
  // x.T @ y.T (A along m): A is copied; x.T @ dy (a weight's gradient: both along their outer
  // dims) both, where each copy has enough readers; TF32 off: neither.
  GemmProblem ty = p;
  ty.a_rs = 1, ty.a_cs = 4096;
  EXPECT_EQ(detail::gemm_transposed_operand(ty, kSMs), 1);
  staged = detail::gemm_transposed_problem(ty, 1);
  EXPECT_EQ((std::array<int64_t, 3>{staged.a_rs, staged.a_cs, staged.a_bs}), (std::array<int64_t, 3>{4096, 1, 4096 * 4096}));
  ty.b_rs = 4096, ty.b_cs = 1;
  EXPECT_EQ(detail::gemm_transposed_operand(ty, kSMs), 3);
  staged = detail::gemm_transposed_problem(ty, 3);
  EXPECT_EQ((std::array<int64_t, 4>{staged.a_rs, staged.a_cs, staged.b_rs, staged.b_cs}),
            (std::array<int64_t, 4>{4096, 1, 1, 4096}));
  EXPECT_EQ(choose_gemm(staged, kSMs).name(), "gemm_float32_128x256x32_4x32_ak4_bk4_tf32_s4_wg_tma");
  ty.n = detail::kTransposeMinOther - 1;  // A's copy would have too few readers
  EXPECT_EQ(detail::gemm_transposed_operand(ty, kSMs), 0);
  xw.m = 4096, xw.tf32 = false;
  EXPECT_EQ(detail::gemm_transposed_operand(xw, kSMs), 0);
  // A batch of products sharing one B (stride 0): one copy of it.
  xw.tf32 = true, xw.batch = 3, xw.a_bs = 4096 * 4096, xw.b_bs = 0;
  EXPECT_EQ(detail::gemm_transposed_operand(xw, kSMs), 2);
  EXPECT_EQ(detail::gemm_transposed_problem(xw, 2).b_bs, 0);
  EXPECT_EQ(detail::gemm_transpose(xw, 2).batch, 1);
  // The transpose kernel: 64 x 64 tiles through shared memory, 16 loads and stores of 32 bits a
  // thread, the loads unconditional (all in flight at once).
  const std::string tp = detail::emit_transpose_ptx(90).ptx;
  dump_ptx("transpose", tp);
  expect_counts(tp, {{"ld.global.nc.u32", 16}, {"st.global.u32", 16}, {"st.shared.u32", 16}, {"ld.shared.u32", 16}, {"bar.sync", 2}});
  setenv("ARRAYC_GEMM_TILE", "128x128x32/4x16/wg", 1);
  EXPECT_EQ(choose_gemm(p, kSMs).name(), "gemm_float32_128x128x32_4x16_ak4_bk4_tf32_s4_wg_tma");
  setenv("ARRAYC_GEMM_TILE", "128x128x64/4x16/wg", 1);
  EXPECT_ARRAYC_ERROR(choose_gemm(p, kSMs), "BK must be 32 for float32 (rows of 128 bytes)");
  setenv("ARRAYC_GEMM_TILE", "128x128x32/4x16/wg/cp", 1);
  EXPECT_ARRAYC_ERROR(choose_gemm(p, kSMs),
                      "ARRAYC_GEMM_TILE=128x128x32/4x16/wg/cp: TF32 operands of the warpgroup kernel are loaded by the "
                      "TMA, which rounds them; /cp is for 16-bit operands");
  unsetenv("ARRAYC_GEMM_TILE");
}

// ARRAYC_GEMM_TILE=.../wg forces the warpgroup kernel, and says why when it cannot.
TEST(GemmHalfTest, ForcedWarpgroupTileAndItsErrors) {
  GemmProblem p = hopper_problem(DType::Float16, 1000, 512, 1000, false);
  setenv("ARRAYC_GEMM_TILE", "256x128x64/4x16/s3/wg", 1);
  detail::GemmKernel g = choose_gemm(p, kSMs);
  EXPECT_EQ(g.name(), "gemm_float16_float32_256x128x64_4x16_ak8_bn8_mma_s3_wg");
  EXPECT_EQ(g.tile.threads(), 512);
  EXPECT_EQ(count(detail::emit_gemm_ptx(g, 90).ptx, "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16"),
            4);
  setenv("ARRAYC_GEMM_TILE", "256x128x64/16x8/s3", 1);  // without /wg: the mma.sync kernel
  EXPECT_EQ(choose_gemm(p, kSMs).name(), "gemm_float16_float32_256x128x64_16x8_ak8_bn8_mma_s3");
  for (auto [tile, message] : std::vector<std::pair<const char*, const char*>>{
           {"128x128x32/4x16/wg",
            "ARRAYC_GEMM_TILE=128x128x32/4x16/wg cannot be used for the warpgroup kernel: BK must be 64 for float16 (rows of 128 bytes)"},
           {"128x128x64/8x8/wg", "the thread tile must be 4x16 (a warp's 16 rows by BN)"},
           {"32x64x64/4x8/wg", "BM must be 64, 128 or 256 (a warpgroup per 64 rows)"},
           {"128x96x64/4x12/wg", "BN must be 64, 128, 192 or 256"},
           {"128x128x64/4x16/s2/wg", "it needs at least 3 stages"},
           {"128x256x64/4x32/s5/wg", "its stages need 246784 bytes of shared memory (at most 232448)"},
           {"256x256x64/4x32/s3/wg", "its 512 threads get 128 registers each, and a wgmma of 256 columns needs about 158"}}) {
    SCOPED_TRACE(tile);
    setenv("ARRAYC_GEMM_TILE", tile, 1);
    EXPECT_ARRAYC_ERROR(choose_gemm(p, kSMs), message);
  }
  p.tma = true;  // a producer warpgroup too: 640 threads of 96 registers
  setenv("ARRAYC_GEMM_TILE", "256x192x64/4x24/s3/wg", 1);
  EXPECT_ARRAYC_ERROR(choose_gemm(p, kSMs),
                      "ARRAYC_GEMM_TILE=256x192x64/4x24/s3/wg cannot be used for the warpgroup kernel: its 640 threads get 96 "
                      "registers each, and a wgmma of 192 columns needs about 126");
  setenv("ARRAYC_GEMM_TILE", "256x192x64/4x24/s3/wg/cp", 1);  // 512 threads of 128
  EXPECT_EQ(choose_gemm(p, kSMs).name(), "gemm_float16_float32_256x192x64_4x24_ak8_bn8_mma_s3_wg");
  p.tma = false;
  setenv("ARRAYC_GEMM_TILE", "128x128x64/4x16/wg", 1);
  p.wgmma = false;  // not an sm_90 GPU
  EXPECT_ARRAYC_ERROR(
      choose_gemm(p, kSMs),
      "ARRAYC_GEMM_TILE=128x128x64/4x16/wg: /wg is the warpgroup kernel, for float16/bfloat16 operands "
      "read in 16-byte runs on an sm_90 GPU, or float32 on TF32 with both operands along k through tensor maps, "
      "which this product of float16 is not");
  p.wgmma = true;
  p.b_rs = 999;  // rows of B not in 16-byte runs
  EXPECT_ARRAYC_ERROR(choose_gemm(p, kSMs), "which this product of float16 is not");
  unsetenv("ARRAYC_GEMM_TILE");
}

// The schedule of a GPU product of 16-bit floats (graphs of parameters need no GPU): one step,
// the product with its rounding back to 16 bits as its epilogue, reading the parameters
// themselves; on the CPU the operands are widened to float32 for sgemm first.
TEST(GemmHalfTest, ScheduleReadsTheSixteenBitOperands) {
  for (Device d : {cpu(), Device{Device::Kind::GPU, 0}}) {
    const bool gpu = d.kind == Device::Kind::GPU;
    detail::NodeRef x = detail::make_param(0, DType::BFloat16, {64, 32}, d);
    detail::NodeRef w = detail::make_param(1, DType::BFloat16, {48, 32}, d);
    detail::Graph g;
    g.outputs = {detail::make_dot(x, detail::make_transpose(w, {1, 0}))};
    detail::Schedule s = detail::schedule_graph(g, detail::CompileOptions{});
    ASSERT_EQ(s.steps.size(), gpu ? 1u : 3u) << detail::print_schedule(s);
    const auto& dot = std::get<detail::DotStep>(s.steps.back().op);
    EXPECT_EQ(dot.in_dtype, gpu ? DType::BFloat16 : DType::Float32);
    EXPECT_EQ(dot.dtype, DType::Float32);
    EXPECT_TRUE(dot.has_epilogue);  // the rounding to bfloat16
    if (!gpu) continue;
    EXPECT_EQ(dot.a.src.kind, detail::Source::Kind::Param);
    EXPECT_EQ(dot.b.src.kind, detail::Source::Kind::Param);
    EXPECT_EQ(dot.b.row_stride, 1);  // w's transpose, read in place
    EXPECT_EQ(dot.b.col_stride, 32);

    // An operand that is not in memory is materialized in 16 bits, not widened.
    g.outputs = {
        detail::make_dot(detail::make_elementwise(detail::Op::Neg, {x}), detail::make_transpose(w, {1, 0}))};
    s = detail::schedule_graph(g, detail::CompileOptions{});
    ASSERT_EQ(s.steps.size(), 2u) << detail::print_schedule(s);
    EXPECT_EQ(s.slots[0].dtype, DType::BFloat16);
    EXPECT_NE(detail::print_schedule(s).find("operand of dot: the product kernel reads memory"),
              std::string::npos)
        << detail::print_schedule(s);
    EXPECT_EQ(std::get<detail::DotStep>(s.steps.back().op).in_dtype, DType::BFloat16);
  }
}

// `:fused` says what a GPU product of 16-bit floats does (graphs of parameters need no GPU).
TEST(GemmHalfTest, ProductReason) {
  Device g{Device::Kind::GPU, 0};
  detail::NodeRef x = detail::make_param(0, DType::Float16, {64, 32}, g),
                  w = detail::make_param(1, DType::Float16, {32, 48}, g);
  EXPECT_EQ(detail::product_reason(*detail::make_dot(x, w)->inputs[0]),
            "matrix product (tiled product kernel); float16/bfloat16 operands read as they are, on the "
            "tensor cores "
            "(sm_80+; on sm_90 wgmma, TMA loads)");
  EXPECT_EQ(detail::product_reason(*detail::make_dot(x, detail::make_transpose(x, {1, 0}))->inputs[0]),
            "matrix product (tiled product kernel); float16/bfloat16 operands read as they are, on the "
            "tensor cores "
            "(sm_80+; on sm_90 wgmma, TMA loads); product-structure: x @ x.T, both triangles there (before sm_80 the tiles of one "
            "triangle, mirrored)");
  detail::NodeRef c = detail::make_param(2, DType::Float16, {64, 32}, cpu());
  EXPECT_EQ(detail::product_reason(*detail::make_dot(c, detail::make_transpose(c, {1, 0}))->inputs[0]),
            "matrix product (BLAS call); product-structure: x @ x.T, one triangle (syrk), mirrored");
}

}  // namespace
