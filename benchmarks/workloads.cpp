// The reference workloads W1-W8 of docs/workloads.md as Cases. Each prepares its inputs on a device,
// gives a fresh arrayc::jit runner, the hand-written baseline, and the reference values.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <tuple>

#include "baseline.h"
#include "bench.h"
#include "check.h"
#include "mlp.h"  // examples/: the W11 model

namespace bench {
namespace {

bool is_cpu(arrayc::Device d) { return d.kind == arrayc::Device::Kind::CPU; }

// Elementwise cases at most this long are interpreted in full; longer ones on a sample.
constexpr int64_t kFullReferenceLimit = 10'000'000;
constexpr int64_t kSampleCount = 1 << 16;

template <typename T> std::vector<double> to_double(const std::vector<T>& v) {
  return std::vector<double>(v.begin(), v.end());
}

// A fresh jit object of f, called on `args` by each call of the returned function.
template <typename F, typename... A> std::function<Array()> jit_runner(F f, A... args) {
  auto j = std::make_shared<arrayc::Jitted<F>>(arrayc::jit(std::move(f)));
  return [j, args...]() {
    Array y = (*j)(args...);
    y.eval();
    return y;
  };
}

// ---- Elementwise: y = f(x), one input, one output of the same shape -----------------------

using Unary = Array (*)(const Array&);
template <typename T> using UnaryBaseline = void (*)(const T*, T*, int64_t);

template <typename T> class Elementwise : public Instance {
 public:
  Elementwise(Array x, Unary f, UnaryBaseline<T> base, UnaryBaseline<T> vec, bool host)
      : x_(std::move(x)), f_(f), base_(base), vec_(vec), host_(host) {
    x_.eval();
    if (host_) {
      xh_ = x_.to_vector<T>();
      yh_.assign(xh_.size(), T(0));
    }
  }
  std::function<Array()> make_arrayc() override { return jit_runner(f_, x_); }
  std::function<void()> make_baseline(const std::string& variant) override {
    UnaryBaseline<T> fn = variant == "libmvec" ? vec_ : base_;
    if (!host_ || !fn) return nullptr;
    return [this, fn] { fn(xh_.data(), yh_.data(), static_cast<int64_t>(xh_.size())); };
  }
  Values baseline_values() override { return {to_double(yh_), x_.shape()}; }
  Reference reference() override {
    int64_t n = x_.size();
    if (n <= kFullReferenceLimit)
      return reference_from(interpret_with_bounds(f_(x_)), {},
                            fmt("interpreter on all %lld elements", static_cast<long long>(n)));
    std::vector<T> all = host_ ? std::vector<T>() : x_.to_vector<T>();
    const std::vector<T>& src = host_ ? xh_ : all;
    std::vector<int64_t> idx = sample_indices(n, kSampleCount);
    std::vector<T> xs;
    xs.reserve(idx.size());
    for (int64_t i : idx) xs.push_back(src[i]);
    Array sample = arrayc::array(xs, arrayc::Shape{static_cast<int64_t>(xs.size())}, arrayc::cpu());
    return reference_from(interpret_with_bounds(f_(sample)), std::move(idx),
                          fmt("interpreter on %zu sampled elements (first and last 1024, the rest "
                              "spread by a fixed hash)", xs.size()));
  }

 private:
  Array x_;
  Unary f_;
  UnaryBaseline<T> base_, vec_;
  bool host_;
  std::vector<T> xh_, yh_;
};

// As docs/workloads.md writes it; the simplify pass makes each square a multiply.
Array w1_expr(const Array& x) { return arrayc::pow(arrayc::cos(x), 2) + arrayc::pow(arrayc::sin(x), 2); }
Array w2_expr(const Array& x) {
  return 1.05 * arrayc::where(x > 0.0, x, 1.67 * arrayc::exp(x) - 1.67);
}
Array w8_expr(const Array& x) {
  return arrayc::where(x > 0.0, x * 1.5 + 0.25, arrayc::exp(x) - 1.0) * arrayc::cos(x) +
         arrayc::sin(x) * 0.5;
}

// ---- Matrix products: C = A . op(B) ----------------------------------------------------------

template <typename T> class Product : public Instance {
 public:
  // a: [m, k]; b: [k, n], or [n, k] used transposed; `rows`: how many rows of C the reference
  // interprets (all when >= m).
  Product(Array a, Array b, bool trans_b, bool same, int64_t rows, bool host)
      : a_(std::move(a)), b_(std::move(b)), trans_b_(trans_b), same_(same), rows_(rows), host_(host) {
    arrayc::eval({a_, b_});
    m_ = a_.shape()[0];
    k_ = a_.shape()[1];
    n_ = trans_b_ ? b_.shape()[0] : b_.shape()[1];
    if (host_) {
      ah_ = a_.to_vector<T>();
      bh_ = b_.to_vector<T>();
      ch_.assign(static_cast<size_t>(m_ * n_), T(0));
    }
  }
  std::function<Array()> make_arrayc() override {
    if (same_) return jit_runner([](const Array& x) { return arrayc::dot(x, arrayc::transpose(x)); }, a_);
    if (trans_b_)
      return jit_runner([](const Array& v, const Array& m) { return arrayc::matmul(v, arrayc::transpose(m)); },
                        a_, b_);
    return jit_runner([](const Array& a, const Array& b) { return arrayc::dot(a, b); }, a_, b_);
  }
  std::function<void()> make_baseline(const std::string& variant) override {
    if (!host_ || variant != "baseline") return nullptr;
    return [this] { baseline::gemm(ah_.data(), bh_.data(), ch_.data(), m_, n_, k_, trans_b_); };
  }
  Values baseline_values() override { return {to_double(ch_), {m_, n_}}; }
  Reference reference() override {
    Array b = trans_b_ ? arrayc::transpose(b_) : b_;
    if (rows_ >= m_)
      return reference_from(interpret_with_bounds(arrayc::dot(a_, b)), {},
                            fmt("interpreter on all %lld x %lld elements", static_cast<long long>(m_),
                                static_cast<long long>(n_)));
    std::vector<T> all = host_ ? std::vector<T>() : a_.to_vector<T>();
    const std::vector<T>& src = host_ ? ah_ : all;
    std::vector<int64_t> rows = sample_indices(m_, rows_), idx;
    std::vector<T> sub;
    for (int64_t r : rows) {
      sub.insert(sub.end(), src.begin() + r * k_, src.begin() + (r + 1) * k_);
      for (int64_t j = 0; j < n_; ++j) idx.push_back(r * n_ + j);
    }
    Array as = arrayc::array(sub, {static_cast<int64_t>(rows.size()), k_}, a_.device());
    return reference_from(interpret_with_bounds(arrayc::dot(as, b)), std::move(idx),
                          fmt("interpreter on %zu sampled rows of %lld (all %lld columns)", rows.size(),
                              static_cast<long long>(m_), static_cast<long long>(n_)));
  }

 private:
  Array a_, b_;
  bool trans_b_, same_;
  int64_t rows_;
  bool host_;
  int64_t m_ = 0, n_ = 0, k_ = 0;
  std::vector<T> ah_, bh_, ch_;
};

// ---- W9 (issue 29): a dense layer relu(x . w + b), f32 -------------------------------------------
// Fused, the bias and relu run in the product's step (its epilogue); unfused, the product and two
// elementwise kernels. The baseline is OpenBLAS followed by one C++ loop. `rows`: how many rows
// of the output the reference interprets (all when >= m).
class Layer : public Instance {
 public:
  Layer(int64_t m, int64_t k, int64_t n, int64_t rows, arrayc::Device d, bool host)
      : x_(arrayc::uniform({m, k}, 12, -1.0, 1.0, DType::Float32, d)),
        w_(arrayc::normal({k, n}, 13, 0.0, 0.05, DType::Float32, d)),
        b_(arrayc::normal({n}, 14, 0.0, 1.0, DType::Float32, d)), m_(m), k_(k), n_(n), rows_(rows), host_(host) {
    arrayc::eval({x_, w_, b_});
    if (host_) {
      xh_ = x_.to_vector<float>();
      wh_ = w_.to_vector<float>();
      bh_ = b_.to_vector<float>();
      yh_.assign(static_cast<size_t>(m_ * n_), 0.0f);
    }
  }
  static Array layer(const Array& x, const Array& w, const Array& b) { return arrayc::maximum(arrayc::dot(x, w) + b, 0.0); }
  std::function<Array()> make_arrayc() override { return jit_runner(&Layer::layer, x_, w_, b_); }
  std::function<void()> make_baseline(const std::string& variant) override {
    if (!host_ || variant != "baseline") return nullptr;
    return [this] {
      baseline::gemm(xh_.data(), wh_.data(), yh_.data(), m_, n_, k_, false);
      for (int64_t i = 0; i < m_; ++i)
        for (int64_t j = 0; j < n_; ++j) yh_[i * n_ + j] = std::max(yh_[i * n_ + j] + bh_[j], 0.0f);
    };
  }
  Values baseline_values() override { return {to_double(yh_), {m_, n_}}; }
  Reference reference() override {
    Array xs = x_;
    std::vector<int64_t> idx;  // all of the output
    std::string note = fmt("interpreter on all %lld x %lld elements", static_cast<long long>(m_), static_cast<long long>(n_));
    if (rows_ < m_) {
      std::vector<float> all = host_ ? std::vector<float>() : x_.to_vector<float>();
      const std::vector<float>& src = host_ ? xh_ : all;
      std::vector<int64_t> rows = sample_indices(m_, rows_);
      std::vector<float> sub;
      for (int64_t r : rows) {
        sub.insert(sub.end(), src.begin() + r * k_, src.begin() + (r + 1) * k_);
        for (int64_t j = 0; j < n_; ++j) idx.push_back(r * n_ + j);
      }
      xs = arrayc::array(sub, {static_cast<int64_t>(rows.size()), k_}, x_.device());
      note = fmt("interpreter on %zu sampled rows of %lld (all %lld columns)", rows.size(), static_cast<long long>(m_),
                 static_cast<long long>(n_));
    }
    Reference r = reference_from(interpret_with_bounds(layer(xs, w_, b_)), std::move(idx), note);
    // With TF32 allowed (ARRAYC_MATMUL_PRECISION=high), a GPU product may round each operand to
    // a 10-bit mantissa: each output then lies within (2^-10 + k 2^-23) (|x| . |w|) of the exact
    // product (docs/cuda.md, "Matmul precision"), and bias and relu do not widen that.
    if (arrayc::matmul_precision() == arrayc::MatmulPrecision::High && !is_cpu(x_.device())) {
      arrayc::detail::HostArray mag = interpret_with_bounds(arrayc::dot(arrayc::abs(xs), arrayc::abs(w_)));
      for (size_t i = 0; i < r.bound.size(); ++i) r.bound[i] += (0x1p-10 + static_cast<double>(k_) * 0x1p-23) * mag.f[i];
      r.note += "; TF32 products: bounds widened by (2^-10 + k 2^-23)(|x|.|w|)";
    }
    return r;
  }

