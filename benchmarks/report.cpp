// Rows in and out: the child-to-parent line form, the table, the JSON file, the machine
// description and the peers' output.
#include <cblas.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "bench.h"
#include "backend/host/thread_pool.h"

extern "C" char* openblas_get_config(void);

namespace bench {

std::string fmt(const char* f, ...) {
  va_list ap;
  va_start(ap, f);
  char buf[1024];
  int n = std::vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  if (n < static_cast<int>(sizeof buf)) return std::string(buf, n > 0 ? static_cast<size_t>(n) : 0);
  std::string s(static_cast<size_t>(n) + 1, '\0');
  va_start(ap, f);
  std::vsnprintf(s.data(), s.size(), f, ap);
  va_end(ap);
  s.resize(static_cast<size_t>(n));
  return s;
}

// ---- Line form: TAB-separated key=value, with \t \n \\ escaped -------------------------------

namespace {

std::string escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '\\') o += "\\\\";
    else if (c == '\t') o += "\\t";
    else if (c == '\n') o += "\\n";
    else o += c;
  }
  return o;
}

std::string unescape(const std::string& s) {
  std::string o;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      char c = s[++i];
      o += c == 't' ? '\t' : c == 'n' ? '\n' : c;
    } else {
      o += s[i];
    }
  }
  return o;
}

// Visits every field of a Row with its name; F is called as f(name, member).
template <typename R, typename F> void fields(R& r, F&& f) {
  f("workload", r.workload);
  f("case", r.case_id);
  f("device", r.device);
  f("variant", r.variant);
  f("impl", r.impl);
  f("size", r.size);
  f("dtype", r.dtype);
  f("status", r.status);
  f("reps", r.reps);
  f("calls_per_sample", r.calls_per_sample);
  f("median_ms", r.median_ms);
  f("min_ms", r.min_ms);
  f("max_ms", r.max_ms);
  f("first_call_ms", r.first_call_ms);
  f("compile_ms", r.compile_ms);
  f("cold_compiles", r.cold_compiles);
  f("disk_first_call_ms", r.disk_first_call_ms);
  f("disk_compiles", r.disk_compiles);
  f("second_call_ms", r.second_call_ms);
  f("kernels_per_call", r.kernels_per_call);
  f("bytes", r.bytes);
  f("flops", r.flops);
  f("gbps", r.gbps);
  f("gflops", r.gflops);
  f("fraction_of_peak", r.fraction_of_peak);
  f("ceiling", r.ceiling);
  f("check", r.check);
}

struct ToText {
  std::string operator()(const std::string& s) const { return s; }
  std::string operator()(int v) const { return std::to_string(v); }
  std::string operator()(const std::optional<double>& v) const { return v ? fmt("%.17g", *v) : ""; }
  std::string operator()(const std::optional<int64_t>& v) const { return v ? std::to_string(*v) : ""; }
};

struct FromText {
  void operator()(const std::string& t, std::string& s) const { s = t; }
  void operator()(const std::string& t, int& v) const { v = std::atoi(t.c_str()); }
  void operator()(const std::string& t, std::optional<double>& v) const {
    if (!t.empty()) v = std::strtod(t.c_str(), nullptr);
  }
  void operator()(const std::string& t, std::optional<int64_t>& v) const {
    if (!t.empty()) v = std::strtoll(t.c_str(), nullptr, 10);
  }
};

std::string json_string(const std::string& s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    if (c == '"') o += "\\\"";
    else if (c == '\\') o += "\\\\";
    else if (c == '\n') o += "\\n";
    else if (c == '\t') o += "\\t";
    else if (c < 0x20) o += fmt("\\u%04x", c);
    else o += static_cast<char>(c);
  }
  return o + "\"";
}

std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  return fmt("%.6g", v);
}

struct ToJson {
  std::string operator()(const std::string& s) const { return json_string(s); }
  std::string operator()(int v) const { return v ? std::to_string(v) : "null"; }  // reps: null if none
  std::string operator()(const std::optional<double>& v) const { return v ? json_number(*v) : "null"; }
  std::string operator()(const std::optional<int64_t>& v) const { return v ? std::to_string(*v) : "null"; }
};

}  // namespace

std::string row_to_line(const Row& r) {
  std::string line = "ROW";
  fields(r, [&](const char* name, const auto& v) {
    std::string t = ToText{}(v);
    if (!t.empty()) line += std::string("\t") + name + "=" + escape(t);
  });
  return line;
}

