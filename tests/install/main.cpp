// Uses the installed arrayc through its public header only: jit-compiles a small expression,
// checks its value, and checks that an arrayc::Error thrown inside libarrayc can be caught here.
#include <arrayc/arrayc.h>

#include <cmath>
#include <cstdio>
#include <vector>

int main() {
  using arrayc::Array;
  try {
    Array x = arrayc::arange(0.0, 8.0, 1.0, arrayc::DType::Float32);
    // exp(log(x + 1)) - x == 1 for every element, so the sum is 8.
    auto f = arrayc::jit([](const Array& a) { return arrayc::exp(arrayc::log(a + 1.0)) - a; });
    Array y = f(x);
    std::vector<float> v = y.to_vector<float>();
    double total = 0;
    for (float e : v) total += e;
    std::printf("downstream: %zu values, sum = %.6f (expected 8), %s\n", v.size(), total,
                arrayc::dtype_name(y.dtype()));
    if (v.size() != 8 || std::fabs(total - 8.0) > 1e-4) {
      std::printf("downstream: FAILED: wrong result\n");
      return 1;
    }
  } catch (const std::exception& e) {
    std::printf("downstream: FAILED: unexpected exception: %s\n", e.what());
    return 1;
  }

  try {
    Array bad = arrayc::arange(3) + arrayc::arange(4);  // shapes [3] and [4] do not broadcast
    std::printf("downstream: FAILED: no error for mismatched shapes %s\n",
                arrayc::shape_str(bad.shape()).c_str());
    return 1;
  } catch (const arrayc::Error& e) {
    std::printf("downstream: caught arrayc::Error: %s\n", e.what());
  }
  std::printf("downstream: OK\n");
  return 0;
}