 private:
  Array x_, w_, b_;
  int64_t m_, k_, n_, rows_;
  bool host_;
  std::vector<float> xh_, wh_, bh_, yh_;
};

// ---- W10 (issue 29): row softmax of a matrix, f32 -----------------------------------------------
// Fused, one row-chain kernel (max, sum and the division per row block); unfused, four kernels.
// The baseline is a C++ loop per row (three passes), on one thread.
class Softmax : public Instance {
 public:
  Softmax(int64_t rows, int64_t cols, arrayc::Device d, bool host)
      : x_(arrayc::normal({rows, cols}, 15, 0.0, 1.0, DType::Float32, d)), rows_(rows), cols_(cols), host_(host) {
    x_.eval();
    if (host_) {
      xh_ = x_.to_vector<float>();
      yh_.assign(xh_.size(), 0.0f);
    }
  }
  static Array softmax(const Array& x) {
    Array e = arrayc::exp(x - arrayc::max(x, {1}, true));
    return e / arrayc::sum(e, {1}, true);
  }
  std::function<Array()> make_arrayc() override { return jit_runner(&Softmax::softmax, x_); }
  std::function<void()> make_baseline(const std::string& variant) override {
    if (!host_ || variant != "baseline") return nullptr;
    return [this] {
      for (int64_t i = 0; i < rows_; ++i) {
        const float* x = xh_.data() + i * cols_;
        float* y = yh_.data() + i * cols_;
        float m = -INFINITY, s = 0.0f;
        for (int64_t j = 0; j < cols_; ++j) m = std::max(m, x[j]);
        for (int64_t j = 0; j < cols_; ++j) s += (y[j] = std::exp(x[j] - m));
        for (int64_t j = 0; j < cols_; ++j) y[j] /= s;
      }
    };
  }
  Values baseline_values() override { return {to_double(yh_), {rows_, cols_}}; }
  Reference reference() override {  // sampled rows, whole
    std::vector<float> all = host_ ? std::vector<float>() : x_.to_vector<float>();
    const std::vector<float>& src = host_ ? xh_ : all;
    std::vector<int64_t> rows = sample_indices(rows_, 64), idx;
    std::vector<float> sub;
    for (int64_t r : rows) {
      sub.insert(sub.end(), src.begin() + r * cols_, src.begin() + (r + 1) * cols_);
      for (int64_t j = 0; j < cols_; ++j) idx.push_back(r * cols_ + j);
    }
    Array xs = arrayc::array(sub, {static_cast<int64_t>(rows.size()), cols_}, arrayc::cpu());
    return reference_from(interpret_with_bounds(softmax(xs)), std::move(idx),
                          fmt("interpreter on %zu sampled rows of %lld (all %lld columns)", rows.size(),
                              static_cast<long long>(rows_), static_cast<long long>(cols_)));
  }