Row row_from_line(const std::string& line) {
  std::map<std::string, std::string> kv;
  std::stringstream ss(line);
  std::string item;
  while (std::getline(ss, item, '\t')) {
    size_t eq = item.find('=');
    if (eq != std::string::npos) kv[item.substr(0, eq)] = unescape(item.substr(eq + 1));
  }
  Row r;
  fields(r, [&](const char* name, auto& v) {
    auto it = kv.find(name);
    if (it != kv.end()) FromText{}(it->second, v);
  });
  return r;
}

// ---- Machine ------------------------------------------------------------------------------------

namespace {

std::string read_file(const char* path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string cpuinfo_field(const std::string& name) {
  std::stringstream ss(read_file("/proc/cpuinfo"));
  std::string line;
  while (std::getline(ss, line)) {
    if (line.rfind(name, 0) == 0) {
      size_t colon = line.find(':');
      if (colon != std::string::npos) {
        std::string v = line.substr(colon + 1);
        v.erase(0, v.find_first_not_of(" \t"));
        return v;
      }
    }
  }
  return "";
}

std::string cpu_model() {
  std::string m = cpuinfo_field("model name");
  return m.empty() ? "unknown CPU" : m;
}

}  // namespace

std::map<std::string, std::string> machine_description() {
  std::map<std::string, std::string> m;
  m["cpu_model"] = json_string(cpu_model());
  std::string vendor = cpuinfo_field("vendor_id");
  m["cpu_vendor"] = json_string(vendor);
  m["cpu_family_model_stepping"] = json_string(cpuinfo_field("cpu family") + "/" + cpuinfo_field("model\t") +
                                               "/" + cpuinfo_field("stepping"));
  m["logical_cpus"] = std::to_string(std::thread::hardware_concurrency());
  std::string cores = cpuinfo_field("cpu cores");
  m["cores_per_socket"] = cores.empty() ? "null" : cores;
  std::string flags = " " + cpuinfo_field("flags") + " ";
  std::string simd;
  for (const char* f : {"sse4_2", "avx", "avx2", "fma", "avx512f", "avx512dq", "avx512bw", "avx512vl",
                        "avx512_vnni", "avx512_bf16", "hypervisor"})
    if (flags.find(std::string(" ") + f + " ") != std::string::npos) simd += (simd.empty() ? "" : " ") + std::string(f);
  m["cpu_flags"] = json_string(simd);
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  m["memory_gib"] = fmt("%.1f", static_cast<double>(pages) * static_cast<double>(page) / (1 << 30));
  utsname u{};
  uname(&u);
  m["kernel"] = json_string(std::string(u.sysname) + " " + u.release);
  std::string os;
  std::stringstream ss(read_file("/etc/os-release"));
  for (std::string line; std::getline(ss, line);)
    if (line.rfind("PRETTY_NAME=", 0) == 0) os = line.substr(12);
  os.erase(std::remove(os.begin(), os.end(), '"'), os.end());
  m["os"] = json_string(os);
  m["compiler"] = json_string(std::string("g++ ") + __VERSION__);
  m["openblas"] = json_string(openblas_get_config());
  const char* threads = std::getenv("ARRAYC_NUM_THREADS");
  m["arrayc_num_threads"] = json_string(std::to_string(arrayc::detail::num_threads()) +
                                        (threads ? " (ARRAYC_NUM_THREADS)" : " (the CPUs this process may run on)"));
  m["loadavg_end"] = json_string(loadavg());
  return m;
}

std::string loadavg() {
  std::string load = read_file("/proc/loadavg");
  while (!load.empty() && (load.back() == '\n' || load.back() == ' ')) load.pop_back();
  return load;
}

std::string default_json_name() {
  std::string model = cpu_model(), s;
  std::string low;
  for (char c : model) low += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* junk : {"(r)", "(tm)", " processor", " cpu"}) {
    for (size_t p; (p = low.find(junk)) != std::string::npos;) low.erase(p, std::strlen(junk));
  }
  for (char c : low) {
    if (std::isalnum(static_cast<unsigned char>(c))) s += c;
    else if (!s.empty() && s.back() != '-') s += '-';
  }
  while (!s.empty() && s.back() == '-') s.pop_back();
  return fmt("cpu-%s-%ucores", s.c_str(), std::thread::hardware_concurrency());
}

