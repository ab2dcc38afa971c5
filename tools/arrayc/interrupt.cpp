#include "interrupt.h"

#include <arrayc/error.h>

#include <csignal>

namespace arrayc::tool {
namespace {

volatile std::sig_atomic_t g_sigint = 0;

void on_sigint(int) {
  g_sigint = 1;
  arrayc::interrupt();  // an atomic store: async-signal-safe
}

}  // namespace

void install_sigint_handler() {
  struct sigaction sa {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;
  sigaction(SIGINT, &sa, nullptr);
}

bool sigint_received() { return g_sigint != 0; }
void clear_sigint() { g_sigint = 0; }

}  // namespace arrayc::tool
