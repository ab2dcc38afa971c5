// libFuzzer target for the whole arrayc tool below its line editor: the parser, the evaluator,
// the builtins, def (with recursion), :load (with files that load each other and themselves) and
// every : command, running real computations through libarrayc. Any input must end with results
// or reported errors: never a crash, a hang, an abort or an uncaught exception.
//
// Built and run by tests/repl/run_fuzz_session.sh. Three guards keep one input's cost bounded the
// way a user's Ctrl-C and a machine's memory do, so that what libFuzzer reports is a real fault:
//   - a watchdog calls arrayc::interrupt() when one input has run for 2 s (the REPL's Ctrl-C);
//   - the address space is limited (RLIMIT_AS), so a huge array must fail as an arrayc::Error;
//   - the inputs run in a scratch directory holding the files that :load and load() may name.
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "session.h"

namespace {

std::atomic<int64_t> g_started_ns{0};  // when the current input began; 0 between inputs

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void watchdog() {
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    int64_t t = g_started_ns.load();
    if (t != 0 && now_ns() - t > 2'000'000'000) arrayc::interrupt();
  }
}

void write(const std::filesystem::path& p, const std::string& text) { std::ofstream(p) << text; }

std::filesystem::path g_scratch;  // removed at exit

struct Settings {  // what the REPL's : commands change, as the process started
  arrayc::Device device = arrayc::cpu();
  bool fusion = true, fast_math = false;
  arrayc::MatmulPrecision precision = arrayc::MatmulPrecision::Highest;
} g_initial;
void remove_scratch() {
  std::error_code ec;
  std::filesystem::remove_all(g_scratch, ec);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Scratch directory: files the dictionary's :load and load() lines name. Under $TMPDIR
  // (run_fuzz_session.sh points it into its work directory), removed when the process exits.
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("arrayc-fuzz-session-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  g_scratch = dir;
  std::atexit(remove_scratch);
  write(dir / "self.ac", ":load self.ac\n");
  write(dir / "a.ac", "x = arange(4.0)\n:load b.ac\n");
  write(dir / "b.ac", "y = x * 2\n:load a.ac\n");
  write(dir / "ok.ac", "def f(x) = sin(x) * 2\nz = f(arange(8.0))\n");
  write(dir / "bad.ac", "q = 1 +\n");
  std::filesystem::current_path(dir);
  // No disk cache: inputs must not fill the user's cache directory.
  ::setenv("ARRAYC_CACHE", "0", 1);
  // 16 GiB of address space: enough for LLVM and the thread pool, far less than the largest
  // arrays an input can ask for.
  const char* as = std::getenv("ARRAYC_FUZZ_AS_GIB");
  rlim_t gib = as ? std::strtoull(as, nullptr, 10) : 16;
  struct rlimit rl{gib << 30, gib << 30};
  if (gib > 0) ::setrlimit(RLIMIT_AS, &rl);
  g_initial = {arrayc::default_device(), arrayc::fusion_enabled(), arrayc::fast_math_enabled(),
               arrayc::matmul_precision()};
  std::thread(watchdog).detach();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string src(reinterpret_cast<const char*>(data), size);
  std::ostringstream out, err;
  arrayc::tool::Options opts;
  opts.out = &out;
  opts.err = &err;
  // Each input starts as a new REPL does: the settings a `:` command changes are global to the
  // library, and one input's `:device gpu0` made every later input run on the GPU.
  arrayc::set_default_device(g_initial.device);
  arrayc::set_fusion(g_initial.fusion);
  arrayc::set_fast_math(g_initial.fast_math);
  arrayc::set_matmul_precision(g_initial.precision);
  g_started_ns = now_ns();
  {
    arrayc::tool::Session session(opts);
    session.run_source(std::move(src), "<fuzz>", /*keep_going=*/true);
  }
  g_started_ns = 0;
  return 0;
}
