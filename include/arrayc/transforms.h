// Function transformations: grad, value_and_grad, vjp, jvp and vmap (docs/transforms.md).
//
// Each transformation traces f on placeholder arrays, transforms the graph it built with one
// rule per op (lib/transforms/rules.cpp) and substitutes the real arguments. The result is an
// ordinary lazy graph, so transformations compose with each other and with jit:
// `jit(grad(f))` and `jit(vmap(grad(f)))` compile one fused program (the backward pass fuses like
// any other graph); `grad(jit(f))` and `vmap(jit(f))` trace f's body inline. Called outside any
// trace, a transformed function evaluates its results together before returning them.
//
// f takes Arrays (any number) and returns an Array, a std::vector<Array> or a std::tuple of
// Arrays. Errors are arrayc::Error naming the transformation and the op: differentiating with
// respect to an integer argument, a non-scalar result for grad, an op without a gradient or
// batching rule, mismatched vmap axes.
#pragma once
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "arrayc/array.h"
#include "arrayc/jit.h"

namespace arrayc {

// vmap's in_axes entry for an argument that is not mapped: every call of f sees all of it.
inline constexpr int64_t not_mapped = std::numeric_limits<int64_t>::min();

namespace detail {
using ArrayFn = std::function<std::vector<Array>(const std::vector<Array>&)>;

// f's outputs, then the gradient of output 0 (a float scalar) with respect to each of argnums.
std::vector<Array> grad_call(const char* name, const ArrayFn& f, const std::vector<Array>& args,
                             const std::vector<int64_t>& argnums);
// f's outputs, and the state its pullback runs from.
struct VjpState;
std::pair<std::vector<Array>, std::shared_ptr<VjpState>> vjp_call(const ArrayFn& f, const std::vector<Array>& primals);
std::vector<Array> pullback_call(const VjpState& s, const std::vector<Array>& cotangents);
// f's outputs, then their tangents (forward mode: J t).
std::vector<Array> jvp_call(const ArrayFn& f, const std::vector<Array>& primals, const std::vector<Array>& tangents);
std::vector<Array> vmap_call(const ArrayFn& f, const std::vector<Array>& args, const std::vector<int64_t>& in_axes,
                             const std::vector<int64_t>& out_axes);

// f called on a list of Arrays, as the transformations need it, for a call with argument types A.
template <typename... A, typename F> ArrayFn erase_args(F f) {
  static_assert((std::is_same_v<A, Array> && ...),
                "arrayc::grad/vmap/vjp/jvp: every argument of a transformed function must be an "
                "arrayc::Array (close over numbers instead)");
  return [f](const std::vector<Array>& in) mutable {
    return [&]<size_t... I>(std::index_sequence<I...>) {
      return to_array_list(f(in.at(I)...));
    }(std::index_sequence_for<A...>{});
  };
}
}  // namespace detail

// ---- Reverse mode -------------------------------------------------------------------------------

// grad(f)(args...): the gradient of f (which returns a float scalar) with respect to argument
// `argnum` (an Array), or with respect to each of `argnums` (a std::vector<Array>). Arguments
// not differentiated are constants.
// value_and_grad(f)(args...): the pair (f(args...), that gradient).
template <typename F, bool Multi, bool WithValue> class GradFn {
 public:
  GradFn(F f, std::vector<int64_t> argnums) : f_(std::move(f)), argnums_(std::move(argnums)) {}
  template <typename... A> auto operator()(const A&... args) const {
    std::vector<Array> r = detail::grad_call(WithValue ? "value_and_grad" : "grad",
                                             detail::erase_args<A...>(f_), {args...}, argnums_);
    Array value = r[0];
    std::vector<Array> grads(r.end() - static_cast<std::ptrdiff_t>(argnums_.size()), r.end());
    if constexpr (Multi) {
      if constexpr (WithValue) return std::pair<Array, std::vector<Array>>(value, grads);
      else return grads;
    } else {
      if constexpr (WithValue) return std::pair<Array, Array>(value, grads[0]);
      else return grads[0];
    }
  }

 private:
  F f_;
  std::vector<int64_t> argnums_;
};

template <typename F> GradFn<F, false, false> grad(F f, int64_t argnum = 0) { return {std::move(f), {argnum}}; }
template <typename F> GradFn<F, true, false> grad(F f, std::vector<int64_t> argnums) {
  return {std::move(f), std::move(argnums)};
}
template <typename F> GradFn<F, false, true> value_and_grad(F f, int64_t argnum = 0) {
  return {std::move(f), {argnum}};
}
template <typename F> GradFn<F, true, true> value_and_grad(F f, std::vector<int64_t> argnums) {
  return {std::move(f), std::move(argnums)};
}

// vjp(f, primals...): f's outputs and its pullback, which maps cotangents of the outputs (one
// per output, each of its output's shape) to cotangents of every primal:
//   auto [y, pullback] = vjp(f, x, w);  std::vector<Array> g = pullback({ct});
class Pullback {
 public:
  explicit Pullback(std::shared_ptr<detail::VjpState> s) : s_(std::move(s)) {}
  std::vector<Array> operator()(const std::vector<Array>& cotangents) const {
    return detail::pullback_call(*s_, cotangents);
  }
  std::vector<Array> operator()(const Array& cotangent) const { return (*this)(std::vector<Array>{cotangent}); }

