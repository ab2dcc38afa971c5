// The interactive REPL of the arrayc tool.
#pragma once
#include <string>

#include "session.h"

namespace arrayc::tool {

// Where the history is kept: $ARRAYC_HISTORY, else ~/.arrayc_history.
std::string history_path();

// Reads, runs and prints until :quit or end of input. Errors are reported and never end it.
int run_repl(Session& session);

}  // namespace arrayc::tool
