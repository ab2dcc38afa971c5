#include "ir/node.h"

#include <algorithm>

#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <sstream>

#include "support/hash.h"

namespace arrayc::detail {

const OpInfo& op_info(Op op) {
  static const OpInfo table[] = {
#define ARRAYC_OP(name, printed, api, arity, kind) {printed, api, arity, OpKind::kind},
#include "ir/ops.def"
  };
  return table[static_cast<int>(op)];
}

int64_t wrap_int(DType t, uint64_t v) {
  if (t == DType::Bool) return v != 0;
  int bits = dtype_bits(t);
  if (bits == 64) return static_cast<int64_t>(v);
  uint64_t mask = (uint64_t{1} << bits) - 1;
  v &= mask;
  if (is_signed_int(t) && (v >> (bits - 1))) v |= ~mask;  // sign-extend
  return static_cast<int64_t>(v);
}

double int_value(DType t, int64_t i) {
  return t == DType::UInt64 ? static_cast<double>(static_cast<uint64_t>(i)) : static_cast<double>(i);
}

double round_float(DType t, double x) {
  switch (t) {
    case DType::Float16: return float16_value(float16_bits(x));
    case DType::BFloat16: return bfloat16_value(bfloat16_bits(x));
    case DType::Float32: return static_cast<float>(x);
    default: return x;
  }
}

double int_to_float(DType to, DType from, int64_t i) {
  if (to == DType::Float64) return int_value(from, i);
  float f = from == DType::UInt64 ? static_cast<float>(static_cast<uint64_t>(i)) : static_cast<float>(i);
  return round_float(to, f);  // 16-bit floats: through float32, as the generated code
}

int64_t float_to_int(DType t, double x) {
  if (t == DType::Bool) return x != 0;  // NaN != 0 is true
  if (std::isnan(x)) return 0;
  if (x <= static_cast<double>(int_min(t))) return int_min(t);
  // The first value past the range: 2^(bits - 1) signed, 2^bits unsigned.
  if (x >= std::ldexp(1.0, dtype_bits(t) - (is_signed_int(t) ? 1 : 0)))
    return static_cast<int64_t>(int_max(t));  // uint64's maximum as its bit pattern
  if (x >= 0x1p63) return static_cast<int64_t>(static_cast<uint64_t>(x));
  return static_cast<int64_t>(x);
}

bool is_parameter_value(const Scalar& v) {
  if (!is_float(v.dtype)) return v.i < -16 || v.i > 16;
  return !std::isnan(v.f) && !std::isinf(v.f);
}

Scalar Scalar::of(DType t, double v) {
  Scalar s;
  s.dtype = t;
  if (is_float(t))
    s.f = round_float(t, v);
  else
    s.i = float_to_int(t, v);
  return s;
}

Scalar Scalar::of_int(DType t, int64_t v) {
  Scalar s;
  s.dtype = t;
  if (is_float(t))
    s.f = int_to_float(t, DType::Int64, v);  // one rounding (16-bit floats: through float32)
  else
    s.i = wrap_int(t, static_cast<uint64_t>(v));  // Cast wraps
  return s;
}

std::string Scalar::str() const {
  std::ostringstream os;
  if (dtype == DType::Bool) {
    os << (i ? "true" : "false");
  } else if (dtype == DType::UInt64) {
    os << static_cast<uint64_t>(i);
  } else if (is_int(dtype)) {
    os << i;
  } else {
    os.precision(dtype == DType::Float64 ? 17 : 9);
    os << f;
  }
  return os.str();
}

std::vector<int64_t> contiguous_strides(const Shape& shape) {
  std::vector<int64_t> s(shape.size());
  int64_t acc = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    s[d] = acc;
    acc *= std::max<int64_t>(shape[d], 1);
  }
  return s;
}

namespace {

size_t structural_hash(const Node& n) {
  size_t h = hash_combine(static_cast<size_t>(n.op), static_cast<size_t>(n.dtype));
  h = hash_combine(h, static_cast<size_t>(n.device.kind) * 31 + n.device.index);
  for (int64_t d : n.shape) h = hash_combine(h, static_cast<size_t>(d));
  h = hash_combine(h, 0x5eed);
  for (const NodeRef& in : n.inputs) h = hash_combine(h, in->hash);
  for (int64_t v : n.ints) h = hash_combine(h, static_cast<size_t>(v));
  if (n.op == Op::Constant) {
    h = hash_combine(h, std::hash<double>()(n.value.f));
    h = hash_combine(h, static_cast<size_t>(n.value.i));
  }
  h = hash_combine(h, reinterpret_cast<size_t>(n.storage.get()));
  return h;
}

bool same_value(const Scalar& a, const Scalar& b) {
  // Bitwise for floats: -0.0 and 0.0 are different constants; NaN equals NaN.
  return a.dtype == b.dtype && a.i == b.i && std::memcmp(&a.f, &b.f, sizeof a.f) == 0;
}

bool structurally_equal(const Node& a, const Node& b) {
  if (a.op != b.op || a.dtype != b.dtype || a.device != b.device || a.shape != b.shape ||
      a.ints != b.ints || a.storage != b.storage || a.inputs.size() != b.inputs.size())
    return false;
  for (size_t i = 0; i < a.inputs.size(); ++i)
    if (a.inputs[i] != b.inputs[i]) return false;
  return a.op != Op::Constant || same_value(a.value, b.value);
}

// Open addressing (linear probing) over {hash, weak reference}: an entry takes no allocation of its
// own. An entry whose node died is dropped when a lookup meets it (a node that is made and dropped
// over and over, a folded constant, would otherwise pile up under one hash), and all such entries
// when the table would pass half full.
class InternTable {
 public:
  std::mutex mu;