// ---- Peers ----------------------------------------------------------------------------------------

// host peers' Python (issue 28): ARRAYC_PEER_PYTHON, else the first candidate that imports numpy.
std::string peer_python() {
  if (const char* env = std::getenv("ARRAYC_PEER_PYTHON"); env && *env) return env;
  auto has_numpy = [](const std::string& py) {
    return std::system(("'" + py + "' -c 'import numpy' >/dev/null 2>&1").c_str()) == 0;
  };
  std::vector<std::string> candidates = {"python3", "/usr/bin/python3", "/usr/local/bin/python3"};
  if (const char* venv = std::getenv("VIRTUAL_ENV"); venv && *venv)
    candidates.insert(candidates.begin(), std::string(venv) + "/bin/python3");
  for (const std::string& py : candidates)
    if (has_numpy(py)) return py;
  return "/usr/bin/python3";  // none has numpy: its error says so
}

namespace {

std::string trim(std::string s) {
  s.erase(0, s.find_first_not_of(" \t\r\n"));
  size_t e = s.find_last_not_of(" \t\r\n");
  s.erase(e == std::string::npos ? 0 : e + 1);
  return s;
}

// The case a peer's tag names: its first word is the workload ("W1"), a dtype word (float32, f32,
// float64, f64, float16, f16; none: float32, the dtype of every single-dtype workload) and, for
// memory-bound workloads, a size (1e6, 1e+07, 100000000) pick the case. A case with a peer size
// ("4096^3", Case::peer_size) takes only tags that carry that word, which then need no other
// size. nullptr when none matches.
const Case* case_of_tag(const std::string& tag) {
  std::stringstream ts(tag);
  std::string w, tok, dtype, size;
  std::set<std::string> words;
  ts >> w;
  static const std::regex exp_re(R"(([0-9]+)[eE]\+?0*([0-9]+))"), int_re(R"([0-9]+)");
  while (ts >> tok) {
    words.insert(tok);
    if (tok == "float64" || tok == "f64") dtype = "float64";
    if (tok == "float32" || tok == "f32") dtype = "float32";
    if (tok == "float16" || tok == "f16") dtype = "float16";
    std::smatch m;
    if (std::regex_match(tok, m, exp_re)) {
      size = m[1].str() + "e" + m[2].str();
    } else if (std::regex_match(tok, int_re) && tok.size() > 1 && tok[0] == '1' &&
               tok.find_first_not_of('0', 1) == std::string::npos) {
      size = "1e" + std::to_string(tok.size() - 1);
    }
  }
  const Case* any_dtype = nullptr;
  for (const Case& c : all_cases()) {
    if (c.workload != w) continue;
    if (!c.peer_size.empty() && !words.count(c.peer_size)) continue;
    if (c.bound == Bound::Memory && c.peer_size.empty()) {
      if (size.empty()) continue;  // a size is needed to pick the case
      if (c.size != size) continue;
    }
    if (dtype.empty()) {
      if (!any_dtype) any_dtype = &c;
      if (c.dtype == DType::Float32) return &c;
      continue;
    }
    if (dtype == arrayc::dtype_name(c.dtype)) return &c;
  }
  return dtype.empty() ? any_dtype : nullptr;
}

}  // namespace

