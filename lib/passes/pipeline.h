// The graph passes in one place, in order (engine/compile.h runs them, then the schedule).
#pragma once
#include "ir/graph.h"
#include "passes/schedule.h"

namespace arrayc::detail {

// Graph -> Graph passes (each in its own file).
Graph simplify(const Graph& g);             // constant folding and algebraic identities
Graph lower_dot_to_loops(const Graph& g);    // dots BLAS cannot do -> multiply + sum (generated loops)

// Runs every pass in order; under ARRAYC_DEBUG >= 1 prints the graph after each one.
Graph run_passes(const Graph& g);

}  // namespace arrayc::detail
