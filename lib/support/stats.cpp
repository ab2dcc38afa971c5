#include "support/stats.h"

namespace arrayc::detail {

Counters& counters() {
  static Counters c;
  return c;
}

}  // namespace arrayc::detail
