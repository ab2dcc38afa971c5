#include "passes/pipeline.h"

#include <iostream>

#include "support/env.h"

namespace arrayc::detail {

Graph run_passes(const Graph& g) {
  struct Pass {
    const char* name;
    Graph (*run)(const Graph&);
  };
  static const Pass passes[] = {
      {"simplify", simplify},
      {"lower-dot-to-loops", lower_dot_to_loops},
  };
  bool debug = debug_level() >= 1;
  if (debug) std::cerr << "=== input graph\n" << print_graph(g);
  Graph cur = g;
  for (const Pass& p : passes) {
    Graph next = p.run(cur);
    if (debug) {
      std::cerr << "=== after " << p.name;
      if (next.outputs == cur.outputs) std::cerr << " (unchanged)\n";
      else std::cerr << "\n" << print_graph(next);
    }
    cur = std::move(next);
  }
  return cur;
}

}  // namespace arrayc::detail
