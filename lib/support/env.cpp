#include "support/env.h"

#include <charconv>
#include <cstdlib>

#include "arrayc/error.h"

namespace arrayc::detail {

std::string env_string(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  long x = std::strtol(v, &end, 10);
  return end && *end == 0 ? static_cast<int>(x) : fallback;
}

std::optional<int64_t> env_integer(const char* name, int64_t min, const char* unit, int64_t max) {
  std::string v = env_string(name);
  if (v.empty()) return std::nullopt;
  int64_t n = 0;
  auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || ptr != v.data() + v.size() || n < min || n > max) {
    std::string range = max == INT64_MAX ? ">= " + std::to_string(min)
                                         : "from " + std::to_string(min) + " to " + std::to_string(max);
    throw Error(std::string(name) + " must be an integer " + range + unit + ", got '" + v + "'" +
                (ec == std::errc::result_out_of_range ? " (out of range)" : ""));
  }
  return n;
}

int debug_level() {
  static int level = env_int("ARRAYC_DEBUG", 0);
  return level;
}

}  // namespace arrayc::detail
