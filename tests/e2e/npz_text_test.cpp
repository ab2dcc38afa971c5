// .npz files (savez, load_npz) and text files (loadtxt), numpy's formats: round trips for every
// dtype, zips laid out as Python's zipfile writes them for np.savez (zip64 local headers), damaged
// and hostile zips (truncated, bad CRC, offsets and sizes beyond the file, huge counts) that must
// raise arrayc::Error and never crash, and loadtxt's parsing rules and errors. Files numpy itself
// writes and reads are checked by tests/repl/numpy_files.py (skipped without numpy).
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <random>

#include "support/data.h"
#include "support/devices.h"
#include "support/errors.h"
#include "support/reference.h"

namespace {

using namespace arrayc;
using namespace arrayc_test;

class NpzText : public DeviceTest {
 protected:
  std::string path(const std::string& name) const {
    return ::testing::TempDir() + "arrayc_npz_" + std::to_string(getpid()) + "_" + name;
  }
};
ARRAYC_DEVICE_SUITE(NpzText);

std::string read_file(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}
void write_file(const std::string& p, const std::string& bytes) {
  std::remove(p.c_str());
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A bit-at-a-time CRC-32, independent of the library's table-driven one.
uint32_t slow_crc32(const std::string& s) {
  uint32_t c = 0xffffffffu;
  for (unsigned char b : s) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1)));
  }
  return ~c;
}

void le(std::string& s, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
}
uint64_t get_le(const std::string& s, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = bytes; i-- > 0;) v = v << 8 | static_cast<unsigned char>(s[at + i]);
  return v;
}

// A .npy image: preamble, dict padded to 64, data.
std::string npy(const std::string& dict, const std::string& data) {
  std::string h = dict;
  size_t total = (10 + h.size() + 1 + 63) / 64 * 64;
  h.append(total - 10 - h.size() - 1, ' ');
  h += '\n';
  std::string out = std::string("\x93NUMPY\x01\x00", 8);
  le(out, h.size(), 2);
  return out + h + data;
}
template <typename T> std::string raw(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

// A zip of stored members as Python's zipfile writes np.savez's: with `zip64_local`, each local
// header has 0xffffffff sizes and a zip64 field with the real ones (force_zip64=True), the central
// directory the plain 32-bit sizes; `zip64_end` adds zip64 end records with saturated plain ones.
struct ZipMember {
  std::string name, data;
  uint16_t method = 0, flags = 0;
};
std::string make_zip(const std::vector<ZipMember>& members, bool zip64_local = true, bool zip64_end = false,
                     const std::string& comment = "") {
  std::string out, cd;
  for (const ZipMember& m : members) {
    uint64_t offset = out.size();
    uint32_t crc = slow_crc32(m.data);
    le(out, 0x04034b50, 4);
    le(out, zip64_local ? 45 : 20, 2);
    le(out, m.flags, 2);
    le(out, m.method, 2);
    le(out, 0, 4);  // time, date
    le(out, crc, 4);
    le(out, zip64_local ? 0xffffffffu : m.data.size(), 4);
    le(out, zip64_local ? 0xffffffffu : m.data.size(), 4);
    le(out, m.name.size(), 2);
    le(out, zip64_local ? 20 : 0, 2);
    out += m.name;
    if (zip64_local) {
      le(out, 1, 2);
      le(out, 16, 2);
      le(out, m.data.size(), 8);
      le(out, m.data.size(), 8);
    }
    out += m.data;
    le(cd, 0x02014b50, 4);
    le(cd, 45, 2);
    le(cd, 45, 2);
    le(cd, m.flags, 2);
    le(cd, m.method, 2);
    le(cd, 0, 4);
    le(cd, crc, 4);
    le(cd, m.data.size(), 4);
    le(cd, m.data.size(), 4);
    le(cd, m.name.size(), 2);
    le(cd, 0, 2);
    le(cd, 0, 2);
    le(cd, 0, 2);
    le(cd, 0, 2);
    le(cd, 0, 4);
    le(cd, offset, 4);
    cd += m.name;
  }
  uint64_t cd_offset = out.size();
  out += cd;
  if (zip64_end) {
    uint64_t at = out.size();
    le(out, 0x06064b50, 4);
    le(out, 44, 8);
    le(out, 45, 2);
    le(out, 45, 2);
    le(out, 0, 8);
    le(out, members.size(), 8);
    le(out, members.size(), 8);
    le(out, cd.size(), 8);
    le(out, cd_offset, 8);
    le(out, 0x07064b50, 4);
    le(out, 0, 4);
    le(out, at, 8);
    le(out, 1, 4);
  }
  le(out, 0x06054b50, 4);
  le(out, 0, 4);
  le(out, zip64_end ? 0xffff : members.size(), 2);
  le(out, zip64_end ? 0xffff : members.size(), 2);
  le(out, zip64_end ? 0xffffffffu : cd.size(), 4);
  le(out, zip64_end ? 0xffffffffu : cd_offset, 4);
  le(out, comment.size(), 2);
  return out + comment;
}

const std::string kF4 = npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", raw(std::vector<float>{1, 2, 3}));
const std::string kI8 = npy("{'descr': '<i8', 'fortran_order': False, 'shape': (2, 2), }",
                            raw(std::vector<int64_t>{1, -2, 3, INT64_MIN}));

// ---- savez / load_npz ------------------------------------------------------------------------------

TEST_P(NpzText, SavezLoadRoundTripEveryDtype) {
  std::string p = path("rt.npz");
  std::vector<std::pair<std::string, Array>> arrays;
  int k = 0;
  for (DType t : kAllDTypes)
    for (const Shape& s : {Shape{}, Shape{0}, Shape{7}, Shape{3, 4}, Shape{2, 0, 3}})
      arrays.emplace_back(std::string(dtype_name(t)) + "_" + std::to_string(k++),
                          random_array(t, s, 11 + k, -100, 100).to(device()));
  savez(p, arrays);
  std::map<std::string, Array> back = load_npz(p);
  ASSERT_EQ(back.size(), arrays.size());
  for (const auto& [name, x] : arrays) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(back.count(name));
    const Array& y = back.at(name);
    EXPECT_EQ(y.dtype(), x.dtype());
    EXPECT_EQ(y.shape(), x.shape());
    EXPECT_EQ(y.device(), cpu());
    EXPECT_EQ(y.to_vector<double>(), x.to_vector<double>());
  }
  std::remove(p.c_str());
}

