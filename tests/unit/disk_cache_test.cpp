// The disk cache: entries round-trip; every kind of bad entry is a miss, reported, removed and
// replaced; a directory that cannot be used and a write that fails leave the cache memory-only
// or the entry unwritten, never an error; the size bound evicts the least recently used; many
// processes and threads write at once and every entry read back is whole; and end to end, a
// kernel compiled by one process is loaded, not compiled, by the next, with the same result.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <cmath>
#include <thread>

#include <llvm/Config/llvm-config.h>

#include "arrayc/arrayc.h"
#include "backend/cuda/cuda_backend.h"
#include "support/devices.h"
#include "engine/disk_cache.h"
#include "engine/kernel_cache.h"
#include "support/stats.h"

namespace arrayc::detail {
namespace {

namespace fs = std::filesystem;

// The only entry's file in a cache directory.
std::string only_entry(const std::string& dir) {
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".ack") return e.path();
  return "";
}

class DiskCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "arrayc-disk-cache-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string entry_file() const { return only_entry(dir_); }
  std::string dir_;
};

TEST_F(DiskCacheTest, AnEntryRoundTrips) {
  DiskCache c(dir_, 1 << 20);
  ASSERT_TRUE(c.writable());
  EXPECT_FALSE(c.load("key one").has_value());
  c.store("key one", std::string("payload\0with a zero", 19));
  std::optional<std::string> got = c.load("key one");
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(*got, std::string("payload\0with a zero", 19));
  EXPECT_FALSE(c.load("key two").has_value());
  EXPECT_EQ(c.usage().entries, 1);
}

// Each corruption of a stored entry: a miss, counted, the file removed; a new store works.
TEST_F(DiskCacheTest, BadEntriesAreMissesAndAreReplaced) {
  struct Fault {
    const char* what;
    std::function<void(std::string&)> apply;
  };
  const std::vector<Fault> faults = {
      {"a flipped payload byte", [](std::string& f) { f[f.size() - 3] ^= 0x10; }},
      {"a flipped key byte", [](std::string& f) { f[50] ^= 0x01; }},
      {"a flipped header byte", [](std::string& f) { f[20] ^= 0x40; }},
      {"truncated", [](std::string& f) { f.resize(f.size() / 2); }},
      {"truncated header", [](std::string& f) { f.resize(20); }},
      {"zero length", [](std::string& f) { f.clear(); }},
      {"another format version", [](std::string& f) { f[8] = 7; }},
      {"not an entry", [](std::string& f) { f = "#!/bin/sh\necho hello\n" + f; }},
  };
  for (const Fault& fault : faults) {
    SCOPED_TRACE(fault.what);
    DiskCache c(dir_, 1 << 20);
    c.store("the key", "the payload, long enough to flip");
    std::string path = entry_file();
    ASSERT_FALSE(path.empty());
    std::string bytes;
    {
      std::ifstream in(path, std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    fault.apply(bytes);
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    int64_t bad = counters().disk_bad_entries;
    EXPECT_FALSE(c.load("the key").has_value());
    EXPECT_EQ(counters().disk_bad_entries, bad + 1);
    EXPECT_FALSE(fs::exists(path));
    c.store("the key", "the payload, long enough to flip");
    EXPECT_EQ(c.load("the key").value_or(""), "the payload, long enough to flip");
    fs::remove_all(dir_);
  }
}

TEST_F(DiskCacheTest, ADirectoryThatCannotBeMadeLeavesTheCacheMemoryOnly) {
  testing::internal::CaptureStderr();
  DiskCache c("/proc/arrayc-no-such-dir/cache", 1 << 20);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(c.writable());
  c.store("k", "v");  // nothing happens
  EXPECT_FALSE(c.load("k").has_value());
  EXPECT_NE(err.find("is not used (cannot make the directory"), std::string::npos) << err;
}

TEST_F(DiskCacheTest, AFileInPlaceOfTheDirectoryLeavesTheCacheMemoryOnly) {
  std::ofstream(dir_) << "a file";
  testing::internal::CaptureStderr();
  DiskCache c(dir_, 1 << 20);
  testing::internal::GetCapturedStderr();
  EXPECT_FALSE(c.writable());
  fs::remove(dir_);
}

TEST_F(DiskCacheTest, AWriteThatFailsPartwayLeavesNoEntryAndNoTemporaryFile) {
  DiskCache c(dir_, 1 << 20);
  testing::internal::CaptureStderr();
  c.fail_next_write_after(30);
  c.store("k", "a payload that will not be written whole");
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(c.load("k").has_value());
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir_)) files += e.is_regular_file();
  EXPECT_EQ(files, 0);
  EXPECT_NE(err.find("writing failed"), std::string::npos) << err;  // a full disk: memory-only from here
  EXPECT_FALSE(c.writable());
}

