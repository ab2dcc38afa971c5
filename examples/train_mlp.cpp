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
    auto step = arrayc::jit(mlp::sgd_step);
    auto start = std::chrono::steady_clock::now();
    double first_ms = 0;
    for (int s = 0; s < steps; ++s) {
      auto [x, onehot] = mlp::data(batch, 1000 + static_cast<uint64_t>(s));
      auto t0 = std::chrono::steady_clock::now();
      std::vector<arrayc::Array> r = step(p[0], p[1], p[2], p[3], x, onehot);
      float loss = r[0].item<float>();
      if (s == 0) first_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      p.assign(r.begin() + 1, r.end());
      if (s % 10 == 0 || s == steps - 1) std::printf("step %4d  loss %.4f\n", s, loss);
    }
    double total = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::printf("%d steps of batch %lld: first step (trace + compile) %.0f ms, %.2f ms per step after it "
                "(data generation included), %lld trace(s)\n",
                steps, static_cast<long long>(batch), first_ms, steps > 1 ? (total - first_ms) / (steps - 1) : 0.0,
                static_cast<long long>(step.num_traces()));
  } catch (const arrayc::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
