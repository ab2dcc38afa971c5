// arrayc-bench: fused against unfused against a hand-written baseline (and peers) on the reference
// workloads, with cold compile times, correctness checks and a ceiling measured in the same run.
// Usage and the meaning of every number: docs/benchmarks.md.
//
// Process structure: the parent measures the bandwidth ceiling and orchestrates; for every case
// it starts
//   `arrayc-bench --cold CASE VARIANT DEVICE`  (fused, unfused): one first call in a fresh
//        process with an empty kernel cache; prints a COLD line;
//   `arrayc-bench --measure CASE DEVICE ...`: checks, then times every variant; prints ROW lines;
// and, per GPU of the run, `arrayc-bench --gpu-ceiling DEVICE`: its copy bandwidth (GPUCEIL line).
// On a GPU every timed call is followed by cuda::synchronize inside the timed region (launches are
// asynchronous): GPU times are wall times per call, launch and synchronization included.
// A crash of the library therefore costs one case (a FAILED row), not the whole run.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <iostream>
#include <sstream>

#include "baseline.h"
#include "bench.h"
#include "check.h"
#include "backend/cuda/cuda_driver.h"
#include "harness.h"

namespace bench {
namespace {

const char* kUsage =
    "usage: arrayc-bench [--quick] [--workload W1,W2|CASE,...] [--device cpu,gpu] [--reps N]\n"
    "                    [--variant baseline,libmvec,fused,unfused,copy,copy-nt] [--json PATH | --no-json]\n"
    "                    [--peers-script PATH] [--gpu-peers-script PATH [--gpu-peers-only LIST]]\n"
    "                    [--no-cold] [--list] [--print-json-path]\n"
    "Runs the reference workloads W1-W8 fused, unfused and as hand-written baselines; prints a\n"
    "table on stdout, progress on stderr, and writes JSON (default build/bench/<machine>.json).\n"
    "Exit status 1 when any result is wrong or any case fails. See docs/benchmarks.md.\n";

[[noreturn]] void usage_error(const std::string& msg) {
  std::fprintf(stderr, "arrayc-bench: %s\n%s", msg.c_str(), kUsage);
  std::exit(2);
}

// A whole number from 1 to 1000000 (a repetition count), else a usage error.
int positive(const std::string& flag, const std::string& v) {
  char* end = nullptr;
  errno = 0;
  long n = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || errno != 0 || n < 1 || n > 1000000)
    usage_error(flag + " wants a whole number from 1 to 1000000, not '" + v + "'");
  return static_cast<int>(n);
}

Options parse(int argc, char** argv) {
  Options o;
  auto need = [&](int& i) -> std::string {
    if (i + 1 >= argc) usage_error(std::string(argv[i]) + " needs a value");
    return argv[++i];
  };
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--quick") o.quick = true;
    else if (a == "--reps") o.reps = positive(a, need(i));
    else if (a == "--workload" || a == "--workloads") o.workloads = split(need(i));
    else if (a == "--device") o.devices = split(need(i));
    else if (a == "--variant") o.variants = split(need(i));
    else if (a == "--json") o.json = need(i);
    else if (a == "--no-json") o.json = std::string(1, '-');  // a move: GCC 12 warns (-Wrestrict) on the literal
    else if (a == "--peers-script") o.peers_script = need(i);
    else if (a == "--gpu-peers-script") o.gpu_peers_script = need(i);
    else if (a == "--gpu-peers-only") o.gpu_peers_only = need(i);
    else if (a == "--no-cold") o.cold = false;
    else if (a == "--list") o.list = true;
    else if (a == "--print-json-path") o.print_json_path = true;
    else if (a == "--cold") {  // hidden: --cold CASE VARIANT DEVICE
      o.child_cold_case = need(i);
      o.child_cold_variant = need(i);
      o.child_device = need(i);
    } else if (a == "--test-gpu-peers") {  // hidden: --test-gpu-peers SCRIPT
      o.test_gpu_peers = need(i);
    } else if (a == "--gpu-ceiling") {  // hidden: --gpu-ceiling DEVICE
      o.child_gpu_ceiling = need(i);
    } else if (a == "--measure") {  // hidden: --measure CASE DEVICE
      o.child_measure_case = need(i);
      o.child_device = need(i);
    } else if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else {
      usage_error("unknown argument '" + a + "'");
    }
  }
  for (const std::string& v : o.variants)
    if (!contains(kVariants, v)) usage_error("unknown variant '" + v + "'");
  if (o.reps == 0) o.reps = o.quick ? 5 : 10;
  return o;
}

}  // namespace
}  // namespace bench

int main(int argc, char** argv) {
  bench::Options o = bench::parse(argc, argv);
  try {
    if (!o.child_cold_case.empty()) return bench::child_cold(o);
    if (!o.child_measure_case.empty()) return bench::child_measure(o);
    if (!o.child_gpu_ceiling.empty()) return bench::child_gpu_ceiling(o);
    if (!o.test_gpu_peers.empty()) {  // the GPU peers' parser alone, on any machine
      std::vector<std::string> notes;
      for (const bench::Row& r : bench::run_gpu_peers(o.test_gpu_peers, o.gpu_peers_only, "gpu:0", notes))
        std::printf("%s\n", bench::row_to_line(r).c_str());
      for (const std::string& n : notes) std::printf("NOTE\t%s\n", n.c_str());
      return 0;
    }
    std::string command;
    for (int i = 0; i < argc; ++i) {
      if (i) command += ' ';
      command += i ? argv[i] : "arrayc-bench";
    }
    return bench::parent(o, command);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "arrayc-bench: error: %s\n", e.what());
    return 1;
  }
}
