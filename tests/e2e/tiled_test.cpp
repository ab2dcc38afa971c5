// Tiled host kernels (tiled_leaves, codegen/cpu/host_policy.h): an elementwise kernel that reads
// an operand across its memory rows (a transposed or otherwise strided view) walks its space in
// tiles and copies each such operand's tile into a buffer first. These tests check the results
// against the reference interpreter for every dtype, shapes around the tile size, thread chunks
// that start and end mid-row, ranks 3 and 4, several tiled operands and math in the body; a
// hand-made kernel called on arbitrary ranges pins which elements a call writes; and the stage
// dumps say what was done.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <numeric>

#include "kernel/kernel.h"
#include "backend/host/host_jit.h"
#include "codegen/cpu/host_policy.h"
#include "backend/host/thread_pool.h"
#include "support/data.h"
#include "support/host_cpu.h"
#include "support/reference.h"

namespace {

using namespace arrayc;
using namespace arrayc_test;
using detail::kHostTileCols;
using detail::kHostTileRows;

class Tiled : public ::testing::Test {
 protected:
  void SetUp() override {
    if (default_device().kind != Device::Kind::CPU) GTEST_SKIP() << "host kernels only";
    saved_threads_ = detail::num_threads();
    // Four chunks even on two cores: large cases split at rows' middles.
    detail::set_num_threads(4);
  }
  void TearDown() override {
    if (saved_threads_ > 0) detail::set_num_threads(saved_threads_);
  }
  int saved_threads_ = 0;
};

// Rows x columns of the result: smaller than a tile, one tile, one element past it either way,
// several tiles with partial ones at the ends, and (above the pool's grain of 32768 elements)
// sizes whose thread chunks start in the middle of rows.
const Shape kShapes[] = {{2, 3},     {31, 63},   {32, 64},  {33, 65},  {3, 1000},
                         {1000, 3},  {100, 300}, {257, 300}, {333, 513}};

TEST_F(Tiled, TransposedOperandOfEveryDtype) {
  for (const Shape& s : kShapes) {
    SCOPED_TRACE("result " + shape_str(s));
    Shape t{s[1], s[0]};
    for (DType d : {DType::Float32, DType::Float64, DType::Int32, DType::Int64}) {
      SCOPED_TRACE(dtype_name(d));
      Array x = random_array(d, t, 1, -100, 100);
      Array y = random_array(d, s, 2, -100, 100);
      EXPECT_MATCHES_REFERENCE(transpose(x) + y);
      EXPECT_MATCHES_REFERENCE(transpose(x.eval()) * 2);  // an evaluated input, alone in its kernel
    }
    Array b = random_array(DType::Bool, t, 3);
    EXPECT_MATCHES_REFERENCE(transpose(b) && random_array(DType::Bool, s, 4));
    EXPECT_MATCHES_REFERENCE(where(transpose(b), random_array(DType::Float32, s, 5), 0.0f));
  }
}

TEST_F(Tiled, KernelTextNamesTheTiledOperands) {
  Array x = random_array(DType::Float32, {300, 200}, 6).eval();
  Array y = random_array(DType::Float32, {200, 300}, 7).eval();
  Stages st = inspect({y + transpose(x)});
  ASSERT_EQ(st.kernels.size(), 1u);
  const KernelStages& k = st.kernels[0];
  EXPECT_NE(k.kernel.find("%1 = load ptr1 idx1 strides=[1,s] : float32\n"), std::string::npos) << k.kernel;
  EXPECT_NE(k.kernel.find("; tiles of 32 rows x 64 columns, each tile of ptr1 copied to a buffer first: read "
                          "across its rows\n"),
            std::string::npos)
      << k.kernel;
  // The tile copy is the process's shared one.
  EXPECT_NE(k.opt.find("call void @arrayc_tile_copy_4("), std::string::npos) << k.opt;
  // The row loop reads the buffer, so it vectorizes at the CPU's width.
  for (const CpuWidth& w : x86_widths()) {
    std::vector<detail::HostStages> cpu = stages_for_cpu({y + transpose(x)}, w.cpu);
    ASSERT_EQ(cpu.size(), 1u);
    EXPECT_NE(cpu[0].opt_ir.find(std::string("fadd ") + w.floats), std::string::npos) << w.cpu << "\n" << cpu[0].opt_ir;
  }
  // Contiguous operands alone: no tiles.
  Stages plain = inspect({y + reshape(x, {200, 300})});
  ASSERT_EQ(plain.kernels.size(), 1u);
  EXPECT_EQ(plain.kernels[0].kernel.find("tiles"), std::string::npos) << plain.kernels[0].kernel;
}

TEST_F(Tiled, SeveralTiledOperandsAndBroadcasts) {
  for (const Shape& s : {Shape{70, 130}, Shape{257, 300}}) {
    SCOPED_TRACE("result " + shape_str(s));
    Shape t{s[1], s[0]};
    Array x = random_array(DType::Float32, t, 8);
    Array z = random_array(DType::Float64, t, 9);
    Array row = random_array(DType::Float32, {s[1]}, 10);
    Array col = random_array(DType::Float32, {s[0], 1}, 11);
    // Two tiled operands of different element sizes, a broadcast row and column.
    EXPECT_MATCHES_REFERENCE(transpose(x) * row + transpose(z) - col);
    // The same transposed operand twice, and a batch dim broadcast over a transposed one.
    EXPECT_MATCHES_REFERENCE(transpose(x) * transpose(x) - 1.0f);
    EXPECT_MATCHES_REFERENCE(broadcast_to(transpose(x), {2, s[0], s[1]}) + random_array(DType::Float32, {2, 1, s[1]}, 18));
  }
}

TEST_F(Tiled, OperandsWhoseBuffersWouldTakeTooMuchStackGoUntiled) {
  // 16 float64 tiled operands take kMaxTileBufferBytes of buffers; a 17th makes the kernel untiled.
  for (int count : {16, 17}) {
    SCOPED_TRACE(std::to_string(count) + " operands");
    Array acc = zeros({40, 70}, DType::Float64);
    for (int i = 0; i < count; ++i) acc = acc + transpose(random_array(DType::Float64, {70, 40}, 30 + i));
    Stages st = inspect({acc});
    ASSERT_EQ(st.kernels.size(), 1u);
    EXPECT_EQ(st.kernels[0].kernel.find("; tiles of") != std::string::npos, count == 16) << st.kernels[0].kernel;
    EXPECT_MATCHES_REFERENCE(acc);
  }
}

TEST_F(Tiled, HigherRanksAndEveryPermutation) {
  Array x = random_array(DType::Float32, {6, 40, 70}, 12);
  std::vector<int64_t> p{0, 1, 2};
  do {
    SCOPED_TRACE("perm " + std::to_string(p[0]) + std::to_string(p[1]) + std::to_string(p[2]));
    Array t = transpose(x, p);
    EXPECT_MATCHES_REFERENCE(t + random_array(DType::Float32, t.shape(), 13));
  } while (std::next_permutation(p.begin(), p.end()));
  // A leaf strided along both of the last two dims (the tile copy's path without blocks).
  Array z = transpose(random_array(DType::Int32, {80, 20, 30}, 19), {2, 1, 0});
  EXPECT_MATCHES_REFERENCE(z * 3 + random_array(DType::Int32, z.shape(), 20));
  // Rank 4: a batch of transposed matrices next to a plain operand.
  Array b = random_array(DType::Float64, {3, 2, 50, 90}, 14);
  EXPECT_MATCHES_REFERENCE(transpose(b, {0, 1, 3, 2}) * 0.5 + random_array(DType::Float64, {3, 2, 90, 50}, 15));
}

TEST_F(Tiled, MathInTheTiledBody) {
  for (const Shape& s : {Shape{33, 65}, Shape{257, 300}}) {
    SCOPED_TRACE("result " + shape_str(s));
    Array x = transpose(normal({s[1], s[0]}, 16));
    EXPECT_MATCHES_REFERENCE(arrayc::exp(x));
    // The packed sincos, whose row loop asks for 16 lanes, and W8's chain.
    EXPECT_MATCHES_REFERENCE(arrayc::sin(x) + arrayc::cos(x));
    EXPECT_MATCHES_REFERENCE(where(x > 0.0f, x * 1.5f + 0.25f, arrayc::exp(x) - 1.0f) * arrayc::cos(x) +
                             arrayc::sin(x) * 0.5f);
    Array d = transpose(normal({s[1], s[0]}, 17, 0.0, 1.0, DType::Float64));
    EXPECT_MATCHES_REFERENCE(arrayc::tanh(d) + arrayc::log(d * d + 1.0));
  }
}

// n floats between two inaccessible pages, so that a read before or past them faults.
class GuardedFloats {
 public:
  explicit GuardedFloats(int64_t n) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    data_bytes_ = (static_cast<size_t>(n) * sizeof(float) + page - 1) / page * page;
    size_ = data_bytes_ + 2 * page;
    base_ = static_cast<char*>(mmap(nullptr, size_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    EXPECT_NE(base_, MAP_FAILED);
    EXPECT_EQ(mprotect(base_ + page, data_bytes_, PROT_READ | PROT_WRITE), 0);
    data_ = reinterpret_cast<float*>(base_ + page + data_bytes_) - n;  // ends at the guard page
  }
  ~GuardedFloats() { munmap(base_, size_); }
  float* data() { return data_; }

 private:
  char* base_ = nullptr;
  size_t size_ = 0, data_bytes_ = 0;
  float* data_ = nullptr;
};

TEST_F(Tiled, ACallWritesExactlyItsRange) {
  // out[r, c] = x[c, r] over rows x cols, called on ranges that start and end anywhere: mid-row,
  // within one row, empty, the whole space. Elements outside the range keep their sentinel, and
  // x sits between guard pages: the tile copy reads nothing outside it.
  using namespace arrayc::detail;
  Kernel k;
  k.name = "transpose_copy";
  k.rank = 2;
  k.leaves.push_back(KernelLeaf{Op::Buffer, DType::Float32, {StrideKind::Unit, StrideKind::Any}, {}, 0, 0, 0});
  k.body.push_back(KernelInstr{Op::Buffer, DType::Float32, {}, 0});
  k.outputs.push_back(KernelOutput{0, DType::Float32, {StrideKind::Any, StrideKind::Unit}, 1, 1});
  k.num_ptrs = 2;
  k.num_indexed = 2;
  ASSERT_EQ(detail::tiled_leaves(k), std::vector<int>{0});
  ASSERT_TRUE(detail::streamed_outputs(k).empty());
  std::unique_ptr<HostBinary> ck = compile_host_kernel(k, EmitOptions{});
  // Tiles where there are 16 rows or more, and rows of kHostTileCols or more; else no tiles.
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{1, 1}, {5, 3}, {kHostTileRows + 3, kHostTileCols * 2 + 5},
                            {16, kHostTileCols}, {100, kHostTileCols}, {70, 20}, {3, 200}}) {
    int64_t n = rows * cols;
    GuardedFloats guarded(n);
    float* in = guarded.data();
    std::iota(in, in + n, 0.0f);  // in is cols x rows: in[c * rows + r]
    std::vector<float> out(n);
    std::vector<int64_t> params(k.num_params(), 0);
    params[0] = rows;
    params[1] = cols;
    params[k.param_block(0) + 1] = 1;     // in: along rows, 1
    params[k.param_block(0) + 2] = rows;  // along columns, a row of in
    params[k.param_block(1) + 1] = cols;  // out: row-major
    params[k.param_block(1) + 2] = 1;
    std::vector<std::pair<int64_t, int64_t>> ranges = {{0, n}, {0, 0}, {n / 2, n / 2}, {1, n - 1}, {n / 3, n / 2 + 1}};
    for (int64_t b : {int64_t{0}, cols - 1, cols + 1, n - 1}) ranges.push_back({std::clamp<int64_t>(b, 0, n), n});
    for (auto [begin, end] : ranges) {
      if (begin > end) continue;
      SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(cols) + ", range [" + std::to_string(begin) + ", " +
                   std::to_string(end) + ")");
      std::fill(out.begin(), out.end(), -1.0f);
      void* ptrs[] = {in, out.data()};
      ck->fn(ptrs, params.data(), begin, end);
      for (int64_t i = 0; i < n; ++i) {
        int64_t r = i / cols, c = i % cols;
        float want = i >= begin && i < end ? in[c * rows + r] : -1.0f;
        ASSERT_EQ(out[i], want) << "element " << i << " (row " << r << ", column " << c << ")";
      }
    }
  }
}

}  // namespace
