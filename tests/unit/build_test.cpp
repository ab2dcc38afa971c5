// Shape and dtype inference of the node constructors (lib/ir/build.h), numpy's promotion table,
// scalar typing through the public API, hash-consing, and the messages of every user error the
// constructors raise.
#include <gtest/gtest.h>
#include <cmath>

#include "arrayc/arrayc.h"
#include "ir/build.h"
#include "support/errors.h"

namespace arrayc::detail {
namespace {

using D = DType;
const Device kCpu{};

NodeRef p(D t, const Shape& s, int64_t index = 0) { return make_param(index, t, s, kCpu); }
NodeRef ew(Op op, std::vector<NodeRef> in) { return make_elementwise(op, in); }

// numpy.result_type for every pair of our dtypes (numpy >= 2, arrays on both sides).
TEST(Promotion, MatchesNumpyResultType) {
  struct Row {
    D a, b, want;
  };
  const Row table[] = {
      {D::Bool, D::Bool, D::Bool},         {D::Bool, D::Int32, D::Int32},
      {D::Bool, D::Int64, D::Int64},       {D::Bool, D::Float32, D::Float32},
      {D::Bool, D::Float64, D::Float64},   {D::Int32, D::Int32, D::Int32},
      {D::Int32, D::Int64, D::Int64},      {D::Int32, D::Float32, D::Float64},
      {D::Int32, D::Float64, D::Float64},  {D::Int64, D::Int64, D::Int64},
      {D::Int64, D::Float32, D::Float64},  {D::Int64, D::Float64, D::Float64},
      {D::Float32, D::Float32, D::Float32}, {D::Float32, D::Float64, D::Float64},
      {D::Float64, D::Float64, D::Float64},
  };
  for (const Row& r : table) {
    SCOPED_TRACE(std::string(dtype_name(r.a)) + " with " + dtype_name(r.b));
    EXPECT_EQ(promote_types(r.a, r.b), r.want);
    EXPECT_EQ(promote_types(r.b, r.a), r.want);
    // The same through an op that keeps the common dtype (bool + bool is logical or).
    NodeRef n = ew(Op::Add, {p(r.a, {2}), p(r.b, {2}, 1)});
    EXPECT_EQ(n->dtype, r.want);
    EXPECT_EQ(n->inputs[0]->dtype, r.want);
    EXPECT_EQ(n->inputs[1]->dtype, r.want);
  }
}

TEST(Inference, ElementwiseDtypes) {
  EXPECT_EQ(ew(Op::Lt, {p(D::Int32, {3}), p(D::Float32, {3}, 1)})->dtype, D::Bool);
  EXPECT_EQ(ew(Op::Lt, {p(D::Int32, {3}), p(D::Float32, {3}, 1)})->inputs[0]->dtype, D::Float64);
  EXPECT_EQ(ew(Op::Not, {p(D::Float32, {3})})->dtype, D::Bool);
  EXPECT_EQ(ew(Op::And, {p(D::Int32, {3}), p(D::Float32, {3}, 1)})->dtype, D::Bool);
  EXPECT_EQ(ew(Op::Exp, {p(D::Int32, {3})})->dtype, D::Float64);
  EXPECT_EQ(ew(Op::Exp, {p(D::Int64, {3})})->dtype, D::Float64);
  EXPECT_EQ(ew(Op::Sqrt, {p(D::Bool, {3})})->dtype, D::Float16);  // numpy
  EXPECT_EQ(ew(Op::Sin, {p(D::Float32, {3})})->dtype, D::Float32);
  EXPECT_EQ(ew(Op::Div, {p(D::Int32, {3}), p(D::Int32, {3}, 1)})->dtype, D::Float64);
  EXPECT_EQ(ew(Op::Div, {p(D::Bool, {3}), p(D::Bool, {3}, 1)})->dtype, D::Float64);
  EXPECT_EQ(ew(Op::Div, {p(D::Float32, {3}), p(D::Bool, {3}, 1)})->dtype, D::Float32);
  EXPECT_EQ(ew(Op::Neg, {p(D::Int32, {3})})->dtype, D::Int32);
  EXPECT_EQ(ew(Op::Abs, {p(D::Bool, {3})})->dtype, D::Bool);
  EXPECT_EQ(ew(Op::Pow, {p(D::Int32, {3}), p(D::Int64, {3}, 1)})->dtype, D::Int64);
  EXPECT_EQ(ew(Op::Where, {p(D::Int32, {3}), p(D::Int32, {3}, 1), p(D::Float32, {3}, 2)})->dtype, D::Float64);
  EXPECT_EQ(ew(Op::Where, {p(D::Float32, {3}), p(D::Int32, {3}, 1), p(D::Int32, {3}, 2)})->inputs[0]->dtype,
            D::Bool);
  // numpy: bool + bool is or, bool * bool is and, maximum/minimum likewise.
  EXPECT_EQ(ew(Op::Add, {p(D::Bool, {3}), p(D::Bool, {3}, 1)})->op, Op::Or);
  EXPECT_EQ(ew(Op::Mul, {p(D::Bool, {3}), p(D::Bool, {3}, 1)})->op, Op::And);
  EXPECT_EQ(ew(Op::Maximum, {p(D::Bool, {3}), p(D::Bool, {3}, 1)})->op, Op::Or);
  EXPECT_EQ(ew(Op::Minimum, {p(D::Bool, {3}), p(D::Bool, {3}, 1)})->op, Op::And);
  EXPECT_EQ(make_cast(p(D::Int32, {3}), D::Float32)->dtype, D::Float32);
  EXPECT_EQ(make_cast(p(D::Int32, {3}), D::Int32), p(D::Int32, {3}));  // no-op cast
}

TEST(Inference, Broadcasting) {
  EXPECT_EQ(broadcast_shapes("add", {2, 1, 3}, {4, 1}), (Shape{2, 4, 3}));
  EXPECT_EQ(broadcast_shapes("add", {}, {5}), (Shape{5}));
  EXPECT_EQ(broadcast_shapes("add", {0, 1}, {1, 3}), (Shape{0, 3}));
  EXPECT_EQ(broadcast_shapes("add", {1}, {0}), (Shape{0}));
  NodeRef n = ew(Op::Add, {p(D::Float32, {2, 1, 3}), p(D::Float32, {4, 1}, 1)});
  EXPECT_EQ(n->shape, (Shape{2, 4, 3}));
  for (const NodeRef& in : n->inputs) EXPECT_EQ(in->shape, (Shape{2, 4, 3}));  // explicit broadcasts
  EXPECT_EQ(n->inputs[1]->op, Op::Broadcast);
  EXPECT_EQ(n->inputs[1]->inputs[0]->shape, (Shape{1, 4, 1}));  // rank first, via reshape
  EXPECT_EQ(ew(Op::Where, {p(D::Bool, {3, 1}), p(D::Float32, {1, 4}, 1), p(D::Float32, {}, 2)})->shape,
            (Shape{3, 4}));
}

TEST(Inference, Views) {
  NodeRef x = p(D::Float32, {2, 3, 4});
  EXPECT_EQ(make_reshape(x, {4, -1})->shape, (Shape{4, 6}));
  EXPECT_EQ(make_reshape(x, {-1})->shape, (Shape{24}));
  EXPECT_EQ(make_reshape(x, {2, 3, 4}), x);
  EXPECT_EQ(make_reshape(p(D::Float32, {0, 3}), {-1})->shape, (Shape{0}));
  EXPECT_EQ(make_reshape(p(D::Float32, {1}), {})->shape, (Shape{}));
  NodeRef t = make_transpose(x, {2, 0, 1});
  EXPECT_EQ(t->shape, (Shape{4, 2, 3}));
  EXPECT_EQ(t->ints, (std::vector<int64_t>{2, 0, 1}));
  EXPECT_EQ(make_transpose(x, {-1, 0, 1})->ints, (std::vector<int64_t>{2, 0, 1}));
  EXPECT_EQ(make_transpose(x, {0, 1, 2}), x);
  EXPECT_EQ(make_broadcast_to(p(D::Int32, {3, 1}), {2, 3, 5})->shape, (Shape{2, 3, 5}));
  EXPECT_EQ(make_broadcast_to(p(D::Int32, {3}), {0, 3})->shape, (Shape{0, 3}));
  EXPECT_EQ(make_copy(x)->shape, x->shape);
}

TEST(Inference, Reductions) {
  NodeRef x = p(D::Float32, {2, 3, 4});
  EXPECT_EQ(make_reduce(Op::Sum, x, {1}, false)->shape, (Shape{2, 4}));
  EXPECT_EQ(make_reduce(Op::Sum, x, {2, 0}, false)->ints, (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(make_reduce(Op::Sum, x, {-1}, true)->shape, (Shape{2, 3, 1}));
  EXPECT_EQ(make_reduce(Op::Max, x, {0, 1, 2}, true)->shape, (Shape{1, 1, 1}));
  EXPECT_EQ(make_reduce_all(Op::Mean, x)->shape, (Shape{}));
  EXPECT_EQ(make_reduce_all(Op::Sum, p(D::Int32, {3}))->dtype, D::Int64);
  EXPECT_EQ(make_reduce_all(Op::Sum, p(D::Bool, {3}))->dtype, D::Int64);
  EXPECT_EQ(make_reduce_all(Op::Prod, p(D::Int32, {3}))->dtype, D::Int64);
  EXPECT_EQ(make_reduce_all(Op::Sum, p(D::Float32, {3}))->dtype, D::Float32);
  EXPECT_EQ(make_reduce_all(Op::Mean, p(D::Int32, {3}))->dtype, D::Float64);
  EXPECT_EQ(make_reduce_all(Op::Max, p(D::Int32, {3}))->dtype, D::Int32);
  EXPECT_EQ(make_reduce_all(Op::Min, p(D::Bool, {3}))->dtype, D::Bool);
  EXPECT_EQ(make_reduce(Op::Max, p(D::Float32, {0, 3}), {1}, false)->shape, (Shape{0}));
  EXPECT_EQ(make_reduce(Op::Sum, p(D::Float32, {0, 3}), {0}, false)->shape, (Shape{3}));
  EXPECT_EQ(make_reduce_all(Op::Sum, p(D::Float32, {})), p(D::Float32, {}));  // nothing to reduce
}

TEST(Inference, Products) {
  NodeRef m23 = p(D::Float32, {2, 3}), m34 = p(D::Float32, {3, 4}, 1), v3 = p(D::Float32, {3}, 2);
  EXPECT_EQ(make_dot(m23, m34)->shape, (Shape{2, 4}));
  EXPECT_EQ(make_dot(m23, v3)->shape, (Shape{2}));
  EXPECT_EQ(make_dot(v3, m34)->shape, (Shape{4}));
  EXPECT_EQ(make_dot(v3, v3)->shape, (Shape{}));
  EXPECT_EQ(make_dot(p(D::Float32, {}), m23)->shape, (Shape{2, 3}));  // numpy: scalar multiply
  EXPECT_EQ(make_dot(p(D::Int32, {2, 3}), p(D::Float32, {3}, 1))->dtype, D::Float64);
  EXPECT_EQ(make_matmul(p(D::Float32, {2, 1, 3, 4}), p(D::Float32, {5, 4, 6}, 1))->shape, (Shape{2, 5, 3, 6}));
  EXPECT_EQ(make_matmul(v3, p(D::Float32, {7, 3, 2}, 1))->shape, (Shape{7, 2}));
  EXPECT_EQ(make_matmul(p(D::Float32, {7, 2, 3}), v3)->shape, (Shape{7, 2}));
  EXPECT_EQ(make_matmul(m23, m34)->shape, (Shape{2, 4}));
  NodeRef batched = make_matmul(p(D::Float32, {5, 2, 3}), p(D::Float32, {3, 4}, 1));
  EXPECT_EQ(batched->shape, (Shape{5, 2, 4}));
  EXPECT_EQ(make_matmul(p(D::Int64, {2, 3}), p(D::Int32, {3, 2}, 1))->dtype, D::Int64);
}

TEST(Inference, Leaves) {
  EXPECT_EQ(make_random(Op::RandNormal, {3, 2}, D::Float64, 1, kCpu)->shape, (Shape{3, 2}));
  EXPECT_EQ(make_random(Op::RandUniform, {}, D::Float32, 1, kCpu)->dtype, D::Float32);
  EXPECT_EQ(make_iota({5}, D::Int32, kCpu)->shape, (Shape{5}));
  EXPECT_EQ(make_constant(Scalar::of(D::Int32, 3.9), {2}, kCpu)->value.i, 3);
}

TEST(HashConsing, SameExpressionSameNode) {
  NodeRef x = p(D::Float32, {4}), y = p(D::Float32, {4}, 1);
  NodeRef a = ew(Op::Mul, {ew(Op::Add, {x, y}), ew(Op::Exp, {x})});
  NodeRef b = ew(Op::Mul, {ew(Op::Add, {x, y}), ew(Op::Exp, {x})});
  EXPECT_EQ(a.get(), b.get());
  EXPECT_NE(ew(Op::Add, {x, y}).get(), ew(Op::Add, {y, x}).get());
  // Constants compiled into kernels merge (small integers, NaN, the infinities)...
  EXPECT_EQ(make_constant(Scalar::of(D::Int32, 3), {}, kCpu), make_constant(Scalar::of(D::Int32, 3), {}, kCpu));
  EXPECT_EQ(make_constant(Scalar::of(D::Float32, NAN), {}, kCpu), make_constant(Scalar::of(D::Float32, NAN), {}, kCpu));
  EXPECT_NE(make_constant(Scalar::of(D::Int32, 3), {}, kCpu), make_constant(Scalar::of(D::Int64, 3), {}, kCpu));
  EXPECT_NE(make_constant(Scalar::of(D::Float32, INFINITY), {}, kCpu),
            make_constant(Scalar::of(D::Float32, -INFINITY), {}, kCpu));
  // ...kernel parameters (other floats, 0 included; larger integers; random seeds) never do
  // (issue 26: x*a + x*b at a == b must not become one product).
  EXPECT_NE(make_constant(Scalar::of(D::Float32, 0.0), {}, kCpu),
            make_constant(Scalar::of(D::Float32, 0.0), {}, kCpu));
  EXPECT_NE(make_constant(Scalar::of(D::Int64, 100), {}, kCpu), make_constant(Scalar::of(D::Int64, 100), {}, kCpu));
  EXPECT_NE(make_random(Op::RandUniform, {3}, D::Float32, 5, kCpu),
            make_random(Op::RandUniform, {3}, D::Float32, 5, kCpu));
  NodeRef c = make_constant(Scalar::of(D::Float32, 0.5), {}, kCpu);
  EXPECT_EQ(ew(Op::Mul, {x, c}).get(), ew(Op::Mul, {x, c}).get());  // one node used twice still merges
  EXPECT_EQ(make_transpose(x, {0}), x);
}

TEST(HashConsing, ThroughThePublicApi) {
  Array x(p(D::Float32, {4}));
  Array y(p(D::Float32, {4}, 1));
  EXPECT_EQ((arrayc::exp(x) * y + INFINITY).node().get(), (arrayc::exp(x) * y + INFINITY).node().get());
  EXPECT_NE((arrayc::exp(x) * y + 1.0f).node().get(), (arrayc::exp(x) * y + 1.0f).node().get());  // a parameter
}

// numpy's typing of Python scalars next to arrays (NEP 50): the array's kind wins when the
// scalar fits it; a float scalar with an integer array gives float64.
TEST(ScalarTyping, NumpyRules) {
  Array f32(p(D::Float32, {3})), f64(p(D::Float64, {3})), i32(p(D::Int32, {3})), i64(p(D::Int64, {3}));
  EXPECT_EQ((f32 * 1.5).dtype(), D::Float32);
  EXPECT_EQ((1.5 * f32).dtype(), D::Float32);
  EXPECT_EQ((f32 + 2).dtype(), D::Float32);
  EXPECT_EQ((f64 * 1.5f).dtype(), D::Float64);
  EXPECT_EQ((i32 * 2).dtype(), D::Int32);
  EXPECT_EQ((2 - i32).dtype(), D::Int32);
  EXPECT_EQ((i64 * 2).dtype(), D::Int64);
  EXPECT_EQ((i32 * int64_t{3}).dtype(), D::Int32);
  EXPECT_EQ((i32 * 1.5).dtype(), D::Float64);
  EXPECT_EQ((i64 + 0.5f).dtype(), D::Float64);
  EXPECT_EQ((i32 / 2).dtype(), D::Float64);
  EXPECT_EQ((f32 / 2).dtype(), D::Float32);
  EXPECT_EQ((i32 < 2.5).dtype(), D::Bool);
  EXPECT_EQ(arrayc::pow(f32, 2).dtype(), D::Float32);
  EXPECT_EQ(arrayc::maximum(i32, 0).dtype(), D::Int32);
  EXPECT_EQ(arrayc::where(f32 > 0, f32, 0).dtype(), D::Float32);
  EXPECT_EQ((f32 * 1.5).shape(), (Shape{3}));
}

// ---- Error messages: exactly those of build.cpp -------------------------------------------------

TEST(BuildErrors, Broadcast) {
  EXPECT_ARRAYC_ERROR(ew(Op::Add, {p(D::Float32, {2, 3}), p(D::Float32, {4}, 1)}),
                      "add: shapes [2, 3] (float32) and [4] (float32) cannot be broadcast together");
  EXPECT_ARRAYC_ERROR(ew(Op::Where, {p(D::Bool, {2}), p(D::Int32, {3}, 1), p(D::Float64, {2}, 2)}),
                      "where: shapes [2] (bool) and [3] (int32) and [2] (float64) cannot be broadcast together");
  EXPECT_ARRAYC_ERROR(make_broadcast_to(p(D::Float32, {2, 3}), {3}),
                      "broadcast_to: cannot broadcast an array of shape [2, 3] to [3]");
  EXPECT_ARRAYC_ERROR(make_broadcast_to(p(D::Float32, {2}), {3, 3}),
                      "broadcast_to: cannot broadcast an array of shape [2] to [3, 3]");
  EXPECT_ARRAYC_ERROR(make_broadcast_to(p(D::Float32, {1}), {-2}), "broadcast_to: negative extent in shape [-2]");
}

TEST(BuildErrors, Dtypes) {
  EXPECT_ARRAYC_ERROR(ew(Op::Neg, {p(D::Bool, {2})}), "negative: dtype bool is not accepted");
  EXPECT_ARRAYC_ERROR(ew(Op::Sub, {p(D::Bool, {2}), p(D::Bool, {2}, 1)}), "subtract: dtype bool is not accepted");
  EXPECT_ARRAYC_ERROR(ew(Op::Pow, {p(D::Bool, {2}), p(D::Bool, {2}, 1)}), "pow: dtype bool is not accepted");
  EXPECT_ARRAYC_ERROR(make_dot(p(D::Bool, {2}), p(D::Bool, {2}, 1)), "dot: dtype bool is not accepted");
  EXPECT_ARRAYC_ERROR(make_matmul(p(D::Bool, {2, 2}), p(D::Bool, {2, 2}, 1)), "matmul: dtype bool is not accepted");
  EXPECT_ARRAYC_ERROR(make_random(Op::RandUniform, {2}, D::Int32, 0, kCpu),
                      "uniform: dtype int32 is not accepted (float16, bfloat16, float32 or float64)");
  EXPECT_ARRAYC_ERROR(make_random(Op::RandNormal, {2}, D::Bool, 0, kCpu),
                      "normal: dtype bool is not accepted (float16, bfloat16, float32 or float64)");
}

TEST(BuildErrors, Reshape) {
  NodeRef x = p(D::Float32, {2, 3});
  EXPECT_ARRAYC_ERROR(make_reshape(x, {4}), "reshape: cannot reshape an array of shape [2, 3] (6 elements) into [4]");
  EXPECT_ARRAYC_ERROR(make_reshape(x, {4, -1}), "reshape: cannot reshape an array of shape [2, 3] into [4, -1]");
  EXPECT_ARRAYC_ERROR(make_reshape(x, {-1, -1}), "reshape: more than one -1 in shape [-1, -1]");
  EXPECT_ARRAYC_ERROR(make_reshape(x, {-2, -3}), "reshape: negative extent in shape [-2, -3]");
  EXPECT_ARRAYC_ERROR(make_reshape(x, {0, -1}), "reshape: cannot reshape an array of shape [2, 3] into [0, -1]");
}

TEST(BuildErrors, Transpose) {
  NodeRef x = p(D::Float32, {2, 3});
  EXPECT_ARRAYC_ERROR(make_transpose(x, {0}),
                      "transpose: permutation of length 1 given for an array of rank 2 (shape [2, 3])");
  EXPECT_ARRAYC_ERROR(make_transpose(x, {0, 0}), "transpose: axis 0 repeated in the permutation");
  EXPECT_ARRAYC_ERROR(make_transpose(x, {0, 2}),
                      "transpose: axis 2 is out of range for an array of rank 2 (shape [2, 3])");
  EXPECT_ARRAYC_ERROR(make_transpose(x, {-3, 0}),
                      "transpose: axis -3 is out of range for an array of rank 2 (shape [2, 3])");
}

TEST(BuildErrors, Reductions) {
  NodeRef x = p(D::Float32, {2, 3});
  EXPECT_ARRAYC_ERROR(make_reduce(Op::Sum, x, {2}, false),
                      "sum: axis 2 is out of range for an array of rank 2 (shape [2, 3])");
  EXPECT_ARRAYC_ERROR(make_reduce(Op::Mean, x, {-3}, false),
                      "mean: axis -3 is out of range for an array of rank 2 (shape [2, 3])");
  EXPECT_ARRAYC_ERROR(make_reduce(Op::Prod, x, {1, -1}, false), "prod: axis 1 given twice");
  EXPECT_ARRAYC_ERROR(make_reduce(Op::Max, p(D::Float32, {0, 3}), {0}, false),
                      "max: zero-size axis 0 of shape [0, 3] has no identity to reduce to");
  EXPECT_ARRAYC_ERROR(make_reduce_all(Op::Min, p(D::Int32, {4, 0})),
                      "min: zero-size axis 1 of shape [4, 0] has no identity to reduce to");
  EXPECT_ARRAYC_ERROR(make_reduce(Op::Sum, p(D::Float32, {}), {0}, false),
                      "sum: axis 0 is out of range for an array of rank 0 (shape [])");
}

TEST(BuildErrors, Products) {
  EXPECT_ARRAYC_ERROR(make_dot(p(D::Float32, {2, 3}), p(D::Float32, {4, 5}, 1)),
                      "dot: inner dimensions differ: [2, 3] (float32) and [4, 5] (float32)");
  EXPECT_ARRAYC_ERROR(make_dot(p(D::Float32, {3}), p(D::Float64, {4}, 1)),
                      "dot: inner dimensions differ: [3] (float32) and [4] (float64)");
  EXPECT_ARRAYC_ERROR(make_dot(p(D::Float32, {2, 2, 2}), p(D::Float32, {2, 2}, 1)),
                      "dot: operands of rank 3 and 2 (shapes [2, 2, 2] and [2, 2]) are not supported");
  EXPECT_ARRAYC_ERROR(make_matmul(p(D::Float32, {2, 3}), p(D::Float32, {2, 3}, 1)),
                      "matmul: inner dimensions differ: [2, 3] (float32) and [2, 3] (float32)");
  EXPECT_ARRAYC_ERROR(make_matmul(p(D::Float32, {}), p(D::Float32, {2}, 1)),
                      "matmul: operands must have at least one dimension, got shapes [] and [2]");
  EXPECT_ARRAYC_ERROR(make_matmul(p(D::Float32, {2, 2, 3}), p(D::Float32, {3, 3, 4}, 1)),
                      "matmul: batch dimensions of [2, 2, 3] (float32) and [3, 3, 4] (float32) cannot be "
                      "broadcast together");
}

TEST(BuildErrors, Leaves) {
  EXPECT_ARRAYC_ERROR(make_constant(Scalar::of(D::Float32, 1), {2, -1}, kCpu), "full: negative extent in shape [2, -1]");
  EXPECT_ARRAYC_ERROR(make_iota({-3}, D::Int64, kCpu), "arange: negative extent in shape [-3]");
}

TEST(BuildErrors, Devices) {
  NodeRef c = p(D::Float32, {2});
  NodeRef g = make_param(1, D::Float32, {2}, Device{Device::Kind::GPU, 0});
  EXPECT_ARRAYC_ERROR(ew(Op::Add, {c, g}), "add: arrays are on different devices (cpu and gpu:0)");
  EXPECT_ARRAYC_ERROR(make_dot(c, g), "dot: arrays are on different devices (cpu and gpu:0)");
}

}  // namespace
}  // namespace arrayc::detail
