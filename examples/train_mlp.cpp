// Trains the 784-256-10 MLP of examples/mlp.h on synthetic data with SGD and prints the loss
// curve. Each step is one call of a jitted function: forward, backward (arrayc::value_and_grad)
// and update compiled into one program, traced once.
//
//   build/examples/arrayc-train-mlp [steps=200] [batch=256]
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "mlp.h"

int main(int argc, char** argv) {
  int steps = argc > 1 ? std::atoi(argv[1]) : 200;
  int64_t batch = argc > 2 ? std::atoll(argv[2]) : 256;
  try {
    std::vector<arrayc::Array> p = mlp::init(1);
    // A synthetic training set of 8 batches, made once (a random stream's seed is part of its
    // kernel, so a new seed per step would compile a kernel per step).
    std::vector<std::pair<arrayc::Array, arrayc::Array>> batches;
    for (uint64_t b = 0; b < 8; ++b) batches.push_back(mlp::data(batch, 1000 + b));
    auto step = arrayc::jit(mlp::sgd_step);
    double first_ms = 0, rest_ms = 0;
    for (int s = 0; s < steps; ++s) {
      const auto& [x, onehot] = batches[static_cast<size_t>(s) % batches.size()];
      auto t0 = std::chrono::steady_clock::now();
      std::vector<arrayc::Array> r = step(p[0], p[1], p[2], p[3], x, onehot);
      float loss = r[0].item<float>();
      double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      (s == 0 ? first_ms : rest_ms) += ms;
      p.assign(r.begin() + 1, r.end());
      if (s % 10 == 0 || s == steps - 1) std::printf("step %4d  loss %.4f\n", s, loss);
    }
    std::printf("%d steps of batch %lld: first step (trace + compile) %.0f ms, then %.2f ms per step; %lld trace(s)\n",
                steps, static_cast<long long>(batch), first_ms, steps > 1 ? rest_ms / (steps - 1) : 0.0,
                static_cast<long long>(step.num_traces()));
  } catch (const arrayc::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
