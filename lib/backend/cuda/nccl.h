// NCCL, the collectives between GPUs: loaded at run time (dlopen of libnccl.so.2, or
// ARRAYC_NCCL_LIBRARY) as the driver is, so that one build runs where NCCL is not installed; a
// collective then raises arrayc::Error saying why. Work is queued on each device's own stream
// (cuda_driver.h), so it is ordered after the kernels that made its inputs and before those that
// read its outputs, like any other launch. Design notes: docs/distributed.md.
#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "arrayc/dtype.h"

namespace arrayc::detail::nccl {

// Why NCCL cannot be used ("NCCL (libnccl.so.2) could not be loaded: ..."), or "" when it can.
const std::string& unavailable_reason();
std::string version();  // "2.27.3"; throws when unavailable

enum class Kind { AllReduce, AllGather, ReduceScatter, Broadcast };
enum class Op { Sum, Prod, Max, Min };

// A communicator: its ranks' devices on this process, in rank order. Made once and kept.
struct Comm;

// One process, several GPUs (ncclCommInitAll): rank i is devices[i]. Kept per device list.
Comm& local(const std::vector<int>& devices);
// Several processes, one GPU each (ncclCommInitRank): this process is `rank` of `nranks` on
// device `dev`. share_id gets rank 0's 128-byte id to every process (MPI_Bcast).
Comm& global(int dev, int nranks, int rank, const std::function<void(char* id, size_t bytes)>& share_id);

// One collective over every rank of c that lives in this process: send[i] and recv[i] are
// local rank i's buffers. `count` is the element count of each rank's send buffer for
// AllGather, of each rank's receive buffer for ReduceScatter, of both otherwise. Queued on each
// device's stream; for a communicator across processes it then waits (polling, so that a peer
// that never joins is aborted after ARRAYC_COLLECTIVE_TIMEOUT seconds instead of hanging).
// `what` names the operation in errors.
void run(Comm& c, Kind kind, const std::vector<const void*>& send, const std::vector<void*>& recv, size_t count,
         DType t, Op op, int root, const std::string& what);

}  // namespace arrayc::detail::nccl
