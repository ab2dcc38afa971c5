// The NVPTX compile driver that every PTX kernel generator shares (the elementwise/reduction
// target in codegen/nvptx/ptx_kernel.cpp and the matrix-product kernels in
// codegen/nvptx/gemm.cpp): declaring a kernel entry, and turning a module into PTX (verify, link
// libdevice when needed, internalize, O3, the NVPTX backend).
#pragma once
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <functional>
#include <string>
#include <vector>

namespace arrayc::detail {

// A compiled PTX module and the texts of its stages.
struct PtxKernel {
  std::string entry;   // the .entry name (from the kernel's name)
  std::string ir;      // before linking libdevice and optimizing
  std::string opt_ir;  // after
  std::string ptx;
  int sm = 0;
  int elements_per_thread = 1;  // > 1: the contiguous vector path exists
};

// A void kernel `name` (PTX calling convention, nvvm.annotations "kernel") taking `args`; the
// first `noalias_args` are marked noalias.
llvm::Function* declare_ptx_kernel(llvm::Module& m, const std::string& name, const std::vector<llvm::Type*>& args,
                                   int noalias_args);

// An nvvm.annotations entry of kernel f: `key` (maxntidx, minctasm, ...) with an i32 value.
void annotate_ptx_kernel(llvm::Function& f, const char* key, int value);

// A PTX special register (threadIdx.x, blockIdx.x, ...: nvvm_read_ptx_sreg_*) as an i64.
llvm::Value* read_sreg(llvm::IRBuilder<>& b, llvm::Intrinsic::ID id);

// v from lane (this lane xor `lane_mask`) of the warp (shfl.sync.bfly, all lanes), any value
// type, as 32-bit pieces.
llvm::Value* shuffle_xor(llvm::IRBuilder<>& b, llvm::Value* v, int lane_mask);

// Builds a module with `build` (which must define the kernel `entry`) and compiles it for sm_<sm>
// (`arch_specific`: sm_<sm>a, whose code runs on that architecture only, as Hopper's wgmma
// needs). Fills entry, sm, ir, opt_ir and ptx. One compile at a time (the target machines are
// shared).
PtxKernel compile_ptx(const std::string& entry, int sm, const std::function<void(llvm::Module&)>& build,
                      bool arch_specific = false);

// The PTX ISA the code for sm_<sm> is written in, as an NVPTX feature: 8.0 covers sm_89/sm_90
// (Ada, Hopper); 7.5 everything older.
inline const char* ptx_isa(int sm) { return sm >= 89 ? "+ptx80" : "+ptx75"; }

// What, beside a kernel's text and options, decides the PTX made for sm_<sm>, for the disk
// cache's key: the triple, the architecture, the PTX ISA, the LLVM version, and the libdevice
// file linked in (its size and a hash of its bytes; "none" when there is none).
std::string ptx_target_key(int sm);

// The libdevice file linked into kernels that call math functions: $ARRAYC_LIBDEVICE, else
// /usr/local/cuda/nvvm/libdevice/libdevice.10.bc, else under $CUDA_HOME or $CUDA_PATH. Throws
// arrayc::Error naming the places it tried.
std::string libdevice_path();

}  // namespace arrayc::detail