std::vector<Row> run_peers(const std::string& script) {
  std::vector<Row> rows;
  auto fail = [&](const std::string& why) {
    Row r;
    r.workload = "peers";
    r.case_id = "peers";
    r.device = "cpu";
    r.variant = "peer";
    r.impl = script;
    r.status = "FAILED: " + why;
    rows.assign(1, r);
    return rows;
  };
  if (!std::filesystem::exists(script)) return fail("no such script: " + script);
  std::string err_file = fmt("/tmp/arrayc-bench-peers-%d.err", static_cast<int>(getpid()));
  const std::string python = peer_python();
  std::string cmd = "'" + python + "' '" + script + "' 2>'" + err_file + "'";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return fail("cannot run " + python);
  // The script prints "<workload tag, 28 wide> <peer, 22 wide> <ms, 10 wide> ms".
  std::regex line_re(R"(^(.{28}) (.{22}) +([0-9.eE+-]+) ms\s*$)");
  std::map<std::pair<std::string, std::string>, double> first_calls;
  char buf[512];
  while (std::fgets(buf, sizeof buf, p)) {
    std::string line(buf);
    std::fprintf(stderr, "  peers: %s", line.c_str());
    std::smatch m;
    if (!std::regex_match(line, m, line_re)) continue;
    std::string tag = trim(m[1]), peer = trim(m[2]);
    double ms = std::strtod(m[3].str().c_str(), nullptr);
    const Case* match = case_of_tag(tag);
    if (!match) continue;
    const std::string suffix = " first call";
    if (peer.size() > suffix.size() && peer.compare(peer.size() - suffix.size(), suffix.size(), suffix) == 0) {
      first_calls[{match->id, peer.substr(0, peer.size() - suffix.size())}] = ms;
      continue;
    }
    Row r;
    r.workload = match->workload;
    r.case_id = match->id;
    r.device = "cpu";
    r.variant = "peer";
    r.impl = peer;
    r.size = match->size;
    r.dtype = arrayc::dtype_name(match->dtype);
    r.median_ms = ms;
    r.check = "not checked by the harness (peers_cpu.py's own result)";
    rows.push_back(r);
  }
  int status = pclose(p);
  std::string err = read_file(err_file.c_str());
  std::remove(err_file.c_str());
  if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
    std::string last;
    std::stringstream es(err);
    for (std::string l; std::getline(es, l);)
      if (!l.empty()) last = l;
    return fail(fmt("%s %s exited with status %d: %s", python.c_str(), script.c_str(),
                    WIFEXITED(status) ? WEXITSTATUS(status) : -1, last.c_str()));
  }
  for (auto& [key, ms] : first_calls) {
    auto it = std::find_if(rows.begin(), rows.end(),
                           [&](const Row& r) { return r.case_id == key.first && r.impl == key.second; });
    if (it != rows.end()) it->first_call_ms = ms;
  }
  return rows;
}

// ---- GPU peers ------------------------------------------------------------------------------------

std::vector<Row> run_gpu_peers(const std::string& script, const std::string& only, const std::string& device,
                               std::vector<std::string>& notes) {
  std::vector<Row> rows;
  if (!std::filesystem::exists(script)) {
    notes.push_back("not measured: no such script: " + script);
    return rows;
  }
  std::string err_file = fmt("/tmp/arrayc-bench-gpu-peers-%d.err", static_cast<int>(getpid()));
  auto q = [](const std::string& x) {
    std::string o = "'";
    for (char ch : x) o += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    return o + "'";
  };
  std::string cmd = (only.empty() ? std::string() : "ONLY=" + q(only) + " ") + "python3 " + q(script) + " 2>" +
                    q(err_file);
  std::fflush(stderr);
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) {
    notes.push_back("not measured: cannot run python3");
    return rows;
  }
  // "{tag:30s} {peer:30s} {ms:10.4f} ms {note}": a tag or peer longer than 30 pushes the rest
  // right, so the line is cut at " <number> ms" and the part before it at column 30 (or, when
  // that is not a blank, at the first run of two blanks).
  static const std::regex ms_re(R"(^(.*\S)\s+(-?[0-9.]+(?:[eE][-+]?[0-9]+)?|nan|inf) ms(?: (.*))?$)");
  std::vector<std::pair<Row, std::string>> first_calls;  // row, peer name without " first call..."
  char buf[4096];
  std::string line;
  while (std::fgets(buf, sizeof buf, p)) {
    line += buf;
    if (line.back() != '\n' && !std::feof(p)) continue;
    line = trim(line);
    std::string raw = line;
    line.clear();
    if (raw.empty()) continue;
    std::fprintf(stderr, "  gpu peers: %s\n", raw.c_str());
    std::smatch m;
    if (raw.find("FAILED") != std::string::npos || !std::regex_match(raw, m, ms_re)) {
      notes.push_back(raw.size() > 400 ? raw.substr(0, 400) + "..." : raw);
      continue;
    }
    std::string head = m[1].str(), note = trim(m[3].str());
    double ms = std::strtod(m[2].str().c_str(), nullptr);
    std::string tag, peer;
    if (head.size() > 31 && head[30] == ' ') {
      tag = trim(head.substr(0, 30));
      peer = trim(head.substr(31));
    } else {
      size_t gap = head.find("  ");
      if (gap == std::string::npos) gap = head.find(' ');
      tag = trim(head.substr(0, gap));
      peer = gap == std::string::npos ? "?" : trim(head.substr(gap));
    }
    Row r;
    const Case* c = case_of_tag(tag);
    if (c) {
      r.workload = c->workload;
      r.case_id = c->id;
      r.size = c->size;
      r.dtype = arrayc::dtype_name(c->dtype);
    } else {
      std::stringstream ts(tag);
      ts >> r.workload;
      r.case_id = tag;  // an extra row: the tag names no case (e.g. "P d2d copy 1GiB")
    }
    r.device = device;
    r.variant = "peer";
    r.impl = peer;
    r.check = "not checked by the harness (the peer script's own result)";
    if (!note.empty()) r.check += "; script's note: " + note;
    size_t fc = peer.find(" first call");
    if (fc != std::string::npos) {
      r.first_call_ms = ms;
      first_calls.emplace_back(r, peer.substr(0, fc));
      continue;
    }
    if (std::isfinite(ms)) r.median_ms = ms;
    rows.push_back(r);
  }
  int status = pclose(p);
  std::string err = read_file(err_file.c_str());
  std::remove(err_file.c_str());
  // A first call goes to the row of the same peer ("torch.compile first call (wall)" to
  // "torch.compile (fused)"), else stays a row of its own with only first_call_ms.
  for (auto& [fc, base] : first_calls) {
    auto it = std::find_if(rows.begin(), rows.end(), [&](const Row& r) {
      return r.case_id == fc.case_id && !r.first_call_ms &&
             (r.impl == base || r.impl.rfind(base + " ", 0) == 0);
    });
    if (it != rows.end()) {
      it->first_call_ms = fc.first_call_ms;
    } else {
      // Insert after the last row of its case, to keep the script's grouping.
      auto last = std::find_if(rows.rbegin(), rows.rend(), [&](const Row& r) { return r.case_id == fc.case_id; });
      rows.insert(last == rows.rend() ? rows.end() : last.base(), fc);
    }
  }
  if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
    std::string last;
    std::stringstream es(err);
    for (std::string l; std::getline(es, l);)
      if (!l.empty()) last = l;
    notes.push_back(fmt("python3 %s exited with status %d%s%s", script.c_str(),
                        WIFEXITED(status) ? WEXITSTATUS(status) : -1, last.empty() ? "" : ": ", last.c_str()));
  }
  return rows;
}

