// The harness's parent process: the ceiling, the children of every case, the derived numbers, the
// table and the JSON report.
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

std::string self_exe() {
  return std::filesystem::read_symlink("/proc/self/exe").string();
}

std::string quote(const std::string& s) {
  std::string o = "'";
  for (char ch : s) o += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return o + "'";
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return fmt("exited with status %d", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return fmt("killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
  return "ended abnormally";
}

// Runs a child; returns its stdout lines, and its exit status in `status`.
std::vector<std::string> run_child(const std::string& cmd, int& status) {
  std::vector<std::string> lines;
  std::fflush(stderr);
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) {
    status = -1;
    return lines;
  }
  char buf[65536];
  std::string cur;
  while (std::fgets(buf, sizeof buf, p)) {
    cur += buf;
    if (!cur.empty() && cur.back() == '\n') {
      cur.pop_back();
      lines.push_back(cur);
      cur.clear();
    }
  }
  if (!cur.empty()) lines.push_back(cur);
  status = pclose(p);
  return lines;
}

struct Cold {
  std::optional<double> first_ms, compile_ms;
  std::optional<int64_t> compiles;
  std::optional<double> disk_first_ms;  // the same in a second process, its disk cache warm
  std::optional<int64_t> disk_compiles;
  std::string error;
};

// The first call of c in two fresh processes that share a new, empty disk cache: the first
// compiles (and fills the cache), the second loads what the first stored.
Cold run_cold(const Case& c, const std::string& variant, const std::string& device) {
  Cold r;
  char dir_tmpl[] = "/tmp/arrayc-bench-cache-XXXXXX";
  const char* dir = mkdtemp(dir_tmpl);
  std::string err_file = fmt("/tmp/arrayc-bench-cold-%d.err", static_cast<int>(getpid()));
  std::string cmd = (dir ? "ARRAYC_CACHE=1 ARRAYC_CACHE_DIR=" + quote(dir) + " " : std::string("ARRAYC_CACHE=0 ")) +
                    quote(self_exe()) + " --cold " + quote(c.id) + " " + variant + " " + quote(device) + " 2>" +
                    quote(err_file);
  for (int run = 0; run < (dir ? 2 : 1) && r.error.empty(); ++run) {
    std::optional<double> first, compile;
    std::optional<int64_t> compiles;
    int status = 0;
    for (const std::string& l : run_child(cmd, status)) {
      if (l.rfind("COLD\t", 0) != 0) continue;
      std::stringstream ss(l);
      for (std::string item; std::getline(ss, item, '\t');) {
        size_t eq = item.find('=');
        if (eq == std::string::npos) continue;
        std::string k = item.substr(0, eq), v = item.substr(eq + 1);
        if (k == "first_call_ms") first = std::strtod(v.c_str(), nullptr);
        if (k == "compile_ms") compile = std::strtod(v.c_str(), nullptr);
        if (k == "compiles") compiles = std::strtoll(v.c_str(), nullptr, 10);
      }
    }
    if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0) || !first) {
      std::ifstream f(err_file);
      std::string last, l;
      while (std::getline(f, l))
        if (!l.empty()) last = l;
      r.error = std::string(run ? "warm-disk" : "cold") + " run " + describe_status(status) +
                (last.empty() ? "" : ": " + last);
    } else if (run == 0) {
      r.first_ms = first, r.compile_ms = compile, r.compiles = compiles;
    } else {
      r.disk_first_ms = first, r.disk_compiles = compiles;
    }
  }
  if (dir) std::filesystem::remove_all(dir);
  std::remove(err_file.c_str());
  return r;
}

