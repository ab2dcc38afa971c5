// arrayc-matmul-bench: matrix products on the CPU (issue 29; docs/blas.md).
//
//   arrayc-matmul-bench [--calibrate] [--rows] [--big] [--reps N] [--layer MxKxN] [--loss MxKxN] [--gpu]
//                       [--skinny | --tiled | --packed | --batched]
//
// --layer MxKxN: the W9 row alone at that shape. --loss MxKxN: a mean squared error
//   mean((x @ w - y)^2) fused (a reduction epilogue: the product kernel reduces) and not (the
//   product, then the reduction kernel).
// --calibrate: OpenBLAS's candidate cores on this CPU x thread counts (1, half, all of the
//   pool's), W3/W4/W5 through arrayc, medians in ms; the fastest of each column marked.
// --rows: W3, W4, W5 (syrk and, for comparison, a general product of the same shapes), and the
//   layer relu(x @ w + b) (W9) at 256x784x256 (and 4096^3 with --big), each with its epilogue fused
//   and not (ARRAYC_EPILOGUE=0: the product, then one fused elementwise kernel). Medians in ms.
// Neither flag: both. Peers (numpy, PyTorch) come from benchmarks/peers/matmul_peers.py with the
// same shapes; benchmarks/matmul_host.sh runs both.
// --gpu: the rows on gpu(0) (W3, W4, W5 as one triangle and as a general product, W9 at
//   256x784x256 and 4096^3 fused and not), each call timed up to synchronize(), and the first
//   call of each kernel (its compile) apart; the peers are benchmarks/peers/matmul_peers_gpu.py
//   (cuBLAS through PyTorch), run right after it on the same machine. --case W4 (W3, W5, W9):
//   those rows only. --tf32: float32 products at MatmulPrecision::High (the TF32 tensor cores;
//   the peers' --tf32 sets torch.backends.cuda.matmul.allow_tf32). --case H: the float16/bfloat16
//   rows only (also part of every --gpu run): 4096^3 x @ w and W5's x @ x.T at 3000^2, on the
//   16-bit tensor cores; --sweep adds the 4096^3 float16 product with each tile of a list forced
//   (ARRAYC_GEMM_TILE), to choose the built-in ones. --case HS: float16 x @ w at other sizes
//   (1024^3 to 8192^3, unbalanced shapes). --case T (with --tf32): float32 products on
//   TF32 at 4096^3 (x @ w, x @ y.T, x @ w on mma.sync) and 3000^2 (x @ y.T); --sweep adds both
//   x @ y.T rows with each of a list of warpgroup tiles forced.
// --skinny: the generated skinny kernel against OpenBLAS on the same buffers, shape by shape
//   (docs/blas.md, "Skinny products").
// --tiled: the same for the generated register-tiled kernel (general products; "T": a transposed).
// --packed: large products: the tiled kernel's blocks, OpenBLAS, and its packed path ("Large
//   products"); matmul_peers.py --packed times numpy and PyTorch on the same shapes.
// --batched: batches of products, the tiled kernel against OpenBLAS ("Batches");
//   matmul_peers.py --batched for the peers.
// --gpu --tiles T1,T2,...: a tile sweep of the --case rows (W4, W5 as one triangle and as a
//   general product), each tile set as ARRAYC_GEMM_TILE in turn ("default": unset): per tile the
//   median of calls timed up to synchronize(), the median of batches of 20 queued calls per call
//   (the kernel's throughput, the host's dispatch hidden), and the largest difference from the
//   default tile's result relative to max |result|. The floor: an 8x8x8 product timed the same way.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "arrayc/arrayc.h"
#include "backend/host/blas.h"
#include "backend/host/blas_config.h"
#include "backend/host/skinny.h"
#include "backend/host/tiled.h"
#include "backend/host/thread_pool.h"

namespace {

using arrayc::Array;
using arrayc::DType;

bool on_gpu = false;  // --gpu: arrays on gpu(0), every call waited for
std::string only;     // --case NAME: the --gpu rows whose name starts with NAME

// Waits for the GPU's queued work (--gpu); nothing on the CPU.
void wait() {
  if (on_gpu) arrayc::synchronize();
}

double ms_since(std::chrono::steady_clock::time_point s) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count();
}

