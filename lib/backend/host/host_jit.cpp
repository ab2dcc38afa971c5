#include "backend/host/host_jit.h"

#include "arrayc/error.h"
#include "codegen/cpu/cpu_kernel.h"
#include "codegen/cpu/host_passes.h"
#include "codegen/cpu/host_policy.h"
#include "codegen/cpu/tile_copy.h"
#include "codegen/llvm_util.h"
#include "support/env.h"

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

#include <llvm/MC/MCSubtargetInfo.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <map>
#include <optional>
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

// The features LLVM gives `cpu` ("+avx2", ...); `what` starts the error for a CPU it does not know.
std::vector<std::string> features_of(const std::string& cpu, const std::string& what) {
  llvm::InitializeNativeTarget();
  llvm::Triple triple(llvm::sys::getProcessTriple());
  std::string err;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple.str(), err);
  ARRAYC_INTERNAL_CHECK(target, "no LLVM target for the host: " + err);
  // Asked of a generic subtarget first: LLVM prints a warning when made for an unknown CPU.
  std::unique_ptr<llvm::MCSubtargetInfo> generic(target->createMCSubtargetInfo(triple.str(), "", ""));
  std::unique_ptr<llvm::MCSubtargetInfo> sti;
  if (!cpu.empty() && generic && generic->isCPUStringValid(cpu))
    sti.reset(target->createMCSubtargetInfo(triple.str(), cpu, ""));
  if (!sti)
    throw Error(what + "LLVM knows no CPU '" + cpu + "' for " + triple.str() +
                " (examples: x86-64-v2, x86-64-v3 for AVX2, x86-64-v4 for AVX-512, skylake-avx512, znver4)");
  std::vector<std::string> features;
  for (const llvm::SubtargetFeatureKV& f : sti->getAllProcessorFeatures())
    if (sti->getFeatureBits().test(f.Value)) features.push_back(std::string("+") + f.Key);
  return features;
}

// The target for kernels: the host CPU as LLVM detects it (name and features) or, for a CPU
// named by `cpu` (ARRAYC_HOST_CPU, host_stages_for_cpu), that CPU with the features LLVM gives
// it. With must_run_here, a CPU that has a feature this host lacks is an error: its code could
// execute an instruction this machine does not have (SIGILL, or worse).
llvm::orc::JITTargetMachineBuilder target_builder(const std::string& cpu, bool must_run_here) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::InitializeNativeTargetAsmParser();  // the float16 conversions' inline assembly (half_convert.h)
  std::optional<llvm::orc::JITTargetMachineBuilder> jtmb;
  if (cpu.empty()) {
    auto host = llvm::orc::JITTargetMachineBuilder::detectHost();
    ARRAYC_INTERNAL_CHECK(static_cast<bool>(host), "cannot detect the host target");
    jtmb = std::move(*host);
  } else {
    const std::string what = must_run_here ? "ARRAYC_HOST_CPU=" + cpu + ": " : "";
    std::vector<std::string> features = features_of(cpu, what);
    if (must_run_here) {
      // Only the features the host reports on count: the others tune, they add no instruction.
      llvm::StringMap<bool> host = llvm::sys::getHostCPUFeatures();
      std::string missing;
      for (const std::string& f : features) {
        auto it = host.find(f.substr(1));
        if (it != host.end() && !it->second) missing += (missing.empty() ? "" : ", ") + f.substr(1);
      }
      if (!missing.empty())
        throw Error(what + "this machine's CPU (" + llvm::sys::getHostCPUName().str() + ") lacks " + missing +
                    ", so code compiled for " + cpu + " cannot run here");
    }
    jtmb.emplace(llvm::Triple(llvm::sys::getProcessTriple()));
    jtmb->setCPU(cpu).addFeatures(features);
  }
  jtmb->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  return std::move(*jtmb);
}

std::unique_ptr<llvm::TargetMachine> target_machine(llvm::orc::JITTargetMachineBuilder jtmb) {
  auto tm = jtmb.createTargetMachine();
  if (!tm) ARRAYC_INTERNAL_CHECK(false, "cannot create the target machine: " + to_error(tm.takeError()));
  return std::move(*tm);
}

// The attributes that decide each function's code: the target's CPU and features, full-width
// vectors where the CPU has them (LLVM may default to 256 bits), and a 64-byte aligned frame (the
// vector loops spill zmm constants and reload them every iteration; with the ABI's 16-byte
// alignment those reloads straddle cache lines in three processes of four, whichever the
// caller's stack offset, and W8 then ran 1.27x slower).
void prepare(llvm::Module& m, const llvm::TargetMachine& tm) {
  m.setDataLayout(tm.createDataLayout());
  m.setTargetTriple(tm.getTargetTriple().str());
  for (llvm::Function& f : m) {
    if (f.isDeclaration()) continue;
    f.addFnAttr("target-cpu", tm.getTargetCPU());
    f.addFnAttr("target-features", tm.getTargetFeatureString());
    f.addFnAttr("prefer-vector-width", "512");
    f.addFnAttr(llvm::Attribute::getWithStackAlignment(f.getContext(), llvm::Align(64)));
  }
}

