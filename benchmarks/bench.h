// arrayc-bench: the benchmark harness. Shared declarations of its parts:
//   workloads.cpp  the reference workloads W1-W8 (docs/workloads.md) as Cases: inputs, the arrayc
//                  function, the hand-written baseline, bytes/flops moved, the reference check
//   baseline.cpp   the hand-written C++ loops and direct OpenBLAS calls (-O3 -march=native)
//   ceiling.cpp    the STREAM-like copy/triad bandwidth measurement (std::thread, arrayc's thread count),
//                  and a GPU's device-to-device copy bandwidth (cuda::copy_device)
//   check.cpp      comparison with the reference interpreter and fused-vs-unfused (NaN-aware)
//   report.cpp     the table on stdout, the JSON file, the machine description, peer parsing
//   main.cpp       command line, the child processes (cold runs, measurements), orchestration
// docs/benchmarks.md describes what is measured and the JSON schema.
#pragma once
#include <arrayc/arrayc.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace bench {

using arrayc::Array;
using arrayc::DType;

// ---- Results --------------------------------------------------------------------------------

// One row of the results: a (case, device, variant) measurement, a failure, or a peer's figure.
// Optional numbers are null in the JSON when absent.
struct Row {
  std::string workload;  // "W1"
  std::string case_id;   // "W1-f32-1e7": workload, dtype and size, unique
  std::string device;    // "cpu", "gpu:0"
  std::string variant;   // "fused" | "unfused" | "baseline" | "libmvec" | "copy" | "copy-nt" | "peer"
  std::string impl;      // who computed it: "arrayc", "C++ loop -O3 -march=native", "OpenBLAS", "numpy"
  std::string size;      // "1e7", "10000x784 . 784x10"
  std::string dtype;     // "float32"
  std::string status = "ok";  // "ok", or "FAILED: reason"
  int reps = 0;
  int calls_per_sample = 0;  // steady state: each timed sample is the mean of this many calls (0: not timed here)
  std::optional<double> median_ms, min_ms, max_ms;
  std::optional<double> first_call_ms;    // cold: first call in a fresh process, empty cache
  std::optional<double> compile_ms;       // cold: stats().compile_ms after that first call
  std::optional<int64_t> cold_compiles;   // cold: kernels compiled by that first call
  std::optional<double> disk_first_call_ms;  // first call in a second fresh process, whose disk
                                             // cache the cold one filled (kernels loaded, not compiled)
  std::optional<int64_t> disk_compiles;      // kernels that second process still compiled
  std::optional<double> second_call_ms;   // second call of the same jit object (cache hit)
  std::optional<int64_t> kernels_per_call;  // stats().kernel_launches of one steady-state call
  std::optional<double> bytes, flops;     // what the workload must move / compute per call
  std::optional<double> gbps, gflops;     // achieved, from median_ms
  std::optional<double> fraction_of_peak; // gbps / copy ceiling of the row's device, or gflops /
                                          // OpenBLAS gflops (CPU) / cuBLAS peer gflops (GPU)
  std::string ceiling;                    // which ceiling fraction_of_peak refers to
  std::string check;                      // what the correctness check compared, and its result
};

// A flat key=value form of Row, one line, for the child processes to hand rows to the parent.
std::string row_to_line(const Row& r);
Row row_from_line(const std::string& line);

// ---- Cases ----------------------------------------------------------------------------------

enum class Bound { Memory, Compute };  // what fraction_of_peak is measured against

// The output of one call of a variant, as host values for the checks.
struct Values {
  std::vector<double> v;
  arrayc::Shape shape;
};

// One prepared case: inputs allocated and filled on the device, ready to run.
struct Instance {
  virtual ~Instance() = default;
  // A fresh runner of the arrayc version (a new arrayc::jit object); every call of the returned
  // function computes the workload once and returns its (evaluated) result. Fusion is whatever
  // arrayc::set_fusion says when the jit object first traces.
  virtual std::function<Array()> make_arrayc() = 0;
  // A hand-written baseline, `variant` "baseline" or "libmvec" (see Case); nullptr where there
  // is none (e.g. on a GPU). Its output is kept inside and returned by baseline_values().
  virtual std::function<void()> make_baseline(const std::string& variant) = 0;
  virtual Values baseline_values() = 0;
  // The values a correct implementation must produce: the reference interpreter on the whole
  // expression, or on a sample (see `reference_note`), with a per-element error bound.
  struct Reference {
    std::vector<int64_t> index;    // flat indices into the output that the reference covers
    std::vector<double> want, bound;
    std::string note;              // "interpreter, all 10000000 elements" / "interpreter, 65536 sampled ..."
  };
  virtual Reference reference() = 0;
};

