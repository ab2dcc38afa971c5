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
// the product has one row or one column, Skinny (CPU) as above, General otherwise.
ProductForm product_form(const Node& dot);

// The reason printed for a product's node: "matrix product (BLAS call)" on the CPU ("matrix
// product (generated skinny kernel)" for Skinny), "matrix product (tiled product kernel)" on a
// GPU, followed by what product-structure chose for it when that is not a general product.
std::string product_reason(const Node& dot);

// Whether a product may take its elementwise consumers into its step: more than one element,
// float dtypes on the CPU, float32 and float64 on the GPU (whose product kernel runs them on its
// register tiles). The fusion pass then decides whether they join its kernel.
bool epilogue_candidate(const Node& dot);

}  // namespace arrayc::detail
