#include "backend/cuda/axis_launch.h"

#include <algorithm>
#include <bit>
#include <functional>
#include <utility>

#include <chrono>
#include <cstdio>

#include "arrayc/error.h"
#include "support/env.h"
#include "support/stats.h"

namespace arrayc::detail {

SortTune parse_sort_tune(const std::string& s) {
  SortTune t;
  if (s.empty()) return t;
  auto number = [](const std::string& x) {
    int n = x.empty() ? 1000 : 0;
    for (char c : x) n = c >= '0' && c <= '9' && n < 100 ? n * 10 + (c - '0') : 1000;
    return n;
  };
  std::vector<std::string> parts;
  for (size_t b = 0, e; b <= s.size(); b = e + 1) {
    e = std::min(s.find('/', b), s.size());
    parts.push_back(s.substr(b, e - b));
  }
  bool ok = parts.size() >= 2 && (parts[0] == "match" || parts[0] == "ballot");
  if (ok) {
    t.ballot = parts[0] == "ballot";
    t.items = number(parts[1]);
    ok = t.items >= 1 && t.items <= 32;
  }
  t.min_blocks = 0;
  if (ok && parts.size() == 3) {
    t.min_blocks = parts[2].size() > 1 && parts[2][0] == 'b' ? number(parts[2].substr(1)) : 0;
    ok = t.min_blocks >= 1 && t.min_blocks <= 8;
  }
  if (!ok || parts.size() > 3)
    throw Error("ARRAYC_SORT_TUNE=" + s + ": expected RANK/ITEMS[/bN] with RANK match or ballot, ITEMS from 1 to 32 "
                "and N from 1 to 8, e.g. ballot/16/b3");
  return t;
}
namespace {

using Kind = AxisKernel::Kind;

// A [rows, n] view as the strided kernels take it (axis_kernels.h's integer arguments).
struct RowsView {
  int64_t n = 0, rows = 1, is = 1, os = 1;
  std::vector<int64_t> dims;  // (extent, in_stride, out_stride) per outer dim
  int rank() const { return 1 + static_cast<int>(dims.size() / 3); }
  std::vector<int64_t> ints(int64_t ntiles, int64_t has_carry) const {
    std::vector<int64_t> v = {n, rows, ntiles, has_carry, is, os};
    v.insert(v.end(), dims.begin(), dims.end());
    return v;
  }
};

RowsView step_view(const AxisStep& a) {
  RowsView v;
  size_t r = a.shape.size();
  v.n = a.shape.back();
  v.rows = v.n == 0 ? 0 : shape_numel(a.shape) / v.n;
  v.is = a.in_strides.back();
  v.os = a.out_strides.back();
  for (size_t d = 0; d + 1 < r; ++d) v.dims.insert(v.dims.end(), {a.shape[d], a.in_strides[d], a.out_strides[d]});
  return v;
}

RowsView contiguous_rows(int64_t rows, int64_t n) {
  RowsView v;
  v.n = n;
  v.rows = rows;
  v.dims = {rows, n, n};
  return v;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
unsigned grid_of(int64_t blocks, int64_t cap) { return static_cast<unsigned>(std::clamp<int64_t>(blocks, 1, cap)); }
constexpr int64_t kMaxGrid = 0x7fffffff;

void launch(int dev, const cuda::Function& f, unsigned grid, std::vector<void*> ptrs, std::vector<int64_t> ints) {
  std::vector<void*> args;
  for (void*& p : ptrs) args.push_back(&p);
  for (int64_t& i : ints) args.push_back(&i);
  cuda::launch(dev, f, grid, kAxisThreads, args.data());
}

// A scan as a list of launches over named buffers, decided from the shape when planned.
enum Buf : int { kNull = -1, kIn = -2, kOut = -3 };  // >= 0: scratch buffer i
struct ScanOp {
  const cuda::Function* fn;
  unsigned grid;
  int bufs[3];
  std::vector<int64_t> ints;
};
struct ScanPlan {
  std::vector<ScanOp> ops;
  std::vector<size_t> scratch;

  void run(int dev, void* in, void* out) const {
    std::vector<void*> s;
    for (size_t bytes : scratch) s.push_back(cuda::alloc(dev, bytes));
    auto ptr = [&](int b) -> void* { return b == kNull ? nullptr : b == kIn ? in : b == kOut ? out : s[b]; };
    for (const ScanOp& op : ops) launch(dev, *op.fn, op.grid, {ptr(op.bufs[0]), ptr(op.bufs[1]), ptr(op.bufs[2])}, op.ints);
    for (size_t i = 0; i < s.size(); ++i) cuda::free(dev, s[i], scratch[i]);  // reuse is ordered on the stream
  }
};

// Appends the launches of the scan of v from buffer `in` to `out` (axis_launch.h).
void plan_scan(ScanPlan& p, AxisKernel k, const RowsView& v, int in, int out, int sms, const AxisKernelLoader& load) {
  k.rank = v.rank();
  auto fn = [&](Kind kind) {
    k.kind = kind;
    return &load(k);
  };
  if (v.n <= kScanRowsMax) {
    p.ops.push_back({fn(Kind::ScanRows), grid_of(ceil_div(v.rows, kAxisThreads), 32 * int64_t{sms}), {in, out, kNull}, v.ints(0, 0)});
    return;
  }
  int64_t ntiles = ceil_div(v.n, kScanTile);
  unsigned grid = grid_of(v.rows * ntiles, kMaxGrid);
  if (ntiles == 1) {
    p.ops.push_back({fn(Kind::ScanTiles), grid, {in, out, kNull}, v.ints(1, 0)});
    return;
  }
  int totals = static_cast<int>(p.scratch.size());
  p.scratch.push_back(static_cast<size_t>(v.rows * ntiles) * dtype_size(k.dtype));
  p.ops.push_back({fn(Kind::ScanTotals), grid, {in, totals, kNull}, v.ints(ntiles, 0)});
  plan_scan(p, k, contiguous_rows(v.rows, ntiles), totals, totals, sms, load);
  p.ops.push_back({fn(Kind::ScanTiles), grid, {in, out, totals}, v.ints(ntiles, 1)});
}

class ScanLaunch final : public Launch {
 public:
  ScanLaunch(int dev, ScanPlan plan) : dev_(dev), plan_(std::move(plan)) {}
  void run(const std::vector<void*>& ptrs) const override {
    counters().kernel_launches++;
    plan_.run(dev_, ptrs[0], ptrs[1]);
  }

 private:
  int dev_;
  ScanPlan plan_;
};

// The number of r in [0, rows) whose 8 bits at `shift` are `bin`.
int64_t rows_with_digit(int64_t rows, int shift, int bin) {
  const int64_t block = int64_t{1} << shift;
  const int64_t period = block << 8, rem = rows % period;
  return rows / period * block + std::clamp<int64_t>(rem - bin * block, 0, block);
}

// The pass kernel's tuning (parse_sort_tune), read once. Items beyond what fits shared memory are
// cut to sort_items_max (12 where a value and its position take 12 bytes, 9 for 16).
const SortTune& sort_tune() {
  static const SortTune tune = parse_sort_tune(sort_tune_setting());
  return tune;
}

void choose_sort_pass(AxisKernel& k) {
  const SortTune& t = sort_tune();
  int fit = sort_items_max(k.dtype, k.payload);
  k.ballot = t.ballot;
  k.items = std::min(fit, t.items);
  k.min_blocks = t.min_blocks;
}

// ARRAYC_SORT_PROFILE=1: each kernel of a sort waited for and timed (wall, launch included),
// printed on stderr with its registers and shared memory.
void sort_launch(int dev, const cuda::Function& f, unsigned grid, std::vector<void*> ptrs, std::vector<int64_t> ints) {
  static const bool profile = sort_profile_setting();
  if (!profile) return launch(dev, f, grid, std::move(ptrs), std::move(ints));
  cuda::synchronize(dev);
  auto t0 = std::chrono::steady_clock::now();
  launch(dev, f, grid, std::move(ptrs), std::move(ints));
  cuda::synchronize(dev);
  double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(stderr, "sort profile: %-34s %9.1f us  grid %7u  %3d registers  %5d B shared  %d B local\n", f.name.c_str(), us,
               grid, f.registers, f.shared_bytes, f.local_bytes);
}

class SortLaunch final : public Launch {
 public:
  SortLaunch(int dev, const AxisStep& a, int sms, const AxisKernelLoader& load) : dev_(dev), a_(a), sms_(sms) {
    v_ = step_view(a);
    total_ = v_.rows * v_.n;
    arg_ = a.op == Op::Argsort;
    payload_ = arg_ || v_.rows > 1 ? (total_ <= (int64_t{1} << 32) ? 4 : 8) : 0;
    // Integer keys often share their high digits (small values): the histograms are read back to
    // skip those passes. Float keys rarely do, and their sort runs without a wait.
    read_back_ = !is_float(a.in_dtype) && a.in_dtype != DType::Bool;
    AxisKernel k;
    k.dtype = a.in_dtype;
    k.payload = payload_;
    k.rank = v_.rank();
    auto fn = [&](Kind kind) {
      k.kind = kind;
      return &load(k);
    };
    load_ = fn(Kind::SortLoad);
    hist_ = fn(Kind::SortHist);
    scan_ = fn(Kind::SortScan);
    choose_sort_pass(k);
    ntiles_ = ceil_div(total_, sort_tile(k));
    pass_ = fn(Kind::SortPass);
    k.argsort = arg_;
    store_ = fn(Kind::SortStore);
  }

  void run(const std::vector<void*>& ptrs) const override {
    counters().kernel_launches++;
    const int digits = sort_key_bytes(a_.in_dtype);
    const int row_passes = v_.rows > 1 ? (std::bit_width(static_cast<uint64_t>(v_.rows - 1)) + 7) / 8 : 0;
    const size_t vbytes = static_cast<size_t>(total_) * dtype_size(a_.in_dtype);
    const size_t pbytes = static_cast<size_t>(total_) * static_cast<size_t>(payload_);
    const size_t hbytes = static_cast<size_t>(256 * digits) * sizeof(int64_t);
    // Where each bin's run starts: per key digit (scanned on the device), then per row digit.
    const size_t obytes = static_cast<size_t>(256 * (digits + row_passes)) * sizeof(int64_t);
    // The look-back words, then a 32-bit tile counter per pass (at most 8 key and 8 row passes).
    const int64_t status_words = 256 * ntiles_ + 8;
    const size_t sbytes = static_cast<size_t>(status_words) * sizeof(int64_t);
    void* vals[2] = {cuda::alloc(dev_, vbytes), cuda::alloc(dev_, vbytes)};
    void* pay[2] = {cuda::alloc(dev_, pbytes), cuda::alloc(dev_, pbytes)};
    void* hist = cuda::alloc(dev_, hbytes);
    void* status = cuda::alloc(dev_, sbytes);
    auto* offs = static_cast<int64_t*>(cuda::alloc(dev_, obytes));
    cuda::zero(dev_, hist, hbytes);
    const unsigned flat = grid_of(ceil_div(total_, kAxisThreads), 32 * int64_t{sms_});
    // One contiguous row without positions is read in place, and its last pass writes the output.
    const bool in_place = payload_ == 0 && v_.is == 1, to_out = payload_ == 0 && v_.os == 1;
    const void* src = in_place ? ptrs[0] : vals[0];
    if (!in_place) sort_launch(dev_, *load_, flat, {ptrs[0], vals[0], pay[0]}, v_.ints(0, 0));
    sort_launch(dev_, *hist_, grid_of(ceil_div(total_, 4 * kAxisThreads), 8 * int64_t{sms_}),
                {const_cast<void*>(src), hist, status}, {total_, status_words});
    sort_launch(dev_, *scan_, 1, {hist, offs, nullptr}, {digits, 0});

    // The passes (shift, seg, offsets): key digits, less those every key shares where the
    // histograms are read back, then row digits (the rows' bins hold n elements per row).
    struct Pass {
      int64_t shift, seg;
      const int64_t* offsets;
    };
    std::vector<Pass> passes;
    std::vector<int64_t> h(static_cast<size_t>(256 * digits), 0);
    if (read_back_) cuda::copy_to_host(dev_, h.data(), hist, hbytes);  // waits
    for (int d = 0; d < digits; ++d) {
      bool shared = false;
      for (int b = 0; read_back_ && b < 256; ++b) shared |= h[static_cast<size_t>(256 * d + b)] == total_;
      if (!shared) passes.push_back({8 * d, 0, offs + 256 * d});
    }
    if (row_passes) {
      std::vector<int64_t> row_offsets;
      for (int s = 0; s < row_passes; ++s) {
        int64_t run = 0;
        for (int b = 0; b < 256; ++b) {
          row_offsets.push_back(run);
          run += v_.n * rows_with_digit(v_.rows, 8 * s, b);
        }
        passes.push_back({8 * s, 1, offs + 256 * (digits + s)});
      }
      // staged before it returns (pageable)
      cuda::copy_to_device(dev_, offs + 256 * digits, row_offsets.data(), row_offsets.size() * sizeof(int64_t));
    }
    int p = 0;  // pay[p] goes with src
    auto* ctr = static_cast<int32_t*>(status) + 2 * 256 * ntiles_;
    for (size_t i = 0; i < passes.size(); ++i) {
      const Pass& ps = passes[i];
      void* dst = i + 1 == passes.size() && to_out ? ptrs[1] : src == vals[1] ? vals[0] : vals[1];
      sort_launch(dev_, *pass_, grid_of(ntiles_, kMaxGrid),
                  {const_cast<void*>(src), pay[p], dst, pay[1 - p], status, const_cast<int64_t*>(ps.offsets), ctr + i},
                  {total_, ntiles_, ps.shift, ps.seg, v_.n, static_cast<int64_t>(i + 1)});
      src = dst;
      p = 1 - p;
    }
    if (src != ptrs[1]) sort_launch(dev_, *store_, flat, {const_cast<void*>(src), pay[p], ptrs[1]}, v_.ints(0, 0));
    for (int i = 0; i < 2; ++i) {
      cuda::free(dev_, vals[i], vbytes);
      cuda::free(dev_, pay[i], pbytes);
    }
    cuda::free(dev_, hist, hbytes);
    cuda::free(dev_, status, sbytes);
    cuda::free(dev_, offs, obytes);
  }

 private:
  int dev_;
  const AxisStep& a_;
  int sms_;
  RowsView v_;
  int64_t total_ = 0, ntiles_ = 0;
  bool arg_ = false, read_back_ = false;
  int payload_ = 0;
  const cuda::Function *load_, *hist_, *scan_, *pass_, *store_;
};

// A sparse scatter (x.at(indices).set/add; GPU scatter): x copied to the output, then (set) each
// row's last update marked, then a thread per updated element. ptrs: x, out, idx, v.
class ScatterLaunch final : public Launch {
 public:
  ScatterLaunch(int dev, const AxisStep& a, int sms, const AxisKernelLoader& load) : dev_(dev), sms_(sms) {
    const AxisStep::Operand &io = a.more.at(0), &vo = a.more.at(1);
    add_ = a.op == Op::ScatterAdd;
    // x as rows of its last dim (its shape and strides are in its own dim order, as the view
    // wants); the copy writes the contiguous output.
    RowsView x = step_view(a);
    const size_t r = a.shape.size();
    copy_ints_ = x.ints(0, 0);
    total_ = shape_numel(a.shape);
    n_ = a.shape[0];
    k_ = io.shape.at(0);
    row_ = n_ == 0 ? 0 : total_ / n_;
    apply_ints_ = {k_, n_, row_, io.strides.at(0), vo.strides.at(0)};
    for (size_t d = 1; d < vo.shape.size(); ++d) apply_ints_.insert(apply_ints_.end(), {vo.shape[d], vo.strides[d]});
    AxisKernel kc;
    kc.kind = Kind::ScatterCopy;
    kc.dtype = a.out_dtype;
    kc.rank = x.rank();
    copy_ = &load(kc);
    AxisKernel ka;
    ka.dtype = a.out_dtype;
    ka.rank = static_cast<int>(r);
    ka.add = add_;
    if (!add_) {
      ka.kind = Kind::ScatterMark;
      AxisKernel km = ka;
      km.rank = 1;
      mark_ = &load(km);
    }
    ka.kind = Kind::ScatterApply;
    apply_ = &load(ka);
  }

  void run(const std::vector<void*>& ptrs) const override {
    counters().kernel_launches++;
    auto grid = [&](int64_t work) { return grid_of(ceil_div(work, kAxisThreads), 32 * int64_t{sms_}); };
    launch(dev_, *copy_, grid(total_), {ptrs[0], ptrs[1], nullptr}, copy_ints_);
    if (k_ == 0 || row_ == 0) return;
    const size_t wbytes = add_ ? 0 : static_cast<size_t>(n_) * sizeof(int64_t);
    void* winner = cuda::alloc(dev_, wbytes);
    if (!add_) {
      cuda::zero(dev_, winner, wbytes);
      launch(dev_, *mark_, grid(k_), {ptrs[1], ptrs[2], ptrs[3], winner}, {k_, n_, row_, apply_ints_[3], apply_ints_[4]});
    }
    launch(dev_, *apply_, grid(k_ * row_), {ptrs[1], ptrs[2], ptrs[3], winner}, apply_ints_);
    cuda::free(dev_, winner, wbytes);
  }

 private:
  int dev_, sms_;
  bool add_ = false;
  int64_t total_ = 0, n_ = 0, k_ = 0, row_ = 0;
  std::vector<int64_t> copy_ints_, apply_ints_;
  const cuda::Function *copy_ = nullptr, *mark_ = nullptr, *apply_ = nullptr;
};

}  // namespace

std::unique_ptr<Launch> plan_gpu_axis(int dev, const AxisStep& a, int multiprocessors, const AxisKernelLoader& load) {
  if (shape_numel(a.shape) == 0) return nullptr;
  if (!a.more.empty()) return std::make_unique<ScatterLaunch>(dev, a, multiprocessors, load);  // x.at(indices)
  if (a.op == Op::Sort || a.op == Op::Argsort) return std::make_unique<SortLaunch>(dev, a, multiprocessors, load);
  AxisKernel k;
  k.dtype = is_float(a.in_dtype) ? a.in_dtype : DType::UInt64;  // integers wrap: the same bits
  k.product = a.op == Op::Cumprod;
  ScanPlan p;
  plan_scan(p, k, step_view(a), kIn, kOut, multiprocessors, load);
  return std::make_unique<ScanLaunch>(dev, std::move(p));
}

std::vector<AxisKernel> gpu_axis_kernels(const AxisStep& a) {
  std::vector<AxisKernel> ks;
  static const cuda::Function none;
  plan_gpu_axis(0, a, 132, [&](const AxisKernel& k) -> const cuda::Function& {
    if (std::none_of(ks.begin(), ks.end(), [&](const AxisKernel& o) { return o.name() == k.name(); })) ks.push_back(k);
    return none;
  });
  return ks;
}

}  // namespace arrayc::detail
