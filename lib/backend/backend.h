// A Backend is everything arrayc does that depends on the kind of device: how a step's code is
// compiled (options, the compile units it needs), how it is launched (a plan made once, when a
// Program is prepared), matrix products, memory and copies. backend_for(Device) is the only
// place that asks which kind a device is; adding a device kind is one folder under backend/.
//
// The engine drives it (engine/compile.h): for each step of a Schedule it calls plan(), which
// compiles through the engine's one kernel cache (the Compiler passed in) and returns a Launch
// that the executor calls with the step's buffers, as often as the Program runs. A Launch does
// no code generation, no cache lookup and no string building.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/body_emitter.h"
#include "ir/node.h"
#include "kernel/schedule.h"

namespace arrayc::detail {

// Compiled code, loaded and ready to call on one device: a host function, or a GPU kernel in a
// loaded module. Backends derive their own; the kernel cache and the Launches planned with a
// binary share it (the cache may drop it first: engine/kernel_cache.h).
struct Binary {
  virtual ~Binary() = default;
  std::string name;       // the symbol or entry it is called by
  double compile_ms = 0;  // emit, optimize, compile and load
  std::string artifact;   // what the disk cache keeps (an object file); empty when nothing
};

// One unit's stages as text, for inspect(), ARRAYC_DEBUG and ARRAYC_DUMP_DIR.
struct StageTexts {
  std::string name;        // the kernel's readable name (fused_exp_mul, gemm_f32_...)
  std::string kernel;      // the unit's text form (the cache key's core), with the backend's notes
  std::string ir;          // LLVM IR as emitted
  std::string opt_ir;      // after optimization
  std::string code;        // host assembly or PTX
  std::string code_ext;    // the dump file's extension for `code`: ".s" or ".ptx"
  std::string binary;      // what the loader reports of the binary (GPU: registers, spills, log)
  std::string target;      // what it was compiled for, e.g. "x86_64-pc-linux-gnu znver4"
};

// Something to compile: the cache key's parts (engine/kernel_cache.h joins them in one place),
// how to compile it on a miss, and how to show its stages.
struct CompileUnit {
  std::string target;   // Backend::target_id of the device
  std::string options;  // the options that change the binary, as text ("fast=0 stream=1")
  std::string text;     // Kernel::str(), GemmKernel::str(), ...
  std::function<std::unique_ptr<Binary>()> compile;
  std::function<StageTexts(const Binary&)> stages;
  // For the disk cache: what else identifies the code across processes (the host's CPU and
  // features, the LLVM version, ...; empty: the unit is never stored), and how to load a stored
  // artifact (throws when it cannot).
  std::string_view disk_target;  // a string that outlives the unit (a backend's constant)
  std::function<std::unique_ptr<Binary>(const std::string& artifact)> load;
};

// What a backend compiles through: the engine's kernel cache. Thread-safe.
class Compiler {
 public:
  virtual ~Compiler() = default;
  virtual std::shared_ptr<const Binary> get(const CompileUnit& unit) = 0;
};

// A step ready to run. ptrs: for a kernel step, its memory operands' base pointers (inputs, then
// outputs, as kernel.h's calling convention); for a product, {a, b, c} at element (0, 0).
class Launch {
 public:
  virtual ~Launch() = default;
  virtual void run(const std::vector<void*>& ptrs) const = 0;
};

// The facts about a step's operands that only the caller knows when it is planned: whether each
// jit parameter's data starts 16-byte aligned (GPU products load vectors when it does).
struct PlanContext {
  EmitOptions user;                  // the user's code-generation options (fast math)
  std::vector<bool> param_aligned;   // by parameter index; missing entries count as aligned
  bool tf32_products = false;        // float32 products may use TF32 (set_matmul_precision)
  bool param_is_aligned(int i) const {
    return i < 0 || static_cast<size_t>(i) >= param_aligned.size() || param_aligned[i];
  }
};

class Backend : public MemoryOwner {
 public:
  // Throws arrayc::Error when d does not exist on this machine, saying why.
  virtual void check(Device d) const = 0;
  // Identifies the code this backend makes for `d` within the process (part of every cache key).
  virtual std::string target_id(Device d) const = 0;
  // The step's launch, its code compiled through `c`. Null when the step has nothing to do.
  virtual std::unique_ptr<Launch> plan(const Step& step, const Schedule& s, Device d, const PlanContext& ctx,
                                       Compiler& c) = 0;
  // jit's new-length path (engine/jit_resize.h): the launch of a step that differs from the one
  // `like` was planned for in its sizes alone. A backend may reuse like's code when the step
  // needs the same code at the new sizes (no cache lookup; the host and CUDA backends do); by
  // default it plans the step again.
  virtual std::unique_ptr<Launch> replan(const Step& step, const Schedule& s, Device d, const PlanContext& ctx,
                                         Compiler& c, const Launch* like) {
    (void)like;
    return plan(step, s, d, ctx, c);
  }
  // The stages of the units plan() compiles for the step, in order (inspect()).
  virtual std::vector<StageTexts> stages(const Step& step, const Schedule& s, Device d, const PlanContext& ctx,
                                         Compiler& c) = 0;

  // Memory. alloc of 0 bytes may return null; release (MemoryOwner) frees.
  virtual void* alloc(Device d, size_t bytes) = 0;
  virtual void upload(Device d, void* dst, const void* host_src, size_t bytes) = 0;
  // read (MemoryOwner) copies device memory to the host.
  // A copy between two devices of this backend (the same one or two).
  virtual void copy(Device dst_dev, void* dst, Device src_dev, const void* src, size_t bytes) = 0;
  virtual void synchronize(Device d) = 0;
};

// The backend of a device's kind.
Backend& backend_for(Device d);

// d, after backend_for(d).check(d).
Device checked(Device d);

// New memory on d, freed when the last reference goes.
StorageRef allocate(Device d, size_t bytes);

// Copies `bytes` from src on `from` to dst on `to`: host to device, device to host, or between
// devices of one backend (the only kinds there are).
void copy_bytes(Device to, void* dst, Device from, const void* src, size_t bytes);

}  // namespace arrayc::detail