// A kernel's module for `tm`: the emitter's vector math follows the target's CPU.
std::unique_ptr<llvm::Module> emit_for(const Kernel& k, const std::string& symbol, llvm::LLVMContext& ctx,
                                       EmitOptions opts, const llvm::TargetMachine& tm) {
  opts.cpu = tm.getTargetCPU().str();
  opts.cpu_features = tm.getTargetFeatureString().str();
  return emit_cpu_kernel(k, symbol, ctx, opts);
}

struct HostJit {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::unique_ptr<llvm::TargetMachine> tm;
  std::mutex mu;
  std::atomic<int64_t> next_id{0};

  HostJit() {
    llvm::orc::JITTargetMachineBuilder jtmb = target_builder(host_cpu_setting(), true);
    tm = target_machine(jtmb);
    no_epilogue_vectorization();
    auto j = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(jtmb).create();
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
  // Symbols defined now (their binaries alive). The kernel cache may drop a binary that a
  // Program still runs, and compile its kernel again: the new copy takes another name.
  std::set<std::string> live;

  // The tile copies (emit_tile_copy) added so far, by element size; each is compiled with the
  // first kernel that calls it and shared from then on. Guarded by mu.
  std::set<int> tile_copies;
  void add_tile_copies(const Kernel& k) {
    for (int l : tiled_leaves(k)) {
      int bytes = static_cast<int>(dtype_size(k.leaves[l].dtype));
      if (!tile_copies.insert(bytes).second) continue;
      auto ctx = std::make_unique<llvm::LLVMContext>();
      std::unique_ptr<llvm::Module> m = emit_tile_copy(bytes, *ctx);
      prepare(*m, *tm);
      optimize_host_module(*m, *tm, /*stream_stores=*/false);
      if (auto e = jit->addIRModule(llvm::orc::ThreadSafeModule(std::move(m), std::move(ctx))))
        ARRAYC_INTERNAL_CHECK(false, "cannot add the tile copy to the JIT: " + to_error(std::move(e)));
    }
  }
};

HostJit& host() {
  static HostJit* h = new HostJit;  // lives for the process: compiled code must stay mapped
  return *h;
}

// A resource tracker of the main JITDylib for one kernel's module or object, shared by its
// binary: when the binary goes, its code and symbol are removed (under the JIT's lock).
// Set when the process exits: binaries that static objects destroy then (a jit function kept in
// a static) leave their code mapped rather than call into LLVM during static destruction.
std::atomic<bool> exiting{false};

// Called with h.mu held; `symbol` is then live until the binary goes.
std::shared_ptr<void> new_tracker(HostJit& h, const std::string& symbol) {
  static const bool registered = std::atexit([] { exiting = true; }) == 0;
  (void)registered;
  h.live.insert(symbol);
  llvm::orc::ResourceTrackerSP rt = h.jit->getMainJITDylib().createResourceTracker();
  return std::shared_ptr<void>(new llvm::orc::ResourceTrackerSP(rt), [symbol](void* p) {
    auto* t = static_cast<llvm::orc::ResourceTrackerSP*>(p);
    if (exiting) {  // the tracker is left to the process's end, like the JIT itself, and kept
      // reachable there, so that LeakSanitizer does not count it as lost (a kernel held by a
      // static cache, such as the skinny products', is released after exit begins)
      static auto* mu = new std::mutex;
      static auto* kept = new std::vector<void*>;
      std::lock_guard<std::mutex> lock(*mu);
      kept->push_back(t);
      return;
    }
    {
      HostJit& h = host();
      std::lock_guard<std::mutex> lock(h.mu);
      llvm::consumeError((*t)->remove());  // nothing to do about a failure: the code stays mapped
      h.live.erase(symbol);
    }
    delete t;
  });
}

}  // namespace

HostBinary::~HostBinary() = default;

