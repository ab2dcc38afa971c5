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
bool interrupt_requested() { return g_interrupt.load(std::memory_order_relaxed); }
void check_interrupt() {
  if (interrupt_requested()) throw Interrupted();
}
void clear_interrupt() { g_interrupt.store(false, std::memory_order_relaxed); }
}  // namespace detail

}  // namespace arrayc
