// The GPU scan and sort kernels (codegen/nvptx/axis_kernels.h) as PTX, no GPU needed: every kind
// for every dtype it takes lowers; the PTX has the structure the launches rely on; a step's kernel
// list follows its shape; and float32 sums on the GPU accumulate in double (issue 26).
#include "codegen/nvptx/axis_kernels.h"

#include <gtest/gtest.h>

#include "arrayc/arrayc.h"
#include "backend/cuda/axis_launch.h"
#include "codegen/nvptx/ptx_kernel.h"
#include "support/pipeline.h"

namespace {

using namespace arrayc;
using detail::AxisKernel;
using arrayc_test::ptx_count;
using Kind = AxisKernel::Kind;

detail::PtxKernel emit(Kind kind, DType t, int rank = 1, int payload = 0, bool product = false, bool arg = false,
                       bool ballot = false) {
  AxisKernel k;
  k.kind = kind;
  k.dtype = t;
  k.rank = rank;
  k.payload = payload;
  k.product = product;
  k.argsort = arg;
  k.items = std::min(16, detail::sort_items_max(t, payload));
  k.ballot = ballot;
  return detail::emit_axis_ptx(k, 90);
}

TEST(AxisKernels, EveryScanKernelLowers) {
  for (DType t : {DType::UInt64, DType::Float32, DType::Float64})
    for (Kind kind : {Kind::ScanTotals, Kind::ScanTiles, Kind::ScanRows})
      for (int rank : {1, 3})
        for (bool product : {false, true}) {
          detail::PtxKernel p = emit(kind, t, rank, 0, product);
          SCOPED_TRACE(p.entry);
          EXPECT_NE(p.ptx.find(".entry " + p.entry), std::string::npos);
          EXPECT_NE(p.ptx.find(".maxntid 256"), std::string::npos) << p.ptx;
        }
  // The tile scan: shuffles up within the warp, the tile in shared memory.
  detail::PtxKernel tiles = emit(Kind::ScanTiles, DType::Float32, 2);
  EXPECT_GE(ptx_count(tiles.ptx, "shfl.sync.up.b32"), 6) << tiles.ptx;
  EXPECT_GE(ptx_count(tiles.ptx, "bar.sync"), 3) << tiles.ptx;
  EXPECT_NE(tiles.ptx.find("add.rn.f32"), std::string::npos) << tiles.ptx;
  EXPECT_NE(emit(Kind::ScanTiles, DType::UInt64, 1, 0, true).ptx.find("mul.lo.s64"), std::string::npos);
}

TEST(AxisKernels, EverySortKernelLowers) {
  for (DType t : {DType::Bool, DType::Int32, DType::Int64, DType::UInt64, DType::Float32, DType::Float64})
    for (Kind kind : {Kind::SortLoad, Kind::SortHist, Kind::SortPass, Kind::SortStore})
      for (int payload : {0, 4, 8})
        for (bool ballot : {false, true}) {
          if (ballot && kind != Kind::SortPass) continue;
          detail::PtxKernel p = emit(kind, t, 2, payload, false, payload != 0, ballot);
          SCOPED_TRACE(p.entry);
          EXPECT_NE(p.ptx.find(".entry " + p.entry), std::string::npos);
        }
  // A pass ranks a warp's elements by digit with match.any (a round per element of a thread: 16
  // of a 4096 tile, 12 where a value and its position take 12 bytes), or with 9 ballots a round,
  // takes its tile's number from a counter, and looks back with volatile loads.
  detail::PtxKernel s = emit(Kind::SortPass, DType::Float32, 1, 4);
  EXPECT_GE(ptx_count(s.ptx, "match.any.sync.b32"), 16) << s.ptx;
  EXPECT_GE(ptx_count(s.ptx, "popc.b32"), 16) << s.ptx;
  EXPECT_NE(s.ptx.find("atom.global.add.u32"), std::string::npos) << s.ptx;
  EXPECT_NE(s.ptx.find("ld.volatile.global.u64"), std::string::npos) << s.ptx;
  EXPECT_EQ(ptx_count(emit(Kind::SortPass, DType::Float64, 1, 4).ptx, "match.any.sync.b32"), 12);
  detail::PtxKernel b = emit(Kind::SortPass, DType::Float32, 1, 0, false, false, true);
  EXPECT_EQ(ptx_count(b.ptx, "match.any.sync.b32"), 0) << b.ptx;
  EXPECT_EQ(ptx_count(b.ptx, "vote.sync.ballot.b32"), 9 * 16) << b.ptx;
  // The tile fits 48 KiB of static shared memory beside the bin counters.
  EXPECT_EQ(detail::sort_items_max(DType::Float32, 0), 32);
  EXPECT_EQ(detail::sort_items_max(DType::Float32, 4), 18);
  EXPECT_EQ(detail::sort_items_max(DType::Int64, 4), 12);
  EXPECT_EQ(detail::sort_items_max(DType::Int64, 8), 9);
  AxisKernel k;
  k.items = 12;
  EXPECT_EQ(detail::sort_tile(k), 3072);
  EXPECT_NE(emit(Kind::SortHist, DType::Float64).ptx.find("atom.shared.add.u32"), std::string::npos);
  EXPECT_EQ(emit(Kind::SortHist, DType::Float64).ptx.find("match.any"), std::string::npos);
  // Tuning (ARRAYC_SORT_TUNE): registers bounded for N blocks an SM.
  AxisKernel t;
  t.kind = Kind::SortPass;
  t.min_blocks = 3;
  EXPECT_NE(detail::emit_axis_ptx(t, 90).ptx.find(".minnctapersm 3"), std::string::npos);
  EXPECT_EQ(t.name(), "sort_pass_float32_p0_i16_b3");
  // The offsets are scanned on the device: one block, shuffles of 64-bit counts.
  detail::PtxKernel scan = emit(Kind::SortScan, DType::Float32);
  EXPECT_GE(ptx_count(scan.ptx, "shfl.sync.up.b32"), 10) << scan.ptx;
}

// The GPU scatter (x.at(indices)): a copy, a mark of each row's last update (set), and a thread
// per updated element, with an atomic add for every dtype (natively where the hardware has one,
// else a compare-and-swap loop on the 32-bit word).
TEST(AxisKernels, EveryScatterKernelLowers) {
  for (DType t : kAllDTypes)
    for (Kind kind : {Kind::ScatterCopy, Kind::ScatterMark, Kind::ScatterApply})
      for (bool add : {false, true})
        for (int rank : {1, 3}) {
          AxisKernel k;
          k.kind = kind;
          k.dtype = t;
          k.rank = rank;
          k.add = add;
          detail::PtxKernel p = detail::emit_axis_ptx(k, 90);
          SCOPED_TRACE(p.entry);
          EXPECT_NE(p.ptx.find(".entry " + p.entry), std::string::npos);
        }
  auto apply = [](DType t, bool add) {
    AxisKernel k;
    k.kind = Kind::ScatterApply;
    k.dtype = t;
    k.add = add;
    return detail::emit_axis_ptx(k, 90).ptx;
  };
  EXPECT_NE(apply(DType::Float32, true).find("atom.global.add.f32"), std::string::npos);
  EXPECT_NE(apply(DType::Float64, true).find("atom.global.add.f64"), std::string::npos);
  EXPECT_NE(apply(DType::Int64, true).find("atom.global.add.u64"), std::string::npos);
  EXPECT_NE(apply(DType::Int8, true).find("atom.global.cas.b32"), std::string::npos);
  EXPECT_EQ(apply(DType::Float32, false).find("atom."), std::string::npos);  // set: a plain store
  AxisKernel m;
  m.kind = Kind::ScatterMark;
  EXPECT_NE(detail::emit_axis_ptx(m, 90).ptx.find("atom.global.max.u64"), std::string::npos);
  EXPECT_EQ(m.name(), "scatter_mark");
}

TEST(AxisKernels, NamesSayWhatIsSpecialized) {
  AxisKernel k;
  k.kind = Kind::ScanTiles;
  k.rank = 2;
  EXPECT_EQ(k.name(), "scan_tiles_float32_sum_r2");
  k.product = true;
  k.dtype = DType::UInt64;
  EXPECT_EQ(k.name(), "scan_tiles_uint64_prod_r2");
  k = AxisKernel{};
  k.kind = Kind::SortStore;
  k.payload = 4;
  k.argsort = true;
  EXPECT_EQ(k.name(), "sort_store_float32_r1_p4_arg");
  EXPECT_EQ(k.str(), "kernel sort_store_float32_r1_p4_arg\n");
}

// The kernels a step needs follow its shape: short rows a thread each, one tile without totals,
// longer rows with the totals' scan (rank 2) too; sorts load, histogram, pass and store.
TEST(AxisKernels, StepKernelsFollowTheShape) {
  auto names = [](const Array& y) {
    std::vector<std::string> out;
    detail::Graph g;
    g.outputs = {y.node()};
    for (const detail::Step& st : detail::schedule_graph(g, detail::CompileOptions{}).steps)
      if (const auto* a = std::get_if<detail::AxisStep>(&st.op))
        for (const AxisKernel& k : detail::gpu_axis_kernels(*a)) out.push_back(k.name());
    return out;
  };
  using V = std::vector<std::string>;
  Array x = zeros({3, 20}, DType::Float32);
  EXPECT_EQ(names(cumsum(x, 1)), (V{"scan_rows_float32_sum_r2"}));
  EXPECT_EQ(names(cumprod(zeros({4000}, DType::Int32), 0)), (V{"scan_tiles_uint64_prod_r1"}));
  EXPECT_EQ(names(cumsum(zeros({5000}, DType::Float64), 0)),
            (V{"scan_totals_float64_sum_r1", "scan_rows_float64_sum_r2", "scan_tiles_float64_sum_r1"}));
  EXPECT_EQ(names(sort(zeros({100}, DType::Float32))), (V{"sort_load_float32_r1_p0", "sort_hist_float32_p0", "sort_scan",
                                                         "sort_pass_float32_p0_i16_ballot_b3", "sort_store_float32_r1_p0"}));
  EXPECT_EQ(names(argsort(zeros({2, 3}, DType::Int64), 0))[3], "sort_pass_int64_p4_i12_ballot_b3");
  EXPECT_EQ(names(argsort(zeros({2, 3}, DType::Int64), 0))[4], "sort_store_int64_r2_p4_arg");
  // x.at(indices): the copy, then (set) the mark of each row's last update, and the apply.
  Array x2 = zeros({5, 3}, DType::Float16), i = array<int64_t>({1, 1}, {2}), v = zeros({2, 3}, DType::Float16);
  EXPECT_EQ(names(x2.at(i).add(v)), (V{"scatter_copy_float16_r2", "scatter_apply_float16_add_r2"}));
  EXPECT_EQ(names(x2.at(i).set(v)), (V{"scatter_copy_float16_r2", "scatter_mark", "scatter_apply_float16_set_r2"}));
}

TEST(AxisKernels, GpuFloatSumsAccumulateInDouble) {
  for (DType t : {DType::Float32, DType::Float16, DType::BFloat16}) {
    SCOPED_TRACE(dtype_name(t));
    Array x = zeros({1000}, t).eval();
    for (const Array& y : {sum(x), mean(x), sum(reshape(x, {100, 10}), {0})}) {
      int reductions = 0;
      for (const detail::KernelStep& ks : arrayc_test::kernel_steps({y})) {
        if (!ks.kernel->is_reduction) continue;  // 16-bit floats: a cast of the float32 sum follows
        ++reductions;
        detail::PtxKernel p = detail::emit_ptx(ks.kernel, 90, detail::EmitOptions{});
        EXPECT_NE(p.ptx.find("add.rn.f64"), std::string::npos) << p.ptx;
      }
      EXPECT_EQ(reductions, 1);
    }
  }
  // Not max, and not float64 (already double) or integer sums.
  detail::PtxKernel m = detail::emit_ptx(arrayc_test::kernel_steps({max(zeros({1000}).eval())})[0].kernel, 90, detail::EmitOptions{});
  EXPECT_EQ(m.ptx.find(".f64"), std::string::npos) << m.ptx;
}

}  // namespace

