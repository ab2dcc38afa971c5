#include "backend/cuda/cuda_driver.h"

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "arrayc/error.h"
#include "support/env.h"

// The driver's types and entry points: from the toolkit's header when the build has it (the
// compiler then checks our uses against the real prototypes), otherwise the few we use,
// declared here with the driver's ABI. Either way nothing links against libcuda.
#ifdef ARRAYC_HAVE_CUDA_H
#include <cuda.h>
#else
extern "C" {
typedef enum cudaError_enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_NOT_READY = 600,
  CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED = 704,
  CUDA_ERROR_MAX_ = 0x7fffffff,
} CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st* CUcontext;
typedef struct CUmod_st* CUmodule;
typedef struct CUfunc_st* CUfunction;
typedef struct CUstream_st* CUstream;
typedef struct CUevent_st* CUevent;
typedef enum CUdevice_attribute_enum {
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
  CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10,
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
} CUdevice_attribute;
typedef enum CUfunction_attribute_enum {
  CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
  CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
  CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3,
  CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
} CUfunction_attribute;
typedef enum CUjit_option_enum {
  CU_JIT_INFO_LOG_BUFFER = 3,
  CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
  CU_JIT_LOG_VERBOSE = 12,
} CUjit_option;
typedef enum CUjitInputType_enum { CU_JIT_INPUT_PTX = 1 } CUjitInputType;
typedef struct CUlinkState_st* CUlinkState;
#define CU_STREAM_NON_BLOCKING 0x1
#define CU_EVENT_DISABLE_TIMING 0x2
#define CU_MEMHOSTALLOC_PORTABLE 0x1

// Prototypes only for decltype below; they are never called by name.
CUresult cuInit(unsigned int flags);
CUresult cuGetErrorName(CUresult error, const char** str);
CUresult cuGetErrorString(CUresult error, const char** str);
CUresult cuDeviceGetCount(int* count);
CUresult cuDeviceGet(CUdevice* device, int ordinal);
CUresult cuDeviceGetName(char* name, int len, CUdevice dev);
CUresult cuDeviceGetAttribute(int* pi, CUdevice_attribute attrib, CUdevice dev);
CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice dev);
CUresult cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev);
CUresult cuCtxSetCurrent(CUcontext ctx);
CUresult cuStreamCreate(CUstream* stream, unsigned int flags);
CUresult cuStreamSynchronize(CUstream stream);
CUresult cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytes);
CUresult cuMemFree_v2(CUdeviceptr dptr);
CUresult cuMemGetInfo_v2(size_t* free, size_t* total);
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void* src, size_t bytes, CUstream stream);
CUresult cuMemcpyDtoHAsync_v2(void* dst, CUdeviceptr src, size_t bytes, CUstream stream);
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream);
CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx,
                           size_t bytes, CUstream stream);
CUresult cuModuleLoadDataEx(CUmodule* module, const void* image, unsigned int num_options,
                            CUjit_option* options, void** option_values);
CUresult cuModuleGetFunction(CUfunction* fn, CUmodule module, const char* name);
CUresult cuDriverGetVersion(int* version);
CUresult cuLinkCreate_v2(unsigned int num_options, CUjit_option* options, void** option_values,
                         CUlinkState* state);
CUresult cuLinkAddData_v2(CUlinkState state, CUjitInputType type, void* data, size_t size, const char* name,
                          unsigned int num_options, CUjit_option* options, void** option_values);
CUresult cuLinkComplete(CUlinkState state, void** cubin, size_t* size);
CUresult cuLinkDestroy(CUlinkState state);
CUresult cuFuncGetAttribute(int* pi, CUfunction_attribute attrib, CUfunction fn);
CUresult cuFuncSetAttribute(CUfunction fn, CUfunction_attribute attrib, int value);
CUresult cuDeviceCanAccessPeer(int* can, CUdevice dev, CUdevice peer);
CUresult cuCtxEnablePeerAccess(CUcontext peer, unsigned int flags);
CUresult cuEventCreate(CUevent* event, unsigned int flags);
CUresult cuEventRecord(CUevent event, CUstream stream);
CUresult cuEventDestroy_v2(CUevent event);
CUresult cuStreamWaitEvent(CUstream stream, CUevent event, unsigned int flags);
CUresult cuStreamQuery(CUstream stream);
CUresult cuMemHostAlloc(void** p, size_t bytes, unsigned int flags);
CUresult cuMemFreeHost(void* p);
CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t bytes, CUstream stream);  // GPU sort, scatter
CUresult cuLaunchKernel(CUfunction f, unsigned int grid_x, unsigned int grid_y, unsigned int grid_z,
                        unsigned int block_x, unsigned int block_y, unsigned int block_z,
                        unsigned int shared_bytes, CUstream stream, void** params, void** extra);
