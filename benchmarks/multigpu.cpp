// arrayc-multigpu-bench: the rows of issue 31 on a host with two GPUs, against PyTorch + NCCL
// measured in the same run by benchmarks/peers/peers_multigpu.py (--peers-script; its lines are
// "measure | peer | value unit").
//
//   peer copy of 1 GiB gpu:0 -> gpu:1 (x.to(gpu(1)), peer to peer) and staged (ARRAYC_PEER_ACCESS=0), GB/s
//   all-reduce of 256 MiB float32 over gpu:0 and gpu:1 (NCCL), bus bandwidth GB/s
//   W5 (3000x3000 float32, x @ x.T) on gpu:0 alone, and on gpu:0 and gpu:1 at once, ms
//
// Times are wall-clock medians of --reps calls after warm-up, each call followed by
// arrayc::synchronize() (all devices) inside the timed region, as the peer script does.
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "arrayc/arrayc.h"
#include "backend/cuda/nccl.h"
#include "dp_mlp.h"
#include "harness.h"

namespace {

using namespace arrayc;

double median_ms(const std::function<void()>& f, int reps, int warm = 3) {
  for (int i = 0; i < warm; ++i) f();
  synchronize();
  std::vector<double> ts;
  for (int i = 0; i < reps; ++i) {
    auto t0 = bench::Clock::now();
    f();
    synchronize();
    ts.push_back(bench::ms_since(t0));
  }
  std::sort(ts.begin(), ts.end());
  return ts[ts.size() / 2];
}

// The peer script's rows: measure -> value (a blank measure continues the previous one, as the
// script prints a second unit on its own line).
std::map<std::string, double> run_peers(const std::string& script) {
  std::map<std::string, double> out;
  if (script.empty()) return out;
  std::string cmd = "python3 " + script + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char line[1024];
  std::string last;
  while (fgets(line, sizeof(line), p)) {
    std::string s(line);
    std::fputs(("  peers: " + s).c_str(), stderr);
    std::vector<std::string> parts;
    for (size_t a = 0, b; a <= s.size(); a = b + 1) {
      b = s.find('|', a);
      if (b == std::string::npos) b = s.size();
      std::string t = s.substr(a, b - a);
      t.erase(0, t.find_first_not_of(' '));
      t.erase(t.find_last_not_of(" \n") + 1);
      parts.push_back(t);
    }
    if (parts.size() != 3) continue;
    std::string key = !parts[0].empty() ? parts[0] : parts[1].empty() ? last : last + " / " + parts[1];
    if (!parts[0].empty()) last = parts[0];
    out[key + " [" + parts[2].substr(parts[2].find(' ') + 1) + "]"] = std::atof(parts[2].c_str());
  }
  pclose(p);
  return out;
}

void row(const std::string& measure, double ours, const std::string& unit, double peer, const std::string& target) {
  if (peer > 0)
    std::printf("| %-44s | %10.3f %-4s | %10.3f %-4s | %6.3f | %s |\n", measure.c_str(), ours, unit.c_str(), peer,
                unit.c_str(), ours / peer, target.c_str());
  else
    std::printf("| %-44s | %10.3f %-4s | %15s | %6s | %s |\n", measure.c_str(), ours, unit.c_str(), "-", "-",
                target.c_str());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  std::string peers;
  int reps = 20;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--peers-script" && i + 1 < argc) peers = argv[++i];
    else if (a == "--reps" && i + 1 < argc) reps = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: arrayc-multigpu-bench [--peers-script PATH] [--reps N]\n");
      return 2;
    }
  }
  if (gpu_count() < 2) {
    std::printf("arrayc-multigpu-bench: needs 2 GPUs; gpu_count() == %d\n", gpu_count());
    return 0;
  }
  try {
    Device g0 = gpu(0), g1 = gpu(1);
    std::printf("gpus %d; peer access gpu:1 <- gpu:0: %d; NCCL %s\n", gpu_count(), can_access_peer(g1, g0) ? 1 : 0,
                detail::nccl::unavailable_reason().empty() ? detail::nccl::version().c_str()
                                                           : detail::nccl::unavailable_reason().c_str());
    std::map<std::string, double> peer = run_peers(peers);
    auto p = [&](const std::string& k) { return peer.count(k) ? peer[k] : 0.0; };
    std::printf("\n| measure | arrayc | PyTorch | arrayc/PyTorch | target |\n|---|---|---|---|---|\n");

    const int64_t n = int64_t{1} << 28;  // 1 GiB of float32
    {
      Array a = full({n}, 1.0, DType::Float32, g0).eval();
      double ms = median_ms([&] { a.to(g1).eval(); }, reps);
      row("peer copy 1 GiB gpu0->gpu1 (GB/s)", 4.0 * n / ms / 1e6, "GB/s", p("peer copy 1 GiB gpu0->gpu1 [GB/s]"),
          ">= 0.9");
      setenv("ARRAYC_PEER_ACCESS", "0", 1);
      ms = median_ms([&] { a.to(g1).eval(); }, std::max(3, reps / 4), 1);
      unsetenv("ARRAYC_PEER_ACCESS");
      row("staged copy 1 GiB via pinned host (GB/s)", 4.0 * n / ms / 1e6, "GB/s", 0, "(no peer)");
    }
    if (detail::nccl::unavailable_reason().empty()) {
      const int64_t m = (int64_t{256} << 20) / 4;
      Array x0 = full({m}, 1.0, DType::Float32, g0).eval(), x1 = full({m}, 1.0, DType::Float32, g1).eval();
      double ms = median_ms([&] { all_reduce({x0, x1}); }, reps, 5);
      // Bus bandwidth of an all-reduce over k ranks: bytes / time * 2 (k - 1) / k; 1x for k = 2.
      double busbw = 4.0 * m / ms / 1e6;
      row("all-reduce 256 MiB f32, 2 GPUs (ms)", ms, "ms", p("all-reduce 256 MiB f32, 2 GPUs [ms]"), "");
      row("all-reduce 256 MiB f32, bus bandwidth", busbw, "GB/s",
          p("all-reduce 256 MiB f32, 2 GPUs / bus bandwidth [GB/s]"), ">= 0.9");
    } else {
      std::printf("| all-reduce | %s | | | |\n", detail::nccl::unavailable_reason().c_str());
    }
    {
      auto w5 = jit([](const Array& x) { return dot(x, transpose(x)); });
      Array x0 = uniform({3000, 3000}, 1, -1, 1, DType::Float32, g0).eval();
      Array x1 = uniform({3000, 3000}, 2, -1, 1, DType::Float32, g1).eval();
      double one = median_ms([&] { w5(x0); }, reps);
      double two = median_ms([&] { w5(x0), w5(x1); }, reps);
      row("W5 on gpu0 alone (ms)", one, "ms", p("W5 on gpu0 alone [ms]"), "");
      row("W5 on gpu0 and gpu1 at once (ms)", two, "ms", p("W5 on gpu0 and gpu1 at once [ms]"), "");
      row("W5 two at once / one", two / one, "x", 0, "<= 1.1");
    }
    if (detail::nccl::unavailable_reason().empty()) {
      // The data-parallel MLP step at the same batch per GPU: 1 GPU, then 2 (gradients all-reduced).
      const int64_t b = 8192, d = 2048, h = 2048, o = 2048;
      std::vector<Device> devs = {g0, g1};
      std::vector<Array> xs, ts;
      for (Device dv : devs) {
        xs.push_back(uniform({b, d}, 3, -1, 1, DType::Float32, dv).eval());
        ts.push_back(uniform({b, o}, 4, -1, 1, DType::Float32, dv).eval());
      }
      std::vector<dp_mlp::Params> one = {dp_mlp::init(d, h, o, g0)};
      std::vector<dp_mlp::Params> two = {dp_mlp::init(d, h, o, g0), dp_mlp::init(d, h, o, g1)};
      double t1 = median_ms([&] { dp_mlp::step(one, {xs[0]}, {ts[0]}, b, 1e-3f); }, reps);
      double t2 = median_ms([&] { dp_mlp::step(two, xs, ts, 2 * b, 1e-3f); }, reps);
      row("MLP step, 1 GPU, batch 8192 (ms)", t1, "ms", 0, "");
      row("MLP step, 2 GPUs, batch 8192 each (ms)", t2, "ms", 0, "");
      row("MLP step throughput, 2 GPUs / 1 GPU", 2 * t1 / t2, "x", 0, ">= 1.7");
    }
  } catch (const Error& e) {
    std::fprintf(stderr, "arrayc-multigpu-bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
