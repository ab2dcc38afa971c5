#include "backend/host/host_jit.h"

#include "arrayc/error.h"
#include "codegen/cpu/cpu_kernel.h"
#include "codegen/cpu/host_passes.h"
#include "codegen/cpu/host_policy.h"
#include "codegen/cpu/tile_copy.h"
#include "codegen/llvm_util.h"

#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ObjectTransformLayer.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/Support/MemoryBuffer.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>

namespace arrayc::detail {
namespace {

std::string to_error(llvm::Error e) { return llvm::toString(std::move(e)); }

// LLVM's loop vectorizer follows a 16-lane loop with a second vector loop, of 8 lanes, for
// what it leaves over, and only then the scalar loop. In a loop of math functions that second
// loop is a second copy of every inlined function and about half of the compile time (a kernel
// of exp, sin and cos: 166 -> 127 ms; of 30 such ops: 495 -> 294 ms). Without it what the
// vector loop leaves over (up to 63 floats where it interleaves four 16-lane vectors) takes the
// scalar loop, as the peeled elements before the vector loop do already: sin of 127 floats takes
// 0.54 us, of 128 0.40 us. The option is LLVM's own, global to the process, whose LLVM is
// arrayc's (linked statically).
void no_epilogue_vectorization() {
  llvm::StringMap<llvm::cl::Option*>& options = llvm::cl::getRegisteredOptions();
  auto it = options.find("enable-epilogue-vectorization");
  ARRAYC_INTERNAL_CHECK(it != options.end() && !it->second->addOccurrence(0, it->first(), "false"),
                        "LLVM has no option enable-epilogue-vectorization");
}

struct HostJit {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::unique_ptr<llvm::TargetMachine> tm;
  std::mutex mu;
  std::atomic<int64_t> next_id{0};

  HostJit() {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    no_epilogue_vectorization();
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
    // Keeps a copy of the object the JIT compiles for the module being captured (the disk
    // cache stores it; loading it later links the same bytes).
    jit->getObjTransformLayer().setTransform(
        [this](std::unique_ptr<llvm::MemoryBuffer> obj) -> llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> {
          if (capture && obj->getBufferIdentifier().starts_with(capture_module)) *capture = obj->getBuffer().str();
          return obj;
        });
  }

  // While a kernel compiles with keep_artifact: where its object goes. Guarded by mu.
  std::string* capture = nullptr;
  std::string capture_module;
  // Symbols whose definition failed to link: never defined again.
  std::set<std::string> failed;

  // The tile copies (emit_tile_copy) added so far, by element size; each is compiled with the
  // first kernel that calls it and shared from then on. Guarded by mu.
  std::set<int> tile_copies;
  void add_tile_copies(const Kernel& k) {
    for (int l : tiled_leaves(k)) {
      int bytes = static_cast<int>(dtype_size(k.leaves[l].dtype));
      if (!tile_copies.insert(bytes).second) continue;
      auto ctx = std::make_unique<llvm::LLVMContext>();
      std::unique_ptr<llvm::Module> m = emit_tile_copy(bytes, *ctx);
      prepare(*m);
      optimize_host_module(*m, *tm, /*stream_stores=*/false);
      if (auto e = jit->addIRModule(llvm::orc::ThreadSafeModule(std::move(m), std::move(ctx))))
        ARRAYC_INTERNAL_CHECK(false, "cannot add the tile copy to the JIT: " + to_error(std::move(e)));
    }
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

}  // namespace

std::unique_ptr<HostBinary> compile_host_kernel(const Kernel& k, const EmitOptions& opts, const std::string& symbol,
                                                bool keep_artifact) {
  HostJit& h = host();
  auto start = std::chrono::steady_clock::now();
  auto out = std::make_unique<HostBinary>();
  {
    std::lock_guard<std::mutex> lock(h.mu);
    out->name = symbol.empty() || h.failed.count(symbol) ? "arrayc_" + k.name + "_" + std::to_string(h.next_id++)
                                                          : symbol;
  }
  auto ctx = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> m = emit_cpu_kernel(k, out->name, *ctx, opts);
  m->setModuleIdentifier(out->name);
  verify_module(*m);
  {
    std::lock_guard<std::mutex> lock(h.mu);
    h.add_tile_copies(k);
    h.prepare(*m);
    optimize_host_module(*m, *h.tm, opts.stream_stores);
    if (auto e = h.jit->addIRModule(llvm::orc::ThreadSafeModule(std::move(m), std::move(ctx))))
      ARRAYC_INTERNAL_CHECK(false, "cannot add a kernel to the JIT: " + to_error(std::move(e)));
    // Only an object under the symbol its key names can be linked by another process.
    h.capture = keep_artifact && out->name == symbol ? &out->artifact : nullptr;
    h.capture_module = out->name;
    auto sym = h.jit->lookup(out->name);
    h.capture = nullptr;
    if (!sym) ARRAYC_INTERNAL_CHECK(false, "cannot link kernel " + out->name + ": " + to_error(sym.takeError()));
    out->fn = sym->toPtr<KernelFn>();
  }
  out->compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return out;
}

std::unique_ptr<HostBinary> load_host_kernel(const Kernel& k, const std::string& symbol, const std::string& object) {
  HostJit& h = host();
  auto start = std::chrono::steady_clock::now();
  auto out = std::make_unique<HostBinary>();
  out->name = symbol;
  std::lock_guard<std::mutex> lock(h.mu);
  auto fail = [&](const std::string& why) {
    h.failed.insert(symbol);
    throw Error("cannot link the stored kernel " + symbol + ": " + why);
  };
  if (h.failed.count(symbol)) fail("it failed before in this process");
  h.add_tile_copies(k);
  if (auto e = h.jit->addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(object, symbol))) fail(to_error(std::move(e)));
  auto sym = h.jit->lookup(symbol);
  if (!sym) fail(to_error(sym.takeError()));
  out->fn = sym->toPtr<KernelFn>();
  out->compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return out;
}

std::string host_target_key() {
  HostJit& h = host();
  return h.tm->getTargetTriple().str() + " " + h.tm->getTargetCPU().str() + " " +
         h.tm->getTargetFeatureString().str() + " LLVM " LLVM_VERSION_STRING;
}

HostStages host_stages(const Kernel& k, const EmitOptions& opts, const std::string& symbol) {
  HostJit& h = host();
  HostStages st;
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> m = emit_cpu_kernel(k, symbol, ctx, opts);
  std::lock_guard<std::mutex> lock(h.mu);
  h.prepare(*m);
  st.ir = module_text(*m);
  optimize_host_module(*m, *h.tm, opts.stream_stores);
  st.opt_ir = module_text(*m);
  llvm::SmallString<0> buf;
  llvm::raw_svector_ostream os(buf);
  llvm::legacy::PassManager pm;
  if (h.tm->addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::AssemblyFile)) {
    st.assembly = "; the host target cannot emit assembly\n";
  } else {
    pm.run(*m);
    st.assembly = std::string(buf.str());
  }
  return st;
}

std::string host_target_description() {
  HostJit& h = host();
  return h.tm->getTargetTriple().str() + " " + h.tm->getTargetCPU().str();
}

}  // namespace arrayc::detail
