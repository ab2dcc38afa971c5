// The random differential tester (issue 26): random programs over the public API (every op of
// lib/ir/ops.def, the view functions, every dtype, rank 0-4, zero-size and broadcast shapes,
// non-contiguous views, integer extremes, NaN, inf, -0.0), each run fused and unfused on one
// device and compared with the reference interpreter within its per-op error bounds
// (tests/support/reference.h). A failing program shrinks to a small reproducer, printed as C++.
//
// A Program is a list of instructions in SSA form: instruction k defines value v<k> from earlier
// values and its attributes. The same list builds the arrays (build) and prints the C++ (to_cpp),
// so what is printed is what ran.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "arrayc/arrayc.h"

namespace arrayc_difftest {

using arrayc::DType;
using arrayc::Shape;

enum class Form {
  Leaf,        // array(data, shape): data (f for floats, u for integer bit patterns and bool)
  Full,        // full(shape, scalar, dtype)
  Arange,      // arange(n, dtype), reshaped to shape
  Random,      // uniform / normal(shape, seed, ..., dtype)  (fn)
  Unary,       // fn(a)
  Binary,      // fn(a, b)
  Scalar,      // fn(a, s) or fn(s, a) (flag: scalar first); integral scalar when iscalar_set
  Where,       // where(a, b, c)
  Cast,        // cast(a, dtype)
  Reshape,     // reshape(a, shape)
  Transpose,   // transpose(a, ints)
  Broadcast,   // broadcast_to(a, shape)
  ExpandDims,  // expand_dims(a, ints[0])
  Index,       // a[{...}]: ints holds per dim (kind, start, stop, step); kind 0 slice, 1 integer, 2 newaxis
  Flip,        // flip(a, ints[0])
  Swapaxes,    // swapaxes(a, ints[0], ints[1])
  Squeeze,     // squeeze(a)
  Reduce,      // fn(a) or fn(a, ints, keepdims=flag): sum prod max min mean any all logsumexp var std
  ArgReduce,   // argmax / argmin (a) or (a, ints[0], flag)
  Matmul,      // matmul(a, b)
  Take,        // take(a, b) or take(a, b, ints[0]) when ints is not empty
  Concat,      // concatenate({a, b}, ints[0]) / stack when fn == "stack"
  Pad,         // pad(a, widths from ints pairs, mode=flag ? Edge : Constant, scalar)
  Tile,        // tile(a, ints)
  Repeat,      // repeat(a, ints[0], ints[1])
  Roll,        // roll(a, ints[0], ints[1])
  Scan,        // cumsum cumprod sort argsort (a, ints[0])
};

struct Instr {
  Form form = Form::Leaf;
  std::string fn;
  std::vector<int> args;       // operands: indices of earlier instructions
  DType dtype = DType::Float32;
  Shape shape;
  std::vector<int64_t> ints;
  bool flag = false;
  bool eval = false;           // materialize this value (when the program runs, not in the reference)
  double scalar = 0;
  bool integral = false;       // Scalar/Full: the scalar is the integer iscalar
  int64_t iscalar = 0;
  std::vector<double> f;       // Leaf data, float dtypes
  std::vector<uint64_t> u;     // Leaf data, bool and integer dtypes (two's complement bits)
};

struct Program {
  std::vector<Instr> instrs;
  std::vector<int> outputs;
};

// A random program of a few instructions; the same seed gives the same program. It is built on
// the CPU while it is generated (lazily: nothing is evaluated, no thread or device is started),
// and runs on any device.
Program generate(uint64_t seed);
// The seed of program k of a run with --seed seed (arrayc-difftest --seed S --start K).
uint64_t program_seed(uint64_t seed, uint64_t k);

// The program's arrays, one per instruction, built on `device`. With materialize, the
// instructions marked eval are evaluated as they are built. Raises what the API raises.
std::vector<arrayc::Array> build(const Program& p, arrayc::Device device, bool materialize);

// The program as a C++ function body using the public API.
std::string to_cpp(const Program& p, arrayc::Device device);

enum class Status { Pass, Rejected, Fail };
struct Outcome {
  Status status = Status::Pass;
  std::string message;  // why it failed, or which error rejected it
};

// Runs the program fused and unfused on `device` and compares every output with the reference.
Outcome check(const Program& p, arrayc::Device device);

// A smaller program for which `fails` still holds (check gives Fail, or running it crashes), by
// keeping one output, dropping materializations, replacing intermediate values with leaves of
// their reference values, and dropping dead code. It builds and interprets candidates on the CPU
// (evaluating nothing); `fails` runs them.
Program shrink(const Program& p, const std::function<bool(const Program&)>& fails);

}  // namespace arrayc_difftest
