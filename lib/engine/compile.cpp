#include "engine/compile.h"

#include <atomic>
#include <iostream>

#include "arrayc/jit.h"
#include "arrayc/matmul_precision.h"
#include "arrayc/products.h"
#include "arrayc/row_chains.h"
#include "backend/cuda/cuda_backend.h"
#include "engine/kernel_cache.h"
#include "passes/pipeline.h"
#include "support/interrupt.h"
#include "support/env.h"
#include "support/stats.h"

namespace arrayc::detail {

Schedule schedule_graph(const Graph& g, const CompileOptions& o, StageLog* log) {
  if (log) log->graph = print_graph(g);
  Graph optimized = run_passes(g);
  if (log) log->optimized = print_graph(optimized);
  FusionOptions fo;
  fo.fuse = o.fuse;
  fo.epilogues = o.epilogues;
  fo.row_chains = o.row_chains;
  Schedule s = build_schedule(optimized, fo);
  if (debug_level() >= 2) std::cerr << "=== fused\n" << print_schedule(s);
  if (log) log->fused = print_schedule(s);
  return s;
}

std::unique_ptr<Program> prepare(Schedule s, const CompileOptions& o, StageLog* log) {
  counters().plans++;
  auto p = std::make_unique<Program>();
  p->schedule = std::move(s);
  const Schedule& sched = p->schedule;
  Compiler& cache = kernel_cache();
  for (const Step& step : sched.steps) {
    check_interrupt();  // arrayc::interrupt(): a long compile stops between kernels
    Device d = step_device(step, sched);
    Backend& b = backend_for(d);
    p->launches.push_back(b.plan(step, sched, d, o.plan, cache));
    if (log)
      for (StageTexts& st : b.stages(step, sched, d, o.plan, cache)) {
        log->target = st.target;
        log->kernels.push_back(std::move(st));
      }
  }
  if (log) {
    auto copy = std::make_shared<Schedule>(sched);
    log->ptx = [copy, ctx = o.plan](int sm) {
      std::string out;
      for (const Step& step : copy->steps) out += ptx_for(step, *copy, sm, ctx);
      return out;
    };
  }
  return p;
}

std::unique_ptr<Program> compile(const Graph& g, const CompileOptions& o, StageLog* log) {
  return prepare(schedule_graph(g, o, log), o, log);
}

namespace {
std::atomic<bool>& fusion_flag() {
  static std::atomic<bool> f{fusion_setting()};
  return f;
}
std::atomic<bool>& fast_math_flag() {
  static std::atomic<bool> f{fast_math_setting()};
  return f;
}
// matrix products (issue 29)
std::atomic<bool>& epilogue_flag() {
  static std::atomic<bool> f{epilogue_setting()};
  return f;
}
// row chains (issue 29)
std::atomic<bool>& row_chain_flag() {
  static std::atomic<bool> f{row_chain_setting()};
  return f;
}
}  // namespace

CompileOptions user_compile_options() {
  CompileOptions o;
  o.fuse = fusion_flag();
  o.plan.user.fast_math = fast_math_flag();
  o.epilogues = epilogue_flag();
  o.row_chains = row_chain_flag();
  o.plan.tf32_products = matmul_precision() == MatmulPrecision::High;  // matmul precision (issue 29)
  return o;
}

}  // namespace arrayc::detail

namespace arrayc {

void set_fusion(bool enabled) { detail::fusion_flag() = enabled; }
bool fusion_enabled() { return detail::fusion_flag(); }
void set_fast_math(bool enabled) { detail::fast_math_flag() = enabled; }
bool fast_math_enabled() { return detail::fast_math_flag(); }
void set_epilogue_fusion(bool enabled) { detail::epilogue_flag() = enabled; }
bool epilogue_fusion_enabled() { return detail::epilogue_flag(); }
// row chains (issue 29)
void set_row_chain_fusion(bool enabled) { detail::row_chain_flag() = enabled; }
bool row_chain_fusion_enabled() { return detail::row_chain_flag(); }
// matmul precision (issue 29)
namespace {
std::atomic<MatmulPrecision>& matmul_precision_flag() {  // ARRAYC_MATMUL_PRECISION, read at the first use
  static std::atomic<MatmulPrecision> p{detail::tf32_products_setting().value_or(false) ? MatmulPrecision::High
                                                                                        : MatmulPrecision::Highest};
  return p;
}
}  // namespace
void set_matmul_precision(MatmulPrecision p) { matmul_precision_flag() = p; }
MatmulPrecision matmul_precision() { return matmul_precision_flag(); }

}  // namespace arrayc