TEST_P(NpzText, SavezWritesAZipOfNpyMembersInOrder) {
  std::string p = path("layout.npz");
  Array m = random_array(DType::Float32, {4, 6}, 3).to(device());
  // A view and an expression are evaluated and written in C order.
  savez(p, {{"zeta", transpose(m) * 2.0f}, {"alpha", full({2}, 1.0, DType::Bool)}});
  std::string z = read_file(p);
  ASSERT_GE(z.size(), 22u);
  EXPECT_EQ(z.substr(0, 4), "PK\x03\x04");
  // The first member, "zeta.npy", stored: its CRC field is the CRC of its bytes.
  size_t name_len = get_le(z, 26, 2), extra_len = get_le(z, 28, 2), size = get_le(z, 18, 4);
  EXPECT_EQ(get_le(z, 8, 2), 0u);  // stored
  EXPECT_EQ(z.substr(30, name_len), "zeta.npy");
  std::string data = z.substr(30 + name_len + extra_len, size);
  EXPECT_EQ(get_le(z, 14, 4), slow_crc32(data));
  EXPECT_EQ(data.substr(0, 6), "\x93NUMPY");
  EXPECT_NE(data.find("'shape': (6, 4)"), std::string::npos);
  // The end record counts two members.
  EXPECT_EQ(get_le(z, z.size() - 22, 4), 0x06054b50u);
  EXPECT_EQ(get_le(z, z.size() - 12, 2), 2u);
  auto back = load_npz(p);
  EXPECT_EQ(back.at("zeta").to_vector<float>(), (transpose(m) * 2.0f).to_vector<float>());
  EXPECT_EQ(back.at("alpha").to_vector<bool>(), (std::vector<bool>{true, true}));
  // The same arrays give the same bytes (fixed member times).
  savez(p, {{"zeta", transpose(m) * 2.0f}, {"alpha", full({2}, 1.0, DType::Bool)}});
  EXPECT_EQ(read_file(p), z);
  // No arrays: an empty zip, which loads as no members.
  savez(p, {});
  EXPECT_EQ(read_file(p).size(), 22u);
  EXPECT_TRUE(load_npz(p).empty());
  std::remove(p.c_str());
}