 private:
  Array x_;
  int64_t rows_, cols_;
  bool host_;
  std::vector<float> xh_, yh_;
};

// ---- W7: 1000 times M = A.A, read back sum(M*M) ----------------------------------------------

constexpr int kW7Iters = 1000;

Array w7_expr(const Array& a) {
  Array m = arrayc::dot(a, a);
  return arrayc::sum(m * m);
}

class W7 : public Instance {
 public:
  W7(Array a, bool host) : a_(std::move(a)), host_(host) {
    a_.eval();
    n_ = a_.shape()[0];
    if (host_) {
      ah_ = a_.to_vector<float>();
      mh_.assign(static_cast<size_t>(n_ * n_), 0.0f);
    }
    log_.assign(kW7Iters, 0.0f);
  }
  // Every iteration calls the jitted function and reads its value back to the host (item()).
  std::function<Array()> make_arrayc() override {
    auto j = std::make_shared<arrayc::Jitted<Unary>>(arrayc::jit(&w7_expr));
    Array a = a_;
    return [j, a] {
      std::vector<float> log(kW7Iters);
      for (int i = 0; i < kW7Iters; ++i) log[i] = (*j)(a).item<float>();
      return arrayc::array(log, {kW7Iters}, arrayc::cpu());
    };
  }
  std::function<void()> make_baseline(const std::string& variant) override {
    if (!host_ || variant != "baseline") return nullptr;
    return [this] { baseline::w7(ah_.data(), mh_.data(), log_.data(), n_, kW7Iters); };
  }
  Values baseline_values() override { return {to_double(log_), {kW7Iters}}; }
  Reference reference() override {
    arrayc::detail::HostArray h = interpret_with_bounds(w7_expr(a_));
    Reference r = reference_from(h, {0}, "");
    r.index.resize(kW7Iters);
    for (int i = 0; i < kW7Iters; ++i) r.index[i] = i;
    r.want.assign(kW7Iters, r.want[0]);
    r.bound.assign(kW7Iters, r.bound[0]);
    r.note = "interpreter on sum(dot(A,A)^2), the same for all 1000 logged values";
    return r;
  }

 private:
  Array a_;
  bool host_;
  int64_t n_ = 0;
  std::vector<float> ah_, mh_, log_;
};

// ---- G1: a gather of n random indices (indexing, docs/indexing.md) ------------------------------

class Gather : public Instance {
 public:
  Gather(Array x, Array i, bool host) : x_(std::move(x)), i_(std::move(i)), host_(host) {
    arrayc::eval({x_, i_});
    if (host_) {
      xh_ = x_.to_vector<float>();
      ih_ = i_.to_vector<int64_t>();
      yh_.assign(ih_.size(), 0.0f);
    }
  }
  std::function<Array()> make_arrayc() override {
    return jit_runner([](const Array& x, const Array& i) { return arrayc::take(x, i); }, x_, i_);
  }
  // y[k] = x[i[k]] on the pool (the indices are in range: no clamp).
  std::function<void()> make_baseline(const std::string& variant) override {
    if (!host_ || variant != "baseline") return nullptr;
    return [this] {
      const float* x = xh_.data();
      const int64_t* i = ih_.data();
      float* y = yh_.data();
      baseline::parallel(static_cast<int64_t>(ih_.size()), [=](int64_t b, int64_t e) {
        for (int64_t k = b; k < e; ++k) y[k] = x[i[k]];
      });
    };
  }
  Values baseline_values() override { return {to_double(yh_), i_.shape()}; }
  // The interpreter on a sample of the indices (the whole source).
  Reference reference() override {
    std::vector<int64_t> all = host_ ? std::vector<int64_t>() : i_.to_vector<int64_t>();
    const std::vector<int64_t>& src = host_ ? ih_ : all;
    std::vector<int64_t> idx = sample_indices(i_.size(), kSampleCount), is;
    for (int64_t k : idx) is.push_back(src[k]);
    Array sample = arrayc::array(is, arrayc::Shape{static_cast<int64_t>(is.size())}, arrayc::cpu());
    Array x = x_.device() == arrayc::cpu() ? x_ : x_.to(arrayc::cpu());
    return reference_from(interpret_with_bounds(arrayc::take(x, sample)), std::move(idx),
                          fmt("interpreter on %zu sampled indices (first and last 1024, the rest spread by a "
                              "fixed hash)", is.size()));
  }

