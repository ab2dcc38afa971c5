// The NVPTX compile driver shared by the PTX kernel generators (ptx_kernel.cpp, gemm.cpp): the
// target machines, libdevice (found, read once, linked lazily) and the path from a module to PTX.
#include "codegen/nvptx/ptx_compile.h"

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/Linker/Linker.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>

#include "arrayc/error.h"
#include "codegen/llvm_util.h"
#include "codegen/nvptx/bool_to_float.h"
#include "codegen/optimize.h"
#include "support/env.h"
#include "support/hash.h"

extern "C" {
void LLVMInitializeNVPTXTargetInfo();
void LLVMInitializeNVPTXTarget();
void LLVMInitializeNVPTXTargetMC();
void LLVMInitializeNVPTXAsmPrinter();
}

namespace arrayc::detail {
namespace {

// The NVPTX backend, one TargetMachine per architecture, and libdevice's bytes (read once).
struct Nvptx {
  std::mutex mu;  // one compile at a time: PTX compiles are rare and the machines are shared
  std::map<std::string, std::unique_ptr<llvm::TargetMachine>> machines;  // by CPU name
  std::unique_ptr<llvm::MemoryBuffer> libdevice;

  Nvptx() {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  }

  llvm::TargetMachine& machine(int sm, bool arch_specific) {
    const std::string cpu = "sm_" + std::to_string(sm) + (arch_specific ? "a" : "");
    auto& tm = machines[cpu];
    if (!tm) {
      std::string err;
      const char* triple = "nvptx64-nvidia-cuda";
      const llvm::Target* t = llvm::TargetRegistry::lookupTarget(triple, err);
      ARRAYC_INTERNAL_CHECK(t, "the NVPTX target is not linked in: " + err);
      tm.reset(t->createTargetMachine(triple, cpu, ptx_isa(sm), llvm::TargetOptions(), std::nullopt,
                                      std::nullopt, llvm::CodeGenOptLevel::Aggressive));
      ARRAYC_INTERNAL_CHECK(tm != nullptr, "cannot create the NVPTX target machine for " + cpu);
    }
    return *tm;
  }

  std::unique_ptr<llvm::Module> load_libdevice(llvm::LLVMContext& ctx) {
    if (!libdevice) {
      std::string path = libdevice_path();
      auto buf = llvm::MemoryBuffer::getFile(path);
      if (!buf) throw Error("cannot read libdevice at " + path + ": " + buf.getError().message());
      libdevice = std::move(*buf);
    }
    // Lazily: the linker materializes only the functions the kernel calls (parsing all of
    // libdevice for every kernel cost more than the rest of the compile).
    auto m = llvm::getLazyBitcodeModule(libdevice->getMemBufferRef(), ctx);
    if (!m) throw Error("cannot parse libdevice " + libdevice->getBufferIdentifier().str() + ": " +
                        llvm::toString(m.takeError()));
    return std::move(*m);
  }
};

Nvptx& nvptx() {
  static Nvptx* n = new Nvptx;
  return *n;
}

}  // namespace

std::string libdevice_path() {
  std::vector<std::string> tried;
  std::string env = libdevice_setting();
  if (!env.empty()) {
    if (std::filesystem::exists(env)) return env;
    tried.push_back(env + " ($ARRAYC_LIBDEVICE)");
  }
  for (const auto& [root, why] : cuda_roots()) {
    std::string p = root + "/nvvm/libdevice/libdevice.10.bc";
    if (std::filesystem::exists(p)) return p;
    tried.push_back(p + why);
  }
  std::string msg = "libdevice (needed for math functions on the GPU) was not found; tried:";
  for (const std::string& t : tried) msg += "\n  " + t;
  throw Error(msg + "\nset ARRAYC_LIBDEVICE to the path of libdevice.10.bc");
}

std::string ptx_target_key(int sm) {
  static const std::string libdevice = [] {
    try {
      auto buf = llvm::MemoryBuffer::getFile(libdevice_path());
      if (!buf) return std::string("libdevice unreadable");
      llvm::StringRef bytes = (*buf)->getBuffer();
      char hash[20];
      std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(fnv1a(bytes.data(), bytes.size())));
      return "libdevice " + std::to_string(bytes.size()) + "-" + hash;
    } catch (const Error&) {
      return std::string("libdevice none");
    }
  }();
  return "nvptx64-nvidia-cuda sm_" + std::to_string(sm) + " " + ptx_isa(sm) + " LLVM " LLVM_VERSION_STRING " " +
         libdevice + " bool-sitofp-select";  // exact integers (issue 26): PTX made before that fix is stale
}

llvm::Function* declare_ptx_kernel(llvm::Module& m, const std::string& name, const std::vector<llvm::Type*>& args,
                                   int noalias_args) {
  llvm::LLVMContext& ctx = m.getContext();
  auto* f = llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), args, false),
                                   llvm::Function::ExternalLinkage, name, &m);
  f->setCallingConv(llvm::CallingConv::PTX_Kernel);
  f->addFnAttr(llvm::Attribute::NoUnwind);
  for (int i = 0; i < noalias_args; ++i) f->addParamAttr(i, llvm::Attribute::NoAlias);
  llvm::Metadata* md[] = {llvm::ValueAsMetadata::get(f), llvm::MDString::get(ctx, "kernel"),
                          llvm::ValueAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx), 1))};
  m.getOrInsertNamedMetadata("nvvm.annotations")->addOperand(llvm::MDNode::get(ctx, md));
  return f;
}

