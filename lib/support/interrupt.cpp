#include "support/interrupt.h"

#include <atomic>

#include "arrayc/error.h"

namespace arrayc {
namespace {
// Lock-free, so that setting it from a signal handler is safe.
std::atomic<bool> g_interrupt{false};
static_assert(std::atomic<bool>::is_always_lock_free);
}  // namespace

Interrupted::Interrupted() : Error("interrupted") {}

void interrupt() { g_interrupt.store(true, std::memory_order_relaxed); }

namespace detail {
void check_interrupt() {
  // Taken when acted on: one request stops one computation (the thread pool's other chunks see
  // the failure of this one and stop too).
  if (g_interrupt.load(std::memory_order_relaxed) && g_interrupt.exchange(false)) throw Interrupted();
}
void clear_interrupt() { g_interrupt.store(false, std::memory_order_relaxed); }
}  // namespace detail

}  // namespace arrayc
