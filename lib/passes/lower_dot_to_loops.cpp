// Integer products become a broadcast multiply and a sum over k, which fusion turns into one
// generated reduction kernel that reads each operand in place. Float products stay Dot nodes:
// OpenBLAS runs them on the CPU, the generated tiled kernel (codegen/nvptx/gemm.h) on a GPU.
#include "ir/build.h"
#include "passes/pipeline.h"

namespace arrayc::detail {

Graph lower_dot_to_loops(const Graph& g) {
  return rewrite(g, [](const NodeRef& n, const std::vector<NodeRef>& in, bool changed) {
    if (n->op != Op::Dot || is_float(n->dtype)) return changed ? rebuild(n, in) : n;
    const NodeRef& a = in[0];  // [.., m, k]
    const NodeRef& b = in[1];  // [.., k, n]
    Shape sa = a->shape, sb = b->shape;
    sa.push_back(1);                            // [.., m, k, 1]
    sb.insert(sb.end() - 2, 1);                 // [.., 1, k, n]
    Shape full = a->shape;
    full.push_back(b->shape.back());            // [.., m, k, n]
    NodeRef prod = make_elementwise(Op::Mul, {make_broadcast_to(make_reshape(a, sa), full),
                                              make_broadcast_to(make_reshape(b, sb), full)});
    // Sum accumulates int32 in int64; the cast back wraps exactly as int32 arithmetic would.
    return make_cast(make_reduce(Op::Sum, prod, {static_cast<int64_t>(full.size()) - 2}, false), n->dtype);
  });
}

}  // namespace arrayc::detail
