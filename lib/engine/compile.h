// The compile driver: the one way from a Graph to a ready Program, called by eager evaluation,
// jit, inspect, the tool (through inspect) and the test helpers alike.
//
//   Graph -> run_passes -> build_schedule -> per step: backend_for(device).plan(step) -> Program
//
// plan() compiles each step's code through the kernel cache and decides its launch (grids,
// split reductions and their combine kernels, argument layouts); running a Program (executor.h)
// only binds buffers and calls the launches. Under ARRAYC_DEBUG the stages are printed as they
// are made; when a StageLog is passed they are recorded, so what inspect() shows is what runs.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "ir/graph.h"
#include "kernel/schedule.h"
#include "support/stats.h"

namespace arrayc::detail {

struct CompileOptions {
  bool fuse = true;  // false: one kernel per op
  bool epilogues = true;  // false: a product's elementwise consumers stay out of its step
  bool row_chains = true;  // false: reductions along rows are materialized (passes/row_chains.h)
  PlanContext plan;  // the user's emit options; what is known of jit parameters
};

// The options the user chose: set_fusion / ARRAYC_FUSION, set_fast_math / ARRAYC_FAST_MATH,
// set_epilogue_fusion / ARRAYC_EPILOGUE.
CompileOptions user_compile_options();

// A schedule with a launch for every step: ready to run many times. The launches refer to the
// schedule's steps, so a Program stays where it was made (it is handed out by pointer).
struct Program {
  Schedule schedule;
  std::vector<std::unique_ptr<Launch>> launches;  // per step; null when a step has nothing to run
  ProgramCount count;  // bounded memory (issue 26): bounds_info().programs
  Program() = default;
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
};

// Every stage of one compile, as text.
struct StageLog {
  std::string graph;      // as built
  std::string optimized;  // after the graph passes
  std::string fused;      // the schedule: kernels, the nodes each computes, why each boundary is there
  std::vector<StageTexts> kernels;  // per compiled unit, in step order
  std::string target;               // of the last kernel step
  std::function<std::string(int sm)> ptx;  // every step's PTX for sm_<sm>, made on demand
};

// The front half: passes, fusion and scheduling.
Schedule schedule_graph(const Graph& g, const CompileOptions& o, StageLog* log = nullptr);
// The back half: every step planned (and compiled) on its device's backend.
std::unique_ptr<Program> prepare(Schedule s, const CompileOptions& o, StageLog* log = nullptr);
// Both.
std::unique_ptr<Program> compile(const Graph& g, const CompileOptions& o, StageLog* log = nullptr);

}  // namespace arrayc::detail