// ---- Table ------------------------------------------------------------------------------------------

namespace {

// Times in ms: three decimals, five below 0.1 ms (a cached call on one element takes about a
// microsecond, which "%.3f" would print as 0.001).
std::string num_or_dash(const std::optional<double>& v, const char* f = nullptr) {
  if (!v) return "-";
  return fmt(f ? f : *v < 0.1 ? "%.5f" : "%.3f", *v);
}

}  // namespace

std::string format_table(const std::vector<Row>& rows, const Ceiling& ceiling,
                         const std::vector<std::string>& notes) {
  std::string out;
  out += fmt("ceiling cpu: copy %.1f GB/s (plain stores %.1f, non-temporal %.1f), triad %.1f GB/s (STREAM-like, %d threads, "
             "%.0f MiB arrays, best of %d)\n",
             ceiling.copy_gbps, ceiling.copy_plain_gbps, ceiling.copy_nt_gbps, ceiling.triad_gbps, ceiling.threads,
             ceiling.array_mb, ceiling.best_of);
  for (const GpuCeiling& g : ceiling.gpu) {
    if (g.error.empty())
      out += fmt("ceiling %s: %s (sm_%d, %d SMs, %.0f GiB): device-to-device copy %.0f GB/s best, %.0f GB/s "
                 "median (2 x %.0f MiB, best of %d, read + written, wall time incl. synchronize)\n",
                 g.device.c_str(), g.name.c_str(), g.sm, g.multiprocessors, g.memory_gib, g.copy_gbps,
                 g.median_gbps, g.buffer_mib, g.best_of);
    else
      out += fmt("ceiling %s: not measured: %s\n", g.device.c_str(), g.error.c_str());
  }
  out += "times in ms (GPU: wall time per call, launch + cuda synchronize); cold = first call in a fresh process\n"
         "(trace + compile + run), compile = LLVM time of it; disk 1st = first call in a second fresh process\n"
         "whose disk cache the cold one filled; 2nd = second call (cache hit); rate from the median;\n"
         "%peak: of the ceiling named in the last column (the row's device's copy bandwidth for memory-bound\n"
         "cases; OpenBLAS on the CPU / the fastest cuBLAS peer on a GPU for products)\n\n";
  const char* hdr = "%-11s %-5s %-8s %-26s %10s %10s %10s %10s %9s %9s %9s %4s %15s %6s  %-34s %s\n";
  out += fmt(hdr, "case", "dev", "variant", "impl", "median", "min", "max", "cold 1st", "compile", "disk 1st", "2nd", "kern",
             "rate", "%peak", "ceiling", "status");
  std::string last_case;
  for (const Row& r : rows) {
    if (r.case_id != last_case && !last_case.empty()) out += "\n";
    last_case = r.case_id;
    std::string rate = r.gflops ? fmt("%.2f GFLOP/s", *r.gflops) : r.gbps ? fmt("%.2f GB/s", *r.gbps) : "-";
    std::string impl = r.impl.size() > 26 ? r.impl.substr(0, 26) : r.impl;
    std::string ceil = r.ceiling.empty() ? "-" : r.ceiling.size() > 34 ? r.ceiling.substr(0, 31) + "..." : r.ceiling;
    std::string status = r.status.substr(0, r.status.find('\n'));  // details under "failures"
    if (status.size() > 90) status = status.substr(0, 87) + "...";
    out += fmt(hdr, r.case_id.c_str(), r.device.c_str(), r.variant.c_str(), impl.c_str(),
               num_or_dash(r.median_ms).c_str(), num_or_dash(r.min_ms).c_str(), num_or_dash(r.max_ms).c_str(),
               num_or_dash(r.first_call_ms, "%.1f").c_str(), num_or_dash(r.compile_ms, "%.1f").c_str(),
               num_or_dash(r.disk_first_call_ms, "%.2f").c_str(), num_or_dash(r.second_call_ms).c_str(),
               r.kernels_per_call ? std::to_string(*r.kernels_per_call).c_str() : "-", rate.c_str(),
               r.fraction_of_peak ? fmt("%.1f%%", 100 * *r.fraction_of_peak).c_str() : "-", ceil.c_str(),
               status.c_str());
  }
  // The fused CPU rows that stream memory (64 MiB or more per call) against both copies:
  // STREAM's Copy as benchmarks/peers/stream.c compiles it (plain stores) and the non-temporal copy.
  // First the run's ceiling (best of its copies, measured once before the cases: %peak above),
  // then the copies of the same bytes timed in the same rounds as the row (the "copy" and
  // "copy-nt" variants), median against median: on a machine whose memory speed moves with its
  // neighbours, those saw the same moments as the row.
  std::string both;
  for (const Row& r : rows) {
    if (!(r.device == "cpu" && r.variant == "fused" && r.gbps && r.bytes && *r.bytes >= kCopyVariantBytes &&
          ceiling.copy_plain_gbps > 0 && ceiling.copy_nt_gbps > 0))
      continue;
    both += fmt("  %-11s %.2f GB/s = %.1f%% of the plain-store copy, %.1f%% of the non-temporal copy\n",
                r.case_id.c_str(), *r.gbps, 100 * *r.gbps / ceiling.copy_plain_gbps, 100 * *r.gbps / ceiling.copy_nt_gbps);
    auto same_rounds = [&](const char* variant) -> const Row* {
      for (const Row& b : rows)
        if (b.case_id == r.case_id && b.device == r.device && b.variant == variant && b.gbps) return &b;
      return nullptr;
    };
    const Row *plain = same_rounds("copy"), *nt = same_rounds("copy-nt");
    if (plain && nt)
      both += fmt("  %-11s %.2f GB/s = %.1f%% of the plain-store copy (%.2f GB/s), %.1f%% of the non-temporal copy "
                  "(%.2f GB/s), timed in the same rounds\n",
                  "", *r.gbps, 100 * *r.gbps / *plain->gbps, *plain->gbps, 100 * *r.gbps / *nt->gbps, *nt->gbps);
  }
  if (!both.empty())
    out += "\nfused on the cpu, against each copy (STREAM's Copy compiled as C is the plain-store one):\n" + both;
  // The checks, once per case (from its first arrayc row that passed them), then the failures.
  out += "\nchecks:\n";
  std::vector<std::string> seen;
  for (const Row& r : rows) {
    if (r.variant == "peer" || r.variant == "baseline" || r.variant == "libmvec" || r.check.empty()) continue;
    if (std::find(seen.begin(), seen.end(), r.case_id + r.device) != seen.end()) continue;
    seen.push_back(r.case_id + r.device);
    out += fmt("  %-11s %-5s %s\n", r.case_id.c_str(), r.device.c_str(), r.check.c_str());
  }
  std::string failures;
  for (const Row& r : rows)
    if (r.status.rfind("FAILED", 0) == 0)
      failures += fmt("  %s %s %s (%s): %s\n", r.case_id.c_str(), r.device.c_str(), r.variant.c_str(),
                      r.impl.c_str(), r.status.c_str());
  if (!failures.empty()) out += "\nfailures:\n" + failures;
  if (!notes.empty()) {
    out += "\nnotes:\n";
    for (const std::string& n : notes) out += "  " + n + "\n";
  }
  return out;
}