double median_ms(const std::function<void()>& f, int reps) {
  auto s = std::chrono::steady_clock::now();
  f();  // warm-up: compile, first touch
  wait();
  if (on_gpu) std::printf("    (first call %.1f ms: compile and run)\n", ms_since(s));
  f();
  wait();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    auto s = std::chrono::steady_clock::now();
    f();
    wait();
    t.push_back(ms_since(s));
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

struct Shape3 {
  const char* name;
  int64_t m, k, n;
  DType dtype;
  bool gram;  // x @ x.T
};
const Shape3 kCalib[] = {
    {"W3 10000x784.784x10 f32", 10000, 784, 10, DType::Float32, false},
    {"W4 1000^3 f64", 1000, 1000, 1000, DType::Float64, false},
    {"W5 3000x3000.T f32", 3000, 3000, 3000, DType::Float32, true},
};

// A jitted product of the case's inputs, evaluated per call.
std::function<void()> product_call(const Shape3& s, bool general_for_gram = false) {
  Array x = arrayc::uniform({s.m, s.k}, 1, 0.0, 1.0, s.dtype).eval();
  if (s.gram) {
    if (general_for_gram) {  // another node holding the same values: a general product
      Array y = (x + 0.0).eval();
      auto f = arrayc::jit([](const Array& a, const Array& b) { return arrayc::dot(a, arrayc::transpose(b)); });
      return [=]() mutable { f(x, y).eval(); };
    }
    auto f = arrayc::jit([](const Array& a) { return arrayc::dot(a, arrayc::transpose(a)); });
    return [=]() mutable { f(x).eval(); };
  }
  Array w = arrayc::normal({s.k, s.n}, 2, 0.0, 1.0, s.dtype).eval();
  auto f = arrayc::jit([](const Array& a, const Array& b) { return arrayc::dot(a, b); });
  return [=]() mutable { f(x, w).eval(); };
}

void calibrate(int reps) {
  int all = arrayc::detail::num_threads();
  std::vector<int> threads{1};
  if (all / 2 > 1) threads.push_back(all / 2);
  if (all > 1) threads.push_back(all);
  std::vector<std::string> cores = arrayc::detail::blas_core_candidates();
  arrayc::BlasInfo info = arrayc::blas_info();
  std::printf("== OpenBLAS calibration: %s\n", info.config.c_str());
  std::printf("   OpenBLAS's own pick: %s; arrayc's default: %s (%s)\n", info.detected_core.c_str(), info.core.c_str(),
              info.core_reason.c_str());
  if (cores.empty()) std::printf("   this OpenBLAS cannot switch cores: its own pick only\n");
  if (cores.empty()) cores.push_back("openblas");
  std::vector<std::function<void()>> calls;
  for (const Shape3& s : kCalib) calls.push_back(product_call(s));
  std::printf("%-12s %7s", "core", "threads");
  for (const Shape3& s : kCalib) std::printf(" %24s", s.name);
  std::printf("\n");
  struct Row {
    std::string core;
    int threads;
    std::vector<double> ms;
  };
  std::vector<Row> rows;
  for (const std::string& core : cores) {
    arrayc::detail::set_blas_core(core);
    for (int t : threads) {
      arrayc::detail::set_blas_thread_count(t);
      Row r{arrayc::blas_info().core, t, {}};
      for (auto& c : calls) r.ms.push_back(median_ms(c, reps));
      rows.push_back(r);
      std::printf("%-12s %7d", r.core.c_str(), t);
      for (double ms : r.ms) std::printf(" %21.3f ms", ms);
      std::printf("\n");
      std::fflush(stdout);
    }
  }
  std::printf("fastest:");
  for (size_t j = 0; j < std::size(kCalib); ++j) {
    const Row* best = &rows[0];
    for (const Row& r : rows)
      if (r.ms[j] < best->ms[j]) best = &r;
    std::printf("  %s: %s x%d (%.3f ms)", kCalib[j].name, best->core.c_str(), best->threads, best->ms[j]);
  }
  std::printf("\n\n");
  arrayc::detail::set_blas_core("default");
  arrayc::detail::set_blas_thread_count(0);
}

// f(x, w, third) with its epilogue fused and not, calls alternating (so that both see the same
// machine): {fused median, unfused median, fused min, unfused min} in ms.
template <typename F>
std::vector<double> epilogue_ms(F f, const Array& x, const Array& w, const Array& third, int reps) {
  auto fused = arrayc::jit(f), unfused = arrayc::jit(f);
  std::vector<double> t[2];
  for (int i = -2; i < reps; ++i)
    for (int v = 0; v < 2; ++v) {
      arrayc::set_epilogue_fusion(v == 0);  // part of jit's key: each object keeps its own program
      auto s = std::chrono::steady_clock::now();
      (v == 0 ? fused : unfused)(x, w, third).eval();
      wait();
      double ms = ms_since(s);
      if (i == -2 && on_gpu) std::printf("    (first call, %s: %.1f ms: compile and run)\n", v == 0 ? "fused" : "unfused", ms);
      if (i >= 0) t[v].push_back(ms);
    }
  arrayc::set_epilogue_fusion(true);
  for (auto& v : t) std::sort(v.begin(), v.end());
  return {t[0][t[0].size() / 2], t[1][t[1].size() / 2], t[0][0], t[1][0]};
}

struct Layer {
  int64_t m, k, n;
};

// W9's layer relu(x @ w + b), or with `loss` a mean squared error mean((x @ w - y)^2): a
// reduction epilogue, whose unfused form is the product, then the reduction kernel.
void layer_row(const Layer& l, int reps, bool loss = false) {
  int r = l.m * l.k * l.n > (int64_t{1} << 33) ? std::max(3, reps / 4) : reps;
  Array x = arrayc::uniform({l.m, l.k}, 3, -1.0, 1.0, DType::Float32).eval();
  Array w = arrayc::normal({l.k, l.n}, 4, 0.0, 0.05, DType::Float32).eval();
  Array b = arrayc::normal({l.n}, 5, 0.0, 1.0, DType::Float32).eval();
  Array y = arrayc::normal({l.m, l.n}, 6, 0.0, 1.0, DType::Float32).eval();
  auto layer = [](const Array& x, const Array& w, const Array& b) { return arrayc::maximum(arrayc::dot(x, w) + b, 0.0); };
  auto mse = [](const Array& x, const Array& w, const Array& y) {
    Array d = arrayc::dot(x, w) - y;
    return arrayc::mean(d * d);
  };
  std::vector<double> t = loss ? epilogue_ms(mse, x, w, y, r) : epilogue_ms(layer, x, w, b, r);
  char name[64];
  std::snprintf(name, sizeof name, "%s %lldx%lldx%lld", loss ? "mean((x@w-y)^2)" : "W9 relu(x@w+b)",
                static_cast<long long>(l.m), static_cast<long long>(l.k), static_cast<long long>(l.n));
  std::printf("%-32s fused %10.3f ms   unfused %10.3f ms   unfused/fused %.3f   (min %.3f / %.3f)\n", name, t[0],
              t[1], t[1] / t[0], t[2], t[3]);
  std::fflush(stdout);
}

// float16/bfloat16 products on the GPU (issue 29): medians in ms and TFLOP/s (2 m n k per call;
// W5's x @ x.T counted as a general product, as cuBLAS computes it).
void half_rows(int reps, bool sweep) {
  const Shape3 cases[] = {
      {"H f16 4096^3 x@w", 4096, 4096, 4096, DType::Float16, false},
      {"H bf16 4096^3 x@w", 4096, 4096, 4096, DType::BFloat16, false},
      {"H f16 W5 3000x3000.T", 3000, 3000, 3000, DType::Float16, true},
      {"H bf16 W5 3000x3000.T", 3000, 3000, 3000, DType::BFloat16, true},
  };
  auto row = [&](const char* name, const Shape3& s) {
    double ms = median_ms(product_call(s), reps);
    std::printf("%-32s %10.3f ms  %7.1f TFLOP/s\n", name, ms, 2.0 * s.m * s.n * s.k / ms * 1e-9);
    std::fflush(stdout);
  };
  for (const Shape3& s : cases) row(s.name, s);
  if (!sweep) return;
  // The mma.sync kernel's best tile, the warpgroup kernel's filled by cp.async (/cp), then by TMA
  // with a producer warpgroup (sm_90), in single blocks (/c1) and in clusters of two.
  for (const char* tile : {"256x128x64/16x8/s3", "128x256x64/4x32/s4/wg/cp", "128x256x64/4x32/s4/wg", "128x256x64/4x32/s4/wg/c2", "128x256x64/4x32/s3/wg",
                           "128x192x64/4x24/s4/wg", "128x128x64/4x16/s4/wg", "256x128x64/4x16/s4/wg"}) {
    setenv("ARRAYC_GEMM_TILE", tile, 1);
    std::string name = std::string("  f16 4096^3 ") + tile;
    row(name.c_str(), cases[0]);
  }
  // x @ x.T (B read along k) at 3000^2, whose big tiles leave most of a last wave idle, and at 4096^3.
  const Shape3 gram4096{"", 4096, 4096, 4096, DType::Float16, true};
  for (const char* tile : {"128x256x64/4x32/s4/wg/c1", "128x192x64/4x24/s4/wg/c1", "128x192x64/4x24/s4/wg/c2", "128x256x64/4x32/s4/wg/c2",
                           "256x128x64/4x16/s4/wg/c1"})
    for (const Shape3* s : {&cases[2], &gram4096}) {
      setenv("ARRAYC_GEMM_TILE", tile, 1);
      std::string name = std::string(s == &gram4096 ? "  f16 4096 x@x.T " : "  f16 W5 ") + tile;
      row(name.c_str(), *s);
    }
  unsetenv("ARRAYC_GEMM_TILE");
}

// float32 products on TF32 (--tf32, issue 29): 4096^3 x @ w (on sm_90: w copied along k, then
// the warpgroup kernel), x @ y.T (both along k: the warpgroup kernel alone), x.T @ w (both
// copied), the same x @ w on
// mma.sync (the tile it took before the warpgroup kernel, forced), and 3000^2 x @ y.T. Medians in
// ms and TFLOP/s (2 m n k per call).
void tf32_rows(int reps, bool sweep) {
  const Shape3 xw{"T tf32 4096^3 x@w", 4096, 4096, 4096, DType::Float32, false},
      xyt{"T tf32 4096^3 x@y.T", 4096, 4096, 4096, DType::Float32, true},
      w5{"T tf32 3000^2 x@y.T", 3000, 3000, 3000, DType::Float32, true};
  auto row = [&](const char* name, const Shape3& s, bool general) {
    double ms = median_ms(product_call(s, general), reps);
    std::printf("%-32s %10.3f ms  %7.1f TFLOP/s\n", name, ms, 2.0 * s.m * s.n * s.k / ms * 1e-9);
    std::fflush(stdout);
  };
  row(xw.name, xw, false);
  row(xyt.name, xyt, true);
  {  // x.T @ w: both operands along their outer dims (a weight's gradient), both copied on sm_90
    Array x = arrayc::uniform({4096, 4096}, 1, 0.0, 1.0, DType::Float32).eval();
    Array w = arrayc::normal({4096, 4096}, 2, 0.0, 1.0, DType::Float32).eval();
    auto f = arrayc::jit([](const Array& a, const Array& b) { return arrayc::dot(arrayc::transpose(a), b); });
    double ms = median_ms([&]() mutable { f(x, w).eval(); }, reps);
    std::printf("%-32s %10.3f ms  %7.1f TFLOP/s\n", "T tf32 4096^3 x.T@w", ms, 2.0 * 4096 * 4096 * 4096 / ms * 1e-9);
  }
  setenv("ARRAYC_GEMM_TILE", "256x128x32/16x8/s3", 1);
  row("T tf32 4096^3 x@w on mma.sync", xw, false);
  unsetenv("ARRAYC_GEMM_TILE");
  row(w5.name, w5, true);
  if (!sweep) return;
  for (const char* tile : {"128x256x32/4x32/s3/wg", "128x192x32/4x24/s4/wg", "128x192x32/4x24/s5/wg", "256x128x32/4x16/s3/wg",
                           "256x128x32/4x16/s4/wg", "128x128x32/4x16/s4/wg", "128x128x32/4x16/s6/wg", "128x256x32/4x32/s4/wg/c2"})
    for (const Shape3* s : {&xyt, &w5}) {
      setenv("ARRAYC_GEMM_TILE", tile, 1);
      row((std::string("  ") + (s == &w5 ? "3000^2 " : "4096^3 ") + tile).c_str(), *s, true);
    }
  unsetenv("ARRAYC_GEMM_TILE");
}

// float16 x @ w at other sizes (--case HS, issue 29): small, large and unbalanced shapes, medians
// in ms and TFLOP/s, as matmul_peers_gpu.py's HS rows.
void half_size_rows(int reps) {
  const Shape3 cases[] = {
      {"HS f16 1024^3", 1024, 1024, 1024, DType::Float16, false},
      {"HS f16 2048^3", 2048, 2048, 2048, DType::Float16, false},
      {"HS f16 8192^3", 8192, 8192, 8192, DType::Float16, false},
      {"HS f16 4096x4096x1024", 4096, 4096, 1024, DType::Float16, false},  // m x k x n
      {"HS f16 1024x4096x4096", 1024, 4096, 4096, DType::Float16, false},
      {"HS f16 8192x1024x8192", 8192, 1024, 8192, DType::Float16, false},
  };
  for (const Shape3& s : cases) {
    double ms = median_ms(product_call(s), reps);
    std::printf("%-32s %10.3f ms  %7.1f TFLOP/s\n", s.name, ms, 2.0 * s.m * s.n * s.k / ms * 1e-9);
    std::fflush(stdout);
  }
}

// The GPU rows (--gpu).
void gpu_rows(bool big, int reps, bool sweep) {
  std::printf("== arrayc rows on gpu(0)%s\n",
              arrayc::matmul_precision() == arrayc::MatmulPrecision::High ? ", float32 products on TF32" : "");
  for (const Shape3& s : kCalib) {
    if (std::string(s.name).rfind(only, 0) != 0) continue;
    std::printf("%-32s %10.3f ms\n", s.name, median_ms(product_call(s), reps));
    if (s.gram)
      std::printf("%-32s %10.3f ms\n", "W5 as a general product (gemm)", median_ms(product_call(s, true), reps));
    if (s.dtype == DType::Float64) {  // the same tile on FMAs instead of the tensor cores
      setenv("ARRAYC_GEMM_TILE", "128x64x8/8x4/simt", 1);
      std::printf("%-32s %10.3f ms\n", "W4 on FMAs (no tensor cores)", median_ms(product_call(s), reps));
      unsetenv("ARRAYC_GEMM_TILE");
    }
    std::fflush(stdout);
  }
  if (only.empty() || only == "H") half_rows(reps, sweep);
  if (only.empty() || only == "HS") half_size_rows(reps);
  if ((only.empty() || only == "T") && arrayc::matmul_precision() == arrayc::MatmulPrecision::High) tf32_rows(reps, sweep);
  std::vector<Layer> layers{{256, 784, 256}, {2048, 2048, 2048}};
  if (big) layers.push_back({4096, 4096, 4096});
  if (!only.empty() && only != "W9") return;
  for (const Layer& l : layers) layer_row(l, reps);
}

// --gpu --tiles: the sweep described at the top.
void tile_sweep(const std::string& list, int reps) {
  std::vector<std::string> tiles;
  for (size_t at = 0; at <= list.size();) {
    size_t comma = list.find(',', at);
    if (comma == std::string::npos) comma = list.size();
    if (comma > at) tiles.push_back(list.substr(at, comma - at));
    at = comma + 1;
  }
  auto queued_ms = [&](const std::function<void()>& f) {
    std::vector<double> t;
    for (int r = 0; r < std::max(3, reps / 4); ++r) {
      auto s = std::chrono::steady_clock::now();
      for (int i = 0; i < 20; ++i) f();
      wait();
      t.push_back(ms_since(s) / 20);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  };
  for (const Shape3& s : kCalib) {
    if (std::string(s.name).rfind(only, 0) != 0 || s.m < 1000) continue;
    {
      Shape3 tiny{"floor", 8, 8, 8, s.dtype, false};
      auto f = product_call(tiny);
      std::printf("%-24s %-28s %9.3f ms sync, %9.3f ms queued\n", s.name, "floor: 8x8x8", median_ms(f, reps), queued_ms(f));
    }
    for (int general = 0; general <= (s.gram ? 1 : 0); ++general) {
      Array want;
      bool have_want = false;
      for (const std::string& tile : tiles) {
        if (tile == "default") unsetenv("ARRAYC_GEMM_TILE");
        else setenv("ARRAYC_GEMM_TILE", tile.c_str(), 1);
        try {
          Array x = arrayc::uniform({s.m, s.k}, 1, 0.0, 1.0, s.dtype).eval();
          Array y = s.gram ? (general ? (x + 0.0).eval() : x) : arrayc::normal({s.k, s.n}, 2, 0.0, 1.0, s.dtype).eval();
          // The triangle: one parameter (x @ x.T by node); else two.
          auto gram = arrayc::jit([](const Array& a) { return arrayc::dot(a, arrayc::transpose(a)); });
          auto fn = arrayc::jit([&](const Array& a, const Array& b) {
            return s.gram ? arrayc::dot(a, arrayc::transpose(b)) : arrayc::dot(a, b);
          });
          const bool triangle = s.gram && !general;
          std::function<void()> f = [=]() mutable { triangle ? gram(x).eval() : fn(x, y).eval(); };
          double sync = median_ms(f, reps), queued = queued_ms(f);
          Array got = triangle ? gram(x).eval() : fn(x, y).eval();
          double diff = 0;
          if (have_want) {
            auto largest = [](const Array& v) {
              return arrayc::cast(arrayc::max(arrayc::abs(v)), DType::Float64).eval().to(arrayc::cpu()).item<double>();
            };
            diff = largest(got - want) / largest(want);
          } else {
            want = got;
            have_want = true;
          }
          std::printf("%-24s %-28s %9.3f ms sync, %9.3f ms queued, diff %.1e\n",
                      general ? "W5 general" : s.name, tile.c_str(), sync, queued, diff);
        } catch (const std::exception& e) {
          std::printf("%-24s %-28s error: %s\n", s.name, tile.c_str(), e.what());
        }
        std::fflush(stdout);
      }
    }
  }
  unsetenv("ARRAYC_GEMM_TILE");
}

void rows(bool big, int reps) {
  std::printf("== arrayc rows (%s)\n", arrayc::blas_info().str().c_str());
  for (const Shape3& s : kCalib) {
    std::printf("%-32s %10.3f ms\n", s.name, median_ms(product_call(s), reps));
    if (s.gram)
      std::printf("%-32s %10.3f ms\n", "W5 as a general product (gemm)", median_ms(product_call(s, true), reps));
    std::fflush(stdout);
  }
  std::vector<Layer> layers{{256, 784, 256}, {10000, 784, 10}, {2048, 2048, 2048}};
  if (big) layers.push_back({4096, 4096, 4096});
  for (const Layer& l : layers) layer_row(l, reps);
}

}  // namespace

// ---- generated products against OpenBLAS, shape by shape ----
struct KernelCase {
  int64_t m, k, n;
  DType dtype;
  bool trans_a = false;  // a read as the transpose of a k x m matrix (x.T @ w)
};

// c = a . b through a generated kernel and through detail::gemm (BLAS: gemm, or gemv for one
// column) on the same buffers, calls alternating one by one, medians in ms. No graph, no
// dispatch: the two kernels only. (Until 2026-11-27 the calls alternated in thirds, each after a
// pause of 300 ms; the tables of docs/blas.md dated before then were measured so.)
// Medians in ms of `reps` rounds in which each call runs once, in turn, after one untimed call
// each.
std::vector<double> alternate_medians(const std::vector<std::function<void()>>& calls, int reps) {
  for (const auto& f : calls) f();
  std::vector<std::vector<double>> t(calls.size());
  for (int i = 0; i < reps; ++i)
    for (size_t j = 0; j < calls.size(); ++j) {
      auto s = std::chrono::steady_clock::now();
      calls[j]();
      t[j].push_back(ms_since(s));
    }
  std::vector<double> med;
  for (auto& v : t) {
    std::sort(v.begin(), v.end());
    med.push_back(v[v.size() / 2]);
  }
  return med;
}

using KernelFn = void (*)(DType, const arrayc::detail::MatrixRef&, const arrayc::detail::MatrixRef&, void*);
// With `second`, a second generated kernel is timed in the same rotation (its column after BLAS's).
void versus_blas(const char* title, const std::vector<KernelCase>& cases, int reps, KernelFn kernel,
                 KernelFn second = nullptr, const char* second_name = nullptr) {
  std::printf("== %s products: generated kernel vs OpenBLAS (%s), %d threads, medians of %d\n", title,
              arrayc::blas_info().core.c_str(), arrayc::detail::num_threads(), reps);
  std::printf("%-28s %12s %12s %8s %10s", "m x k . k x n", "kernel ms", "BLAS ms", "BLAS/kern", "GFLOP/s");
  if (second) std::printf(" %12s %8s", second_name, "BLAS/it");
  std::printf("\n");
  for (const KernelCase& c : cases) {
    // Values in [0, 1).
    std::vector<double> a(static_cast<size_t>(c.m * c.k)), b(static_cast<size_t>(c.k * c.n));
    uint64_t x = 12345;
    auto next = [&] { return static_cast<double>((x = x * 6364136223846793005ULL + 1442695040888963407ULL) >> 11) / 9007199254740992.0; };
    for (double& v : a) v = next();
    for (double& v : b) v = next();
    std::vector<float> af(a.begin(), a.end()), bf(b.begin(), b.end());
    bool f64 = c.dtype == DType::Float64;
    int64_t elem = f64 ? 8 : 4;
    std::vector<char> out(static_cast<size_t>(c.m * c.n * elem));
    const void* pa = f64 ? static_cast<const void*>(a.data()) : af.data();
    const void* pb = f64 ? static_cast<const void*>(b.data()) : bf.data();
    arrayc::detail::MatrixRef ar = c.trans_a ? arrayc::detail::MatrixRef{pa, c.m, c.k, 1, c.m} : arrayc::detail::MatrixRef{pa, c.m, c.k, c.k, 1};
    arrayc::detail::MatrixRef br{pb, c.k, c.n, c.n, 1};
    auto generated = [&] { kernel(c.dtype, ar, br, out.data()); };
    auto blas = [&] { arrayc::detail::gemm(c.dtype, ar, br, out.data()); };
    auto other = [&] {
      if (second) second(c.dtype, ar, br, out.data());
    };
    int r = c.m * c.k * c.n > (int64_t{1} << 30) ? std::max(3, reps / 4) : reps;
    // Calls alternate one by one, as products follow each other in a program: each starts while
    // the other's workers may still spin (arrayc's for 0.1 ms; OpenBLAS's no longer;
    // docs/blas.md, "OpenBLAS's idle threads").
    std::vector<std::function<void()>> calls{generated, blas};
    if (second) calls.push_back(other);
    std::vector<double> med = alternate_medians(calls, r);
    double mk = med[0], mb = med[1];
    char name[64];
    std::snprintf(name, sizeof name, "%s%lldx%lld . %lldx%lld %s", c.trans_a ? "T " : "", static_cast<long long>(c.m),
                  static_cast<long long>(c.k), static_cast<long long>(c.k), static_cast<long long>(c.n), f64 ? "f64" : "f32");
    std::printf("%-28s %12.4f %12.4f %8.2fx %10.1f", name, mk, mb, mb / mk, 2e-6 * static_cast<double>(c.m * c.k * c.n) / mk);
    if (second) std::printf(" %12.4f %8.2fx", med[2], mb / med[2]);
    std::printf("\n");
    std::fflush(stdout);
  }
}

// --skinny: the crossover table of docs/blas.md, "Skinny products".
void skinny_rows(int reps) {
  const DType f32 = DType::Float32, f64 = DType::Float64;
  versus_blas("skinny",
              {{10000, 784, 10, f32}, {10000, 784, 10, f64}, {10000, 784, 1, f32}, {10000, 784, 2, f32},
               {10000, 784, 4, f32}, {10000, 784, 16, f32}, {10000, 784, 24, f32}, {10000, 784, 32, f32},
               {10000, 784, 48, f32}, {10000, 784, 64, f32}, {16, 784, 10, f32}, {32, 784, 10, f32},
               {64, 784, 10, f32}, {256, 784, 10, f32}, {1000, 784, 10, f32}, {100000, 64, 8, f32},
               {2000, 8000, 10, f32}, {10000, 784, 32, f64}},
              reps, arrayc::detail::skinny_gemm);
}

// --tiled: the crossover table of docs/blas.md, "Tiled products" (kTiledMaxWork).
void tiled_rows(int reps) {
  const DType f32 = DType::Float32, f64 = DType::Float64;
  versus_blas("tiled",
              {{64, 64, 64, f32},       {96, 96, 96, f32},       {128, 128, 128, f32},    {160, 160, 160, f32},
               {192, 192, 192, f32},    {128, 512, 128, f32},    {64, 2048, 64, f32},     {256, 128, 256, f32},
               {256, 784, 256, f32},    {256, 256, 256, f32},
               {512, 512, 512, f32},    {768, 768, 768, f32},    {1024, 256, 1024, f32},  {2048, 784, 256, f32},
               {256, 4096, 256, f32},   {1024, 1024, 1024, f32}, {1536, 1536, 1536, f32}, {2048, 2048, 2048, f32},
               {256, 784, 256, f64},    {512, 512, 512, f64},    {1000, 1000, 1000, f64}, {100, 100, 100, f64},
               {128, 128, 128, f64},    {192, 192, 192, f64},
               // a transposed ("T"): packed by the kernel's tasks, read in place by OpenBLAS
               {256, 784, 256, f32, true}, {128, 128, 128, f32, true}, {512, 512, 512, f32, true}, {1024, 1024, 1024, f32, true},
               {1000, 1000, 1000, f64, true}},
              reps, [](DType t, const arrayc::detail::MatrixRef& a, const arrayc::detail::MatrixRef& b, void* c) {
                arrayc::detail::tiled_gemm(t, a, b, c);
              });
}

// --packed: the tiled kernel's two paths against OpenBLAS on large products (docs/blas.md, "Large
// products"; kTiledPackedMinWork): the blocks (first column) and the packed steps (last).
void packed_rows(int reps) {
  const DType f32 = DType::Float32, f64 = DType::Float64;
  versus_blas(
      "packed",
      {{512, 512, 512, f32},     {768, 768, 768, f32},     {1024, 1024, 1024, f32}, {1536, 1536, 1536, f32},
       {2048, 2048, 2048, f32},  {2048, 784, 256, f32},    {256, 4096, 256, f32},   {4096, 4096, 4096, f32},
       {3000, 3000, 3000, f32},  {8192, 1024, 1024, f32},  {1000, 1000, 1000, f64}, {2048, 2048, 2048, f64},
       {2048, 2048, 2048, f32, true}, {4096, 4096, 4096, f32, true}},
      reps,
      [](DType t, const arrayc::detail::MatrixRef& a, const arrayc::detail::MatrixRef& b, void* c) {
        arrayc::detail::set_tiled_packed(-1);
        arrayc::detail::tiled_gemm(t, a, b, c);
        arrayc::detail::set_tiled_packed(0);
      },
      [](DType t, const arrayc::detail::MatrixRef& a, const arrayc::detail::MatrixRef& b, void* c) {
        arrayc::detail::set_tiled_packed(1);
        arrayc::detail::tiled_gemm(t, a, b, c);
        arrayc::detail::set_tiled_packed(0);
      },
      "packed ms");
}

// --batched: batches of products, the tiled kernel's blocks sharing the pool against OpenBLAS
// (gemm_batched: small products spread over the pool one call each, larger ones one threaded
// call after another). "T": b read transposed (q @ k.T). Calls alternate one by one.
void batched_rows(int reps) {
  struct Batched {
    int64_t batch, m, k, n;
    DType dtype;
    bool trans_b;
  };
  const DType f32 = DType::Float32, f64 = DType::Float64;
  const std::vector<Batched> cases{{256, 32, 32, 32, f32, false},   {64, 64, 64, 64, f32, false},    {32, 128, 128, 128, f32, false},
                                   {16, 256, 256, 256, f32, false}, {8, 512, 512, 512, f32, false},  {96, 128, 64, 128, f32, true},
                                   {96, 128, 128, 64, f32, false},  {4, 1024, 1024, 1024, f32, false}, {64, 64, 64, 64, f64, false},
                                   {32, 128, 128, 128, f64, false}};
  std::printf("== batched products: tiled kernel vs OpenBLAS (%s), %d threads, medians of %d\n", arrayc::blas_info().core.c_str(),
              arrayc::detail::num_threads(), reps);
  std::printf("%-34s %12s %12s %8s %10s\n", "batch x (m x k . k x n)", "kernel ms", "BLAS ms", "BLAS/kern", "GFLOP/s");
  for (const Batched& c : cases) {
    bool f64c = c.dtype == DType::Float64;
    int64_t elem = f64c ? 8 : 4, asz = c.batch * c.m * c.k, bsz = c.batch * c.k * c.n;
    std::vector<char> a(static_cast<size_t>(asz * elem)), b(static_cast<size_t>(bsz * elem)), out(static_cast<size_t>(c.batch * c.m * c.n * elem));
    uint64_t x = 777;
    auto next = [&] { return static_cast<double>((x = x * 6364136223846793005ULL + 1442695040888963407ULL) >> 11) / 9007199254740992.0; };
    for (int64_t i = 0; i < asz; ++i) f64c ? void(reinterpret_cast<double*>(a.data())[i] = next()) : void(reinterpret_cast<float*>(a.data())[i] = static_cast<float>(next()));
    for (int64_t i = 0; i < bsz; ++i) f64c ? void(reinterpret_cast<double*>(b.data())[i] = next()) : void(reinterpret_cast<float*>(b.data())[i] = static_cast<float>(next()));
    arrayc::detail::MatrixRef ar{a.data(), c.m, c.k, c.k, 1};
    arrayc::detail::MatrixRef br = c.trans_b ? arrayc::detail::MatrixRef{b.data(), c.k, c.n, 1, c.k} : arrayc::detail::MatrixRef{b.data(), c.k, c.n, c.n, 1};
    auto kernel = [&] { arrayc::detail::tiled_gemm_batched(c.dtype, c.batch, ar, c.m * c.k, br, c.k * c.n, out.data()); };
    auto blas = [&] { arrayc::detail::gemm_batched(c.dtype, c.batch, ar, c.m * c.k, br, c.k * c.n, out.data(), false); };
    std::vector<double> med = alternate_medians({kernel, blas}, reps);
    double mk = med[0], mb = med[1];
    char name[80];
    std::snprintf(name, sizeof name, "%lld x (%lldx%lld . %lldx%lld%s) %s", static_cast<long long>(c.batch), static_cast<long long>(c.m),
                  static_cast<long long>(c.k), static_cast<long long>(c.k), static_cast<long long>(c.n), c.trans_b ? " T" : "",
                  f64c ? "f64" : "f32");
    std::printf("%-34s %12.4f %12.4f %8.2fx %10.1f\n", name, mk, mb, mb / mk,
                2e-6 * static_cast<double>(c.batch * c.m * c.k * c.n) / mk);
    std::fflush(stdout);
  }
}

int main(int argc, char** argv) {
  bool calib = false, show_rows = false, big = false, gpu = false, sweep = false;
  int reps = 11;
  std::string tiles;  // --tiles
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--calibrate") calib = true;
    else if (a == "--rows") show_rows = true;
    else if (a == "--big") big = true;
    else if (a == "--gpu") {  // before --layer, to run that row on the GPU
      gpu = on_gpu = true;
      arrayc::set_default_device(arrayc::gpu(0));
    }
    else if (a == "--reps" && i + 1 < argc) reps = std::max(1, std::atoi(argv[++i]));
    else if (a == "--case" && i + 1 < argc) only = argv[++i];
    else if (a == "--tf32") arrayc::set_matmul_precision(arrayc::MatmulPrecision::High);
    else if (a == "--sweep") sweep = true;
    else if (a == "--tiles" && i + 1 < argc) tiles = argv[++i];
    else if (a == "--skinny") {  // skinny products' crossover only
      skinny_rows(reps);
      return 0;
    }
    else if (a == "--batched") {  // batched products only
      batched_rows(reps);
      return 0;
    }
    else if (a == "--packed") {  // the tiled kernel's packed path on large products only
      packed_rows(reps);
      return 0;
    }
    else if (a == "--tiled") {  // tiled products' crossover only
      tiled_rows(reps);
      return 0;
    }
    else if ((a == "--layer" || a == "--loss") && i + 1 < argc) {  // one row only: --layer MxKxN, --loss MxKxN
      long long m, k, n;
      if (std::sscanf(argv[++i], "%lldx%lldx%lld", &m, &k, &n) != 3) return 2;
      layer_row({m, k, n}, reps, a == "--loss");
      return 0;
    }
    else {
      std::fprintf(stderr, "usage: arrayc-matmul-bench [--calibrate] [--rows] [--big] [--reps N] [--gpu [--case NAME] [--tf32] [--sweep] [--tiles T1,T2,...]] [--skinny] [--tiled] [--packed] [--batched] [--layer MxKxN] [--loss MxKxN]\n");
      return 2;
    }
  }
  if (!calib && !show_rows) calib = show_rows = true;
  try {
    if (!tiles.empty()) {
      tile_sweep(tiles, reps);
      return 0;
    }
    if (gpu) {
      gpu_rows(big, reps, sweep);
      return 0;
    }
    std::printf("threads: %d (ARRAYC_NUM_THREADS, else the CPUs available)\n\n", arrayc::detail::num_threads());
    if (calib) calibrate(reps);
    if (show_rows) rows(big, reps);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "arrayc-matmul-bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
