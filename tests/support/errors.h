// Checking the errors users get: f() must raise arrayc::Error whose message contains every one
// of `parts` (the op's name, the shapes, the dtypes...).
#pragma once
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "arrayc/error.h"

namespace arrayc_test {

inline ::testing::AssertionResult raises_error(const std::function<void()>& f,
                                               const std::vector<std::string>& parts) {
  try {
    f();
  } catch (const arrayc::Error& e) {
    std::string msg = e.what();
    for (const std::string& p : parts)
      if (msg.find(p) == std::string::npos)
        return ::testing::AssertionFailure() << "the message \"" << msg << "\" does not contain \"" << p << "\"";
    return ::testing::AssertionSuccess() << msg;
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "raised a std::exception that is not arrayc::Error: " << e.what();
  } catch (...) {
    return ::testing::AssertionFailure() << "raised something that is not an exception";
  }
  return ::testing::AssertionFailure() << "no error was raised";
}

}  // namespace arrayc_test

#define EXPECT_ARRAYC_ERROR(statement, ...) \
  EXPECT_TRUE(::arrayc_test::raises_error([&] { statement; }, {__VA_ARGS__}))