// ---- JSON ---------------------------------------------------------------------------------------------

void write_json(const std::string& path, const std::vector<Row>& rows, const Ceiling& ceiling,
                const std::map<std::string, std::string>& machine, const std::vector<std::string>& notes,
                const std::string& command, bool quick, int reps) {
  std::filesystem::path p(path);
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path());
  std::ofstream f(path);
  if (!f) throw std::runtime_error("cannot write " + path);
  std::time_t now = std::time(nullptr);
  char when[64];
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  f << "{\n  \"schema\": \"arrayc-bench/1\",\n";
  f << "  \"generated\": " << json_string(when) << ",\n";
  f << "  \"command\": " << json_string(command) << ",\n";
  f << "  \"quick\": " << (quick ? "true" : "false") << ",\n";
  f << "  \"reps\": " << reps << ",\n";
  f << "  \"machine\": {";
  bool first = true;
  for (const auto& [k, v] : machine) {
    f << (first ? "\n" : ",\n") << "    " << json_string(k) << ": " << v;
    first = false;
  }
  f << "\n  },\n";
  f << "  \"ceiling\": {\"copy_gbps\": " << json_number(ceiling.copy_gbps)
    << ", \"copy_plain_gbps\": " << json_number(ceiling.copy_plain_gbps)
    << ", \"copy_nt_gbps\": " << json_number(ceiling.copy_nt_gbps)
    << ", \"triad_gbps\": " << json_number(ceiling.triad_gbps) << ", \"threads\": " << ceiling.threads
    << ", \"array_mib\": " << json_number(ceiling.array_mb) << ", \"best_of\": " << ceiling.best_of
    << ", \"method\": \"STREAM-like copy c=a (the faster of plain and non-temporal stores) and triad a=b+3c over doubles, std::thread, as many as arrayc's pool, "
       "bytes read + written\", \"gpu\": {";
  for (size_t i = 0; i < ceiling.gpu.size(); ++i) {
    const GpuCeiling& g = ceiling.gpu[i];
    f << (i ? ", " : "") << json_string(g.device) << ": {";
    if (g.error.empty())
      f << "\"copy_gbps\": " << json_number(g.copy_gbps) << ", \"median_gbps\": " << json_number(g.median_gbps)
        << ", \"buffer_mib\": " << json_number(g.buffer_mib) << ", \"best_of\": " << g.best_of
        << ", \"name\": " << json_string(g.name) << ", \"sm\": " << g.sm
        << ", \"multiprocessors\": " << g.multiprocessors << ", \"memory_gib\": " << json_number(g.memory_gib)
        << ", \"method\": \"cuda::copy_device of one buffer into another, wall time from before the copy to after "
           "cuda::synchronize, best of best_of; bytes read + written (2 x buffer)\"";
    else
      f << "\"error\": " << json_string(g.error);
    f << "}";
  }
  f << "}},\n";
  f << "  \"notes\": [";
  for (size_t i = 0; i < notes.size(); ++i) f << (i ? ", " : "") << json_string(notes[i]);
  f << "],\n  \"results\": [";
  for (size_t i = 0; i < rows.size(); ++i) {
    f << (i ? ",\n    {" : "\n    {");
    bool first_field = true;
    fields(rows[i], [&](const char* name, const auto& v) {
      f << (first_field ? "" : ", ") << json_string(name) << ": " << ToJson{}(v);
      first_field = false;
    });
    f << "}";
  }
  f << "\n  ]\n}\n";
}

}  // namespace bench
