#include "support/env.h"

#include <cstdlib>

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

int debug_level() {
  static int level = env_int("ARRAYC_DEBUG", 0);
  return level;
}

}  // namespace arrayc::detail
