// jit(f): trace f once per input signature and shape class, reuse the compiled program afterwards.
//
// Compiled kernels are specialized on the signature of a call: per input, dtype, rank, which
// dimensions have extent 1 (the broadcast pattern) and the device; never on extents. A call with
// shapes seen before only binds buffers and launches. A call with new extents of a known shape
// class (the signature, plus per dim whether the extent is 0, 1 or other and which dims have
// equal extents) resizes the class's program to them (sizes, strides and launch sizes
// recomputed; on the host and on a GPU alike nothing is planned, compiled or looked up, unless
// the new sizes need other code: a GPU reduction that now splits in two launches, another GPU
// product tile). If f is extent-blind, it is not run again for that: its traces read no extent
// (x.shape(), x.size(); x.ndim() may be read) and its graph holds only inputs, captured arrays,
// constants, elementwise ops, broadcasts, reshapes, transposes and reductions, so it builds the
// same graph at every length of the class. Otherwise f runs again first (it only builds a
// graph), and the program is resized only if that graph is the class's graph at the new extents
// (a branch on x.size() plans anew). The first call of a class also runs f at two probe
// extents, on placeholders, to learn how the program's sizes follow the extents; where they do
// not follow them as products of extents (f divides an extent, puts x.size() into a constant,
// branches on an extent, or fails at a probe extent) each new length is planned again and finds
// every kernel in the cache. Each jit function keeps the Programs of its 64 most recently used
// shapes. Non-contiguous inputs are copied contiguously before the call.
#pragma once
#include <array>
#include <atomic>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "arrayc/array.h"
#include "arrayc/inspect.h"

