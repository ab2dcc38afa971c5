// Several devices and processes (include/arrayc/distributed.h, docs/distributed.md).
//
// - Sharded arrays run anywhere: on the CPU a device may appear several times, so shard, map,
//   gather and reduce are checked in CI against the unsharded computation.
// - Tests named MultiGpu* need two GPUs: they skip with fewer, and fail under
//   ARRAYC_REQUIRE_GPU=1 when there is no GPU at all. They cover copies between GPUs (peer to peer
//   and staged through pinned memory), sharding over two GPUs, jit compiling once per kind of GPU,
//   the NCCL collectives, and two host threads driving two GPUs at once.
// - Tests named Mpi* run under `mpirun -np 2` (ctest label mpi) and skip otherwise.
// - NCCL or MPI absent: checked in child processes pointed at a library that does not exist.
#include "arrayc/distributed.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <chrono>
#include <limits>
#include <thread>

#include "arrayc/arrayc.h"
#include "backend/cuda/nccl.h"
#include "ir/node.h"
#include "support/devices.h"
#include "support/errors.h"

namespace {

using namespace arrayc;

std::vector<double> values(const Array& a) { return a.to_vector<double>(); }

// A float64 array of this shape with distinct values (some negative, a NaN-free mix).
Array sample(const Shape& s, DType t = DType::Float64, Device d = cpu()) {
  std::vector<double> v(static_cast<size_t>(shape_numel(s)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = (static_cast<double>((i * 7919) % 23) - 11) / 4;
  return cast(array(v, s), t).eval().to(d);
}

// ---- Sharded arrays on the CPU ------------------------------------------------------------------

TEST(Sharded, SplitsAsArraySplitAndGathersBack) {
  Array x = sample({5, 3});
  for (int64_t axis : {0, 1, -1, -2}) {
    ShardedArray s = shard(x, {cpu(), cpu(), cpu()}, axis);
    int64_t ax = axis < 0 ? axis + 2 : axis;
    EXPECT_EQ(s.axis(), ax);
    EXPECT_EQ(s.shape(), x.shape());
    EXPECT_EQ(s.devices(), (std::vector<Device>{cpu(), cpu(), cpu()}));
    std::vector<int64_t> extents;
    for (const Array& p : s.shards()) extents.push_back(p.shape()[ax]);
    EXPECT_EQ(extents, ax == 0 ? (std::vector<int64_t>{2, 2, 1}) : (std::vector<int64_t>{1, 1, 1}));
    EXPECT_EQ(values(s.gather(cpu())), values(x)) << "axis " << axis;
  }
}

TEST(Sharded, EveryDtypeStridedInputsAndEmptyShards) {
  for (DType t : kAllDTypes) {
    Array x = sample({4, 6}, t);
    Array xt = transpose(x);  // a strided view
    for (int64_t axis : {0, 1}) {
      ShardedArray s = shard(xt, {cpu(), cpu()}, axis);
      EXPECT_EQ(s.dtype(), t);
      EXPECT_EQ(values(s.gather(cpu())), values(xt)) << dtype_name(t) << " axis " << axis;
    }
  }
  Array small = sample({2, 2});
  ShardedArray s = shard(small, {cpu(), cpu(), cpu()});  // extents 1, 1, 0
  EXPECT_EQ(s.shards()[2].shape(), (Shape{0, 2}));
  EXPECT_EQ(values(s.gather(cpu())), values(small));
  ShardedArray e = shard(zeros({0, 3}), {cpu(), cpu()});
  EXPECT_EQ(e.gather(cpu()).shape(), (Shape{0, 3}));
}

TEST(Sharded, ElementwiseAndReductionsMatchTheWholeArray) {
  Array a = sample({7, 5}), b = sample({7, 5}) * 0.5 + 1;
  ShardedArray sa = shard(a, {cpu(), cpu(), cpu()}), sb = shard(b, {cpu(), cpu(), cpu()});
  EXPECT_EQ(values((sa + sb).gather(cpu())), values(a + b));
  EXPECT_EQ(values((sa - sb).gather(cpu())), values(a - b));
  EXPECT_EQ(values((sa * sb).gather(cpu())), values(a * b));
  EXPECT_EQ(values((sa / sb).gather(cpu())), values(a / b));
  ShardedArray e = map([](const Array& x, const Array& y) { return exp(x) * y; }, sa, sb).eval();
  EXPECT_EQ(values(e.gather(cpu())), values(exp(a) * b));
  // A reduction along the other axis keeps the sharding (rows stay on their devices).
  ShardedArray rows = map([](const Array& x) { return sum(x, {1}); }, sa);
  EXPECT_EQ(rows.shape(), (Shape{7}));
  EXPECT_EQ(values(rows.gather(cpu())), values(sum(a, {1})));
  EXPECT_NEAR(reduce(sa, ReduceOp::Sum, cpu()).item<double>(), sum(a).item<double>(), 1e-12);
  EXPECT_EQ(reduce(sa, ReduceOp::Max, cpu()).item<double>(), max(a).item<double>());
  EXPECT_EQ(reduce(sa, ReduceOp::Min, cpu()).item<double>(), min(a).item<double>());
  EXPECT_NEAR(reduce(sb, ReduceOp::Prod, cpu()).item<double>(), prod(b).item<double>(), 1e-9 * std::abs(prod(b).item<double>()));
  // Integer sums widen as sum does; max skips empty shards; NaN propagates.
  Array i = cast(sample({2, 3}), DType::Int32);
  Array si = reduce(shard(i, {cpu(), cpu(), cpu()}), ReduceOp::Sum, cpu());
  EXPECT_EQ(si.dtype(), sum(i).dtype());
  EXPECT_EQ(si.item<int64_t>(), sum(i).item<int64_t>());
  EXPECT_EQ(reduce(shard(i, {cpu(), cpu(), cpu()}), ReduceOp::Max, cpu()).item<int64_t>(), max(i).item<int64_t>());
  Array nan = array(std::vector<double>{1, std::nan(""), 3, 4});
  EXPECT_TRUE(std::isnan(reduce(shard(nan, {cpu(), cpu()}), ReduceOp::Max, cpu()).item<double>()));
  EXPECT_ARRAYC_ERROR(reduce(shard(zeros({0}), {cpu(), cpu()}), ReduceOp::Max, cpu()), "max");
}

TEST(Sharded, BadInputNamesTheDevicesAndLayouts) {
  Array x = sample({4, 2});
  EXPECT_ARRAYC_ERROR(shard(x, {}), "shard: no devices given");
  EXPECT_ARRAYC_ERROR(shard(array(std::vector<float>{1}, {}), {cpu()}), "shard: a rank-0 array has no axis to split");
  EXPECT_ARRAYC_ERROR(shard(x, {cpu()}, 2), "shard: axis 2 is out of range for rank 2");
  int n = gpu_count();
  EXPECT_ARRAYC_ERROR(shard(x, {cpu(), Device{Device::Kind::GPU, n}}), "gpu(" + std::to_string(n) + ")");
  EXPECT_ARRAYC_ERROR(ShardedArray({sample({2, 2}), sample({2, 3})}, 0),
                      "ShardedArray: shard 1 on cpu is float64[2, 3] but shard 0 on cpu is float64[2, 2]; shards may "
                      "differ only in the extent of axis 0");
  EXPECT_ARRAYC_ERROR(ShardedArray({sample({2, 2}), sample({2, 2}, DType::Float32)}, 0), "float32[2, 2]");
  ShardedArray a = shard(x, {cpu(), cpu()}, 0), b = shard(x, {cpu(), cpu()}, 1), c = shard(x, {cpu(), cpu(), cpu()});
  EXPECT_ARRAYC_ERROR(a + b,
                      "map: inputs 0 and 1 are sharded differently: [cpu, cpu] along axis 0 with extents [2, 2] vs "
                      "[cpu, cpu] along axis 1 with extents [1, 1]");
  EXPECT_ARRAYC_ERROR(a * c, "[cpu, cpu, cpu] along axis 0 with extents [2, 1, 1]");
  EXPECT_ARRAYC_ERROR(map(std::function<Array(const std::vector<Array>&)>(), {}), "map: no sharded inputs given");
}

TEST(Collectives, OneProcessNeedsOneArrayPerGpu) {
  Array x = sample({4});
  EXPECT_ARRAYC_ERROR(all_reduce({x, x}),
                      "all_reduce: array 0 is on cpu; the collectives of one process take one array per GPU");
  EXPECT_ARRAYC_ERROR(all_gather({}), "all_gather: no arrays given");
  EXPECT_ARRAYC_ERROR(reduce_scatter({x}), "reduce_scatter: array 0 is on cpu");
  EXPECT_ARRAYC_ERROR(broadcast(x, {}), "broadcast: no devices given");
  std::vector<Array> copies = broadcast(x, {cpu(), cpu()});  // no GPU involved: plain copies
  ASSERT_EQ(copies.size(), 2u);
  EXPECT_EQ(values(copies[1]), values(x));
  EXPECT_ARRAYC_ERROR(require_peer_access(cpu(), cpu()), "require_peer_access: cpu cannot read cpu's memory directly",
                      "peer access is between two GPUs");
  EXPECT_FALSE(can_access_peer(cpu(), cpu()));
  synchronize();  // every device used so far; nothing to wait for here
}

// The library named by `var` does not exist: the first use raises arrayc::Error saying so.
template <typename Use> void expect_absent(const char* var, const char* path, Use use, const std::string& msg) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv(var, path, 1);
        try {
          use();
        } catch (const Error& e) {
          std::fputs(e.what(), stderr);
          std::_Exit(3);
        }
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(3), msg);
}

TEST(Collectives, MissingNcclOrMpiIsAClearError) {
  expect_absent("ARRAYC_NCCL_LIBRARY", "/nonexistent/libnccl.so.2", [] { detail::nccl::version(); },
                "NCCL: NCCL \\(/nonexistent/libnccl.so.2\\) could not be loaded: .*install NCCL");
  expect_absent("ARRAYC_MPI_LIBRARY", "/nonexistent/libmpi.so.40", [] { processes::rank(); },
                "process rank: MPI \\(/nonexistent/libmpi.so.40\\) could not be loaded: .*install OpenMPI");
  if (gpu_count() >= 2)
    expect_absent("ARRAYC_NCCL_LIBRARY", "/nonexistent/libnccl.so.2",
                  [] { all_reduce({ones({4}, DType::Float32, gpu(0)), ones({4}, DType::Float32, gpu(1))}); },
                  "NCCL communicator over gpu:0, gpu:1: NCCL \\(/nonexistent/libnccl.so.2\\) could not be loaded");
}

// ---- Two GPUs -----------------------------------------------------------------------------------

#define ARRAYC_REQUIRE_TWO_GPUS()                                                                         \
  do {                                                                                                    \
    if (gpu_count() == 0 && arrayc_test::gpu_required()) FAIL() << "ARRAYC_REQUIRE_GPU=1 but there is no GPU"; \
    if (gpu_count() < 2) GTEST_SKIP() << "needs 2 GPUs; gpu_count() == " << gpu_count();                   \
  } while (0)

TEST(MultiGpu, CopiesPeerToPeerAndStagedAgree) {
  ARRAYC_REQUIRE_TWO_GPUS();
  Device g0 = gpu(0), g1 = gpu(1);
  std::cerr << "peer access gpu:1 <- gpu:0: " << can_access_peer(g1, g0) << "\n";
  if (can_access_peer(g1, g0)) require_peer_access(g1, g0);
  for (bool staged : {false, true}) {
    if (staged) setenv("ARRAYC_PEER_ACCESS", "0", 1);
    EXPECT_EQ(can_access_peer(g1, g0), staged ? false : can_access_peer(g1, g0));
    if (staged)
      EXPECT_ARRAYC_ERROR(require_peer_access(g1, g0), "require_peer_access: gpu:1 cannot read gpu:0's memory directly",
                          "staged through pinned host memory");
    // Sizes around the staging chunk (32 MiB) and an odd one; the source is produced by a kernel
    // still queued when the copy is asked for, and freed right after it.
    for (int64_t n : {int64_t{1}, int64_t{1000003}, int64_t{(32 << 20) / 4 + 5}, int64_t{(80 << 20) / 4}}) {
      Array y = (arange(n, DType::Int64, g0) * 3 + 1).to(g1);
      EXPECT_EQ(y.device(), g1);
      Array back = y.to(g0);
      EXPECT_EQ(sum(back == arange(n, DType::Int64, g0) * 3 + 1).item<int64_t>(), n) << "n=" << n << " staged=" << staged;
    }
    Array v = transpose(sample({300, 7}, DType::Float32, g0)).to(g1);  // strided: packed on gpu:0 first
    EXPECT_EQ(v.to_vector<float>(), transpose(sample({300, 7}, DType::Float32)).to_vector<float>());
    unsetenv("ARRAYC_PEER_ACCESS");
  }
  synchronize();
}

TEST(MultiGpu, ShardedWorkAndJitCompilingOncePerKindOfGpu) {
  ARRAYC_REQUIRE_TWO_GPUS();
  Array a = sample({1001, 33}, DType::Float32), b = sample({1001, 33}, DType::Float32) * 0.25f;
  ShardedArray sa = shard(a, {gpu(0), gpu(1)}), sb = shard(b, {gpu(0), gpu(1)});
  EXPECT_EQ(sa.devices(), (std::vector<Device>{gpu(0), gpu(1)}));
  EXPECT_EQ(values((sa * sb + sa).gather(cpu())), values(a * b + a));
  EXPECT_EQ(values(shard(a, {gpu(0), gpu(1)}, 1).gather(gpu(1))), values(a));
  EXPECT_NEAR(reduce(sa, ReduceOp::Sum, gpu(1)).item<double>(), sum(cast(a, DType::Float64)).item<double>(), 1e-2);
  EXPECT_EQ(reduce(sa, ReduceOp::Max, cpu()).item<float>(), max(a).item<float>());

  auto f = jit([](const Array& x, const Array& y) { return std::vector<Array>{tanh(x) * y - x, sum(x * y, {1})}; });
  auto step = [&](const std::vector<Array>& in) { return f(in[0], in[1])[0]; };
  reset_stats();
  Array on0 = step({sa.shards()[0], sb.shards()[0]}).eval();
  int64_t compiles = stats().compiles;
  EXPECT_GT(compiles, 0);
  ShardedArray r = map(step, {sa, sb});  // shard 0 again (cached), shard 1 on the other GPU
  EXPECT_EQ(stats().compiles, compiles) << "gpu:1 compiled again; both are sm_" << 0;
  EXPECT_EQ(stats().traces, 2);  // one trace per device: the signature includes it
  EXPECT_EQ(values(r.gather(cpu())), values(tanh(a) * b - a));
}

TEST(MultiGpu, NcclCollectives) {
  ARRAYC_REQUIRE_TWO_GPUS();
  if (!detail::nccl::unavailable_reason().empty()) {
    EXPECT_ARRAYC_ERROR(all_reduce({ones({4}, DType::Float32, gpu(0)), ones({4}, DType::Float32, gpu(1))}),
                        detail::nccl::unavailable_reason());
    if (arrayc_test::gpu_required()) FAIL() << detail::nccl::unavailable_reason();
    GTEST_SKIP() << detail::nccl::unavailable_reason();
  }
  std::cerr << "NCCL " << detail::nccl::version() << "\n";
  Device g0 = gpu(0), g1 = gpu(1);
  for (DType t : {DType::Int32, DType::Int64, DType::Float32, DType::Float64}) {
    Array x0 = sample({6, 5}, t, g0), x1 = (sample({6, 5}, t) * 2 + 3).eval().to(g1);
    Array c0 = x0.to(cpu()), c1 = x1.to(cpu());
    std::vector<Array> s = all_reduce({x0, x1});
    ASSERT_EQ(s.size(), 2u);
    EXPECT_EQ(s[0].device(), g0);
    EXPECT_EQ(s[1].device(), g1);
    EXPECT_EQ(values(s[0]), values(c0 + c1)) << dtype_name(t);
    EXPECT_EQ(values(s[1]), values(c0 + c1)) << dtype_name(t);
    EXPECT_EQ(values(all_reduce({x0, x1}, ReduceOp::Max)[1]), values(maximum(c0, c1)));
    EXPECT_EQ(values(all_reduce({x0, x1}, ReduceOp::Min)[0]), values(minimum(c0, c1)));
    EXPECT_EQ(values(all_reduce({x0, x1}, ReduceOp::Prod)[0]), values(c0 * c1));
    std::vector<Array> g = all_gather({x0, x1});
    EXPECT_EQ(g[1].shape(), (Shape{12, 5}));
    std::vector<double> both = values(c0), v1 = values(c1);
    both.insert(both.end(), v1.begin(), v1.end());
    EXPECT_EQ(values(g[0]), both);
    EXPECT_EQ(values(g[1]), both);
    std::vector<Array> rs = reduce_scatter({x0, x1});
    EXPECT_EQ(rs[0].shape(), (Shape{3, 5}));
    std::vector<double> total = values(c0 + c1);
    EXPECT_EQ(values(rs[0]), std::vector<double>(total.begin(), total.begin() + 15));
    EXPECT_EQ(values(rs[1]), std::vector<double>(total.begin() + 15, total.end()));
    std::vector<Array> bc = broadcast(x1, {g0, g1});
    EXPECT_EQ(values(bc[0]), values(c1));
    EXPECT_EQ(bc[0].device(), g0);
    std::vector<Array> from_cpu = broadcast(c0, {g1, g0});
    EXPECT_EQ(values(from_cpu[0]), values(c0));
  }
  // Inputs still being computed, strided, rank 0, empty, and bool max.
  Array l0 = exp(sample({300}, DType::Float32, g0)), l1 = transpose(sample({3, 100}, DType::Float32, g1)).eval();
  std::vector<Array> s = all_reduce({l0, reshape(l1, {300})});
  EXPECT_EQ(values(s[1]), values(l0.to(cpu()) + reshape(transpose(sample({3, 100}, DType::Float32)), {300})));
  EXPECT_EQ(all_reduce({full({}, 2.0, DType::Float64, g0), full({}, 5.0, DType::Float64, g1)})[1].item<double>(), 7.0);
  EXPECT_EQ(all_reduce({zeros({0}, DType::Float32, g0), zeros({0}, DType::Float32, g1)})[0].size(), 0);
  Array b0 = array(std::vector<bool>{true, false, false}).to(g0), b1 = array(std::vector<bool>{false, false, true}).to(g1);
  EXPECT_EQ(all_reduce({b0, b1}, ReduceOp::Max)[0].to_vector<bool>(), (std::vector<bool>{true, false, true}));
  // Bad input names the devices.
  Array x = ones({4}, DType::Float32, g0);
  EXPECT_ARRAYC_ERROR(all_reduce({x, x}), "all_reduce: arrays 0 and 1 are both on gpu:0; give one array per GPU");
  EXPECT_ARRAYC_ERROR(all_reduce({x, ones({5}, DType::Float32, g1)}),
                      "all_reduce: array 1 on gpu:1 is float32[5] but array 0 on gpu:0 is float32[4]; all must match");
  EXPECT_ARRAYC_ERROR(all_reduce({x, ones({4}, DType::Float64, g1)}), "float64[4]");
  EXPECT_ARRAYC_ERROR(all_reduce({b0, b1}), "all_reduce: NCCL has no sum/product of dtype bool");
  EXPECT_ARRAYC_ERROR(reduce_scatter({ones({3}, DType::Float32, g0), ones({3}, DType::Float32, g1)}),
                      "reduce_scatter: axis 0 of shape [3] does not split into 2 equal parts");
  EXPECT_ARRAYC_ERROR(all_gather({full({}, 1.0, DType::Float32, g0), full({}, 1.0, DType::Float32, g1)}),
                      "all_gather: rank-0 arrays cannot be joined along axis 0");
  EXPECT_ARRAYC_ERROR(all_reduce({x, ones({4}, DType::Float32, cpu())}), "all_reduce: array 1 is on cpu");
}

TEST(MultiGpu, TwoHostThreadsDriveTwoGpusAtOnce) {
  ARRAYC_REQUIRE_TWO_GPUS();
  std::vector<double> got[2];
  auto work = [&](int i) {
    Device d = gpu(i);
    Array m = sample({256, 256}, DType::Float32, d);
    Array acc = zeros({256, 256}, DType::Float32, d);
    for (int k = 0; k < 8; ++k) acc = (acc + dot(m, m) * 1e-3f).eval();
    synchronize(d);
    got[i] = values(sum(acc, {0}));
  };
  std::thread t0(work, 0), t1(work, 1);
  t0.join();
  t1.join();
  EXPECT_EQ(got[0], got[1]);
  synchronize();
}

// ---- Several processes (mpirun -np 2; ctest label mpi) -----------------------------------------

bool under_mpirun() { return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr; }

#define ARRAYC_REQUIRE_MPIRUN() \
  if (!under_mpirun()) GTEST_SKIP() << "runs under mpirun (ctest -L mpi)"

// Runs the collectives on `d` (the CPU through MPI, a GPU through NCCL).
void check_process_collectives(Device d) {
  int r = processes::rank(), n = processes::count();
  ASSERT_GE(n, 2);
  for (DType t : {DType::Int32, DType::Int64, DType::Float32, DType::Float64}) {
    // Rank r holds base * (r + 1).
    Array base = sample({4, 3}, t);
    Array mine = (base * (r + 1)).eval().to(d);
    Array expect_sum = base * (n * (n + 1) / 2);
    Array s = processes::all_reduce(mine);
    EXPECT_EQ(s.device(), d);
    EXPECT_EQ(values(s), values(expect_sum)) << dtype_name(t);
    EXPECT_EQ(values(processes::all_reduce(mine, ReduceOp::Max)), values(maximum(base, base * n)));
    EXPECT_EQ(values(processes::all_reduce(mine, ReduceOp::Min)), values(minimum(base, base * n)));
    Array g = processes::all_gather(mine);
    EXPECT_EQ(g.shape(), (Shape{4 * n, 3}));
    std::vector<double> gv = values(g), b = values(base);
    for (int k = 0; k < n; ++k)
      for (size_t i = 0; i < b.size(); ++i) EXPECT_EQ(gv[k * b.size() + i], b[i] * (k + 1));
    Array big = (sample({2 * n, 3}, t) * (r + 1)).eval().to(d);
    Array part = processes::reduce_scatter(big);
    std::vector<double> whole = values(sample({2 * n, 3}, t) * (n * (n + 1) / 2));
    EXPECT_EQ(values(part), std::vector<double>(whole.begin() + r * 6, whole.begin() + r * 6 + 6));
    Array bc = processes::broadcast(mine, 1);
    EXPECT_EQ(values(bc), values(base * 2));
  }
  processes::barrier();
}

TEST(Mpi, CpuCollectivesThroughMpi) {
  ARRAYC_REQUIRE_MPIRUN();
  EXPECT_EQ(processes::count(), std::atoi(std::getenv("OMPI_COMM_WORLD_SIZE")));
  check_process_collectives(cpu());
  Array r = processes::all_reduce(full({}, processes::rank() + 1.0, DType::Float64, cpu()));
  EXPECT_EQ(r.item<double>(), processes::count() * (processes::count() + 1) / 2.0);
  Array b = array(std::vector<bool>{processes::rank() == 0, false});
  EXPECT_EQ(processes::all_reduce(b, ReduceOp::Max).to_vector<bool>(), (std::vector<bool>{true, false}));
}

TEST(Mpi, MismatchedArraysRaiseOnEveryProcess) {
  ARRAYC_REQUIRE_MPIRUN();
  int r = processes::rank();
  EXPECT_ARRAYC_ERROR(processes::all_reduce(zeros({3 + r})),
                      "all_reduce: process " + std::to_string(r) + " passes float32[" + std::to_string(3 + r) + "]",
                      "every process must pass the same dtype and shape");
  EXPECT_ARRAYC_ERROR(processes::all_reduce(array(std::vector<bool>{true})), "all_reduce: MPI has no sum/product of dtype bool");
  EXPECT_ARRAYC_ERROR(processes::broadcast(zeros({2}), 7), "broadcast: root 7 is not a process (there are");
  EXPECT_ARRAYC_ERROR(processes::reduce_scatter(zeros({3})), "reduce_scatter: axis 0 of shape [3] does not split into");
  processes::barrier();
}

TEST(Mpi, GpuCollectivesThroughNcclBootstrappedByMpi) {
  ARRAYC_REQUIRE_MPIRUN();
  if (gpu_count() == 0) GTEST_SKIP() << "no GPU";
  if (!detail::nccl::unavailable_reason().empty()) GTEST_SKIP() << detail::nccl::unavailable_reason();
  check_process_collectives(gpu(processes::rank() % gpu_count()));
}

// Last of the Mpi tests: it leaves rank 0's communicator aborted. Rank 1 never joins a GPU
// all-reduce; rank 0's ends after ARRAYC_COLLECTIVE_TIMEOUT seconds with an error, not a hang.
TEST(Mpi, AGpuCollectiveThatAPeerNeverJoinsEndsInAnError) {
  ARRAYC_REQUIRE_MPIRUN();
  if (gpu_count() == 0) GTEST_SKIP() << "no GPU";
  if (!detail::nccl::unavailable_reason().empty()) GTEST_SKIP() << detail::nccl::unavailable_reason();
  int r = processes::rank();
  Device d = gpu(r % gpu_count());
  Array x = ones({1 << 20}, DType::Float32, d).eval();
  EXPECT_EQ(processes::all_reduce(x).to_vector<float>()[0], static_cast<float>(processes::count()));
  if (r == 0) {
    setenv("ARRAYC_COLLECTIVE_TIMEOUT", "2", 1);
    detail::nccl::Comm& c = detail::nccl::global(d.index, processes::count(), r, [](char*, size_t) {});
    void* p = x.node()->storage->data;
    auto lonely = [&] {
      detail::nccl::run(c, detail::nccl::Kind::AllReduce, {p}, {p}, 1 << 20, DType::Float32, detail::nccl::Op::Sum, 0,
                        "all_reduce");
    };
    EXPECT_ARRAYC_ERROR(lonely(), "all_reduce did not finish within ARRAYC_COLLECTIVE_TIMEOUT=2 seconds",
                        "the communicator was aborted");
    EXPECT_ARRAYC_ERROR(lonely(), "all_reduce: the communicator is unusable after an earlier failure");
    unsetenv("ARRAYC_COLLECTIVE_TIMEOUT");
  }
  processes::barrier();
}

}  // namespace

