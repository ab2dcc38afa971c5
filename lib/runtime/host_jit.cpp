#include "runtime/host_jit.h"

#include "codegen/optimize.h"

#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>

#include <atomic>
#include <chrono>
#include <mutex>

namespace arrayc::detail {
namespace {

std::string to_error(llvm::Error e) { return llvm::toString(std::move(e)); }

struct HostJit {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::unique_ptr<llvm::TargetMachine> tm;
  std::mutex mu;
  std::atomic<int64_t> next_id{0};

  HostJit() {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
    ARRAYC_INTERNAL_CHECK(static_cast<bool>(jtmb), "cannot detect the host target");
    jtmb->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
    auto tmx = jtmb->createTargetMachine();
    ARRAYC_INTERNAL_CHECK(static_cast<bool>(tmx), "cannot create the host target machine");
    tm = std::move(*tmx);
    auto j = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(*jtmb).create();
    if (!j) ARRAYC_INTERNAL_CHECK(false, "cannot create LLJIT: " + to_error(j.takeError()));
    jit = std::move(*j);
    // Kernels may call into the process (libm for the rare slow paths).
    auto gen = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
        jit->getDataLayout().getGlobalPrefix());
    if (gen) jit->getMainJITDylib().addGenerator(std::move(*gen));
  }

  void prepare(llvm::Module& m) {
    m.setDataLayout(tm->createDataLayout());
    m.setTargetTriple(tm->getTargetTriple().str());
    for (llvm::Function& f : m) {
      if (f.isDeclaration()) continue;
      f.addFnAttr("target-cpu", tm->getTargetCPU());
      f.addFnAttr("target-features", tm->getTargetFeatureString());
      // Use full-width vectors where the CPU has them (LLVM may default to 256 bits).
      f.addFnAttr("prefer-vector-width", "512");
      // A 64-byte aligned frame: the vector loops spill zmm constants and reload them every
      // iteration; with the ABI's 16-byte alignment those reloads straddle cache lines in three
      // processes of four (whichever the caller's stack offset), W8 then ran 1.27x slower.
      f.addFnAttr(llvm::Attribute::getWithStackAlignment(f.getContext(), llvm::Align(64)));
    }
  }
};

HostJit& host() {
  static HostJit* h = new HostJit;  // lives for the process: compiled code must stay mapped
  return *h;
}

std::string module_text(const llvm::Module& m) {
  std::string s;
  llvm::raw_string_ostream os(s);
  m.print(os, nullptr);
  return s;
}

}  // namespace

std::unique_ptr<CompiledKernel> compile_host_kernel(const Kernel& k, const EmitOptions& opts) {
  HostJit& h = host();
  auto start = std::chrono::steady_clock::now();
  auto out = std::make_unique<CompiledKernel>();
  out->symbol = "arrayc_" + k.name + "_" + std::to_string(h.next_id++);
  auto ctx = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> m = emit_cpu_kernel(k, out->symbol, *ctx, opts);
  std::string verify;
  llvm::raw_string_ostream vs(verify);
  ARRAYC_INTERNAL_CHECK(!llvm::verifyModule(*m, &vs), "invalid kernel IR: " + verify + "\n" + module_text(*m));
  {
    std::lock_guard<std::mutex> lock(h.mu);
    h.prepare(*m);
    out->ir = module_text(*m);
    optimize_module(*m, *h.tm);
    if (opts.stream_stores) mark_streaming_stores(*m);
    out->opt_ir = module_text(*m);
    if (auto e = h.jit->addIRModule(llvm::orc::ThreadSafeModule(std::move(m), std::move(ctx))))
      ARRAYC_INTERNAL_CHECK(false, "cannot add a kernel to the JIT: " + to_error(std::move(e)));
    auto sym = h.jit->lookup(out->symbol);
    if (!sym) ARRAYC_INTERNAL_CHECK(false, "cannot link kernel " + out->symbol + ": " + to_error(sym.takeError()));
    out->fn = sym->toPtr<KernelFn>();
  }
  out->compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return out;
}

std::string host_assembly(const Kernel& k, const EmitOptions& opts) {
  HostJit& h = host();
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> m = emit_cpu_kernel(k, "arrayc_" + k.name, ctx, opts);
  std::lock_guard<std::mutex> lock(h.mu);
  h.prepare(*m);
  optimize_module(*m, *h.tm);
  if (opts.stream_stores) mark_streaming_stores(*m);
  llvm::SmallString<0> buf;
  llvm::raw_svector_ostream os(buf);
  llvm::legacy::PassManager pm;
  if (h.tm->addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::AssemblyFile))
    return "; the host target cannot emit assembly\n";
  pm.run(*m);
  return std::string(buf.str());
}

std::string host_target_description() {
  HostJit& h = host();
  return h.tm->getTargetTriple().str() + " " + h.tm->getTargetCPU().str();
}

}  // namespace arrayc::detail