TEST_F(DiskCacheTest, TheSizeBoundEvictsTheLeastRecentlyUsed) {
  const std::string payload(1000, 'p');
  DiskCache c(dir_, 3500);  // three entries of about 1.05 KB fit
  int64_t evictions = counters().disk_evictions;
  c.store("a", payload);
  c.store("b", payload);
  c.store("c", payload);
  // Make "a" the oldest and "b" the most recent by their times, then use "a".
  auto now = fs::file_time_type::clock::now();
  for (const auto& e : fs::directory_iterator(dir_)) fs::last_write_time(e.path(), now - std::chrono::hours(2));
  ASSERT_TRUE(c.load("a").has_value());  // refreshes "a"
  c.store("d", payload);                 // over the bound: the oldest go ("b" and "c" are older than "a")
  EXPECT_LE(c.usage().bytes, 3500 * 9 / 10);
  EXPECT_TRUE(c.load("a").has_value());
  EXPECT_TRUE(c.load("d").has_value());
  EXPECT_GT(counters().disk_evictions, evictions);
}

// 8 processes x 4 threads store the same and different keys into an empty cache at once; each
// then reads every key back whole (or not at all, had it been evicted: the bound is large here).
TEST_F(DiskCacheTest, ManyProcessesAndThreadsWriteAtOnce) {
  auto payload = [](int k) { return std::string(2000 + 37 * k, static_cast<char>('a' + k % 26)); };
  std::vector<pid_t> children;
  for (int p = 0; p < 8; ++p) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      DiskCache c(dir_, 1 << 26);
      std::atomic<int> bad{0};
      std::vector<std::thread> threads;
      for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
          for (int i = 0; i < 20; ++i) {
            int k = (i % 2 == 0) ? i : 100 + p * 4 + t;  // shared keys and own keys
            c.store("key " + std::to_string(k), payload(k));
            std::optional<std::string> got = c.load("key " + std::to_string(k));
            if (!got || *got != payload(k)) bad++;
          }
        });
      for (auto& th : threads) th.join();
      std::_Exit(bad.load() == 0 ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a child read a bad entry";
  }
  DiskCache c(dir_, 1 << 26);
  for (int k = 0; k < 20; k += 2) EXPECT_EQ(c.load("key " + std::to_string(k)).value_or(""), payload(k));
  for (const auto& e : fs::directory_iterator(dir_)) EXPECT_EQ(e.path().extension(), ".ack") << e.path();
}

TEST(DiskCacheKey, EveryComponentChangesTheKey) {
  CompileUnit u;
  u.target = "cpu";
  u.options = "fast=0 stream=0";
  u.text = "kernel k rank=1\n";
  u.disk_target = "x86_64-pc-linux-gnu znver4 +avx512f LLVM 19.1.7";
  std::string base = cache_key_across_processes(u);
  EXPECT_EQ(base.rfind("arrayc ", 0), 0u) << base;  // the library's build id first
  for (std::string CompileUnit::*field : {&CompileUnit::target, &CompileUnit::options, &CompileUnit::text}) {
    CompileUnit v = u;
    v.*field += "x";
    EXPECT_NE(cache_key_across_processes(v), base);
  }
  CompileUnit v = u;
  v.disk_target = "x86_64-pc-linux-gnu znver4 +avx512f LLVM 19.1.8";
  EXPECT_NE(cache_key_across_processes(v), base);
}

// A GPU cubin's key names the driver that compiled it and everything that made its PTX; a
// change of any of them is a miss.
TEST(DiskCacheKey, TheGpuTargetNamesTheDriverArchitecturePtxIsaLlvmAndLibdevice) {
  std::string t = gpu_disk_target(13000, 90);
  EXPECT_EQ(t.rfind("cuda driver 13000 nvptx64-nvidia-cuda sm_90 +ptx80 LLVM " LLVM_VERSION_STRING " libdevice ", 0), 0u)
      << t;
  EXPECT_NE(gpu_disk_target(13010, 90), t);
  EXPECT_NE(gpu_disk_target(13000, 89), t);
  EXPECT_NE(gpu_disk_target(13000, 80).find("sm_80 +ptx75"), std::string::npos);
}

