// arrayc/interop.h: .npz files, zips of .npy members as np.savez writes them. The zip is written
// and read here (local headers, CRC-32, central directory, zip64 records; stored members only),
// without a zip library. The reader trusts nothing in the file: every offset and size is checked
// against the file's length before it is used.
#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>

#include "api/npy_format.h"

namespace arrayc {

namespace {

// ---- CRC-32 (zip's: polynomial 0xEDB88320, reflected, inverted), eight bytes a step ------------

struct CrcTables {
  std::array<std::array<uint32_t, 256>, 8> t{};
  CrcTables() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[0][i] = c;
    }
    for (size_t s = 1; s < 8; ++s)
      for (uint32_t i = 0; i < 256; ++i) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xff];
  }
};

// Continues `crc` (0 to start) over `n` bytes.
uint32_t crc32(uint32_t crc, const unsigned char* p, size_t n) {
  static const CrcTables tables;
  const auto& t = tables.t;
  crc = ~crc;
  for (; n >= 8; n -= 8, p += 8) {
    uint32_t lo = (p[0] | p[1] << 8 | p[2] << 16 | static_cast<uint32_t>(p[3]) << 24) ^ crc;
    crc = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^ t[5][(lo >> 16) & 0xff] ^ t[4][lo >> 24] ^ t[3][p[4]] ^
          t[2][p[5]] ^ t[1][p[6]] ^ t[0][p[7]];
  }
  for (; n; --n, ++p) crc = t[0][(crc ^ *p) & 0xff] ^ (crc >> 8);
  return ~crc;
}

// ---- Little-endian fields -------------------------------------------------------------------------