 private:
  Array x_, i_;
  bool host_;
  std::vector<float> xh_, yh_;
  std::vector<int64_t> ih_;
};

// ---- S1: scatter-add of k updates into n (host scatter speed, docs/indexing.md) -------------------

class ScatterAdd : public Instance {
 public:
  ScatterAdd(Array x, Array i, Array v, bool host) : x_(std::move(x)), i_(std::move(i)), v_(std::move(v)), host_(host) {
    arrayc::eval({x_, i_, v_});
    if (host_) {
      xh_ = x_.to_vector<float>();
      ih_ = i_.to_vector<int64_t>();
      vh_ = v_.to_vector<float>();
      yh_.assign(xh_.size(), 0.0f);
    }
  }
  std::function<Array()> make_arrayc() override {
    return jit_runner([](const Array& x, const Array& i, const Array& v) { return x.at(i).add(v); }, x_, i_, v_);
  }
  // y = x (on the pool), then y[i[j]] += v[j] in order on one thread (numpy's np.add.at).
  std::function<void()> make_baseline(const std::string& variant) override {
    if (!host_ || variant != "baseline") return nullptr;
    return [this] {
      const float* x = xh_.data();
      float* y = yh_.data();
      baseline::parallel(static_cast<int64_t>(xh_.size()), [=](int64_t b, int64_t e) { std::copy(x + b, x + e, y + b); });
      for (size_t j = 0; j < ih_.size(); ++j) y[ih_[j]] += vh_[j];
    };
  }
  Values baseline_values() override { return {to_double(yh_), x_.shape()}; }
  // The interpreter on the whole scatter, compared at sampled positions.
  Reference reference() override {
    auto on_cpu = [](const Array& a) { return a.device() == arrayc::cpu() ? a : a.to(arrayc::cpu()); };
    arrayc::detail::HostArray all = interpret_with_bounds(on_cpu(x_).at(on_cpu(i_)).add(on_cpu(v_)));
    std::vector<int64_t> idx = sample_indices(x_.size(), kSampleCount);
    arrayc::detail::HostArray h = all;
    h.shape = {static_cast<int64_t>(idx.size())};
    h.f.clear();
    h.err.clear();
    for (int64_t k : idx) {
      h.f.push_back(all.f[k]);
      if (!all.err.empty()) h.err.push_back(all.err[k]);
    }
    return reference_from(h, std::move(idx), fmt("interpreter on all %lld updates, compared at %zu sampled elements",
                                                 static_cast<long long>(i_.size()), h.f.size()));
  }

 private:
  Array x_, i_, v_;
  bool host_;
  std::vector<float> xh_, vh_, yh_;
  std::vector<int64_t> ih_;
};

// ---- Scans and sorts (issue 28): cumsum of 1e8 and sort of 1e7 float32 --------------------------

Array cumsum_expr(const Array& x) { return arrayc::cumsum(x, 0); }
Array sort_expr(const Array& x) { return arrayc::sort(x, 0); }

// y = cumsum(x) or sort(x) of a float32 vector. The baseline is the plain C++ loop (numpy's
// algorithm: one sequential float sum) or std::sort; the reference is computed on the host in
// double (cumsum, with the Sum reduction's bound over each prefix) or by std::sort (exact), at
// sampled positions.
class AxisCase : public Instance {
 public:
  AxisCase(Array x, bool is_sort, bool host) : x_(std::move(x)), sort_(is_sort), host_(host) {
    x_.eval();
    if (host_) {
      xh_ = x_.to_vector<float>();
      yh_.assign(xh_.size(), 0.0f);
    }
  }
  std::function<Array()> make_arrayc() override { return jit_runner(sort_ ? &sort_expr : &cumsum_expr, x_); }
  std::function<void()> make_baseline(const std::string& variant) override {
    if (!host_ || variant != "baseline") return nullptr;
    if (sort_)
      return [this] {
        std::copy(xh_.begin(), xh_.end(), yh_.begin());
        std::sort(yh_.begin(), yh_.end());
      };
    return [this] {
      float acc = 0;
      for (size_t i = 0; i < xh_.size(); ++i) yh_[i] = acc += xh_[i];
    };
  }
  Values baseline_values() override { return {to_double(yh_), x_.shape()}; }
  Reference reference() override {
    std::vector<float> all = host_ ? std::vector<float>() : x_.to_vector<float>();
    const std::vector<float>& src = host_ ? xh_ : all;
    int64_t n = static_cast<int64_t>(src.size());
    Reference r;
    r.index = sample_indices(n, kSampleCount);
    if (sort_) {
      std::vector<float> s = src;
      std::sort(s.begin(), s.end());
      for (int64_t i : r.index) {
        r.want.push_back(s[i]);
        r.bound.push_back(0);
      }
      r.note = fmt("std::sort on the host, %zu sampled positions", r.index.size());
      return r;
    }
    double acc = 0, sq = 0;
    size_t next = 0;
    const double eps = std::ldexp(1.0, -23);
    for (int64_t i = 0; i < n && next < r.index.size(); ++i) {
      acc += src[i];
      sq += static_cast<double>(src[i]) * src[i];
      if (r.index[next] != i) continue;
      r.want.push_back(acc);
      // As the interpreter bounds a Sum: 2 eps sqrt(n) (sqrt(sum x^2) + |sum|), plus 2 ulps.
      r.bound.push_back(2 * eps * std::sqrt(double(i + 1)) * (std::sqrt(sq) + std::fabs(acc)) + 2 * eps * std::fabs(acc));
      ++next;
    }
    r.note = fmt("prefix sums in double on the host, %zu sampled positions", r.index.size());
    return r;
  }

