// The environment variables: the library's table and docs/env_vars.md list the same names, and
// each of the library's settings rejects a value outside its range by name. Each case runs in a
// child process (the settings are read once per process).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "arrayc/error.h"
#include "arrayc/matmul_precision.h"
#include "arrayc/products.h"
#include "support/env.h"

namespace arrayc::detail {
namespace {

TEST(EnvVars, TheDocsTableListsEveryVariableTheCodeKnows) {
  std::ifstream f(std::string(ARRAYC_TEST_DATA_DIR) + "/../docs/env_vars.md");
  ASSERT_TRUE(f) << "docs/env_vars.md not found";
  std::stringstream ss;
  ss << f.rdbuf();
  std::string text = ss.str();
  std::set<std::string> docs, code;
  std::regex row("\\n\\| `(ARRAYC_[A-Z_]+)` \\| ([a-z]+) \\|");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), row); it != std::sregex_iterator(); ++it)
    docs.insert((*it)[1].str() + " " + (*it)[2].str());
  for (const EnvVar& v : env_vars()) code.insert(std::string(v.name) + " " + v.read_by);
  EXPECT_EQ(docs, code);
}

// Runs `read` in a child with name=value set; expects an arrayc::Error whose message matches.
template <typename Read> void expect_rejected(const char* name, const char* value, Read read, const std::string& msg) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv(name, value, 1);
        try {
          read();
        } catch (const Error& e) {
          std::fputs(e.what(), stderr);
          std::_Exit(3);
        }
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(3), msg)
      << name << "=" << value;
}

TEST(EnvVars, SettingsOutOfRangeAreErrorsNamingTheVariable) {
  for (const char* bad : {"9", "-1", "x", "2.5"})
    expect_rejected("ARRAYC_DEBUG", bad, debug_level,
                    std::string("ARRAYC_DEBUG must be an integer from 0 to 4, got '") + bad + "'");
  for (const char* bad : {"2", "yes", "-0x"}) {
    expect_rejected("ARRAYC_FUSION", bad, fusion_setting,
                    std::string("ARRAYC_FUSION must be an integer from 0 to 1, got '") + bad + "'");
    expect_rejected("ARRAYC_FAST_MATH", bad, fast_math_setting,
                    std::string("ARRAYC_FAST_MATH must be an integer from 0 to 1, got '") + bad + "'");
  }
  expect_rejected("ARRAYC_STREAM_BYTES", "-5", stream_bytes_setting,
                  "ARRAYC_STREAM_BYTES must be an integer >= 0 \\(bytes\\), got '-5'");
}

// matrix products (issue 29): each read in a fresh process, before any product
TEST(EnvVars, ProductSettingsOutOfRangeAreErrors) {
  expect_rejected("ARRAYC_EPILOGUE", "2", epilogue_setting, "ARRAYC_EPILOGUE must be an integer from 0 to 1, got '2'");
  expect_rejected("ARRAYC_TILED_PRODUCTS", "yes", tiled_products_setting,
                  "ARRAYC_TILED_PRODUCTS must be an integer from 0 to 1, got 'yes'");
  expect_rejected("ARRAYC_MATMUL_PRECISION", "tf32", tf32_products_setting,
                  "ARRAYC_MATMUL_PRECISION must be 'highest' \\(exact float32 products\\) or 'high' \\(TF32 on GPUs "
                  "with tensor cores\\), got 'tf32'");
  expect_rejected("ARRAYC_BLAS_THREADS", "0", blas_threads_setting,
                  "ARRAYC_BLAS_THREADS must be an integer from 1 to 1024, got '0'");
  expect_rejected("ARRAYC_BLAS_CORE", "Bogus", [] { arrayc::blas_info(); },
                  "ARRAYC_BLAS_CORE must be 'openblas', or one of Sandybridge, Haswell, Zen, SkylakeX, Cooperlake, "
                  "got 'Bogus'");
  if (!__builtin_cpu_supports("avx512f"))
    expect_rejected("ARRAYC_BLAS_CORE", "SkylakeX", [] { arrayc::blas_info(); },
                    "ARRAYC_BLAS_CORE=SkylakeX: this CPU lacks the instructions OpenBLAS's SkylakeX kernels use");
}

TEST(EnvVars, BlasCoreAndThreadsAreApplied) {
  if (!__builtin_cpu_supports("avx2")) GTEST_SKIP() << "the test switches to Haswell's kernels";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("ARRAYC_BLAS_CORE", "haswell", 1);
        setenv("ARRAYC_BLAS_THREADS", "1", 1);
        arrayc::BlasInfo info = arrayc::blas_info();
        std::fputs(info.str().c_str(), stderr);
        std::_Exit(info.core == "Haswell" && info.core_reason == "ARRAYC_BLAS_CORE" && info.threads == 1 ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "core Haswell \\(ARRAYC_BLAS_CORE");
}

TEST(EnvVars, OpenBlasThreadTimeoutIsLeftAlone) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("OPENBLAS_THREAD_TIMEOUT", "22", 1);
        arrayc::BlasInfo info = arrayc::blas_info();
        std::fputs(info.str().c_str(), stderr);
        const char* still = std::getenv("OPENBLAS_THREAD_TIMEOUT");
        std::_Exit(info.idle_threads == "as OPENBLAS_THREAD_TIMEOUT says" && still && std::string(still) == "22" ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "idle threads sleep as OPENBLAS_THREAD_TIMEOUT says");
}

TEST(EnvVars, ADumpDirThatCannotBeMadeIsAnError) {
  expect_rejected("ARRAYC_DUMP_DIR", "/proc/arrayc-cannot-be-made", dump_dir,
                  "ARRAYC_DUMP_DIR: '/proc/arrayc-cannot-be-made' is not a directory and cannot be made one");
}

TEST(EnvVars, AMissingDumpDirIsMade) {
  std::string dir = ::testing::TempDir() + "arrayc-dump-made";
  std::filesystem::remove_all(dir);
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("ARRAYC_DUMP_DIR", dir.c_str(), 1);
        std::_Exit(dump_dir() == dir && std::filesystem::is_directory(dir) ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
  std::filesystem::remove_all(dir);
}

TEST(EnvVars, AnUnknownArraycVariableIsWarnedAbout) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("ARRAYC_FUSON", "0", 1);
        fusion_setting();
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(0), "arrayc: warning: ARRAYC_FUSON is set, but arrayc reads no such variable");
}

// ARRAYC_MATMUL_PRECISION sets the starting precision (each in a fresh process, before any use).
TEST(EnvVars, MatmulPrecisionStartsFromTheVariable) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  for (auto [value, want] : {std::pair{"high", arrayc::MatmulPrecision::High}, std::pair{"highest", arrayc::MatmulPrecision::Highest}}) {
    EXPECT_EXIT(
        {
          setenv("ARRAYC_MATMUL_PRECISION", value, 1);
          std::_Exit(arrayc::matmul_precision() == want ? 0 : 1);
        },
        ::testing::ExitedWithCode(0), "")
        << value;
  }
}

}  // namespace
}  // namespace arrayc::detail
