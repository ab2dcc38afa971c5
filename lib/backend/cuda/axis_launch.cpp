#include "backend/cuda/axis_launch.h"

#include <algorithm>
#include <bit>
#include <functional>
#include <utility>

#include "support/stats.h"

namespace arrayc::detail {
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

class SortLaunch final : public Launch {
 public:
  SortLaunch(int dev, const AxisStep& a, int sms, const AxisKernelLoader& load) : dev_(dev), a_(a), sms_(sms) {
    v_ = step_view(a);
    total_ = v_.rows * v_.n;
    arg_ = a.op == Op::Argsort;
    payload_ = arg_ || v_.rows > 1 ? (total_ <= (int64_t{1} << 32) ? 4 : 8) : 0;
    ntiles_ = ceil_div(total_, sort_tile(a.in_dtype, payload_));
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
    pass_ = fn(Kind::SortPass);
    k.argsort = arg_;
    store_ = fn(Kind::SortStore);
  }

  void run(const std::vector<void*>& ptrs) const override {
    counters().kernel_launches++;
    const int digits = sort_key_bytes(a_.in_dtype);
    const size_t vbytes = static_cast<size_t>(total_) * dtype_size(a_.in_dtype);
    const size_t pbytes = static_cast<size_t>(total_) * static_cast<size_t>(payload_);
    const size_t hbytes = static_cast<size_t>(256 * digits) * sizeof(int64_t);
    // The look-back words, then a 32-bit tile counter per pass (at most 8 key and 8 row passes).
    const int64_t status_words = 256 * ntiles_ + 8;
    const size_t sbytes = static_cast<size_t>(status_words) * sizeof(int64_t);
    void* vals[2] = {cuda::alloc(dev_, vbytes), cuda::alloc(dev_, vbytes)};
    void* pay[2] = {cuda::alloc(dev_, pbytes), cuda::alloc(dev_, pbytes)};
    void* hist = cuda::alloc(dev_, hbytes);
    void* status = cuda::alloc(dev_, sbytes);
    std::vector<int64_t> h(static_cast<size_t>(256 * digits), 0);
    cuda::copy_to_device(dev_, hist, h.data(), hbytes);
    const unsigned flat = grid_of(ceil_div(total_, kAxisThreads), 32 * int64_t{sms_});
    // One contiguous row without positions is read in place, and its last pass writes the output.
    const bool in_place = payload_ == 0 && v_.is == 1, to_out = payload_ == 0 && v_.os == 1;
    const void* src = in_place ? ptrs[0] : vals[0];
    if (!in_place) launch(dev_, *load_, flat, {ptrs[0], vals[0], pay[0]}, v_.ints(0, 0));
    launch(dev_, *hist_, grid_of(ceil_div(total_, kAxisThreads), 8 * int64_t{sms_}), {const_cast<void*>(src), hist, status},
           {total_, status_words});
    cuda::copy_to_host(dev_, h.data(), hist, hbytes);  // waits: which digits vary decides the passes

    // Per pass (shift, seg) the bins' counts over the whole buffer, scanned into where each
    // bin's run starts: key digits from the histograms, row digits n per row.
    std::vector<std::pair<int64_t, int64_t>> passes;
    std::vector<int64_t> offsets;
    auto add_pass = [&](int shift, int seg, const std::function<int64_t(int)>& count) {
      passes.push_back({shift, seg});
      int64_t run = 0;
      for (int b = 0; b < 256; ++b) {
        offsets.push_back(run);
        run += count(b);
      }
    };
    for (int d = 0; d < digits; ++d) {
      auto bin = [&](int b) { return h[static_cast<size_t>(256 * d + b)]; };
      bool shared = false;
      for (int b = 0; b < 256; ++b) shared |= bin(b) == total_;
      if (!shared) add_pass(8 * d, 0, bin);
    }
    if (v_.rows > 1) {
      int row_bits = std::bit_width(static_cast<uint64_t>(v_.rows - 1));
      for (int s = 0; s < (row_bits + 7) / 8; ++s)
        add_pass(8 * s, 1, [&](int b) { return v_.n * rows_with_digit(v_.rows, 8 * s, b); });
    }
    const size_t obytes = offsets.size() * sizeof(int64_t);
    void* offs = cuda::alloc(dev_, obytes);
    cuda::copy_to_device(dev_, offs, offsets.data(), obytes);  // staged before it returns (pageable)
    int p = 0;  // pay[p] goes with src
    auto* ctr = static_cast<int32_t*>(status) + 2 * 256 * ntiles_;
    for (size_t i = 0; i < passes.size(); ++i) {
      auto [shift, seg] = passes[i];
      void* dst = i + 1 == passes.size() && to_out ? ptrs[1] : src == vals[1] ? vals[0] : vals[1];
      launch(dev_, *pass_, grid_of(ntiles_, kMaxGrid),
             {const_cast<void*>(src), pay[p], dst, pay[1 - p], status, static_cast<int64_t*>(offs) + 256 * i, ctr + i},
             {total_, ntiles_, shift, seg, v_.n, static_cast<int64_t>(i + 1)});
      src = dst;
      p = 1 - p;
    }
    if (src != ptrs[1]) launch(dev_, *store_, flat, {const_cast<void*>(src), pay[p], ptrs[1]}, v_.ints(0, 0));
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
  bool arg_ = false;
  int payload_ = 0;
  const cuda::Function *load_, *hist_, *pass_, *store_;
};

}  // namespace

std::unique_ptr<Launch> plan_gpu_axis(int dev, const AxisStep& a, int multiprocessors, const AxisKernelLoader& load) {
  if (shape_numel(a.shape) == 0) return nullptr;
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