namespace arrayc {

// What the engine has done since start-up (or reset_stats()).
struct Stats {
  int64_t traces = 0;          // jit traces of a user function
  int64_t compiles = 0;        // kernels compiled by LLVM
  int64_t cache_hits = 0;      // kernels found in the in-memory cache
  int64_t kernel_launches = 0; // kernels run (library calls such as BLAS count too)
  double compile_ms = 0;       // time spent in LLVM (optimization and code generation)
  // The disk cache (docs/env_vars.md, ARRAYC_CACHE): kernels loaded from it instead of compiled,
  // kernels it did not have, entries written and evicted, bad entries found (recompiled and
  // replaced), and the time spent loading.
  int64_t disk_hits = 0;
  int64_t disk_misses = 0;
  int64_t disk_writes = 0;
  int64_t disk_evictions = 0;
  int64_t disk_bad_entries = 0;
  double disk_load_ms = 0;
  // Programs (a schedule with a launch per step) prepared: by eval of a new expression and by jit
  // on a new signature; jit calls at a new length of a known signature that resized a Program
  // instead (no schedule and no kernel lookup; a trace too, unless the function is extent-blind);
  // and runs of a jitted function at probe
  // lengths, which a signature's first call makes to learn how its sizes follow the inputs'.
  int64_t plans = 0;
  int64_t resizes = 0;
  int64_t probe_traces = 0;
  // Bounded memory (issue 26; arrayc/bounds.h): compiled kernels the in-memory cache let go past
  // ARRAYC_KERNEL_CACHE_MAX, and lazy graphs evaluated for reaching ARRAYC_AUTO_EVAL_NODES.
  int64_t kernel_cache_evictions = 0;
  int64_t auto_evals = 0;
};
Stats stats();
void reset_stats();

// The disk cache of this process (docs/env_vars.md: ARRAYC_CACHE, ARRAYC_CACHE_DIR,
// ARRAYC_CACHE_MAX_BYTES). `enabled` is false under ARRAYC_CACHE=0; `writable` is false when
// its directory could not be used (the cache is then memory-only).
struct DiskCacheInfo {
  bool enabled = false;
  bool writable = false;
  std::string dir;
  int64_t entries = 0, bytes = 0, max_bytes = 0;
};
DiskCacheInfo disk_cache_info();
// Removes every entry of the disk cache (kernels loaded in this process stay loaded).
void clear_disk_cache();

// Fusion on (default) or off (one kernel per op, for comparison and differential testing).
// ARRAYC_FUSION=0 turns it off at start-up. Both give the same bits except where a fused kernel
// computes sin and cos of one argument: those share a reduction, and can differ by an ulp or two
// from the separate functions (float32: for arguments below 2^10; docs/math_accuracy.md).
void set_fusion(bool enabled);
bool fusion_enabled();

// Fast math, off by default (ARRAYC_FAST_MATH=1 turns it on at start-up). It gives up, on the
// CPU: the exact reduction of huge sin/cos arguments (sin and cos of abs(x) above 2^40 for
// float32, 2^30 for float64, are NaN), and float64 pow's extended-precision log (errors up to
// about 1000 ULP for results near the overflow and underflow limits). Nothing else changes, and
// GPU kernels use libdevice in either mode. Measured errors: docs/math_accuracy.md. Like
// set_fusion, it applies to what is compiled (or jit-traced) after the call.
void set_fast_math(bool enabled);
bool fast_math_enabled();

namespace detail {
// The type-erased core of jit(): a traced function of n arrays to m arrays.
class JitFunction {
 public:
  using Fn = std::function<std::vector<Array>(const std::vector<Array>&)>;
  explicit JitFunction(Fn fn);
  ~JitFunction();
  std::vector<Array> call(const std::vector<Array>& inputs);
  // Traces the function for these inputs' signature and returns every stage (runs nothing).
  Stages inspect(const std::vector<Array>& inputs, bool fuse);
  int64_t num_traces() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

template <typename R> std::vector<Array> to_array_list(R&& r) {
  using T = std::decay_t<R>;
  if constexpr (std::is_same_v<T, Array>) {
    return {std::forward<R>(r)};
  } else if constexpr (std::is_same_v<T, std::vector<Array>>) {
    return std::forward<R>(r);
  } else {
    return std::apply([](auto&&... a) { return std::vector<Array>{Array(a)...}; }, r);
  }
}

template <typename R> R from_array_list(std::vector<Array>&& v) {
  if constexpr (std::is_same_v<R, Array>) {
    return std::move(v.at(0));
  } else if constexpr (std::is_same_v<R, std::vector<Array>>) {
    return std::move(v);
  } else {
    return [&]<size_t... I>(std::index_sequence<I...>) {
      return R{v.at(I)...};
    }(std::make_index_sequence<std::tuple_size_v<R>>{});
  }
}
// Arguments a jitted function takes: Arrays (traced: parameters of the compiled program) and
// numbers (static: fixed into the trace, as JAX's static_argnums).
template <typename T> inline constexpr bool is_array_arg_v = std::is_same_v<T, Array>;
template <typename T>
inline constexpr bool is_static_arg_v =
    std::is_same_v<T, double> || std::is_same_v<T, float> || std::is_same_v<T, int> ||
    std::is_same_v<T, int64_t> || std::is_same_v<T, long long> || std::is_same_v<T, bool>;

// How many traces are running on this thread: a jitted function called inside another's trace
// runs its body inline on the tracer arrays, so that the two fuse into one program.
inline thread_local int trace_depth = 0;

// A number passed to a jitted function, as a word of its static key: the type and the bits, so
// that 1 (an integer, which keeps an integer array's dtype) and 1.0 trace apart.
template <typename T> std::pair<int64_t, int64_t> static_key_of(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    double d = static_cast<double>(v);
    int64_t bits;
    std::memcpy(&bits, &d, sizeof bits);
    return {std::is_same_v<T, float> ? 1 : 2, bits};
  } else {
    return {std::is_same_v<T, bool> ? 3 : 4, static_cast<int64_t>(v)};
  }
}

// The trace of f's body, with errors marked as coming from inside it.
template <typename G> auto traced(G&& body) {
  struct Depth {
    Depth() { ++trace_depth; }
    ~Depth() { --trace_depth; }
  } depth;
  try {
    return body();
  } catch (const Interrupted&) {
    throw;
  } catch (const Error& e) {
    static constexpr const char* kPrefix = "in jit-traced function: ";
    if (std::string_view(e.what()).starts_with(kPrefix)) throw;
    throw Error(kPrefix + std::string(e.what()));
  }
}
}  // namespace detail

// A compiled version of f. f takes Arrays (by value or const reference) and numbers (double,
// float, int, int64_t, bool), and returns an Array, a std::vector<Array> or a std::tuple of
// Arrays; the jitted function returns the same kind, holding evaluated arrays.
//
// Numbers are static arguments: their values are fixed into the trace (a call with a new value
// traces again), so that they type the way numpy's scalars do (`x * s` keeps a float32 x
// float32). The kernels take such values as parameters, so a new value traces but compiles
// nothing (but for small integers, NaN, the infinities and small exponents of pow, compiled into
// the code). Called inside another jitted function's trace, f runs inline on the tracer arrays:
// `jit(g)` calling `jit(f)` compiles into the one program of g (sum(square(x)) is one kernel).
// An arrayc::Error raised while f is traced starts with "in jit-traced function: ".
template <typename F> class Jitted {
 public:
  explicit Jitted(F f) : f_(std::move(f)) {}

  template <typename... A> auto operator()(const A&... args) {
    static_assert(((detail::is_array_arg_v<A> || detail::is_static_arg_v<A>) && ...),
                  "arrayc::jit: every argument of a jitted function must be an arrayc::Array "
                  "(traced) or a number: double, float, int, int64_t or bool (static: a new "
                  "value traces again)");
    using R = std::decay_t<std::invoke_result_t<F&, const A&...>>;
    if (detail::trace_depth > 0) return R(f_(args...));  // inside another trace: inline
    return detail::from_array_list<R>(core<A...>(args...).call(arrays_of(args...)));
  }

  // Traces of every static-argument value together.
  int64_t num_traces() const {
    std::lock_guard<std::mutex> lock(cores_->mu);
    int64_t n = 0;
    for (const auto& [key, c] : cores_->by_key) n += c->num_traces();
    return n;
  }

  // Every compiler stage of this function for arguments like these (see inspect.h).
  template <typename... A> Stages inspect(const A&... args) {
    return core<A...>(args...).inspect(arrays_of(args...), fusion_enabled());
  }

 private:
  template <typename... A> static std::vector<Array> arrays_of(const A&... args) {
    std::vector<Array> v;
    [[maybe_unused]] auto add = [&](const auto& a) {
      if constexpr (detail::is_array_arg_v<std::decay_t<decltype(a)>>) v.push_back(a);
    };
    (add(args), ...);
    return v;
  }

  // The traced function for these static values (one per distinct tuple of numbers).
  // The traced function for these arguments' static values (one for all calls when there are
  // none: found without a lock once made). Thread-safe: copies of a Jitted share their cores,
  // which live as long as the last copy.
  template <typename... A> detail::JitFunction& core(const A&... args) {
    constexpr bool has_static = (detail::is_static_arg_v<A> || ...);
    if constexpr (!has_static)
      if (detail::JitFunction* p = cores_->plain.load(std::memory_order_acquire)) return *p;
    std::vector<int64_t> key;
    if constexpr (has_static) {
      [[maybe_unused]] auto add = [&](const auto& a) {
        using T = std::decay_t<decltype(a)>;
        if constexpr (detail::is_array_arg_v<T>) {
          key.push_back(0);
        } else {
          auto [tag, bits] = detail::static_key_of(a);
          key.push_back(tag);
          key.push_back(bits);
        }
      };
      (add(args), ...);
    }
    std::lock_guard<std::mutex> lock(cores_->mu);
    auto& c = cores_->by_key[key];
    if (!c) {
      std::tuple<std::conditional_t<detail::is_array_arg_v<A>, std::monostate, A>...> statics{
          static_number(args)...};
      c = std::make_shared<detail::JitFunction>([f = f_, statics](const std::vector<Array>& in) mutable {
        return detail::traced([&] { return call_with<A...>(f, in, statics, std::index_sequence_for<A...>{}); });
      });
    }
    if constexpr (!has_static) cores_->plain.store(c.get(), std::memory_order_release);
    return *c;
  }

  template <typename T> static auto static_number(const T& a) {
    if constexpr (detail::is_array_arg_v<T>) return std::monostate{};
    else return a;
  }

  template <typename... A, typename G, typename S, size_t... I>
  static std::vector<Array> call_with(G& f, const std::vector<Array>& in, const S& statics,
                                      std::index_sequence<I...>) {
    [[maybe_unused]] constexpr std::array<size_t, sizeof...(A)> slot = [] {
      std::array<size_t, sizeof...(A)> s{};
      size_t k = 0, i = 0;
      ((s[i++] = detail::is_array_arg_v<A> ? k++ : 0), ...);
      return s;
    }();
    [[maybe_unused]] auto arg = [&]<size_t J>(std::integral_constant<size_t, J>) -> decltype(auto) {
      if constexpr (detail::is_array_arg_v<std::tuple_element_t<J, std::tuple<A...>>>)
        return static_cast<const Array&>(in.at(slot[J]));
      else
        return static_cast<const std::tuple_element_t<J, S>&>(std::get<J>(statics));
    };
    return detail::to_array_list(f(arg(std::integral_constant<size_t, I>{})...));
  }

  F f_;
  struct Cores {
    std::mutex mu;
    // By the static arguments' types and values (an empty key when there are none).
    std::map<std::vector<int64_t>, std::shared_ptr<detail::JitFunction>> by_key;
    std::atomic<detail::JitFunction*> plain{nullptr};  // by_key's entry for no static arguments
  };
  std::shared_ptr<Cores> cores_ = std::make_shared<Cores>();
};

template <typename F> Jitted<F> jit(F f) { return Jitted<F>(std::move(f)); }

}  // namespace arrayc
