#include "backend/host/cpu_allocator.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "arrayc/error.h"

namespace arrayc::detail {
namespace {

bool aligned64(const void* p) { return reinterpret_cast<uintptr_t>(p) % 64 == 0; }

TEST(CpuAllocator, BlocksAreAlignedAndWritable) {
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{63}, size_t{64}, size_t{65}, size_t{1000},
                       size_t{4096}, size_t{1} << 20, (size_t{3} << 20) + 7}) {
    void* p = cpu_alloc(bytes);
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(aligned64(p)) << bytes;
    std::memset(p, 0xab, bytes);
    cpu_free(p, bytes);
  }
}

TEST(CpuAllocator, ZeroBytesGivesUniquePointers) {
  void* a = cpu_alloc(0);
  void* b = cpu_alloc(0);
  EXPECT_NE(a, nullptr);
  EXPECT_NE(a, b);
  cpu_free(a, 0);
  cpu_free(b, 0);
  cpu_free(nullptr, 100);  // ignored
}

TEST(CpuAllocator, FreedBlocksAreReused) {
  for (size_t bytes : {size_t{100}, size_t{5000}, size_t{8} << 20}) {
    void* first = cpu_alloc(bytes);
    cpu_free(first, bytes);
    CpuAllocStats before = cpu_alloc_stats();
    for (int i = 0; i < 10; ++i) {
      void* p = cpu_alloc(bytes);
      EXPECT_EQ(p, first);  // the one cached block of this class comes back
      cpu_free(p, bytes);
    }
    CpuAllocStats after = cpu_alloc_stats();
    EXPECT_EQ(after.allocs - before.allocs, 10);
    EXPECT_EQ(after.cache_hits - before.cache_hits, 10);
  }
}

TEST(CpuAllocator, NearbySizesShareAClass) {
  void* p = cpu_alloc(1000000);
  cpu_free(p, 1000000);
  CpuAllocStats before = cpu_alloc_stats();
  void* q = cpu_alloc(1000100);  // within the same quarter-power-of-two step
  EXPECT_EQ(cpu_alloc_stats().cache_hits - before.cache_hits, 1);
  cpu_free(q, 1000100);
}

// A mapped request whose class is empty takes a cached block up to twice its size (memory a
// longer call already touched), and freeing it puts it back under its own class.
TEST(CpuAllocator, AShorterRequestReusesALargerCachedBlock) {
  cpu_release_cached();
  const size_t big = size_t{4} << 20, half = size_t{2} << 20, quarter = size_t{1} << 20;
  void* p = cpu_alloc(big);
  std::memset(p, 1, big);
  cpu_free(p, big);
  CpuAllocStats before = cpu_alloc_stats();
  void* q = cpu_alloc(half);
  EXPECT_EQ(q, p);
  EXPECT_EQ(cpu_alloc_stats().bytes_in_use - before.bytes_in_use, static_cast<int64_t>(big));
  void* r = cpu_alloc(quarter);  // nothing cached within 2x: a new block
  EXPECT_NE(r, p);
  cpu_free(q, half);
  EXPECT_EQ(cpu_alloc_stats().bytes_in_use, before.bytes_in_use + static_cast<int64_t>(quarter));
  void* s = cpu_alloc(big);  // back under its own class: the full-size request finds it
  EXPECT_EQ(s, p);
  cpu_free(s, big);
  cpu_free(r, quarter);
  EXPECT_EQ(cpu_alloc_stats().bytes_in_use, before.bytes_in_use);
  void* t = cpu_alloc(quarter / 2);  // below 1 MiB: only its own class
  EXPECT_NE(t, p);
  cpu_free(t, quarter / 2);
}

TEST(CpuAllocator, StatsTrackUseAndRelease) {
  cpu_release_cached();
  EXPECT_EQ(cpu_alloc_stats().bytes_cached, 0);
  int64_t in_use = cpu_alloc_stats().bytes_in_use;
  void* p = cpu_alloc(3000);
  EXPECT_GE(cpu_alloc_stats().bytes_in_use - in_use, 3000);
  EXPECT_LE(cpu_alloc_stats().bytes_in_use - in_use, 3000 * 5 / 4);
  cpu_free(p, 3000);
  EXPECT_EQ(cpu_alloc_stats().bytes_in_use, in_use);
  EXPECT_GE(cpu_alloc_stats().bytes_cached, 3000);
  cpu_release_cached();
  EXPECT_EQ(cpu_alloc_stats().bytes_cached, 0);
}

TEST(CpuAllocator, OutOfMemoryThrowsError) {
  try {
    cpu_alloc(size_t{1} << 60);
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "cpu: out of memory allocating 1152921504606846976 bytes");
  }
}

TEST(CpuAllocator, ConcurrentUseKeepsBlocksApart) {
  auto worker = [](unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<size_t> size(0, 70000);
    struct Block {
      unsigned char* p;
      size_t bytes;
      unsigned char tag;
    };
    std::vector<Block> live;
    for (int i = 0; i < 3000; ++i) {
      if (live.size() < 16 && (rng() % 2 == 0 || live.empty())) {
        size_t bytes = size(rng);
        auto tag = static_cast<unsigned char>(rng());
        auto* p = static_cast<unsigned char*>(cpu_alloc(bytes));
        ASSERT_TRUE(aligned64(p));
        std::memset(p, tag, bytes);
        live.push_back({p, bytes, tag});
      } else {
        size_t k = rng() % live.size();
        Block b = live[k];
        for (size_t j = 0; j < b.bytes; j += 61) ASSERT_EQ(b.p[j], b.tag);
        cpu_free(b.p, b.bytes);
        live[k] = live.back();
        live.pop_back();
      }
    }
    for (const Block& b : live) cpu_free(b.p, b.bytes);
  };
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < 4; ++t) threads.emplace_back(worker, t + 1);
  for (std::thread& t : threads) t.join();
}

}  // namespace
}  // namespace arrayc::detail
