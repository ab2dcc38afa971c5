// Checking arrays against the reference interpreter (lib/ir/interpreter.h).
//
// expect_matches_reference(a) takes a's graph before evaluation, interprets it, then evaluates a
// through the library and compares element by element:
//  - bool and integer dtypes exactly;
//  - floats within an error bound that the interpreter derives per element from a table of
//    ULPs per op (op_ulps below) and the sensitivity of each op to its inputs' errors, so one op
//    is held to its ULPs and a long expression or a reduction gets what it has earned: a sum of n
//    terms is allowed ulps * eps * sqrt(n) * (sqrt(sum x^2) + |sum x|) (the typical rounding
//    error of any summation order, a random walk over the partial sums), a subtraction that
//    cancels passes on its inputs' absolute error;
//  - NaN must match NaN, infinities must match exactly with their sign; -0.0 and 0.0 count as
//    equal unless CompareOptions::signed_zero;
//  - elements whose bound is infinite (a comparison of two values closer than their errors, a
//    cast to int at a boundary) are not checked, and an array where no element could be checked
//    fails.
// The first few mismatches are printed with their index, got, want and the distance in ULPs.
#pragma once
#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "arrayc/arrayc.h"
#include "ir/interpreter.h"
#include "ir/node.h"

namespace arrayc_test {

using arrayc::detail::HostArray;

struct CompareOptions {
  bool signed_zero = false;         // -0.0 vs 0.0 is a mismatch
  double ulp_scale = 1.0;           // multiplies every op's ULP budget
  std::vector<HostArray> params;    // values of the graph's Param nodes, if any
  int max_reports = 8;              // mismatches printed
};

// The ULPs an implementation may be off by for one application of `op` giving `dtype` (beyond
// the error of its inputs). Reductions and Dot: the factor of eps * sqrt(n) * (sqrt(sum t^2) +
// |sum t|) over their n terms t.
double op_ulps(arrayc::detail::Op op, arrayc::DType dtype);

// The interpreted value of a graph, with error bounds.
HostArray reference_of(const arrayc::detail::NodeRef& node, const CompareOptions& options = {});

// Evaluates `got` and compares it with the interpreted `graph` (normally got.node() before
// evaluation; for jit outputs, the same expression built lazily).
::testing::AssertionResult matches_reference(const arrayc::Array& got,
                                             const arrayc::detail::NodeRef& graph,
                                             const CompareOptions& options = {});
::testing::AssertionResult matches_reference(const arrayc::Array& a, const CompareOptions& options = {});

// Compares library values with interpreted ones (both already computed).
::testing::AssertionResult matches_values(const HostArray& got, const HostArray& want,
                                          const CompareOptions& options = {});

// The library's values of `a` (evaluating it) as a HostArray of a's dtype and shape.
HostArray values_of(const arrayc::Array& a);

// The brief's form: EXPECT_TRUE(matches_reference(a, options)).
void expect_matches_reference(const arrayc::Array& a, const CompareOptions& options = {});

// Counts what a computation does: stats() deltas around f().
struct StatsDelta {
  int64_t traces = 0, compiles = 0, cache_hits = 0, kernel_launches = 0, plans = 0, resizes = 0;
};
StatsDelta stats_delta(const std::function<void()>& f);

// Sets fusion on or off for a scope.
class FusionScope {
 public:
  explicit FusionScope(bool enabled) : saved_(arrayc::fusion_enabled()) { arrayc::set_fusion(enabled); }
  ~FusionScope() { arrayc::set_fusion(saved_); }
  FusionScope(const FusionScope&) = delete;
  FusionScope& operator=(const FusionScope&) = delete;

 private:
  bool saved_;
};

// Counts the nodes of a graph that need a kernel of their own when fusion is off: every node
// that is not a leaf and not a view (elementwise ops, casts, reductions, products, copies).
int64_t count_compute_nodes(const arrayc::detail::NodeRef& root);

}  // namespace arrayc_test

// Failures point at the caller's line.
#define EXPECT_MATCHES_REFERENCE(...) EXPECT_TRUE(::arrayc_test::matches_reference(__VA_ARGS__))