void put16(std::string& s, uint64_t v) {
  for (int i = 0; i < 2; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
}
void put32(std::string& s, uint64_t v) {
  for (int i = 0; i < 4; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
}
void put64(std::string& s, uint64_t v) {
  for (int i = 0; i < 8; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
}
uint64_t get(const unsigned char* p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes; i-- > 0;) v = v << 8 | p[i];
  return v;
}

constexpr uint32_t kLocalSig = 0x04034b50, kCentralSig = 0x02014b50, kEndSig = 0x06054b50;
constexpr uint32_t kEnd64Sig = 0x06064b50, kLocator64Sig = 0x07064b50;
constexpr uint64_t k32 = 0xffffffffu, k16 = 0xffffu;
constexpr uint16_t kDosDate = (0 << 9) | (1 << 5) | 1;  // 1980-01-01, 00:00: reproducible files

// ---- Writing ---------------------------------------------------------------------------------------

struct Written {
  std::string name;
  uint32_t crc;
  uint64_t size, offset;
};

class ZipWriter {
 public:
  explicit ZipWriter(const std::string& path) : path_(path), f_(path, std::ios::binary | std::ios::trunc) {
    if (!f_) fail();
  }

  // One stored member whose bytes are `head` followed by `n` bytes at `data`.
  void add(const std::string& name, const std::string& head, const void* data, size_t n) {
    const auto* d = static_cast<const unsigned char*>(data);
    uint32_t crc = crc32(crc32(0, reinterpret_cast<const unsigned char*>(head.data()), head.size()), d, n);
    uint64_t size = head.size() + n;
    bool zip64 = size >= k32;
    std::string h;
    put32(h, kLocalSig);
    put16(h, zip64 ? 45 : 20);  // version needed: 4.5 for zip64
    put16(h, 0);                // flags
    put16(h, 0);                // stored
    put16(h, 0);                // time
    put16(h, kDosDate);
    put32(h, crc);
    put32(h, zip64 ? k32 : size);
    put32(h, zip64 ? k32 : size);
    put16(h, name.size());
    put16(h, zip64 ? 20 : 0);
    h += name;
    if (zip64) {  // a local zip64 field holds both sizes
      put16(h, 1);
      put16(h, 16);
      put64(h, size);
      put64(h, size);
    }
    members_.push_back({name, crc, size, offset_});
    write(h.data(), h.size());
    write(head.data(), head.size());
    write(d, n);
  }

  void finish() {
    uint64_t cd_offset = offset_;
    for (const Written& m : members_) {
      std::string extra;  // zip64: the fields that do not fit, in this order
      if (m.size >= k32) {
        put64(extra, m.size);
        put64(extra, m.size);
      }
      if (m.offset >= k32) put64(extra, m.offset);
      std::string c;
      put32(c, kCentralSig);
      put16(c, 3 << 8 | 45);  // made by Unix, spec 4.5
      put16(c, extra.empty() ? 20 : 45);
      put16(c, 0);
      put16(c, 0);
      put16(c, 0);
      put16(c, kDosDate);
      put32(c, m.crc);
      put32(c, m.size >= k32 ? k32 : m.size);
      put32(c, m.size >= k32 ? k32 : m.size);
      put16(c, m.name.size());
      put16(c, extra.empty() ? 0 : extra.size() + 4);
      put16(c, 0);              // comment
      put16(c, 0);              // disk
      put16(c, 0);              // internal attributes
      put32(c, 0644u << 16);    // external: a regular file, rw-r--r--
      put32(c, m.offset >= k32 ? k32 : m.offset);
      c += m.name;
      if (!extra.empty()) {
        put16(c, 1);
        put16(c, extra.size());
        c += extra;
      }
      write(c.data(), c.size());
    }
    uint64_t cd_size = offset_ - cd_offset, count = members_.size();
    std::string e;
    if (count >= k16 || cd_size >= k32 || cd_offset >= k32) {
      uint64_t end64 = offset_;
      put32(e, kEnd64Sig);
      put64(e, 44);  // the record's size after this field
      put16(e, 3 << 8 | 45);
      put16(e, 45);
      put32(e, 0);
      put32(e, 0);
      put64(e, count);
      put64(e, count);
      put64(e, cd_size);
      put64(e, cd_offset);
      put32(e, kLocator64Sig);
      put32(e, 0);
      put64(e, end64);
      put32(e, 1);
    }
    put32(e, kEndSig);
    put16(e, 0);
    put16(e, 0);
    put16(e, std::min(count, k16));
    put16(e, std::min(count, k16));
    put32(e, std::min(cd_size, k32));
    put32(e, std::min(cd_offset, k32));
    put16(e, 0);  // comment
    write(e.data(), e.size());
    f_.close();
    if (!f_) fail();
  }

 private:
  void write(const void* p, size_t n) {
    if (n) f_.write(static_cast<const char*>(p), static_cast<std::streamsize>(n));
    if (!f_) fail();
    offset_ += n;
  }
  [[noreturn]] void fail() { throw Error("savez: cannot write '" + path_ + "': " + std::strerror(errno)); }

  std::string path_;
  std::ofstream f_;
  uint64_t offset_ = 0;
  std::vector<Written> members_;
};

// ---- Reading ---------------------------------------------------------------------------------------

struct Member {
  std::string name;
  uint32_t crc = 0;
  uint16_t flags = 0, method = 0;
  uint64_t csize = 0, usize = 0, offset = 0;
};

class ZipReader {
 public:
  ZipReader(const std::string& bytes, const std::string& where)
      : u_(reinterpret_cast<const unsigned char*>(bytes.data())), n_(bytes.size()), where_(where) {}

  std::vector<Member> directory() {
    if (n_ >= 6 && std::memcmp(u_, "\x93NUMPY", 6) == 0) fail("a .npy file, not a .npz (use load_npy)");
    // The end record is the last 22 bytes, or earlier by a comment of at most 65535 bytes.
    if (n_ < 22) fail("not a zip file (" + std::to_string(n_) + " bytes, no end of central directory record)");
    size_t end = n_ - 22;
    for (size_t back = 0;; ++back) {
      if (get(u_ + end, 4) == kEndSig && get(u_ + end + 20, 2) <= n_ - end - 22) break;
      if (end == 0 || back == 65535) fail("not a zip file (no end of central directory record)");
      --end;
    }
    if (get(u_ + end + 4, 2) != 0 || get(u_ + end + 6, 2) != 0) fail("a zip split over several disks");
    uint64_t count = get(u_ + end + 10, 2), cd_size = get(u_ + end + 12, 4), cd_offset = get(u_ + end + 16, 4);
    size_t cd_limit = end;  // the directory ends before the end records
    if (count == k16 || cd_size == k32 || cd_offset == k32) {
      if (end < 20 || get(u_ + end - 20, 4) != kLocator64Sig) fail("a zip64 end record is missing its locator");
      uint64_t at = get(u_ + end - 12, 8);
      if (at > end - 20 || end - 20 - at < 56 || get(u_ + at, 4) != kEnd64Sig)
        fail("the zip64 end of central directory record is not where its locator says (offset " + std::to_string(at) + ")");
      count = get(u_ + at + 32, 8);
      cd_size = get(u_ + at + 40, 8);
      cd_offset = get(u_ + at + 48, 8);
      cd_limit = at;
    }
    if (cd_offset > cd_limit || cd_size > cd_limit - cd_offset)
      fail("the central directory (offset " + std::to_string(cd_offset) + ", " + std::to_string(cd_size) +
           " bytes) lies beyond the file (" + std::to_string(n_) + " bytes)");
    if (count > cd_size / 46)
      fail("the end record counts " + std::to_string(count) + " members, more than its directory of " +
           std::to_string(cd_size) + " bytes can hold");
    std::vector<Member> out;
    size_t p = cd_offset, stop = cd_offset + cd_size;
    for (uint64_t k = 0; k < count; ++k) {
      if (stop - p < 46 || get(u_ + p, 4) != kCentralSig)
        fail("central directory entry " + std::to_string(k) + " is damaged (at offset " + std::to_string(p) + ")");
      Member m;
      m.flags = static_cast<uint16_t>(get(u_ + p + 8, 2));
      m.method = static_cast<uint16_t>(get(u_ + p + 10, 2));
      m.crc = static_cast<uint32_t>(get(u_ + p + 16, 4));
      m.csize = get(u_ + p + 20, 4);
      m.usize = get(u_ + p + 24, 4);
      size_t name_len = get(u_ + p + 28, 2), extra_len = get(u_ + p + 30, 2), comment_len = get(u_ + p + 32, 2);
      m.offset = get(u_ + p + 42, 4);
      if (stop - p - 46 < name_len + extra_len + comment_len)
        fail("central directory entry " + std::to_string(k) + " runs past the directory");
      m.name.assign(reinterpret_cast<const char*>(u_ + p + 46), name_len);
      zip64_fields(m, u_ + p + 46 + name_len, extra_len);
      p += 46 + name_len + extra_len + comment_len;
      out.push_back(std::move(m));
    }
    return out;
  }

  // The stored bytes of `m`, after checking its local header and CRC.
  std::pair<const unsigned char*, size_t> data(const Member& m) {
    std::string who = "member '" + m.name + "'";
    if (m.flags & 1) fail(who + " is encrypted");
    if (m.method != 0)
      fail(who + " is compressed (method " + std::to_string(m.method) +
           (m.method == 8 ? ", deflate, as np.savez_compressed writes" : "") +
           "); arrayc reads stored members only, as np.savez writes them");
    if (m.csize != m.usize)
      fail(who + " is stored but its sizes differ (" + std::to_string(m.csize) + " and " + std::to_string(m.usize) + ")");
    if (m.offset > n_ || n_ - m.offset < 30 || get(u_ + m.offset, 4) != kLocalSig)
      fail(who + ": no local header at offset " + std::to_string(m.offset));
    uint64_t start = m.offset + 30 + get(u_ + m.offset + 26, 2) + get(u_ + m.offset + 28, 2);
    if (start > n_ || m.csize > n_ - start)
      fail(who + " (" + std::to_string(m.csize) + " bytes at offset " + std::to_string(start) + ") lies beyond the file (" +
           std::to_string(n_) + " bytes)");
    const unsigned char* d = u_ + start;
    uint32_t crc = crc32(0, d, m.csize);
    if (crc != m.crc) fail(who + " fails its CRC-32 check (the file is damaged)");
    return {d, m.csize};
  }

  [[noreturn]] void fail(const std::string& problem) const { throw Error(where_ + ": " + problem); }

 private:
  // The zip64 extra field (id 1): 8-byte values for the fields saturated at 0xffffffff, in order.
  void zip64_fields(Member& m, const unsigned char* e, size_t len) const {
    while (len >= 4) {
      size_t id = get(e, 2), sz = get(e + 2, 2);
      if (sz > len - 4) fail("member '" + m.name + "': an extra field runs past its entry");
      if (id == 1) {
        size_t at = 0;
        for (uint64_t* v : {&m.usize, &m.csize, &m.offset}) {
          if (*v != k32) continue;
          if (sz - at < 8) fail("member '" + m.name + "': its zip64 field lacks a size or offset");
          *v = get(e + 4 + at, 8);
          at += 8;
        }
      }
      e += 4 + sz;
      len -= 4 + sz;
    }
  }

  const unsigned char* u_;
  size_t n_;
  const std::string& where_;
};

}  // namespace

void savez(const std::string& path, const std::vector<std::pair<std::string, Array>>& arrays) {
  std::set<std::string> seen;
  for (const auto& [name, a] : arrays) {
    if (name.empty()) throw Error("savez: '" + path + "': an array has an empty name");
    if (name.size() + 4 > k16) throw Error("savez: '" + path + "': a name of " + std::to_string(name.size()) + " bytes is too long for a zip");
    if (!seen.insert(name).second) throw Error("savez: '" + path + "': the name '" + name + "' is given twice");
  }
  // Every array is evaluated before the file is opened: an error leaves no half-written file.
  std::vector<HostView> views;
  for (const auto& [name, a] : arrays) views.push_back(detail::contiguous_host_view(a));
  ZipWriter zip(path);
  for (size_t k = 0; k < arrays.size(); ++k) {
    const HostView& v = views[k];
    zip.add(arrays[k].first + ".npy", detail::npy_header(v.dtype, v.shape), v.data,
            static_cast<size_t>(shape_numel(v.shape)) * dtype_size(v.dtype));
  }
  zip.finish();
}

std::map<std::string, Array> load_npz(const std::string& path) {
  std::string where = "load_npz: '" + path + "'";
  std::string bytes = detail::read_whole_file(path, where);
  ZipReader zip(bytes, where);
  std::map<std::string, Array> out;
  for (const Member& m : zip.directory()) {
    auto [data, size] = zip.data(m);
    std::string name = m.name.size() > 4 && m.name.compare(m.name.size() - 4, 4, ".npy") == 0
                           ? m.name.substr(0, m.name.size() - 4) : m.name;
    if (out.count(name)) zip.fail("the member '" + name + "' occurs twice");
    out.emplace(name, detail::npy_from_bytes(data, size, where + ": member '" + m.name + "'"));
  }
  return out;
}

}  // namespace arrayc
