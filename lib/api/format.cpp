// Numpy-like printing of arrays (include/arrayc/format.h): numpy's default print options
// (precision 8, threshold 1000 elements with 3 edge items, line width 75, scientific notation
// when the magnitudes call for it). Integers are kept as int64, never passed through a double.
#include "arrayc/format.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ostream>
#include <string>
#include <vector>

#include "ir/node.h"

namespace arrayc {

namespace {

constexpr int64_t kThreshold = 1000;
constexpr int64_t kEdgeItems = 3;
constexpr size_t kLineWidth = 75;
constexpr int kPrecision = 8;

// Shortest text that reads back as the same value, laid out as Python's repr of a float:
// positional for exponents -4 .. 15 ("3000000.0", "0.0001"), else scientific ("1e+16").
// The shortest scientific text of v, a value of dtype t, that reads back as v ("-1.2345e+06").
std::string shortest_scientific(double v, DType t) {
  char buf[64];
  if (t == DType::Float32 || t == DType::Float64) {
    auto r = t == DType::Float32 ? std::to_chars(buf, buf + sizeof buf, static_cast<float>(v), std::chars_format::scientific)
                                 : std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
    return std::string(buf, r.ptr);
  }
  for (int digits = 1;; ++digits) {  // 16-bit floats: at most 5 digits
    std::snprintf(buf, sizeof buf, "%.*e", digits - 1, v);
    if (detail::round_float(t, std::strtod(buf, nullptr)) == v) break;
  }
  std::string s = buf;  // "%e" writes e+06; to_chars writes e+06 too
  return s;
}

std::string shortest(double v, DType t) {
  std::string s = shortest_scientific(v, t);  // "-1.2345e+06"
  bool neg = !s.empty() && s[0] == '-';
  if (neg) s.erase(0, 1);
  size_t e = s.find('e');
  int exp = std::atoi(s.c_str() + e + 1);
  std::string digits = s.substr(0, e);
  if (digits.size() > 1) digits.erase(1, 1);  // drop the point
  std::string out;
  if (exp >= -4 && exp < 16) {
    if (exp < 0) {
      out = "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
    } else if (static_cast<size_t>(exp) + 1 >= digits.size()) {
      out = digits + std::string(static_cast<size_t>(exp) + 1 - digits.size(), '0') + ".0";
    } else {
      out = digits.substr(0, static_cast<size_t>(exp) + 1) + "." + digits.substr(static_cast<size_t>(exp) + 1);
    }
  } else {
    // Appended piece by piece: GCC 12 warns (-Wrestrict, a false positive) on "." + string.
    out = digits.substr(0, 1);
    if (digits.size() > 1) out.append(1, '.').append(digits, 1);
    out.append(1, 'e').append(1, exp < 0 ? '-' : '+');
    if (std::abs(exp) < 10) out.append(1, '0');
    out += std::to_string(std::abs(exp));
  }
  return (neg ? "-" : "") + out;
}

std::string nonfinite(double v) {
  if (std::isnan(v)) return "nan";
  return v > 0 ? "inf" : "-inf";
}

// The digits numpy would show for each element, padded so that they line up.
struct FloatFormat {
  bool scientific = false;
  DType dtype = DType::Float64;
  int frac = 0;  // digits after the point (fixed) or in the mantissa (scientific)
};

std::string fixed(double v, int frac) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "%.*f", frac, v);
  return buf;
}

std::string sci(double v, int frac) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*e", frac, v);
  return buf;
}

// Digits needed (at most kPrecision) to show v as unique with `frac` digits.
int needed_fraction(double v, bool scientific, DType t) {
  for (int f = 0; f < kPrecision; ++f) {
    std::string s = scientific ? sci(v, f) : fixed(v, f);
    double back = std::strtod(s.c_str(), nullptr);
    if (detail::round_float(t, back) == detail::round_float(t, v)) return f;
  }
  return kPrecision;
}

// Fraction digits of v in positional notation: the fewest that read back as v, at most
// kPrecision, and trailing zeros of the rounded text dropped (numpy: 0.49999800000000004 is
// "0.499998").
int fixed_digits(double v, DType t) {
  int f = needed_fraction(v, false, t);
  if (f == kPrecision) {
    std::string s = fixed(v, f);
    while (f > 0 && s.back() == '0') {
      s.pop_back();
      --f;
    }
  }
  return f;
}

FloatFormat choose_format(const std::vector<double>& vals, DType t) {
  FloatFormat f;
  f.dtype = t;
  double max_abs = 0, min_abs = INFINITY;
  for (double v : vals) {
    if (!std::isfinite(v) || v == 0) continue;
    max_abs = std::max(max_abs, std::fabs(v));
    min_abs = std::min(min_abs, std::fabs(v));
  }
  if (max_abs > 0)
    f.scientific = max_abs >= 1e8 || min_abs < 1e-4 || max_abs / min_abs > 1e3;
  for (double v : vals)
    if (std::isfinite(v))
      f.frac = std::max(f.frac, f.scientific ? needed_fraction(v, true, t) : fixed_digits(v, t));
  return f;
}

