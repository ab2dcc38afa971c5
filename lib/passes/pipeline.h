// The compiler pipeline in one place: the graph passes in order, then the schedule.
#pragma once
#include "ir/graph.h"
#include "passes/schedule.h"

namespace arrayc::detail {

// Graph -> Graph passes (each in its own file).
Graph simplify(const Graph& g);             // constant folding and algebraic identities
Graph lower_dot_to_loops(const Graph& g);    // dots BLAS cannot do -> multiply + sum (generated loops)

// Runs every pass in order; under ARRAYC_DEBUG >= 1 prints the graph after each one.
Graph run_passes(const Graph& g);

// Passes, then fusion and scheduling (printed under ARRAYC_DEBUG >= 2).
Schedule compile_graph(const Graph& g, bool fuse);

}  // namespace arrayc::detail