// Rates and fractions of the ceiling for every row of a case. Each row is measured against its
// own device: memory-bound rows against the CPU's STREAM-like copy or the GPU's device-to-device
// copy; products against the case's baseline on the CPU (OpenBLAS), and on a GPU (no baseline
// there) against the fastest cuBLAS peer of the case on that device (any peer when none names
// cuBLAS), or nothing when no peer was measured.
//
// The copy bandwidth is the best one measured in the run: the ceiling's up-front copies, or the
// fastest round of a "copy"/"copy-nt" row of that device ("best copy") when the memory ran
// faster then (the 2-core VM's memory speed varies by a third from one minute to the next). A
// copy row that counts therefore never shows more than 100%; a kernel whose data fits in the
// cache still may. A CPU copy row counts only when its bytes (read + written) are at least twice the last-level
// cache: on the 16-core Xeon (300 MB of L3) copy rows of 160 to 400 MB ran at 152-167 GB/s,
// partly from the cache, against 126-138 GB/s for the up-front copy of 1 GiB.
void derive(std::vector<Row>& rows, const Ceiling& ceiling) {
  std::map<std::string, double> best_copy;  // device -> GB/s of the fastest copy round
  const long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
  for (const Row& r : rows) {
    const Case* c = find_case(r.case_id);
    if (!c || (r.variant != "copy" && r.variant != "copy-nt") || !r.min_ms || *r.min_ms <= 0) continue;
    if (r.device == "cpu" && llc > 0 && c->bytes < 2.0 * static_cast<double>(llc)) continue;
    double& b = best_copy[r.device];
    b = std::max(b, c->bytes / (*r.min_ms / 1e3) / 1e9);
  }
  for (Row& r : rows) {
    const Case* c = find_case(r.case_id);
    if (!c || !r.median_ms || *r.median_ms <= 0) continue;
    double s = *r.median_ms / 1e3;
    r.bytes = c->bytes;
    if (c->bound == Bound::Compute) {
      r.flops = c->flops;
      r.gflops = c->flops / s / 1e9;
    } else {
      r.gbps = c->bytes / s / 1e9;
      if (r.device == "cpu") {
        double copy = std::max(ceiling.copy_gbps, best_copy[r.device]);
        r.fraction_of_peak = *r.gbps / copy;
        r.ceiling = fmt(copy > ceiling.copy_gbps ? "cpu best copy %.1f GB/s" : "cpu copy %.1f GB/s", copy);
      } else if (const GpuCeiling* g = ceiling.gpu_of(r.device); g && g->error.empty() && g->copy_gbps > 0) {
        double copy = std::max(g->copy_gbps, best_copy[r.device]);
        r.fraction_of_peak = *r.gbps / copy;
        r.ceiling = fmt("%s d2d copy %.0f GB/s", r.device.c_str(), copy);
      } else {
        r.ceiling = "none: " + r.device + " copy bandwidth not measured";
      }
    }
  }
  for (Row& r : rows) {
    if (!r.gflops) continue;
    const Row* best = nullptr;
    if (r.device == "cpu") {
      for (const Row& b : rows)
        if (b.case_id == r.case_id && b.device == r.device && b.variant == "baseline" && b.gflops) best = &b;
      if (best) {
        r.fraction_of_peak = *r.gflops / *best->gflops;
        r.ceiling = fmt("OpenBLAS baseline %.2f GFLOP/s", *best->gflops);
      }
      continue;
    }
    for (int pass = 0; pass < 2 && !best; ++pass) {  // pass 0: cuBLAS peers only; pass 1: any peer
      for (const Row& b : rows) {
        if (b.case_id != r.case_id || b.device != r.device || b.variant != "peer" || !b.gflops) continue;
        if (pass == 0 && b.impl.find("cuBLAS") == std::string::npos) continue;
        if (!best || *b.gflops > *best->gflops) best = &b;
      }
    }
    if (best) {
      r.fraction_of_peak = *r.gflops / *best->gflops;
      r.ceiling = fmt("%s peer %s %.1f GFLOP/s", r.device.c_str(), best->impl.c_str(), *best->gflops);
    } else {
      r.ceiling = "none: no baseline or GPU peer on " + r.device;
    }
  }
}

