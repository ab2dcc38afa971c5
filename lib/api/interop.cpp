// arrayc/interop.h: .npy files, wrapped host memory, host views.
#include "arrayc/interop.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string_view>

#include "api/npy_format.h"
#include "backend/backend.h"
#include "ir/build.h"

namespace arrayc {

using detail::NodeRef;

namespace {

// ---- Wrapped memory ---------------------------------------------------------------------------

// Owns one wrapped block: its release calls the user's deleter once, then this object goes.
class ExternalMemory final : public detail::MemoryOwner {
 public:
  explicit ExternalMemory(std::function<void(void*)> deleter) : deleter_(std::move(deleter)) {}
  void release(Device, void* p, size_t) override {
    std::function<void(void*)> d = std::move(deleter_);
    delete this;
    if (d) d(p);
  }
  void read(Device, void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }

 private:
  std::function<void(void*)> deleter_;
};

// ---- .npy -------------------------------------------------------------------------------------

// `where` names the op and the file (and the member of a .npz): "load_npy: 'x.npy'".
[[noreturn]] void bad_file(const std::string& where, const std::string& problem) {
  throw Error(where + ": " + problem);
}

// The dict of a .npy header: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
struct Header {
  std::string descr;
  bool fortran = false;
  Shape shape;
  bool has_descr = false, has_order = false, has_shape = false;
};

class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& where) : s_(text), where_(where) {}

  Header parse() {
    Header h;
    expect('{');
    for (;;) {
      skip();
      if (peek() == '}') break;
      std::string key = string();
      expect(':');
      skip();
      if (key == "descr") {
        h.descr = string();
        h.has_descr = true;
      } else if (key == "fortran_order") {
        h.fortran = boolean();
        h.has_order = true;
      } else if (key == "shape") {
        h.shape = tuple();
        h.has_shape = true;
      } else {
        fail("unknown key '" + key + "' in the header");
      }
      skip();
      if (peek() == ',') {
        ++i_;
        continue;
      }
      expect('}');
      --i_;
      break;
    }
    expect('}');
    if (!h.has_descr || !h.has_order || !h.has_shape)
      fail("the header lacks one of 'descr', 'fortran_order', 'shape'");
    return h;
  }

 private:
  [[noreturn]] void fail(const std::string& what) { bad_file(where_, what); }
  void skip() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void expect(char c) {
    skip();
    if (peek() != c) fail(std::string("header does not parse: expected '") + c + "' at byte " + std::to_string(i_));
    ++i_;
  }
  std::string string() {
    skip();
    char q = peek();
    if (q != '\'' && q != '"') fail("header does not parse: expected a string at byte " + std::to_string(i_));
    size_t end = s_.find(q, i_ + 1);
    if (end == std::string::npos) fail("header does not parse: unterminated string");
    std::string out = s_.substr(i_ + 1, end - i_ - 1);
    i_ = end + 1;
    return out;
  }
  bool boolean() {
    if (s_.compare(i_, 4, "True") == 0) {
      i_ += 4;
      return true;
    }
    if (s_.compare(i_, 5, "False") == 0) {
      i_ += 5;
      return false;
    }
    fail("header does not parse: 'fortran_order' is not True or False");
  }
  Shape tuple() {
    expect('(');
    Shape out;
    for (;;) {
      skip();
      if (peek() == ')') break;
      size_t start = i_;
      int64_t v = 0;
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') {
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, s_[i_] - '0', &v))
          fail("shape extent too large");
        ++i_;
      }
      if (i_ == start) fail("header does not parse: a shape extent is not a non-negative integer");
      out.push_back(v);
      if (out.size() > 64) fail("shape has more than 64 dimensions");
      skip();
      if (peek() == ',') ++i_;
      else if (peek() != ')') fail("header does not parse: expected ',' or ')' in the shape");
    }
    ++i_;
    return out;
  }

  const std::string& s_;
  const std::string& where_;
  size_t i_ = 0;
};

// descr <-> dtype: little-endian '<', big-endian '>', '|' and '=' native (little: x86, arm64).
// numpy has no bfloat16: ml_dtypes' bfloat16 is a user dtype that np.save writes as a 2-byte
// void, '<V2' (np.load reads it back as V2). arrayc writes bfloat16 the same way and reads a
// 2-byte void as bfloat16, the only dtype of that size without a numpy type code.
const char* descr_of(DType t) {
  switch (t) {
    case DType::Bool: return "|b1";
    case DType::Int8: return "|i1";
    case DType::UInt8: return "|u1";
    case DType::Int16: return "<i2";
    case DType::UInt16: return "<u2";
    case DType::Int32: return "<i4";
    case DType::UInt32: return "<u4";
    case DType::Int64: return "<i8";
    case DType::UInt64: return "<u8";
    case DType::Float16: return "<f2";
    case DType::BFloat16: return "<V2";
    case DType::Float32: return "<f4";
    case DType::Float64: return "<f8";
  }
  throw Error(std::string("save_npy: dtype ") + dtype_name(t) + " has no .npy type code");
}