void annotate_ptx_kernel(llvm::Function& f, const char* key, int value) {
  llvm::LLVMContext& ctx = f.getContext();
  llvm::Metadata* md[] = {llvm::ValueAsMetadata::get(&f), llvm::MDString::get(ctx, key),
                          llvm::ValueAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx), value))};
  f.getParent()->getOrInsertNamedMetadata("nvvm.annotations")->addOperand(llvm::MDNode::get(ctx, md));
}

llvm::Value* read_sreg(llvm::IRBuilder<>& b, llvm::Intrinsic::ID id) {
  return b.CreateZExt(b.CreateIntrinsic(id, {}, {}), b.getInt64Ty());
}

llvm::Value* shuffle_xor(llvm::IRBuilder<>& b, llvm::Value* v, int lane_mask) {
  auto shfl = [&](llvm::Value* x) -> llvm::Value* {
    llvm::Value* args[] = {b.getInt32(0xffffffffu), x, b.getInt32(lane_mask), b.getInt32(31)};
    return b.CreateIntrinsic(x->getType()->isFloatTy() ? llvm::Intrinsic::nvvm_shfl_sync_bfly_f32
                                                        : llvm::Intrinsic::nvvm_shfl_sync_bfly_i32,
                              {}, args);
  };
  llvm::Type* ty = v->getType();
  if (ty->isFloatTy() || ty->isIntegerTy(32)) return shfl(v);
  if (ty->isIntegerTy(1)) return b.CreateTrunc(shfl(b.CreateZExt(v, b.getInt32Ty())), ty);
  if (ty->getPrimitiveSizeInBits() < 32) {  // 8- and 16-bit integers, half, bfloat: widened bits
    llvm::Type* bits_ty = b.getIntNTy(ty->getPrimitiveSizeInBits());
    llvm::Value* bits = ty->isIntegerTy() ? v : b.CreateBitCast(v, bits_ty);
    llvm::Value* r = b.CreateTrunc(shfl(b.CreateZExt(bits, b.getInt32Ty())), bits_ty);
    return ty->isIntegerTy() ? r : b.CreateBitCast(r, ty);
  }
  llvm::Value* bits = ty->isDoubleTy() ? b.CreateBitCast(v, b.getInt64Ty()) : v;
  llvm::Value* lo = shfl(b.CreateTrunc(bits, b.getInt32Ty()));
  llvm::Value* hi = shfl(b.CreateTrunc(b.CreateLShr(bits, 32), b.getInt32Ty()));
  llvm::Value* r = b.CreateOr(b.CreateShl(b.CreateZExt(hi, b.getInt64Ty()), 32), b.CreateZExt(lo, b.getInt64Ty()));
  return ty->isDoubleTy() ? b.CreateBitCast(r, ty) : r;
}

PtxKernel compile_ptx(const std::string& entry, int sm, const std::function<void(llvm::Module&)>& build,
                      bool arch_specific) {
  Nvptx& nv = nvptx();
  std::lock_guard<std::mutex> lock(nv.mu);
  llvm::TargetMachine& tm = nv.machine(sm, arch_specific);
  PtxKernel out;
  out.entry = entry;
  out.sm = sm;

  llvm::LLVMContext ctx;
  auto m = std::make_unique<llvm::Module>(out.entry, ctx);
  m->setTargetTriple(tm.getTargetTriple().str());
  m->setDataLayout(tm.createDataLayout());
  build(*m);
  verify_module(*m);
  out.ir = module_text(*m);

  bool needs_libdevice = false;
  for (const llvm::Function& f : *m)
    if (f.isDeclaration() && f.getName().starts_with("__nv_")) needs_libdevice = true;
  if (needs_libdevice) {
    std::unique_ptr<llvm::Module> lib = nv.load_libdevice(ctx);
    lib->setTargetTriple(m->getTargetTriple());
    lib->setDataLayout(m->getDataLayout());
    ARRAYC_INTERNAL_CHECK(!llvm::Linker::linkModules(*m, std::move(lib), llvm::Linker::Flags::LinkOnlyNeeded),
                          "cannot link libdevice into " + out.entry);
  }
  // Only the entry is visible: everything else (libdevice, helpers) may be inlined and dropped.
  for (llvm::GlobalValue& g : m->global_values())
    if (!g.isDeclaration() && g.getName() != out.entry) g.setLinkage(llvm::GlobalValue::InternalLinkage);
  m->addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz", uint32_t{0});
  optimize_module(*m, tm);
  rewrite_bool_sitofp(*m);  // exact integers (issue 26): LLVM 19 NVPTX lowers sitofp i1 as +1
  out.opt_ir = module_text(*m);

  llvm::SmallString<0> buf;
  llvm::raw_svector_ostream os(buf);
  llvm::legacy::PassManager pm;
  ARRAYC_INTERNAL_CHECK(!tm.addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::AssemblyFile),
                        "the NVPTX target cannot emit PTX");
  pm.run(*m);
  out.ptx = std::string(buf.str());
  return out;
}

}  // namespace arrayc::detail
