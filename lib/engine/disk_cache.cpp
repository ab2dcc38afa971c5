#include "engine/disk_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <thread>
#include <vector>

#include "support/env.h"
#include "support/hash.h"
#include "support/stats.h"

namespace arrayc::detail {
namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'A', 'R', 'R', 'A', 'Y', 'C', 'K', '\0'};
constexpr uint32_t kFormatVersion = 1;
constexpr const char* kSuffix = ".ack";

struct Header {
  char magic[8];
  uint32_t version;
  uint32_t reserved;
  uint64_t key_hash, key_length, payload_length, checksum;
};
static_assert(sizeof(Header) == 48, "the entry header is 48 bytes");

uint64_t checksum(const std::string& key, const std::string& payload) {
  return fnv1a(payload.data(), payload.size(), fnv1a(key.data(), key.size()));
}

bool read_file(const std::string& path, std::string& out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st;
  bool ok = ::fstat(fd, &st) == 0;
  if (ok) {
    out.resize(static_cast<size_t>(st.st_size));
    size_t done = 0;
    while (ok && done < out.size()) {
      ssize_t n = ::read(fd, out.data() + done, out.size() - done);
      if (n < 0 && errno == EINTR) continue;
      ok = n > 0;
      if (ok) done += static_cast<size_t>(n);
    }
  }
  ::close(fd);
  return ok;
}

}  // namespace

DiskCache::DiskCache(std::string dir, int64_t max_bytes) : dir_(std::move(dir)), max_bytes_(max_bytes) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  struct stat st;
  if (!fs::is_directory(dir_)) {
    disable("cannot make the directory" + (ec ? " (" + ec.message() + ")" : std::string()));
    return;
  }
  if (::access(dir_.c_str(), R_OK | W_OK | X_OK) != 0) {
    disable("the directory is not writable");
    return;
  }
  if (::stat(dir_.c_str(), &st) == 0 && st.st_uid != ::geteuid()) {
    disable("the directory belongs to another user");
    return;
  }
  writable_ = true;
  bytes_ = usage().bytes;
}

void DiskCache::disable(const std::string& why) {
  bool was = writable_.exchange(false);
  static std::atomic<bool> warned{false};
  if (!warned.exchange(true) || was)
    std::cerr << "arrayc: warning: the disk cache " << dir_ << " is not used (" << why
              << "); compiled code is kept in memory only\n";
}

void DiskCache::warn_bad(const std::string& path, const std::string& why) {
  counters().disk_bad_entries++;
  if (!warned_bad_.exchange(true))
    std::cerr << "arrayc: warning: a bad entry in the disk cache " << dir_
              << " was recompiled and replaced (ARRAYC_DEBUG=1 names each)\n";
  if (debug_level() >= 1) std::cerr << "arrayc: disk cache: " << path << ": " << why << "\n";
  ::unlink(path.c_str());
}

std::string DiskCache::path_of(uint64_t key_hash) const {
  char name[32];
  std::snprintf(name, sizeof name, "%016llx", static_cast<unsigned long long>(key_hash));
  return dir_ + "/" + name + kSuffix;
}

std::optional<std::string> DiskCache::load(const std::string& key) {
  if (dir_.empty()) return std::nullopt;
  uint64_t kh = fnv1a(key.data(), key.size());
  std::string path = path_of(kh);
  std::string file;
  if (!read_file(path, file)) return std::nullopt;  // no entry (or unreadable: a miss)
  Header h;
  if (file.size() < sizeof h) {
    warn_bad(path, "truncated (" + std::to_string(file.size()) + " bytes)");
    return std::nullopt;
  }
  std::memcpy(&h, file.data(), sizeof h);
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) {
    warn_bad(path, "not an arrayc cache entry");
    return std::nullopt;
  }
  if (h.version != kFormatVersion) {
    warn_bad(path, "format version " + std::to_string(h.version) + ", expected " + std::to_string(kFormatVersion));
    return std::nullopt;
  }
  if (h.key_length > file.size() || h.payload_length > file.size() ||
      sizeof h + h.key_length + h.payload_length != file.size()) {
    warn_bad(path, "its lengths do not match its size (truncated?)");
    return std::nullopt;
  }
  std::string stored_key = file.substr(sizeof h, h.key_length);
  std::string payload = file.substr(sizeof h + h.key_length);
  if (h.checksum != checksum(stored_key, payload)) {
    warn_bad(path, "checksum mismatch");
    return std::nullopt;
  }
  if (stored_key != key) return std::nullopt;  // another key of the same file name: a miss (replaced by a store)
  if (h.key_hash != kh) {
    warn_bad(path, "the key's hash does not match the key");
    return std::nullopt;
  }
  ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);  // recently used
  return payload;
}