std::unique_ptr<HostBinary> compile_host_kernel(const Kernel& k, const EmitOptions& opts, const std::string& symbol,
                                                bool keep_artifact) {
  HostJit& h = host();
  auto start = std::chrono::steady_clock::now();
  auto out = std::make_unique<HostBinary>();
  {
    std::lock_guard<std::mutex> lock(h.mu);
    out->name = symbol.empty() || h.failed.count(symbol) || h.live.count(symbol)
                    ? "arrayc_" + k.name + "_" + std::to_string(h.next_id++)
                    : symbol;
  }
  auto ctx = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> m = emit_for(k, out->name, *ctx, opts, *h.tm);
  m->setModuleIdentifier(out->name);
  verify_module(*m);
  {
    std::lock_guard<std::mutex> lock(h.mu);
    h.add_tile_copies(k);
    prepare(*m, *h.tm);
    optimize_host_module(*m, *h.tm, opts.stream_stores);
    out->code = new_tracker(h, out->name);
    auto& rt = *static_cast<llvm::orc::ResourceTrackerSP*>(out->code.get());
    if (auto e = h.jit->addIRModule(rt, llvm::orc::ThreadSafeModule(std::move(m), std::move(ctx))))
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
  // An older copy still runs under that name (the memory cache dropped it): compiled instead.
  if (h.live.count(symbol)) throw Error("cannot link the stored kernel " + symbol + ": its symbol is in use");
  h.add_tile_copies(k);
  out->code = new_tracker(h, symbol);
  auto& rt = *static_cast<llvm::orc::ResourceTrackerSP*>(out->code.get());
  if (auto e = h.jit->addObjectFile(rt, llvm::MemoryBuffer::getMemBufferCopy(object, symbol))) fail(to_error(std::move(e)));
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

namespace {

HostStages stages(const Kernel& k, const EmitOptions& opts, const std::string& symbol, llvm::TargetMachine& tm) {
  HostStages st;
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> m = emit_for(k, symbol, ctx, opts, tm);
  prepare(*m, tm);
  st.ir = module_text(*m);
  optimize_host_module(*m, tm, opts.stream_stores);
  st.opt_ir = module_text(*m);
  llvm::SmallString<0> buf;
  llvm::raw_svector_ostream os(buf);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::AssemblyFile)) {
    st.assembly = "; the host target cannot emit assembly\n";
  } else {
    pm.run(*m);
    st.assembly = std::string(buf.str());
  }
  return st;
}

}  // namespace

HostStages host_stages(const Kernel& k, const EmitOptions& opts, const std::string& symbol) {
  HostJit& h = host();
  std::lock_guard<std::mutex> lock(h.mu);
  return stages(k, opts, symbol, *h.tm);
}

HostStages host_stages_for_cpu(const Kernel& k, const EmitOptions& opts, const std::string& symbol,
                               const std::string& cpu) {
  std::unique_ptr<llvm::TargetMachine> tm = target_machine(target_builder(cpu, false));
  return stages(k, opts, symbol, *tm);
}

std::vector<std::string> cpu_features(const std::string& cpu) { return features_of(cpu, ""); }

// ---- generated products: modules of their own emitter ----
int host_vector_bits() {
  static const int bits = [] {  // the JIT's target is fixed for the process
    std::string f = host().tm->getTargetFeatureString().str() + ",";
    if (f.find("+avx512f,") != std::string::npos) return 512;
    if (f.find("+avx,") != std::string::npos) return 256;
    return 128;
  }();
  return bits;
}

std::unique_ptr<HostBinary> compile_host_module(
    const std::string& symbol, const std::function<std::unique_ptr<llvm::Module>(llvm::LLVMContext&)>& emit) {
  HostJit& h = host();
  auto start = std::chrono::steady_clock::now();
  auto out = std::make_unique<HostBinary>();
  auto ctx = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> m = emit(*ctx);
  verify_module(*m);
  std::lock_guard<std::mutex> lock(h.mu);
  out->name = h.live.count(symbol) ? symbol + "_" + std::to_string(h.next_id++) : symbol;
  if (llvm::Function* f = m->getFunction(symbol)) f->setName(out->name);
  prepare(*m, *h.tm);
  optimize_host_module(*m, *h.tm, /*stream_stores=*/false);
  out->code = new_tracker(h, out->name);
  auto& rt = *static_cast<llvm::orc::ResourceTrackerSP*>(out->code.get());
  if (auto e = h.jit->addIRModule(rt, llvm::orc::ThreadSafeModule(std::move(m), std::move(ctx))))
    ARRAYC_INTERNAL_CHECK(false, "cannot add " + out->name + " to the JIT: " + to_error(std::move(e)));
  auto sym = h.jit->lookup(out->name);
  if (!sym) ARRAYC_INTERNAL_CHECK(false, "cannot link " + out->name + ": " + to_error(sym.takeError()));
  out->fn = sym->toPtr<KernelFn>();
  out->compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return out;
}

void* host_module_function(const std::string& symbol,
                           const std::function<std::unique_ptr<llvm::Module>(llvm::LLVMContext&)>& emit) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<HostBinary>> kept;
  std::lock_guard<std::mutex> lock(mu);
  std::unique_ptr<HostBinary>& bin = kept[symbol];
  if (!bin) bin = compile_host_module(symbol, emit);
  return reinterpret_cast<void*>(bin->fn);
}

void check_host_cpu(const std::string& cpu) { target_builder(cpu, true); }

std::string host_target_description() {
  HostJit& h = host();
  return h.tm->getTargetTriple().str() + " " + h.tm->getTargetCPU().str();
}

}  // namespace arrayc::detail
