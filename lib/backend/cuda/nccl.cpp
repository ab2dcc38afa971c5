#include "backend/cuda/nccl.h"

#include <dlfcn.h>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "arrayc/error.h"
#include "backend/cuda/cuda_driver.h"
#include "support/env.h"

// NCCL's types and entry points, declared with its ABI (nccl.h is not needed to build).
extern "C" {
typedef struct ncclComm* ncclComm_t;
typedef struct {
  char internal[128];
} ncclUniqueId;
typedef enum { ncclSuccess = 0, ncclInProgress = 7, ncclResultMax_ = 0x7fffffff } ncclResult_t;
typedef enum { ncclUint8 = 1, ncclInt32 = 2, ncclInt64 = 4, ncclFloat32 = 7, ncclFloat64 = 8 } ncclDataType_t;
typedef enum { ncclSum = 0, ncclProd = 1, ncclMax = 2, ncclMin = 3 } ncclRedOp_t;
typedef struct CUstream_st* cudaStream_t;
}

namespace arrayc::detail::nccl {

struct Comm {
  std::vector<int> devices;         // this process's ranks' devices
  std::vector<ncclComm_t> comms;    // one per local rank
  bool across_processes = false;
  std::string broken;               // set once a collective failed or was aborted
  std::mutex mu;                    // one collective at a time on a communicator
};

namespace {

struct Library {
  void* lib = nullptr;
  std::string reason;
#define ARRAYC_NCCL_FUNCTIONS(X)                                                                          \
  X(ncclGetVersion, ncclResult_t, int*)                                                                   \
  X(ncclGetErrorString, const char*, ncclResult_t)                                                        \
  X(ncclGetUniqueId, ncclResult_t, ncclUniqueId*)                                                         \
  X(ncclCommInitRank, ncclResult_t, ncclComm_t*, int, ncclUniqueId, int)                                  \
  X(ncclCommInitAll, ncclResult_t, ncclComm_t*, int, const int*)                                          \
  X(ncclCommAbort, ncclResult_t, ncclComm_t)                                                              \
  X(ncclCommGetAsyncError, ncclResult_t, ncclComm_t, ncclResult_t*)                                       \
  X(ncclGroupStart, ncclResult_t)                                                                         \
  X(ncclGroupEnd, ncclResult_t)                                                                           \
  X(ncclAllReduce, ncclResult_t, const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,     \
    cudaStream_t)                                                                                         \
  X(ncclAllGather, ncclResult_t, const void*, void*, size_t, ncclDataType_t, ncclComm_t, cudaStream_t)    \
  X(ncclReduceScatter, ncclResult_t, const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, \
    cudaStream_t)                                                                                         \
  X(ncclBroadcast, ncclResult_t, const void*, void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t)
#define ARRAYC_NCCL_MEMBER(name, ret, ...) ret (*name)(__VA_ARGS__) = nullptr;
  ARRAYC_NCCL_FUNCTIONS(ARRAYC_NCCL_MEMBER)
#undef ARRAYC_NCCL_MEMBER
  std::mutex mu;  // the communicator table
  std::map<std::vector<int>, std::unique_ptr<Comm>> local;
  std::map<int, std::unique_ptr<Comm>> global;

