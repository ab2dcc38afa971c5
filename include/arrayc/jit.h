// jit(f): trace f once per input signature, reuse the compiled program afterwards.
//
// Compiled kernels are specialized on the signature of a call: per input, dtype, rank, which
// dimensions have extent 1 (the broadcast pattern) and the device. A call with shapes seen
// before only binds buffers and launches. A call with new extents of a known signature runs f
// again to build the graph at those shapes (f may depend on them, e.g. through reshape) and
// finds every kernel in the cache: it compiles nothing. Non-contiguous inputs are copied
// contiguously before the call.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
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
};
Stats stats();
void reset_stats();

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
}  // namespace detail

// A compiled version of f. f takes Arrays (by value or const reference) and returns an Array,
// a std::vector<Array> or a std::tuple of Arrays; the jitted function returns the same kind,
// holding evaluated arrays.
template <typename F> class Jitted {
 public:
  explicit Jitted(F f) : f_(std::move(f)) {}

  template <typename... A> auto operator()(const A&... args) {
    using R = std::decay_t<std::invoke_result_t<F&, const A&...>>;
    ensure_core<A...>();
    return detail::from_array_list<R>(core_->call({Array(args)...}));
  }

  int64_t num_traces() const { return core_ ? core_->num_traces() : 0; }

  // Every compiler stage of this function for arguments like these (see inspect.h).
  template <typename... A> Stages inspect(const A&... args) {
    ensure_core<A...>();
    return core_->inspect({Array(args)...}, fusion_enabled());
  }

 private:
  template <typename... A> void ensure_core() {
    if (!core_) {
      core_ = std::make_shared<detail::JitFunction>([f = f_](const std::vector<Array>& in) mutable {
        return call_with(f, in, std::index_sequence_for<A...>{});
      });
    }
  }
  template <typename G, size_t... I>
  static std::vector<Array> call_with(G& f, const std::vector<Array>& in, std::index_sequence<I...>) {
    return detail::to_array_list(f(in.at(I)...));
  }
  F f_;
  std::shared_ptr<detail::JitFunction> core_;
};

template <typename F> Jitted<F> jit(F f) { return Jitted<F>(std::move(f)); }

}  // namespace arrayc
