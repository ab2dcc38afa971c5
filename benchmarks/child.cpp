// The harness's child processes: each measures in a fresh process and prints lines the parent
// parses (COLD, ROW, GPUCEIL). See main.cpp's header for the process structure.
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

arrayc::Device device_of(const std::string& name) {
  if (name == "cpu") return arrayc::cpu();
  if (name == "gpu" || name == "gpu:0") return arrayc::gpu(0);
  if (name.rfind("gpu:", 0) == 0) return arrayc::gpu(std::atoi(name.c_str() + 4));
  throw arrayc::Error("unknown device '" + name + "' (cpu, gpu, gpu:N)");
}

Values values_of(const Array& a) { return {a.to_vector<double>(), a.shape()}; }

// Waits for the device's queued work: a no-op on the CPU (its calls return when done), a
// cuda::synchronize on a GPU, where launches return before the kernels ran. Every timed GPU call
// ends with it, inside the timed region.
void sync_device(arrayc::Device d) {
  if (d.kind == arrayc::Device::Kind::GPU) arrayc::detail::cuda::synchronize(d.index);
}

// ---- Child: a GPU's copy-bandwidth ceiling -----------------------------------------------------

}  // namespace

int child_gpu_ceiling(const Options& o) {
  try {
    arrayc::Device d = device_of(o.child_gpu_ceiling);
    GpuCeiling g = measure_gpu_ceiling(d.index, o.quick);
    std::printf("GPUCEIL\tcopy_gbps=%.17g\tmedian_gbps=%.17g\tbuffer_mib=%.17g\tbest_of=%d\tsm=%d\tmps=%d\t"
                "memory_gib=%.17g\tname=%s\n",
                g.copy_gbps, g.median_gbps, g.buffer_mib, g.best_of, g.sm, g.multiprocessors, g.memory_gib,
                g.name.c_str());
  } catch (const std::exception& e) {
    std::string what = e.what();
    std::replace(what.begin(), what.end(), '\n', ' ');
    std::replace(what.begin(), what.end(), '\t', ' ');
    std::printf("GPUCEIL\terror=%s\n", what.c_str());
  }
  return 0;
}

// ---- Child: cold first call ---------------------------------------------------------------------

int child_cold(const Options& o) {
  const Case* c = find_case(o.child_cold_case);
  if (!c) {
    std::fprintf(stderr, "no case %s\n", o.child_cold_case.c_str());
    return 2;
  }
  // The inputs are made (and evaluated) first; the kernels that fill them are not the
  // workload's, so the workload's kernels all compile in the timed call.
  arrayc::Device dev = device_of(o.child_device);
  std::unique_ptr<Instance> inst = c->prepare(dev, false);
  sync_device(dev);  // the inputs' kernels are done before the clock starts
  arrayc::set_fusion(o.child_cold_variant == "fused");
  std::function<Array()> run = inst->make_arrayc();
  arrayc::reset_stats();
  auto t0 = Clock::now();
  Array y = run();
  sync_device(dev);  // on a GPU: until the kernels have run, not until they were launched
  double first = ms_since(t0);
  arrayc::Stats s = arrayc::stats();
  std::printf("COLD\tfirst_call_ms=%.17g\tcompile_ms=%.17g\tcompiles=%lld\tdisk_hits=%lld\n", first, s.compile_ms,
              static_cast<long long>(s.compiles), static_cast<long long>(s.disk_hits));
  return 0;
}

// ---- Child: checks and timing of one case on one device ----------------------------------------

namespace {

// Tells the parent (on stdout) what the child is doing, so a crash can be attributed.
void phase(const Case& c, const std::string& what) {
  std::printf("PHASE\t%s\n", what.c_str());
  std::fflush(stdout);
  std::fprintf(stderr, "    %s: %s\n", c.id.c_str(), what.c_str());
}

struct Variant {
  std::string name;
  Row row;
  std::function<Array()> arrayc;     // fused / unfused
  std::function<void()> baseline;    // baseline, libmvec
  Values values;
  bool ok = false;
};

void fail(Variant& v, const std::string& why) {
  v.row.status = "FAILED: " + why;
  v.ok = false;
  v.values = {};
}

}  // namespace

