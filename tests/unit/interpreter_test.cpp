// The reference interpreter and Philox: known answers, hand-computed values for every op's
// corner cases, and the error bounds the e2e comparisons rely on.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <set>
#include <vector>

#include "backend/backend.h"
#include "ir/build.h"
#include "ir/interpreter.h"
#include "ir/philox.h"

namespace arrayc::detail {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// ---- Philox -------------------------------------------------------------------------------------

// Known-answer vectors of Random123 (kat_vectors): counter, key -> output.
TEST(Philox, KnownAnswers) {
  struct Kat {
    PhiloxCounter ctr;
    PhiloxKey key;
    PhiloxCounter want;
  };
  const Kat kats[] = {
      {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
       {0xffffffff, 0xffffffff},
       {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
       {0xa4093822, 0x299f31d0},
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  for (const Kat& k : kats) EXPECT_EQ(philox4x32_10(k.ctr, k.key), k.want);
  static_assert(philox4x32_10({0, 0, 0, 0}, {0, 0})[0] == 0x6627e8d5, "constexpr evaluation");
}

// A second implementation written from the paper's description in another shape (S-box of the
// "bijection" form with the key schedule precomputed), compared on many inputs.
PhiloxCounter philox_independent(PhiloxCounter x, PhiloxKey key) {
  uint32_t k0[10], k1[10];
  for (int r = 0; r < 10; ++r) {
    k0[r] = key[0] + static_cast<uint32_t>(r) * 0x9E3779B9u;
    k1[r] = key[1] + static_cast<uint32_t>(r) * 0xBB67AE85u;
  }
  for (int r = 0; r < 10; ++r) {
    unsigned __int128 a = static_cast<unsigned __int128>(0xD2511F53u) * x[0];
    unsigned __int128 b = static_cast<unsigned __int128>(0xCD9E8D57u) * x[2];
    uint32_t y0 = static_cast<uint32_t>(b >> 32) ^ x[1] ^ k0[r];
    uint32_t y1 = static_cast<uint32_t>(b);
    uint32_t y2 = static_cast<uint32_t>(a >> 32) ^ x[3] ^ k1[r];
    uint32_t y3 = static_cast<uint32_t>(a);
    x = {y0, y1, y2, y3};
  }
  return x;
}

TEST(Philox, MatchesAnIndependentImplementation) {
  uint64_t s = 12345;
  auto next = [&] {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<uint32_t>(s >> 32);
  };
  for (int i = 0; i < 2000; ++i) {
    PhiloxCounter c{next(), next(), next(), next()};
    PhiloxKey k{next(), next()};
    ASSERT_EQ(philox4x32_10(c, k), philox_independent(c, k)) << "case " << i;
  }
}

TEST(Philox, CounterAndKeyLayout) {
  uint64_t seed = 0x0123456789abcdefULL, index = 0xfedcba9876543210ULL;
  PhiloxCounter want = philox4x32_10({0x76543210u, 0xfedcba98u, 0, 0}, {0x89abcdefu, 0x01234567u});
  EXPECT_EQ(philox_bits(seed, index), want);
}

TEST(Philox, UniformFromBits) {
  for (uint64_t i = 0; i < 1000; ++i) {
    PhiloxCounter r = philox_bits(42, i);
    float f = uniform_value<float>(42, i);
    EXPECT_EQ(f, std::ldexp(static_cast<float>(r[0] >> 8), -24));
    EXPECT_GE(f, 0.0f);
    EXPECT_LT(f, 1.0f);
    double d = uniform_value<double>(42, i);
    uint64_t bits = ((static_cast<uint64_t>(r[0]) << 32) | r[1]) >> 11;
    EXPECT_EQ(d, std::ldexp(static_cast<double>(bits), -53));
    EXPECT_GE(d, 0.0);
    EXPECT_LT(d, 1.0);
  }
}

TEST(Philox, NormalFromBits) {
  for (uint64_t i = 0; i < 1000; ++i) {
    PhiloxCounter r = philox_bits(7, i);
    float u1 = std::ldexp(static_cast<float>((r[0] >> 8) + 1), -24);
    float u2 = std::ldexp(static_cast<float>(r[1] >> 8), -24);
    float want = std::sqrt(-2.0f * std::log(u1)) * std::cos(6.2831853f * u2);
    EXPECT_EQ(normal_value<float>(7, i), want);
    double v1 = std::ldexp(static_cast<double>((((static_cast<uint64_t>(r[0]) << 32) | r[1]) >> 11) + 1), -53);
    double v2 = std::ldexp(static_cast<double>(((static_cast<uint64_t>(r[2]) << 32) | r[3]) >> 11), -53);
    EXPECT_EQ(normal_value<double>(7, i), std::sqrt(-2.0 * std::log(v1)) * std::cos(2 * M_PI * v2));
  }
}

TEST(Philox, NormalMoments) {
  const int n = 200000;
  double s = 0, s2 = 0;
  for (int i = 0; i < n; ++i) {
    double z = normal_value<float>(3, i);
    ASSERT_TRUE(std::isfinite(z));
    s += z;
    s2 += z * z;
  }
  double mean = s / n, var = s2 / n - mean * mean;
  EXPECT_NEAR(mean, 0.0, 0.01);
  EXPECT_NEAR(var, 1.0, 0.015);
}

// ---- Interpreter: helpers --------------------------------------------------------------------

const Device kCpu{};

NodeRef cst(DType t, double v, const Shape& shape = {}) { return make_constant(Scalar::of(t, v), shape, kCpu); }

// A Buffer node holding `values` converted to `dtype`, contiguous.
NodeRef buffer(DType dtype, const Shape& shape, const std::vector<double>& values) {
  auto storage = allocate(kCpu, std::max<size_t>(1, values.size()) * dtype_size(dtype));
  for (size_t k = 0; k < values.size(); ++k) {
    unsigned char* p = static_cast<unsigned char*>(storage->data) + k * dtype_size(dtype);
    double v = values[k];
    switch (dtype) {
      case DType::Bool: *p = v != 0; break;
      case DType::Int32: { int32_t x = static_cast<int32_t>(static_cast<int64_t>(v)); std::memcpy(p, &x, 4); break; }
      case DType::Int64: { int64_t x = static_cast<int64_t>(v); std::memcpy(p, &x, 8); break; }
      case DType::Float32: { float x = static_cast<float>(v); std::memcpy(p, &x, 4); break; }
      case DType::Float64: std::memcpy(p, &v, 8); break;
    }
  }
  return make_buffer(storage, dtype, shape, 0, contiguous_strides(shape));
}

NodeRef ew(Op op, std::vector<NodeRef> in) { return make_elementwise(op, in); }

std::vector<double> vals(const HostArray& h) {
  std::vector<double> v;
  for (int64_t k = 0; k < h.numel(); ++k) v.push_back(h.as_double(k));
  return v;
}

// Element-wise equality where NaN equals NaN.
void expect_same(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    if (std::isnan(want[k]))
      EXPECT_TRUE(std::isnan(got[k])) << "at " << k << ": got " << got[k];
    else
      EXPECT_EQ(got[k], want[k]) << "at " << k;
  }
}

// ---- Interpreter: elementwise ------------------------------------------------------------------

TEST(Interpreter, IntegerArithmeticWraps) {
  NodeRef a = buffer(DType::Int32, {3}, {2147483647, -2147483648.0, 65536});
  NodeRef b = buffer(DType::Int32, {3}, {1, 1, 65536});
  expect_same(vals(interpret(ew(Op::Add, {a, b}))), {-2147483648.0, -2147483647.0, 131072});
  expect_same(vals(interpret(ew(Op::Sub, {a, b}))), {2147483646, 2147483647, 0});
  expect_same(vals(interpret(ew(Op::Mul, {a, b}))), {2147483647, -2147483648.0, 0});
  expect_same(vals(interpret(ew(Op::Neg, {a}))), {-2147483647, -2147483648.0, -65536});
  expect_same(vals(interpret(ew(Op::Abs, {a}))), {2147483647, -2147483648.0, 65536});
  NodeRef c = buffer(DType::Int64, {1}, {4611686018427387904.0});  // 2^62
  HostArray r = interpret(ew(Op::Mul, {c, cst(DType::Int64, 4)}));
  EXPECT_EQ(r.i.at(0), 0);  // 2^64 wraps to 0
  EXPECT_EQ(r.dtype, DType::Int64);
}

TEST(Interpreter, IntegerPow) {
  NodeRef base = buffer(DType::Int32, {9}, {2, 3, 1, -1, -1, 0, 5, -2, 3});
  NodeRef exp = buffer(DType::Int32, {9}, {10, -1, -5, -3, -2, 0, 0, 3, 40});
  // 3^40 mod 2^32, as int32.
  uint32_t p = 1;
  for (int i = 0; i < 40; ++i) p *= 3;
  expect_same(vals(interpret(ew(Op::Pow, {base, exp}))),
              {1024, 0, 1, -1, 1, 1, 1, -8, static_cast<double>(static_cast<int32_t>(p))});
}

TEST(Interpreter, FloatOpsComputeInTheirDtype) {
  NodeRef one32 = buffer(DType::Float32, {1}, {1.0});
  NodeRef tiny32 = make_cast(buffer(DType::Float64, {1}, {1e-8}), DType::Float32);
  EXPECT_EQ(interpret(ew(Op::Add, {one32, tiny32})).f.at(0), 1.0);  // rounds in float
  NodeRef one64 = buffer(DType::Float64, {1}, {1.0});
  EXPECT_EQ(interpret(ew(Op::Add, {one64, buffer(DType::Float64, {1}, {1e-8})})).f.at(0), 1.0 + 1e-8);
  NodeRef x = buffer(DType::Float32, {4}, {0.3, 1.7, -2.2, 10.5});
  HostArray e = interpret(ew(Op::Exp, {x}));
  HostArray s = interpret(ew(Op::Sin, {x}));
  HostArray q = interpret(ew(Op::Sqrt, {x}));
  for (int k = 0; k < 4; ++k) {
    float v = static_cast<float>(interpret(x).f[k]);
    EXPECT_EQ(e.f[k], ::expf(v));
    EXPECT_EQ(s.f[k], ::sinf(v));
    if (v >= 0) {
      EXPECT_EQ(q.f[k], ::sqrtf(v));
    }
  }
  EXPECT_EQ(interpret(ew(Op::Div, {one32, buffer(DType::Float32, {1}, {3.0})})).f.at(0),
            static_cast<double>(1.0f / 3.0f));
}

TEST(Interpreter, MaximumMinimumPropagateNaN) {
  NodeRef a = buffer(DType::Float64, {4}, {1, kNaN, 3, -kInf});
  NodeRef b = buffer(DType::Float64, {4}, {kNaN, 2, 1, 5});
  expect_same(vals(interpret(ew(Op::Maximum, {a, b}))), {kNaN, kNaN, 3, 5});
  expect_same(vals(interpret(ew(Op::Minimum, {a, b}))), {kNaN, kNaN, 1, -kInf});
}

TEST(Interpreter, ComparisonsAndLogic) {
  NodeRef a = buffer(DType::Float32, {4}, {1, kNaN, 3, -0.0});
  NodeRef b = buffer(DType::Float32, {4}, {2, kNaN, 3, 0.0});
  expect_same(vals(interpret(ew(Op::Lt, {a, b}))), {1, 0, 0, 0});
  expect_same(vals(interpret(ew(Op::Eq, {a, b}))), {0, 0, 1, 1});
  expect_same(vals(interpret(ew(Op::Ne, {a, b}))), {1, 1, 0, 0});
  expect_same(vals(interpret(ew(Op::Ge, {a, b}))), {0, 0, 1, 1});
  NodeRef p = buffer(DType::Bool, {4}, {0, 0, 1, 1});
  NodeRef q = buffer(DType::Bool, {4}, {0, 1, 0, 1});
  expect_same(vals(interpret(ew(Op::And, {p, q}))), {0, 0, 0, 1});
  expect_same(vals(interpret(ew(Op::Or, {p, q}))), {0, 1, 1, 1});
  expect_same(vals(interpret(ew(Op::Not, {a}))), {0, 0, 0, 1});  // NaN is truthy
  EXPECT_EQ(interpret(ew(Op::Lt, {a, b})).dtype, DType::Bool);
}

TEST(Interpreter, Where) {
  NodeRef c = buffer(DType::Bool, {2, 2}, {1, 0, 0, 1});
  NodeRef a = buffer(DType::Int32, {2, 2}, {1, 2, 3, 4});
  NodeRef r = ew(Op::Where, {c, a, cst(DType::Float32, -1.5)});
  HostArray h = interpret(r);
  EXPECT_EQ(h.dtype, DType::Float64);  // int32 with float32 -> float64
  expect_same(vals(h), {1, -1.5, -1.5, 4});
}

TEST(Interpreter, CastRules) {
  NodeRef f = buffer(DType::Float64, {9}, {3.7, -3.7, 1e10, -1e10, kNaN, kInf, -kInf, -0.0, 0.5});
  expect_same(vals(interpret(make_cast(f, DType::Int32))),
              {3, -3, 2147483647, -2147483648.0, 0, 2147483647, -2147483648.0, 0, 0});
  HostArray i64 = interpret(make_cast(f, DType::Int64));
  EXPECT_EQ(i64.i[2], 10000000000LL);
  EXPECT_EQ(i64.i[5], std::numeric_limits<int64_t>::max());
  EXPECT_EQ(i64.i[6], std::numeric_limits<int64_t>::min());
  EXPECT_EQ(i64.i[4], 0);
  expect_same(vals(interpret(make_cast(f, DType::Bool))), {1, 1, 1, 1, 1, 1, 1, 0, 1});
  NodeRef big = buffer(DType::Int64, {3}, {4294967297.0, -1, 2147483648.0});
  expect_same(vals(interpret(make_cast(big, DType::Int32))), {1, -1, -2147483648.0});
  expect_same(vals(interpret(make_cast(big, DType::Bool))), {1, 1, 1});
  // int64 -> float32 rounds once (2^53 + 1 -> 2^53 in float: 9007199254740992).
  NodeRef odd = make_buffer(allocate(kCpu, 8), DType::Int64, {1}, 0, {1});
  int64_t v = (int64_t{1} << 60) + (int64_t{1} << 36) + 1;  // rounds up once, not twice
  std::memcpy(odd->storage->data, &v, 8);
  EXPECT_EQ(interpret(make_cast(odd, DType::Float32)).f[0], static_cast<double>(static_cast<float>(v)));
  NodeRef d = buffer(DType::Float64, {2}, {1e300, 0.1});
  expect_same(vals(interpret(make_cast(d, DType::Float32))), {kInf, static_cast<double>(0.1f)});
}

TEST(Interpreter, LeavesIotaConstantRandom) {
  expect_same(vals(interpret(make_iota({2, 3}, DType::Float32, kCpu))), {0, 1, 2, 3, 4, 5});
  expect_same(vals(interpret(make_iota({3}, DType::Bool, kCpu))), {0, 1, 1});
  expect_same(vals(interpret(cst(DType::Int32, 7, {2}))), {7, 7});
  HostArray u = interpret(make_random(Op::RandUniform, {2, 3}, DType::Float32, 99, kCpu));
  HostArray z = interpret(make_random(Op::RandNormal, {5}, DType::Float64, 99, kCpu));
  for (int k = 0; k < 6; ++k) EXPECT_EQ(u.f[k], uniform_value<float>(99, k));
  for (int k = 0; k < 5; ++k) EXPECT_EQ(z.f[k], normal_value<double>(99, k));
  // A seed above 2^63 survives the trip through the node's int64 attribute.
  uint64_t seed = 0xfedcba9876543210ULL;
  EXPECT_EQ(interpret(make_random(Op::RandUniform, {1}, DType::Float64, seed, kCpu)).f[0],
            uniform_value<double>(seed, 0));
}

// ---- Interpreter: views -------------------------------------------------------------------------

TEST(Interpreter, Views) {
  NodeRef x = make_iota({2, 3, 4}, DType::Int64, kCpu);
  // out dim d is in dim perm[d]: out[i,j,k] = x[j,k,i] with perm {2, 0, 1}, shape [4, 2, 3].
  HostArray t = interpret(make_transpose(x, {2, 0, 1}));
  ASSERT_EQ(t.shape, (Shape{4, 2, 3}));
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 3; ++k) EXPECT_EQ(t.i[(i * 2 + j) * 3 + k], (j * 3 + k) * 4 + i);
  HostArray b = interpret(make_broadcast_to(make_iota({3, 1}, DType::Int32, kCpu), {2, 3, 4}));
  ASSERT_EQ(b.shape, (Shape{2, 3, 4}));
  for (int k = 0; k < 24; ++k) EXPECT_EQ(b.i[k], (k / 4) % 3);
  HostArray r = interpret(make_reshape(make_transpose(make_iota({2, 3}, DType::Int32, kCpu), {1, 0}), {6}));
  expect_same(vals(r), {0, 3, 1, 4, 2, 5});
  // A strided buffer view: the transpose of a [2, 3] storage with an offset of 1.
  auto storage = allocate(kCpu, 7 * sizeof(float));
  for (int k = 0; k < 7; ++k) static_cast<float*>(storage->data)[k] = static_cast<float>(k);
  NodeRef v = make_buffer(storage, DType::Float32, {3, 2}, 1, {1, 3});
  expect_same(vals(interpret(v)), {1, 4, 2, 5, 3, 6});
  expect_same(vals(interpret(make_copy(v))), {1, 4, 2, 5, 3, 6});
}

// ---- Interpreter: reductions --------------------------------------------------------------------

TEST(Interpreter, Reductions) {
  NodeRef x = make_iota({2, 3}, DType::Float32, kCpu);  // [[0,1,2],[3,4,5]]
  expect_same(vals(interpret(make_reduce(Op::Sum, x, {0}, false))), {3, 5, 7});
  expect_same(vals(interpret(make_reduce(Op::Sum, x, {1}, true))), {3, 12});
  expect_same(vals(interpret(make_reduce(Op::Prod, x, {1}, false))), {0, 60});
  expect_same(vals(interpret(make_reduce(Op::Max, x, {-1}, false))), {2, 5});
  expect_same(vals(interpret(make_reduce(Op::Min, x, {0}, false))), {0, 1, 2});
  expect_same(vals(interpret(make_reduce(Op::Mean, x, {0, 1}, false))), {2.5});
  NodeRef n = buffer(DType::Float64, {2, 2}, {1, kNaN, 3, 4});
  expect_same(vals(interpret(make_reduce(Op::Max, n, {1}, false))), {kNaN, 4});
  expect_same(vals(interpret(make_reduce(Op::Min, n, {0}, false))), {1, kNaN});
  // bool and int32 sums accumulate in int64.
  HostArray bs = interpret(make_reduce_all(Op::Sum, buffer(DType::Bool, {4}, {1, 0, 1, 1})));
  EXPECT_EQ(bs.dtype, DType::Int64);
  EXPECT_EQ(bs.i.at(0), 3);
  HostArray is = interpret(make_reduce_all(Op::Sum, buffer(DType::Int32, {2}, {2147483647, 2147483647})));
  EXPECT_EQ(is.i.at(0), 4294967294LL);
  EXPECT_EQ(interpret(make_reduce_all(Op::Max, buffer(DType::Bool, {3}, {0, 1, 0}))).i.at(0), 1);
  EXPECT_EQ(interpret(make_reduce_all(Op::Min, buffer(DType::Bool, {3}, {0, 1, 0}))).i.at(0), 0);
  HostArray im = interpret(make_reduce_all(Op::Mean, buffer(DType::Int32, {4}, {1, 2, 3, 5})));
  EXPECT_EQ(im.dtype, DType::Float64);
  EXPECT_EQ(im.f.at(0), 2.75);
}

TEST(Interpreter, EmptyReductions) {
  NodeRef e = make_iota({0, 3}, DType::Float32, kCpu);
  expect_same(vals(interpret(make_reduce(Op::Sum, e, {0}, false))), {0, 0, 0});
  expect_same(vals(interpret(make_reduce(Op::Prod, e, {0}, false))), {1, 1, 1});
  expect_same(vals(interpret(make_reduce(Op::Mean, e, {0}, false))), {kNaN, kNaN, kNaN});
  EXPECT_EQ(interpret(make_reduce(Op::Sum, e, {1}, false)).shape, (Shape{0}));
  EXPECT_EQ(interpret(make_reduce(Op::Max, e, {1}, false)).numel(), 0);
  EXPECT_EQ(interpret(make_reduce_all(Op::Prod, make_iota({0}, DType::Int32, kCpu))).i.at(0), 1);
}

TEST(Interpreter, SumIsAccurate) {
  // 1e6 copies of 0.1f: a float accumulator drifts; the reference must not.
  NodeRef x = cst(DType::Float32, 0.1, {1000000});
  double want = static_cast<double>(static_cast<float>(1000000.0 * static_cast<double>(0.1f)));
  EXPECT_EQ(interpret(make_reduce_all(Op::Sum, x)).f.at(0), want);
}

// ---- Interpreter: dot ---------------------------------------------------------------------------

TEST(Interpreter, Dot) {
  NodeRef a = buffer(DType::Float64, {2, 3}, {1, 2, 3, 4, 5, 6});
  NodeRef b = buffer(DType::Float64, {3, 2}, {7, 8, 9, 10, 11, 12});
  expect_same(vals(interpret(make_dot(a, b))), {58, 64, 139, 154});
  NodeRef v = buffer(DType::Int32, {3}, {1, -1, 2});
  expect_same(vals(interpret(make_dot(v, v))), {6});
  // Batched with a broadcast batch: [2, 1, 2] x [2, 1] -> [2, 1, 1].
  NodeRef ba = buffer(DType::Float32, {2, 1, 2}, {1, 2, 3, 4});
  NodeRef bb = buffer(DType::Float32, {2, 1}, {10, 100});
  HostArray m = interpret(make_matmul(ba, bb));
  EXPECT_EQ(m.shape, (Shape{2, 1, 1}));
  expect_same(vals(m), {210, 430});
  NodeRef big = buffer(DType::Int32, {1, 2}, {65536, 65536});
  NodeRef big2 = buffer(DType::Int32, {2, 1}, {65536, 1});
  expect_same(vals(interpret(make_dot(big, big2))), {65536});  // 2^32 wraps to 0, plus 65536
}

// ---- Interpreter: params, sharing, depth ------------------------------------------------------------

TEST(Interpreter, Params) {
  NodeRef p = make_param(0, DType::Float32, {3}, kCpu);
  NodeRef q = make_param(1, DType::Int32, {3}, kCpu);
  NodeRef r = ew(Op::Add, {p, q});  // float64
  HostArray h = interpret(r, {host_array(DType::Float32, {3}, {0.5, 1.5, 2.5}),
                              host_array(DType::Int32, {3}, {1, 2, 3})});
  EXPECT_EQ(h.dtype, DType::Float64);
  expect_same(vals(h), {1.5, 3.5, 5.5});
  EXPECT_THROW(interpret(r, {}), Error);
  EXPECT_THROW(interpret(r, {host_array(DType::Float32, {2}, {1, 2}), host_array(DType::Int32, {3}, {1, 2, 3})}),
               Error);
}

TEST(Interpreter, DeepGraphs) {
  NodeRef x = make_iota({4}, DType::Int64, kCpu);
  NodeRef y = x;
  for (int i = 0; i < 100000; ++i) y = ew(Op::Add, {y, x});
  expect_same(vals(interpret(y)), {0, 100001, 200002, 300003});
}

TEST(Nodes, DroppingADeepChainDoesNotRecurse) {
  // Each node's destructor released its input, which destroyed that one, and so on: a chain of
  // 300000 overflowed the stack when its last reference went (y = y + x in a loop, never
  // evaluated). A dying node now hands its inputs to the outermost destructor's loop.
  NodeRef x = make_iota({4}, DType::Int64, kCpu);
  NodeRef y = x;
  for (int i = 0; i < 400000; ++i) y = ew(Op::Add, {y, x});
  y.reset();
  EXPECT_EQ(x.use_count(), 1);
}

TEST(Nodes, ANodeMadeAndDroppedOverAndOverTakesOneTableEntry) {
  // Constant folding makes the same scalar constant for every op it folds and drops it at once.
  // Each one left a dead entry under the same hash until the next sweep, and every lookup
  // walked them all: 1e5 chained adds of a constant took 67 s. Lookups now drop the dead entries
  // they meet.
  size_t before = intern_table_size(), most = before;
  for (int i = 0; i < 5000; ++i) {
    NodeRef c = cst(DType::Float64, 0.125, {3});
    most = std::max(most, intern_table_size());
  }
  EXPECT_LE(most, before + 1);
}

TEST(Nodes, TheTableMergesEqualNodesAcrossItsRebuilds) {
  // Open addressing that grows at half full and drops dead entries when it rebuilds or a lookup
  // meets them: many live nodes, half of them dropped, as many made again, and every live one must
  // still be found (the same node for the same structure), no two structures merged.
  constexpr int64_t kNodes = 20000;
  std::vector<NodeRef> live;
  for (int64_t n = 1; n <= kNodes; ++n) live.push_back(make_iota({n}, DType::Int64, kCpu));
  for (int64_t n = 1; n <= kNodes; n += 2) live[n - 1].reset();
  for (int64_t n = kNodes + 1; n <= 2 * kNodes; ++n) live.push_back(make_iota({n}, DType::Int64, kCpu));
  std::set<const Node*> distinct;
  for (int64_t n = 1; n <= 2 * kNodes; ++n) {
    const NodeRef& held = live[n - 1];
    NodeRef again = make_iota({n}, DType::Int64, kCpu);
    if (held) {
      ASSERT_EQ(again.get(), held.get()) << "iota of " << n;
      distinct.insert(held.get());
    } else {
      ASSERT_EQ(make_iota({n}, DType::Int64, kCpu).get(), again.get()) << "iota of " << n << ", made again";
    }
  }
  EXPECT_EQ(distinct.size(), static_cast<size_t>(kNodes + kNodes / 2));
}

// ---- Error bounds -----------------------------------------------------------------------------------

InterpretOptions bounds(double ulps) {
  InterpretOptions o;
  o.op_ulps = [ulps](Op, DType) { return ulps; };
  return o;
}

TEST(InterpreterBounds, OneOpGetsItsUlps) {
  NodeRef x = buffer(DType::Float32, {3}, {0.5, 1.0, 20.0});
  HostArray e = interpret(ew(Op::Exp, {x}), {}, bounds(4));
  for (int k = 0; k < 3; ++k) EXPECT_EQ(e.err[k], 4 * ulp_of(e.f[k], DType::Float32));
  HostArray exact = interpret(ew(Op::Neg, {x}), {}, bounds(0));
  for (double b : exact.err) EXPECT_EQ(b, 0);
}

TEST(InterpreterBounds, CancellationPassesOnAbsoluteError) {
  // exp(x) - 1 near x = 0: the error of exp (~ulp(1)) dominates the tiny result.
  NodeRef x = buffer(DType::Float32, {1}, {1e-4});
  HostArray r = interpret(ew(Op::Sub, {ew(Op::Exp, {x}), cst(DType::Float32, 1, {1})}), {}, bounds(4));
  EXPECT_GE(r.err[0], 4 * ulp_of(1.0, DType::Float32));
}

TEST(InterpreterBounds, ComparisonsOfCloseValuesAreUndecidable) {
  NodeRef x = buffer(DType::Float32, {2}, {0.0, 1.0});
  NodeRef r = ew(Op::Gt, {ew(Op::Sin, {x}), cst(DType::Float32, 0.0, {2})});
  HostArray h = interpret(r, {}, bounds(4));
  EXPECT_TRUE(std::isinf(h.err[0]) || h.err[0] == 0);  // sin(0) = 0 exactly: bound 0
  EXPECT_EQ(h.err[1], 0);                                // sin(1) > 0 for sure
  NodeRef y = buffer(DType::Float32, {1}, {1e-30});
  HostArray g = interpret(ew(Op::Gt, {ew(Op::Exp, {y}), cst(DType::Float32, 1.0, {1})}), {}, bounds(4));
  EXPECT_TRUE(std::isinf(g.err[0]));  // exp(1e-30) is 1 within 4 ulp
}

TEST(InterpreterBounds, SumScalesWithCount) {
  NodeRef x = cst(DType::Float32, 1.0, {10000});
  HostArray s = interpret(make_reduce_all(Op::Sum, x), {}, bounds(2));
  double eps = ulp_of(1.0, DType::Float32);
  // walk = 2 eps sqrt(n) (sqrt(sum x^2) + |sum x|) = 2 eps 100 (100 + 10000).
  EXPECT_NEAR(s.err[0], 2 * eps * 100 * 10100 + 2 * ulp_of(10000, DType::Float32), 1e-9);
}

}  // namespace
}  // namespace arrayc::detail
