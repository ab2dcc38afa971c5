// The disk cache: compiled code kept across processes, so that a new process runs its first
// call without compiling. The kernel cache (kernel_cache.h) asks it before compiling a unit whose
// backend can store its binary, and stores what it compiles.
//
// An entry is one file, <dir>/<16 hex digits of the key's hash>.ack:
//   magic "ARRAYCK\0", u32 format version, u32 0, u64 key hash, u64 key length, u64 payload
//   length, u64 checksum (FNV-1a over key and payload), then the key and the payload.
// It is verified before use (length, magic, version, the whole key, checksum); a bad entry is
// reported once as a warning (each one under ARRAYC_DEBUG), removed and recompiled. Entries are
// written to a temporary file and renamed into place, so readers never see half an entry and
// many processes and threads may write at once. Hits refresh the entry's time; when the total
// passes the bound, the least recently used entries go until it is under 90% of it.
// A directory that cannot be made or written, or a disk that fills, leaves the cache
// memory-only for the process, with one warning. No fault of the cache is an error.
#pragma once
#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

namespace arrayc::detail {

class DiskCache {
 public:
  DiskCache(std::string dir, int64_t max_bytes);

  bool writable() const { return writable_; }
  const std::string& dir() const { return dir_; }
  int64_t max_bytes() const { return max_bytes_; }

  // The payload stored under key, verified; nullopt when there is none or it is bad.
  std::optional<std::string> load(const std::string& key);
  void store(const std::string& key, const std::string& payload);

  struct Usage {
    int64_t entries = 0, bytes = 0;
  };
  Usage usage() const;
  void clear();  // removes every entry

  // Tests: the next store fails after writing this many bytes of its file (-1: never).
  void fail_next_write_after(int64_t bytes) { fail_after_ = bytes; }

 private:
  std::string path_of(uint64_t key_hash) const;
  void evict();
  void disable(const std::string& why);
  void warn_bad(const std::string& path, const std::string& why);

  std::string dir_;
  int64_t max_bytes_;
  std::atomic<bool> writable_{false};
  std::atomic<int64_t> bytes_{0};  // an estimate, corrected by each eviction's scan
  std::atomic<bool> warned_bad_{false};
  std::atomic<int64_t> fail_after_{-1};
  std::mutex evict_mu_;
};

// The process's disk cache: ARRAYC_CACHE_DIR, else $XDG_CACHE_HOME/arrayc, else
// ~/.cache/arrayc, bounded by ARRAYC_CACHE_MAX_BYTES (default 1 GiB); null when ARRAYC_CACHE=0.
DiskCache* process_disk_cache();

}  // namespace arrayc::detail
