// Golden text files for tests that print a stage: a case's file under tests/golden/ holds a
// comment line saying what it shows, then each printed section as "-- title" and its text, so
// that the input stands next to the expected output. After a deliberate change, regenerate
// the files with ARRAYC_UPDATE_GOLDENS=1 and review their diff.
#pragma once
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace arrayc_test {

// Compares the sections with tests/golden/<file>.txt (or writes it, under ARRAYC_UPDATE_GOLDENS=1).
inline void expect_golden(const std::string& file, const std::string& what,
                          const std::vector<std::pair<std::string, std::string>>& sections) {
  std::string text = "# " + what + "\n";
  for (const auto& [title, body] : sections) text += "-- " + title + "\n" + body;
  std::string path = std::string(ARRAYC_TEST_DATA_DIR) + "/golden/" + file + ".txt";
  if (const char* u = std::getenv("ARRAYC_UPDATE_GOLDENS"); u && std::string(u) == "1") {
    std::ofstream(path) << text;
    return;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in) << "missing " << path << " (ARRAYC_UPDATE_GOLDENS=1 writes it)";
  std::stringstream want;
  want << in.rdbuf();
  EXPECT_EQ(text, want.str()) << "in " << path;
}

}  // namespace arrayc_test
