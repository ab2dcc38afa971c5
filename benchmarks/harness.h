// What the harness's three parts share: main.cpp parses the command line and picks the mode;
// child.cpp measures in a fresh process (one case, one cold call, or a GPU's ceiling) and prints
// machine-readable lines; parent.cpp runs the children, derives rates and ratios, and reports.
#pragma once
#include <algorithm>
#include <chrono>
#include <sstream>
#include <string>
#include <vector>

#include "arrayc/arrayc.h"

namespace bench {

using Clock = std::chrono::steady_clock;

inline double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Steady-state calls shorter than kBatchBelowMs are timed kBatchMs at a time (calls_per_sample).
constexpr double kBatchBelowMs = 0.05;
constexpr double kBatchMs = 1.0;

// Every variant, in the order of the table's rows (and of each timed round): `--variant`
// chooses among them, runs_variant says where each exists.
inline const std::vector<std::string> kVariants{"fused", "unfused", "baseline", "libmvec", "copy", "copy-nt"};

struct Options {
  bool quick = false;
  int reps = 0;  // 0: the default (10, or 5 under --quick)
  std::vector<std::string> workloads;  // workload ids or case ids; empty: all
  std::vector<std::string> devices{"cpu", "gpu"};
  std::vector<std::string> variants = kVariants;
  std::string json;  // "" default path; "-" none
  std::string peers_script;
  std::string gpu_peers_script, gpu_peers_only;
  bool cold = true;
  bool list = false;
  bool print_json_path = false;
  // Child modes.
  std::string child_cold_case, child_cold_variant, child_measure_case, child_device, child_gpu_ceiling;
  std::string test_gpu_peers;  // hidden: parse a GPU peer script's output without a GPU, print the rows
};

inline std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> v;
  std::stringstream ss(s);
  for (std::string t; std::getline(ss, t, ',');)
    if (!t.empty()) v.push_back(t);
  return v;
}

inline bool contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// The child modes (child.cpp); each returns the process's exit status.
int child_gpu_ceiling(const Options& o);
int child_cold(const Options& o);
int child_measure(const Options& o);
// The parent (parent.cpp): runs every case's children and prints the table.
int parent(const Options& o, const std::string& command);

}  // namespace bench