bool dtype_of_descr(const std::string& d, DType& t, bool& swap) {
  if (d.size() < 3) return false;
  char order = d[0];
  if (order != '<' && order != '>' && order != '|' && order != '=') return false;
  std::string code = d.substr(1);
  for (DType c : kAllDTypes)
    if (code == std::string(descr_of(c)).substr(1)) {
      t = c;
      // One-byte codes and the void of bfloat16 (ml_dtypes' bytes are native) never swap.
      swap = order == '>' && dtype_size(c) > 1 && c != DType::BFloat16;
      return true;
    }
  return false;
}

uint32_t little_u32(const unsigned char* p) { return p[0] | p[1] << 8 | p[2] << 16 | static_cast<uint32_t>(p[3]) << 24; }

}  // namespace

namespace detail {

std::string read_whole_file(const std::string& path, const std::string& where) {
  std::ifstream f(path, std::ios::binary);
  if (!f) bad_file(where, std::string("cannot open: ") + std::strerror(errno));
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (f.bad()) bad_file(where, "read error");
  return bytes;
}

Array npy_from_bytes(const unsigned char* u, size_t size, const std::string& where) {
  const std::string_view bytes(reinterpret_cast<const char*>(u), size);
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0)
    bad_file(where, bytes.substr(0, 2) == "PK" ? "not a .npy file (a zip: a .npz? use load_npz)"
                                               : "not a .npy file (no \\x93NUMPY magic)");
  int major = u[6];
  if (major < 1 || major > 3)
    bad_file(where, "format version " + std::to_string(major) + "." + std::to_string(u[7]) + " is not 1.0, 2.0 or 3.0");
  size_t pre = major == 1 ? 10 : 12;
  if (bytes.size() < pre) bad_file(where, "truncated header");
  size_t hlen = major == 1 ? (u[8] | u[9] << 8) : little_u32(u + 8);
  if (hlen > bytes.size() - pre)
    bad_file(where, "truncated header: it claims " + std::to_string(hlen) + " bytes, the file has " +
                       std::to_string(bytes.size() - pre) + " after the preamble");
  std::string text(bytes.substr(pre, hlen));
  Header h = HeaderParser(text, where).parse();
  DType t;
  bool swap = false;
  if (!dtype_of_descr(h.descr, t, swap))
    bad_file(where, "dtype '" + h.descr + "' is not one arrayc has (b1, i1, u1, i2, u2, i4, u4, i8, u8, f2, f4, f8, and V2 as bfloat16)");
  int64_t n = 1;
  for (int64_t e : h.shape)
    if (__builtin_mul_overflow(n, e, &n)) bad_file(where, "shape " + shape_str(h.shape) + " has too many elements");
  size_t es = dtype_size(t);
  int64_t data_bytes;
  if (__builtin_mul_overflow(n, static_cast<int64_t>(es), &data_bytes))
    bad_file(where, "shape " + shape_str(h.shape) + " has too many bytes");
  size_t have = bytes.size() - pre - hlen;
  if (static_cast<uint64_t>(data_bytes) > have)
    bad_file(where, "truncated data: shape " + shape_str(h.shape) + " of " + dtype_name(t) + " needs " +
                       std::to_string(data_bytes) + " bytes, the file has " + std::to_string(have));
  detail::StorageRef st = detail::allocate(cpu(), static_cast<size_t>(data_bytes));
  auto* dst = static_cast<unsigned char*>(st->data);
  const unsigned char* src = u + pre + hlen;
  if (data_bytes > 0) std::memcpy(dst, src, static_cast<size_t>(data_bytes));
  if (swap)
    for (int64_t k = 0; k < n; ++k) std::reverse(dst + k * es, dst + (k + 1) * es);
  if (t == DType::Bool)
    for (int64_t k = 0; k < n; ++k) dst[k] = dst[k] != 0;
  std::vector<int64_t> strides = detail::contiguous_strides(h.shape);
  if (h.fortran) {  // first index fastest: a transposed view of the data, no copy
    int64_t s = 1;
    for (size_t d = 0; d < h.shape.size(); ++d) {
      strides[d] = s;
      s *= std::max<int64_t>(h.shape[d], 1);
    }
  }
  return Array(detail::make_buffer(st, t, h.shape, 0, strides));
}

}  // namespace detail

Array load_npy(const std::string& path) {
  std::string where = "load_npy: '" + path + "'";
  std::string bytes = detail::read_whole_file(path, where);
  return detail::npy_from_bytes(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), where);
}

