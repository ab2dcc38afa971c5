// Printing arrays (arrayc/format.h): the exact text numpy's str() gives, for every dtype, rank 0,
// empty arrays, NaN and infinities, negative zero, integers past 2^53 and elided large arrays.
#include <arrayc/arrayc.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>

namespace {

using namespace arrayc;

template <typename T> std::string text(std::vector<T> v, Shape shape = {}) {
  if (shape.empty()) shape = {static_cast<int64_t>(v.size())};
  return to_string(arrayc::array(v, shape));
}

TEST(Format, EveryDtype) {
  EXPECT_EQ(text<float>({0, 0.5f, 1, 1.5f}), "[0.  0.5 1.  1.5]");
  EXPECT_EQ(text<double>({0.1, 0.25, -3}), "[ 0.1   0.25 -3.  ]");
  EXPECT_EQ(text<int32_t>({1, -20, 300}), "[  1 -20 300]");
  EXPECT_EQ(text<int64_t>({1, 2, 3}), "[1 2 3]");
  EXPECT_EQ(text<bool>({true, false}), "[ True False]");
  EXPECT_EQ(text<double>({1e-5, 1.0}), "[1.e-05 1.e+00]");
}

TEST(Format, IntegersPrintExactly) {
  constexpr int64_t big = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(text<int64_t>({big, -1}), "[9223372036854775807                  -1]");
  EXPECT_EQ(to_string(full({}, 0, DType::Int64) + big), "9223372036854775807");
  EXPECT_EQ(text<int64_t>({(int64_t{1} << 53) + 1}), "[9007199254740993]");
}

TEST(Format, RankZero) {
  EXPECT_EQ(to_string(full({}, 3.25, DType::Float64)), "3.25");
  EXPECT_EQ(to_string(full({}, 0.1, DType::Float32)), "0.1");
  EXPECT_EQ(to_string(full({}, 1, DType::Bool)), "True");
  EXPECT_EQ(to_string(full({}, -7, DType::Int32)), "-7");
  EXPECT_EQ(to_string(full({}, 1e16, DType::Float64)), "1e+16");
  EXPECT_EQ(to_string(full({}, -0.0, DType::Float64)), "-0.0");
}

TEST(Format, Empty) {
  EXPECT_EQ(to_string(zeros({0})), "[]");
  EXPECT_EQ(to_string(zeros({2, 0}, DType::Int64)), "[]");
}

TEST(Format, NonFiniteAndNegativeZero) {
  double inf = INFINITY;
  EXPECT_EQ(text<double>({NAN, inf, -inf, 1}), "[ nan  inf -inf   1.]");
  EXPECT_EQ(text<double>({-0.0, 1}), "[-0.  1.]");
  EXPECT_EQ(to_string(full({}, NAN, DType::Float32)), "nan");
}

TEST(Format, LargeArraysAreElided) {
  EXPECT_EQ(to_string(arange(2000)), "[   0    1    2 ... 1997 1998 1999]");
  EXPECT_EQ(to_string(reshape(arange(3000), {1000, 3})),
            "[[   0    1    2]\n [   3    4    5]\n [   6    7    8]\n ...\n"
            " [2991 2992 2993]\n [2994 2995 2996]\n [2997 2998 2999]]");
}

TEST(Format, RowsAndLineWidth) {
  EXPECT_EQ(to_string(reshape(arange(6), {2, 3})), "[[0 1 2]\n [3 4 5]]");
  EXPECT_EQ(to_string(reshape(arange(8), {2, 2, 2})), "[[[0 1]\n  [2 3]]\n\n [[4 5]\n  [6 7]]]");
  // 30 floats do not fit in 75 columns: numpy wraps them under the first bracket.
  EXPECT_EQ(to_string(arange(0.0, 30.0)),
            "[ 0.  1.  2.  3.  4.  5.  6.  7.  8.  9. 10. 11. 12. 13. 14. 15. 16. 17.\n"
            " 18. 19. 20. 21. 22. 23. 24. 25. 26. 27. 28. 29.]");
}

TEST(Format, StreamOperator) {
  std::ostringstream os;
  os << arange(3) << "|" << full({}, 2.5, DType::Float32);
  EXPECT_EQ(os.str(), "[0 1 2]|2.5");
  EXPECT_EQ(format_number(0.1), "0.1");
  EXPECT_EQ(format_number(3), "3.0");
}

}  // namespace
