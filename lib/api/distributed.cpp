// Several devices and processes (include/arrayc/distributed.h): peer access, the collectives of
// one process over several GPUs (NCCL), sharded arrays, and the collectives across processes
// (MPI on the CPU, NCCL bootstrapped by MPI on GPUs).
#include "arrayc/distributed.h"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "arrayc/error.h"
#include "arrayc/ops.h"
#include "backend/backend.h"
#include "backend/cuda/cuda_driver.h"
#include "backend/cuda/nccl.h"
#include "distributed/mpi.h"
#include "ir/build.h"

namespace arrayc {
namespace {

using detail::NodeRef;

bool is_gpu(Device d) { return d.kind == Device::Kind::GPU; }

std::string devices_str(const std::vector<Device>& ds) {
  std::string s = "[";
  for (size_t i = 0; i < ds.size(); ++i) s += (i ? ", " : "") + ds[i].str();
  return s + "]";
}

// x's value as a packed row-major buffer (evaluated; copied when its view is strided).
NodeRef packed(const Array& x) {
  x.eval();
  NodeRef n = x.node();
  if (n->numel() > 1 && !detail::is_contiguous_view(*n)) n = Array(detail::make_copy(n)).eval().node();
  return n;
}

const char* data_of(const NodeRef& n) {
  return static_cast<const char*>(n->storage->data) + n->buffer_offset() * static_cast<int64_t>(dtype_size(n->dtype));
}

size_t bytes_of(const Shape& s, DType t) { return static_cast<size_t>(shape_numel(s)) * dtype_size(t); }

// A new packed array on d, and where its data go.
struct Fresh {
  Array array;
  void* data;
};
Fresh fresh(Device d, DType t, const Shape& shape) {
  detail::StorageRef st = detail::allocate(d, bytes_of(shape, t));
  void* p = st->data;
  return {Array(detail::make_buffer(std::move(st), t, shape, 0, detail::contiguous_strides(shape))), p};
}

int64_t normalized_axis(const char* op, int64_t axis, int64_t rank) {
  if (rank == 0) throw Error(std::string(op) + ": a rank-0 array has no axis to split");
  if (axis < -rank || axis >= rank)
    throw Error(std::string(op) + ": axis " + std::to_string(axis) + " is out of range for rank " +
                std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

// Checks the arrays of a collective within one process: distinct GPUs, one dtype, one shape.
// Returns the GPU indices, in order.
std::vector<int> collective_devices(const char* op, const std::vector<Array>& xs) {
  if (xs.empty()) throw Error(std::string(op) + ": no arrays given");
  std::vector<int> devs;
  for (size_t i = 0; i < xs.size(); ++i) {
    Device d = xs[i].device();
    if (!is_gpu(d))
      throw Error(std::string(op) + ": array " + std::to_string(i) + " is on " + d.str() +
                  "; the collectives of one process take one array per GPU (for CPU arrays across processes use "
                  "arrayc::processes::" + op + ")");
    for (size_t j = 0; j < i; ++j)
      if (xs[j].device() == d)
        throw Error(std::string(op) + ": arrays " + std::to_string(j) + " and " + std::to_string(i) + " are both on " +
                    d.str() + "; give one array per GPU");
    if (xs[i].dtype() != xs[0].dtype() || xs[i].shape() != xs[0].shape())
      throw Error(std::string(op) + ": array " + std::to_string(i) + " on " + d.str() + " is " +
                  dtype_name(xs[i].dtype()) + shape_str(xs[i].shape()) + " but array 0 on " + xs[0].device().str() +
                  " is " + dtype_name(xs[0].dtype()) + shape_str(xs[0].shape()) + "; all must match");
    devs.push_back(d.index);
  }
  return devs;
}

detail::nccl::Op nccl_op(ReduceOp op) { return static_cast<detail::nccl::Op>(static_cast<int>(op)); }
detail::mpi::Op mpi_op(ReduceOp op) { return static_cast<detail::mpi::Op>(static_cast<int>(op)); }

// One NCCL collective over xs (checked), with outputs of shape `out` on each device.
std::vector<Array> local_collective(const char* op, detail::nccl::Kind kind, const std::vector<Array>& xs,
                                    const Shape& out, size_t count, ReduceOp rop, int root = 0) {
  std::vector<int> devs = collective_devices(op, xs);
  std::vector<NodeRef> keep;
  std::vector<const void*> send;
  std::vector<void*> recv;
  std::vector<Array> results;
  for (const Array& x : xs) {
    keep.push_back(packed(x));
    send.push_back(data_of(keep.back()));
    Fresh f = fresh(x.device(), x.dtype(), out);
    recv.push_back(f.data);
    results.push_back(f.array);
  }
  detail::nccl::Comm& c = detail::nccl::local(devs);
  detail::nccl::run(c, kind, send, recv, count, xs[0].dtype(), nccl_op(rop), root, op);
  return results;
}

}  // namespace

// ---- Peer access ----------------------------------------------------------------------------------

bool can_access_peer(Device to, Device from) {
  detail::checked(to);
  detail::checked(from);
  if (!is_gpu(to) || !is_gpu(from)) return false;
  return detail::cuda::can_access_peer(to.index, from.index);
}

void require_peer_access(Device to, Device from) {
  if (!can_access_peer(to, from))
    throw Error("require_peer_access: " + to.str() + " cannot read " + from.str() +
                "'s memory directly (" +
                (is_gpu(to) && is_gpu(from) ? std::string("the hardware or ARRAYC_PEER_ACCESS=0 does not allow peer access; "
                                                          "copies between them are staged through pinned host memory")
                                            : std::string("peer access is between two GPUs")) +
                ")");
}

// ---- One process, several GPUs ---------------------------------------------------------------------

std::vector<Array> all_reduce(const std::vector<Array>& xs, ReduceOp op) {
  collective_devices("all_reduce", xs);
  return local_collective("all_reduce", detail::nccl::Kind::AllReduce, xs, xs[0].shape(),
                          static_cast<size_t>(xs[0].size()), op);
}

std::vector<Array> all_gather(const std::vector<Array>& xs) {
  collective_devices("all_gather", xs);
  if (xs[0].ndim() == 0) throw Error("all_gather: rank-0 arrays cannot be joined along axis 0");
  Shape out = xs[0].shape();
  out[0] *= static_cast<int64_t>(xs.size());
  return local_collective("all_gather", detail::nccl::Kind::AllGather, xs, out, static_cast<size_t>(xs[0].size()),
                          ReduceOp::Sum);
}

std::vector<Array> reduce_scatter(const std::vector<Array>& xs, ReduceOp op) {
  collective_devices("reduce_scatter", xs);
  int64_t n = static_cast<int64_t>(xs.size());
  if (xs[0].ndim() == 0 || xs[0].shape()[0] % n != 0)
    throw Error("reduce_scatter: axis 0 of shape " + shape_str(xs[0].shape()) + " does not split into " +
                std::to_string(n) + " equal parts");
  Shape out = xs[0].shape();
  out[0] /= n;
  return local_collective("reduce_scatter", detail::nccl::Kind::ReduceScatter, xs, out,
                          static_cast<size_t>(shape_numel(out)), op);
}

std::vector<Array> broadcast(const Array& x, const std::vector<Device>& devices) {
  if (devices.empty()) throw Error("broadcast: no devices given");
  for (Device d : devices) detail::check_device("broadcast", d);
  bool all_gpus = is_gpu(x.device());
  for (Device d : devices) all_gpus = all_gpus && is_gpu(d);
  if (!all_gpus) {  // a plain copy to each
    std::vector<Array> out;
    for (Device d : devices) out.push_back(x.to(d));
    return out;
  }
  // The root is the source's own entry when it is one of the devices, else a copy on devices[0].
  auto it = std::find(devices.begin(), devices.end(), x.device());
  int root = it == devices.end() ? 0 : static_cast<int>(it - devices.begin());
  std::vector<Array> xs;
  for (size_t i = 0; i < devices.size(); ++i)
    xs.push_back(static_cast<int>(i) == root ? (it == devices.end() ? x.to(devices[0]) : x)
                                             : Array(detail::make_constant(detail::Scalar::of(x.dtype(), 0), x.shape(),
                                                                           detail::checked(devices[i]))));
  return local_collective("broadcast", detail::nccl::Kind::Broadcast, xs, x.shape(), static_cast<size_t>(x.size()),
                          ReduceOp::Sum, root);
}

// ---- Sharded arrays ----------------------------------------------------------------------------------

ShardedArray::ShardedArray(std::vector<Array> shards, int64_t axis) : shards_(std::move(shards)) {
  if (shards_.empty()) throw Error("ShardedArray: no shards given");
  axis_ = normalized_axis("ShardedArray", axis, shards_[0].ndim());
  const Array& a = shards_[0];
  for (size_t i = 1; i < shards_.size(); ++i) {
    const Array& b = shards_[i];
    bool fits = b.dtype() == a.dtype() && b.ndim() == a.ndim();
    for (int64_t k = 0; fits && k < a.ndim(); ++k) fits = k == axis_ || a.shape()[k] == b.shape()[k];
    if (!fits)
      throw Error("ShardedArray: shard " + std::to_string(i) + " on " + b.device().str() + " is " +
                  dtype_name(b.dtype()) + shape_str(b.shape()) + " but shard 0 on " + a.device().str() + " is " +
                  dtype_name(a.dtype()) + shape_str(a.shape()) + "; shards may differ only in the extent of axis " +
                  std::to_string(axis_));
  }
}

std::vector<Device> ShardedArray::devices() const {
  std::vector<Device> ds;
  for (const Array& s : shards_) ds.push_back(s.device());
  return ds;
}

Shape ShardedArray::shape() const {
  Shape s = shards_[0].shape();
  s[axis_] = 0;
  for (const Array& x : shards_) s[axis_] += x.shape()[axis_];
  return s;
}

const ShardedArray& ShardedArray::eval() const {
  for (const Array& s : shards_) s.eval();  // each returns once its device's work is queued
  return *this;
}

Array ShardedArray::gather(Device d) const {
  detail::check_device("gather", d);
  d = detail::checked(d);
  // The shards' data, axis first, packed one after another into one buffer on d; the result is
  // that buffer with the axis moved back (a view).
  int64_t rank = shards_[0].ndim();
  std::vector<int64_t> perm = {axis_}, back(static_cast<size_t>(rank));
  for (int64_t k = 0; k < rank; ++k)
    if (k != axis_) perm.push_back(k);
  for (int64_t k = 0; k < rank; ++k) back[perm[k]] = k;
  Shape whole = shape(), moved;
  for (int64_t k : perm) moved.push_back(whole[k]);
  Fresh out = fresh(d, dtype(), moved);
  size_t offset = 0;
  for (const Array& s : shards_) {
    NodeRef p = packed(axis_ == 0 ? s : transpose(s, perm));
    size_t bytes = bytes_of(p->shape, p->dtype);
    detail::copy_bytes(d, static_cast<char*>(out.data) + offset, p->device, data_of(p), bytes);
    offset += bytes;
  }
  return axis_ == 0 ? out.array : transpose(out.array, back);
}

ShardedArray shard(const Array& x, const std::vector<Device>& devices, int64_t axis) {
  if (devices.empty()) throw Error("shard: no devices given");
  for (Device d : devices) {
    detail::check_device("shard", d);
    detail::checked(d);
  }
  axis = normalized_axis("shard", axis, x.ndim());
  x.eval();
  NodeRef n = x.node();
  int64_t extent = x.shape()[axis], parts = static_cast<int64_t>(devices.size());
  std::vector<int64_t> strides = n->buffer_strides();
  std::vector<Array> shards;
  for (int64_t i = 0, start = 0; i < parts; ++i) {
    int64_t len = extent / parts + (i < extent % parts ? 1 : 0);
    Shape s = x.shape();
    s[axis] = len;
    Array block(detail::make_buffer(n->storage, n->dtype, s, n->buffer_offset() + start * strides[axis], strides));
    shards.push_back(block.to(devices[i]));
    start += len;
  }
  return ShardedArray(std::move(shards), axis);
}

namespace {
std::string layout_str(const ShardedArray& x) {
  std::string s = devices_str(x.devices()) + " along axis " + std::to_string(x.axis()) + " with extents [";
  for (size_t i = 0; i < x.shards().size(); ++i)
    s += (i ? ", " : "") + std::to_string(x.shards()[i].shape()[x.axis()]);
  return s + "]";
}
}  // namespace

ShardedArray map(const std::function<Array(const std::vector<Array>&)>& f, const std::vector<ShardedArray>& xs,
                 int64_t out_axis) {
  if (xs.empty()) throw Error("map: no sharded inputs given");
  const ShardedArray& a = xs[0];
  for (size_t j = 1; j < xs.size(); ++j) {
    const ShardedArray& b = xs[j];
    bool same = b.axis() == a.axis() && b.devices() == a.devices();
    for (size_t i = 0; same && i < a.shards().size(); ++i)
      same = a.shards()[i].shape()[a.axis()] == b.shards()[i].shape()[b.axis()];
    if (!same)
      throw Error("map: inputs 0 and " + std::to_string(j) + " are sharded differently: " + layout_str(a) + " vs " +
                  layout_str(b));
  }
  std::vector<Array> out;
  for (size_t i = 0; i < a.shards().size(); ++i) {
    std::vector<Array> args;
    for (const ShardedArray& x : xs) args.push_back(x.shards()[i]);
    Array r = f(args);
    if (r.device() != a.shards()[i].device())
      throw Error("map: the function returned an array on " + r.device().str() + " for shard " + std::to_string(i) +
                  ", which lives on " + a.shards()[i].device().str());
    out.push_back(std::move(r));
  }
  return ShardedArray(std::move(out), out_axis < 0 ? a.axis() : out_axis);
}

ShardedArray map(const std::function<Array(const Array&)>& f, const ShardedArray& x) {
  return map([&](const std::vector<Array>& v) { return f(v[0]); }, {x});
}

ShardedArray map(const std::function<Array(const Array&, const Array&)>& f, const ShardedArray& a,
                 const ShardedArray& b) {
  return map([&](const std::vector<Array>& v) { return f(v[0], v[1]); }, {a, b});
}

ShardedArray operator+(const ShardedArray& a, const ShardedArray& b) { return map(add, a, b); }
ShardedArray operator-(const ShardedArray& a, const ShardedArray& b) { return map(subtract, a, b); }
ShardedArray operator*(const ShardedArray& a, const ShardedArray& b) { return map(multiply, a, b); }
ShardedArray operator/(const ShardedArray& a, const ShardedArray& b) { return map(divide, a, b); }

Array reduce(const ShardedArray& x, ReduceOp op, Device to) {
  detail::check_device("reduce", to);
  to = detail::checked(to);
  using Whole = Array (*)(const Array&);
  using Pair = Array (*)(const Array&, const Array&);
  Whole whole = nullptr;
  Pair combine = nullptr;
  switch (op) {
    case ReduceOp::Sum: whole = static_cast<Whole>(sum), combine = add; break;
    case ReduceOp::Prod: whole = static_cast<Whole>(prod), combine = multiply; break;
    case ReduceOp::Max: whole = static_cast<Whole>(max), combine = maximum; break;
    case ReduceOp::Min: whole = static_cast<Whole>(min), combine = minimum; break;
    default: throw Error("reduce: unknown ReduceOp " + std::to_string(static_cast<int>(op)));
  }
  // Every shard reduces on its device first (all queued before any partial is read back); an
  // empty shard has nothing to give max and min.
  std::vector<Array> partials;
  for (const Array& s : x.shards())
    if (s.size() > 0 || op == ReduceOp::Sum || op == ReduceOp::Prod) partials.push_back(whole(s).eval());
  if (partials.empty()) return whole(x.shards()[0]);  // raises the reduction's own error for an empty array
  Array r = partials[0].to(to);
  for (size_t i = 1; i < partials.size(); ++i) r = combine(r, partials[i].to(to));
  return r;
}

// ---- Several processes -----------------------------------------------------------------------------

namespace processes {
namespace {

// Every process passes the same dtype and shape, else every process raises (checked through
// MPI before the collective, so a mismatch cannot hang it or read out of bounds).
void check_same(const char* op, const Array& x) {
  int n = detail::mpi::size();
  std::vector<int64_t> mine = {static_cast<int64_t>(x.dtype()), x.ndim(), static_cast<int64_t>(is_gpu(x.device()))};
  mine.resize(3 + 8, -1);
  for (int64_t k = 0; k < std::min<int64_t>(x.ndim(), 8); ++k) mine[3 + k] = x.shape()[k];
  mine.push_back(x.size());
  std::vector<int64_t> all(mine.size() * n);
  detail::mpi::all_gather(mine.data(), all.data(), mine.size(), DType::Int64, op);
  for (int r = 0; r < n; ++r) {
    if (std::equal(mine.begin(), mine.end(), all.begin() + r * mine.size())) continue;
    const int64_t* o = all.data() + r * mine.size();
    Shape other(o + 3, o + 3 + std::min<int64_t>(o[1], 8));
    throw Error(std::string(op) + ": process " + std::to_string(rank()) + " passes " + dtype_name(x.dtype()) +
                shape_str(x.shape()) + " on " + (is_gpu(x.device()) ? "a GPU" : "the CPU") + " but process " +
                std::to_string(r) + " passes " + dtype_name(static_cast<DType>(o[0])) + shape_str(other) + " on " +
                (o[2] ? "a GPU" : "the CPU") + "; every process must pass the same dtype and shape, on the same kind of device");
  }
}

// One collective across processes: MPI on the CPU, NCCL (bootstrapped through MPI) on a GPU.
Array run(const char* op, detail::nccl::Kind kind, const Array& x, const Shape& out, size_t count, ReduceOp rop,
          int root) {
  check_same(op, x);
  NodeRef in = packed(x);
  Fresh f = fresh(x.device(), x.dtype(), out);
  if (is_gpu(x.device())) {
    int dev = x.device().index;
    detail::nccl::Comm& c = detail::nccl::global(dev, processes::count(), processes::rank(), [op](char* id, size_t bytes) {
      detail::mpi::broadcast(id, bytes, 0, op);
    });
    detail::nccl::run(c, kind, {data_of(in)}, {f.data}, count, x.dtype(), nccl_op(rop), root, op);
    return f.array;
  }
  switch (kind) {
    case detail::nccl::Kind::AllReduce: detail::mpi::all_reduce(data_of(in), f.data, count, x.dtype(), mpi_op(rop), op); break;
    case detail::nccl::Kind::AllGather: detail::mpi::all_gather(data_of(in), f.data, count, x.dtype(), op); break;
    case detail::nccl::Kind::ReduceScatter:
      detail::mpi::reduce_scatter(data_of(in), f.data, count, x.dtype(), mpi_op(rop), op);
      break;
    case detail::nccl::Kind::Broadcast:
      std::memcpy(f.data, data_of(in), bytes_of(x.shape(), x.dtype()));
      detail::mpi::broadcast(f.data, bytes_of(x.shape(), x.dtype()), root, op);
      break;
  }
  return f.array;
}

}  // namespace

int rank() { return detail::mpi::rank(); }
int count() { return detail::mpi::size(); }

Array all_reduce(const Array& x, ReduceOp op) {
  return run("all_reduce", detail::nccl::Kind::AllReduce, x, x.shape(), static_cast<size_t>(x.size()), op, 0);
}

Array all_gather(const Array& x) {
  if (x.ndim() == 0) throw Error("all_gather: rank-0 arrays cannot be joined along axis 0");
  Shape out = x.shape();
  out[0] *= count();
  return run("all_gather", detail::nccl::Kind::AllGather, x, out, static_cast<size_t>(x.size()), ReduceOp::Sum, 0);
}

Array reduce_scatter(const Array& x, ReduceOp op) {
  int n = count();
  if (x.ndim() == 0 || x.shape()[0] % n != 0)
    throw Error("reduce_scatter: axis 0 of shape " + shape_str(x.shape()) + " does not split into " +
                std::to_string(n) + " equal parts (one per process)");
  Shape out = x.shape();
  out[0] /= n;
  return run("reduce_scatter", detail::nccl::Kind::ReduceScatter, x, out, static_cast<size_t>(shape_numel(out)), op, 0);
}

Array broadcast(const Array& x, int root) {
  if (root < 0 || root >= count())
    throw Error("broadcast: root " + std::to_string(root) + " is not a process (there are " + std::to_string(count()) +
                ")");
  return run("broadcast", detail::nccl::Kind::Broadcast, x, x.shape(), static_cast<size_t>(x.size()), ReduceOp::Sum,
             root);
}

void barrier() { detail::mpi::barrier("barrier"); }

}  // namespace processes
}  // namespace arrayc
