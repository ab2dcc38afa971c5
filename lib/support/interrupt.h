// The flag behind arrayc::interrupt() (arrayc/error.h), read between kernels by the executor
// and between chunks by the thread pool.
#pragma once

namespace arrayc::detail {

// Raises arrayc::Interrupted when interrupt() was called since the evaluation started, and
// takes the request.
void check_interrupt();
// Drops a pending request: called where an evaluation starts (eval(), a jit call, inspect()),
// before it traces or compiles, so that a request during a compile stops that evaluation.
void clear_interrupt();

}  // namespace arrayc::detail
