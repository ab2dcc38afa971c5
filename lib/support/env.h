// Environment variables, read in one place (the table is docs/env_vars.md).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace arrayc::detail {

std::string env_string(const char* name, const std::string& fallback = "");
int env_int(const char* name, int fallback);
// The value of an integer setting that must be at least `min` (and at most `max`): std::nullopt
// when the variable is unset or empty; arrayc::Error "<name> must be an integer >= <min><unit>,
// got '<value>'" (with a max: "from <min> to <max><unit>"; " (out of range)" appended when the
// value does not fit in 64 bits) when it is not a whole integer of that range.
std::optional<int64_t> env_integer(const char* name, int64_t min, const char* unit = "",
                                   int64_t max = INT64_MAX);

// ARRAYC_DEBUG: 0 quiet, 1 the graph after each pass, 2 also fusion decisions, 3 also LLVM IR
// before and after optimization, 4 also assembly. Printed to stderr.
int debug_level();

}  // namespace arrayc::detail
