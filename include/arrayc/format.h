// Printing arrays as numpy does: numpy's default print options (8 significant fraction digits,
// scientific notation when the magnitudes call for it, arrays over 1000 elements elided to 3
// items at each edge of every axis, lines of at most 75 columns). Integers print exactly.
//
//   std::cout << arrayc::arange(4) * 0.5;   // [0.  0.5 1.  1.5]
//
// Printing evaluates the array (and copies it to the host when it lives on a GPU). The `arrayc`
// tool prints values with this same formatter, followed by " : dtype[shape]".
#pragma once
#include <iosfwd>
#include <string>

#include "arrayc/array.h"

namespace arrayc {

// numpy's str() of the array: "[0.  0.5 1.  1.5]", "3.25" for rank 0, "[]" when empty.
std::string to_string(const Array& a);
std::ostream& operator<<(std::ostream& os, const Array& a);

// A float64 number the way Python's repr writes a float: the shortest text that reads back as
// the same value ("0.1", "3.0", "1e+16", "nan", "-inf").
std::string format_number(double v);

}  // namespace arrayc