// Measures a GPU's copy bandwidth in a child process (a CUDA failure costs the ceiling, not the run).
GpuCeiling run_gpu_ceiling(const std::string& device, bool quick) {
  GpuCeiling g;
  g.device = device;
  std::string cmd = quote(self_exe()) + " --gpu-ceiling " + quote(device) + (quick ? " --quick" : "");
  int status = 0;
  std::vector<std::string> lines = run_child(cmd, status);
  bool seen = false;
  for (const std::string& l : lines) {
    if (l.rfind("GPUCEIL\t", 0) != 0) continue;
    seen = true;
    std::stringstream ss(l);
    for (std::string item; std::getline(ss, item, '\t');) {
      size_t eq = item.find('=');
      if (eq == std::string::npos) continue;
      std::string k = item.substr(0, eq), v = item.substr(eq + 1);
      double x = std::strtod(v.c_str(), nullptr);
      if (k == "copy_gbps") g.copy_gbps = x;
      if (k == "median_gbps") g.median_gbps = x;
      if (k == "buffer_mib") g.buffer_mib = x;
      if (k == "best_of") g.best_of = static_cast<int>(x);
      if (k == "sm") g.sm = static_cast<int>(x);
      if (k == "mps") g.multiprocessors = static_cast<int>(x);
      if (k == "memory_gib") g.memory_gib = x;
      if (k == "name") g.name = v;
      if (k == "error") g.error = v;
    }
  }
  if (!seen) g.error = "the ceiling process " + describe_status(status) + " without a result";
  return g;
}

// "<cpu>" for a CPU run; "<cpu>-<gpu name>" when a GPU of the run is present, with "-gpuonly"
// when the CPU is not measured (so that a GPU-only run does not overwrite a full one).
std::string json_path(const Options& o) {
  if (!o.json.empty()) return o.json;
  std::string name = default_json_name();
  bool want_gpu = false;
  for (const std::string& d : o.devices) want_gpu |= d.rfind("gpu", 0) == 0;
  if (want_gpu && arrayc::gpu_count() > 0) {
    std::string slug;
    for (char ch : arrayc::detail::cuda::device_info(0).name) {
      if (std::isalnum(static_cast<unsigned char>(ch))) slug += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      else if (!slug.empty() && slug.back() != '-') slug += '-';
    }
    while (!slug.empty() && slug.back() == '-') slug.pop_back();
    name += "-" + (slug.empty() ? std::string("gpu") : slug);
    if (!contains(o.devices, "cpu")) name += "-gpuonly";
  }
  return "build/bench/" + name + (o.quick ? "-quick" : "") + ".json";
}

}  // namespace

