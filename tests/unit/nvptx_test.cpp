// PTX golden tests for the nvptx target: no GPU needed. Kernels come from the real pipeline
// (graph -> passes -> schedule), then emit_ptx; the tests check the structure of the PTX: one
// load and one store per element on the contiguous path (16-byte vector accesses), libdevice's
// exp inlined, shuffles in reductions, no vector accesses for strided operands.
#include "backend/cuda/launch_plan.h"

#include <gtest/gtest.h>
#include <cstdlib>
#include <iostream>

#include "arrayc/arrayc.h"
#include "passes/pipeline.h"
#include "support/pipeline.h"

namespace {

using namespace arrayc;
using detail::Kernel;
using detail::KernelStep;
using arrayc_test::kernel_steps;
using arrayc_test::ptx_count;

Kernel only_kernel(const std::vector<Array>& outputs) {
  std::vector<KernelStep> ks = kernel_steps(outputs);
  EXPECT_EQ(ks.size(), 1u);
  return ks.at(0).kernel;
}

// Global loads of a type, coherent or through the read-only cache (".nc", for inputs the kernel
// never writes).
int loads(const std::string& ptx, const std::string& type) {
  return ptx_count(ptx, "ld.global." + type) + ptx_count(ptx, "ld.global.nc." + type);
}

bool have_libdevice() {
  try {
    detail::libdevice_path();
    return true;
  } catch (const Error&) {
    return false;
  }
}

Array vec(int64_t n, DType t = DType::Float32) {
  return t == DType::Float64 ? array(std::vector<double>(n, 0.5), {n}) : array(std::vector<float>(n, 0.5f), {n});
}

Array selu(const Array& x) { return 1.05f * where(x > 0.0f, x, 1.67f * exp(x) - 1.67f); }

TEST(NvptxTest, SeluContiguousIsOneVectorLoadAndStore) {
  if (!have_libdevice()) GTEST_SKIP() << "no libdevice: " << [] {
      try { detail::libdevice_path(); } catch (const Error& e) { return std::string(e.what()); }
      return std::string();
    }();
  Kernel k = only_kernel({selu(vec(1000))});
  detail::PtxKernel p = detail::emit_ptx(k, 90, detail::EmitOptions{});
  EXPECT_EQ(p.entry, "arrayc_fused_gt_exp_mul_sub_where");
  EXPECT_EQ(p.elements_per_thread, 4);
  EXPECT_NE(p.ptx.find(".target sm_90"), std::string::npos) << p.ptx;
  EXPECT_NE(p.ptx.find(".entry arrayc_fused_gt_exp_mul_sub_where"), std::string::npos) << p.ptx;
  // Vector path: one 16-byte load of x and one 16-byte store per 4 elements, the load issued a
  // grid-stride chunk ahead (two load sites: before the loop, and in it for the next chunk);
  // the scalar tail (and misaligned fallback): one load and one store per element.
  EXPECT_EQ(loads(p.ptx, "v4.f32"), 2) << p.ptx;
  EXPECT_EQ(ptx_count(p.ptx, "st.global.v4.f32"), 1) << p.ptx;
  EXPECT_EQ(loads(p.ptx, "f32"), 1) << p.ptx;
  EXPECT_EQ(ptx_count(p.ptx, "st.global.f32"), 1) << p.ptx;
  // libdevice's expf: called before linking, inlined (ex2.approx) after.
  EXPECT_NE(p.ir.find("@__nv_expf("), std::string::npos) << p.ir;
  EXPECT_EQ(p.opt_ir.find("@__nv_expf("), std::string::npos) << p.opt_ir;
  EXPECT_GE(ptx_count(p.ptx, "ex2.approx.f32") + ptx_count(p.ptx, "ex2.approx.ftz.f32"), 1) << p.ptx;
  EXPECT_EQ(p.ptx.find("call."), std::string::npos) << "no calls left:\n" << p.ptx;
}

TEST(NvptxTest, SinAndCosOfOneArgumentShareASincos) {
  if (!have_libdevice()) GTEST_SKIP() << "no libdevice";
  Array x = vec(1000);
  Kernel k = only_kernel({cos(x) * cos(x) + sin(x) * sin(x)});  // W1
  detail::PtxKernel p = detail::emit_ptx(k, 90, detail::EmitOptions{});
  EXPECT_NE(p.ir.find("__nv_sincosf"), std::string::npos) << p.ir;
  EXPECT_EQ(p.ir.find("__nv_sinf"), std::string::npos) << p.ir;
  EXPECT_EQ(p.ir.find("__nv_cosf"), std::string::npos) << p.ir;
  // A lone sin keeps its own call.
  detail::PtxKernel lone = detail::emit_ptx(only_kernel({sin(x) + cos(x * 2.0f)}), 90, detail::EmitOptions{});
  EXPECT_EQ(lone.ir.find("__nv_sincosf"), std::string::npos) << lone.ir;
}

TEST(NvptxTest, Float64UsesTwoWideVectors) {
  if (!have_libdevice()) GTEST_SKIP() << "no libdevice";
  Kernel k = only_kernel({exp(vec(64, DType::Float64)) + 1.0});
  detail::PtxKernel p = detail::emit_ptx(k, 90, detail::EmitOptions{});
  EXPECT_EQ(p.elements_per_thread, 2);
  EXPECT_EQ(loads(p.ptx, "v2.f64"), 2) << p.ptx;  // before the loop and one chunk ahead in it
  EXPECT_EQ(ptx_count(p.ptx, "st.global.v2.f64"), 1) << p.ptx;
}

TEST(NvptxTest, ReductionUsesWarpShuffles) {
  Array x = vec(1000);
  Kernel k = only_kernel({sum(x * x)});
  ASSERT_TRUE(k.is_reduction);
  detail::PtxKernel p = detail::emit_ptx(k, 90, detail::EmitOptions{});
  EXPECT_NE(p.ptx.find(".entry " + p.entry), std::string::npos) << p.ptx;
  EXPECT_GE(ptx_count(p.ptx, "shfl.sync.bfly.b32"), 5) << p.ptx;
  EXPECT_GE(ptx_count(p.ptx, "bar.sync"), 1) << p.ptx;
  EXPECT_NE(p.ptx.find(".shared"), std::string::npos) << p.ptx;
  // The row loop is unrolled 4 times, loads first, plus a remainder loop: x is read once per
  // element.
  EXPECT_EQ(loads(p.ptx, "f32"), 5) << p.ptx;
}

TEST(NvptxTest, StridedOperandsUseScalarAccesses) {
  if (!have_libdevice()) GTEST_SKIP() << "no libdevice";
  Array m = array(std::vector<float>(12, 1.0f), {3, 4});
  Kernel k = only_kernel({exp(transpose(m)) + 1.0f});
  detail::PtxKernel p = detail::emit_ptx(k, 90, detail::EmitOptions{});
  EXPECT_EQ(p.elements_per_thread, 1);
  EXPECT_EQ(p.ptx.find(".v2."), std::string::npos) << p.ptx;
  EXPECT_EQ(p.ptx.find(".v4."), std::string::npos) << p.ptx;
  EXPECT_EQ(loads(p.ptx, "f32"), 1) << p.ptx;
}

// Every dtype and reduction lowers without a backend failure (no GPU needed to find isel gaps).
TEST(NvptxTest, ManyKernelsCompile) {
  if (!have_libdevice()) GTEST_SKIP() << "no libdevice";
  Array f = vec(100);
  Array d = vec(100, DType::Float64);
  Array i = arange(100, DType::Int64);
  Array j = arange(100, DType::Int32);
  Array m = array(std::vector<double>(12, 1.0), {3, 4});
  std::vector<std::vector<Array>> programs = {
      {max(d)},          {min(f)},           {mean(m, {1})},    {sum(i)},         {max(j > 3)},
      {pow(j, j)},       {pow(d, d)},        {tanh(f) + cos(d)}, {f > 0.25f},      {sin(f) * log(f) + sqrt(f)},
      {uniform({100}, 7)}, {normal({100}, 7, 0.0, 1.0, DType::Float32)}, {sum(m, {0})},
      {max(transpose(m), {1})},
  };
  for (const auto& prog : programs)
    for (const KernelStep& ks : kernel_steps(prog)) {
      SCOPED_TRACE(ks.kernel->str());
      detail::PtxKernel p = detail::emit_ptx(ks.kernel, 90, detail::EmitOptions{});
      EXPECT_NE(p.ptx.find(".entry " + p.entry), std::string::npos);
    }
}

TEST(NvptxTest, LaunchConfiguration) {
  Array x = vec(1 << 20);
  KernelStep ew = kernel_steps({x + 1.0f}).at(0);
  detail::PtxKernel p;
  p.elements_per_thread = 4;
  detail::PtxLaunchConfig c = detail::ptx_launch_config(ew.kernel, p, ew.launch, 132);
  EXPECT_EQ(c.block, 256u);
  EXPECT_EQ(c.grid, (1u << 20) / 1024);
  EXPECT_EQ(detail::ptx_launch_config(ew.kernel, p, ew.launch, 4).grid, 256u);  // 64 per SM

  KernelStep red = kernel_steps({sum(x)}).at(0);
  p.elements_per_thread = 1;
  c = detail::ptx_launch_config(red.kernel, p, red.launch, 132);
  EXPECT_EQ(c.grid, 1u);
  EXPECT_EQ(c.chunks, (1 << 20) / (256 * 32));  // at least 32 elements per thread; 528 blocks wanted
  detail::ReductionSplit s = detail::split_reduction(red.kernel, red.launch, c.chunks);
  EXPECT_EQ(s.partial_bytes, static_cast<size_t>(c.chunks * 4));
  EXPECT_EQ(s.first.params[red.kernel->rank + 2], 0);  // no finalize in pass 1
  EXPECT_EQ(static_cast<int64_t>(s.second.params.size()), s.combine.num_params());
  detail::PtxKernel comb = detail::emit_ptx(s.combine, 90, detail::EmitOptions{});
  EXPECT_GE(ptx_count(comb.ptx, "shfl.sync.bfly.b32"), 5);
  EXPECT_TRUE(c.split);
  EXPECT_FALSE(detail::ptx_launch_config(ew.kernel, p, ew.launch, 132).split);
}

// A reduction whose work passes gpu_round_work() splits (to run in rounds) even with one chunk;
// below it, a reduction with outputs enough for the GPU is one launch.
TEST(NvptxTest, LaunchConfigurationSplitsWorkPastARound) {
  KernelStep rows = kernel_steps({sum(reshape(vec(1 << 20), {1 << 12, 1 << 8}), std::vector<int64_t>{1})}).at(0);
  detail::PtxKernel p;
  p.elements_per_thread = 1;
  const int64_t saved = detail::gpu_round_work();
  detail::PtxLaunchConfig c = detail::ptx_launch_config(rows.kernel, p, rows.launch, 132);
  EXPECT_EQ(c.chunks, 1);
  EXPECT_FALSE(c.split);
  detail::set_gpu_round_work(1 << 18);  // a quarter of the work: 64 of the 256 reduced indices a round
  c = detail::ptx_launch_config(rows.kernel, p, rows.launch, 132);
  EXPECT_EQ(c.chunks, 1);
  EXPECT_TRUE(c.split);
  EXPECT_EQ(detail::round_length(rows.launch.parallel_extent), 64);
  detail::set_gpu_round_work(saved);
}

TEST(NvptxTest, LaunchArgumentsFollowTheConvention) {
  KernelStep ks = kernel_steps({vec(10) + 1.0f}).at(0);
  std::vector<void*> ptrs(ks.kernel->num_ptrs, nullptr);
  detail::PtxArgs args(ks.kernel, ptrs, ks.launch.params, 2, 7);
  void** a = args.data();
  const int64_t np = ks.kernel->num_params();
  EXPECT_EQ(*static_cast<int64_t*>(a[ks.kernel->num_ptrs]), ks.launch.params[0]);
  EXPECT_EQ(*static_cast<int64_t*>(a[ks.kernel->num_ptrs + np]), 2);
  EXPECT_EQ(*static_cast<int64_t*>(a[ks.kernel->num_ptrs + np + 1]), 7);
}

}  // namespace

