// A 784-256-10 MLP with softmax cross-entropy, trained by SGD: the model of W11
// (docs/workloads.md), of examples/train_mlp.cpp and of the harness's training-step row.
#pragma once
#include <vector>

#include "arrayc/arrayc.h"

namespace mlp {

using arrayc::Array;

// Mean softmax cross-entropy of relu(x w1 + b1) w2 + b2 against one-hot labels.
inline Array loss(const Array& w1, const Array& b1, const Array& w2, const Array& b2, const Array& x,
                  const Array& onehot) {
  Array h = arrayc::maximum(arrayc::matmul(x, w1) + b1, 0.0f);
  Array logits = arrayc::matmul(h, w2) + b2;
  Array m = arrayc::max(logits, {1}, true);
  Array lse = arrayc::log(arrayc::sum(arrayc::exp(logits - m), {1}, true)) + m;
  return -arrayc::mean(arrayc::sum(onehot * (logits - lse), {1}));
}

// One SGD step: the loss before it, then the four updated parameters. Jitted, one call is one
// program: forward, backward and update fused.
inline std::vector<Array> sgd_step(const Array& w1, const Array& b1, const Array& w2, const Array& b2,
                                   const Array& x, const Array& onehot) {
  auto [value, g] = arrayc::value_and_grad(loss, {0, 1, 2, 3})(w1, b1, w2, b2, x, onehot);
  const float lr = 0.1f;
  return {value, w1 - lr * g[0], b1 - lr * g[1], w2 - lr * g[2], b2 - lr * g[3]};
}

// Initial parameters (scaled normal weights, zero biases), seeded.
inline std::vector<Array> init(uint64_t seed, arrayc::Device d = arrayc::default_device()) {
  using arrayc::DType;
  return {arrayc::normal({784, 256}, seed, 0.0, 0.05, DType::Float32, d), arrayc::zeros({256}, DType::Float32, d),
          arrayc::normal({256, 10}, seed + 1, 0.0, 0.1, DType::Float32, d), arrayc::zeros({10}, DType::Float32, d)};
}

// Synthetic data a network can learn: inputs ~ N(0, 1) and the label of each row the argmax-free
// rule "which of 10 fixed random projections of it is largest", as a one-hot [n, 10].
inline std::pair<Array, Array> data(int64_t n, uint64_t seed, arrayc::Device d = arrayc::default_device()) {
  using arrayc::DType;
  Array x = arrayc::normal({n, 784}, seed, 0.0, 1.0, DType::Float32, d);
  Array scores = arrayc::matmul(x, arrayc::normal({784, 10}, 12345, 0.0, 1.0, DType::Float32, d));
  Array onehot = arrayc::cast(scores == arrayc::max(scores, {1}, true), DType::Float32);
  arrayc::eval({x, onehot});
  return {x, onehot};
}

}  // namespace mlp
