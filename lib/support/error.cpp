#include "arrayc/error.h"

#include <cstdio>
#include <cstdlib>

namespace arrayc::detail {

void internal_error(const char* file, int line, const std::string& what) {
  std::fprintf(stderr, "arrayc internal error at %s:%d: %s\n", file, line, what.c_str());
  std::abort();
}

}  // namespace arrayc::detail