 private:
  Array x_;
  bool sort_, host_;
  std::vector<float> xh_, yh_;
};

Case axis_case(const char* w, const char* expr, int64_t n, const char* size, bool is_sort, uint64_t seed) {
  Case c;
  c.workload = w;
  c.id = fmt("%s-f32-%s", w, size);
  c.expr = expr;
  c.size = size;
  c.dtype = DType::Float32;
  c.bound = Bound::Memory;
  c.bytes = 2.0 * static_cast<double>(n) * sizeof(float);  // x read, y written
  c.fvu_ulps = 4;
  c.baseline_impl = is_sort ? "std::sort" : "C++ loop (sequential float sum)";
  c.prepare = [=](arrayc::Device d, bool h) -> std::unique_ptr<Instance> {
    return std::make_unique<AxisCase>(arrayc::normal({n}, seed, 0.0, 1.0, DType::Float32, d), is_sort, is_cpu(d) && h);
  };
  return c;
}

// ---- Float sums (issue 26): sum of 1e8 float32, whole or down the columns of [10000, 10000] ------
// What accumulating GPU float sums in double costs. Reference: the sums in double on the host,
// within the 1e-6 relative bound the tests hold sums to.

Array sum_all_expr(const Array& x) { return arrayc::sum(x); }
Array sum_cols_expr(const Array& x) { return arrayc::sum(x, {0}); }

class SumCase : public Instance {
 public:
  SumCase(Array x, bool cols) : x_(std::move(x)), cols_(cols) { x_.eval(); }
  std::function<Array()> make_arrayc() override { return jit_runner(cols_ ? &sum_cols_expr : &sum_all_expr, x_); }
  std::function<void()> make_baseline(const std::string&) override { return nullptr; }
  Values baseline_values() override { return {}; }
  Reference reference() override {
    std::vector<float> h = x_.to_vector<float>();
    int64_t outs = cols_ ? x_.shape()[1] : 1;
    std::vector<double> sum(static_cast<size_t>(outs), 0.0), mag(static_cast<size_t>(outs), 0.0);
    for (size_t i = 0; i < h.size(); ++i) {
      sum[i % outs] += h[i];
      mag[i % outs] += std::fabs(h[i]);
    }
    Reference r;
    for (int64_t j = 0; j < outs; ++j) {
      r.index.push_back(j);
      r.want.push_back(sum[j]);
      r.bound.push_back(1e-6 * mag[j]);
    }
    r.note = "sums in double on the host, within 1e-6 of the sum of |x|";
    return r;
  }

 private:
  Array x_;
  bool cols_;
};

Case sum_case(const char* w, const char* expr, const arrayc::Shape& shape, bool cols) {
  Case c;
  c.workload = w;
  c.id = fmt("%s-f32-1e8", w);
  c.expr = expr;
  c.size = "1e8";
  c.dtype = DType::Float32;
  c.bound = Bound::Memory;
  c.bytes = 4.0 * static_cast<double>(arrayc::shape_numel(shape));  // x read
  c.fvu_ulps = 4;
  c.prepare = [=](arrayc::Device d, bool) -> std::unique_ptr<Instance> {
    return std::make_unique<SumCase>(arrayc::uniform(shape, 14, 0.0, 1.0, DType::Float32, d), cols);
  };
  return c;
}

// ---- The table ---------------------------------------------------------------------------------


enum class Mode { Both, FullOnly, QuickOnly };

struct CaseDef {
  Case c;
  Mode mode;
};

Array arange_input(int64_t n, DType t, arrayc::Device d) {
  return arrayc::arange(0.0, static_cast<double>(n), 1.0, t, d);
}
Array normal_input_w2(int64_t n, DType t, arrayc::Device d) { return arrayc::normal({n}, 42, 0.0, 1.0, t, d); }
Array normal_input_w8(int64_t n, DType t, arrayc::Device d) { return arrayc::normal({n}, 8, 0.0, 1.0, t, d); }

template <typename T>
Case elementwise(const char* w, const char* expr, int64_t n, const char* size, double fvu_ulps, Unary f,
                 UnaryBaseline<T> base, UnaryBaseline<T> vec, Array (*input)(int64_t, DType, arrayc::Device)) {
  constexpr DType t = arrayc::dtype_of<T>();
  Case c;
  c.workload = w;
  c.id = fmt("%s-%s-%s", w, t == DType::Float16 ? "f16" : t == DType::Float32 ? "f32" : "f64", size);
  c.expr = expr;
  c.size = size;
  c.dtype = t;
  c.bound = Bound::Memory;
  c.bytes = 2.0 * static_cast<double>(n) * sizeof(T);  // x read, y written
  c.fvu_ulps = fvu_ulps;
  if (base) c.baseline_impl = "C++ loop -O3 -march=native";
  if (vec && baseline::libmvec::available()) c.libmvec_impl = "C++ loop + glibc libmvec";
  c.prepare = [=](arrayc::Device d, bool h) -> std::unique_ptr<Instance> {
    return std::make_unique<Elementwise<T>>(input(n, t, d), f, base, vec, is_cpu(d) && h);
  };
  return c;
}

Case product_case(const char* w, const char* id_size, const char* expr, DType t, double flops,
                  double bytes, double fvu_ulps, std::function<std::unique_ptr<Instance>(arrayc::Device, bool)> prep) {
  Case c;
  c.workload = w;
  c.id = fmt("%s-%s", w, t == DType::Float32 ? "f32" : "f64");
  c.expr = expr;
  c.size = id_size;
  c.dtype = t;
  c.bound = Bound::Compute;
  c.flops = flops;
  c.bytes = bytes;
  c.fvu_ulps = fvu_ulps;
  c.baseline_impl = "OpenBLAS";
  c.prepare = std::move(prep);
  return c;
}

// ---- transforms: W6 written per vector with vmap; W11, one training step of an MLP ------------

// W6 as `vmap(M @ v)` over the vectors: batched by the transformation into one product, to set
// beside the hand-batched row (same inputs, same reference).
class VmapMatvec : public Product<float> {
 public:
  VmapMatvec(Array vs, Array m, bool host) : Product<float>(vs, m, true, false, 1 << 30, host), vs_(vs), mat_(m) {}
  std::function<Array()> make_arrayc() override {
    auto mv = [](const Array& m, const Array& v) { return arrayc::matmul(m, v); };
    return jit_runner(arrayc::vmap(mv, {arrayc::not_mapped, 0}), mat_, vs_);
  }