// Hopper's tensor maps (TMA), CUDA 12.0 and later.
typedef struct CUtensorMap_st {
  alignas(64) unsigned long long opaque[16];
} CUtensorMap;
typedef enum CUtensorMapDataType_enum {
  CU_TENSOR_MAP_DATA_TYPE_FLOAT16 = 6,
  CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 = 9,
  CU_TENSOR_MAP_DATA_TYPE_TFLOAT32 = 11
} CUtensorMapDataType;
typedef enum CUtensorMapInterleave_enum { CU_TENSOR_MAP_INTERLEAVE_NONE = 0 } CUtensorMapInterleave;
typedef enum CUtensorMapSwizzle_enum { CU_TENSOR_MAP_SWIZZLE_128B = 3 } CUtensorMapSwizzle;
typedef enum CUtensorMapL2promotion_enum { CU_TENSOR_MAP_L2_PROMOTION_L2_256B = 3 } CUtensorMapL2promotion;
typedef enum CUtensorMapFloatOOBfill_enum { CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0 } CUtensorMapFloatOOBfill;
typedef unsigned int cuuint32_t;
typedef unsigned long long cuuint64_t;
CUresult cuTensorMapEncodeTiled(CUtensorMap* map, CUtensorMapDataType type, cuuint32_t rank, void* address,
                                const cuuint64_t* dims, const cuuint64_t* strides, const cuuint32_t* box,
                                const cuuint32_t* element_strides, CUtensorMapInterleave interleave,
                                CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill fill);
// Launches with attributes (thread-block clusters), CUDA 12.0 and later.
typedef enum CUlaunchAttributeID_enum { CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4 } CUlaunchAttributeID;
typedef union CUlaunchAttributeValue_union {
  char pad[64];
  struct {
    unsigned int x, y, z;
  } clusterDim;
} CUlaunchAttributeValue;
typedef struct CUlaunchAttribute_st {
  CUlaunchAttributeID id;
  char pad[8 - sizeof(CUlaunchAttributeID)];
  CUlaunchAttributeValue value;
} CUlaunchAttribute;
typedef struct CUlaunchConfig_st {
  unsigned int gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
  CUstream hStream;
  CUlaunchAttribute* attrs;
  unsigned int numAttrs;
} CUlaunchConfig;
CUresult cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction f, void** params, void** extra);
}
#endif
static_assert(sizeof(CUtensorMap) == sizeof(arrayc::detail::cuda::TensorMap));

namespace arrayc::detail::cuda {
namespace {

// Every entry point we use, by its exported (versioned) name.
#define ARRAYC_CUDA_FUNCTIONS(X)                                                           \
  X(cuInit) X(cuGetErrorName) X(cuGetErrorString) X(cuDeviceGetCount) X(cuDeviceGet)      \
  X(cuDeviceGetName) X(cuDeviceGetAttribute) X(cuDeviceTotalMem_v2)                        \
  X(cuDevicePrimaryCtxRetain) X(cuCtxSetCurrent) X(cuStreamCreate) X(cuStreamSynchronize) \
  X(cuMemAlloc_v2) X(cuMemFree_v2) X(cuMemGetInfo_v2) X(cuMemcpyHtoDAsync_v2)              \
  X(cuMemcpyDtoHAsync_v2) X(cuMemcpyDtoDAsync_v2) X(cuMemcpyPeerAsync)                     \
  X(cuModuleLoadDataEx) X(cuModuleGetFunction) X(cuFuncGetAttribute) X(cuFuncSetAttribute) X(cuLaunchKernel)          \
  X(cuDriverGetVersion) X(cuLinkCreate_v2) X(cuLinkAddData_v2) X(cuLinkComplete) X(cuLinkDestroy)  \
  X(cuDeviceCanAccessPeer) X(cuCtxEnablePeerAccess) X(cuEventCreate) X(cuEventRecord)       \
  X(cuEventDestroy_v2) X(cuStreamWaitEvent) X(cuStreamQuery) X(cuMemHostAlloc) X(cuMemFreeHost) \
  X(cuMemsetD8Async)

// Per device: the primary context and its stream (made on first use), the allocator's cache,
// and the last kernel launched (named when a fault surfaces).
struct DeviceState {
  std::once_flag once;
  std::atomic<bool> started{false};  // the context and stream exist
  CUcontext ctx = nullptr;
  CUstream stream = nullptr;
  std::mutex mu;  // everything below
  std::map<size_t, std::vector<CUdeviceptr>> cache;  // size class -> free blocks
  // Blocks handed out for a request of a smaller class (alloc), by address: their real class,
  // which free files them under again.
  std::unordered_map<CUdeviceptr, size_t> larger;
  AllocatorStats stats;
  std::string last_kernel;
  std::string fault;  // set after a sticky error: the device is unusable from then on
  // Peer access from this context to each other device's memory: 0 not tried yet, 1 enabled,
  // -1 impossible (copies from that device are staged through pinned host memory).
  std::vector<int> peer;
  // Small copies to the host (copy_to_host) land in this pinned buffer first.
  std::mutex readback_mu;
  void* readback = nullptr;  // kSmallReadback bytes, made on first use
};

// A copy to the host of at most this many bytes (an item(), W7's one value a call) goes through
// the device's pinned buffer: from pageable memory the driver stages even 4 bytes itself.
constexpr size_t kSmallReadback = 4096;

struct Driver {
  void* lib = nullptr;
#define ARRAYC_CUDA_MEMBER(f) decltype(&::f) f = nullptr;
  ARRAYC_CUDA_FUNCTIONS(ARRAYC_CUDA_MEMBER)
#undef ARRAYC_CUDA_MEMBER
  decltype(&::cuTensorMapEncodeTiled) cuTensorMapEncodeTiled = nullptr;  // optional (CUDA 12+): TMA products
  decltype(&::cuLaunchKernelEx) cuLaunchKernelEx = nullptr;              // optional (CUDA 12+): clusters
  std::string reason;  // why CUDA is unavailable, or ""
  int count = 0;
  std::vector<DeviceInfo> info;
  std::vector<std::unique_ptr<DeviceState>> devices;

