// Helpers of the indexing and joining tests (e2e/indexing_test.cpp, e2e/joining_test.cpp).
#pragma once
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "arrayc/arrayc.h"

namespace arrayc_test {

// f() raises arrayc::Error with exactly this message.
inline ::testing::AssertionResult raises_exactly(const std::function<void()>& f, const std::string& text) {
  try {
    f();
  } catch (const arrayc::Error& e) {
    if (e.what() == text) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "message \"" << e.what() << "\", expected \"" << text << "\"";
  }
  return ::testing::AssertionFailure() << "no arrayc::Error raised, expected \"" << text << "\"";
}

// 0, 1, ..., n-1 as int64 in the given shape, and an array's values as int64.
inline arrayc::Array iota(const arrayc::Shape& s) { return arrayc::reshape(arrayc::arange(arrayc::shape_numel(s)), s); }
inline std::vector<int64_t> ints(const arrayc::Array& a) { return a.to_vector<int64_t>(); }

}  // namespace arrayc_test