 private:
  Array vs_, mat_;
};

// W11: one SGD step of examples/mlp.h at batch 256 (forward, backward, update), one jitted call.
// The checked output is the loss (the interpreter's error bounds cannot follow the gradient's
// tie tests, x == max(x), through; tests/e2e/transforms*_test.cpp check the gradients); the
// updated parameters are computed by the same program but not fed back, so every call is the
// same step.
class MlpStep : public Instance {
 public:
  explicit MlpStep(arrayc::Device d) : p_(mlp::init(1, d)) {
    std::tie(x_, y_) = mlp::data(256, 7, d);
    arrayc::eval(p_);
  }
  std::function<Array()> make_arrayc() override {
    auto j = std::make_shared<decltype(arrayc::jit(mlp::sgd_step))>(arrayc::jit(mlp::sgd_step));
    return [this, j] { return (*j)(p_[0], p_[1], p_[2], p_[3], x_, y_).at(0); };
  }
  std::function<void()> make_baseline(const std::string&) override { return nullptr; }
  Values baseline_values() override { return {}; }
  Reference reference() override {
    return reference_from(interpret_with_bounds(mlp::loss(p_[0], p_[1], p_[2], p_[3], x_, y_)), {},
                          "interpreter on the loss of the step");
  }

 private:
  std::vector<Array> p_;
  Array x_, y_;
};

void add_transform_cases(std::vector<CaseDef>& v) {
  Case w6 = product_case("W6", "[10,100] . transpose([150,100])",
                         "vmap(M @ v) over 10 vectors of 100, M 150x100: batched by the transformation",
                         DType::Float32, 2.0 * 10 * 150 * 100, 4.0 * (10 * 100 + 150 * 100 + 10 * 150), 4 * 10,
                         [](arrayc::Device d, bool h) -> std::unique_ptr<Instance> {
                           return std::make_unique<VmapMatvec>(arrayc::normal({10, 100}, 9, 0.0, 1.0, DType::Float32, d),
                                                               arrayc::normal({150, 100}, 10, 0.0, 1.0, DType::Float32, d),
                                                               is_cpu(d) && h);
                         });
  w6.id = "W6-vmap-f32";
  v.push_back({w6, Mode::Both});
  const double mlp_flops = 3 * 2.0 * 256 * (784 * 256 + 256 * 10);  // forward and two backward products
  const double mlp_bytes = 4.0 * (3 * (784 * 256 + 256 + 256 * 10 + 10) + 256 * 784 + 256 * 10);
  Case w11 = product_case("W11", "batch 256", "one SGD step of a 784-256-10 MLP, softmax cross-entropy: forward, backward, update",
                          DType::Float32, mlp_flops, mlp_bytes, 1 << 12,
                          [](arrayc::Device d, bool) -> std::unique_ptr<Instance> { return std::make_unique<MlpStep>(d); });
  w11.baseline_impl.clear();
  v.push_back({w11, Mode::Both});
}

std::vector<CaseDef> make_cases() {
  using arrayc::Device;
  const char* w1 = "cos(x)**2 + sin(x)**2, x = arange(n)";
  const char* w2 = "1.05 * where(x > 0, x, 1.67*exp(x) - 1.67), x ~ normal(0,1)";
  const char* w8 = "where(x > 0, x*1.5 + 0.25, exp(x) - 1) * cos(x) + sin(x)*0.5, x ~ normal(0,1)";
  auto w1b32 = static_cast<UnaryBaseline<float>>(&baseline::w1);
  auto w1b64 = static_cast<UnaryBaseline<double>>(&baseline::w1);
  auto w1v32 = static_cast<UnaryBaseline<float>>(&baseline::libmvec::w1);
  auto w1v64 = static_cast<UnaryBaseline<double>>(&baseline::libmvec::w1);
  std::vector<CaseDef> v;
  v.push_back({elementwise<float>("W1", w1, 10'000'000, "1e7", 32, &w1_expr, w1b32, w1v32, &arange_input), Mode::Both});
  v.push_back({elementwise<double>("W1", w1, 10'000'000, "1e7", 32, &w1_expr, w1b64, w1v64, &arange_input), Mode::Both});
  v.push_back({elementwise<float>("W1", w1, 100'000'000, "1e8", 32, &w1_expr, w1b32, w1v32, &arange_input), Mode::FullOnly});
  v.push_back({elementwise<double>("W1", w1, 100'000'000, "1e8", 32, &w1_expr, w1b64, w1v64, &arange_input), Mode::FullOnly});
  v.push_back({elementwise<float>("W2", w2, 1'000'000, "1e6", 16, &w2_expr, &baseline::w2, &baseline::libmvec::w2, &normal_input_w2), Mode::Both});
  // W2 on one element: what a cached jit call costs beyond its work (dispatch overhead).
  v.push_back({elementwise<float>("W2", w2, 1, "1", 16, &w2_expr, &baseline::w2, &baseline::libmvec::w2, &normal_input_w2), Mode::Both});

  // W3: (10000x784) . (784x10) f32
  v.push_back({product_case("W3", "10000x784 . 784x10", "dot(a, w), a ~ uniform(0,1), w ~ normal(0,1)",
                            DType::Float32, 2.0 * 10000 * 784 * 10, 4.0 * (10000 * 784 + 784 * 10 + 10000 * 10),
                            4 * 28, [](Device d, bool h) -> std::unique_ptr<Instance> {
                              return std::make_unique<Product<float>>(
                                  arrayc::uniform({10000, 784}, 3, 0.0, 1.0, DType::Float32, d),
                                  arrayc::normal({784, 10}, 4, 0.0, 1.0, DType::Float32, d), false, false,
                                  1 << 30, is_cpu(d) && h);
                            }),
               Mode::Both});
  // W4: 1000^3 f64
  v.push_back({product_case("W4", "1000x1000 . 1000x1000", "dot(a, b), a, b ~ uniform(0,1)", DType::Float64,
                            2.0 * 1000 * 1000 * 1000, 8.0 * 3 * 1000 * 1000, 4 * 32,
                            [](Device d, bool h) -> std::unique_ptr<Instance> {
                              return std::make_unique<Product<double>>(
                                  arrayc::uniform({1000, 1000}, 5, 0.0, 1.0, DType::Float64, d),
                                  arrayc::uniform({1000, 1000}, 6, 0.0, 1.0, DType::Float64, d), false, false,
                                  64, is_cpu(d) && h);
                            }),
               Mode::Both});
  // W5: dot(x, transpose(x)) 3000^2 f32
  v.push_back({product_case("W5", "3000x3000 . transpose", "dot(x, transpose(x)), x ~ normal(0,1)",
                            DType::Float32, 2.0 * 3000 * 3000 * 3000, 4.0 * 2 * 3000 * 3000, 4 * 55,
                            [](Device d, bool h) -> std::unique_ptr<Instance> {
                              Array x = arrayc::normal({3000, 3000}, 7, 0.0, 1.0, DType::Float32, d);
                              return std::make_unique<Product<float>>(x, x, true, true, 8, is_cpu(d) && h);
                            }),
               Mode::Both});
  // W6: 10 vectors of 100 times a 150x100 matrix, batched as matmul(V, transpose(M)) -> [10, 150]
  v.push_back({product_case("W6", "[10,100] . transpose([150,100])",
                            "matmul(V, transpose(M)): 10 vectors of 100 times M 150x100 in one call",
                            DType::Float32, 2.0 * 10 * 150 * 100, 4.0 * (10 * 100 + 150 * 100 + 10 * 150), 4 * 10,
                            [](Device d, bool h) -> std::unique_ptr<Instance> {
                              return std::make_unique<Product<float>>(
                                  arrayc::normal({10, 100}, 9, 0.0, 1.0, DType::Float32, d),
                                  arrayc::normal({150, 100}, 10, 0.0, 1.0, DType::Float32, d), true, false,
                                  1 << 30, is_cpu(d) && h);
                            }),
               Mode::Both});
  // W7: 1000 x (M = A.A; read back sum(M*M)), A 100x100 f32
  {
    Case c = product_case("W7", "1000 x 100x100 . 100x100", "1000 times: M = dot(A, A); read back sum(M*M)",
                          DType::Float32, kW7Iters * (2.0 * 100 * 100 * 100 + 2.0 * 100 * 100),
                          kW7Iters * 4.0 * (2 * 100 * 100 + 1), 4 * 100,
                          [](Device d, bool h) -> std::unique_ptr<Instance> {
                            return std::make_unique<W7>(arrayc::normal({100, 100}, 11, 0.0, 1.0, DType::Float32, d),
                                                        is_cpu(d) && h);
                          });
    c.baseline_impl = "OpenBLAS + C++ loop";
    v.push_back({c, Mode::Both});
  }
  // W9 (issue 29): relu(x . w + b), 256x784 . 784x256 f32, and 4096^3 (not under --quick; its
  // reference interprets 8 sampled rows)
  {
    Case c = product_case("W9", "256x784 . 784x256 + b", "maximum(dot(x, w) + b, 0), x ~ uniform(-1,1), w ~ normal(0,0.05)",
                          DType::Float32, 2.0 * 256 * 784 * 256 + 2.0 * 256 * 256,
                          4.0 * (256 * 784 + 784 * 256 + 256 + 256 * 256), 4 * 28,
                          [](Device d, bool h) -> std::unique_ptr<Instance> {
                            return std::make_unique<Layer>(256, 784, 256, 256, d, is_cpu(d) && h);
                          });
    c.baseline_impl = "OpenBLAS + C++ loop";
    c.peer_size = "256";
    v.push_back({c, Mode::Both});
    constexpr double n = 4096;
    Case big = product_case("W9", "4096x4096 . 4096x4096 + b", c.expr.c_str(), DType::Float32, 2.0 * n * n * n + 2.0 * n * n,
                            4.0 * (3 * n * n + n), 4 * 64, [](Device d, bool h) -> std::unique_ptr<Instance> {
                              return std::make_unique<Layer>(4096, 4096, 4096, 8, d, is_cpu(d) && h);
                            });
    big.id = "W9-f32-4096";
    big.baseline_impl = c.baseline_impl;
    big.peer_size = "4096^3";
    v.push_back({big, Mode::FullOnly});
  }
  // W10 (issue 29): row softmax of 4096 x 4096 f32 (1024 x 4096 quick); memory-bound: x read,
  // y written once.
  for (auto [rows, size, mode] : {std::tuple{int64_t{4096}, "4096x4096", Mode::FullOnly},
                                  std::tuple{int64_t{1024}, "1024x4096", Mode::QuickOnly}}) {
    Case c;
    c.workload = "W10";
    c.id = fmt("W10-f32-%s", size);
    c.expr = "softmax along rows: e = exp(x - max(x, 1, keepdims)); e / sum(e, 1, keepdims), x ~ normal(0,1)";
    c.size = size;
    c.dtype = DType::Float32;
    c.bound = Bound::Memory;
    c.bytes = 2.0 * 4 * rows * 4096;
    c.fvu_ulps = 8;
    c.baseline_impl = "C++ loop -O3 -march=native, one thread";
    c.peer_size = rows == 4096 ? "4096^2" : "1024x4096";
    c.prepare = [rows = rows](arrayc::Device d, bool h) -> std::unique_ptr<Instance> {
      return std::make_unique<Softmax>(rows, 4096, d, h && is_cpu(d));
    };
    v.push_back({c, mode});
  }
  v.push_back({elementwise<float>("W8", w8, 100'000'000, "1e8", 64, &w8_expr, &baseline::w8, &baseline::libmvec::w8, &normal_input_w8),
               Mode::FullOnly});
  v.push_back({elementwise<float>("W8", w8, 10'000'000, "1e7", 64, &w8_expr, &baseline::w8, &baseline::libmvec::w8, &normal_input_w8),
               Mode::QuickOnly});
  // G1: gather (indexing): take(x, i), x float32 of n, i int64 of n uniform in [0, n).
  for (auto [n, size, mode] : {std::tuple{int64_t{10'000'000}, "1e7", Mode::Both}}) {
    Case c;
    c.workload = "G1";
    c.id = fmt("G1-f32-%s", size);
    c.expr = "take(x, i), x ~ normal(0,1) float32, i int64 uniform in [0, n)";
    c.size = size;
    c.dtype = DType::Float32;
    c.bound = Bound::Memory;
    c.bytes = static_cast<double>(n) * (4 + 8 + 4);  // x read once, i read, y written
    c.fvu_ulps = 0;
    c.baseline_impl = "C++ loop -O3 -march=native";
    c.prepare = [n = n](arrayc::Device d, bool h) -> std::unique_ptr<Instance> {
      Array x = arrayc::normal({n}, 5, 0.0, 1.0, DType::Float32, d);
      Array i = arrayc::cast(arrayc::uniform({n}, 6, 0.0, static_cast<double>(n), DType::Float64, d), DType::Int64);
      return std::make_unique<Gather>(x, i, is_cpu(d) && h);
    };
    v.push_back({c, mode});
  }
  // S1: scatter-add (host scatter speed): x.at(i).add(v), x float32 of 1e7, i int64 of 1e6
  // uniform in [0, n) (duplicates accumulate), v float32 of 1e6. S2 (GPU scatter): the same with
  // 1e7 updates.
  for (int64_t k : {int64_t{1'000'000}, int64_t{10'000'000}}) {
    const int64_t n = 10'000'000;
    const bool s2 = k == n;
    Case c;
    c.workload = s2 ? "S2" : "S1";
    c.id = s2 ? "S2-f32-1e7" : "S1-f32-1e7";
    c.expr = fmt("x.at(i).add(v), x float32 of 1e7, i int64 of %s uniform in [0, n), v float32 of %s", s2 ? "1e7" : "1e6",
                 s2 ? "1e7" : "1e6");
    c.size = "1e7";
    c.dtype = DType::Float32;
    c.bound = Bound::Memory;
    // x read and y written once; per update its index and value read, and y's element read and written.
    c.bytes = static_cast<double>(n) * (4 + 4) + static_cast<double>(k) * (8 + 4 + 4 + 4);
    c.fvu_ulps = 4;  // a GPU adds a row's updates with atomics, in no set order
    c.baseline_impl = "C++ copy on the pool + one-thread update loop (np.add.at's order)";
    c.prepare = [n, k](arrayc::Device d, bool h) -> std::unique_ptr<Instance> {
      Array x = arrayc::normal({n}, 7, 0.0, 1.0, DType::Float32, d);
      Array i = arrayc::cast(arrayc::uniform({k}, 8, 0.0, static_cast<double>(n), DType::Float64, d), DType::Int64);
      Array v = arrayc::normal({k}, 9, 0.0, 1.0, DType::Float32, d);
      return std::make_unique<ScatterAdd>(x, i, v, is_cpu(d) && h);
    };
    v.push_back({c, Mode::Both});
  }
  add_transform_cases(v);  // transforms: W6 with vmap, W11
  // Issue 28: scans and sorts.
  v.push_back({axis_case("cumsum", "cumsum(x), x ~ normal(0,1)", 100'000'000, "1e8", false, 12), Mode::FullOnly});
  v.push_back({axis_case("cumsum", "cumsum(x), x ~ normal(0,1)", 10'000'000, "1e7", false, 12), Mode::QuickOnly});
  v.push_back({axis_case("sort", "sort(x), x ~ normal(0,1)", 10'000'000, "1e7", true, 13), Mode::Both});
  // Issue 26: float sums (the GPU accumulates them in double).
  v.push_back({sum_case("sum", "sum(x), x ~ uniform(0,1) of 1e8", {100'000'000}, false), Mode::FullOnly});
  v.push_back({sum_case("sumcols", "sum(m, 0), m ~ uniform(0,1) of [10000, 10000]", {10'000, 10'000}, true), Mode::FullOnly});
  // W8 in float16 (dtypes): half the bytes of float32's row, computed in float32 per op and
  // rounded to float16 (numpy's rule); no hand-written baseline.
  v.push_back({elementwise<arrayc::float16>("W8", w8, 100'000'000, "1e8", 64, &w8_expr, nullptr, nullptr, &normal_input_w8),
               Mode::FullOnly});
  v.push_back({elementwise<arrayc::float16>("W8", w8, 10'000'000, "1e7", 64, &w8_expr, nullptr, nullptr, &normal_input_w8),
               Mode::QuickOnly});
  return v;
}

const std::vector<CaseDef>& case_defs() {
  static const std::vector<CaseDef> defs = make_cases();
  return defs;
}

}  // namespace

const std::vector<Case>& all_cases() {
  static const std::vector<Case> cases = [] {
    std::vector<Case> v;
    for (const CaseDef& d : case_defs()) {
      Case c = d.c;
      c.in_quick = d.mode != Mode::FullOnly;
      c.in_full = d.mode != Mode::QuickOnly;
      v.push_back(c);
    }
    return v;
  }();
  return cases;
}

bool runs_variant(const Case& c, const std::string& variant, const std::string& device) {
  if (variant == "libmvec") return !c.libmvec_impl.empty() && device == "cpu";
  if (variant == "copy" || variant == "copy-nt")
    return c.bound == Bound::Memory && device == "cpu" && c.bytes >= kCopyVariantBytes;
  return true;
}

std::string impl_of(const Case& c, const std::string& variant) {
  if (variant == "baseline") return c.baseline_impl;
  if (variant == "libmvec") return c.libmvec_impl;
  if (variant == "copy") return "copy, plain stores";
  if (variant == "copy-nt") return "copy, non-temporal stores";
  return "arrayc";
}

const Case* find_case(const std::string& id) {
  for (const Case& c : all_cases())
    if (c.id == id) return &c;
  return nullptr;
}

bool break_requested(const Case& c) {
  const char* env = std::getenv("ARRAYC_BENCH_BREAK");
  if (env == nullptr || *env == '\0') return false;
  std::string list = std::string(",") + env + ",";
  return list.find("," + c.workload + ",") != std::string::npos ||
         list.find("," + c.id + ",") != std::string::npos;
}

}  // namespace bench
