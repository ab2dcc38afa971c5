// arrayc-difftest: the random differential tester's long run (tests/difftest/difftest.h).
//
//   arrayc-difftest [--seed S] [--count N] [--start K] [--device cpu|gpu] [--keep-going] [--no-shrink] [--print] [--seconds T]
//
// Program k (K <= k < K + N) comes from seed S and k alone, so `--seed S --start k --count 1`
// replays one. A failing program (a wrong value, an error the reference does not raise, a crash
// or a hang: still running after 600 s of wall time) is printed, then shrunk to a small
// reproducer (C++ on the public API),
// and the run stops with exit status 1 (with --keep-going, it goes on and exits 1 at the end).
// --print prints every program before it runs; --seconds T starts no program after T seconds. Exit 0 when every program passed or was rejected by the API with an arrayc::Error.
//
// The programs run in a child process, so that a crash ends only that child: the parent (which
// builds graphs but never evaluates, so it starts no thread and no device) reports the program
// that was running, shrinks it by running each candidate in a child of its own, and continues
// after it.
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "difftest/difftest.h"

namespace {

using arrayc_difftest::Program;

constexpr unsigned kHangSeconds = 600;  // a program still running after this long is a hang

// What the child running the programs shares with the parent.
struct Shared {
  uint64_t current = 0;  // the program running now
  uint64_t passed = 0, rejected = 0, failed = 0;
};

struct Options {
  uint64_t seed = 1, count = 100, start = 0;
  double seconds = 0;  // stop starting programs after this long (0: no limit)
  bool keep_going = false, shrink = true, print = false;
  std::string device = "cpu";
};

// Built directly: arrayc::gpu() would start the driver in the parent, which forks.
arrayc::Device device_of(const Options& o) {
  return o.device == "gpu" ? arrayc::Device{arrayc::Device::Kind::GPU, 0} : arrayc::cpu();
}

std::string header(const Options& o, uint64_t k) {
  return "// arrayc-difftest --seed " + std::to_string(o.seed) + " --start " + std::to_string(k) +
         " --count 1 --device " + o.device + "\n";
}

// Runs f in a child process; whether it died of a signal (a crash, or SIGALRM after `seconds`).
bool crashes_in_child(const std::function<void()>& f, unsigned seconds) {
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    alarm(seconds);
    f();
    std::fflush(stdout);
    _exit(0);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  return WIFSIGNALED(st);
}

void quiet() {
  if (FILE* f = std::freopen("/dev/null", "w", stderr)) (void)f;
}

std::chrono::steady_clock::time_point g_start = std::chrono::steady_clock::now();
bool past_deadline(const Options& o) {
  return o.seconds > 0 && std::chrono::duration<double>(std::chrono::steady_clock::now() - g_start).count() > o.seconds;
}

// The child: runs programs from k on, counting in `sh`; exits 1 after a failure unless keep_going.
[[noreturn]] void run_programs(const Options& o, uint64_t k, Shared* sh) {
  arrayc::Device dev = device_of(o);
  using Clock = std::chrono::steady_clock;
  auto t0 = Clock::now();
  for (; k < o.start + o.count; ++k) {
    if (past_deadline(o)) break;
    sh->current = k;
    alarm(kHangSeconds);
    Program p = arrayc_difftest::generate(arrayc_difftest::program_seed(o.seed, k));
    if (o.print) std::printf("%s%s", header(o, k).c_str(), arrayc_difftest::to_cpp(p, dev).c_str());
    arrayc_difftest::Outcome r = arrayc_difftest::check(p, dev);
    if (r.status == arrayc_difftest::Status::Pass) {
      ++sh->passed;
    } else if (r.status == arrayc_difftest::Status::Rejected) {
      ++sh->rejected;
    } else {
      ++sh->failed;
      std::printf("FAIL %s%s\n%s\n", header(o, k).c_str(), arrayc_difftest::to_cpp(p, dev).c_str(), r.message.c_str());
      if (o.shrink) {
        alarm(0);
        Program small = arrayc_difftest::shrink(p, [&](const Program& q) {
          return arrayc_difftest::check(q, dev).status == arrayc_difftest::Status::Fail;
        });
        std::printf("shrunk to %zu instructions:\n%s%s\n", small.instrs.size(), arrayc_difftest::to_cpp(small, dev).c_str(),
                    arrayc_difftest::check(small, dev).message.c_str());
      }
      std::fflush(stdout);
      if (!o.keep_going) _exit(1);
    }
    uint64_t done = sh->passed + sh->rejected + sh->failed;
    if (done % 1000 == 0)
      std::fprintf(stderr, "%llu programs (%llu passed, %llu rejected, %llu failed), %.0f s and %lld compiles in this process\n",
                   static_cast<unsigned long long>(done), static_cast<unsigned long long>(sh->passed),
                   static_cast<unsigned long long>(sh->rejected), static_cast<unsigned long long>(sh->failed),
                   std::chrono::duration<double>(Clock::now() - t0).count(), static_cast<long long>(arrayc::stats().compiles));
  }
  std::fflush(stdout);
  _exit(0);
}

// Program k crashed (or hung) the child: print it, and a shrunk version that still crashes. All
// of it runs in a child of its own (building the program, interpreting candidates), so that the
// parent only forks and waits.
void report_crash(const Options& o, uint64_t k, int sig) {
  std::string what = sig == SIGALRM ? "a hang: still running after " + std::to_string(kHangSeconds) + " s" : strsignal(sig);
  bool died = crashes_in_child([&] {
    arrayc::Device dev = device_of(o);
    Program p = arrayc_difftest::generate(arrayc_difftest::program_seed(o.seed, k));
    std::printf("FAIL %s%s\nthe process died of signal %d (%s)\n", header(o, k).c_str(), arrayc_difftest::to_cpp(p, dev).c_str(),
                sig, what.c_str());
    if (!o.shrink) return;
    auto crashes = [&](const Program& q) {
      return crashes_in_child([&] { quiet(); (void)arrayc_difftest::check(q, dev); }, kHangSeconds);
    };
    if (!crashes(p)) {
      std::printf("(it does not crash again when run alone: not shrunk)\n");
      return;
    }
    Program small = arrayc_difftest::shrink(p, crashes);
    std::printf("shrunk to %zu instructions (it crashes too):\n%s", small.instrs.size(), arrayc_difftest::to_cpp(small, dev).c_str());
  }, 3600);
  if (died)
    std::printf("FAIL %s(program %llu died of signal %d (%s); reporting it crashed too)\n", header(o, k).c_str(),
                static_cast<unsigned long long>(k), sig, what.c_str());
}

int usage() {
  std::fprintf(stderr, "usage: arrayc-difftest [--seed S] [--count N] [--start K] [--device cpu|gpu] [--keep-going] [--no-shrink] [--print] [--seconds T]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int k = 1; k < argc; ++k) {
    std::string a = argv[k];
    auto next = [&]() -> const char* { return k + 1 < argc ? argv[++k] : nullptr; };
    const char* v = nullptr;
    if (a == "--seed" && (v = next())) o.seed = std::strtoull(v, nullptr, 10);
    else if (a == "--count" && (v = next())) o.count = std::strtoull(v, nullptr, 10);
    else if (a == "--start" && (v = next())) o.start = std::strtoull(v, nullptr, 10);
    else if (a == "--device" && (v = next())) o.device = v;
    else if (a == "--keep-going") o.keep_going = true;
    else if (a == "--no-shrink") o.shrink = false;
    else if (a == "--print") o.print = true;
    else if (a == "--seconds" && (v = next())) o.seconds = std::strtod(v, nullptr);
    else return usage();
  }
  if (o.device != "cpu" && o.device != "gpu") return usage();
  setenv("ARRAYC_CACHE", "0", 0);
  auto* sh = static_cast<Shared*>(mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  if (sh == MAP_FAILED) return 2;
  *sh = Shared{};
  auto t0 = std::chrono::steady_clock::now();
  int status = 0;
  for (uint64_t k = o.start; k < o.start + o.count;) {
    std::fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) run_programs(o, k, sh);
    int st = 0;
    waitpid(pid, &st, 0);
    if (WIFEXITED(st)) {
      if (WEXITSTATUS(st) != 0) status = 1;
      break;  // the child ran to the end, or stopped at a failure
    }
    // Killed by a signal while running program sh->current.
    status = 1;
    ++sh->failed;
    report_crash(o, sh->current, WTERMSIG(st));
    if (!o.keep_going || past_deadline(o)) break;
    k = sh->current + 1;
  }
  if (sh->failed) status = 1;  // a wrong value under --keep-going: the child ran to its end, exit 0
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("arrayc-difftest: seed %llu, device %s: %llu programs: %llu passed, %llu rejected by the API, %llu failed (%.1f s)\n",
              static_cast<unsigned long long>(o.seed), o.device.c_str(),
              static_cast<unsigned long long>(sh->passed + sh->rejected + sh->failed), static_cast<unsigned long long>(sh->passed),
              static_cast<unsigned long long>(sh->rejected), static_cast<unsigned long long>(sh->failed), s);
  return status;
}