  Driver() {
    lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* e = dlerror();
      reason = std::string("the CUDA driver (libcuda.so.1) could not be loaded: ") + (e ? e : "unknown error");
      return;
    }
#define ARRAYC_CUDA_LOAD(f)                                                                   \
  f = reinterpret_cast<decltype(f)>(dlsym(lib, #f));                                          \
  if (!f) {                                                                                   \
    reason = "the CUDA driver (libcuda.so.1) lacks " #f " (driver too old?)";                 \
    return;                                                                                   \
  }
    ARRAYC_CUDA_FUNCTIONS(ARRAYC_CUDA_LOAD)
#undef ARRAYC_CUDA_LOAD
    cuTensorMapEncodeTiled = reinterpret_cast<decltype(cuTensorMapEncodeTiled)>(dlsym(lib, "cuTensorMapEncodeTiled"));
    cuLaunchKernelEx = reinterpret_cast<decltype(cuLaunchKernelEx)>(dlsym(lib, "cuLaunchKernelEx"));
    if (CUresult r = cuInit(0); r != CUDA_SUCCESS) {
      reason = r == CUDA_ERROR_NO_DEVICE ? "no CUDA device" : "cuInit failed: " + error_text(r);
      return;
    }
    if (CUresult r = cuDeviceGetCount(&count); r != CUDA_SUCCESS) {
      reason = "cuDeviceGetCount failed: " + error_text(r);
      count = 0;
      return;
    }
    if (count == 0) {
      reason = "no CUDA device";
      return;
    }
    for (int i = 0; i < count; ++i) {
      info.push_back(query(i));
      devices.push_back(std::make_unique<DeviceState>());
    }
  }

  std::string error_text(CUresult r) const {
    const char* name = nullptr;
    const char* text = nullptr;
    if (cuGetErrorName) cuGetErrorName(r, &name);
    if (cuGetErrorString) cuGetErrorString(r, &text);
    std::string s = name ? name : "CUDA error " + std::to_string(static_cast<int>(r));
    if (text) s += std::string(" (") + text + ")";
    return s;
  }

  DeviceInfo query(int i) {
    CUdevice d;
    DeviceInfo out;
    check(cuDeviceGet(&d, i), i, "cuDeviceGet");
    char name[256] = {};
    check(cuDeviceGetName(name, sizeof(name) - 1, d), i, "cuDeviceGetName");
    out.name = name;
    auto attr = [&](CUdevice_attribute a) {
      int v = 0;
      check(cuDeviceGetAttribute(&v, a, d), i, "cuDeviceGetAttribute");
      return v;
    };
    out.cc_major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    out.cc_minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    out.multiprocessors = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    out.max_threads_per_block = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    out.warp_size = attr(CU_DEVICE_ATTRIBUTE_WARP_SIZE);
    check(cuDeviceTotalMem_v2(&out.total_memory, d), i, "cuDeviceTotalMem");
    return out;
  }

  void check(CUresult r, int dev, const std::string& what) const {
    if (r != CUDA_SUCCESS) throw Error("gpu:" + std::to_string(dev) + ": " + what + " failed: " + error_text(r));
  }
};

Driver& driver() {
  static Driver* d = new Driver;  // never destroyed: the driver may be torn down before statics
  return *d;
}

std::string gpu(int dev) { return "gpu:" + std::to_string(dev); }

// The device's state with its context current on this thread; throws when CUDA is unavailable,
// the index is out of range, or an earlier kernel fault made the device unusable.
DeviceState& device(int dev) {
  Driver& drv = driver();
  if (!drv.reason.empty()) throw Error(gpu(dev) + " is not available: " + drv.reason);
  if (dev < 0 || dev >= drv.count)
    throw Error(gpu(dev) + " does not exist (" + std::to_string(drv.count) + " CUDA device" +
                (drv.count == 1 ? "" : "s") + ")");
  DeviceState& d = *drv.devices[dev];
  std::call_once(d.once, [&] {
    CUdevice cu;
    drv.check(drv.cuDeviceGet(&cu, dev), dev, "cuDeviceGet");
    drv.check(drv.cuDevicePrimaryCtxRetain(&d.ctx, cu), dev, "retaining the primary context");
    drv.check(drv.cuCtxSetCurrent(d.ctx), dev, "cuCtxSetCurrent");
    drv.check(drv.cuStreamCreate(&d.stream, CU_STREAM_NON_BLOCKING), dev, "creating the stream");
    d.peer.assign(drv.count, 0);
    d.started = true;
  });
  {
    std::lock_guard<std::mutex> lock(d.mu);
    if (!d.fault.empty()) throw Error(gpu(dev) + " is unusable after an earlier failure: " + d.fault);
  }
  drv.check(drv.cuCtxSetCurrent(d.ctx), dev, "cuCtxSetCurrent");
  return d;
}

CUdeviceptr dptr(const void* p) { return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(p)); }

// Waits for the stream; a failure here comes from earlier asynchronous work (a kernel fault),
// which the driver makes sticky, so the device is marked unusable.
void sync_stream(int dev, DeviceState& d, const char* during) {
  Driver& drv = driver();
  CUresult r = drv.cuStreamSynchronize(d.stream);
  if (r == CUDA_SUCCESS) return;
  std::lock_guard<std::mutex> lock(d.mu);
  std::string msg = gpu(dev) + ": " +
                    (d.last_kernel.empty() ? std::string("asynchronous work") : "kernel " + d.last_kernel) +
                    " failed (seen while " + during + "): " + drv.error_text(r);
  d.fault = msg;
  throw Error(msg + "; the device cannot be used again in this process");
}

// Size classes: powers of two up to 1 MiB (at least 256 bytes), then multiples of 2 MiB.
size_t size_class(size_t bytes) {
  constexpr size_t kSmall = size_t{1} << 20, kLarge = size_t{2} << 20;
  if (bytes <= kSmall) return std::max<size_t>(256, std::bit_ceil(bytes));
  return (bytes + kLarge - 1) / kLarge * kLarge;
}

void release_locked(Driver& drv, DeviceState& d) {
  for (auto& [cls, blocks] : d.cache)
    for (CUdeviceptr p : blocks) {
      drv.cuMemFree_v2(p);
      d.stats.cached_bytes -= cls;
    }
  d.cache.clear();
}

struct ModuleCache {
  std::mutex mu;
  std::map<std::pair<int, std::string>, std::pair<CUmodule, std::string>> modules;  // + info log
  std::map<std::tuple<int, std::string, std::string>, std::unique_ptr<Function>> functions;
};

ModuleCache& modules() {
  static ModuleCache* c = new ModuleCache;
  return *c;
}

}  // namespace

const std::string& unavailable_reason() { return driver().reason; }

int device_count() { return driver().reason.empty() ? driver().count : 0; }

const DeviceInfo& device_info(int dev) {
  device(dev);
  return driver().info[dev];
}

std::pair<size_t, size_t> memory_info(int dev) {
  device(dev);
  size_t free = 0, total = 0;
  driver().check(driver().cuMemGetInfo_v2(&free, &total), dev, "cuMemGetInfo");
  return {free, total};
}

void* alloc(int dev, size_t bytes) {
  if (bytes == 0) return nullptr;
  DeviceState& d = device(dev);
  Driver& drv = driver();
  size_t cls = size_class(bytes);
  std::lock_guard<std::mutex> lock(d.mu);
  // The request's class, else the smallest cached block of up to twice its size (the cache keeps
  // no empty lists): a call with a new, shorter length then reuses a block of the earlier calls
  // instead of calling cuMemAlloc, which takes tens of microseconds and synchronizes the device.
  if (auto it = d.cache.lower_bound(cls); it != d.cache.end() && it->first <= 2 * cls) {
    size_t got = it->first;
    CUdeviceptr p = it->second.back();
    it->second.pop_back();
    if (it->second.empty()) d.cache.erase(it);
    if (got != cls) d.larger.emplace(p, got);
    d.stats.cached_bytes -= got;
    d.stats.in_use_bytes += got;
    return reinterpret_cast<void*>(static_cast<uintptr_t>(p));
  }
  CUdeviceptr p = 0;
  CUresult r = drv.cuMemAlloc_v2(&p, cls);
  if (r == CUDA_ERROR_OUT_OF_MEMORY) {
    release_locked(drv, d);
    r = drv.cuMemAlloc_v2(&p, cls);
  }
  if (r == CUDA_ERROR_OUT_OF_MEMORY) {
    size_t free = 0, total = 0;
    drv.cuMemGetInfo_v2(&free, &total);
    throw Error(gpu(dev) + ": out of memory allocating " + std::to_string(bytes) + " bytes (free " +
                std::to_string(free) + " of " + std::to_string(total) + " bytes)");
  }
  drv.check(r, dev, "allocating " + std::to_string(bytes) + " bytes");
  ++d.stats.driver_allocs;
  d.stats.in_use_bytes += cls;
  return reinterpret_cast<void*>(static_cast<uintptr_t>(p));
}

// Never throws (it runs in destructors): a block of an unusable device is simply dropped.
void free(int dev, void* p, size_t bytes) {
  if (!p) return;
  Driver& drv = driver();
  if (!drv.reason.empty() || dev < 0 || dev >= drv.count) return;
  DeviceState& d = *drv.devices[dev];
  size_t cls = size_class(bytes);
  std::lock_guard<std::mutex> lock(d.mu);
  if (!d.larger.empty())
    if (auto it = d.larger.find(dptr(p)); it != d.larger.end()) {
      cls = it->second;
      d.larger.erase(it);
    }
  d.stats.in_use_bytes -= cls;
  if (!d.fault.empty()) return;
  d.cache[cls].push_back(dptr(p));
  d.stats.cached_bytes += cls;
}

void release_cache(int dev) {
  DeviceState& d = device(dev);
  std::lock_guard<std::mutex> lock(d.mu);
  release_locked(driver(), d);
}

AllocatorStats allocator_stats(int dev) {
  DeviceState& d = device(dev);
  std::lock_guard<std::mutex> lock(d.mu);
  return d.stats;
}

void copy_to_device(int dev, void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  DeviceState& d = device(dev);
  driver().check(driver().cuMemcpyHtoDAsync_v2(dptr(dst), src, bytes, d.stream), dev,
                 "copying " + std::to_string(bytes) + " bytes to the device");
}

// GPU sort and scatter (issue 28)
void zero(int dev, void* dst, size_t bytes) {
  if (bytes == 0) return;
  DeviceState& d = device(dev);
  driver().check(driver().cuMemsetD8Async(dptr(dst), 0, bytes, d.stream), dev,
                 "zeroing " + std::to_string(bytes) + " bytes");
}

void copy_to_host(int dev, void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  DeviceState& d = device(dev);
  Driver& drv = driver();
  if (bytes <= kSmallReadback) {
    std::lock_guard<std::mutex> lock(d.readback_mu);
    if (!d.readback)
      drv.check(drv.cuMemHostAlloc(&d.readback, kSmallReadback, CU_MEMHOSTALLOC_PORTABLE), dev,
                "allocating pinned host memory for copies to the host");
    CUresult r = drv.cuMemcpyDtoHAsync_v2(d.readback, dptr(src), bytes, d.stream);
    if (r != CUDA_SUCCESS) sync_stream(dev, d, "copying to the host");  // names the kernel that failed, if one did
    drv.check(r, dev, "copying " + std::to_string(bytes) + " bytes to the host");
    sync_stream(dev, d, "copying to the host");
    std::memcpy(dst, d.readback, bytes);
    return;
  }
  // Waiting first names the kernel that failed, if one did, rather than the copy.
  sync_stream(dev, d, "copying to the host");
  driver().check(driver().cuMemcpyDtoHAsync_v2(dst, dptr(src), bytes, d.stream), dev,
                 "copying " + std::to_string(bytes) + " bytes to the host");
  sync_stream(dev, d, "copying to the host");
}

void copy_device(int dev, void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  DeviceState& d = device(dev);
  driver().check(driver().cuMemcpyDtoDAsync_v2(dptr(dst), dptr(src), bytes, d.stream), dev,
                 "copying " + std::to_string(bytes) + " bytes on the device");
}

namespace {

// Makes `waiter`'s stream wait (on the device, not the host) for the work queued so far on
// `dev`'s stream: an event recorded there, which the driver lets a stream of another context wait on.
void stream_wait(int waiter, DeviceState& w, int dev, DeviceState& d) {
  Driver& drv = driver();
  drv.check(drv.cuCtxSetCurrent(d.ctx), dev, "cuCtxSetCurrent");
  CUevent ev = nullptr;
  drv.check(drv.cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING), dev, "creating an event");
  CUresult r = drv.cuEventRecord(ev, d.stream);
  if (r == CUDA_SUCCESS) r = drv.cuStreamWaitEvent(w.stream, ev, 0);
  drv.cuEventDestroy_v2(ev);  // released by the driver once the wait is done
  drv.check(r, waiter, "waiting for " + gpu(dev));
  drv.check(drv.cuCtxSetCurrent(w.ctx), waiter, "cuCtxSetCurrent");
}

// Whether dev's context has access to peer's memory, enabling it on first use (both directions
// are tried separately, as the hardware may allow only one). ARRAYC_PEER_ACCESS=0 reports false.
bool peer_enabled(int dev, DeviceState& d, int peer, DeviceState& p) {
  Driver& drv = driver();
  std::lock_guard<std::mutex> lock(d.mu);
  int& state = d.peer[peer];
  if (state == 0) {
    int can = 0;
    CUdevice a, b;
    drv.check(drv.cuDeviceGet(&a, dev), dev, "cuDeviceGet");
    drv.check(drv.cuDeviceGet(&b, peer), peer, "cuDeviceGet");
    drv.check(drv.cuDeviceCanAccessPeer(&can, a, b), dev, "cuDeviceCanAccessPeer");
    state = can ? 1 : -1;
    if (can) {
      drv.check(drv.cuCtxSetCurrent(d.ctx), dev, "cuCtxSetCurrent");
      CUresult r = drv.cuCtxEnablePeerAccess(p.ctx, 0);
      if (r != CUDA_SUCCESS && r != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)
        drv.check(r, dev, "enabling peer access to " + gpu(peer));
    }
  }
  return state == 1 && peer_access_setting();
}

// Pinned (page-locked) host memory for staged copies between devices without peer access: two
// buffers, so that one drains to the destination while the other fills from the source.
struct Staging {
  static constexpr size_t kChunk = size_t{32} << 20;
  std::mutex mu;  // one staged copy at a time uses the buffers
  void* buf[2] = {nullptr, nullptr};
};

Staging& staging() {
  static Staging* s = new Staging;
  return *s;
}

// The staged copy: src -> pinned buffer on the source's stream, pinned buffer -> dst on the
// destination's stream, chunk by chunk; never through pageable memory. Returns when done.
void copy_staged(int dst_dev, DeviceState& d, void* dst, int src_dev, DeviceState& s, const void* src, size_t bytes) {
  Driver& drv = driver();
  Staging& st = staging();
  std::lock_guard<std::mutex> lock(st.mu);
  for (void*& b : st.buf)
    if (!b) drv.check(drv.cuMemHostAlloc(&b, Staging::kChunk, CU_MEMHOSTALLOC_PORTABLE), src_dev,
                      "allocating pinned host memory for a copy to " + gpu(dst_dev));
  sync_stream(src_dev, s, "copying to another device");
  sync_stream(dst_dev, d, "copying from another device");
  for (size_t off = 0, i = 0; off < bytes; off += Staging::kChunk, ++i) {
    size_t n = std::min(Staging::kChunk, bytes - off);
    void* b = st.buf[i % 2];
    drv.check(drv.cuCtxSetCurrent(s.ctx), src_dev, "cuCtxSetCurrent");
    drv.check(drv.cuMemcpyDtoHAsync_v2(b, dptr(static_cast<const char*>(src) + off), n, s.stream), src_dev,
              "copying to pinned host memory (for " + gpu(dst_dev) + ")");
    sync_stream(src_dev, s, "copying to another device");
    // The buffer filled two chunks ago has drained: the destination's stream is at most one behind.
    drv.check(drv.cuCtxSetCurrent(d.ctx), dst_dev, "cuCtxSetCurrent");
    drv.check(drv.cuMemcpyHtoDAsync_v2(dptr(static_cast<char*>(dst) + off), b, n, d.stream), dst_dev,
              "copying from pinned host memory (from " + gpu(src_dev) + ")");
    if (i % 2 == 1 || off + n >= bytes) sync_stream(dst_dev, d, "copying from another device");
  }
}

}  // namespace

