// .npy files, wrapped host memory and host views (issue 28): round trips for every dtype, files
// as numpy writes them (versions 1.0/2.0/3.0, Fortran order, big-endian), bad and truncated
// files, and the deleter of wrapped memory.
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>

#include "support/data.h"
#include "support/devices.h"
#include "support/errors.h"
#include "support/reference.h"

namespace {

using namespace arrayc;
using namespace arrayc_test;

class Interop : public DeviceTest {
 protected:
  // A scratch file of this test, removed when the test ends, failed or not.
  std::string path(const std::string& name) {
    std::string p = ::testing::TempDir() + "arrayc_interop_" + std::to_string(getpid()) + "_" + name;
    paths_.push_back(p);
    return p;
  }
  void TearDown() override {
    for (const std::string& p : paths_) std::remove(p.c_str());
    DeviceTest::TearDown();
  }
  std::vector<std::string> paths_;
};
ARRAYC_DEVICE_SUITE(Interop);

std::string read_file(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}
void write_file(const std::string& p, const std::string& bytes) {
  std::remove(p.c_str());  // a truncating rewrite makes ext4 flush the old data to disk: slow
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A .npy file as numpy writes it: the preamble, the dict padded to 64 bytes, the data.
std::string npy(const std::string& dict, const std::string& data, int major = 1) {
  size_t pre = major == 1 ? 10 : 12;
  std::string h = dict;
  size_t total = (pre + h.size() + 1 + 63) / 64 * 64;
  h.append(total - pre - h.size() - 1, ' ');
  h += '\n';
  std::string out = std::string("\x93NUMPY", 6) + static_cast<char>(major) + '\0';
  for (size_t i = 0; i < (major == 1 ? 2u : 4u); ++i) out += static_cast<char>((h.size() >> (8 * i)) & 0xff);
  return out + h + data;
}
template <typename T> std::string raw(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

TEST_P(Interop, SaveLoadRoundTripEveryDtype) {
  for (DType t : kAllDTypes)
    for (const Shape& s : {Shape{}, Shape{0}, Shape{7}, Shape{3, 4}, Shape{2, 0, 3}, Shape{2, 3, 4}}) {
      SCOPED_TRACE(dt(t) + " " + shape_str(s));
      Array x = random_array(t, s, 5, -100, 100);
      std::string p = path("rt.npy");
      save_npy(p, x);
      Array y = load_npy(p);
      EXPECT_EQ(y.dtype(), t);
      EXPECT_EQ(y.shape(), s);
      EXPECT_EQ(y.device(), cpu());
      EXPECT_EQ(y.to_vector<double>(), x.to_vector<double>());
      std::string bytes = read_file(p);
      EXPECT_EQ(bytes.size() % 64, (shape_numel(s) * dtype_size(t)) % 64);  // header padded to 64
      std::remove(p.c_str());
    }
}

TEST_P(Interop, SavesViewsAndExpressions) {
  Array m = random_array(DType::Float32, {4, 6}, 7);
  std::string p = path("view.npy");
  save_npy(p, transpose(m) * 2.0f);
  Array y = load_npy(p);
  EXPECT_EQ(y.shape(), (Shape{6, 4}));
  EXPECT_EQ(y.to_vector<float>(), (transpose(m) * 2.0f).to_vector<float>());
  std::string bytes = read_file(p);
  EXPECT_NE(bytes.find("{'descr': '<f4', 'fortran_order': False, 'shape': (6, 4), }"), std::string::npos);
  save_npy(p, full({3}, 1.0, DType::Bool));
  EXPECT_NE(read_file(p).find("'descr': '|b1'"), std::string::npos);
  EXPECT_NE(read_file(p).find("'shape': (3,)"), std::string::npos);
  save_npy(p, full({}, 1.0, DType::Int64));
  EXPECT_NE(read_file(p).find("'shape': ()"), std::string::npos);
  std::remove(p.c_str());
}

TEST_P(Interop, LoadsWhatNumpyWrites) {
  std::string p = path("np.npy");
  std::vector<float> v = {1, 2, 3, 4, 5, 6};
  // Fortran order: element [i, j] at i + 2 * j. A view, no copy.
  write_file(p, npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", raw(v)));
  EXPECT_EQ(load_npy(p).to_vector<float>(), (std::vector<float>{1, 3, 5, 2, 4, 6}));
  // Versions 2.0 and 3.0, double quotes, no trailing comma.
  write_file(p, npy("{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (6,)}", raw(v), 2));
  EXPECT_EQ(load_npy(p).to_vector<float>(), v);
  write_file(p, npy("{'descr':'<f4','fortran_order':False,'shape':(3,2)}", raw(v), 3));
  EXPECT_EQ(load_npy(p).shape(), (Shape{3, 2}));
  // Big-endian.
  std::string be;
  for (int32_t x : {1, -2, 300}) {
    uint32_t u = static_cast<uint32_t>(x);
    for (int b = 3; b >= 0; --b) be += static_cast<char>((u >> (8 * b)) & 0xff);
  }
  write_file(p, npy("{'descr': '>i4', 'fortran_order': False, 'shape': (3,), }", be));
  EXPECT_EQ(load_npy(p).to_vector<int32_t>(), (std::vector<int32_t>{1, -2, 300}));
  // Extra bytes after the data are ignored, as numpy does.
  write_file(p, npy("{'descr': '<i8', 'fortran_order': False, 'shape': (), }", raw(std::vector<int64_t>{42}) + "xx"));
  EXPECT_EQ(load_npy(p).item<int64_t>(), 42);
  // A loaded array computes on any device.
  Array y = load_npy(p).to(device());
  EXPECT_EQ((y + 1).item<int64_t>(), 43);
  std::remove(p.c_str());
}

TEST_P(Interop, BadFilesRaiseNamingTheFileAndTheProblem) {
  std::string p = path("bad.npy");
  std::vector<float> v = {1, 2, 3};
  auto check = [&](const std::string& bytes, const std::string& problem) {
    write_file(p, bytes);
    EXPECT_ARRAYC_ERROR(load_npy(p), "load_npy", p, problem);
  };
  check("", "not a .npy file");
  check("PK\x03\x04 a zip file", "not a .npy file");
  check(std::string("\x93NUMPY\x07\x00", 8) + "xx", "format version 7.0");
  check(std::string("\x93NUMPY\x01\x00\xff\x7f", 10) + "{'descr'", "truncated header");
  check(npy("{'descr': '<c8', 'fortran_order': False, 'shape': (3,), }", raw(v)), "dtype '<c8'");
  check(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", raw(v)), "truncated data");
  check(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-3,), }", raw(v)), "not a non-negative integer");
  check(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", raw(v)), "too large");
  check(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", raw(v)), "too many");
  check(npy("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (3,), }", raw(v)), "fortran_order");
  check(npy("{'descr': '<f4', 'shape': (3,), }", raw(v)), "lacks one of");
  check(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'x': 1}", raw(v)), "unknown key 'x'");
  check(npy("{'descr': '<f4 'fortran_order': False}", raw(v)), "does not parse");
  check(npy("['descr']", raw(v)), "does not parse");
  std::remove(p.c_str());
  EXPECT_ARRAYC_ERROR(load_npy(path("missing.npy")), "load_npy", "missing.npy", "cannot open");
  EXPECT_ARRAYC_ERROR(save_npy("/nonexistent-dir/x.npy", zeros({2})), "save_npy", "/nonexistent-dir/x.npy", "cannot write");
}

// Truncations and random corruptions of a valid file: every one loads or raises arrayc::Error.
TEST_P(Interop, FuzzedFilesNeverCrash) {
  if (on_gpu()) GTEST_SKIP() << "host files only";
  std::string good = npy("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", raw(std::vector<double>(6, 1.5)));
  std::string p = path("fuzz.npy");
  std::mt19937 rng(1234);
  int loaded = 0, raised = 0;
  for (size_t cut = 0; cut <= good.size(); ++cut) {
    write_file(p, good.substr(0, cut));
    try {
      load_npy(p);
      ++loaded;
    } catch (const Error&) {
      ++raised;
    }
  }
  EXPECT_EQ(loaded, 1);  // only the whole file
  for (int trial = 0; trial < 2000; ++trial) {
    std::string bad = good;
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) bad[rng() % 128] = static_cast<char>(rng() & 0xff);
    write_file(p, bad);
    try {
      Array a = load_npy(p);
      (void)a.to_vector<double>();
      ++loaded;
    } catch (const Error&) {
      ++raised;
    }
  }
  EXPECT_GT(raised, 0);
  std::remove(p.c_str());
}

TEST_P(Interop, WrapsHostMemoryWithoutACopyAndCallsTheDeleterOnce) {
  if (on_gpu()) GTEST_SKIP() << "host memory";
  auto* data = new float[12];
  for (int i = 0; i < 12; ++i) data[i] = static_cast<float>(i);
  int deleted = 0;
  {
    Array a = from_host_memory(data, DType::Float32, {3, 4}, {}, [&deleted](void* p) {
      ++deleted;
      delete[] static_cast<float*>(p);
    });
    HostView v = host_view(a);
    EXPECT_EQ(v.data, data);  // no copy
    Array b = a * 2.0f;
    Array col = from_host_memory(data + 1, DType::Float32, {3}, {4});  // strides in elements
    EXPECT_EQ(col.to_vector<float>(), (std::vector<float>{1, 5, 9}));
    EXPECT_EQ(sum(a).item<float>(), 66.0f);
    a = Array();
    EXPECT_EQ(deleted, 0);  // b's graph still reads it
    EXPECT_EQ(b.to_vector<float>()[11], 22.0f);
    b = Array();
  }
  EXPECT_EQ(deleted, 1);
  // A transposed wrap, and an empty one.
  std::vector<int64_t> buf = {1, 2, 3, 4, 5, 6};
  Array t = from_host_memory(buf.data(), DType::Int64, {3, 2}, {1, 3});
  EXPECT_EQ(t.to_vector<int64_t>(), (std::vector<int64_t>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(from_host_memory(nullptr, DType::Float64, {0, 3}).size(), 0);
  EXPECT_ARRAYC_ERROR(from_host_memory(buf.data(), DType::Int64, {3, 2}, {1}), "from_host_memory", "1 strides", "[3, 2]");
  EXPECT_ARRAYC_ERROR(from_host_memory(buf.data(), DType::Int64, {3}, {-1}), "from_host_memory", "negative stride");
  EXPECT_ARRAYC_ERROR(from_host_memory(nullptr, DType::Int64, {3}), "from_host_memory", "null data");
  EXPECT_ARRAYC_ERROR(from_host_memory(buf.data(), DType::Int64, {-3}), "from_host_memory", "negative extent");
  EXPECT_ARRAYC_ERROR(from_host_memory(buf.data(), DType::Int64, {int64_t{1} << 62, 4}, {4, 1}), "from_host_memory", "spans more than");
}

TEST_P(Interop, HostViewOfEvaluatedArrays) {
  Array x = random_array(DType::Float64, {3, 5}, 9);
  if (on_gpu()) {
    EXPECT_ARRAYC_ERROR(host_view(x), "host_view", "gpu:0", ".to(cpu())");
    x = x.to(cpu());
  }
  HostView v = host_view(transpose(x));
  EXPECT_EQ(v.shape, (Shape{5, 3}));
  EXPECT_EQ(v.strides, (std::vector<int64_t>{1, 5}));  // a view, in elements
  EXPECT_FALSE(v.contiguous());
  std::vector<double> want = x.to_vector<double>();
  EXPECT_EQ(static_cast<const double*>(v.data)[1 * 1 + 2 * 5], want[2 * 5 + 1]);
  HostView e = host_view(x + 1.0);
  EXPECT_TRUE(e.contiguous());
  EXPECT_EQ(static_cast<const double*>(e.data)[4], want[4] + 1.0);
}

}  // namespace
