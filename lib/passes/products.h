// product-structure: how each matrix product is computed, decided from the graph, and whether
// its elementwise consumers fuse into it as an epilogue. The fusion pass asks these questions
// and records their answers as reasons (`:fused` shows them); the schedule carries the form in
// its DotStep.
#pragma once
#include <string>

#include "ir/graph.h"
#include "kernel/schedule.h"

namespace arrayc::detail {

// A CPU product of 2 to kSkinnyMaxCols columns and kSkinnyMinRows or more rows, whose a is not a
// transpose, runs the generated skinny kernel (ProductForm::Skinny; docs/blas.md has the
// measurements behind the bounds).
constexpr int64_t kSkinnyMaxCols = 24;
constexpr int64_t kSkinnyMinRows = 128;

// Gram when one operand is the other transposed, by node (x @ x.T, x.T @ x; 2-D), MatVec when
// the product has one row or one column, Skinny (CPU) as above, General otherwise (on the CPU
// the host's tiled kernel within tiled_bounds, kernel/schedule.h).
ProductForm product_form(const Node& dot);

// The reason printed for a product's node: "matrix product (BLAS call)" on the CPU ("matrix
// product (generated skinny kernel)" for Skinny; the tiled kernel's bounds after it where a
// general product is within them), "matrix product (tiled product kernel)" on a GPU, followed by
// what product-structure chose for it when that is not a general product.
std::string product_reason(const Node& dot);

// Whether a product may take its elementwise consumers into its step: more than one element,
// float dtypes on the CPU, float32 and float64 on the GPU (whose product kernel runs them on its
// register tiles). The fusion pass then decides whether they join its kernel.
bool epilogue_candidate(const Node& dot);

// GPU products of 16-bit floats (issue 29). make_dot widens float16/bfloat16 operands to float32
// (a Cast under each operand's views) and rounds the float32 product back. On a GPU the product
// kernel reads the 16-bit values themselves (sm_80+: the f16/bf16 tensor cores, whose products of
// 16-bit inputs are exact and accumulate in float32; before that, widened in the kernel's loads),
// so those Casts are not materialized. Returns the 16-bit dtype when both operands of this
// float32 GPU product are (views of) Casts from it, else float32.
DType widened_half_operands(const Node& dot);
// The Cast under an operand's views that widened_half_operands found.
const NodeRef& widened_operand_cast(const NodeRef& operand);

}  // namespace arrayc::detail