// Peer to peer where the hardware allows, asynchronously: the destination's stream waits for
// the source's producers, copies, and the source's stream waits for the copy (so that the
// source block is not handed out again by its allocator to work that could overwrite it first).
void copy_peer(int dst_dev, void* dst, int src_dev, const void* src, size_t bytes) {
  if (bytes == 0) return;
  if (dst_dev == src_dev) {
    copy_device(dst_dev, dst, src, bytes);
    return;
  }
  DeviceState& s = device(src_dev);
  DeviceState& d = device(dst_dev);
  if (!peer_enabled(dst_dev, d, src_dev, s)) {
    copy_staged(dst_dev, d, dst, src_dev, s, src, bytes);
    return;
  }
  stream_wait(dst_dev, d, src_dev, s);
  driver().check(driver().cuMemcpyPeerAsync(dptr(dst), d.ctx, dptr(src), s.ctx, bytes, d.stream), dst_dev,
                 "copying " + std::to_string(bytes) + " bytes from " + gpu(src_dev));
  stream_wait(src_dev, s, dst_dev, d);
}

bool can_access_peer(int dev, int peer) {
  if (dev == peer) return true;
  DeviceState& p = device(peer);
  DeviceState& d = device(dev);
  return peer_enabled(dev, d, peer, p);
}