// The child of the test below: in a new process (a fresh kernel cache) with the disk cache on in
// $DISK_CACHE_CHILD_DIR, computes a kernel no other test makes on $DISK_CACHE_CHILD_DEVICE ("cpu"
// or "gpu") and exits with 10 * disk hits + compiles, or 99 when the result or
// disk_cache_info() is wrong. With $DISK_CACHE_CHILD_CLEAR it empties the cache before exiting.
// Skipped unless $DISK_CACHE_CHILD_DIR is set.
TEST(DiskCacheChild, ComputeAndExit) {
  const char* dir = std::getenv("DISK_CACHE_CHILD_DIR");
  if (!dir) GTEST_SKIP() << "runs only as the child of DiskCacheProcesses.ANewProcessLoadsWhatAnEarlierOneCompiled";
  setenv("ARRAYC_CACHE", "1", 1);
  setenv("ARRAYC_CACHE_DIR", dir, 1);
  const char* dev = std::getenv("DISK_CACHE_CHILD_DEVICE");
  set_default_device(dev && std::string(dev) == "gpu" ? gpu(0) : cpu());
  reset_stats();
  Array x = arange(1000, DType::Float32);
  std::vector<float> y = (exp(x * 0.00123f) - 0.5f).to_vector<float>();
  bool ok = std::abs(y[999] - (std::exp(999 * 0.00123f) - 0.5f)) < 1e-4f;
  Stats s = stats();
  DiskCacheInfo info = disk_cache_info();
  ok = ok && info.enabled && info.writable && info.dir == dir && info.entries == 1 && info.bytes > 0;
  if (std::getenv("DISK_CACHE_CHILD_CLEAR")) {
    clear_disk_cache();
    ok = ok && disk_cache_info().entries == 0;
  }
  std::_Exit(ok ? static_cast<int>(10 * s.disk_hits + s.compiles) : 99);
}

// On each device: the CPU stores relocatable objects, a GPU cubins.
class DiskCacheProcesses : public arrayc_test::DeviceTest {
 protected:
  void SetUp() override {
    DeviceTest::SetUp();
    dir_ = ::testing::TempDir() + "arrayc-disk-cache-" + std::to_string(::getpid()) + "-" + device().str();
    fs::remove_all(dir_);
  }
  void TearDown() override {
    fs::remove_all(dir_);
    fs::remove(dir_ + ".log");  // the children's output (ANewProcessLoadsWhatAnEarlierOneCompiled)
    DeviceTest::TearDown();
  }
  std::string entry_file() const { return only_entry(dir_); }
  std::string dir_;
};

TEST_P(DiskCacheProcesses, ANewProcessLoadsWhatAnEarlierOneCompiled) {
  std::string log = dir_ + ".log";
  auto child = [&](const char* extra = "") {
    // Not sharded: the child runs its one test whatever shard the parent is (GTEST_SHARD_*).
    std::string cmd = std::string("env -u GTEST_TOTAL_SHARDS -u GTEST_SHARD_INDEX ") + extra + " DISK_CACHE_CHILD_DEVICE=" + (on_gpu() ? "gpu" : "cpu") + " DISK_CACHE_CHILD_DIR='" +
                      dir_ + "' /proc/" + std::to_string(::getpid()) + "/exe --gtest_filter=DiskCacheChild.ComputeAndExit >'" +
                      log + "' 2>&1";
    int status = std::system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  auto log_text = [&] {
    std::ifstream in(log);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  EXPECT_EQ(child(), 1) << log_text();   // compiled and stored
  EXPECT_EQ(child(), 10) << log_text();  // loaded, not compiled
  // A corrupt entry: recompiled (with one warning), replaced, and loaded by the next process.
  std::string path = entry_file();
  ASSERT_FALSE(path.empty());
  {
    std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(-5, std::ios::end);
    f.put('\x7f');
  }
  EXPECT_EQ(child(), 1) << log_text();
  EXPECT_NE(log_text().find("a bad entry in the disk cache " + dir_ + " was recompiled"), std::string::npos)
      << log_text();
  EXPECT_EQ(child(), 10) << log_text();
  // Cleared (arrayc::clear_disk_cache): the next process compiles again.
  EXPECT_EQ(child("DISK_CACHE_CHILD_CLEAR=1"), 10) << log_text();
  EXPECT_EQ(child(), 1) << log_text();
}

ARRAYC_DEVICE_SUITE(DiskCacheProcesses);

}  // namespace
}  // namespace arrayc::detail