  Library() {
    std::string path = nccl_library_setting();
    lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* e = dlerror();
      reason = "NCCL (" + path + ") could not be loaded: " + (e ? e : "unknown error") +
               " (install NCCL, e.g. the Python package nvidia-nccl-cu12 or libnccl2, and put its lib/ on "
               "LD_LIBRARY_PATH, or set ARRAYC_NCCL_LIBRARY)";
      return;
    }
#define ARRAYC_NCCL_LOAD(name, ...)                                              \
  name = reinterpret_cast<decltype(name)>(dlsym(lib, #name));                    \
  if (!name) {                                                                   \
    reason = "NCCL (" + path + ") lacks " #name " (NCCL 2.13 or newer is needed)"; \
    return;                                                                      \
  }
    ARRAYC_NCCL_FUNCTIONS(ARRAYC_NCCL_LOAD)
#undef ARRAYC_NCCL_LOAD
  }

  void check(ncclResult_t r, const std::string& what) const {
    if (r != ncclSuccess) throw Error(what + " failed: NCCL error " + std::to_string(static_cast<int>(r)) + " (" +
                                      ncclGetErrorString(r) + ")");
  }
};

Library& library() {
  static Library* l = new Library;  // never destroyed, like the driver
  return *l;
}

Library& loaded(const std::string& what) {
  Library& l = library();
  if (!l.reason.empty()) throw Error(what + ": " + l.reason);
  return l;
}

std::string devices_str(const std::vector<int>& devs) {
  std::string s;
  for (int d : devs) s += (s.empty() ? "gpu:" : ", gpu:") + std::to_string(d);
  return s;
}

ncclDataType_t nccl_type(DType t, Kind kind, Op op, const std::string& what) {
  bool moves_only = kind == Kind::AllGather || kind == Kind::Broadcast;
  switch (t) {
    case DType::Bool:
      if (moves_only || op == Op::Max || op == Op::Min) return ncclUint8;
      break;
    case DType::Int32: return ncclInt32;
    case DType::Int64: return ncclInt64;
    case DType::Float32: return ncclFloat32;
    case DType::Float64: return ncclFloat64;
    default: break;
  }
  throw Error(what + ": NCCL has no " + (moves_only ? "transfer" : "sum/product") + " of dtype " + dtype_name(t));
}

ncclRedOp_t nccl_op(Op op) {
  switch (op) {
    case Op::Sum: return ncclSum;
    case Op::Prod: return ncclProd;
    case Op::Max: return ncclMax;
    case Op::Min: return ncclMin;
  }
  return ncclSum;
}

// Waits for a collective across processes without blocking in the driver, so that a peer that
// never joins (or died) ends in an abort and an error rather than a hang.
void wait_polling(Library& l, Comm& c, const std::string& what) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(collective_timeout_setting());
  for (;;) {
    bool idle = true;
    for (size_t i = 0; i < c.devices.size(); ++i) {
      ncclResult_t async = ncclSuccess;
      l.ncclCommGetAsyncError(c.comms[i], &async);
      if (async != ncclSuccess && async != ncclInProgress) {
        for (ncclComm_t comm : c.comms) l.ncclCommAbort(comm);
        c.broken = what + " failed on gpu:" + std::to_string(c.devices[i]) + ": NCCL error " +
                   std::to_string(static_cast<int>(async)) + " (" + l.ncclGetErrorString(async) + ")";
        throw Error(c.broken);
      }
      idle = idle && cuda::stream_idle(c.devices[i]);
    }
    if (idle) return;
    if (std::chrono::steady_clock::now() > deadline) {
      for (ncclComm_t comm : c.comms) l.ncclCommAbort(comm);
      c.broken = what + " did not finish within ARRAYC_COLLECTIVE_TIMEOUT=" +
                 std::to_string(collective_timeout_setting()) +
                 " seconds (a process did not join it?); the communicator was aborted";
      throw Error(c.broken);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

}  // namespace

const std::string& unavailable_reason() { return library().reason; }

std::string version() {
  Library& l = loaded("NCCL");
  int v = 0;
  l.check(l.ncclGetVersion(&v), "ncclGetVersion");
  // 2.x versions since 2.9 are encoded as major*10000 + minor*100 + patch.
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

Comm& local(const std::vector<int>& devices) {
  Library& l = loaded("NCCL communicator over " + devices_str(devices));
  std::lock_guard<std::mutex> lock(l.mu);
  auto& slot = l.local[devices];
  if (!slot) {
    for (int d : devices) cuda::stream(d);  // each device's context exists and is valid
    auto c = std::make_unique<Comm>();
    c->devices = devices;
    c->comms.resize(devices.size());
    l.check(l.ncclCommInitAll(c->comms.data(), static_cast<int>(devices.size()), devices.data()),
            "making the NCCL communicator over " + devices_str(devices));
    slot = std::move(c);
  }
  return *slot;
}

Comm& global(int dev, int nranks, int rank, const std::function<void(char* id, size_t bytes)>& share_id) {
  Library& l = loaded("NCCL across processes on gpu:" + std::to_string(dev));
  std::lock_guard<std::mutex> lock(l.mu);
  auto& slot = l.global[dev];
  if (!slot) {
    cuda::stream(dev);  // the context exists and is current
    ncclUniqueId id{};
    if (rank == 0) l.check(l.ncclGetUniqueId(&id), "ncclGetUniqueId");
    share_id(id.internal, sizeof(id.internal));
    auto c = std::make_unique<Comm>();
    c->devices = {dev};
    c->comms.resize(1);
    c->across_processes = true;
    l.check(l.ncclCommInitRank(&c->comms[0], nranks, id, rank),
            "making the NCCL communicator of " + std::to_string(nranks) + " processes (rank " + std::to_string(rank) +
                ", gpu:" + std::to_string(dev) + ")");
    slot = std::move(c);
  }
  return *slot;
}

void run(Comm& c, Kind kind, const std::vector<const void*>& send, const std::vector<void*>& recv, size_t count,
         DType t, Op op, int root, const std::string& what) {
  Library& l = loaded(what);
  std::lock_guard<std::mutex> lock(c.mu);
  if (!c.broken.empty()) throw Error(what + ": the communicator is unusable after an earlier failure: " + c.broken);
  ncclDataType_t type = nccl_type(t, kind, op, what);
  std::vector<cudaStream_t> streams;
  for (int d : c.devices) streams.push_back(static_cast<cudaStream_t>(cuda::stream(d)));
  l.check(l.ncclGroupStart(), what + ": ncclGroupStart");
  ncclResult_t first = ncclSuccess;
  for (size_t i = 0; i < c.devices.size(); ++i) {
    ncclResult_t r = ncclSuccess;
    switch (kind) {
      case Kind::AllReduce: r = l.ncclAllReduce(send[i], recv[i], count, type, nccl_op(op), c.comms[i], streams[i]); break;
      case Kind::AllGather: r = l.ncclAllGather(send[i], recv[i], count, type, c.comms[i], streams[i]); break;
      case Kind::ReduceScatter:
        r = l.ncclReduceScatter(send[i], recv[i], count, type, nccl_op(op), c.comms[i], streams[i]);
        break;
      case Kind::Broadcast: r = l.ncclBroadcast(send[i], recv[i], count, type, root, c.comms[i], streams[i]); break;
    }
    if (first == ncclSuccess) first = r;
  }
  ncclResult_t end = l.ncclGroupEnd();
  l.check(first, what + " (" + devices_str(c.devices) + ")");
  l.check(end, what + " (" + devices_str(c.devices) + "): ncclGroupEnd");
  if (c.across_processes) wait_polling(l, c, what);
}

}  // namespace arrayc::detail::nccl
