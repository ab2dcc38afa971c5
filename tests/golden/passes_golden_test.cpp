// The graph passes one at a time, text in and text out: each case builds a graph through the
// API, runs one pass alone (simplify, lower-dot-to-loops, fusion, schedule) or composes strided
// views, and compares the printed input and result with tests/golden/passes/<case>.txt, where
// both stand next to each other (support/golden.h). After a deliberate change, regenerate the
// files with
//   ARRAYC_UPDATE_GOLDENS=1 build/tests/arrayc_tests --gtest_filter='PassGolden.*'
// and review their diff.
#include <gtest/gtest.h>

#include <functional>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "arrayc/arrayc.h"
#include "passes/pipeline.h"
#include "passes/strided_view.h"
#include "support/golden.h"

namespace {

using namespace arrayc;
using arrayc_test::expect_golden;
using detail::Graph;

Graph graph_of(const std::vector<Array>& outputs) {
  Graph g;
  for (const Array& a : outputs) g.outputs.push_back(a.node());
  return g;
}

// One Graph -> Graph pass alone: the graph before and after.
void expect_pass(const std::string& name, const std::string& what, const std::vector<Array>& outputs,
                 const std::string& pass, const std::function<Graph(const Graph&)>& run) {
  Graph g = graph_of(outputs);
  expect_golden("passes/" + name, what,
                {{"input", detail::print_graph(g)}, {pass, detail::print_graph(run(g))}});
}

// Fusion alone: the graph and the plan, every group with its members and the reason each root
// is materialized.
void expect_fusion(const std::string& name, const std::string& what, const std::vector<Array>& outputs,
                   bool fuse = true) {
  Graph g = graph_of(outputs);
  detail::FusionOptions opts;
  opts.fuse = fuse;
  expect_golden("passes/" + name, what, {{"input", detail::print_graph(g)},
                             {"fusion", detail::print_fusion_plan(detail::plan_fusion(g, opts))}});
}

std::string source_str(const detail::Source& s) {
  switch (s.kind) {
    case detail::Source::Kind::Storage: return "storage";
    case detail::Source::Kind::Param: return "param " + std::to_string(s.index);
    case detail::Source::Kind::Slot: return "slot " + std::to_string(s.index);
    case detail::Source::Kind::Product: return "product";
  }
  return "";
}

// The schedule's steps: each kernel's text form (its cache key) with what it reads and writes,
// each product's operands, and how every requested output is read.
std::string print_steps(const detail::Schedule& s) {
  std::ostringstream os;
  for (size_t i = 0; i < s.slots.size(); ++i)
    os << "slot " << i << ": " << dtype_name(s.slots[i].dtype) << shape_str(s.slots[i].shape) << "\n";
  for (const detail::Step& step : s.steps) {
    if (const auto* ks = std::get_if<detail::KernelStep>(&step.op)) {
      os << ks->kernel->str() << "  reads";
      for (const detail::Source& src : ks->inputs) os << " [" << source_str(src) << "]";
      os << ", writes";
      for (int slot : ks->outputs) os << " [slot " << slot << "]";
      os << "\n  params " << shape_str(ks->launch.params) << "\n";
    } else {
      const auto& d = std::get<detail::DotStep>(step.op);
      auto operand = [](const detail::MatrixOperand& m) {
        return source_str(m.src) + " offset=" + std::to_string(m.offset) + " " + std::to_string(m.rows) +
               "x" + std::to_string(m.cols) + " strides=[" + std::to_string(m.row_stride) + ", " +
               std::to_string(m.col_stride) + "]";
      };
      os << "dot " << dtype_name(d.dtype) << ": [" << operand(d.a) << "] x [" << operand(d.b) << "] -> [slot "
         << d.output << "]\n";
    }
  }
  for (const detail::OutputView& o : s.outputs)
    os << "output [" << source_str(o.src) << "] offset=" << o.offset << " " << dtype_name(o.dtype)
       << shape_str(o.shape) << " strides=" << shape_str(o.strides) << "\n";
  return os.str();
}

// Scheduling alone (its fusion plan included, as build_schedule makes it): the graph, the
// fused groups and the steps.
void expect_schedule(const std::string& name, const std::string& what, const std::vector<Array>& outputs) {
  Graph g = graph_of(outputs);
  detail::Schedule s = detail::build_schedule(g, detail::FusionOptions{});
  expect_golden("passes/" + name, what,
                {{"input", detail::print_graph(g)}, {"fused", detail::print_schedule(s)},
                 {"steps", print_steps(s)}});
}

Array vec8() { return array(std::vector<float>(8, 1.0f), {8}); }
Array mat34() { return array(std::vector<float>(12, 1.0f), {3, 4}); }

// ---- simplify

TEST(PassGolden, SimplifyDropsExactIdentities) {
  Array x = vec8();
  Array xi = array(std::vector<int32_t>(8, 1), {8});
  expect_pass("simplify_identities",
              "integer x*1, x+0, x-0 and -(-x) are x; where of a constant is a branch; float x*1, x/1 and "
              "x-0 stay (a float 1 or 0 is a kernel parameter, not folded: one kernel for every value)",
              {negative(negative(xi * 1 + 0 - 0)), where(full({8}, 1.0, DType::Bool), x, exp(x)),
               negative(negative((x * 1.0f) / 1.0f - 0.0f))},
              "simplify", detail::simplify);
}

TEST(PassGolden, SimplifyFoldsConstantsAndViewsOfConstants) {
  Array x = vec8();
  expect_pass("simplify_constants",
              "constant expressions fold through the interpreter; views of constants are constants",
              {x * (full({8}, 2.0) + 3.0f), transpose(full({4, 3}, 1.5)) + mat34()},
              "simplify", detail::simplify);
}

TEST(PassGolden, SimplifyCollapsesViewChains) {
  Array m = mat34();
  expect_pass("simplify_views", "reshape of reshape and transpose of transpose collapse",
              {exp(reshape(reshape(m, {2, 6}), {12})), exp(transpose(transpose(m)))}, "simplify",
              detail::simplify);
}

TEST(PassGolden, SimplifyTurnsSmallPowersIntoCheaperOps) {
  Array x = vec8();
  std::vector<Array> outs;
  for (double c : {0.0, 1.0, 2.0, -1.0, 0.5, 3.0}) outs.push_back(pow(x, full({8}, c)));
  expect_pass("simplify_powers",
              "x ** c for c in {0, 1, 2, -1, 0.5} becomes one cheaper op; x ** 3 stays pow",
              outs, "simplify", detail::simplify);
}

// ---- lower-dot-to-loops

TEST(PassGolden, IntegerProductsBecomeMultiplyAndSum) {
  Array a = reshape(arange(6), {2, 3});
  Array f = cast(a, DType::Float32);
  expect_pass("lower_dot_to_loops",
              "an integer dot becomes a broadcast multiply and a sum over k; a float dot stays",
              {dot(a, transpose(a)), dot(f, transpose(f))}, "lower-dot-to-loops", detail::lower_dot_to_loops);
}

// ---- fusion

TEST(PassGolden, FusionMakesSeluOneGroup) {
  Array x = vec8();
  expect_fusion("fusion_selu", "an elementwise chain is one group, materialized only as the output",
                {1.05f * where(x > 0.0f, x, 1.67f * exp(x) - 1.67f)});
}

TEST(PassGolden, FusionDisabledMaterializesEveryOp) {
  Array x = vec8();
  expect_fusion("fusion_disabled", "with fusion off every elementwise node is its own group",
                {1.05f * where(x > 0.0f, x, 1.67f * exp(x) - 1.67f)}, /*fuse=*/false);
}

TEST(PassGolden, FusionBoundariesCarryTheirReasons) {
  Array x = vec8();
  Array y = exp(x);
  Array m = mat34();
  expect_fusion("fusion_reasons",
                "reductions, shared producers, product operands and expanding broadcasts end groups; a "
                "producer chain fuses into its reduction",
                {y - sum(y), dot(exp(m), transpose(m)), reshape(sin(x), {8, 1}) + reshape(x, {1, 8}),
                 sum(x * x)});
}

TEST(PassGolden, FusionSharesOneGroupBetweenOutputsOfOneShape) {
  Array x = vec8();
  expect_fusion("fusion_multi_output",
                "requested outputs of one shape share one multi-output group; views of memory none",
                {exp(x) + 1.0f, exp(x) * 2.0f, transpose(mat34())});
}

// ---- schedule

TEST(PassGolden, ScheduleGivesStridesPerOperand) {
  Array m = mat34();
  expect_schedule("schedule_transpose", "a transposed operand reads with a generic stride along the last dim",
                  {transpose(m) * 2.0f + reshape(cast(arange(12), DType::Float32), {4, 3})});
}

TEST(PassGolden, ScheduleMergesContiguousDims) {
  Array a = array(std::vector<float>(24, 1.0f), {2, 3, 4});
  expect_schedule("schedule_collapse",
                  "a contiguous elementwise kernel of rank 3 becomes a 1-D loop; a broadcast keeps stride 0",
                  {exp(a) + 1.0f, a + broadcast_to(reshape(mat34(), {1, 3, 4}), {2, 3, 4})});
}

TEST(PassGolden, ScheduleOrdersReducedDimsLast) {
  Array m = mat34();
  expect_schedule("schedule_reductions", "a reduction's space is its kept dims first, the reduced ones last",
                  {sum(m, {0}), mean(exp(m), {1}), max(m)});
}

TEST(PassGolden, ScheduleCopiesWhereAReshapeCannotBeStrided) {
  Array m = mat34();
  expect_schedule("schedule_forced_copy",
                  "a reshape of a transposed computation needs a contiguous copy first",
                  {reshape(transpose(exp(m)), {12}) + 1.0f, dot(m, transpose(m))});
}

// ---- strided views

TEST(PassGolden, StridedViewsComposeAsNumpyViews) {
  using detail::StridedView;
  std::ostringstream os;
  StridedView c = StridedView::contiguous({3, 4});
  os << "contiguous [3, 4]: " << c.str() << "\n";
  StridedView t = c.transposed({1, 0});
  os << "transposed (1, 0): " << t.str() << "\n";
  auto reshape = [&](const std::string& what, const StridedView& v, const Shape& to) {
    std::optional<StridedView> r = v.reshaped(to);
    os << what << " reshaped to " << shape_str(to) << ": " << (r ? r->str() : "needs a copy") << "\n";
  };
  reshape("contiguous", c, {2, 6});
  reshape("contiguous", c, {12});
  reshape("contiguous", c, {3, 1, 4});
  reshape("transposed", t, {12});
  reshape("transposed", t, {4, 3, 1});
  reshape("transposed", t, {2, 2, 3});
  StridedView row = StridedView::contiguous({1, 4});
  os << "[1, 4] broadcast to [3, 4]: " << row.broadcast({3, 4}).str() << "\n";
  StridedView off{5, {2, 3}, {6, 2}};
  os << "offset view " << off.str() << " transposed (1, 0): " << off.transposed({1, 0}).str() << "\n";
  reshape("offset view", off, {6});
  reshape("offset view", off, {2, 3, 1});
  os << "contiguous is_contiguous: " << c.is_contiguous() << ", transposed: " << t.is_contiguous() << "\n";
  expect_golden("passes/strided_views",
                "views compose into one strided view where the strides can express them",
                {{"views", os.str()}});
}

}  // namespace