int parent(const Options& o, const std::string& command) {
  if (o.print_json_path) {
    std::printf("%s\n", json_path(o).c_str());
    return 0;
  }
  auto start = Clock::now();
  const std::string load_start = loadavg();
  std::vector<std::string> notes;
  std::vector<const Case*> cases;
  for (const Case& c : all_cases()) {
    if (o.quick ? !c.in_quick : !c.in_full) continue;
    if (!o.workloads.empty() && !contains(o.workloads, c.workload) && !contains(o.workloads, c.id)) continue;
    cases.push_back(&c);
  }
  if (o.list) {
    for (const Case& c : all_cases())
      std::printf("%-12s %-5s %-7s %s  [%s]\n", c.id.c_str(), arrayc::dtype_name(c.dtype), c.size.c_str(),
                  c.expr.c_str(), c.in_full && c.in_quick ? "full, quick" : c.in_full ? "full" : "quick");
    return 0;
  }
  if (cases.empty()) {
    std::fprintf(stderr, "arrayc-bench: no case matches --workload\n");
    return 2;
  }
  std::vector<std::string> devices;
  for (const std::string& d : o.devices) {
    if (d == "cpu") {
      devices.push_back(d);
      continue;
    }
    if (d.rfind("gpu", 0) == 0) {
      int n = arrayc::gpu_count();
      if (n == 0) {
        notes.push_back(d + ": skipped, no GPU available (arrayc::gpu_count() == 0); GPU rows are not measured");
        continue;
      }
      devices.push_back(d == "gpu" ? "gpu:0" : d);
      continue;
    }
    std::fprintf(stderr, "arrayc-bench: unknown device '%s'\n", d.c_str());
    return 2;
  }
  for (const std::string& n : notes) std::fprintf(stderr, "arrayc-bench: %s\n", n.c_str());

  // The CPU ceiling is measured in every run, for the record; with no CPU rows, the quick way.
  const bool cpu_rows = contains(devices, "cpu");
  std::fprintf(stderr, "arrayc-bench: measuring the CPU memory-bandwidth ceiling (copy, triad%s)...\n",
               cpu_rows ? "" : "; quick: no CPU rows in this run");
  Ceiling ceiling = measure_ceiling(o.quick || !cpu_rows);
  std::fprintf(stderr, "arrayc-bench: copy %.1f GB/s (plain stores %.1f, non-temporal %.1f), triad %.1f GB/s (%d threads)\n",
               ceiling.copy_gbps, ceiling.copy_plain_gbps, ceiling.copy_nt_gbps, ceiling.triad_gbps, ceiling.threads);
  for (const std::string& dev : devices) {
    if (dev == "cpu") continue;
    std::fprintf(stderr, "arrayc-bench: measuring the %s ceiling (device-to-device copy, 2 x 1 GiB)...\n",
                 dev.c_str());
    GpuCeiling g = run_gpu_ceiling(dev, o.quick);
    if (g.error.empty()) {
      std::fprintf(stderr, "arrayc-bench: %s (%s): d2d copy %.0f GB/s best, %.0f GB/s median of %d\n",
                   dev.c_str(), g.name.c_str(), g.copy_gbps, g.median_gbps, g.best_of);
    } else {
      notes.push_back(dev + ": copy ceiling not measured: " + g.error);
      std::fprintf(stderr, "arrayc-bench: %s\n", notes.back().c_str());
    }
    ceiling.gpu.push_back(g);
  }

  std::vector<Row> rows;
  int total = static_cast<int>(cases.size() * devices.size()), done = 0;
  for (const std::string& dev : devices) {
    for (const Case* c : cases) {
      ++done;
      std::fprintf(stderr, "[%d/%d %5.0f s] %s on %s: %s\n", done, total, ms_since(start) / 1e3, c->id.c_str(),
                   dev.c_str(), c->expr.c_str());
      std::map<std::string, Cold> cold;
      if (o.cold) {
        for (const char* v : {"fused", "unfused"}) {
          if (!contains(o.variants, v)) continue;
          std::fprintf(stderr, "    %s: %s: cold first call in a fresh process\n", c->id.c_str(), v);
          cold[v] = run_cold(*c, v, dev);
          const Cold& k = cold[v];
          if (k.error.empty())
            std::fprintf(stderr,
                         "    %s: %s: cold first call %.1f ms, LLVM %.1f ms, %lld kernels compiled; with the disk "
                         "cache filled %.1f ms, %lld compiled\n",
                         c->id.c_str(), v, *k.first_ms, k.compile_ms.value_or(0),
                         static_cast<long long>(k.compiles.value_or(0)), k.disk_first_ms.value_or(0),
                         static_cast<long long>(k.disk_compiles.value_or(0)));
          else
            std::fprintf(stderr, "    %s: %s: %s\n", c->id.c_str(), v, k.error.c_str());
        }
      }
      std::string cmd = quote(self_exe()) + " --measure " + quote(c->id) + " " + quote(dev) + " --reps " +
                        std::to_string(o.reps) + " --variant ";
      for (size_t i = 0; i < o.variants.size(); ++i) cmd += (i ? "," : "") + o.variants[i];
      if (o.quick) cmd += " --quick";
      int status = 0;
      std::vector<std::string> lines = run_child(cmd, status);
      std::vector<Row> got;
      std::string last_phase = "start-up";
      for (const std::string& l : lines) {
        if (l.rfind("ROW\t", 0) == 0) got.push_back(row_from_line(l));
        if (l.rfind("PHASE\t", 0) == 0) last_phase = l.substr(6);
      }
      bool died = !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
      for (const std::string& v : kVariants) {
        if (!contains(o.variants, v) || !runs_variant(*c, v, dev)) continue;
        auto it = std::find_if(got.begin(), got.end(), [&](const Row& r) { return r.variant == v; });
        Row r;
        if (it != got.end()) {
          r = *it;
        } else {
          r.workload = c->workload;
          r.case_id = c->id;
          r.device = dev;
          r.variant = v;
          r.impl = impl_of(*c, v);
          r.size = c->size;
          r.dtype = arrayc::dtype_name(c->dtype);
          r.status = "FAILED: measuring process " + describe_status(status) + " during '" + last_phase + "'";
        }
        if (cold.count(v)) {
          const Cold& k = cold[v];
          r.first_call_ms = k.first_ms;
          r.compile_ms = k.compile_ms;
          r.cold_compiles = k.compiles;
          r.disk_first_call_ms = k.disk_first_ms;
          r.disk_compiles = k.disk_compiles;
          if (!k.error.empty() && r.status == "ok") r.status = "FAILED: " + k.error;
        }
        if (r.status.rfind("FAILED", 0) == 0) {  // a failed row reports no time at all
          r.median_ms = r.min_ms = r.max_ms = r.second_call_ms = r.first_call_ms = r.compile_ms = std::nullopt;
          r.cold_compiles = r.kernels_per_call = r.disk_compiles = std::nullopt;
          r.disk_first_call_ms = std::nullopt;
          std::fprintf(stderr, "    %s: %s: %s\n", c->id.c_str(), v.c_str(), r.status.c_str());
        }
        rows.push_back(r);
      }
      if (died) std::fprintf(stderr, "    %s: the measuring process %s\n", c->id.c_str(), describe_status(status).c_str());
    }
  }
  if (!o.peers_script.empty()) {
    if (contains(devices, "cpu")) {
      const std::string python = peer_python();
      std::fprintf(stderr, "[peers %5.0f s] running %s %s\n", ms_since(start) / 1e3, python.c_str(),
                   o.peers_script.c_str());
      std::vector<Row> peers = run_peers(o.peers_script);
      if (peers.size() == 1 && peers[0].status.rfind("FAILED", 0) == 0) {
        notes.push_back("peers not measured: " + peers[0].status.substr(8));
        std::fprintf(stderr, "arrayc-bench: %s\n", notes.back().c_str());
      } else {
        // Keep only peers of the cases of this run, next to their case's rows.
        for (const Row& p : peers) {
          auto last = std::find_if(rows.rbegin(), rows.rend(),
                                   [&](const Row& r) { return r.case_id == p.case_id && r.device == "cpu"; });
          if (last != rows.rend()) rows.insert(last.base(), p);
        }
        notes.push_back("peer rows: " + python + " " + o.peers_script +
                        " (numpy/numexpr/numba medians, run after arrayc in the same run); peers' first_call_ms is "
                        "numba's first call");
      }
    }
  } else if (cpu_rows) {
    notes.push_back("no CPU peers measured (pass --peers-script PATH)");
  }
  std::string first_gpu;
  for (const std::string& d : devices)
    if (d != "cpu" && first_gpu.empty()) first_gpu = d;
  if (!o.gpu_peers_script.empty() && !first_gpu.empty()) {
    std::fprintf(stderr, "[gpu peers %5.0f s] running python3 %s%s\n", ms_since(start) / 1e3,
                 o.gpu_peers_script.c_str(), o.gpu_peers_only.empty() ? "" : (" with ONLY=" + o.gpu_peers_only).c_str());
    std::vector<std::string> peer_notes;
    std::vector<Row> peers = run_gpu_peers(o.gpu_peers_script, o.gpu_peers_only, first_gpu, peer_notes);
    // Peers of a case of this run go after that case's rows on the GPU; the others (cases not in
    // this run, tags that name no case) at the end, in the script's order.
    std::vector<Row> extra;
    for (const Row& p : peers) {
      auto last = std::find_if(rows.rbegin(), rows.rend(),
                               [&](const Row& r) { return r.case_id == p.case_id && r.device == p.device; });
      if (last != rows.rend()) rows.insert(last.base(), p);
      else extra.push_back(p);
    }
    rows.insert(rows.end(), extra.begin(), extra.end());
    notes.push_back(fmt("gpu peer rows (%s): %zu from python3 %s, run after arrayc in the same run; their "
                        "times are the script's medians, CUDA-event device time unless the peer's name says "
                        "wall; first_call_ms from its 'first call (wall)' lines",
                        first_gpu.c_str(), peers.size(), o.gpu_peers_script.c_str()));
    for (const std::string& n : peer_notes) notes.push_back("gpu peers: " + n);
  } else if (!first_gpu.empty()) {
    notes.push_back("no GPU peers measured (pass --gpu-peers-script PATH)");
  } else if (!o.gpu_peers_script.empty()) {
    notes.push_back("GPU peers not run: no GPU in this run");
  }
  derive(rows, ceiling);

  std::map<std::string, std::string> machine = machine_description();
  machine["loadavg_start"] = "\"" + load_start + "\"";
  for (const GpuCeiling& g : ceiling.gpu) {
    if (!g.error.empty()) continue;
    std::string k = g.device;
    std::replace(k.begin(), k.end(), ':', '_');
    std::string name;  // JSON-encoded by hand: a driver's device name has no quotes or controls
    for (char ch : g.name)
      if (ch != '"' && ch != '\\' && static_cast<unsigned char>(ch) >= 0x20) name += ch;
    machine[k] = fmt("{\"name\": \"%s\", \"sm\": %d, \"multiprocessors\": %d, \"memory_gib\": %.1f}",
                     name.c_str(), g.sm, g.multiprocessors, g.memory_gib);
  }
  std::string table = format_table(rows, ceiling, notes);
  std::string gpus;
  for (const GpuCeiling& g : ceiling.gpu)
    if (g.error.empty()) gpus += ", " + g.device + " " + g.name;
  std::printf("arrayc-bench on %s (%s logical CPUs)%s%s\n", machine["cpu_model"].c_str(),
              machine["logical_cpus"].c_str(), gpus.c_str(), o.quick ? ", --quick" : "");
  std::fputs(table.c_str(), stdout);
  std::fflush(stdout);
  if (o.json != "-") {
    std::string path = json_path(o);
    write_json(path, rows, ceiling, machine, notes, command, o.quick, o.reps);
    std::fprintf(stderr, "arrayc-bench: wrote %s\n", path.c_str());
  }
  int failed = 0;
  for (const Row& r : rows)
    if (r.status.rfind("FAILED", 0) == 0) ++failed;
  std::fprintf(stderr, "arrayc-bench: done in %.0f s; %d failed row(s)\n", ms_since(start) / 1e3, failed);
  if (failed) {
    std::fprintf(stderr, "arrayc-bench: FAILED:\n");
    for (const Row& r : rows)
      if (r.status.rfind("FAILED", 0) == 0)
        std::fprintf(stderr, "  %s %s %s: %s\n", r.case_id.c_str(), r.device.c_str(), r.variant.c_str(),
                     r.status.c_str());
  }
  return failed ? 1 : 0;
}

}  // namespace bench
