// The data-parallel training step of a two-layer MLP (tanh hidden layer, mean squared error),
// with its gradients written out by hand: each GPU computes the gradients of its rows of the
// batch, an NCCL all-reduce sums them, and every GPU applies the same update to its copy of the
// weights. Used by arrayc-multigpu-bench (throughput on 1 and 2 GPUs) and by the multi-GPU test
// (the losses of 2 GPUs match those of 1 GPU on the whole batch).
#pragma once
#include <cmath>
#include <vector>

#include "arrayc/arrayc.h"

namespace dp_mlp {

struct Params {
  arrayc::Array w1, b1, w2, b2;
};

// Parameters of a d -> h -> o network on device `dev` (the same values for the same seed).
inline Params init(int64_t d, int64_t h, int64_t o, arrayc::Device dev) {
  using namespace arrayc;
  double s1 = 1.0 / std::sqrt(static_cast<double>(d)), s2 = 1.0 / std::sqrt(static_cast<double>(h));
  return {uniform({d, h}, 11, -s1, s1, DType::Float32, dev).eval(), zeros({h}, DType::Float32, dev),
          uniform({h, o}, 12, -s2, s2, DType::Float32, dev).eval(), zeros({o}, DType::Float32, dev)};
}

// {this part's loss, dw1, db1, dw2, db2} for rows x (targets t) of a batch of n rows in all.
inline std::vector<arrayc::Array> grads(const Params& p, const arrayc::Array& x, const arrayc::Array& t, double n) {
  using namespace arrayc;
  Array hid = tanh(dot(x, p.w1) + p.b1);
  Array e = dot(hid, p.w2) + p.b2 - t;
  Array dy = e * static_cast<float>(2.0 / n);
  Array dz = dot(dy, transpose(p.w2)) * (1.0f - hid * hid);
  return {sum(e * e) * static_cast<float>(1.0 / n), dot(transpose(x), dz), sum(dz, {0}), dot(transpose(hid), dy),
          sum(dy, {0})};
}

// One step on every device at once: replicas[i] and batch parts xs[i], ts[i] on device i. Returns
// the loss (before the update) on the first device; the update is queued, not waited for.
inline arrayc::Array step(std::vector<Params>& replicas, const std::vector<arrayc::Array>& xs,
                          const std::vector<arrayc::Array>& ts, double n, float lr) {
  using namespace arrayc;
  size_t k = replicas.size();
  std::vector<std::vector<Array>> g(k);
  for (size_t i = 0; i < k; ++i) {
    g[i] = grads(replicas[i], xs[i], ts[i], n);
    eval(g[i]);
  }
  std::vector<std::vector<Array>> total(5, std::vector<Array>(k));
  for (size_t j = 0; j < 5; ++j) {
    std::vector<Array> parts;
    for (size_t i = 0; i < k; ++i) parts.push_back(g[i][j]);
    total[j] = k == 1 ? parts : all_reduce(parts);
  }
  for (size_t i = 0; i < k; ++i) {
    Params& p = replicas[i];
    p = {p.w1 - total[1][i] * lr, p.b1 - total[2][i] * lr, p.w2 - total[3][i] * lr, p.b2 - total[4][i] * lr};
    eval({p.w1, p.b1, p.w2, p.b2});
  }
  return total[0][0];
}

}  // namespace dp_mlp