TEST_P(NpzText, LoadedMembersComputeLikeTheReference) {
  std::string p = path("ref.npz");
  Array a = random_array(DType::Float32, {5, 7}, 21), b = random_array(DType::Float16, {7}, 22);
  savez(p, {{"a", a}, {"b", b}});
  auto z = load_npz(p);
  Array y = exp(z.at("a").to(device())) * z.at("b").to(device()) + 1.0f;
  expect_matches_reference(y);
  EXPECT_EQ(z.at("a").to_vector<float>(), a.to_vector<float>());
  std::remove(p.c_str());
}

TEST_P(NpzText, ReadsZipsAsPythonsZipfileWritesThem) {
  if (on_gpu()) GTEST_SKIP() << "host files only";
  std::string p = path("py.npz");
  for (bool zip64_local : {true, false})
    for (bool zip64_end : {false, true}) {
      SCOPED_TRACE(std::to_string(zip64_local) + std::to_string(zip64_end));
      write_file(p, make_zip({{"x.npy", kF4}, {"y.npy", kI8}, {"dir/z.npy", kF4}}, zip64_local, zip64_end, "a comment"));
      auto z = load_npz(p);
      ASSERT_EQ(z.size(), 3u);
      EXPECT_EQ(z.at("x").to_vector<float>(), (std::vector<float>{1, 2, 3}));
      EXPECT_EQ(z.at("y").shape(), (Shape{2, 2}));
      EXPECT_EQ(z.at("y").to_vector<int64_t>(), (std::vector<int64_t>{1, -2, 3, INT64_MIN}));
      EXPECT_EQ(z.at("dir/z").size(), 3);
    }
  std::remove(p.c_str());
}