// ARRAYC_SORT_TUNE's values, and the message of each kind of bad one (read at a GPU's first
// sort; the parser runs here without a GPU).
TEST(AxisKernels, SortTuneSettingAndItsErrors) {
  using arrayc::detail::parse_sort_tune;
  auto t = parse_sort_tune("");
  EXPECT_TRUE(t.ballot);
  EXPECT_EQ(t.items, 16);
  EXPECT_EQ(t.min_blocks, 3);
  t = parse_sort_tune("match/24");
  EXPECT_FALSE(t.ballot);
  EXPECT_EQ(t.items, 24);
  EXPECT_EQ(t.min_blocks, 0);
  t = parse_sort_tune("ballot/12/b2");
  EXPECT_TRUE(t.ballot);
  EXPECT_EQ(t.items, 12);
  EXPECT_EQ(t.min_blocks, 2);
  for (const char* bad : {"ballot", "warp/16", "ballot/0", "ballot/33", "ballot/x", "ballot/16/3", "ballot/16/b9",
                          "ballot/16/b3/x", "ballot//b3"}) {
    try {
      parse_sort_tune(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const arrayc::Error& e) {
      EXPECT_EQ(std::string(e.what()), std::string("ARRAYC_SORT_TUNE=") + bad +
                                           ": expected RANK/ITEMS[/bN] with RANK match or ballot, ITEMS from 1 to "
                                           "32 and N from 1 to 8, e.g. ballot/16/b3");
    }
  }
}