void wait_for(int waiter, int dev) {
  if (waiter == dev) return;
  DeviceState& d = device(dev);
  DeviceState& w = device(waiter);
  stream_wait(waiter, w, dev, d);
}

void* stream(int dev) { return device(dev).stream; }

bool stream_idle(int dev) {
  DeviceState& d = device(dev);
  CUresult r = driver().cuStreamQuery(d.stream);
  if (r == CUDA_ERROR_NOT_READY) return false;
  if (r == CUDA_SUCCESS) return true;
  sync_stream(dev, d, "waiting for a collective");  // raises, naming the failure
  return true;
}

namespace {

// The driver's JIT options that return its info and error logs, in two buffers.
struct JitLogs {
  std::vector<char> info = std::vector<char>(1 << 16, 0), error = std::vector<char>(1 << 16, 0);
  CUjit_option opts[5] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER,
                          CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_LOG_VERBOSE};
  void* values[5] = {info.data(), reinterpret_cast<void*>(static_cast<uintptr_t>(info.size() - 1)), error.data(),
                     reinterpret_cast<void*>(static_cast<uintptr_t>(error.size() - 1)),
                     reinterpret_cast<void*>(static_cast<uintptr_t>(1))};
  std::string error_suffix() const { return error[0] ? "\n" + std::string(error.data()) : std::string(); }
};

}  // namespace

