// The one kernel cache, above the backends: every compiled unit of every backend (kernels,
// combine kernels, product kernels) is compiled once per process and shared. The key is made in
// one place (cache_key), and every new binary is reported in one place (ARRAYC_DEBUG >= 3 prints
// its stages, ARRAYC_DUMP_DIR gets one file per stage). The disk cache plugs in here.
#pragma once
#include <cstdint>
#include <string>

#include "backend/backend.h"

namespace arrayc::detail {

// Everything that changes the binary: the backend's target, the options, the unit's text.
std::string cache_key(const CompileUnit& u);

// The disk cache's key: cache_key plus what else identifies the code across processes: the
// library's build (a hash of its sources, ARRAYC_BUILD_ID), and the unit's disk_target (for the
// host: triple, CPU name, features and the LLVM version).
std::string cache_key_across_processes(const CompileUnit& u);

// The process's cache: on a unit's first request (once, however many threads ask at the same
// time) loads it from the disk cache or compiles it (and stores it there), then returns the
// same binary. It keeps at most ARRAYC_KERNEL_CACHE_MAX binaries (default 4096), dropping the
// least recently used; a Program that holds a dropped binary keeps it. Thread-safe.
Compiler& kernel_cache();
// The binaries it holds now.
int64_t kernel_cache_size();

}  // namespace arrayc::detail
