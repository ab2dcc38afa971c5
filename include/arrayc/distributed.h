// Several devices and several processes: copies between GPUs, sharded arrays, and collectives.
//
// One process, several GPUs: every visible GPU is gpu(i), with its own context, stream, memory
// and loaded kernels; work queued on two GPUs runs at once (eval() and jit calls return once
// their work is queued). x.to(gpu(1)) copies peer to peer where the hardware allows (through
// pinned host memory otherwise). The collectives below take one array per GPU and go through
// NCCL, loaded at run time (libnccl.so.2): without it they raise arrayc::Error saying why.
//
// Several processes (started by mpirun): arrayc::processes collectives take this process's
// array; on the CPU they go through MPI (OpenMPI's libmpi.so.40, loaded at run time), on a GPU
// through NCCL, whose communicator MPI sets up. See docs/distributed.md.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "arrayc/array.h"
#include "arrayc/device.h"

namespace arrayc {

enum class ReduceOp { Sum, Prod, Max, Min };

// Whether copies from `from` to `to` go peer to peer (a GPU pair whose peer access the hardware
// allows; enabled on first use). False under ARRAYC_PEER_ACCESS=0, where copies are staged.
bool can_access_peer(Device to, Device from);
// Raises arrayc::Error naming both devices when `to` cannot read `from`'s memory directly.
void require_peer_access(Device to, Device from);

// ---- One process, one array per GPU (NCCL) -----------------------------------------------------
// The arrays live on distinct GPUs and have one dtype; results are on the same devices, in order.
// all_reduce: every result is the elementwise op over all arrays (same shapes).
std::vector<Array> all_reduce(const std::vector<Array>& xs, ReduceOp op = ReduceOp::Sum);
// all_gather: every result is the arrays concatenated along axis 0 (same shapes).
std::vector<Array> all_gather(const std::vector<Array>& xs);
// reduce_scatter: the elementwise op over all arrays, split along axis 0 in len(xs) equal parts;
// result i is part i (axis 0 must divide evenly).
std::vector<Array> reduce_scatter(const std::vector<Array>& xs, ReduceOp op = ReduceOp::Sum);
// broadcast: x copied to each device (through NCCL when x and all devices are GPUs).
std::vector<Array> broadcast(const Array& x, const std::vector<Device>& devices);

// ---- Sharded arrays ------------------------------------------------------------------------------
// An array split along one axis over several devices: shard i is a contiguous block of that axis
// on devices()[i]. Shards may differ in extent only along the axis. A device may appear twice
// (several shards on the CPU, for testing and for CPUs without GPUs).
class ShardedArray {
 public:
  // Raises arrayc::Error when the shards do not fit together (dtype, rank, extents off the axis).
  ShardedArray(std::vector<Array> shards, int64_t axis);

  const std::vector<Array>& shards() const { return shards_; }
  std::vector<Device> devices() const;
  int64_t axis() const { return axis_; }
  Shape shape() const;  // of the whole array
  DType dtype() const { return shards_[0].dtype(); }

  // Computes every shard (work on several GPUs is queued on each at once).
  const ShardedArray& eval() const;
  // The whole array on d (shards copied there and joined).
  Array gather(Device d) const;

 private:
  std::vector<Array> shards_;
  int64_t axis_;
};

// Splits x along `axis` into len(devices) blocks as equal as numpy.array_split makes them (the
// first ones one longer), block i copied to devices[i].
ShardedArray shard(const Array& x, const std::vector<Device>& devices, int64_t axis = 0);

// f applied to each shard: f gets shard i of every input (all on device i) and returns one array
// there, sharded along `out_axis` (the inputs' axis when -1). Inputs must have the same layout
// (devices, axis and shard extents), else arrayc::Error naming both layouts. With a jit function
// f is traced once per device and compiled once per kind of device (GPUs of one architecture
// share the compiled kernels).
ShardedArray map(const std::function<Array(const std::vector<Array>&)>& f, const std::vector<ShardedArray>& xs,
                 int64_t out_axis = -1);
ShardedArray map(const std::function<Array(const Array&)>& f, const ShardedArray& x);
ShardedArray map(const std::function<Array(const Array&, const Array&)>& f, const ShardedArray& a,
                 const ShardedArray& b);
ShardedArray operator+(const ShardedArray& a, const ShardedArray& b);
ShardedArray operator-(const ShardedArray& a, const ShardedArray& b);
ShardedArray operator*(const ShardedArray& a, const ShardedArray& b);
ShardedArray operator/(const ShardedArray& a, const ShardedArray& b);

// A reduction over every element: each shard reduces on its device, the partial results are
// gathered to `to` and combined there. Sum and prod of bool and int32 give int64, as sum does.
Array reduce(const ShardedArray& x, ReduceOp op, Device to);

// ---- Several processes (MPI; GPUs through NCCL) ---------------------------------------------------
namespace processes {
int rank();   // this process's rank (MPI is initialized on first use)
int count();  // how many processes the job has (1 when not started by mpirun)
// Collectives over every process, each passing its own array (same dtype and shape everywhere;
// a GPU array uses NCCL on that GPU, a CPU array MPI). Every process must call them in the same
// order. The result is on the array's device. A peer that never joins a GPU collective ends it
// after ARRAYC_COLLECTIVE_TIMEOUT seconds with arrayc::Error.
Array all_reduce(const Array& x, ReduceOp op = ReduceOp::Sum);
Array all_gather(const Array& x);  // concatenated along axis 0, in rank order
Array reduce_scatter(const Array& x, ReduceOp op = ReduceOp::Sum);  // this rank's part of axis 0
Array broadcast(const Array& x, int root = 0);  // root's array, on every process
void barrier();
}  // namespace processes

}  // namespace arrayc