  // The live node structurally equal to proto (whose hash is set), or null.
  NodeRef find(const Node& proto) {
    for (size_t i = proto.hash & mask(); slots_[i].used;) {
      Slot& s = slots_[i];
      if (s.hash == proto.hash) {
        if (NodeRef n = s.node.lock()) {
          if (structurally_equal(*n, proto)) return n;
        } else {
          erase(i);  // slot i now holds the entry after it, if any: look at it again
          continue;
        }
      }
      i = (i + 1) & mask();
    }
    return nullptr;
  }
  void insert(const NodeRef& n) {
    if (2 * (count_ + 1) > slots_.size()) rebuild();
    size_t i = n->hash & mask();
    while (slots_[i].used) i = (i + 1) & mask();
    slots_[i] = {true, n->hash, n};
    ++count_;
  }
  size_t size() const { return count_; }

 private:
  struct Slot {
    bool used = false;
    size_t hash = 0;
    std::weak_ptr<const Node> node;
  };
  size_t mask() const { return slots_.size() - 1; }
  // Empties slot i, moving back the entries after it that probed past it.
  void erase(size_t i) {
    for (size_t j = (i + 1) & mask(); slots_[j].used; j = (j + 1) & mask()) {
      size_t home = slots_[j].hash & mask();
      bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
      if (!stays) {
        slots_[i] = std::move(slots_[j]);
        i = j;
      }
    }
    slots_[i] = Slot{};
    --count_;
  }
  // Drops the dead entries; at least 4 slots per live one, so that the table is a quarter full.
  void rebuild() {
    std::vector<Slot> old;
    old.swap(slots_);
    size_t live = 0;
    for (const Slot& s : old) live += s.used && !s.node.expired();
    size_t size = 1024;
    while (size < 4 * (live + 1)) size *= 2;
    slots_.resize(size);
    count_ = 0;
    for (Slot& s : old)
      if (s.used && !s.node.expired()) {
        size_t i = s.hash & mask();
        while (slots_[i].used) i = (i + 1) & mask();
        slots_[i] = std::move(s);
        ++count_;
      }
  }
  std::vector<Slot> slots_ = std::vector<Slot>(1024);
  size_t count_ = 0;
};

InternTable& table() {
  static InternTable* t = new InternTable;  // never destroyed: nodes may outlive static teardown
  return *t;
}

}  // namespace

Node::~Node() {
  // While a thread runs the loop below, the nodes that die in it only queue their inputs.
  thread_local std::vector<NodeRef>* dying = nullptr;
  if (dying) {
    for (NodeRef& in : inputs) dying->push_back(std::move(in));
    return;
  }
  std::vector<NodeRef> queue(std::make_move_iterator(inputs.begin()), std::make_move_iterator(inputs.end()));
  dying = &queue;
  while (!queue.empty()) {
    NodeRef n = std::move(queue.back());
    queue.pop_back();
    n.reset();  // if that was its last reference, its inputs join the queue
  }
  dying = nullptr;
}

NodeRef intern(Node proto) {
  proto.hash = structural_hash(proto);
  proto.tree_nodes = 1;
  proto.reads_param = proto.op == Op::Param;
  for (const NodeRef& in : proto.inputs) {
    proto.tree_nodes = std::min(proto.tree_nodes + in->tree_nodes, int64_t{1} << 62);
    proto.reads_param = proto.reads_param || in->reads_param;
  }
  // Parameter leaves are never merged (see node.h): not in the table at all.
  bool own_identity = (proto.op == Op::Constant && is_parameter_value(proto.value)) ||
                      proto.op == Op::RandUniform || proto.op == Op::RandNormal;
  if (own_identity) return std::make_shared<const Node>(std::move(proto));
  InternTable& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  if (NodeRef n = t.find(proto)) return n;
  auto node = std::make_shared<const Node>(std::move(proto));
  t.insert(node);
  return node;
}

size_t intern_table_size() {
  InternTable& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  return t.size();
}

bool is_contiguous_view(const Node& buffer) {
  int64_t expected = 1;
  for (size_t d = buffer.shape.size(); d-- > 0;) {
    if (buffer.shape[d] != 1 && buffer.ints[1 + d] != expected) return false;
    expected *= buffer.shape[d];
  }
  return true;
}

}  // namespace arrayc::detail
