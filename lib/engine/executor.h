// The executor: runs a Program's steps in order on buffers it allocates, frees each
// intermediate after its last reader, and returns the outputs as Buffer nodes. It does not know
// which device a step runs on: each step's Launch (backend.h) does.
#pragma once
#include <vector>

#include "engine/compile.h"

namespace arrayc::detail {

// The data bound to a jit parameter: contiguous, starting `offset` elements into storage.
struct ParamBinding {
  StorageRef storage;
  int64_t offset = 0;  // in elements of dtype
  DType dtype = DType::Float32;
};

std::vector<NodeRef> run(const Program& p, const std::vector<ParamBinding>& params = {});

}  // namespace arrayc::detail