std::string format_float(double v, const FloatFormat& f) {
  if (!std::isfinite(v)) return nonfinite(v);
  if (f.scientific) {
    // numpy keeps the mantissa at the common width (zeros) and writes "1.e-06" for no digits.
    std::string s = sci(v, f.frac);
    if (f.frac == 0) s.insert(s.find('e'), 1, '.');  // (a char: GCC 12 warns falsely on the string)
    return s;
  }
  // Fixed: every element with the common number of digits, trailing zeros turned into spaces
  // (numpy's 'maxprec' mode: "1.5 " lines up with "2.25").
  int own = fixed_digits(v, f.dtype);
  std::string s = fixed(v, own);
  if (own == 0) s += '.';
  return s + std::string(static_cast<size_t>(f.frac - own), ' ');
}

// Index lists of the elements shown per axis.
std::vector<int64_t> shown_indices(int64_t n, bool elide) {
  std::vector<int64_t> idx;
  if (elide && n > 2 * kEdgeItems) {
    for (int64_t i = 0; i < kEdgeItems; ++i) idx.push_back(i);
    idx.push_back(-1);  // the "..." marker
    for (int64_t i = n - kEdgeItems; i < n; ++i) idx.push_back(i);
  } else {
    for (int64_t i = 0; i < n; ++i) idx.push_back(i);
  }
  return idx;
}

// The text of an array of rank 1 or more with at least one element. Floats are read as doubles
// (exact for float32 too); bools and integers as int64, so that every integer prints exactly.
class Printer {
 public:
  explicit Printer(const Array& a) : shape_(a.shape()), dtype_(a.dtype()) {
    if (is_float(dtype_)) floats_ = a.to_vector<double>();
    else ints_ = a.to_vector<int64_t>();
    elide_ = a.size() > kThreshold;
    strides_.assign(shape_.size(), 1);
    for (size_t d = shape_.size(); d-- > 1;) strides_[d - 1] = strides_[d] * shape_[d];
    std::vector<int64_t> shown;
    collect(0, 0, shown);
    if (is_float(dtype_)) {
      std::vector<double> vals;
      for (int64_t k : shown) vals.push_back(floats_[static_cast<size_t>(k)]);
      fmt_ = choose_format(vals, dtype_);
    }
    for (int64_t k : shown) width_ = std::max(width_, element(k).size());
  }

  std::string str() {
    std::string out;
    block(0, 0, out, 0);
    return out;
  }

 private:
  // The flat indices of the elements shown.
  void collect(size_t dim, int64_t offset, std::vector<int64_t>& shown) const {
    if (dim == shape_.size()) {
      shown.push_back(offset);
      return;
    }
    for (int64_t i : shown_indices(shape_[dim], elide_))
      if (i >= 0) collect(dim + 1, offset + i * strides_[dim], shown);
  }

  std::string element(int64_t k) const {
    size_t i = static_cast<size_t>(k);
    switch (dtype_) {
      case DType::Bool: return ints_[i] != 0 ? "True" : "False";
      case DType::UInt64: return std::to_string(static_cast<uint64_t>(ints_[i]));
      default: return is_float(dtype_) ? format_float(floats_[i], fmt_) : std::to_string(ints_[i]);
    }
  }

  std::string padded(int64_t k) const {
    std::string e = element(k);
    return std::string(width_ - e.size(), ' ') + e;
  }

  // Appends the text of the sub-array at `dim`/`offset`; `indent` is the column after '['.
  void block(size_t dim, int64_t offset, std::string& out, size_t indent) const {
    out += '[';
    std::vector<int64_t> idx = shown_indices(shape_[dim], elide_);
    if (dim + 1 == shape_.size()) {
      size_t col = indent + 1;
      bool first = true;
      for (int64_t i : idx) {
        std::string item = i < 0 ? std::string("...") : padded(offset + i * strides_[dim]);
        if (!first) {
          if (col + 1 + item.size() + 1 > kLineWidth) {
            while (!out.empty() && out.back() == ' ') out.pop_back();  // as numpy, no trailing blanks
            out += '\n' + std::string(indent + 1, ' ');
            col = indent + 1;
          } else {
            out += ' ';
            ++col;
          }
        }
        out += item;
        col += item.size();
        first = false;
      }
    } else {
      bool first = true;
      for (int64_t i : idx) {
        if (!first) {
          out += '\n';
          out.append(shape_.size() - dim - 2, '\n');
          out.append(indent + 1, ' ');
        }
        if (i < 0) {
          out += "...";
        } else {
          block(dim + 1, offset + i * strides_[dim], out, indent + 1);
        }
        first = false;
      }
    }
    out += ']';
  }

  Shape shape_;
  DType dtype_;
  std::vector<double> floats_;
  std::vector<int64_t> ints_;
  bool elide_ = false;
  std::vector<int64_t> strides_;
  FloatFormat fmt_;
  size_t width_ = 0;
};

}  // namespace

std::string format_number(double v) { return std::isfinite(v) ? shortest(v, DType::Float64) : nonfinite(v); }

std::string to_string(const Array& a) {
  if (a.ndim() == 0) {
    DType t = a.dtype();
    if (t == DType::Bool) return a.item<bool>() ? "True" : "False";
    if (t == DType::UInt64) return std::to_string(a.item<uint64_t>());
    if (is_int(t)) return std::to_string(a.item<int64_t>());
    double v = a.item<double>();
    return std::isfinite(v) ? shortest(v, t) : nonfinite(v);
  }
  if (a.size() == 0) return "[]";
  return Printer(a).str();
}

std::ostream& operator<<(std::ostream& os, const Array& a) { return os << to_string(a); }

}  // namespace arrayc
