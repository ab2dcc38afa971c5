#include "passes/products.h"

namespace arrayc::detail {
namespace {

// Whether t is x transposed in its last two dims (a 2-D transpose).
bool is_transpose_of(const Node& t, const Node& x) {
  return t.op == Op::Transpose && t.rank() == 2 && t.inputs[0].get() == &x && t.ints == std::vector<int64_t>{1, 0};
}

// Whether the generated skinny kernel (backend/host/skinny.h) computes this CPU product: few
// columns of b, enough rows, a read along its rows (not a transpose, which BLAS reads in place).
// The bounds are measurements against OpenBLAS (docs/blas.md, "Skinny products").
bool skinny(const Node& dot, int64_t m, int64_t n) {
  const Node& a = *dot.inputs[0];
  return dot.device.kind == Device::Kind::CPU && dot.rank() == 2 && n >= 2 && n <= kSkinnyMaxCols &&
         m >= kSkinnyMinRows && a.op != Op::Transpose &&
         (dot.dtype == DType::Float32 || dot.dtype == DType::Float64);
}

// Whether this CPU general product is in the tiled kernel's bounds (kernel/schedule.h): the host
// backend takes the kernel for it where its rule allows (it packs a transposed a, and b, whatever
// their strides).
bool tiled_candidate(const Node& dot) {
  const Node& a = *dot.inputs[0];
  if (dot.device.kind != Device::Kind::CPU || dot.rank() != 2) return false;
  return tiled_bounds(dot.shape[0], dot.shape[1], a.shape.back()) && (dot.dtype == DType::Float32 || dot.dtype == DType::Float64);
}

// The same for a batch of CPU products (rank 3 and more): each product's multiply-adds within
// the batched bounds.
bool tiled_batch_candidate(const Node& dot) {
  const Node& a = *dot.inputs[0];
  if (dot.device.kind != Device::Kind::CPU || dot.rank() < 3) return false;
  return tiled_batch_bounds(dot.shape[dot.rank() - 2], dot.shape.back(), a.shape.back()) &&
         (dot.dtype == DType::Float32 || dot.dtype == DType::Float64);
}

}  // namespace

ProductForm product_form(const Node& dot) {
  const Node& a = *dot.inputs[0];
  const Node& b = *dot.inputs[1];
  int64_t m = dot.shape[dot.rank() - 2], n = dot.shape.back();
  if (m == 1 || n == 1) return ProductForm::MatVec;
  if (dot.rank() == 2 && (is_transpose_of(b, a) || is_transpose_of(a, b))) return ProductForm::Gram;
  if (skinny(dot, m, n)) return ProductForm::Skinny;
  return ProductForm::General;
}

std::string product_reason(const Node& dot) {
  std::string r = dot.device.kind == Device::Kind::GPU ? "matrix product (tiled product kernel)" : "matrix product (BLAS call)";
  if (!is_float(dot.dtype)) return r;
  bool cpu = dot.device.kind == Device::Kind::CPU;
  // issue 29: a GPU product of 16-bit operands reads them as they are, x @ x.T included.
  if (!cpu && widened_half_operands(dot) != DType::Float32) {
    r += "; float16/bfloat16 operands read as they are, on the tensor cores (sm_80+; on sm_90 wgmma, TMA loads)";
    if (product_form(dot) == ProductForm::Gram)
      return r + "; product-structure: x @ x.T, both triangles there (before sm_80 the tiles of one triangle, mirrored)";
  }
  switch (product_form(dot)) {
    case ProductForm::General: {
      if (tiled_batch_candidate(dot)) {
        int64_t m = dot.shape[dot.rank() - 2], n = dot.shape.back(), k = dot.inputs[0]->shape.back();
        return r + "; product-structure: a batch of " + std::to_string(shape_numel(dot.shape) / (m * n)) + " products of " +
               std::to_string(m) + " x " + std::to_string(k) + " x " + std::to_string(n) +
               " (2^16 to 2^27 multiply-adds each), the generated tiled kernel where the host has 256- or 512-bit vectors";
      }
      if (!tiled_candidate(dot)) return r;
      int64_t work = product_work(dot.shape[0], dot.shape[1], dot.inputs[0]->shape.back());
      return r + "; product-structure: " + std::to_string(dot.shape[0]) + " x " + std::to_string(dot.inputs[0]->shape.back()) +
             " x " + std::to_string(dot.shape[1]) +
             (work > kTiledMaxWork ? " (over 2^30 multiply-adds, 2^20 outputs or more), the generated tiled kernel, both operands packed a step of k at a time,"
                                   : " (2^21 to 2^30 multiply-adds), the generated tiled kernel") +
             " where the host has " + (work < kTiledNarrowMaxWork ? "256- or 512-bit vectors" : "512-bit vectors");
    }
    case ProductForm::Skinny:
      return "matrix product (generated skinny kernel); product-structure: " + std::to_string(dot.shape.back()) +
             " columns of b (2 to " + std::to_string(kSkinnyMaxCols) + ") and " + std::to_string(dot.shape[0]) +
             " rows (" + std::to_string(kSkinnyMinRows) +
             " or more): a streamed once, b held in cache, faster than BLAS's gemm there (docs/blas.md)";
    case ProductForm::MatVec: return r + "; product-structure: one row or column" + (cpu ? ", gemv" : "");
    case ProductForm::Gram:
      return r + (cpu ? "; product-structure: x @ x.T, one triangle (syrk), mirrored"
                      : "; product-structure: x @ x.T, the tiles of one triangle, mirrored");
  }
  return r;
}

bool epilogue_candidate(const Node& dot) {
  if (shape_numel(dot.shape) <= 1) return false;
  if (dot.device.kind == Device::Kind::CPU) return is_float(dot.dtype);
  // The GPU's product kernel (float32, float64) applies it to each tile in registers.
  return dot.dtype == DType::Float32 || dot.dtype == DType::Float64;
}

// issue 29: 16-bit operands read as they are by a GPU product.
const NodeRef& widened_operand_cast(const NodeRef& operand) {
  const NodeRef* p = &operand;
  while (op_kind((*p)->op) == OpKind::View) p = &(*p)->inputs[0];
  return *p;
}

DType widened_half_operands(const Node& dot) {
  if (dot.device.kind != Device::Kind::GPU || dot.dtype != DType::Float32) return DType::Float32;
  DType from = DType::Float32;
  for (const NodeRef& in : dot.inputs) {
    const NodeRef& c = widened_operand_cast(in);
    if (c->op != Op::Cast || !is_half(c->inputs[0]->dtype)) return DType::Float32;
    if (from != DType::Float32 && from != c->inputs[0]->dtype) return DType::Float32;
    from = c->inputs[0]->dtype;
  }
  return from;
}

}  // namespace arrayc::detail