int driver_version() {
  Driver& drv = driver();
  if (!drv.reason.empty()) return 0;
  int v = 0;
  return drv.cuDriverGetVersion(&v) == CUDA_SUCCESS ? v : 0;
}

bool has_tensor_maps() {
  Driver& drv = driver();
  return drv.reason.empty() && drv.cuTensorMapEncodeTiled != nullptr;
}

bool has_clusters() {
  Driver& drv = driver();
  return drv.reason.empty() && drv.cuLaunchKernelEx != nullptr;
}

void encode_tensor_map(TensorMap& map, TensorMapElement element, const void* address, const std::array<uint64_t, 3>& dims,
                       const std::array<uint64_t, 2>& strides, const std::array<uint32_t, 3>& box) {
  Driver& drv = driver();
  ARRAYC_INTERNAL_CHECK(has_tensor_maps(), "a tensor map without cuTensorMapEncodeTiled");
  const cuuint64_t d[3] = {dims[0], dims[1], dims[2]}, st[2] = {strides[0], strides[1]};
  const cuuint32_t b[3] = {box[0], box[1], box[2]}, one[3] = {1, 1, 1};
  CUresult r = drv.cuTensorMapEncodeTiled(
      reinterpret_cast<CUtensorMap*>(&map),
      element == TensorMapElement::BFloat16  ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
      : element == TensorMapElement::Float16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                             : CU_TENSOR_MAP_DATA_TYPE_TFLOAT32,
      3,
      const_cast<void*>(address), d, st, b, one, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw Error("cuTensorMapEncodeTiled failed (" + drv.error_text(r) + ") for a " + std::to_string(dims[0]) + "x" +
                std::to_string(dims[1]) + "x" + std::to_string(dims[2]) + " operand (byte strides " +
                std::to_string(strides[0]) + ", " + std::to_string(strides[1]) + ") of a matrix product");
}

std::string link_cubin(int dev, const std::string& ptx, const std::string& entry, std::string& info_log) {
  device(dev);  // the linker compiles for the current context's device
  Driver& drv = driver();
  JitLogs logs;
  CUlinkState state = nullptr;
  drv.check(drv.cuLinkCreate_v2(5, logs.opts, logs.values, &state), dev, "creating a linker for " + entry);
  std::string cubin;
  CUresult r = drv.cuLinkAddData_v2(state, CU_JIT_INPUT_PTX, const_cast<char*>(ptx.c_str()), ptx.size() + 1,
                                    entry.c_str(), 0, nullptr, nullptr);
  void* image = nullptr;
  size_t size = 0;
  if (r == CUDA_SUCCESS) r = drv.cuLinkComplete(state, &image, &size);
  if (r == CUDA_SUCCESS) cubin.assign(static_cast<const char*>(image), size);  // owned by the state
  drv.cuLinkDestroy(state);
  if (r != CUDA_SUCCESS)
    throw Error(gpu(dev) + ": the driver rejected the PTX of " + entry + ": " + drv.error_text(r) +
                logs.error_suffix());
  info_log = logs.info.data();
  return cubin;
}

const Function& load(int dev, const std::string& image, const std::string& entry) {
  device(dev);
  Driver& drv = driver();
  ModuleCache& mc = modules();
  std::lock_guard<std::mutex> lock(mc.mu);
  auto fkey = std::make_tuple(dev, image, entry);
  if (auto it = mc.functions.find(fkey); it != mc.functions.end()) return *it->second;

  auto mkey = std::make_pair(dev, image);
  auto mit = mc.modules.find(mkey);
  if (mit == mc.modules.end()) {
    JitLogs logs;
    CUmodule module = nullptr;
    CUresult r = drv.cuModuleLoadDataEx(&module, image.c_str(), 5, logs.opts, logs.values);
    if (r != CUDA_SUCCESS)
      throw Error(gpu(dev) + ": the driver rejected the module of " + entry + ": " + drv.error_text(r) +
                  logs.error_suffix());
    mit = mc.modules.emplace(mkey, std::make_pair(module, std::string(logs.info.data()))).first;
  }

  auto f = std::make_unique<Function>();
  CUfunction fn = nullptr;
  drv.check(drv.cuModuleGetFunction(&fn, mit->second.first, entry.c_str()), dev, "finding kernel " + entry);
  f->fn = fn;
  f->name = entry;
  f->jit_log = mit->second.second;
  auto attr = [&](CUfunction_attribute a) {
    int v = 0;
    drv.check(drv.cuFuncGetAttribute(&v, a, fn), dev, "cuFuncGetAttribute");
    return v;
  };
  f->registers = attr(CU_FUNC_ATTRIBUTE_NUM_REGS);
  f->local_bytes = attr(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
  f->shared_bytes = attr(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
  f->max_threads = attr(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  return *mc.functions.emplace(std::move(fkey), std::move(f)).first->second;
}

void allow_dynamic_shared(int dev, const Function& f, unsigned bytes) {
  Driver& drv = driver();
  device(dev);  // the context is current
  drv.check(drv.cuFuncSetAttribute(static_cast<CUfunction>(f.fn), CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                   static_cast<int>(bytes)),
            dev, "allowing " + std::to_string(bytes) + " bytes of dynamic shared memory to kernel " + f.name);
}

void launch(int dev, const Function& f, unsigned grid, unsigned block, void** args, unsigned shared_bytes,
            unsigned grid_y, unsigned cluster) {
  ARRAYC_INTERNAL_CHECK(cluster == 1 || (has_clusters() && grid_y == 1 && grid % cluster == 0),
                        "a cluster launch without cuLaunchKernelEx or whole clusters");
  DeviceState& d = device(dev);
  {
    std::lock_guard<std::mutex> lock(d.mu);
    d.last_kernel = f.name;
  }
  CUresult r;
  if (cluster == 1) {
    r = driver().cuLaunchKernel(static_cast<CUfunction>(f.fn), grid, grid_y, 1, block, 1, 1, shared_bytes, d.stream, args,
                                nullptr);
  } else {  // thread-block clusters of `cluster` blocks along x
    CUlaunchAttribute attr{};
    attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr.value.clusterDim.x = cluster;
    attr.value.clusterDim.y = attr.value.clusterDim.z = 1;
    CUlaunchConfig c{};
    c.gridDimX = grid, c.gridDimY = c.gridDimZ = 1;
    c.blockDimX = block, c.blockDimY = c.blockDimZ = 1;
    c.sharedMemBytes = shared_bytes;
    c.hStream = d.stream;
    c.attrs = &attr;
    c.numAttrs = 1;
    r = driver().cuLaunchKernelEx(&c, static_cast<CUfunction>(f.fn), args, nullptr);
  }
  driver().check(r, dev,
                 "launching kernel " + f.name + " (grid " + std::to_string(grid) + "x" + std::to_string(grid_y) +
                     (cluster > 1 ? " in clusters of " + std::to_string(cluster) : std::string()) + ", block " +
                     std::to_string(block) + ")");
}

void synchronize(int dev) {
  DeviceState& d = device(dev);
  sync_stream(dev, d, "synchronizing");
}

void synchronize_all() {
  Driver& drv = driver();
  if (!drv.reason.empty()) return;
  for (int dev = 0; dev < drv.count; ++dev)
    if (drv.devices[dev]->started) synchronize(dev);
}

}  // namespace arrayc::detail::cuda
