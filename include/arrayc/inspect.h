// Every compiler stage of a computation as text, from C++: what the `arrayc` tool prints with
// :graph, :fused, :llvm, :opt and :asm.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "arrayc/array.h"

namespace arrayc {

struct KernelStages {
  std::string name;
  std::string kernel;    // the kernel's text form (its cache key)
  std::string llvm;      // LLVM IR as emitted
  std::string opt;       // LLVM IR after optimization (libdevice linked in, on a GPU)
  std::string assembly;  // host assembly, or PTX for arrays on a GPU
  std::string cubin;     // on a GPU: registers, spilled (local) bytes, shared memory, driver log
};

struct Stages {
  std::string graph;      // the graph as built
  std::string optimized;  // after the graph passes (simplify, ...)
  std::string fused;      // the kernels, the nodes each computes, why each boundary is there
  std::vector<KernelStages> kernels;
  std::string target;     // what the kernels are compiled for
  // PTX of every kernel for sm_<sm> (e.g. 90), made on demand; needs no GPU.
  std::function<std::string(int sm)> ptx;

  // All kernels' text of one stage, each headed by its name.
  std::string all(std::string KernelStages::*stage) const;
};

// The stages of computing `outputs` (nothing is run; kernels are compiled through the cache, for
// the device the outputs live on).
Stages inspect(const std::vector<Array>& outputs, bool fuse = true);

}  // namespace arrayc
