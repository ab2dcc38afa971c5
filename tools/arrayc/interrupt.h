// Ctrl-C in the tool: SIGINT asks the library to stop the computation in progress
// (arrayc::interrupt(), which raises arrayc::Interrupted at the next kernel or chunk) and is
// noted here, so that the REPL clears its line at the prompt and a batch run stops with 130.
#pragma once

namespace arrayc::tool {

// Installs the SIGINT handler (without SA_RESTART, so that a read at the prompt returns).
void install_sigint_handler();
// Whether SIGINT came since the last clear_sigint().
bool sigint_received();
void clear_sigint();

}  // namespace arrayc::tool
