// Test helpers over the compiler pipeline and its PTX: the kernel steps the pipeline makes for
// some outputs, the fused stage's text, and counting PTX instructions.
#pragma once
#include <iterator>
#include <regex>
#include <string>
#include <vector>

#include "arrayc/arrayc.h"
#include "engine/compile.h"

namespace arrayc_test {

// The kernel steps (not library calls) of the schedule for `outputs`, as the compile driver's
// front half (graph -> passes -> fusion -> schedule) makes them.
inline std::vector<arrayc::detail::KernelStep> kernel_steps(const std::vector<arrayc::Array>& outputs) {
  arrayc::detail::Graph g;
  for (const arrayc::Array& a : outputs) g.outputs.push_back(a.node());
  arrayc::detail::Schedule s = arrayc::detail::schedule_graph(g, arrayc::detail::CompileOptions{});
  std::vector<arrayc::detail::KernelStep> out;
  for (const arrayc::detail::Step& step : s.steps)
    if (const auto* ks = std::get_if<arrayc::detail::KernelStep>(&step.op)) out.push_back(*ks);
  return out;
}

// The fused stage's text of `a` (`:fused` in the REPL), and whether a text contains `part`.
inline std::string fused_text(const arrayc::Array& a) { return arrayc::inspect({a}, true).fused; }
inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Occurrences of a PTX instruction: `op` followed by a space or tab (so "ld.global.f32" does not
// count "ld.global.f32x" or the vector forms).
inline int ptx_count(const std::string& ptx, const std::string& op) {
  std::regex re("\\b" + std::regex_replace(op, std::regex("\\."), "\\.") + "[ \\t]");
  return static_cast<int>(std::distance(std::sregex_iterator(ptx.begin(), ptx.end(), re), std::sregex_iterator()));
}

}  // namespace arrayc_test