 private:
  std::shared_ptr<detail::VjpState> s_;
};

template <typename F, typename... A> auto vjp(const F& f, const A&... primals) {
  using R = std::decay_t<std::invoke_result_t<const F&, const A&...>>;
  auto [outs, state] = detail::vjp_call(detail::erase_args<A...>(f), {primals...});
  return std::pair<R, Pullback>(detail::from_array_list<R>(std::move(outs)), Pullback(std::move(state)));
}

// ---- Forward mode -------------------------------------------------------------------------------

// jvp(f, primals, tangents): f's outputs and their tangents J * tangents (one tangent per
// primal, of its shape and dtype). Built by transposing the pullback, so it costs about two
// backward passes' worth of graph; every op with a gradient rule has one.
template <typename F>
std::pair<std::vector<Array>, std::vector<Array>> jvp(F f, const std::vector<Array>& primals,
                                                      const std::vector<Array>& tangents) {
  detail::ArrayFn fn = [f](const std::vector<Array>& in) mutable { return detail::to_array_list(f(in)); };
  std::vector<Array> r = detail::jvp_call(fn, primals, tangents);
  std::vector<Array> outs(r.begin(), r.begin() + static_cast<std::ptrdiff_t>(r.size() / 2));
  std::vector<Array> tans(r.begin() + static_cast<std::ptrdiff_t>(r.size() / 2), r.end());
  return {outs, tans};
}

// ---- Batching -----------------------------------------------------------------------------------

// vmap(f, in_axes, out_axes)(args...): f mapped over axis in_axes[i] of argument i (not_mapped:
// the argument is passed whole to every call), its outputs stacked along out_axes[j]. Empty
// in_axes/out_axes mean axis 0 for all; a single entry applies to all. The graph is batched,
// not looped: dot becomes a batched product, reductions and reshapes move their axes, and
// `jit(vmap(f))` is one program.
template <typename F> class Vmapped {
 public:
  Vmapped(F f, std::vector<int64_t> in_axes, std::vector<int64_t> out_axes)
      : f_(std::move(f)), in_axes_(std::move(in_axes)), out_axes_(std::move(out_axes)) {}
  template <typename... A> auto operator()(const A&... args) const {
    using R = std::decay_t<std::invoke_result_t<const F&, const A&...>>;
    return detail::from_array_list<R>(detail::vmap_call(detail::erase_args<A...>(f_), {args...}, in_axes_, out_axes_));
  }

 private:
  F f_;
  std::vector<int64_t> in_axes_, out_axes_;
};

template <typename F> Vmapped<F> vmap(F f, std::vector<int64_t> in_axes = {}, std::vector<int64_t> out_axes = {}) {
  return Vmapped<F>(std::move(f), std::move(in_axes), std::move(out_axes));
}

}  // namespace arrayc