TEST_P(NpzText, BadNpzRaisesNamingTheFileAndTheProblem) {
  if (on_gpu()) GTEST_SKIP() << "host files only";
  std::string p = path("bad.npz");
  auto check = [&](const std::string& bytes, const std::vector<std::string>& problem) {
    write_file(p, bytes);
    std::vector<std::string> parts = {"load_npz", p};
    parts.insert(parts.end(), problem.begin(), problem.end());
    EXPECT_TRUE(raises_error([&] { load_npz(p); }, parts));
  };
  std::string good = make_zip({{"x.npy", kF4}});
  check("", {"not a zip file (0 bytes"});
  check(kF4, {"a .npy file, not a .npz (use load_npy)"});
  check(std::string(100, 'x'), {"no end of central directory record"});
  // A flipped byte of the data: the CRC catches it.
  std::string bad = good;
  bad[30 + 5 + 20 + 66] ^= 1;  // the local header, the name, the zip64 field, the .npy
  check(bad, {"member 'x.npy' fails its CRC-32 check"});
  // The central directory's fields, at cd + k.
  size_t cd = get_le(good, good.size() - 6, 4);
  auto patched = [&](size_t at, uint64_t v, int bytes) {
    std::string s = good;
    for (int i = 0; i < bytes; ++i) s[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
    return s;
  };
  check(patched(cd + 42, 1000000, 4), {"member 'x.npy': no local header at offset 1000000"});
  check(patched(cd + 42, 3, 4), {"no local header at offset 3"});
  check(patched(cd + 20, 0x7fffffff, 4), {"sizes differ"});
  std::string huge = patched(cd + 20, 0x7fffffff, 4);
  for (int i = 0; i < 4; ++i) huge[cd + 24 + i] = huge[cd + 20 + i];
  check(huge, {"member 'x.npy' (2147483647 bytes at offset", "lies beyond the file"});
  check(patched(cd + 10, 8, 2), {"member 'x.npy' is compressed (method 8, deflate, as np.savez_compressed writes)"});
  check(patched(cd + 8, 1, 2), {"member 'x.npy' is encrypted"});
  check(patched(cd + 28, 60000, 2), {"central directory entry 0 runs past the directory"});
  check(patched(cd, 0, 4), {"central directory entry 0 is damaged"});
  // The end record's fields.
  size_t end = good.size() - 22;
  check(patched(end + 10, 5000, 2), {"counts 5000 members, more than its directory of 51 bytes can hold"});
  check(patched(end + 16, 0xfffffff0u, 4), {"the central directory (offset 4294967280, 51 bytes) lies beyond the file"});
  check(patched(end + 12, 0x7fffffff, 4), {"lies beyond the file"});
  check(patched(end + 4, 1, 2), {"split over several disks"});
  check(patched(end + 16, 0xffffffffu, 4), {"a zip64 end record is missing its locator"});
  std::string z64 = make_zip({{"x.npy", kF4}}, true, true);
  size_t loc = z64.size() - 22 - 20;
  std::string z64bad = z64;
  z64bad[loc + 8] = 'x';
  write_file(p, z64bad);
  EXPECT_ARRAYC_ERROR(load_npz(p), "load_npz", p, "the zip64 end of central directory record is not where its locator says");
  // Members: not a .npy, a damaged .npy (named), a name twice.
  check(make_zip({{"notes.txt", "hello"}}), {"member 'notes.txt': not a .npy file"});
  check(make_zip({{"x.npy", kF4.substr(0, kF4.size() - 2)}}), {"member 'x.npy': truncated data"});
  check(make_zip({{"x.npy", kF4}, {"x.npy", kI8}}), {"the member 'x' occurs twice"});
  std::remove(p.c_str());
  EXPECT_ARRAYC_ERROR(load_npz(path("missing.npz")), "load_npz", "missing.npz", "cannot open");
}

// Every truncation and many random corruptions of valid .npz files (with and without zip64
// records): each loads or raises arrayc::Error; nothing crashes, hangs or allocates wildly.
TEST_P(NpzText, CorruptedNpzNeverCrashes) {
  if (on_gpu()) GTEST_SKIP() << "host files only";
  std::string p = path("fuzz.npz");
  std::mt19937 rng(4321);
  int loaded = 0, raised = 0;
  for (bool zip64 : {false, true}) {
    std::string good = make_zip({{"a.npy", kF4}, {"b.npy", kI8}}, zip64, zip64);
    for (size_t cut = 0; cut < good.size(); ++cut) {
      write_file(p, good.substr(0, cut));
      try {
        load_npz(p);
        ++loaded;
      } catch (const Error&) {
        ++raised;
      }
    }
    for (int trial = 0; trial < 1500; ++trial) {
      std::string bad = good;
      int flips = 1 + static_cast<int>(rng() % 4);
      for (int f = 0; f < flips; ++f) {
        size_t at = rng() % bad.size();
        // Half the flips hit the directory and end records, where the offsets and sizes are.
        if (rng() % 2) at = bad.size() - 1 - rng() % std::min<size_t>(bad.size(), 160);
        uint32_t r = rng();
        bad[at] = static_cast<char>(r % 3 == 0 ? 0xff : r % 3 == 1 ? 0 : r >> 8);
      }
      write_file(p, bad);
      try {
        for (const auto& [name, a] : load_npz(p)) (void)a.to_vector<double>();
        ++loaded;
      } catch (const Error&) {
        ++raised;
      }
    }
  }
  EXPECT_GT(raised, 1000);
  EXPECT_GT(loaded, 0);  // flips of fields the reader does not use (times, versions)
  std::remove(p.c_str());
}

TEST_P(NpzText, SavezErrors) {
  Array x = zeros({2});
  std::string p = path("err.npz");
  EXPECT_ARRAYC_ERROR(savez(p, {{"a", x}, {"a", x}}), "savez", p, "the name 'a' is given twice");
  EXPECT_ARRAYC_ERROR(savez(p, {{"", x}}), "savez", p, "an array has an empty name");
  EXPECT_ARRAYC_ERROR(savez(p, {{std::string(70000, 'n'), x}}), "savez", p, "a name of 70000 bytes is too long for a zip");
  EXPECT_ARRAYC_ERROR(savez("/nonexistent-dir/x.npz", {{"a", x}}), "savez", "/nonexistent-dir/x.npz", "cannot write");
  // A load_npy of a .npz says what it is.
  savez(p, {{"a", x}});
  EXPECT_ARRAYC_ERROR(load_npy(p), "load_npy", p, "not a .npy file", "use load_npz");
  std::remove(p.c_str());
}

// ---- loadtxt ---------------------------------------------------------------------------------------

TEST_P(NpzText, LoadtxtReadsColumnsAsNumpy) {
  if (on_gpu()) GTEST_SKIP() << "host files only";
  std::string p = path("t.txt");
  auto load = [&](const std::string& text, DType t = DType::Float64, const std::string& delim = "", int64_t skip = 0,
                  const std::vector<int64_t>& cols = {}, const std::string& comments = "#") {
    write_file(p, text);
    return loadtxt(p, t, delim, skip, cols, comments);
  };
  Array a = load("# header\n1 2 3\n\n  4\t5   6  # trailing\r\n");
  EXPECT_EQ(a.dtype(), DType::Float64);
  EXPECT_EQ(a.device(), cpu());
  EXPECT_EQ(a.shape(), (Shape{2, 3}));
  EXPECT_EQ(a.to_vector<double>(), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  // Squeezed as numpy's ndmin=0: one column or one row is 1-D, one value 0-D, nothing [0].
  EXPECT_EQ(load("1\n2\n3\n").shape(), (Shape{3}));
  EXPECT_EQ(load("1 2 3").shape(), (Shape{3}));
  EXPECT_EQ(load("5").shape(), (Shape{}));
  EXPECT_EQ(load("").shape(), (Shape{0}));
  EXPECT_EQ(load("# only a comment\n\n", DType::Int32).dtype(), DType::Int32);
  // Float syntax: signs, exponents, inf, nan, overflow to inf, underflow to zero, -0.
  std::vector<double> v = load("+1 -2.5e3 inf -Infinity 1e400 1e-400 -0 .5").to_vector<double>();
  EXPECT_EQ(v, (std::vector<double>{1, -2500, INFINITY, -INFINITY, INFINITY, 0, 0, 0.5}));
  EXPECT_TRUE(std::signbit(v[6]));
  EXPECT_TRUE(std::isnan(load("nan").item<double>()));
  EXPECT_EQ(load("0.1").item<double>(), 0.1);  // correctly rounded
  // A delimiter: fields may have spaces around them; a line with no text is skipped.
  EXPECT_EQ(load("1, 2 ,3\n\n4,5,6", DType::Float64, ",").to_vector<double>(), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  // skiprows counts lines, whatever they hold; usecols picks and orders columns, negative from the end.
  EXPECT_EQ(load("a b c\n1 2 3\n4 5 6", DType::Float64, "", 1, {2, 0}).to_vector<double>(),
            (std::vector<double>{3, 1, 6, 4}));
  EXPECT_EQ(load("1;2;3\n4;5\n", DType::Float64, ";", 0, {-1}).to_vector<double>(), (std::vector<double>{3, 5}));
  EXPECT_EQ(load("1 2\n3 4", DType::Float64, "", 0, {0, 0}).shape(), (Shape{2, 2}));
  // Other comment markers, none at all.
  EXPECT_EQ(load("1 2 // x\n// 3\n", DType::Float64, "", 0, {}, "//").shape(), (Shape{2}));
  EXPECT_EQ(load("7", DType::Float64, "", 0, {}, "").item<double>(), 7);
  // Integer dtypes take integers in their range; bool takes integers (nonzero: true).
  EXPECT_EQ(load("-128 127", DType::Int8).to_vector<int64_t>(), (std::vector<int64_t>{-128, 127}));
  EXPECT_EQ(load("18446744073709551615", DType::UInt64).item<uint64_t>(), UINT64_MAX);
  EXPECT_EQ(load("-9223372036854775808", DType::Int64).item<int64_t>(), INT64_MIN);
  EXPECT_EQ(load("1 0 -3", DType::Bool).to_vector<bool>(), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(load("0.1 65520", DType::Float16).to_vector<double>(), (std::vector<double>{0.0999755859375, INFINITY}));
  EXPECT_EQ(load("16777217", DType::Float32).item<float>(), 16777216.0f);
  std::remove(p.c_str());
}

TEST_P(NpzText, LoadtxtMatchesTheReference) {
  std::string p = path("ref.txt");
  std::string text;
  std::mt19937 rng(7);
  std::vector<double> want;
  for (int r = 0; r < 20; ++r) {
    for (int c = 0; c < 4; ++c) {
      double x = std::ldexp(static_cast<double>(rng()) - 2147483648.0, -static_cast<int>(rng() % 40));
      want.push_back(x);
      char buf[40];
      std::snprintf(buf, sizeof buf, "%.17g", x);
      text += std::string(c ? "," : "") + buf;
    }
    text += "\n";
  }
  write_file(p, text);
  for (DType t : {DType::Float64, DType::Float32, DType::Float16, DType::BFloat16}) {
    Array a = loadtxt(p, t, ",");
    EXPECT_EQ(a.shape(), (Shape{20, 4}));
    EXPECT_EQ(a.to_vector<double>(), cast(array<double>(want, {20, 4}), t).to_vector<double>());
    expect_matches_reference(sqrt(abs(a.to(device()))) + 1.0);
  }
  std::remove(p.c_str());
}

TEST_P(NpzText, LoadtxtErrorsNameTheFileLineAndColumn) {
  std::string p = path("bad.txt");
  auto check = [&](const std::string& text, const std::vector<std::string>& problem, DType t = DType::Float64,
                   const std::string& delim = "", int64_t skip = 0, const std::vector<int64_t>& cols = {},
                   const std::string& comments = "#") {
    write_file(p, text);
    std::vector<std::string> parts = {"loadtxt", p};
    parts.insert(parts.end(), problem.begin(), problem.end());
    EXPECT_TRUE(raises_error([&] { loadtxt(p, t, delim, skip, cols, comments); }, parts));
  };
  check("1 2 3\n4 x 6", {"line 2, column 2: could not convert 'x' to float64"});
  check("1,2,\n", {"line 1, column 3: could not convert '' to float64"}, DType::Float64, ",");
  check("# c\n1 2 3\n4 5\n", {"line 3 has 2 columns, the first row has 3 (use usecols to read a subset)"});
  check("1,2\n  \n3,4", {"line 2 has 1 columns, the first row has 2"}, DType::Float64, ",");
  check("1 2 3\n4 5\n", {"line 2 has 2 columns, no column 2 of usecols"}, DType::Float64, "", 0, {2});
  check("1 2\n", {"line 1 has 2 columns, no column -3 of usecols"}, DType::Float64, "", 0, {-3});
  check("1.5", {"line 1, column 1: could not convert '1.5' to int32 (an integer in its range)"}, DType::Int32);
  check("300", {"could not convert '300' to int8 (an integer in its range)"}, DType::Int8);
  check("-1", {"could not convert '-1' to uint64"}, DType::UInt64);
  check("2 true", {"line 1, column 2: could not convert 'true' to bool (an integer, nonzero is true)"}, DType::Bool);
  check("--1", {"line 1, column 1: could not convert '--1' to float64"});
  check("1", {"delimiter 'ab' must be one character"}, DType::Float64, "ab");
  check("1", {"comments '#,' must not contain the delimiter ','"}, DType::Float64, ",", 0, {}, "#,");
  check("1", {"skiprows -1 must not be negative"}, DType::Float64, "", -1);
  EXPECT_ARRAYC_ERROR(loadtxt(path("missing.txt")), "loadtxt", "missing.txt", "cannot open");
  std::remove(p.c_str());
}

}  // namespace