namespace {

// Rank 1 joins a barrier 3 seconds late: rank 0's, with ARRAYC_COLLECTIVE_TIMEOUT=1, raises
// instead of waiting. The late barrier still completes the pending one, so the job ends cleanly.
TEST(Mpi, ACpuCollectiveThatAPeerJoinsTooLateRaisesInsteadOfHanging) {
  ARRAYC_REQUIRE_MPIRUN();
  processes::barrier();
  if (processes::rank() == 0) {
    setenv("ARRAYC_COLLECTIVE_TIMEOUT", "1", 1);
    EXPECT_ARRAYC_ERROR(processes::barrier(),
                        "barrier: MPI_Ibarrier did not finish within ARRAYC_COLLECTIVE_TIMEOUT=1 seconds (process 0 of " +
                            std::to_string(processes::count()) + "; did another process not call it?)");
    unsetenv("ARRAYC_COLLECTIVE_TIMEOUT");
  } else {
    std::this_thread::sleep_for(std::chrono::seconds(3));
    processes::barrier();  // the one rank 0 gave up on
  }
  processes::barrier();
  EXPECT_EQ(processes::all_reduce(full({}, 1.0, DType::Float64, cpu())).item<double>(), processes::count());
}

}  // namespace

// Appended: the data-parallel MLP step (benchmarks/dp_mlp.h) on two GPUs against one.
#include "../../benchmarks/dp_mlp.h"

