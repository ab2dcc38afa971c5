// Gradients of two fixed programs, logistic regression and a 784-256-10 MLP with softmax
// cross-entropy, against JAX's (tests/data/transforms/jax_grads.txt, written by
// scripts/jax_reference_grads.py on a machine with JAX; the inputs come from one formula both
// sides compute exactly). Without the data file the tests are skipped, with a message; with
// ARRAYC_REQUIRE_JAX_DATA=1 a missing file fails them. ARRAYC_JAX_DATA=<path> reads another file.
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>

#include <gtest/gtest.h>

#include "arrayc/arrayc.h"

namespace {

using namespace arrayc;

// value(i, seed, scale) of scripts/jax_reference_grads.py, row-major over `shape`.
Array formula(const Shape& shape, int64_t seed, double scale) {
  std::vector<float> v(static_cast<size_t>(shape_numel(shape)));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<float>((static_cast<double>((static_cast<int64_t>(i) * 7919 + seed * 104729) % 2001) / 1000.0 - 1.0) * scale);
  return array(v, shape);
}

struct Program {
  std::vector<std::string> param_names, data_names;
  std::vector<Array> params, data;
  std::function<Array(const std::vector<Array>&)> loss;  // params then data
};

Program logreg() {
  std::vector<float> y(64);
  for (int i = 0; i < 64; ++i) y[i] = (i * 37) % 5 < 2 ? 1.0f : 0.0f;
  Program p{{"w", "b"}, {"x", "y"}, {formula({20}, 2, 0.1), formula({}, 3, 0.05)}, {formula({64, 20}, 1, 1.0), array(y, {64})}, {}};
  p.loss = [](const std::vector<Array>& a) {
    const Array &w = a[0], &b = a[1], &x = a[2], &y = a[3];
    Array z = matmul(x, w) + b;
    Array q = 1.0f / (1.0f + arrayc::exp(-z));
    return -mean(y * arrayc::log(q) + (1.0f - y) * arrayc::log(1.0f - q));
  };
  return p;
}

Program mlp() {
  std::vector<float> onehot(32 * 10, 0.0f);
  for (int i = 0; i < 32; ++i) onehot[i * 10 + (i * 7) % 10] = 1.0f;
  Program p{{"w1", "b1", "w2", "b2"},
            {"x", "onehot"},
            {formula({784, 256}, 5, 0.05), formula({256}, 6, 0.01), formula({256, 10}, 7, 0.1), formula({10}, 8, 0.01)},
            {formula({32, 784}, 4, 1.0), array(onehot, {32, 10})},
            {}};
  p.loss = [](const std::vector<Array>& a) {
    Array h = maximum(matmul(a[4], a[0]) + a[1], 0.0f);
    Array logits = matmul(h, a[2]) + a[3];
    Array m = max(logits, {1}, true);
    Array lse = arrayc::log(sum(arrayc::exp(logits - m), {1}, true)) + m;
    return -mean(sum(a[5] * (logits - lse), {1}));
  };
  return p;
}

// "<program> <kind> <name> <values...>" -> values.
using Reference = std::map<std::string, std::vector<double>>;

// The reference data, or nullopt (with the test skipped or failed as the environment says).
std::optional<Reference> load_reference() {
  const char* env = std::getenv("ARRAYC_JAX_DATA");  // another file, for checking the script's output
  std::string path = env ? env : std::string(ARRAYC_TEST_DATA_DIR) + "/data/transforms/jax_grads.txt";
  std::ifstream in(path);
  if (!in) return std::nullopt;
  Reference r;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    std::string prog, kind, name;
    ls >> prog >> kind >> name;
    std::vector<double>& v = r[prog + " " + kind + " " + name];
    for (double x; ls >> x;) v.push_back(x);
  }
  return r;
}

bool jax_data_required() {
  const char* v = std::getenv("ARRAYC_REQUIRE_JAX_DATA");
  return v && std::string(v) == "1";
}

void check_against_jax(const char* name, const Program& p) {
  std::optional<Reference> ref = load_reference();
  if (!ref) {
    if (jax_data_required())
      FAIL() << "tests/data/transforms/jax_grads.txt is missing (ARRAYC_REQUIRE_JAX_DATA=1): run "
                "scripts/jax_reference_grads.py where JAX is installed";
    GTEST_SKIP() << "no JAX reference data (tests/data/transforms/jax_grads.txt); make it with "
                    "scripts/jax_reference_grads.py on a machine with JAX";
  }
  auto want = [&](const std::string& kind, const std::string& n) -> const std::vector<double>& {
    auto it = ref->find(std::string(name) + " " + kind + " " + n);
    if (it == ref->end()) throw std::runtime_error("no reference line for " + std::string(name) + " " + kind + " " + n);
    return it->second;
  };
  // The inputs are the ones JAX saw.
  for (size_t i = 0; i < p.params.size() + p.data.size(); ++i) {
    bool is_param = i < p.params.size();
    const Array& a = is_param ? p.params[i] : p.data[i - p.params.size()];
    const std::string& n = is_param ? p.param_names[i] : p.data_names[i - p.params.size()];
    double s = sum(cast(a, DType::Float64)).item<double>();
    EXPECT_NEAR(s, want("input_sum", n)[0], 1e-9 * (1 + std::fabs(s))) << "input " << n;
  }
  std::vector<int64_t> argnums;
  for (size_t i = 0; i < p.params.size(); ++i) argnums.push_back(static_cast<int64_t>(i));
  std::vector<Array> args = p.params;
  args.insert(args.end(), p.data.begin(), p.data.end());
  auto loss = p.loss;
  std::vector<Array> values_and_grads = detail::grad_call("value_and_grad", [loss](const std::vector<Array>& a) {
    return std::vector<Array>{loss(a)};
  }, args, argnums);
  EXPECT_NEAR(values_and_grads[0].item<float>(), want("loss", "-")[0], 1e-5 * std::fabs(want("loss", "-")[0]) + 1e-6);
  for (size_t k = 0; k < p.params.size(); ++k) {
    SCOPED_TRACE(std::string(name) + " gradient of " + p.param_names[k]);
    std::vector<double> g = values_and_grads[1 + k].to_vector<double>();
    size_t n = g.size();
    double norm = 0, total = 0, proj = 0;
    for (size_t i = 0; i < n; ++i) {
      norm += g[i] * g[i];
      total += g[i];
      proj += g[i] * ((static_cast<double>((static_cast<int64_t>(i) * 7919 + 100 * 104729) % 2001) / 1000.0 - 1.0));
    }
    norm = std::sqrt(norm);
    double rms = norm / std::sqrt(static_cast<double>(n));
    EXPECT_NEAR(norm, want("norm", p.param_names[k])[0], 1e-4 * norm);
    EXPECT_NEAR(total, want("sum", p.param_names[k])[0], 1e-4 * std::fabs(total) + 1e-4 * norm);
    EXPECT_NEAR(proj, want("proj", p.param_names[k])[0], 1e-4 * std::fabs(proj) + 1e-4 * norm);
    const std::vector<double>& samples = want("samples", p.param_names[k]);
    ASSERT_EQ(samples.size(), 16u);
    for (size_t j = 0; j < 16; ++j) {
      size_t i = (j * 104729) % n;
      EXPECT_NEAR(g[i], samples[j], 1e-3 * std::fabs(samples[j]) + 1e-3 * rms) << "element " << i;
    }
  }
}

TEST(GradJax, LogisticRegression) { check_against_jax("logreg", logreg()); }
TEST(GradJax, Mlp784x256x10) { check_against_jax("mlp", mlp()); }

}  // namespace
