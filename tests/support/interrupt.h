// Evaluates an array while another thread calls arrayc::interrupt() as soon as the evaluation's
// first kernel has started (not after a fixed sleep, so that the machine's speed does not
// matter). Whether the evaluation stopped with arrayc::Interrupted.
#pragma once
#include <thread>

#include "arrayc/arrayc.h"

namespace arrayc_test {

inline bool interrupted_after_first_launch(const arrayc::Array& a) {
  const int64_t launches = arrayc::stats().kernel_launches;
  std::thread stopper([launches] {
    while (arrayc::stats().kernel_launches == launches) std::this_thread::yield();
    arrayc::interrupt();
  });
  bool stopped = false;
  try {
    a.eval();
  } catch (const arrayc::Interrupted&) {
    stopped = true;
  }
  stopper.join();
  return stopped;
}

}  // namespace arrayc_test