namespace {

TEST(MultiGpu, DataParallelMlpStepMatchesOneGpu) {
  ARRAYC_REQUIRE_TWO_GPUS();
  if (!detail::nccl::unavailable_reason().empty()) {
    if (arrayc_test::gpu_required()) FAIL() << detail::nccl::unavailable_reason();
    GTEST_SKIP() << detail::nccl::unavailable_reason();
  }
  const int64_t n = 256, d = 32, h = 64, o = 8;
  Array x = uniform({n, d}, 1, -1, 1, DType::Float32, cpu()).eval();
  Array t = sin(dot(x, uniform({d, o}, 2, -1, 1, DType::Float32, cpu()))).eval();
  std::vector<dp_mlp::Params> one = {dp_mlp::init(d, h, o, gpu(0))};
  std::vector<dp_mlp::Params> two = {dp_mlp::init(d, h, o, gpu(0)), dp_mlp::init(d, h, o, gpu(1))};
  ShardedArray xs = shard(x, {gpu(0), gpu(1)}), ts = shard(t, {gpu(0), gpu(1)});
  std::vector<float> l1, l2;
  for (int s = 0; s < 6; ++s) {
    l1.push_back(dp_mlp::step(one, {x.to(gpu(0))}, {t.to(gpu(0))}, n, 0.1f).item<float>());
    l2.push_back(dp_mlp::step(two, xs.shards(), ts.shards(), n, 0.1f).item<float>());
  }
  for (int s = 0; s < 6; ++s) EXPECT_NEAR(l2[s], l1[s], 1e-5f * std::abs(l1[s]) + 1e-6f) << "step " << s;
  EXPECT_LT(l1.back(), l1.front());  // it learns
  // Both replicas hold the same weights, equal to the one-GPU run's.
  std::vector<float> w0 = two[0].w1.to_vector<float>(), w1 = two[1].w1.to_vector<float>(), ref = one[0].w1.to_vector<float>();
  EXPECT_EQ(w0, w1);
  for (size_t i = 0; i < ref.size(); ++i) ASSERT_NEAR(w0[i], ref[i], 1e-5f) << i;
}

}  // namespace