struct Case {
  std::string workload;     // "W1"
  std::string id;           // "W1-f32-1e7"
  std::string expr;         // what is computed
  std::string size;         // "1e7"
  DType dtype;
  Bound bound;
  double bytes = 0;         // inputs read + outputs written, per call
  double flops = 0;         // for Compute-bound cases
  double fvu_ulps = 0;      // fused-vs-unfused tolerance, see check.h
  bool in_quick = true;     // run under --quick
  bool in_full = true;      // run without --quick
  std::string baseline_impl;
  std::string libmvec_impl;  // empty: the case has no libmvec variant
  // The word peer scripts' tags give this case's size ("4096^3"), where one workload has cases
  // of several sizes that the dtype and a 1eN size do not tell apart; empty: none needed.
  std::string peer_size;
  // Makes the inputs on a device; with `host_copies`, also the host copies and output buffer of
  // the baseline (CPU only; the cold runs do without).
  std::function<std::unique_ptr<Instance>(arrayc::Device, bool host_copies)> prepare;
};

// Whether variant ("fused", "unfused", "baseline", "libmvec", "copy", "copy-nt") is run for c on
// device ("cpu", "gpu:0"): libmvec only where the case has it, on the CPU; the copies for
// memory-bound CPU cases of kCopyVariantBytes or more. And the impl its rows name.
bool runs_variant(const Case& c, const std::string& variant, const std::string& device);
std::string impl_of(const Case& c, const std::string& variant);

// Every case of W1-W8, in order.
const std::vector<Case>& all_cases();
const Case* find_case(const std::string& id);

// ARRAYC_BENCH_BREAK=W2 (or a case id) perturbs one element of the fused output of that workload
// before the checks: the self-test that a wrong result makes the harness fail.
bool break_requested(const Case& c);

// ---- Ceiling ----------------------------------------------------------------------------------

// A GPU's ceiling: device-to-device copy (cuda::copy_device of one buffer into another, timed
// on the host with cuda::synchronize inside the timed region), bytes = read + written.
struct GpuCeiling {
  std::string device;          // "gpu:0"
  double copy_gbps = 0;        // best of `best_of`
  double median_gbps = 0;      // median of the same copies
  double buffer_mib = 0;       // size of each of the two buffers
  int best_of = 0;
  std::string name;            // cuda::device_info: "NVIDIA H200"
  int sm = 0, multiprocessors = 0;
  double memory_gib = 0;
  std::string error;           // why it was not measured ("" when it was)
};

struct Ceiling {
  double copy_gbps = 0, triad_gbps = 0;  // bytes read + written / time, best of `best_of`
  double copy_plain_gbps = 0, copy_nt_gbps = 0;  // copy_gbps is the faster: plain or non-temporal stores
  int threads = 0;
  double array_mb = 0;
  int best_of = 0;
  std::vector<GpuCeiling> gpu;  // one per GPU device of the run
  const GpuCeiling* gpu_of(const std::string& device) const {
    for (const GpuCeiling& g : gpu)
      if (g.device == device) return &g;
    return nullptr;
  }
};
Ceiling measure_ceiling(bool quick);
// A copy of bytes/2 bytes into another bytes/2 (bytes read + written, as a case counts them) on
// as many threads as arrayc's pool, with plain or non-temporal stores: the "copy" and "copy-nt"
// variants, which time the memory ceiling in the same rounds as the case's other variants.
std::function<void()> make_copy(double bytes, bool nontemporal);
// Cases that get them: memory-bound, on the CPU, at least this many bytes per call.
constexpr double kCopyVariantBytes = double(int64_t{64} << 20);
// Runs in a child process (arrayc-bench --gpu-ceiling DEV); throws arrayc::Error on failure.
GpuCeiling measure_gpu_ceiling(int dev, bool quick);

// ---- Machine and peers ------------------------------------------------------------------------

std::map<std::string, std::string> machine_description();  // values already JSON-encoded
std::string loadavg();                                      // /proc/loadavg, one line
std::string default_json_name();                            // "cpu-<model>-<n>cores"
// The Python that runs the CPU peers' script: ARRAYC_PEER_PYTHON when set, else the first of
// $VIRTUAL_ENV/bin/python3, python3 on PATH, /usr/bin/python3, /usr/local/bin/python3 that
// imports numpy, else /usr/bin/python3 (whose error then names the missing module).
std::string peer_python();
// Runs `peer_python() script` and turns its lines into peer rows; a failure gives one
// FAILED row naming the reason.
std::vector<Row> run_peers(const std::string& script);
// Runs `python3 script` (peers_gpu.py; `only` non-empty: with ONLY=only in its environment) and
// turns its lines "<tag, 30 wide> <peer, 30 wide> <ms, 10 wide> ms <note>" into peer rows of
// `device`: tags that name a case ("W1 cos2sin2 1e+07 float32") get that case's id, others keep
// their tag as case id. Lines that are not measurements (the script's header, "name: FAILED
// ...", a failing interpreter) go to `notes`.
std::vector<Row> run_gpu_peers(const std::string& script, const std::string& only, const std::string& device,
                               std::vector<std::string>& notes);

// ---- Output -----------------------------------------------------------------------------------

std::string format_table(const std::vector<Row>& rows, const Ceiling& ceiling,
                         const std::vector<std::string>& notes);
void write_json(const std::string& path, const std::vector<Row>& rows, const Ceiling& ceiling,
                const std::map<std::string, std::string>& machine,
                const std::vector<std::string>& notes, const std::string& command, bool quick,
                int reps);

std::string fmt(const char* f, ...) __attribute__((format(printf, 1, 2)));

}  // namespace bench