int child_measure(const Options& o) {
  const Case* c = find_case(o.child_measure_case);
  if (!c) {
    std::fprintf(stderr, "no case %s\n", o.child_measure_case.c_str());
    return 2;
  }
  const int warmup = o.quick ? 1 : 2;
  std::vector<Variant> vs;
  for (const std::string& name : kVariants) {
    if (!contains(o.variants, name) || !runs_variant(*c, name, o.child_device)) continue;
    Variant v;
    v.name = name;
    v.row.workload = c->workload;
    v.row.case_id = c->id;
    v.row.device = o.child_device;
    v.row.variant = name;
    v.row.impl = impl_of(*c, name);
    v.row.size = c->size;
    v.row.dtype = arrayc::dtype_name(c->dtype);
    vs.push_back(std::move(v));
  }
  auto emit_all = [&] {
    for (const Variant& v : vs) std::printf("%s\n", row_to_line(v.row).c_str());
    std::fflush(stdout);
  };

  std::unique_ptr<Instance> inst;
  Instance::Reference ref;
  arrayc::Device dev;
  try {
    dev = device_of(o.child_device);
    phase(*c, "preparing inputs");
    inst = c->prepare(dev, true);
    sync_device(dev);
    phase(*c, "reference interpreter");
    auto t0 = Clock::now();
    ref = inst->reference();
    std::fprintf(stderr, "    %s: reference: %s (%.1f s)\n", c->id.c_str(), ref.note.c_str(), ms_since(t0) / 1e3);
  } catch (const std::exception& e) {
    for (Variant& v : vs) fail(v, std::string("preparing the case: ") + e.what());
    emit_all();
    return 0;
  }

  // Phase 1: first and second calls, and the checks. Nothing is timed for a variant that fails.
  for (Variant& v : vs) {
    try {
      if (v.name == "copy" || v.name == "copy-nt") {  // nothing to check: the memory's pace
        v.baseline = make_copy(c->bytes, v.name == "copy-nt");
        v.ok = true;
        continue;
      }
      if (v.name == "baseline" || v.name == "libmvec") {
        v.baseline = inst->make_baseline(v.name);
        if (!v.baseline) {
          v.row.status = "skipped: no " + v.name + " on " + o.child_device;
          continue;
        }
        phase(*c, v.name + ": first call");
        v.baseline();
        v.values = inst->baseline_values();
      } else {
        arrayc::set_fusion(v.name == "fused");
        v.arrayc = inst->make_arrayc();
        phase(*c, v.name + ": first call");
        v.arrayc();  // its output is released before the second call, as in the timed calls
        sync_device(dev);
        phase(*c, v.name + ": second call");
        auto t0 = Clock::now();
        Array y = v.arrayc();
        sync_device(dev);
        v.row.second_call_ms = ms_since(t0);
        v.values = values_of(y);
      }
      if (v.name == "fused" && break_requested(*c) && !ref.index.empty()) {
        int64_t at = ref.index[ref.index.size() / 2];
        double& x = v.values.v[static_cast<size_t>(at)];
        std::fprintf(stderr, "    %s: ARRAYC_BENCH_BREAK: perturbing fused element %lld (%g)\n", c->id.c_str(),
                     static_cast<long long>(at), x);
        x += std::max(1.0, std::fabs(x)) * 1e-2;
      }
      phase(*c, v.name + ": checking against the reference");
      std::string bad = check_reference(v.values, ref, c->dtype);
      if (!bad.empty()) {
        fail(v, "wrong result: " + bad);
        continue;
      }
      v.ok = true;
      v.row.check = "reference: " + ref.note + ": ok";
      if (v.baseline) v.values = {};  // only fused and unfused are compared further
    } catch (const std::exception& e) {
      fail(v, e.what());
    }
  }
  // Fused against unfused on every element.
  auto find = [&](const char* n) -> Variant* {
    for (Variant& v : vs)
      if (v.name == n) return &v;
    return nullptr;
  };
  Variant *fu = find("fused"), *un = find("unfused");
  if (fu && un && fu->ok && un->ok) {
    phase(*c, "checking fused against unfused");
    std::string bad = check_pair(fu->values, un->values, c->dtype, c->fvu_ulps, "fused", "unfused");
    if (!bad.empty()) {
      fail(*fu, "wrong result: " + bad);
      fail(*un, "wrong result: " + bad);
    } else {
      std::string note = fmt("; fused vs unfused: all %zu elements within %g ulp: ok", un->values.v.size(), c->fvu_ulps);
      fu->row.check += note;
      un->row.check += note;
    }
  }
  for (Variant& v : vs) {
    if (v.row.status.rfind("FAILED", 0) == 0) {
      std::fprintf(stderr, "\n*** %s %s %s %s\n\n", c->id.c_str(), o.child_device.c_str(), v.name.c_str(),
                   v.row.status.c_str());
    }
    v.values = {};
  }

  // Phase 2: steady state. Warm-up per variant, then the timed calls round-robin over the
  // variants, so that a burst of load on a shared machine hits every variant alike.
  auto call = [&](Variant& v) {
    if (v.baseline) {
      v.baseline();
    } else {
      arrayc::set_fusion(v.name == "fused");  // part of the jit key: set before every call
      v.arrayc();
      sync_device(dev);  // GPU: inside the timed region, the call is done when its kernels are
    }
  };
  std::vector<Variant*> timed;
  for (Variant& v : vs) {
    if (!v.ok) continue;
    try {
      phase(*c, fmt("%s: %d warm-up calls", v.name.c_str(), warmup));
      for (int i = 0; i < warmup; ++i) call(v);
      // A call much shorter than the clock's noise on a shared machine (W2 on one element: about
      // a microsecond) is timed in batches of about 1 ms, and each sample is the batch's mean.
      auto t0 = Clock::now();
      call(v);
      double once = ms_since(t0);
      v.row.calls_per_sample = 1;
      if (once < kBatchBelowMs)
        v.row.calls_per_sample = static_cast<int>(std::min(10000.0, std::ceil(kBatchMs / std::max(once, 1e-4))));
      timed.push_back(&v);
    } catch (const std::exception& e) {
      fail(v, e.what());
    }
  }
  std::map<Variant*, std::vector<double>> times;
  std::map<Variant*, int64_t> launches;
  for (int i = 0; i < o.reps; ++i) {
    phase(*c, fmt("timed round %d of %d", i + 1, o.reps));
    for (Variant* v : timed) {
      if (!v->ok) continue;
      try {
        arrayc::Stats s0 = arrayc::stats();
        const int k = v->row.calls_per_sample;
        auto t0 = Clock::now();
        for (int j = 0; j < k; ++j) call(*v);
        times[v].push_back(ms_since(t0) / k);
        launches[v] += (arrayc::stats().kernel_launches - s0.kernel_launches) / k;
      } catch (const std::exception& e) {
        fail(*v, e.what());
      }
    }
  }
  for (Variant* v : timed) {
    if (!v->ok) continue;
    std::vector<double>& t = times[v];
    std::sort(t.begin(), t.end());
    size_t n = t.size();
    v->row.reps = static_cast<int>(n);
    v->row.median_ms = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
    v->row.min_ms = t.front();
    v->row.max_ms = t.back();
    if (!v->baseline) v->row.kernels_per_call = launches[v] / static_cast<int64_t>(n);
    std::fprintf(stderr, "    %s: %s median %.3f ms (min %.3f, max %.3f)\n", c->id.c_str(), v->name.c_str(),
                 *v->row.median_ms, t.front(), t.back());
  }
  emit_all();
  return 0;
}

}  // namespace bench