// row chains (issue 29): the register path of a softmax row chain reads each of a thread's 16
// elements once, as four 16-byte loads, computes exp once per element, keeps everything in
// registers (no local memory), and stores with four 16-byte stores; the launch gives a row of
// 4096 floats 256 threads and a row too long for 1024 threads' registers the strided path's 256.
TEST(NvptxTest, RowChainSoftmaxHoldsTheRowInRegisters) {
  if (!have_libdevice()) GTEST_SKIP() << "no libdevice";
  Array x = array(std::vector<float>(8 * 4096, 0.5f), {8, 4096});
  Array e = exp(x - max(x, {1}, true));
  KernelStep ks = kernel_steps({e / sum(e, {1}, true)}).at(0);
  ASSERT_TRUE(ks.kernel->row_chain);
  detail::PtxKernel p = detail::emit_ptx(ks.kernel, 90, detail::EmitOptions{});
  if (std::getenv("ARRAYC_TEST_PRINT_PTX")) std::cout << p.ptx;
  EXPECT_EQ(p.elements_per_thread, 16);
  EXPECT_EQ(loads(p.ptx, "v4.f32"), 4) << p.ptx;
  EXPECT_EQ(ptx_count(p.ptx, "st.global.v4.f32"), 4) << p.ptx;
  EXPECT_EQ(p.ptx.find(".local"), std::string::npos) << p.ptx;
  detail::PtxLaunchConfig c = detail::ptx_launch_config(ks.kernel, p, ks.launch, 132);
  EXPECT_EQ(c.block, 256u);
  EXPECT_EQ(c.grid, 8u);
  Array long_x = array(std::vector<float>(2 * 20000, 0.5f), {2, 20000});
  KernelStep lk = kernel_steps({long_x / sum(long_x, {1}, true)}).at(0);
  ASSERT_TRUE(lk.kernel->row_chain);
  EXPECT_EQ(detail::ptx_launch_config(lk.kernel, p, lk.launch, 132).block, 256u);
  Array short_x = array(std::vector<float>(3 * 5, 0.5f), {3, 5});
  KernelStep sk = kernel_steps({short_x / sum(short_x, {1}, true)}).at(0);
  EXPECT_EQ(detail::ptx_launch_config(sk.kernel, p, sk.launch, 132).block, 32u);
}
