// Environment variables, read in one place (the table is docs/env_vars.md).
#pragma once
#include <string>

namespace arrayc::detail {

std::string env_string(const char* name, const std::string& fallback = "");
int env_int(const char* name, int fallback);

// ARRAYC_DEBUG: 0 quiet, 1 the graph after each pass, 2 also fusion decisions, 3 also LLVM IR
// before and after optimization, 4 also assembly. Printed to stderr.
int debug_level();

}  // namespace arrayc::detail
