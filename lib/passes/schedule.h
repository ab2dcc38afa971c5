// Scheduling: a graph's fusion plan lowered to a Schedule (kernel/schedule.h), and its text.
#pragma once
#include <string>

#include "ir/graph.h"
#include "kernel/schedule.h"
#include "passes/fusion.h"

namespace arrayc::detail {

// Lowers a graph to a schedule: fusion decisions, then one kernel per fused group. Param leaves
// become Param sources (jit); Buffer leaves become Storage sources.
Schedule build_schedule(const Graph& g, const FusionOptions& opts);

// Text of the fused graph: each step with the nodes it computes, its inputs and outputs, and
// the reason every materialized node ends its kernel.
std::string print_schedule(const Schedule& s);

}  // namespace arrayc::detail