void DiskCache::store(const std::string& key, const std::string& payload) {
  if (!writable_) return;
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.version = kFormatVersion;
  h.key_hash = fnv1a(key.data(), key.size());
  h.key_length = key.size();
  h.payload_length = payload.size();
  h.checksum = checksum(key, payload);
  std::string file(reinterpret_cast<const char*>(&h), sizeof h);
  file += key;
  file += payload;

  static std::atomic<uint64_t> counter{0};
  std::string tmp = dir_ + "/.tmp-" + std::to_string(::getpid()) + "-" +
                    std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id()) % 1000000) + "-" +
                    std::to_string(counter++);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    disable(std::string("cannot create a file: ") + std::strerror(errno));
    return;
  }
  size_t limit = file.size();
  int64_t fail = fail_after_.exchange(-1);
  if (fail >= 0) limit = std::min(limit, static_cast<size_t>(fail));
  size_t done = 0;
  int err = 0;
  while (done < limit) {
    ssize_t n = ::write(fd, file.data() + done, limit - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      err = n < 0 ? errno : EIO;
      break;
    }
    done += static_cast<size_t>(n);
  }
  if (done < file.size() && err == 0) err = ENOSPC;  // the injected failure
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err != 0) {
    ::unlink(tmp.c_str());
    if (err == ENOSPC || err == EDQUOT) disable(std::string("writing failed: ") + std::strerror(err));
    return;  // otherwise one entry is lost; the binary in memory is unaffected
  }
  if (::rename(tmp.c_str(), path_of(h.key_hash).c_str()) != 0) {
    ::unlink(tmp.c_str());
    return;
  }
  counters().disk_writes++;
  if ((bytes_ += static_cast<int64_t>(file.size())) > max_bytes_) evict();
}

DiskCache::Usage DiskCache::usage() const {
  Usage u;
  std::error_code ec;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() != kSuffix) continue;
    std::error_code sec;
    uintmax_t size = it->file_size(sec);
    if (sec) continue;
    u.entries++;
    u.bytes += static_cast<int64_t>(size);
  }
  return u;
}

void DiskCache::evict() {
  std::lock_guard<std::mutex> lock(evict_mu_);
  struct Entry {
    fs::path path;
    int64_t bytes;
    fs::file_time_type used;
  };
  std::vector<Entry> entries;
  int64_t total = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() != kSuffix) continue;
    std::error_code sec;
    Entry e{it->path(), static_cast<int64_t>(it->file_size(sec)), it->last_write_time(sec)};
    if (sec) continue;
    total += e.bytes;
    entries.push_back(std::move(e));
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.used < b.used; });
  for (const Entry& e : entries) {
    if (total <= max_bytes_ * 9 / 10) break;
    std::error_code rec;
    if (fs::remove(e.path, rec)) {
      total -= e.bytes;
      counters().disk_evictions++;
    }
  }
  bytes_ = total;
}

void DiskCache::clear() {
  std::error_code ec;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == kSuffix) fs::remove(it->path(), ec);
  bytes_ = 0;
}

DiskCache* process_disk_cache() {
  static DiskCache* cache = []() -> DiskCache* {
    if (!cache_setting()) return nullptr;
    return new DiskCache(cache_dir_setting(), cache_max_bytes_setting());
  }();
  return cache;
}

}  // namespace arrayc::detail
