// arrayc/interop.h: loadtxt, numbers in text columns as np.loadtxt reads them.
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "api/npy_format.h"
#include "arrayc/ops.h"
#include "ir/build.h"

namespace arrayc {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// A float as Python's float() reads it (sign, digits, exponent, inf, infinity, nan; any case);
// overflow gives +-inf and underflow 0, as there.
bool parse_float(std::string_view s, double& out) {
  bool neg = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty() || s[0] == '+' || s[0] == '-') return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  if (end != s.data() + s.size()) return false;
  if (ec == std::errc::result_out_of_range) {  // from_chars leaves `out` unset: strtod rounds it
    std::string copy(s);
    out = std::strtod(copy.c_str(), nullptr);
  } else if (ec != std::errc()) {
    return false;
  }
  if (neg) out = -out;
  return true;
}

// An integer (optional sign, decimal digits) within [lo, hi].
template <typename T> bool parse_int(std::string_view s, T& out) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  if (s.empty() || s[0] == '+') return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

bool int_fits(DType t, int64_t v) {
  switch (t) {
    case DType::Int8: return v >= INT8_MIN && v <= INT8_MAX;
    case DType::UInt8: return v >= 0 && v <= UINT8_MAX;
    case DType::Int16: return v >= INT16_MIN && v <= INT16_MAX;
    case DType::UInt16: return v >= 0 && v <= UINT16_MAX;
    case DType::Int32: return v >= INT32_MIN && v <= INT32_MAX;
    case DType::UInt32: return v >= 0 && v <= UINT32_MAX;
    default: return true;  // Int64, Bool
  }
}

}  // namespace

Array loadtxt(const std::string& path, DType dtype, const std::string& delimiter, int64_t skiprows,
              const std::vector<int64_t>& usecols, const std::string& comments) {
  const std::string where = "loadtxt: '" + path + "'";
  auto fail = [&](const std::string& problem) -> void { throw Error(where + ": " + problem); };
  detail::check_dtype("loadtxt", dtype);
  if (delimiter.size() > 1) fail("delimiter '" + delimiter + "' must be one character (or empty: whitespace)");
  if (delimiter == "\n" || delimiter == "\r") fail("delimiter must not be a line break");
  if (!delimiter.empty() && !comments.empty() && comments.find(delimiter[0]) != std::string::npos)
    fail("comments '" + comments + "' must not contain the delimiter '" + delimiter + "'");
  if (comments.find('\n') != std::string::npos) fail("comments must not contain a line break");
  if (skiprows < 0) fail("skiprows " + std::to_string(skiprows) + " must not be negative");
  const std::string text = detail::read_whole_file(path, where);

  enum class Kind { Float, Signed, Unsigned } kind =
      is_float(dtype) ? Kind::Float : dtype == DType::UInt64 ? Kind::Unsigned : Kind::Signed;
  std::vector<double> f;
  std::vector<int64_t> s;
  std::vector<uint64_t> u;
  int64_t rows = 0, first_cols = -1;
  std::vector<std::string_view> fields;
  size_t pos = 0;
  for (int64_t line_no = 1; pos < text.size(); ++line_no) {
    size_t nl = text.find('\n', pos);
    std::string_view line(text.data() + pos, (nl == std::string::npos ? text.size() : nl) - pos);
    pos = nl == std::string::npos ? text.size() : nl + 1;
    if (line_no <= skiprows) continue;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!comments.empty()) line = line.substr(0, line.find(comments));
    fields.clear();
    if (delimiter.empty()) {
      for (size_t i = 0; i < line.size();) {
        while (i < line.size() && (is_space(line[i]))) ++i;
        size_t start = i;
        while (i < line.size() && !is_space(line[i])) ++i;
        if (i > start) fields.push_back(line.substr(start, i - start));
      }
    } else if (!line.empty()) {
      for (size_t start = 0;;) {
        size_t d = line.find(delimiter[0], start);
        fields.push_back(line.substr(start, (d == std::string_view::npos ? line.size() : d) - start));
        if (d == std::string_view::npos) break;
        start = d + 1;
      }
    }
    if (fields.empty()) continue;
    auto at = [&] { return "line " + std::to_string(line_no); };
    int64_t ncols = static_cast<int64_t>(fields.size());
    if (usecols.empty() && first_cols >= 0 && ncols != first_cols)
      fail(at() + " has " + std::to_string(ncols) + " columns, the first row has " + std::to_string(first_cols) +
           " (use usecols to read a subset)");
    if (first_cols < 0) first_cols = ncols;
    auto read = [&](int64_t c) {
      int64_t col = c < 0 ? c + ncols : c;
      if (col < 0 || col >= ncols)
        fail(at() + " has " + std::to_string(ncols) + " columns, no column " + std::to_string(c) + " of usecols");
      std::string_view field = trim(fields[static_cast<size_t>(col)]);
      bool ok;
      if (kind == Kind::Float) {
        double v = 0;
        ok = parse_float(field, v);
        f.push_back(v);
      } else if (kind == Kind::Unsigned) {
        uint64_t v = 0;
        ok = parse_int(field, v);
        u.push_back(v);
      } else {
        int64_t v = 0;
        ok = parse_int(field, v) && int_fits(dtype, v);
        s.push_back(v);
      }
      if (!ok)
        fail(at() + ", column " + std::to_string(col + 1) + ": could not convert '" + std::string(field) + "' to " +
             dtype_name(dtype) +
             (kind == Kind::Float ? "" : is_int(dtype) ? " (an integer in its range)" : " (an integer, nonzero is true)"));
    };
    if (usecols.empty())
      for (int64_t c = 0; c < ncols; ++c) read(c);
    else
      for (int64_t c : usecols) read(c);
    ++rows;
  }
  int64_t cols = usecols.empty() ? std::max<int64_t>(first_cols, 0) : static_cast<int64_t>(usecols.size());
  Shape shape;  // [rows, cols] with extents of 1 squeezed (numpy's ndmin=0); no data: [0]
  if (rows == 0) {
    shape = {0};
  } else {
    if (rows != 1) shape.push_back(rows);
    if (cols != 1) shape.push_back(cols);
  }
  Array out = kind == Kind::Float      ? array<double>(f, shape, cpu())
              : kind == Kind::Unsigned ? array<uint64_t>(u, shape, cpu())
                                       : array<int64_t>(s, shape, cpu());
  if (out.dtype() != dtype) out = cast(out, dtype);
  out.eval();
  return out;
}

}  // namespace arrayc
