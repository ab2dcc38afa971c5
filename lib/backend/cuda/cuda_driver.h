// The CUDA driver layer: the only code that talks to libcuda. The driver is loaded at run time
// (dlopen "libcuda.so.1"), so one build serves machines with and without a GPU; without one,
// device_count() is 0 and unavailable_reason() says why, and every other call throws
// arrayc::Error with that reason.
//
// Each device gets its primary context and one stream, created on first use. All work for a
// device (transfers, launches) is ordered on that stream, which is what makes the caching
// allocator safe: a block freed while a kernel still reads it can only be handed out again to
// work that the stream runs after that kernel. Calls may come from any host thread (the primary
// context is made current on the calling thread each time). Design notes: docs/cuda.md.
#pragma once
#include <array>
#include <cstdint>
#include <cstddef>
#include <string>
#include <utility>

namespace arrayc::detail::cuda {

// Why CUDA cannot be used ("the CUDA driver (libcuda.so.1) could not be loaded: ...",
// "cuInit failed: ...", "no CUDA device"), or "" when it can.
const std::string& unavailable_reason();
int device_count();  // 0 when unavailable

struct DeviceInfo {
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int multiprocessors = 0, max_threads_per_block = 0, warp_size = 0;
  size_t total_memory = 0;
  int sm() const { return cc_major * 10 + cc_minor; }  // e.g. 90, for emit_ptx
};
const DeviceInfo& device_info(int dev);
std::pair<size_t, size_t> memory_info(int dev);  // free, total (bytes)

// Caching allocator, one per device. Blocks are 256-byte aligned. Sizes are rounded up to a
// size class; a freed block is kept for the next request of its class (no cuMemAlloc per call
// in steady state), or of a class down to half its size when that class has nothing cached (a
// call at a new, shorter length). On out-of-memory the cache is released and the allocation retried once,
// then arrayc::Error("gpu:N: out of memory allocating X bytes (free F of T bytes)") is thrown.
// alloc(dev, 0) returns nullptr; free(dev, nullptr, ...) does nothing. `bytes` given to free
// must be the size given to alloc.
void* alloc(int dev, size_t bytes);
void free(int dev, void* p, size_t bytes);
void release_cache(int dev);  // returns every cached block to the driver
struct AllocatorStats {
  size_t in_use_bytes = 0, cached_bytes = 0;
  long driver_allocs = 0;  // cuMemAlloc calls so far
};
AllocatorStats allocator_stats(int dev);

// Transfers, ordered on the device's stream. Host->device and device->device return without
// waiting for the copy (the host buffer may be reused at once: the driver stages pageable
// memory before returning); device->host synchronizes, so the data are complete on return and
// a failure of earlier work surfaces there. copy_peer between two devices goes peer to peer
// where the hardware allows (peer access is enabled on first use) and is then asynchronous:
// the destination's stream waits for the source's, and the source's for the copy, through
// events. Otherwise (or under ARRAYC_PEER_ACCESS=0) it is staged through pinned host memory, in chunks,
// and returns when done; never through pageable memory.
void copy_to_device(int dev, void* dst, const void* src, size_t bytes);
void copy_to_host(int dev, void* dst, const void* src, size_t bytes);
void copy_device(int dev, void* dst, const void* src, size_t bytes);
// Sets `bytes` bytes at dst to 0, ordered on the stream, without waiting (GPU sort and scatter).
void zero(int dev, void* dst, size_t bytes);
void copy_peer(int dst_dev, void* dst, int src_dev, const void* src, size_t bytes);
// Whether dev reads peer's memory directly (peer access enabled; false under ARRAYC_PEER_ACCESS=0).
bool can_access_peer(int dev, int peer);
// Makes waiter's stream wait, on the device, for the work queued so far on dev's stream.
void wait_for(int waiter, int dev);
// The device's stream (a CUstream), for libraries that queue work on it (NCCL).
void* stream(int dev);
// Whether the device's stream has finished its work (cuStreamQuery); a failure raises as
// synchronize does.
bool stream_idle(int dev);

// A loaded kernel, from a module that is either PTX text (JIT-compiled by the driver) or a
// cubin (link_cubin's output, loaded as it is).
struct Function {
  void* fn = nullptr;  // CUfunction
  std::string name;
  int registers = 0, local_bytes = 0, shared_bytes = 0, max_threads = 0;
  std::string jit_log;  // the driver's info log when it compiled PTX to load it; "" for a cubin
};
// Cached by (dev, image, entry); the reference stays valid for the process. An image the driver
// rejects throws arrayc::Error carrying the driver's error log.
const Function& load(int dev, const std::string& image, const std::string& entry);
// PTX compiled for dev's architecture by the driver's linker (cuLinkCreate/AddData/Complete):
// the cubin bytes, which load() takes and the disk cache stores. info_log gets the linker's log
// (registers, spills). Throws arrayc::Error with the error log when the PTX is rejected.
std::string link_cubin(int dev, const std::string& ptx, const std::string& entry, std::string& info_log);
// The driver's CUDA version (e.g. 13000 for 13.0); 0 when CUDA is unavailable.
int driver_version();
// A tensor map (the driver's CUtensorMap: 128 opaque bytes, 64-byte aligned), passed by value
// to a kernel whose TMA loads read through it.
struct alignas(64) TensorMap {
  uint64_t opaque[16];
};
// Whether the driver launches thread-block clusters (cuLaunchKernelEx, CUDA 12 and later).
bool has_clusters();
// Whether the driver can make tensor maps (cuTensorMapEncodeTiled, CUDA 12 and later).
bool has_tensor_maps();
// The elements a tensor map loads: TFloat32 is float32 in memory, rounded to TF32 by the TMA.
enum class TensorMapElement { Float16, BFloat16, TFloat32 };
// A rank-3 tiled map of `element`s at `address`: dims innermost first (the innermost has unit
// stride), strides in bytes of dims 1 and 2 (multiples of 16), `box` elements per load, 128-byte
// swizzle, zero fill past the edges. Throws arrayc::Error when the driver refuses it.
void encode_tensor_map(TensorMap& map, TensorMapElement element, const void* address, const std::array<uint64_t, 3>& dims,
                       const std::array<uint64_t, 2>& strides, const std::array<uint32_t, 3>& box);
// Lets f launch with up to `bytes` of dynamic shared memory (cuFuncSetAttribute's
// MAX_DYNAMIC_SHARED_SIZE_BYTES; needed above 48 KiB).
void allow_dynamic_shared(int dev, const Function& f, unsigned bytes);
// Launches f with a grid of grid x grid_y blocks of `block` threads; args as cuLaunchKernel's
// kernelParams (one pointer per kernel parameter, pointing at its value). Asynchronous.
// `cluster` > 1: in thread-block clusters of that many blocks along x (grid_y 1, grid a multiple
// of it; needs has_clusters()).
void launch(int dev, const Function& f, unsigned grid, unsigned block, void** args,
            unsigned shared_bytes = 0, unsigned grid_y = 1, unsigned cluster = 1);
// Waits for the device's stream. A failure inside a kernel (e.g. an illegal address) surfaces
// here as arrayc::Error naming the last kernel launched on the stream and the CUDA error. Such
// errors are sticky: the device cannot be used again in this process, and every later call on
// it throws.
void synchronize(int dev);
// synchronize() for every device used so far in this process.
void synchronize_all();

}  // namespace arrayc::detail::cuda
