// The host's tile copy for tiled leaves (host_policy.h's tiled_leaves) of `bytes`-byte elements,
// one function per element size shared by every kernel of the process (host_jit.cpp adds each
// once):
//   void arrayc_tile_copy_<bytes>(void* dst, const void* src, int64_t rows, int64_t cols,
//                                 int64_t row_stride, int64_t col_stride)
// copies element (r, c) of src, at r * row_stride + c * col_stride elements, to dst at
// r * kHostTileCols + c, for r < rows <= kHostTileRows and c < cols <= kHostTileCols (dst
// 64-byte aligned). A kernel declares it by tile_copy_callee.
#pragma once
#include <llvm/IR/Module.h>

#include <cstdint>
#include <memory>
#include <string>

namespace arrayc::detail {

// A side of the copy's transposed blocks, in bytes: one vector. A transposed operand of 4 or 8
// bytes moves square blocks of this many bytes by shuffles; a kernel takes tiles only where the
// tile can hold such a block (rows of kTileBlockBytes / 4 elements or more).
constexpr int64_t kTileBlockBytes = 64;

std::string tile_copy_symbol(int bytes);
llvm::FunctionCallee tile_copy_callee(llvm::Module& m, int bytes);
std::unique_ptr<llvm::Module> emit_tile_copy(int bytes, llvm::LLVMContext& ctx);

}  // namespace arrayc::detail
