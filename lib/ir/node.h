// The expression graph. A Node is immutable and hash-consed: building the same expression twice
// gives the same node, so common subexpressions merge for free and a node's structural hash is
// the core of a kernel's cache key. Shapes and dtypes are inferred when a node is made (build.h).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "arrayc/array.h"
#include "arrayc/device.h"
#include "arrayc/dtype.h"

namespace arrayc::detail {

enum class Op : uint8_t {
#define ARRAYC_OP(name, printed, api, arity, kind) name,
#include "ir/ops.def"
};

enum class OpKind : uint8_t { Leaf, Elementwise, View, Reduce, Contraction, Copy, Gather, Axis };

struct OpInfo {
  const char* name;  // the printed name (graph text)
  const char* api;   // the public function's name, which error messages use
  int arity;
  OpKind kind;
};
const OpInfo& op_info(Op op);
inline const char* op_name(Op op) { return op_info(op).name; }
inline const char* api_name(Op op) { return op_info(op).api; }
inline OpKind op_kind(Op op) { return op_info(op).kind; }

// Who owns a Storage's memory: its device's backend (backend/backend.h), which frees it and can
// copy it to the host. The IR sees only this interface, so it needs no link to the backends.
class MemoryOwner {
 public:
  virtual ~MemoryOwner() = default;
  virtual void release(Device d, void* p, size_t bytes) = 0;
  virtual void read(Device d, void* host_dst, const void* src, size_t bytes) = 0;
};

// Device memory that Buffer nodes view. Freed (returned to the device's allocator) when the last
// node or array referring to it goes away. Made by backend/backend.h's allocate().
struct Storage {
  Device device;
  void* data = nullptr;
  size_t bytes = 0;
  MemoryOwner* owner = nullptr;
  Storage(Device d, void* p, size_t n, MemoryOwner* o) : device(d), data(p), bytes(n), owner(o) {}
  ~Storage() { owner->release(device, data, bytes); }
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  // Copies the first `n` bytes to host memory.
  void read(void* host_dst, size_t n) const { owner->read(device, host_dst, data, n); }
};
using StorageRef = std::shared_ptr<Storage>;

// A scalar: the value of a Constant node. Floats are held as double (exact for float32 too),
// integers and bools as int64.
// Cast's float -> integer rule, also that of reading values (Array::item, to_vector) and of
// scalars: truncate toward zero, saturate at the dtype's range, NaN -> 0; bool is x != 0 (NaN is
// true).
// Integers of every dtype are held as int64: the value itself, except uint64, held as its bit
// pattern (values past 2^63 - 1 read negative; int_value gives the number).
int64_t float_to_int(DType t, double x);
// v wrapped to t's width (two's complement, as the cast op and integer overflow do); bool is v != 0.
int64_t wrap_int(DType t, uint64_t v);
// The number an integer of dtype t holds.
double int_value(DType t, int64_t i);
// x rounded to the float dtype t (nearest even; float16/bfloat16 as half.h).
double round_float(DType t, double x);
// The integer i of dtype `from` converted to the float dtype `to`, as the cast op does: one
// rounding to float32 or float64; to float16/bfloat16 through float32 (as ml_dtypes does; for
// float16 this is the one correct rounding, every integer past float16's range being past 2^24).
double int_to_float(DType to, DType from, int64_t i);

struct Scalar {
  DType dtype = DType::Float32;
  double f = 0;
  int64_t i = 0;
  static Scalar of(DType t, double v);  // v converted to t with Cast's rules (saturating, NaN -> 0)
  static Scalar of_int(DType t, int64_t v);  // exact for int64; Cast's rules otherwise (int32 wraps)
  double as_double() const { return is_float(dtype) ? f : int_value(dtype, i); }
  bool operator==(const Scalar&) const = default;
  std::string str() const;
};

// Whether a constant of this value is a kernel parameter (passed at launch, kernel/kernel.h's
// constant_is_inlined) outside pow's exponent: floats other than NaN and the infinities, integers
// outside [-16, 16].
bool is_parameter_value(const Scalar& v);

struct Node {
  Op op;
  DType dtype;
  Device device;
  Shape shape;
  std::vector<NodeRef> inputs;
  // Integer attributes, meaning per op: Param {index}; Transpose the permutation; reductions the
  // sorted axes; RandUniform/RandNormal {seed}; Buffer {offset, strides...} in elements.
  std::vector<int64_t> ints;
  Scalar value;         // Constant
  StorageRef storage;   // Buffer
  size_t hash = 0;
  // Bounded lazy graphs (issue 26), set by intern from the inputs, not part of the node's
  // identity: the nodes of the graph behind this one counted as a tree (a node read twice counts
  // twice; an upper bound of the graph's size, saturating at 2^62), and whether it reads a Param
  // (a traced input: such a graph cannot be evaluated).
  int64_t tree_nodes = 1;
  bool reads_param = false;

  Node() = default;
  Node(const Node&) = default;
  Node(Node&&) = default;
  Node& operator=(const Node&) = default;
  Node& operator=(Node&&) = default;
  // Releases its inputs without recursing: a node whose input dies with it hands that input's
  // own inputs to the outermost dying node's loop (a chain of 300000 adds, e.g. y = y + x in a
  // loop, overflowed the stack when it was dropped).
  ~Node();

  int64_t numel() const { return shape_numel(shape); }
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  const OpInfo& info() const { return op_info(op); }
  // Buffer: the element offset and strides of its view of the storage.
  int64_t buffer_offset() const { return ints.at(0); }
  std::vector<int64_t> buffer_strides() const { return {ints.begin() + 1, ints.end()}; }
};

// Returns the unique node with these fields (the fields of `proto` other than hash); the
// interning table holds weak references, so nodes die when no graph or array uses them.
// Except (issue 26) a leaf whose value is a kernel parameter: a Constant of a parameter value
// (is_parameter_value) or a random leaf (its seed). Each is a node of its own, so that two that
// happen to be equal (x*a + x*b at a == b, two draws of one seed) do not merge the expressions
// above them, which would give that pair of values a kernel of its own. Copies of one such node
// (an Array used twice) are still one node, and everything else still merges.
NodeRef intern(Node proto);

// The entries of the interning table, dead ones included (for tests).
size_t intern_table_size();

// Row-major strides of a contiguous array of this shape.
std::vector<int64_t> contiguous_strides(const Shape& shape);
// Whether a Buffer node views its storage as a contiguous row-major array (from its offset; the
// strides of extent-1 dims do not matter).
bool is_contiguous_view(const Node& buffer);

}  // namespace arrayc::detail
