// The nvptx target: a Kernel (kernel.h) as a PTX kernel for one GPU architecture. The op lowering
// is the shared BodyEmitter (with libdevice's __nv_* math); this target adds the thread
// structure, global address space pointers, kernel annotations and the libdevice link, then
// optimizes (O3 with the NVPTX TargetMachine) and prints PTX. The CUDA driver (backend/cuda/cuda_driver.h)
// turns the PTX into a cubin.
//
// GPU calling convention. The entry `entry` takes, in order:
//   ptr addrspace(1) ptr_0 .. ptr_{num_ptrs-1}   memory operands, as kernel.h's ptrs (noalias)
//   i64 param_0 .. param_{num_params-1}          kernel.h's params array, each one by value
//                                                 (no per-launch parameter buffer to copy)
//   i64 begin, i64 end                           the range of the parallel space, as kernel.h
//   reductions only:
//   i64 chunk_stride                             where chunk y of a split reduction stores
//   i64 mean_count                               Mean's divisor when > 0 (else the reduce range)
// backend/cuda/launch_plan.h builds cuLaunchKernel's argument array in that order.
//
// Thread structure:
//  - elementwise: a grid-stride loop over [begin, end) (64-bit indices), each index decomposed
//    into operand offsets over the extents. A rank-1 kernel whose operands all have unit or zero
//    strides takes the contiguous path: each thread handles elements_per_thread consecutive
//    elements with 16-byte vector loads and stores, when every unit-stride memory operand's
//    address at `begin` is aligned to that width (checked at run time; otherwise, and for the
//    tail, a scalar loop). Runtime allocations are 256-byte aligned, so only offsets not a
//    multiple of elements_per_thread fall back.
//  - reduction: block x folds output x of the outer space (grid-stride over outer indices when
//    there are more outputs than blocks): its threads stride over [reduce_begin, reduce_end),
//    then combine with warp shuffles and one shared-memory step across warps; thread 0 stores
//    (Mean divides when finalize != 0). blockDim.x must be a multiple of 32, at most 1024.
//    With gridDim.y > 1 the reduced range is split into gridDim.y chunks; block (x, y) stores
//    its partial at the output's offset + y * chunk_stride (see split_reduction).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "codegen/body_emitter.h"
#include "codegen/nvptx/ptx_compile.h"
#include "kernel/kernel.h"

namespace arrayc::detail {

// Compiles k to PTX for sm_<sm> (e.g. 90), by compile_ptx (ptx_compile.h). When the kernel calls
// math functions, libdevice is linked (libdevice_path); if none exists, arrayc::Error says where
// it looked.
PtxKernel emit_ptx(const Kernel& k, int sm, const EmitOptions& opts);

}  // namespace arrayc::detail