namespace detail {

HostView contiguous_host_view(const Array& a) {
  HostView v = host_view(a.device() == cpu() ? a : a.to(cpu()));
  if (!v.contiguous()) v = host_view(Array(detail::make_copy(v.keep.node())));
  return v;
}

std::string npy_header(DType dtype, const Shape& shape_in) {
  std::string shape = "(";  // Python's tuple: (), (3,), (2, 3)
  for (size_t d = 0; d < shape_in.size(); ++d) shape += (d ? ", " : "") + std::to_string(shape_in[d]);
  shape += shape_in.size() == 1 ? ",)" : ")";
  std::string header = std::string("{'descr': '") + descr_of(dtype) + "', 'fortran_order': False, 'shape': " + shape + ", }";
  bool v2 = header.size() + 11 > 65535;
  size_t pre = v2 ? 12 : 10;
  size_t total = (pre + header.size() + 1 + 63) / 64 * 64;
  header.append(total - pre - header.size() - 1, ' ');
  header += '\n';
  std::string out = std::string("\x93NUMPY", 6) + static_cast<char>(v2 ? 2 : 1) + '\0';
  size_t hl = header.size();
  out += static_cast<char>(hl & 0xff);
  out += static_cast<char>((hl >> 8) & 0xff);
  if (v2) {
    out += static_cast<char>((hl >> 16) & 0xff);
    out += static_cast<char>((hl >> 24) & 0xff);
  }
  return out + header;
}

}  // namespace detail

void save_npy(const std::string& path, const Array& a) {
  HostView v = detail::contiguous_host_view(a);
  std::string out = detail::npy_header(v.dtype, v.shape);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw Error("save_npy: cannot write '" + path + "': " + std::strerror(errno));
  f.write(out.data(), static_cast<std::streamsize>(out.size()));
  size_t bytes = static_cast<size_t>(shape_numel(v.shape)) * dtype_size(v.dtype);
  if (bytes) f.write(static_cast<const char*>(v.data), static_cast<std::streamsize>(bytes));
  f.close();
  if (!f) throw Error("save_npy: cannot write '" + path + "': " + std::strerror(errno));
}

Array from_host_memory(void* data, DType dtype, const Shape& shape, const std::vector<int64_t>& strides_in,
                       std::function<void(void*)> deleter) {
  detail::check_dtype("from_host_memory", dtype);
  for (int64_t e : shape)
    if (e < 0) throw Error("from_host_memory: negative extent in shape " + shape_str(shape));
  std::vector<int64_t> strides = strides_in.empty() ? detail::contiguous_strides(shape) : strides_in;
  if (strides.size() != shape.size())
    throw Error("from_host_memory: " + std::to_string(strides.size()) + " strides given for shape " + shape_str(shape));
  int64_t span = 1;  // elements from the first to one past the last
  bool empty = false;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (strides[d] < 0)
      throw Error("from_host_memory: negative stride " + std::to_string(strides[d]) + " (strides " + shape_str(strides) + ")");
    empty |= shape[d] == 0;
    int64_t reach;
    if (shape[d] > 0 && (__builtin_mul_overflow(shape[d] - 1, strides[d], &reach) || __builtin_add_overflow(span, reach, &span)))
      throw Error("from_host_memory: shape " + shape_str(shape) + " with strides " + shape_str(strides) + " spans more than 2^63 elements");
  }
  if (!data && !empty) throw Error("from_host_memory: null data for a non-empty shape " + shape_str(shape));
  int64_t bytes = 0;
  if (!empty && __builtin_mul_overflow(span, static_cast<int64_t>(dtype_size(dtype)), &bytes))
    throw Error("from_host_memory: shape " + shape_str(shape) + " spans more than 2^63 bytes");
  auto st = std::make_shared<detail::Storage>(cpu(), data, static_cast<size_t>(bytes), new ExternalMemory(std::move(deleter)));
  return Array(detail::make_buffer(st, dtype, shape, 0, strides));
}

bool HostView::contiguous() const {
  int64_t expect = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] != 1 && strides[d] != expect) return false;
    expect *= shape[d];
  }
  return true;
}

HostView host_view(const Array& a) {
  if (a.device() != cpu())
    throw Error("host_view: the array is on " + a.device().str() + "; copy it with .to(cpu()) first");
  a.eval();
  HostView v;
  v.keep = a;
  NodeRef n = a.node();
  ARRAYC_INTERNAL_CHECK(n->op == detail::Op::Buffer, "an evaluated array is not a buffer");
  v.dtype = n->dtype;
  v.shape = n->shape;
  v.strides = n->buffer_strides();
  v.data = static_cast<const char*>(n->storage->data) + n->buffer_offset() * static_cast<int64_t>(dtype_size(n->dtype));
  return v;
}

}  // namespace arrayc
