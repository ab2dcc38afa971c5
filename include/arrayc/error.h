// arrayc::Error is what every mistake a user can make raises: a shape mismatch, a dtype an op does
// not accept, a device that does not exist. Its message names the op and the shapes, dtypes or
// devices involved. Broken internal invariants are a different thing (detail::internal_error):
// they name file:line, because they are our bug, not the user's.
#pragma once
#include <stdexcept>
#include <string>

namespace arrayc {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What a computation stopped by interrupt() raises. The arrays that existed before it keep their
// values; the result it was computing has none.
class Interrupted : public Error {
 public:
  Interrupted();
};

// Asks the computation in progress to stop: tracing and compiling stop before the next kernel
// is compiled, CPU work at the next kernel or chunk of a kernel, GPU work at the next kernel
// launch, and the evaluation (eval(), a jit call, inspect(), reading values) raises Interrupted.
// Async-signal-safe: a SIGINT handler may call it. A request made while nothing runs is dropped
// when the next evaluation starts.
void interrupt();

namespace detail {
[[noreturn]] void internal_error(const char* file, int line, const std::string& what);
}  // namespace detail

}  // namespace arrayc

#define ARRAYC_INTERNAL_CHECK(cond, what)                                            \
  do {                                                                               \
    if (!(cond)) ::arrayc::detail::internal_error(__FILE__, __LINE__, (what));       \
  } while (0)
