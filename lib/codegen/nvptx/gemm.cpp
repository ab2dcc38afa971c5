// The tiled matrix-product kernel for NVPTX (see gemm.h for its structure and calling
// convention). Everything a thread does per k-step is unrolled here, at emission: the register
// tile, the prefetch registers and the shared-memory offsets all have constant indices, so SROA
// keeps them in registers and ptxas sees straight-line FMAs.
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <tuple>

#include "arrayc/error.h"
#include "codegen/body_emitter.h"
#include "codegen/nvptx/gemm.h"
#include "codegen/llvm_util.h"
#include "codegen/loop_space.h"
#include "codegen/nvptx/ptx_compile.h"
#include "support/env.h"

namespace arrayc::detail {
namespace {

using llvm::Value;

constexpr unsigned kGlobal = 1, kShared = 3;
constexpr int kSharedLimit = 48 * 1024;  // static shared memory per block
constexpr int kDynamicSharedLimit = 227 * 1024;  // dynamic shared memory per block (sm_90)

// The float64 mma shape on sm_90+ (GemmKernel::f64_k) of a forced tile that names none, where
// the tile allows it (else m8n8k4); the built-in tiles name theirs (choose_gemm).
constexpr int kF64K = 16;

int vector_elems(DType t) { return 16 / static_cast<int>(dtype_size(t)); }

// The geometry of one operand's tile, as staged in shared memory: `rows` along m (A) or n (B),
// bk along k, stored k-major (or, on the tensor-core pipeline, row-major when its loads run along
// k) with `pad` extra elements per row.
struct OperandTile {
  int rows = 0;        // bm or bn
  int bk = 0;
  int width = 1;       // elements per global load
  bool along_k = false;  // loads run along k (the unit-stride dim is k)
  bool x_major = false;  // stored [rows][bk + pad] (else [bk][rows + pad])
  int pad = 0;
  bool swizzle = false;  // the wgmma kernel's 128-byte swizzled layout (swizzled_at), no pad
  int loads = 0;       // global loads per thread per k-step
  int frag = 1;        // elements per shared-memory read in the product loop
  int groups = 1;      // tm / frag (or tn / frag)
  int row_len() const { return (x_major ? bk : rows) + pad; }
  int stage_len() const { return (x_major ? rows : bk) * row_len(); }  // elements of one k-step's tile
};

// `pipelined`: the tensor-core kernel's cp.async pipeline (g.mma on sm_80+).
OperandTile operand_tile(const GemmKernel& g, bool is_a, bool pipelined = false) {
  const GemmTile& t = g.tile;
  int v = vector_elems(pipelined ? g.operands() : g.dtype);  // the FMA kernel widens 16-bit loads as it loads
  OperandTile o;
  GemmUnit unit = is_a ? g.a_unit : g.b_unit;
  o.rows = is_a ? t.bm : t.bn;
  o.bk = t.bk;
  o.along_k = unit == GemmUnit::K;
  o.width = (is_a ? g.a_vec : g.b_vec) && unit != GemmUnit::None ? v : 1;
  // k-major stores of loads along k would put a thread's neighbours in one bank; a row padded
  // by 16 bytes spreads them.
  o.pad = o.along_k ? v : 0;
  // The pipeline copies 16-byte runs as they are in memory: an operand whose unit-stride dim is k
  // is kept row-major. A fragment read takes element (x0 + group, k0 + in_group) (lane = 4 group
  // + in_group): row lengths of 4 (mod 8) doubles, or of an odd multiple of 4 floats, put them in
  // different banks; k-major, (k0 + in_group, x0 + group): 4 (mod 8) doubles, an odd multiple of 8
  // floats.
  if (pipelined) {
    o.x_major = o.along_k;
    o.pad = o.x_major || g.dtype == DType::Float64 ? 4 : 8;
    // 16-bit elements (issue 29): rows of whole 16-byte runs, as ldmatrix reads them, padded by
    // one run: the 8 rows of an 8 x 8 matrix then start in 8 different 16-byte bank groups.
    if (is_half(g.in_dtype)) o.pad = 8;
    // The warpgroup kernel: rows of 128 bytes, unpadded, swizzled (see swizzled_at).
    if (g.wgmma) o.pad = 0, o.swizzle = true;
  }
  o.loads = o.rows * t.bk / (t.threads() * o.width);
  int per_thread = is_a ? t.tm : t.tn;
  o.frag = std::min(v, per_thread);
  o.groups = per_thread / o.frag;
  return o;
}

// Bytes of shared memory of the tensor-core pipeline of g (dynamic).
// The warpgroup kernel's stages start at the first 1024-byte boundary of it (the swizzle's
// period), so it asks for 1024 bytes more; the TMA kernel's two mbarriers a stage follow them.
size_t pipeline_shared(const GemmKernel& g) {
  return static_cast<size_t>(g.stages) * (operand_tile(g, true, true).stage_len() + operand_tile(g, false, true).stage_len()) *
             dtype_size(g.operands()) +
         (g.wgmma ? 1024 : 0) + (g.tma ? 16 * g.stages : 0);
}

// Whether a tensor map can describe both operands of p (cuTensorMapEncodeTiled's limits, with a
// margin): every extent from 1 to 2^31 - 1 (the TMA's coordinates are 32-bit), each stride
// that is used positive and past the extent of the dim inside it (no overlapping rows or
// batches; a batch stride of 0, one matrix for every product, is its own case). Otherwise the
// warpgroup kernel fills its stages by cp.async.
bool tma_layout_ok(const GemmProblem& p, const GemmKernel& g) {
  const int64_t limit = (int64_t{1} << 31) - 1;
  if (p.m < 1 || p.n < 1 || p.k < 1 || p.m > limit || p.n > limit || p.k > limit || p.batch > limit) return false;
  auto operand_ok = [&](bool along_k, int64_t outer, int64_t k_stride, int64_t outer_stride, int64_t bs) {
    const int64_t inner = along_k ? p.k : outer, other = along_k ? outer : p.k;
    const int64_t other_stride = along_k ? outer_stride : k_stride;
    if (other > 1 && other_stride < inner) return false;
    return p.batch == 1 || bs == 0 || bs >= other_stride * other;
  };
  return operand_ok(g.a_unit == GemmUnit::K, p.m, p.a_cs, p.a_rs, p.a_bs) &&
         operand_ok(g.b_unit == GemmUnit::K, p.n, p.b_rs, p.b_cs, p.b_bs);
}

// Whether a row of A or of B (its stride along the dim that is not unit-stride, in bytes) is
// no multiple of 128 bytes, so that every 128-byte row a TMA box reads spans two L2 lines. There
// the warpgroup kernel runs in clusters of two blocks sharing B's loads, halving B's L2 traffic:
// on an H100, 3000^2 x @ x.T float16 took 0.128 ms that way against 0.166 in single blocks,
// while 4096^3 x @ w (rows of 8192 bytes) took 0.249 against 0.240.
bool tma_rows_misaligned(const GemmProblem& p, const GemmKernel& g) {
  const int64_t e = static_cast<int64_t>(dtype_size(p.in_dtype));
  const int64_t a_pitch = g.a_unit == GemmUnit::K ? p.a_rs : p.a_cs, b_pitch = g.b_unit == GemmUnit::K ? p.b_cs : p.b_rs;
  return (a_pitch * e) % 128 != 0 || (b_pitch * e) % 128 != 0;
}

// Why the registers of kernel g's block cannot hold its accumulators, or "": ptxas compiles
// every thread to the count its block size leaves (65536 shared out, in steps of 8, at most
// 255), and a wgmma needs its bn / 2 accumulators and about 30 more at once (256x192 with a
// producer, 640 threads of 96 registers: "Insufficient registers (96) ... 122 or higher").
std::string wgmma_registers_problem(const GemmKernel& g) {
  const int threads = g.threads(), regs = std::min(255, 65536 / threads / 8 * 8), need = g.tile.bn / 2 + 30;
  if (threads > 1024) return "it gives " + std::to_string(threads) + " threads per block (at most 1024)";
  if (need > regs)
    return "its " + std::to_string(threads) + " threads get " + std::to_string(regs) + " registers each, and a wgmma of " +
           std::to_string(g.tile.bn) + " columns needs about " + std::to_string(need);
  return "";
}

// Why the warpgroup kernel (gemm.h, "wgmma") cannot use tile t with `stages` stages for
// `operands`, or "": a warpgroup per 64 rows, all bn columns (64 to 256, whole 64-element
// atoms), bk = 128 bytes (64 16-bit elements, 32 float32), the accumulators a warp's (4 x bn /
// 8), at least 3 stages (S - 2 k-steps ahead).
std::string wgmma_problem(const GemmTile& t, int stages, DType operands) {
  const int bk = 128 / static_cast<int>(dtype_size(operands));
  if (t.bm != 64 && t.bm != 128 && t.bm != 256) return "BM must be 64, 128 or 256 (a warpgroup per 64 rows)";
  if (t.bn % 64 || t.bn > 256) return "BN must be 64, 128, 192 or 256";
  if (t.bk != bk) return "BK must be " + std::to_string(bk) + " for " + dtype_name(operands) + " (rows of 128 bytes)";
  if (t.tm != 4 || t.tn != t.bn / 8) return "the thread tile must be 4x" + std::to_string(t.bn / 8) + " (a warp's 16 rows by BN)";
  if (stages < 3) return "it needs at least 3 stages";
  return "";
}

// Why a tile cannot be used for dtype, or "".
std::string tile_problem(const GemmTile& t, DType dtype) {
  auto pow2 = [](int x) { return x > 0 && (x & (x - 1)) == 0; };
  int v = vector_elems(dtype);
  if (!pow2(t.bm) || !pow2(t.bn) || !pow2(t.bk) || !pow2(t.tm) || !pow2(t.tn)) return "every size must be a power of two";
  if (t.tm > t.bm || t.tn > t.bn) return "the thread tile must fit in the block tile";
  int threads = t.threads();
  if (threads < 32 || threads > 1024) return "it gives " + std::to_string(threads) + " threads per block (32 to 1024 work)";
  if (t.bk < v) return "bk must be at least " + std::to_string(v) + " (one 16-byte load)";
  if ((t.bm * t.bk) % (threads * v) || (t.bn * t.bk) % (threads * v))
    return "each thread must load whole 16-byte vectors of both tiles";
  if (t.tm * t.tn > 128) return "more than 128 accumulators per thread";
  return "";
}

// Why the FMA kernel (static shared memory, two buffers) cannot use tile t, or "".
std::string static_shared_problem(const GemmTile& t, DType dtype) {
  size_t shared = 2 * static_cast<size_t>(t.bk) * (t.bm + t.bn + 2 * vector_elems(dtype)) * dtype_size(dtype);
  if (shared > kSharedLimit) return "it needs " + std::to_string(shared) + " bytes of shared memory";
  return "";
}

// One mma.sync instruction: its m x n x k tile and, per fragment register of A and of B, the
// element it holds as (x, k) offsets from (group, in_group), x along m (A) or n (B). Its
// accumulators are c_rows runs of two: row group (+ 8), columns 2 in_group, 2 in_group + 1.
struct MmaShape {
  int m, n, k;
  std::vector<std::pair<int, int>> a, b;
  int c_rows;
  llvm::Intrinsic::ID op;
  bool tf32;  // float32 operands rounded to TF32 (cvt.rna.tf32.f32) first
  std::string ptx;  // inline PTX instead of `op` (shapes LLVM has no intrinsic for)
};

// float64 on sm_90 (Hopper, PTX 7.8): mma.sync m16n8k<k> .f64, k = 4, 8 or 16, as inline PTX.
// Fragments (PTX ISA; CUTLASS's SM90_16x8xK_F64 traits): A register v holds (group + 8 (v % 2),
// in_group + 4 (v / 2)), B register v (in_group + 4 v, group), the accumulators are TF32's.
MmaShape hopper_f64_shape(int k) {
  MmaShape s{16, 8, k, {}, {}, 2, llvm::Intrinsic::not_intrinsic, false, ""};
  for (int v = 0; v < k / 2; ++v) s.a.push_back({8 * (v % 2), 4 * (v / 2)});
  for (int v = 0; v < k / 4; ++v) s.b.push_back({0, 4 * v});
  std::string d = "{$0, $1, $2, $3}", a = "{", b = "{", c = "{";
  int r = 4;
  for (size_t v = 0; v < s.a.size(); ++v) a += (v ? ", $" : "$") + std::to_string(r++);
  for (size_t v = 0; v < s.b.size(); ++v) b += (v ? ", $" : "$") + std::to_string(r++);
  for (int v = 0; v < 4; ++v) c += (v ? ", $" : "$") + std::to_string(r++);
  s.ptx = "mma.sync.aligned.m16n8k" + std::to_string(k) + ".row.col.f64.f64.f64.f64 " + d + ", " + a + "}, " + b + "}, " + c + "};";
  return s;
}

MmaShape mma_shape(const GemmKernel& g, int sm) {
  const DType t = g.dtype;
  // 16-bit operands (issue 29): their fragments come from ldmatrix (half_multiply), not `a`/`b`.
  if (g.in_dtype == DType::Float16) return {16, 8, 16, {}, {}, 2, llvm::Intrinsic::nvvm_mma_m16n8k16_row_col_f32_f32, false, ""};
  if (g.in_dtype == DType::BFloat16) return {16, 8, 16, {}, {}, 2, llvm::Intrinsic::nvvm_mma_m16n8k16_row_col_bf16, false, ""};
  if (t == DType::Float64 && g.f64_k && sm >= 90) return hopper_f64_shape(g.f64_k);
  if (t == DType::Float64) return {8, 8, 4, {{0, 0}}, {{0, 0}}, 1, llvm::Intrinsic::nvvm_mma_m8n8k4_row_col_f64, false, ""};
  return {16, 8, 8, {{0, 0}, {8, 0}, {0, 4}, {8, 4}}, {{0, 0}, {0, 4}}, 2, llvm::Intrinsic::nvvm_mma_m16n8k8_row_col_tf32, true, ""};
}

class GemmEmitter {
 public:
  GemmEmitter(const GemmKernel& g, llvm::Module& m, int sm)
      : g_(g), t_(g.tile), m_(m), ctx_(m.getContext()), b_(ctx_), a_(operand_tile(g, true, g.mma && sm >= 80)),
        bt_(operand_tile(g, false, g.mma && sm >= 80)), mma_(g.mma && sm >= 80), shape_(mma_shape(g, sm)) {
    ty_ = g.dtype == DType::Float64 ? b_.getDoubleTy() : b_.getFloatTy();
    esize_ = static_cast<int>(dtype_size(g.dtype));
    in_ty_ = g.in_dtype == DType::Float16 ? b_.getHalfTy() : g.in_dtype == DType::BFloat16 ? b_.getBFloatTy() : ty_;
    in_esize_ = static_cast<int>(dtype_size(g.operands()));
    half_ = mma_ && is_half(g.in_dtype);
    wg_ = mma_ && g.wgmma;
    tma_ = wg_ && g.tma;
  }

  void emit(const std::string& name) {
    auto* gptr = llvm::PointerType::get(ctx_, kGlobal);
    const Kernel* epi = g_.epilogue;
    const int out_ptrs = epi ? epi->num_ptrs : 1;  // c, or the epilogue's operands
    std::vector<llvm::Type*> args(2 + out_ptrs, gptr);
    args.insert(args.end(), kGemmParams + (epi ? epi->num_params() : 0), b_.getInt64Ty());
    red_ = epi && epi->is_reduction;
    if (red_) args.push_back(gptr);  // a reduction epilogue's scratch (gemm.h)
    const unsigned maps = static_cast<unsigned>(args.size());  // tma: A's and B's tensor maps, by value
    if (tma_) args.insert(args.end(), 2, llvm::PointerType::get(ctx_, 0));
    f_ = declare_ptx_kernel(m_, name, args, 2 + out_ptrs);
    if (tma_) {  // .param .align 64 .b8 [128], read in place (grid_constant: the TMA needs its address)
      std::vector<llvm::Metadata*> at;
      for (unsigned i = maps; i < maps + 2; ++i) {
        f_->addParamAttr(i, llvm::Attribute::getWithByValType(ctx_, llvm::ArrayType::get(b_.getInt8Ty(), 128)));
        f_->addParamAttr(i, llvm::Attribute::getWithAlignment(ctx_, llvm::Align(64)));
        at.push_back(llvm::ValueAsMetadata::get(b_.getInt32(i + 1)));
      }
      llvm::Metadata* md[] = {llvm::ValueAsMetadata::get(f_), llvm::MDString::get(ctx_, "grid_constant"), llvm::MDNode::get(ctx_, at)};
      m_.getOrInsertNamedMetadata("nvvm.annotations")->addOperand(llvm::MDNode::get(ctx_, md));
      maps_ = {f_->getArg(maps), f_->getArg(maps + 1)};
    }
    // The block size is fixed (.maxntid), which lets ptxas budget registers for it. Asking for
    // two blocks per SM (.minnctapersm 2) caps the big f32 tile at 128 registers: W5 ran 2.5%
    // faster but spilled 72 bytes, and W3 and W4 ran slower, so it is not asked.
    annotate_ptx_kernel(*f_, "maxntidx", g_.threads());
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", f_));
    Value *pa = f_->getArg(0), *pb = f_->getArg(1), *pc = f_->getArg(2);
    const int v0 = v0_ = 2 + out_ptrs;  // the first i64
    Value *m = f_->getArg(v0), *n = f_->getArg(v0 + 1), *k = f_->getArg(v0 + 2), *batch = f_->getArg(v0 + 3);
    Value *a_rs = f_->getArg(v0 + 4), *a_cs = f_->getArg(v0 + 5), *a_bs = f_->getArg(v0 + 6);
    Value *b_rs = f_->getArg(v0 + 7), *b_cs = f_->getArg(v0 + 8), *b_bs = f_->getArg(v0 + 9);
    if (epi) {
      for (int i = 0; i < out_ptrs; ++i) epi_ptrs_.push_back(f_->getArg(2 + i));
      space_ = LoopSpace::unpack(b_, *epi, [&](int64_t i) -> Value* { return f_->getArg(v0 + kGemmParams + static_cast<unsigned>(i)); });
      EmitOptions o;
      o.target = EmitOptions::Target::Nvptx;
      body_ = std::make_unique<BodyEmitter>(b_, *epi, o);
      body_->set_constants(space_.constants);
      product_ = b_.CreateAlloca(llvm::ArrayType::get(ty_, std::max(a_.frag, bt_.frag)), nullptr, "product");
      if (red_) {
        red_scratch_ = f_->getArg(maps - 1);
        racc_ = b_.CreateAlloca(acc_type(), nullptr, "reduced");
        rtmp_ = b_.CreateAlloca(acc_type(), nullptr, "block_reduced");
        b_.CreateStore(acc_identity(), racc_);
      }
    }
    // Strides along each operand's (outer, k) dims; a unit one is the constant 1.
    if (mma_) {  // the pipeline's stages: extern dynamic shared memory
      auto* ty = llvm::ArrayType::get(in_ty_, 0);
      dyn_ = new llvm::GlobalVariable(m_, ty, false, llvm::GlobalValue::ExternalLinkage, nullptr, "gemm_stages", nullptr,
                                      llvm::GlobalValue::NotThreadLocal, kShared);
      dyn_->setAlignment(llvm::Align(16));
    }
    Operand A{pa, a_, mma_ ? nullptr : smem("As", a_), m, g_.a_unit == GemmUnit::Outer ? i64(1) : a_rs,
              g_.a_unit == GemmUnit::K ? i64(1) : a_cs, a_bs, nullptr, {}, {}, {}};
    Operand B{pb, bt_, mma_ ? nullptr : smem("Bs", bt_), n, g_.b_unit == GemmUnit::Outer ? i64(1) : b_cs,
              g_.b_unit == GemmUnit::K ? i64(1) : b_rs, b_bs, nullptr, {}, {}, {}};
    red_smem_ = mma_ ? dyn_ : A.shared;  // a reduction's slots, once the tiles are done

    // tma: the consumer warpgroups come after the producer; their threads count from 0.
    Value* raw_tid = sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
    Value* tid = tma_ ? b_.CreateSub(raw_tid, i64(128)) : raw_tid;
    const int col_threads = t_.bn / t_.tn;
    tx_ = b_.CreateURem(tid, i64(col_threads));
    ty_idx_ = b_.CreateUDiv(tid, i64(col_threads));
    for (Operand* o : {&A, &B}) load_coords(*o, tid);
    A.lane_at = b_.CreateMul(ty_idx_, i64(a_.frag));
    B.lane_at = b_.CreateMul(tx_, i64(bt_.frag));
    if (mma_) {  // warp (wm, wn) of the block's (4 tm) x (8 tn) warp tiles; lane = 4 group + thread in group
      Value* lane = b_.CreateAnd(tid, i64(31));
      Value* warp = b_.CreateLShr(tid, 5);
      const int warps_n = t_.bn / (8 * t_.tn);
      wm_ = b_.CreateMul(b_.CreateUDiv(warp, i64(warps_n)), i64(4 * t_.tm));
      wn_ = b_.CreateMul(b_.CreateURem(warp, i64(warps_n)), i64(8 * t_.tn));
      group_ = b_.CreateLShr(lane, 2);
      in_group_ = b_.CreateAnd(lane, i64(3));
      for (auto [o, w0] : {std::pair{&A, wm_}, std::pair{&B, wn_}}) {  // element (w0 + group, in_group)
        const int len = o->tile.row_len();
        Value* x = b_.CreateAdd(w0, group_);
        o->lane_at = o->tile.x_major ? b_.CreateAdd(b_.CreateMul(x, i64(len)), in_group_)
                                     : b_.CreateAdd(b_.CreateMul(in_group_, i64(len)), x);
      }
      if (half_ && !wg_) ldmatrix_lanes(A, B, lane);
    }

    acc_ = b_.CreateAlloca(llvm::ArrayType::get(ty_, t_.tm * t_.tn), nullptr, "acc");
    for (Operand* o : {&A, &B}) o->regs = b_.CreateAlloca(llvm::ArrayType::get(load_type(o->tile), o->tile.loads), nullptr, "regs");

    Value* mt = ceil_div(m, t_.bm);
    Value* nt = ceil_div(n, t_.bn);
    Value* per = b_.CreateMul(mt, nt);
    // gram: the T (T + 1) / 2 tiles on and below the diagonal, row by row.
    Value* total = g_.gram ? b_.CreateUDiv(b_.CreateMul(mt, b_.CreateAdd(mt, i64(1))), i64(2)) : b_.CreateMul(per, batch);
    Value* ktiles = ceil_div(k, t_.bk);
    // Product p's tile (ti, tj) for a linear tile index.
    auto tile_at = [&](Value* tile) {
      Value *p, *ti, *tj;
      if (g_.gram) {
        p = i64(0);
        std::tie(ti, tj) = triangle_tile(tile);
      } else {
        p = b_.CreateUDiv(tile, per);
        Value* r = b_.CreateURem(tile, per);
        ti = b_.CreateUDiv(r, nt);
        tj = b_.CreateURem(r, nt);
      }
      return std::tuple<Value*, Value*, Value*>{p, ti, tj};
    };
    if (tma_) {
      // A cluster of two blocks walks pairs of tiles one above the other (rows ti = 2 ti2 + its
      // rank), which share their tiles of B; a pair's second tile past the last row computes
      // what no store keeps. Units (tiles, or pairs) go in groups of `group` rows (gemm_tile_group).
      const int c = g_.cluster;
      Value* rank = c > 1 ? b_.CreateURem(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x), i64(c)) : i64(0);
      Value* mt_c = ceil_div(mt, c);
      Value* per_c = b_.CreateMul(mt_c, nt);
      Value* group = f_->getArg(v0 + 10);  // gemm_tile_group
      Value* span = b_.CreateMul(group, nt);
      tma_main(A, B, raw_tid, g_.gram ? total : b_.CreateMul(per_c, batch), ktiles, rank, [&](Value* tile) {
        if (g_.gram) {  // the triangle's own order (clusters are not used for it)
          auto [p, ti, tj] = tile_at(tile);
          return std::tuple<Value*, Value*, Value*>{p, b_.CreateMul(ti, i64(t_.bm)), b_.CreateMul(tj, i64(t_.bn))};
        }
        Value* p = b_.CreateUDiv(tile, per_c);
        Value* r = b_.CreateURem(tile, per_c);
        Value* g0 = b_.CreateMul(b_.CreateUDiv(r, span), group);  // the group's first row
        Value* rows = b_.CreateSelect(b_.CreateICmpULT(b_.CreateSub(mt_c, g0), group), b_.CreateSub(mt_c, g0), group);
        Value* in = b_.CreateURem(r, span);
        Value* ti = b_.CreateAdd(b_.CreateMul(b_.CreateAdd(g0, b_.CreateURem(in, rows)), i64(c)), rank);
        Value* tj = b_.CreateUDiv(in, rows);
        return std::tuple<Value*, Value*, Value*>{p, b_.CreateMul(ti, i64(t_.bm)), b_.CreateMul(tj, i64(t_.bn))};
      }, [&](Value* p, Value* m0, Value* n0) { mma_store(Store{pc, p, b_.CreateMul(p, b_.CreateMul(m, n)), m, n}, m0, n0); });
      b_.CreateRetVoid();
      return;
    }
    loop(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x), total, sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x),
         [&](Value* tile) {
           auto [p, ti, tj] = tile_at(tile);
           Value* m0 = b_.CreateMul(ti, i64(t_.bm));
           Value* n0 = b_.CreateMul(tj, i64(t_.bn));
           A.x0 = m0;
           B.x0 = n0;
           A.base = b_.CreateMul(p, A.batch_stride);
           B.base = b_.CreateMul(p, B.batch_stride);
           for (int i = 0; i < t_.tm * t_.tn; ++i) b_.CreateStore(llvm::ConstantFP::get(ty_, 0.0), acc_at(i));
           if (mma_) pipeline(A, B, k, ktiles);
           else if_then(b_.CreateICmpSGT(ktiles, i64(0)), [&] {
             for (Operand* o : {&A, &B}) fetch(*o, i64(0), k);
             for (Operand* o : {&A, &B}) stash(*o, 0);
             barrier();
             // Unrolled by two so that each half's shared buffer is a constant: every shared
             // address is then a per-thread base plus a constant offset.
             auto step = [&](Value* kt, int buf) {
               Value* next = b_.CreateAdd(kt, i64(1));
               Value* has_next = b_.CreateICmpSLT(next, ktiles);
               if_then(has_next, [&] {
                 for (Operand* o : {&A, &B}) fetch(*o, b_.CreateMul(next, i64(t_.bk)), k);
               });
               multiply(A, B, buf);
               if_then(has_next, [&] {
                 for (Operand* o : {&A, &B}) stash(*o, 1 - buf);
               });
               barrier();
             };
             loop(i64(0), ktiles, i64(2), [&](Value* kt) {
               step(kt, 0);
               Value* odd = b_.CreateAdd(kt, i64(1));
               if_then(b_.CreateICmpSLT(odd, ktiles), [&] { step(odd, 1); });
             });
           });
           Store st{pc, p, b_.CreateMul(p, b_.CreateMul(m, n)), m, n};
           if (mma_) mma_store(st, m0, n0);
           else store_tile(st, m0, n0, false);
           if (g_.gram) if_then(b_.CreateICmpNE(ti, tj), [&] { store_tile(st, m0, n0, true); });
         });
    if (red_) finish_reduction(tid);
    b_.CreateRetVoid();
  }

 private:
  // Where a tile's results go: c (contiguous [batch, m, n]) or the epilogue, for product p,
  // whose first element is `base`.
  struct Store {
    Value* pc;
    Value *p, *base, *m, *n;
  };

  struct Operand {
    Value* ptr;
    OperandTile tile;
    llvm::GlobalVariable* shared;
    Value* extent;  // m or n
    Value* outer_stride;
    Value* k_stride;
    Value* batch_stride;
    Value* regs = nullptr;
    std::vector<Value*> xs, ks;  // per load: tile coordinates (outer, k) of its first element
    std::vector<Value*> stash_at;  // per load: its shared-memory element index (k * row_len + x)
    Value* lane_at = nullptr;      // shared-memory element index of this thread's first fragment
    Value* x0 = nullptr;         // the tile's first outer index
    Value* base = nullptr;       // element offset of this product
  };

  Value* i64(int64_t v) { return b_.getInt64(v); }
  Value* sreg(llvm::Intrinsic::ID id) { return read_sreg(b_, id); }
  Value* ceil_div(Value* x, int d) { return b_.CreateUDiv(b_.CreateAdd(x, i64(d - 1)), i64(d)); }
  void barrier() { b_.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {}); }
  llvm::Type* vec(int w) { return w == 1 ? ty_ : static_cast<llvm::Type*>(llvm::FixedVectorType::get(ty_, w)); }
  llvm::Type* load_type(const OperandTile& o) { return vec(o.width); }
  Value* acc_at(int i) { return b_.CreateConstInBoundsGEP2_32(acc_->getAllocatedType(), acc_, 0, i); }

  llvm::GlobalVariable* smem(const char* name, const OperandTile& o) {
    auto* ty = llvm::ArrayType::get(ty_, 2 * t_.bk * o.row_len());
    auto* gv = new llvm::GlobalVariable(m_, ty, false, llvm::GlobalValue::InternalLinkage, llvm::UndefValue::get(ty),
                                        name, nullptr, llvm::GlobalValue::NotThreadLocal, kShared);
    gv->setAlignment(llvm::Align(16));
    return gv;
  }
  // Element `offset` of shared buffer `buf`, counted from `base` (a per-thread element index).
  Value* smem_at(const Operand& o, int buf, Value* base, int64_t offset) {
    const int64_t len = o.tile.row_len();
    return b_.CreateInBoundsGEP(ty_, o.shared, b_.CreateAdd(base, i64(buf * t_.bk * len + offset)));
  }

  void loop(Value* start, Value* end, Value* step, const std::function<void(Value*)>& body) {
    emit_loop(b_, start, end, step, body);
  }
  void if_then(Value* cond, const std::function<void()>& then) { emit_if(b_, cond, then); }
  void if_else(Value* cond, const std::function<void()>& then, const std::function<void()>& otherwise) {
    emit_if(b_, cond, then, otherwise);
  }

  // Which element of the tile each of this thread's loads starts at. Consecutive threads take
  // consecutive vectors along the unit-stride dim, so a warp's loads are coalesced.
  void load_coords(Operand& o, Value* tid) {
    const OperandTile& t = o.tile;
    const int threads = t_.threads();
    for (int j = 0; j < t.loads; ++j) {
      Value* v = b_.CreateAdd(tid, i64(static_cast<int64_t>(j) * threads));
      int per = (t.along_k ? t_.bk : t.rows) / t.width;  // vectors along the fast dim
      Value* fast = b_.CreateMul(b_.CreateURem(v, i64(per)), i64(t.width));
      Value* slow = b_.CreateUDiv(v, i64(per));
      Value* x = t.along_k ? slow : fast;
      Value* kk = t.along_k ? fast : slow;
      o.xs.push_back(x);
      o.ks.push_back(kk);
      o.stash_at.push_back(t.swizzle ? swizzled_at(t, x, kk)
                           : t.x_major ? b_.CreateAdd(b_.CreateMul(x, i64(t.row_len())), kk)
                                       : b_.CreateAdd(b_.CreateMul(kk, i64(t.row_len())), x));
    }
  }

  // The warpgroup kernel's stage layouts (128-byte swizzle; a row is bk = R elements, 128
  // bytes: R = 64 16-bit or 32 float32 elements, 8 chunks of 16 bytes): the element index of
  // (x, kk), kk (K-major) or x (MN-major) the first of a 16-byte chunk. K-major (x_major): row x
  // holds k 0..R-1, its chunk c at chunk c ^ (x % 8). MN-major (16-bit only): atoms of 64 x by bk
  // k-rows, one after another; in an atom, k-row kk holds x 0..63, chunk c at c ^ (kk % 8). The
  // stage itself starts on a 1024-byte boundary, so these are the addresses the tensor cores'
  // swizzle reads.
  Value* swizzled_at(const OperandTile& t, Value* x, Value* kk) {
    const int64_t row = 128 / in_esize_, per_chunk = 16 / in_esize_;
    auto chunk = [&](Value* c, Value* r) {
      return b_.CreateMul(b_.CreateXor(b_.CreateUDiv(c, i64(per_chunk)), b_.CreateAnd(r, i64(7))), i64(per_chunk));
    };
    if (t.x_major) return b_.CreateAdd(b_.CreateMul(x, i64(row)), chunk(kk, x));
    Value* atom = b_.CreateMul(b_.CreateUDiv(x, i64(row)), i64(static_cast<int64_t>(t.bk) * row));
    return b_.CreateAdd(atom, b_.CreateAdd(b_.CreateMul(kk, i64(row)), chunk(b_.CreateURem(x, i64(row)), kk)));
  }

  // Global loads of the k-step starting at k0 into the prefetch registers. Out-of-range elements
  // read as zero; their addresses are replaced by the product's first element, which exists
  // whenever a tile does.
  void fetch(Operand& o, Value* k0, Value* k) {
    const OperandTile& t = o.tile;
    llvm::Type* regs_ty = llvm::ArrayType::get(load_type(t), t.loads);
    Value* first = b_.CreateInBoundsGEP(in_ty_, o.ptr, o.base);
    auto address = [&](Value* x, Value* kk) { return element_at(o, x, kk); };
    // 16-bit operands widen as they load (issue 29).
    auto widen = [&](Value* v, llvm::Type* to) { return in_ty_ == ty_ ? v : b_.CreateFPExt(v, to); };
    auto scalar = [&](Value* x, Value* kk) {
      Value* ok = b_.CreateAnd(b_.CreateICmpSLT(x, o.extent), b_.CreateICmpSLT(kk, k));
      Value* v = b_.CreateAlignedLoad(in_ty_, b_.CreateSelect(ok, address(x, kk), first), llvm::Align(in_esize_));
      return b_.CreateSelect(ok, widen(v, ty_), llvm::ConstantFP::get(ty_, 0.0));
    };
    for (int j = 0; j < t.loads; ++j) {
      Value* x = b_.CreateAdd(o.x0, o.xs[j]);
      Value* kk = b_.CreateAdd(k0, o.ks[j]);
      Value* slot = b_.CreateConstInBoundsGEP2_32(regs_ty, o.regs, 0, j);
      if (t.width == 1) {
        b_.CreateStore(scalar(x, kk), slot);
        continue;
      }
      Value* last_x = t.along_k ? x : b_.CreateAdd(x, i64(t.width - 1));
      Value* last_k = t.along_k ? b_.CreateAdd(kk, i64(t.width - 1)) : kk;
      Value* whole = b_.CreateAnd(b_.CreateICmpSLT(last_x, o.extent), b_.CreateICmpSLT(last_k, k));
      if_else(
          whole,
          [&] {
            llvm::Type* in = t.width == 1 ? in_ty_ : llvm::FixedVectorType::get(in_ty_, t.width);
            Value* v = b_.CreateAlignedLoad(in, address(x, kk), llvm::Align(in_esize_ * t.width));
            b_.CreateStore(widen(v, load_type(t)), slot);
          },
          [&] {
            Value* v = llvm::UndefValue::get(load_type(t));
            for (int i = 0; i < t.width; ++i) {
              Value* xi = t.along_k ? x : b_.CreateAdd(x, i64(i));
              Value* ki = t.along_k ? b_.CreateAdd(kk, i64(i)) : kk;
              v = b_.CreateInsertElement(v, scalar(xi, ki), i);
            }
            b_.CreateStore(v, slot);
          });
    }
  }

  // Element (x, kk) of the operand's current product.
  Value* element_at(const Operand& o, Value* x, Value* kk) {
    Value* off = b_.CreateAdd(o.base, b_.CreateAdd(b_.CreateMul(x, o.outer_stride), b_.CreateMul(kk, o.k_stride)));
    return b_.CreateInBoundsGEP(in_ty_, o.ptr, off);
  }

  // The k-step starting at k0 of operand o by cp.async into the shared-memory stage whose first
  // element is `stage` (an i64 element index); out-of-range elements are zero-filled (a source
  // size short of the copy's), their addresses replaced by the product's first element.
  void copy_async(const Operand& o, Value* k0, Value* k, Value* stage) {
    const OperandTile& t = o.tile;
    Value* first = b_.CreateInBoundsGEP(in_ty_, o.ptr, o.base);
    for (int j = 0; j < t.loads; ++j) {
      Value* x = b_.CreateAdd(o.x0, o.xs[j]);
      Value* kk = b_.CreateAdd(k0, o.ks[j]);
      Value* dst = b_.CreateInBoundsGEP(in_ty_, dyn_, b_.CreateAdd(stage, o.stash_at[j]));
      Value* bytes;
      if (t.width == 1 && in_esize_ < 4) {  // a 16-bit element (issue 29): below cp.async's 4 bytes
        Value* ok = b_.CreateAnd(b_.CreateICmpSLT(x, o.extent), b_.CreateICmpSLT(kk, k));
        Value* v = b_.CreateAlignedLoad(in_ty_, b_.CreateSelect(ok, element_at(o, x, kk), first), llvm::Align(in_esize_));
        b_.CreateAlignedStore(b_.CreateSelect(ok, v, llvm::ConstantFP::get(in_ty_, 0.0)), dst, llvm::Align(in_esize_));
        continue;
      }
      if (t.width == 1) {
        bytes = b_.CreateSelect(b_.CreateAnd(b_.CreateICmpSLT(x, o.extent), b_.CreateICmpSLT(kk, k)), i64(esize_), i64(0));
      } else {  // the run's elements in range along the unit dim, if the other is in range
        Value* left = t.along_k ? b_.CreateSub(k, kk) : b_.CreateSub(o.extent, x);
        Value* other_ok = t.along_k ? b_.CreateICmpSLT(x, o.extent) : b_.CreateICmpSLT(kk, k);
        Value* n = b_.CreateSelect(b_.CreateICmpSLT(left, i64(t.width)), left, i64(t.width));
        n = b_.CreateSelect(b_.CreateAnd(other_ok, b_.CreateICmpSGT(n, i64(0))), n, i64(0));
        bytes = b_.CreateMul(n, i64(in_esize_));
      }
      Value* src = b_.CreateSelect(b_.CreateICmpSGT(bytes, i64(0)), element_at(o, x, kk), first);
      const int size = t.width * in_esize_;
      llvm::Intrinsic::ID id = size == 16  ? llvm::Intrinsic::nvvm_cp_async_cg_shared_global_16_s
                               : size == 8 ? llvm::Intrinsic::nvvm_cp_async_ca_shared_global_8_s
                                           : llvm::Intrinsic::nvvm_cp_async_ca_shared_global_4_s;
      b_.CreateIntrinsic(id, {}, {dst, src, b_.CreateTrunc(bytes, b_.getInt32Ty())});
    }
  }

  // The tensor-core main loop of one output tile: k-steps copied by cp.async `stages - 1` ahead
  // into a ring of stages; one barrier per k-step (after it, every thread's copies of this step
  // have landed, and every thread is done with the stage the next copy overwrites).
  void pipeline(Operand& A, Operand& B, Value* k, Value* ktiles) {
    if (wg_) return wgmma_pipeline(A, B, k, ktiles);
    const int S = g_.stages;
    const int64_t stage_len = A.tile.stage_len() + B.tile.stage_len();
    auto stage_at = [&](Value* s) { return b_.CreateMul(s, i64(stage_len)); };
    copy_ahead(A, B, k, ktiles, S - 1, stage_at);
    loop(i64(0), ktiles, i64(1), [&](Value* kt) {
      b_.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_wait_group, {}, {b_.getInt32(S - 2)});
      barrier();
      copy_next(A, B, k, ktiles, b_.CreateAdd(kt, i64(S - 1)), stage_at);
      Value* at = b_.CreateMul(b_.CreateURem(kt, i64(S)), i64(stage_len));
      if (half_) half_multiply(A, B, at, b_.CreateAdd(at, i64(A.tile.stage_len())));
      else mma_multiply(A, B, at, b_.CreateAdd(at, i64(A.tile.stage_len())));
    });
    barrier();  // the next tile's copies overwrite the stages
  }

  // The cp.async copies of k-step kt of both operands into the stage whose first element is
  // `at` (an element index into the dynamic shared memory).
  void copy_step(const Operand& A, const Operand& B, Value* k, Value* kt, Value* at) {
    Value* k0 = b_.CreateMul(kt, i64(t_.bk));
    copy_async(A, k0, k, at);
    copy_async(B, k0, k, b_.CreateAdd(at, i64(A.tile.stage_len())));
  }
  void commit_copies() { b_.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_commit_group, {}, {}); }
  // The pipelines' prologue: k-steps 0 .. ahead - 1 into stages 0 .. ahead - 1, one commit group
  // each (empty past the last k-step). `stage_at` gives a stage's first element.
  void copy_ahead(const Operand& A, const Operand& B, Value* k, Value* ktiles, int ahead,
                  const std::function<Value*(Value*)>& stage_at) {
    for (int s = 0; s < ahead; ++s) {
      if_then(b_.CreateICmpSLT(i64(s), ktiles), [&] { copy_step(A, B, k, i64(s), stage_at(i64(s))); });
      commit_copies();
    }
  }
  // In the loop: k-step `next` (if there is one) into its stage of the ring, then a commit group.
  void copy_next(const Operand& A, const Operand& B, Value* k, Value* ktiles, Value* next,
                 const std::function<Value*(Value*)>& stage_at) {
    if_then(b_.CreateICmpSLT(next, ktiles), [&] { copy_step(A, B, k, next, stage_at(b_.CreateURem(next, i64(g_.stages)))); });
    commit_copies();
  }

  // Bytes from shared address `shared0` (the dynamic shared memory's start) to the next 1024-byte
  // boundary, the 128-byte swizzle's period, where the warpgroup kernels' stages start.
  Value* swizzle_period_offset(Value* shared0) {
    return b_.CreateAnd(b_.CreateSub(i64(1024), b_.CreateAnd(shared0, i64(1023))), i64(1023));
  }

  // ---- the warpgroup kernel (sm_90a) ----
  // PTX with side effects on memory (a fence, a wait, an mbarrier or TMA operation) taking
  // `args` as 32-bit ("r") or 64-bit ("l") registers.
  void asm_statement(const std::string& ptx, const std::vector<Value*>& args = {}) {
    std::vector<llvm::Type*> ins;
    std::string constraints;
    for (Value* v : args) {
      ins.push_back(v->getType());
      constraints += v->getType()->isIntegerTy(64) ? "l," : v->getType()->isIntegerTy(16) ? "h," : "r,";
    }
    auto* fty = llvm::FunctionType::get(b_.getVoidTy(), ins, false);
    b_.CreateCall(fty, llvm::InlineAsm::get(fty, ptx, constraints + "~{memory}", true), args);
  }

  // A wgmma matrix descriptor of the swizzled tile at shared address `addr` (bytes): the address,
  // the leading and stride byte offsets (in 16-byte units) and the 128-byte swizzle mode.
  Value* descriptor(Value* addr, int64_t leading, int64_t stride) {
    Value* d = b_.CreateAnd(b_.CreateLShr(addr, 4), i64(0x3FFF));
    return b_.CreateOr(d, i64(((leading >> 4) << 16) | ((stride >> 4) << 32) | (int64_t{1} << 62)));
  }

  // One wgmma.mma_async m64n<bn>k16 (16-bit operands) or k8 (TF32) into the accumulators (the
  // thread's bn / 2 floats), A and B read through their descriptors; a 16-bit operand staged
  // MN-major is read transposed (TF32 operands are K-major: the instruction has no transpose).
  std::vector<Value*> wgmma(Value* da, Value* db, const std::vector<Value*>& acc, bool trans_a, bool trans_b) {
    const int n = static_cast<int>(acc.size());
    const bool tf32 = !is_half(g_.in_dtype);
    const char* t = tf32 ? "tf32" : g_.in_dtype == DType::Float16 ? "f16" : "bf16";
    std::string d = "{";
    for (int i = 0; i < n; ++i) d += (i ? ", $" : "$") + std::to_string(i);
    std::string trans = tf32 ? "" : std::string(", ") + (trans_a ? "1" : "0") + ", " + (trans_b ? "1" : "0");
    std::string ptx = "{\n.reg .pred p;\nsetp.ne.b32 p, $" + std::to_string(n + 2) + ", 0;\nwgmma.mma_async.sync.aligned.m64n" +
                      std::to_string(t_.bn) + (tf32 ? "k8" : "k16") + ".f32." + t + "." + t + " " + d + "}, $" +
                      std::to_string(n) + ", $" + std::to_string(n + 1) + ", p, 1, 1" + trans + ";\n}";
    std::string constraints;
    for (int i = 0; i < n; ++i) constraints += "=f,";
    constraints += "l,l,r";
    for (int i = 0; i < n; ++i) constraints += "," + std::to_string(i);
    std::vector<llvm::Type*> ins{b_.getInt64Ty(), b_.getInt64Ty(), b_.getInt32Ty()};
    std::vector<Value*> args{da, db, b_.getInt32(1)};
    for (Value* v : acc) ins.push_back(ty_), args.push_back(v);
    auto* ret = llvm::StructType::get(ctx_, std::vector<llvm::Type*>(n, ty_));
    auto* fty = llvm::FunctionType::get(ret, ins, false);
    Value* r = b_.CreateCall(fty, llvm::InlineAsm::get(fty, ptx, constraints, true), args);
    std::vector<Value*> out;
    for (int i = 0; i < n; ++i) out.push_back(b_.CreateExtractValue(r, i));
    return out;
  }

  // The main loop of one output tile on the warpgroup mma: k-steps copied by cp.async S - 2
  // ahead into a ring of S stages. Each k-step: wait for its copies, fence them into the async
  // proxy (which the tensor cores read through), one barrier, the copy of step kt + S - 2 into
  // the stage of step kt - 2, then four wgmmas (k 0, 16, 32, 48 of the step) and a wait for all
  // but this step's. Step kt - 2's wgmmas were waited for before the barrier by every warpgroup,
  // so its stage is free.
  void wgmma_pipeline(Operand& A, Operand& B, Value* k, Value* ktiles) {
    const int S = g_.stages;
    const int64_t stage_len = A.tile.stage_len() + B.tile.stage_len();
    const int esize = in_esize_;
    // The first element of the stages: the first 1024-byte boundary of the dynamic shared memory.
    Value* shared0 = b_.CreatePtrToInt(dyn_, b_.getInt64Ty());
    Value* first = b_.CreateUDiv(swizzle_period_offset(shared0), i64(esize));
    auto stage_at = [&](Value* s) { return b_.CreateAdd(first, b_.CreateMul(s, i64(stage_len))); };
    copy_ahead(A, B, k, ktiles, S - 2, stage_at);
    Value* a_rows = warpgroup_rows(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x));
    loop(i64(0), ktiles, i64(1), [&](Value* kt) {
      b_.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_wait_group, {}, {b_.getInt32(S - 3)});
      asm_statement("fence.proxy.async.shared::cta;");
      barrier();
      copy_next(A, B, k, ktiles, b_.CreateAdd(kt, i64(S - 2)), stage_at);
      Value* at = b_.CreateAdd(shared0, b_.CreateMul(stage_at(b_.CreateURem(kt, i64(S))), i64(esize)));
      wgmma_step(A, B, b_.CreateAdd(at, a_rows), b_.CreateAdd(at, i64(A.tile.stage_len() * esize)));
    });
    wgmma_drain();
    barrier();  // the next tile's copies overwrite the stages
  }

  // The byte offset of this warpgroup's 64 rows of A in a stage (tid: the thread among the
  // consumers): 64 K-major rows of 128 bytes, or one MN-major atom (64 x 64 16-bit elements).
  Value* warpgroup_rows(Value* tid) { return b_.CreateMul(b_.CreateLShr(tid, 7), i64(64 * 128)); }

  // One k-step (128 bytes of k: 64 16-bit elements or 32 float32) on the warpgroup mma from the
  // stage's A rows at a_at and B at b_at (shared byte addresses): four wgmmas (k-slices of 32
  // bytes: 16 k, or 8 for TF32) into the accumulators, committed, then a wait for all but
  // these. Per operand, the descriptor's leading and stride byte offsets and the bytes between
  // k-slices: K-major, LBO unused (16: "1"), SBO 8 rows of 128 bytes, the next slice 32 bytes on
  // along the row; MN-major, LBO from one 64-element atom to the next, SBO 8 k-rows of 128
  // bytes, the next 16 k 16 rows on.
  void wgmma_step(const Operand& A, const Operand& B, Value* a_at, Value* b_at) {
    auto layout = [&](const OperandTile& t) {
      return t.x_major ? std::tuple<int64_t, int64_t, int64_t>{16, 1024, 32}
                       : std::tuple<int64_t, int64_t, int64_t>{static_cast<int64_t>(t.bk) * 128, 1024, 16 * 128};
    };
    auto [a_lbo, a_sbo, a_step] = layout(A.tile);
    auto [b_lbo, b_sbo, b_step] = layout(B.tile);
    std::vector<Value*> acc;
    for (int i = 0; i < t_.tm * t_.tn; ++i) acc.push_back(b_.CreateLoad(ty_, acc_at(i)));
    asm_statement("wgmma.fence.sync.aligned;");
    for (int kk = 0; kk < t_.bk * in_esize_ / 32; ++kk)
      acc = wgmma(descriptor(b_.CreateAdd(a_at, i64(kk * a_step)), a_lbo, a_sbo),
                  descriptor(b_.CreateAdd(b_at, i64(kk * b_step)), b_lbo, b_sbo), acc, !A.tile.x_major, !B.tile.x_major);
    asm_statement("wgmma.commit_group.sync.aligned;");
    asm_statement("wgmma.wait_group.sync.aligned 1;");
    for (int i = 0; i < t_.tm * t_.tn; ++i) b_.CreateStore(acc[i], acc_at(i));
  }

  // Every wgmma done before the accumulators are read: the wait takes them in and gives them
  // back, so nothing reads them before it.
  void wgmma_drain() {
    std::vector<Value*> acc;
    for (int i = 0; i < t_.tm * t_.tn; ++i) acc.push_back(b_.CreateLoad(ty_, acc_at(i)));
    const int n = static_cast<int>(acc.size());
    std::string constraints;
    for (int i = 0; i < n; ++i) constraints += "=f,";
    for (int i = 0; i < n; ++i) constraints += std::to_string(i) + (i + 1 < n ? "," : ",~{memory}");
    auto* ret = llvm::StructType::get(ctx_, std::vector<llvm::Type*>(n, ty_));
    auto* fty = llvm::FunctionType::get(ret, std::vector<llvm::Type*>(n, ty_), false);
    Value* r = b_.CreateCall(fty, llvm::InlineAsm::get(fty, "wgmma.wait_group.sync.aligned 0;", constraints, true), acc);
    for (int i = 0; i < n; ++i) b_.CreateStore(b_.CreateExtractValue(r, i), acc_at(i));
  }

  // ---- the warp-specialized TMA kernel (gemm.h, "tma") ----
  Value* i32(Value* v) { return b_.CreateTrunc(v, b_.getInt32Ty()); }
  void mbarrier_wait(Value* bar, Value* parity) {
    asm_statement("{\n.reg .pred P1;\nLAB_WAIT:\nmbarrier.try_wait.parity.shared::cta.b64 P1, [$0], $1;\n@P1 bra DONE;\n"
                  "bra LAB_WAIT;\nDONE:\n}",
                  {bar, parity});
  }

  // The TMA loads of operand o's k-step at k0 (its tile starting at x0, product p) into the stage
  // at shared byte address `dst`, completing on mbarrier `bar`: one box of 64 k by rows
  // (K-major), or one box of 64 x by 64 k per 64-element atom (MN-major).
  // `share` (B in a cluster of two): this block loads its half, the rows (K-major) or the atoms
  // (MN-major) of its rank's parity, into both blocks' stages at the same offsets (multicast);
  // each block's full mbarrier then counts both halves' bytes.
  void tma_load(const Operand& o, Value* map, Value* dst, Value* k0, Value* x0, Value* p, Value* bar, Value* share = nullptr) {
    const std::string ptx = std::string("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes") +
                            (share ? ".multicast::cluster" : "") + " [$0], [$1, {$2, $3, $4}], [$5]" + (share ? ", $6;" : ";");
    Value* addr = b_.CreatePtrToInt(map, b_.getInt64Ty());
    auto load = [&](Value* to, Value* c0, Value* c1) {
      std::vector<Value*> args{i32(to), addr, i32(c0), i32(c1), i32(p), bar};
      if (share) args.push_back(b_.getInt16(3));
      asm_statement(ptx, args);
    };
    if (o.tile.x_major) {
      if (!share) return load(dst, k0, x0);
      Value* half = b_.CreateMul(share, i64(o.tile.rows / 2));
      return load(b_.CreateAdd(dst, b_.CreateMul(half, i64(o.tile.bk * in_esize_))), k0, b_.CreateAdd(x0, half));
    }
    for (int j = 0; j < o.tile.rows / 64; ++j) {  // MN-major: 16-bit operands, atoms of 64
      auto one = [&] { load(b_.CreateAdd(dst, i64(j * 64 * o.tile.bk * in_esize_)), b_.CreateAdd(x0, i64(64 * j)), k0); };
      if (share) {
        if_then(b_.CreateICmpEQ(share, i64(j % 2)), one);
      } else {
        one();
      }
    }
  }

  // The block: thread 0 sets up the stages' mbarriers, then warpgroup 0 (the producer) gives back
  // its registers and its thread 0 walks the block's tiles and k-steps, loading each k-step
  // into the next stage once its consumers released it; the other warpgroups take the
  // registers, and walk the same tiles and k-steps, each waiting for its stage's bytes,
  // multiplying, and releasing the stage of the k-step before (whose wgmmas are then done).
  // `tile_of` gives a linear tile's product and first row and column; `store` writes a tile.
  void tma_main(const Operand& A, const Operand& B, Value* raw_tid, Value* total, Value* ktiles, Value* rank,
                const std::function<std::tuple<Value*, Value*, Value*>(Value*)>& tile_of,
                const std::function<void(Value*, Value*, Value*)>& store) {
    const int S = g_.stages, consumers = t_.bm / 64, cluster = g_.cluster;
    // Registers a thread: the producer keeps 40 (fewer spill its loop) and gives the rest of its
    // share to the consumers (setmaxnreg), which hold their accumulators without spilling: the
    // SM's 65536 shared out in steps of 8, at most 232. One consumer warpgroup (256 threads) has
    // 255 without asking.
    const std::pair<int, int> regs =
        consumers < 2 ? std::pair{0, 0} : std::pair{40, std::min(232, (65536 - 128 * 40) / (128 * consumers) / 8 * 8)};
    const int64_t a_bytes = A.tile.stage_len() * in_esize_, stage_bytes = a_bytes + B.tile.stage_len() * in_esize_;
    Value* shared0 = b_.CreatePtrToInt(dyn_, b_.getInt64Ty());
    Value* stages0 = b_.CreateAdd(shared0, swizzle_period_offset(shared0));
    Value* bars = b_.CreateAdd(stages0, i64(S * stage_bytes));
    auto full = [&](Value* s) { return i32(b_.CreateAdd(bars, b_.CreateMul(s, i64(8)))); };
    auto empty = [&](Value* s) { return i32(b_.CreateAdd(bars, b_.CreateAdd(b_.CreateMul(s, i64(8)), i64(8 * S)))); };
    if_then(b_.CreateICmpEQ(raw_tid, i64(0)), [&] {
      for (int s = 0; s < S; ++s) {
        asm_statement("mbarrier.init.shared::cta.b64 [$0], $1;", {full(i64(s)), b_.getInt32(1)});
        // Released by every consumer warpgroup of the cluster: a stage is loaded into both blocks.
        asm_statement("mbarrier.init.shared::cta.b64 [$0], $1;", {empty(i64(s)), b_.getInt32(consumers * cluster)});
      }
      asm_statement("fence.mbarrier_init.release.cluster;");
    });
    // Every block's mbarriers exist before any block of its cluster loads into it or arrives on them.
    auto cluster_barrier = [&] { asm_statement("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;"); };
    if (cluster > 1) cluster_barrier();
    else barrier();
    Value* first = b_.CreateUDiv(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x), i64(cluster));
    Value* step = b_.CreateUDiv(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x), i64(cluster));
    // k-steps so far (stage it % S, phase (it / S) % 2), in the entry block so that it lives in a register
    llvm::IRBuilder<> entry(&f_->getEntryBlock(), f_->getEntryBlock().begin());
    Value* it = entry.CreateAlloca(b_.getInt64Ty(), nullptr, "it");
    b_.CreateStore(i64(0), it);
    auto stage = [&](Value* i) { return b_.CreateURem(i, i64(S)); };
    auto phase = [&](Value* i) { return i32(b_.CreateAnd(b_.CreateUDiv(i, i64(S)), i64(1))); };
    Value *a_bs = f_->getArg(v0_ + 6), *b_bs = f_->getArg(v0_ + 9);
    if_else(
        b_.CreateICmpULT(raw_tid, i64(128)),
        [&] {
          if (regs.first) asm_statement("setmaxnreg.dec.sync.aligned.u32 " + std::to_string(regs.first) + ";");
          if_then(b_.CreateICmpEQ(raw_tid, i64(0)), [&] {
            loop(first, total, step, [&](Value* tile) {
              auto [p, m0, n0] = tile_of(tile);
              // An operand shared by every product (batch stride 0) is one matrix of its map.
              Value* pa = b_.CreateSelect(b_.CreateICmpEQ(a_bs, i64(0)), i64(0), p);
              Value* pb = b_.CreateSelect(b_.CreateICmpEQ(b_bs, i64(0)), i64(0), p);
              loop(i64(0), ktiles, i64(1), [&](Value* kt) {
                Value* i = b_.CreateLoad(b_.getInt64Ty(), it);
                Value* s = stage(i);
                mbarrier_wait(empty(s), b_.CreateXor(phase(i), b_.getInt32(1)));
                asm_statement("mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;", {full(s), b_.getInt32(stage_bytes)});
                Value* at = b_.CreateAdd(stages0, b_.CreateMul(s, i64(stage_bytes)));
                Value* k0 = b_.CreateMul(kt, i64(t_.bk));
                tma_load(A, maps_[0], at, k0, m0, pa, full(s));
                tma_load(B, maps_[1], b_.CreateAdd(at, i64(a_bytes)), k0, n0, pb, full(s), cluster > 1 ? rank : nullptr);
                b_.CreateStore(b_.CreateAdd(i, i64(1)), it);
              });
            });
          });
        },
        [&] {
          if (regs.second) asm_statement("setmaxnreg.inc.sync.aligned.u32 " + std::to_string(regs.second) + ";");
          Value* ctid = b_.CreateSub(raw_tid, i64(128));
          Value* a_rows = warpgroup_rows(ctid);
          Value* leader = b_.CreateICmpEQ(b_.CreateAnd(ctid, i64(127)), i64(0));
          auto release = [&](Value* i) {  // k-step i's stage, by one thread of each consumer warpgroup
            if_then(leader, [&] {
              asm_statement("mbarrier.arrive.shared::cta.b64 _, [$0];", {empty(stage(i))});
              if (cluster > 1)  // and in the other block, whose loads write this block's stage too
                asm_statement("{\n.reg .b32 ra;\nmapa.shared::cluster.u32 ra, $0, $1;\n"
                              "mbarrier.arrive.shared::cluster.b64 _, [ra];\n}",
                              {empty(stage(i)), i32(b_.CreateXor(rank, i64(1)))});
            });
          };
          loop(first, total, step, [&](Value* tile) {
            auto [p, m0, n0] = tile_of(tile);
            for (int i = 0; i < t_.tm * t_.tn; ++i) b_.CreateStore(llvm::ConstantFP::get(ty_, 0.0), acc_at(i));
            loop(i64(0), ktiles, i64(1), [&](Value* kt) {
              Value* i = b_.CreateLoad(b_.getInt64Ty(), it);
              Value* s = stage(i);
              mbarrier_wait(full(s), phase(i));
              Value* at = b_.CreateAdd(stages0, b_.CreateMul(s, i64(stage_bytes)));
              wgmma_step(A, B, b_.CreateAdd(at, a_rows), b_.CreateAdd(at, i64(a_bytes)));
              if_then(b_.CreateICmpUGT(kt, i64(0)), [&] { release(b_.CreateSub(i, i64(1))); });
              b_.CreateStore(b_.CreateAdd(i, i64(1)), it);
            });
            wgmma_drain();
            if_then(b_.CreateICmpUGT(ktiles, i64(0)),
                    [&] { release(b_.CreateSub(b_.CreateLoad(b_.getInt64Ty(), it), i64(1))); });
            store(p, m0, n0);
          });
          if (red_) finish_reduction(b_.CreateSub(raw_tid, i64(128)));  // the consumers alone (consumer_sync)
        });
    // No block leaves while the other may still load into it or arrive on its mbarriers.
    if (cluster > 1) cluster_barrier();
  }

  // The prefetch registers into shared-memory buffer `buf`.
  void stash(Operand& o, int buf) {
    const OperandTile& t = o.tile;
    llvm::Type* regs_ty = llvm::ArrayType::get(load_type(t), t.loads);
    for (int j = 0; j < t.loads; ++j) {
      Value* v = b_.CreateLoad(load_type(t), b_.CreateConstInBoundsGEP2_32(regs_ty, o.regs, 0, j));
      if (!t.along_k || t.width == 1) {
        b_.CreateAlignedStore(v, smem_at(o, buf, o.stash_at[j], 0), llvm::Align(esize_ * t.width));
        continue;
      }
      for (int i = 0; i < t.width; ++i)
        b_.CreateAlignedStore(b_.CreateExtractElement(v, i), smem_at(o, buf, o.stash_at[j], i * t.row_len()),
                              llvm::Align(esize_));
    }
  }

  // This thread's elements of one k-row of a staged tile: `groups` reads of `frag` elements, a
  // block-row (rows / groups) apart.
  std::vector<Value*> fragment(const Operand& o, int buf, int kk) {
    const OperandTile& t = o.tile;
    std::vector<Value*> out;
    for (int g = 0; g < t.groups; ++g) {
      int64_t offset = static_cast<int64_t>(kk) * t.row_len() + static_cast<int64_t>(g) * (t.rows / t.groups);
      Value* v = b_.CreateAlignedLoad(vec(t.frag), smem_at(o, buf, o.lane_at, offset), llvm::Align(esize_ * t.frag));
      for (int i = 0; i < t.frag; ++i) out.push_back(t.frag == 1 ? v : b_.CreateExtractElement(v, i));
    }
    return out;
  }

  // One k-step on the tensor cores from the stages at a_at, b_at (element indices): the warp's
  // tile is ti x tj mma tiles; each k-slice of the step, a thread reads its fragment elements of
  // every row tile and column tile (shape_ says where they are, relative to (group, in_group))
  // and issues the ti x tj mmas. Accumulator c of tile (i, j) is acc[(i tj + j) c_per + c].
  void mma_multiply(const Operand& a, const Operand& b, Value* a_at, Value* b_at) {
    const MmaShape& sh = shape_;
    const int ti = 4 * t_.tm / sh.m, tj = 8 * t_.tn / sh.n;
    std::vector<Value*> acc;
    for (int i = 0; i < t_.tm * t_.tn; ++i) acc.push_back(b_.CreateLoad(ty_, acc_at(i)));
    Value* a_base = b_.CreateInBoundsGEP(ty_, dyn_, b_.CreateAdd(a_at, a.lane_at));
    Value* b_base = b_.CreateInBoundsGEP(ty_, dyn_, b_.CreateAdd(b_at, b.lane_at));
    // Fragment element (x, kk) of an operand: its offset from the thread's first element.
    auto read = [&](const Operand& o, Value* base, int x, int kk) {
      const int64_t len = o.tile.row_len();
      int64_t off = o.tile.x_major ? x * len + kk : kk * len + x;
      Value* v = b_.CreateAlignedLoad(ty_, b_.CreateConstInBoundsGEP1_64(ty_, base, off), llvm::Align(esize_));
      return sh.tf32 ? b_.CreateIntrinsic(llvm::Intrinsic::nvvm_f2tf32_rna, {}, {v}) : v;
    };
    for (int kk = 0; kk < t_.bk; kk += sh.k) {
      std::vector<std::vector<Value*>> af(ti), bf(tj);
      for (int i = 0; i < ti; ++i)
        for (auto [x, dk] : sh.a) af[i].push_back(read(a, a_base, i * sh.m + x, kk + dk));
      for (int j = 0; j < tj; ++j)
        for (auto [x, dk] : sh.b) bf[j].push_back(read(b, b_base, j * sh.n + x, kk + dk));
      mma_tiles(af, bf, acc);
    }
    for (int i = 0; i < t_.tm * t_.tn; ++i) b_.CreateStore(acc[i], acc_at(i));
  }

  // The mmas of one k-slice: row tile i's A fragment af[i] by column tile j's B fragment bf[j]
  // into the accumulators of tile (i, j), acc[(i tj + j) c_per ..].
  void mma_tiles(const std::vector<std::vector<Value*>>& af, const std::vector<std::vector<Value*>>& bf,
                 std::vector<Value*>& acc) {
    const int ti = static_cast<int>(af.size()), tj = static_cast<int>(bf.size()), c_per = 2 * shape_.c_rows;
    for (int i = 0; i < ti; ++i)
      for (int j = 0; j < tj; ++j) {
        const int c = (i * tj + j) * c_per;
        std::vector<Value*> args = af[i];
        args.insert(args.end(), bf[j].begin(), bf[j].end());
        args.insert(args.end(), acc.begin() + c, acc.begin() + c + c_per);
        Value* d = shape_.ptx.empty() ? b_.CreateIntrinsic(shape_.op, {}, args) : inline_mma(shape_, args);
        for (int e = 0; e < c_per; ++e) acc[c + e] = b_.CreateExtractValue(d, e);
      }
  }

  // One mma as inline PTX: outputs the c_per accumulators, inputs the fragments then them.
  Value* inline_mma(const MmaShape& sh, const std::vector<Value*>& args) {
    const int c_per = 2 * sh.c_rows;
    std::vector<llvm::Type*> ins;
    for (Value* v : args) ins.push_back(v->getType());
    auto* ret = llvm::StructType::get(ctx_, std::vector<llvm::Type*>(c_per, ty_));
    auto* fty = llvm::FunctionType::get(ret, ins, false);
    std::string constraints;
    for (int i = 0; i < c_per; ++i) constraints += "=d,";
    for (size_t i = 0; i < args.size(); ++i) constraints += i + 1 < args.size() ? "d," : "d";
    return b_.CreateCall(fty, llvm::InlineAsm::get(fty, sh.ptx, constraints, false), args);
  }

  // The tensor-core accumulators: each a run of two elements of a row (group, or group + 8 for
  // the second half of a 16-row tile), at columns 2 in_group, 2 in_group + 1. With an epilogue,
  // where every run of the thread is whole (the tile inside the product, outputs aligned: all but
  // a product's edge tiles) they are stored by one branch-free store_whole (whole_or; store_tile
  // does the same for the FMA kernel); the edge tiles go run by run. Run by run, each run's epilogue loads waited for the run before: for W9's layer at
  // 4096^3 on TF32 the epilogue then cost half of a separate pass over the product. An epilogue
  // that loads nothing (a cast back to float16, a relu) keeps the run-by-run code, whose time
  // was measured (docs/cuda.md, the 16-bit products' epilogue).
  void mma_store(const Store& st, Value* m0, Value* n0) {
    const MmaShape& sh = shape_;
    const int ti = 4 * t_.tm / sh.m, tj = 8 * t_.tn / sh.n;
    auto row_at = [&](int i, int h) { return b_.CreateAdd(b_.CreateAdd(m0, wm_), b_.CreateAdd(group_, i64(i * sh.m + 8 * h))); };
    auto col_at = [&](int j) { return b_.CreateAdd(b_.CreateAdd(n0, wn_), b_.CreateAdd(b_.CreateMul(in_group_, i64(2)), i64(j * sh.n))); };
    auto vals_at = [&](int i, int h, int j) {
      int c = (i * tj + j) * 2 * sh.c_rows + 2 * h;
      return std::vector<Value*>{b_.CreateLoad(ty_, acc_at(c)), b_.CreateLoad(ty_, acc_at(c + 1))};
    };
    auto run_by_run = [&] {
      for (int i = 0; i < ti; ++i)
        for (int h = 0; h < sh.c_rows; ++h) {
          Value* row = row_at(i, h);
          if_then(b_.CreateICmpSLT(row, st.m), [&] {
            for (int j = 0; j < tj; ++j) store_run(st, row, col_at(j), vals_at(i, h, j));
          });
        }
    };
    if (!epilogue_reads_memory()) return run_by_run();  // nothing to wait for: the run-by-run code
    std::vector<Value*> rows;
    std::vector<Run> runs;
    for (int i = 0; i < ti; ++i)
      for (int h = 0; h < sh.c_rows; ++h) {
        rows.push_back(row_at(i, h));
        for (int j = 0; j < tj; ++j) runs.push_back(run_at(st, rows.back(), col_at(j), vals_at(i, h, j)));
      }
    whole_or(st, rows, runs, run_by_run);
  }

  // ---- 16-bit operands on the tensor cores (issue 29) ----
  // ldmatrix.x4 reads four 8 x 8 matrices of 16-bit elements, lanes 8 j .. 8 j + 7 giving the
  // addresses of matrix j's rows (16 contiguous bytes each); lane l receives, per matrix, the two
  // elements of row l / 4 at columns 2 (l % 4) and 2 (l % 4) + 1, which is an mma fragment
  // register: with the row along m (A) or n (B) and the column along k. An operand staged
  // x-major ([x][k]) has those rows in memory; one staged k-major ([k][x]) has their columns,
  // and ldmatrix.trans transposes them. A's four matrices are the m16n8k16 fragment's a0..a3
  // (rows +0/+8, k +0/+8); B's are b0, b1 of two neighbouring n-tiles (n +0/+8, k +0/+8).
  void ldmatrix_lanes(const Operand& A, const Operand& B, Value* lane) {
    Value* j = b_.CreateLShr(lane, 3);
    Value* r = b_.CreateAnd(lane, i64(7));
    Value* lo = b_.CreateMul(b_.CreateAnd(j, i64(1)), i64(8));  // matrices 1, 3
    Value* hi = b_.CreateMul(b_.CreateLShr(j, 1), i64(8));       // matrices 2, 3
    // Element (x, kk) of the operand's stage, as an element index.
    auto at = [&](const Operand& o, Value* x, Value* kk) {
      const int64_t len = o.tile.row_len();
      return o.tile.x_major ? b_.CreateAdd(b_.CreateMul(x, i64(len)), kk) : b_.CreateAdd(b_.CreateMul(kk, i64(len)), x);
    };
    // A: matrix j covers rows wm + lo .. + 7, k hi .. + 7; B: columns wn + hi .. + 7, k lo .. + 7.
    a_ld_ = A.tile.x_major ? at(A, b_.CreateAdd(wm_, b_.CreateAdd(lo, r)), hi) : at(A, b_.CreateAdd(wm_, lo), b_.CreateAdd(hi, r));
    b_ld_ = B.tile.x_major ? at(B, b_.CreateAdd(wn_, b_.CreateAdd(hi, r)), lo) : at(B, b_.CreateAdd(wn_, hi), b_.CreateAdd(lo, r));
  }

  // One k-step of 16-bit operands from the stages at a_at, b_at: per k-slice of 16, the warp's
  // (tm / 4) row tiles of A and tn column tiles of B by ldmatrix, then their (tm / 4) x tn
  // m16n8k16 mmas into the float32 accumulators (laid out as mma_multiply's).
  void half_multiply(const Operand& a, const Operand& b, Value* a_at, Value* b_at) {
    const int ti = t_.tm / 4, tj = t_.tn;
    std::vector<Value*> acc;
    for (int i = 0; i < t_.tm * t_.tn; ++i) acc.push_back(b_.CreateLoad(ty_, acc_at(i)));
    Value* a_base = b_.CreateInBoundsGEP(in_ty_, dyn_, b_.CreateAdd(a_at, a_ld_));
    Value* b_base = b_.CreateInBoundsGEP(in_ty_, dyn_, b_.CreateAdd(b_at, b_ld_));
    // The four registers of one ldmatrix.x4 at x0, k0 (tile coordinates) from the lane's base.
    auto load4 = [&](const Operand& o, Value* base, int x0, int k0) {
      const int64_t len = o.tile.row_len();
      Value* p = b_.CreateConstInBoundsGEP1_64(in_ty_, base, o.tile.x_major ? x0 * len + k0 : k0 * len + x0);
      llvm::Intrinsic::ID id = o.tile.x_major ? llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_b16
                                              : llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_trans_b16;
      Value* r = b_.CreateIntrinsic(id, {p->getType()}, {p});
      std::vector<Value*> regs;
      for (unsigned e = 0; e < 4; ++e) {
        Value* v = b_.CreateExtractValue(r, e);
        // float16's mma takes <2 x half> registers, bfloat16's i32.
        regs.push_back(g_.in_dtype == DType::Float16 ? b_.CreateBitCast(v, llvm::FixedVectorType::get(in_ty_, 2)) : v);
      }
      return regs;
    };
    for (int kk = 0; kk < t_.bk; kk += 16) {
      std::vector<std::vector<Value*>> af(ti), bf(tj);
      for (int i = 0; i < ti; ++i) af[i] = load4(a, a_base, i * 16, kk);
      for (int j = 0; j < tj; j += 2) {
        std::vector<Value*> r = load4(b, b_base, j * 8, kk);
        bf[j] = {r[0], r[1]};
        bf[j + 1] = {r[2], r[3]};
      }
      mma_tiles(af, bf, acc);
    }
    for (int i = 0; i < t_.tm * t_.tn; ++i) b_.CreateStore(acc[i], acc_at(i));
  }

  void multiply(const Operand& a, const Operand& b, int buf) {
    std::vector<Value*> acc;
    for (int i = 0; i < t_.tm * t_.tn; ++i) acc.push_back(b_.CreateLoad(ty_, acc_at(i)));
    for (int kk = 0; kk < t_.bk; ++kk) {
      std::vector<Value*> ar = fragment(a, buf, kk);
      std::vector<Value*> br = fragment(b, buf, kk);
      for (int i = 0; i < t_.tm; ++i)
        for (int j = 0; j < t_.tn; ++j) {
          Value*& c = acc[i * t_.tn + j];
          c = b_.CreateIntrinsic(llvm::Intrinsic::fma, {ty_}, {ar[i], br[j], c});
        }
    }
    for (int i = 0; i < t_.tm * t_.tn; ++i) b_.CreateStore(acc[i], acc_at(i));
  }

  // Tile (ti, tj) of the lower triangle for linear index t = ti (ti + 1) / 2 + tj, tj <= ti:
  // ti from the square root in double (exact enough far past any real tile count), corrected by
  // one either way.
  std::pair<Value*, Value*> triangle_tile(Value* t) {
    llvm::Type* f64 = b_.getDoubleTy();
    Value* x = b_.CreateFAdd(b_.CreateFMul(b_.CreateUIToFP(t, f64), llvm::ConstantFP::get(f64, 8.0)), llvm::ConstantFP::get(f64, 1.0));
    Value* root = b_.CreateIntrinsic(llvm::Intrinsic::sqrt, {f64}, {x});
    Value* ti = b_.CreateFPToUI(b_.CreateFMul(b_.CreateFSub(root, llvm::ConstantFP::get(f64, 1.0)), llvm::ConstantFP::get(f64, 0.5)),
                                b_.getInt64Ty());
    auto first = [&](Value* r) { return b_.CreateUDiv(b_.CreateMul(r, b_.CreateAdd(r, i64(1))), i64(2)); };
    ti = b_.CreateSelect(b_.CreateICmpUGT(first(ti), t), b_.CreateSub(ti, i64(1)), ti);
    Value* up = b_.CreateAdd(ti, i64(1));
    ti = b_.CreateSelect(b_.CreateICmpULE(first(up), t), up, ti);
    return {ti, b_.CreateSub(t, first(ti))};
  }

  // The register tile at (m0, n0), rows and columns mapped as fragment() read them; `mirror`:
  // element (i, j) goes to (j, i) instead (gram), each register column then a run of rows.
  void store_tile(const Store& st, Value* m0, Value* n0, bool mirror) {
    const OperandTile &a = a_, &b = bt_;
    auto row_of = [&](int gi, int i) {
      return b_.CreateAdd(m0, b_.CreateAdd(i64(static_cast<int64_t>(gi) * (a.rows / a.groups) + i), b_.CreateMul(ty_idx_, i64(a.frag))));
    };
    auto col_of = [&](int gj, int j) {
      return b_.CreateAdd(n0, b_.CreateAdd(i64(static_cast<int64_t>(gj) * (b.rows / b.groups) + j), b_.CreateMul(tx_, i64(b.frag))));
    };
    auto acc = [&](int r, int c) { return b_.CreateLoad(ty_, acc_at(r * t_.tn + c)); };
    if (!mirror) {
      auto vals_at = [&](int r, int gj) {  // register row r's run in column group gj
        std::vector<Value*> vals;
        for (int j = 0; j < b.frag; ++j) vals.push_back(acc(r, gj * b.frag + j));
        return vals;
      };
      auto run_by_run = [&] {
        for (int gi = 0; gi < a.groups; ++gi)
          for (int i = 0; i < a.frag; ++i) {
            Value* row = row_of(gi, i);
            if_then(b_.CreateICmpSLT(row, st.m), [&] {
              for (int gj = 0; gj < b.groups; ++gj) store_run(st, row, col_of(gj, 0), vals_at(gi * a.frag + i, gj));
            });
          }
      };
      if (!epilogue_reads_memory()) return run_by_run();  // as mma_store
      std::vector<Value*> rows;
      std::vector<Run> runs;
      for (int gi = 0; gi < a.groups; ++gi)
        for (int i = 0; i < a.frag; ++i) {
          rows.push_back(row_of(gi, i));
          for (int gj = 0; gj < b.groups; ++gj) runs.push_back(run_at(st, rows.back(), col_of(gj, 0), vals_at(gi * a.frag + i, gj)));
        }
      return whole_or(st, rows, runs, run_by_run);
    }
    for (int gj = 0; gj < b.groups; ++gj)
      for (int j = 0; j < b.frag; ++j) {
        Value* row = col_of(gj, j);
        int c = gj * b.frag + j;  // register column
        if_then(b_.CreateICmpSLT(row, st.m), [&] {
          for (int gi = 0; gi < a.groups; ++gi) {
            std::vector<Value*> vals;
            for (int i = 0; i < a.frag; ++i) vals.push_back(acc(gi * a.frag + i, c));
            store_run(st, row, row_of(gi, 0), vals);
          }
        });
      }
  }

  // Whether the epilogue loads an operand from memory besides the product (a bias, a residual).
  bool epilogue_reads_memory() const {
    if (!g_.epilogue) return false;
    for (size_t i = 0; i < g_.epilogue->leaves.size(); ++i)
      if (static_cast<int>(i) != g_.product_leaf && g_.epilogue->leaves[i].ptr >= 0) return true;
    return false;
  }

  // A run of product values: elements (row, col .. col + vals.size() - 1) of product st.p (col a
  // multiple of the run's length), where they go (idx in c; first, the epilogue's indexed
  // operands' offsets of its first element) and whether whole vectors can take it: in range
  // (row < m and the run inside n) and, for every vector output of the epilogue, aligned.
  struct Run {
    Value *col, *idx, *whole;
    std::vector<Value*> vals, first;
  };

  Run run_at(const Store& st, Value* row, Value* col, std::vector<Value*> vals) {
    const int w = static_cast<int>(vals.size());
    Run r{col, b_.CreateAdd(st.base, b_.CreateAdd(b_.CreateMul(row, st.n), col)), nullptr, std::move(vals), {}};
    r.whole = w == 1 ? b_.getFalse()
                     : b_.CreateAnd(b_.CreateICmpEQ(b_.CreateURem(st.n, i64(w)), i64(0)),
                                    b_.CreateICmpSLE(b_.CreateAdd(col, i64(w)), st.n));
    if (!g_.epilogue) return r;
    const Kernel& k = *g_.epilogue;
    std::vector<Value*> coords;  // of the run's first element in the epilogue's space
    if (k.rank == 1) coords = {r.idx};
    else if (k.rank == 2) coords = {b_.CreateAdd(b_.CreateMul(st.p, st.m), row), col};
    else coords = {st.p, row, col};
    r.first.resize(k.num_indexed);
    for (int x = 0; x < k.num_indexed; ++x) {
      r.first[x] = space_.offsets[x];
      for (int d = 0; d < k.rank; ++d) r.first[x] = b_.CreateAdd(r.first[x], b_.CreateMul(coords[d], space_.strides[x][d]));
    }
    for (const KernelOutput& o : k.outputs)
      if (vector_out(o, w)) r.whole = b_.CreateAnd(r.whole, b_.CreateICmpEQ(b_.CreateURem(r.first[o.index], i64(w)), i64(0)));
    return r;
  }

  // Epilogue outputs stored as vectors: float32/float64 (and 16-bit floats, a product rounded back
  // to its operands' dtype: issue 29), unit stride along the run.
  static bool vector_out(const KernelOutput& o, int w) {
    return w > 1 && (o.dtype == DType::Float32 || o.dtype == DType::Float64 || is_half(o.dtype)) &&
           o.strides.back() == StrideKind::Unit;
  }

  // The run (row < m) stored: as whole vectors where it can be, else element by element.
  void store_run(const Store& st, Value* row, Value* col, const std::vector<Value*>& vals) {
    Run r = run_at(st, row, col, vals);
    if_else(r.whole, [&] { store_whole(st, {r}); }, [&] { store_elements(st, r); });
  }

  // Runs that whole vectors take (each r.whole holds), stored without a branch. With an epilogue
  // every run's values are computed before any is stored, so that the epilogue's loads (a bias,
  // a residual) are all in flight at once instead of one run's after another's store.
  void store_whole(const Store& st, const std::vector<Run>& runs) {
    if (!g_.epilogue) {
      for (const Run& r : runs)
        b_.CreateAlignedStore(pack(r.vals), b_.CreateInBoundsGEP(ty_, st.pc, r.idx), llvm::Align(esize_ * r.vals.size()));
      return;
    }
    const Kernel& k = *g_.epilogue;
    std::vector<std::vector<std::vector<Value*>>> v(runs.size());  // [run][element][instr]
    for (size_t i = 0; i < runs.size(); ++i)
      for (int j = 0; j < static_cast<int>(runs[i].vals.size()); ++j) v[i].push_back(epilogue_at(runs[i], j));
    if (red_) {
      for (const auto& run : v)
        for (const auto& e : run) fold(e);
      return;
    }
    for (size_t i = 0; i < runs.size(); ++i) {
      const Run& r = runs[i];
      const int w = static_cast<int>(r.vals.size());
      for (const KernelOutput& o : k.outputs) {
        if (!vector_out(o, w)) {
          for (int j = 0; j < w; ++j) body_->store(o.dtype, v[i][j][o.instr], epi_ptrs_[o.ptr], epilogue_offsets(r, j)[o.index]);
          continue;
        }
        std::vector<Value*> out;
        for (int j = 0; j < w; ++j) out.push_back(v[i][j][o.instr]);
        Value* at = b_.CreateInBoundsGEP(out[0]->getType(), epi_ptrs_[o.ptr], r.first[o.index]);
        b_.CreateAlignedStore(pack(out), at, llvm::Align(dtype_size(o.dtype) * w));
      }
    }
  }

  // The thread's runs (of rows `rows`) by one store_whole where every row is in range and every
  // run whole, else by run_by_run.
  void whole_or(const Store& st, const std::vector<Value*>& rows, const std::vector<Run>& runs,
                const std::function<void()>& run_by_run) {
    Value* all = b_.getTrue();
    for (Value* row : rows) all = b_.CreateAnd(all, b_.CreateICmpSLT(row, st.m));
    for (const Run& r : runs) all = b_.CreateAnd(all, r.whole);
    if_else(all, [&] { store_whole(st, runs); }, run_by_run);
  }

  // The run's elements one at a time, each where it is in range (col + j < n).
  void store_elements(const Store& st, const Run& r) {
    for (int j = 0; j < static_cast<int>(r.vals.size()); ++j)
      if_then(b_.CreateICmpSLT(b_.CreateAdd(r.col, i64(j)), st.n), [&] {
        if (!g_.epilogue) {
          b_.CreateAlignedStore(r.vals[j], b_.CreateInBoundsGEP(ty_, st.pc, b_.CreateAdd(r.idx, i64(j))), llvm::Align(esize_));
          return;
        }
        std::vector<Value*> v = epilogue_at(r, j);
        if (red_) return fold(v);
        for (const KernelOutput& o : g_.epilogue->outputs)
          body_->store(o.dtype, v[o.instr], epi_ptrs_[o.ptr], epilogue_offsets(r, j)[o.index]);
      });
  }

  // ---- A reduction epilogue (gemm.h) ----
  // Float sums and means of float32 accumulate in double, as the reduction kernels do; the
  // result is rounded once.
  const KernelOutput& reduced() const { return g_.epilogue->outputs.at(0); }
  bool wide() const { return gpu_sums_in_double(g_.epilogue->reduce_op, reduced().dtype); }
  llvm::Type* acc_type() { return wide() ? b_.getDoubleTy() : body_->value_type(reduced().dtype); }
  Value* acc_identity() { return wide() ? llvm::ConstantFP::get(b_.getDoubleTy(), 0.0) : body_->identity(g_.epilogue->reduce_op, reduced().dtype); }
  Value* acc_combine(Value* acc, Value* v) {
    return wide() ? b_.CreateFAdd(acc, v) : body_->combine(g_.epilogue->reduce_op, reduced().dtype, acc, v);
  }
  // One element's epilogue values folded into the thread's accumulator.
  void fold(const std::vector<Value*>& v) {
    Value* x = v[reduced().instr];
    if (wide()) x = b_.CreateFPExt(x, b_.getDoubleTy());
    b_.CreateStore(acc_combine(b_.CreateLoad(acc_type(), racc_), x), racc_);
  }
  // A barrier of the threads that compute tiles: the block's, or in the TMA kernel the consumer
  // warpgroups' alone (named barrier 1; the producer never joins one after the start).
  void consumer_sync() {
    if (!tma_) return barrier();
    asm_statement("bar.sync 1, " + std::to_string(t_.threads()) + ";");
  }
  // v combined over the block in a fixed order (lanes by butterfly, then warps in order); the
  // result is thread 0's. Ends with a barrier, so the slots can be used again.
  Value* block_reduce(Value* v, Value* tid, Value* slots) {
    for (int mask = 16; mask >= 1; mask /= 2) v = acc_combine(v, shuffle_xor(b_, v, mask));
    Value* lane = b_.CreateAnd(tid, i64(31));
    Value* warp = b_.CreateLShr(tid, 5);
    auto slot = [&](Value* w) { return b_.CreateInBoundsGEP(b_.getInt64Ty(), slots, w); };  // 8 bytes each
    if_then(b_.CreateICmpEQ(lane, i64(0)), [&] { b_.CreateStore(v, slot(warp)); });
    consumer_sync();
    llvm::AllocaInst* r = rtmp_;
    b_.CreateStore(v, r);
    if_then(b_.CreateICmpEQ(tid, i64(0)), [&] {
      for (int w = 1; w < t_.threads() / 32; ++w) b_.CreateStore(acc_combine(b_.CreateLoad(acc_type(), r), b_.CreateLoad(acc_type(), slot(i64(w)))), r);
    });
    consumer_sync();
    return b_.CreateLoad(acc_type(), r);
  }
  // After the block's last tile: the block's partial goes to scratch (gemm.h's layout); the last
  // block to arrive, by the counter, combines every block's partial in block order, finishes (a
  // mean divides) and stores the result, and sets the counter back to 0 for the next launch.
  // Shared memory: the operands' tiles' (at least 2 KiB), free once every copy into them is
  // done: 32 slots of 8 bytes, then the last-block flag. (Static shared variables of their own
  // misaligned the tensor-core kernels' dynamic stages: an 8-byte read at 0x40c.) In the TMA
  // kernel only the consumer warpgroups reduce (tid counts them), after their last tile: every
  // stage loaded into this block, by its producer or its cluster partner's, was waited for.
  void finish_reduction(Value* tid) {
    llvm::Type* aty = acc_type();
    if (mma_) b_.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_wait_all, {}, {});
    Value* slots = red_smem_;
    Value* last_flag = b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), red_smem_, 32 * 8);
    Value* counter = red_scratch_;
    Value* partials = b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), red_scratch_, kGemmReduceHeader);
    Value* block = sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x);
    Value* blocks = sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x);
    const llvm::Align align(aty->getPrimitiveSizeInBits() / 8);
    auto fence = [&] { b_.CreateIntrinsic(llvm::Intrinsic::nvvm_membar_gl, {}, {}); };
    consumer_sync();
    Value* mine = block_reduce(b_.CreateLoad(aty, racc_), tid, slots);
    if_then(b_.CreateICmpEQ(tid, i64(0)), [&] {
      b_.CreateAlignedStore(mine, b_.CreateInBoundsGEP(aty, partials, block), align, true);
      fence();
      Value* ticket = b_.CreateAtomicRMW(llvm::AtomicRMWInst::Add, counter, b_.getInt32(1), llvm::MaybeAlign(4),
                                         llvm::AtomicOrdering::Monotonic);
      Value* last = b_.CreateICmpEQ(b_.CreateZExt(ticket, b_.getInt64Ty()), b_.CreateSub(blocks, i64(1)));
      b_.CreateStore(b_.CreateZExt(last, b_.getInt32Ty()), last_flag);
    });
    consumer_sync();
    if_then(b_.CreateICmpNE(b_.CreateLoad(b_.getInt32Ty(), last_flag), b_.getInt32(0)), [&] {
      fence();
      b_.CreateStore(acc_identity(), racc_);
      loop(tid, blocks, i64(t_.threads()), [&](Value* i) {
        Value* x = b_.CreateAlignedLoad(aty, b_.CreateInBoundsGEP(aty, partials, i), align, true);
        b_.CreateStore(acc_combine(b_.CreateLoad(aty, racc_), x), racc_);
      });
      Value* all = block_reduce(b_.CreateLoad(aty, racc_), tid, slots);
      if_then(b_.CreateICmpEQ(tid, i64(0)), [&] {
        const KernelOutput& out = reduced();
        Value* r = space_.finish(b_, *g_.epilogue, all, b_.CreateSub(space_.reduce_end, space_.reduce_begin));
        if (wide()) r = b_.CreateFPTrunc(r, body_->value_type(out.dtype));
        body_->store(out.dtype, r, epi_ptrs_[out.ptr], space_.offsets[out.index]);
        b_.CreateAlignedStore(b_.getInt32(0), counter, llvm::Align(4), true);
      });
    });
  }

  // The epilogue's operands' offsets at the run's element j: the product's leaf reads the run's
  // j-th value (held in product_, which SROA keeps in registers), every other operand its memory.
  std::vector<Value*> epilogue_offsets(const Run& r, int j) {
    const Kernel& k = *g_.epilogue;
    std::vector<Value*> off(k.num_indexed);
    for (int x = 0; x < k.num_indexed; ++x) off[x] = b_.CreateAdd(r.first[x], b_.CreateMul(i64(j), space_.strides[x][k.rank - 1]));
    off[k.leaves[g_.product_leaf].index] = i64(j);
    return off;
  }

  // The epilogue's values (one per instruction) at the run's element j.
  std::vector<Value*> epilogue_at(const Run& r, int j) {
    const Kernel& k = *g_.epilogue;
    b_.CreateStore(r.vals[j], b_.CreateConstInBoundsGEP2_32(product_->getAllocatedType(), product_, 0, j));
    std::vector<Value*> ptrs = epi_ptrs_;
    ptrs[k.leaves[g_.product_leaf].ptr] = product_;
    return body_->emit(ptrs, epilogue_offsets(r, j));
  }

  Value* pack(const std::vector<Value*>& vals) {
    Value* v = llvm::UndefValue::get(llvm::FixedVectorType::get(vals[0]->getType(), static_cast<unsigned>(vals.size())));
    for (size_t j = 0; j < vals.size(); ++j) v = b_.CreateInsertElement(v, vals[j], j);
    return v;
  }

  const GemmKernel& g_;
  const GemmTile& t_;
  llvm::Module& m_;
  llvm::LLVMContext& ctx_;
  llvm::IRBuilder<> b_;
  OperandTile a_, bt_;
  llvm::Type* ty_ = nullptr;
  int esize_ = 4;
  llvm::Type* in_ty_ = nullptr;  // the operands' element type: ty_, or half/bfloat (issue 29)
  int in_esize_ = 4;
  bool half_ = false;                     // 16-bit operands on the tensor cores (half_multiply)
  bool wg_ = false;                       // ... on the warpgroup mma (wgmma_pipeline)
  bool tma_ = false;                      // ... its stages loaded by TMA, warp specialized (tma_main)
  std::array<Value*, 2> maps_{};          // tma: A's and B's tensor maps (kernel parameters)
  unsigned v0_ = 0;                       // the entry's first i64 parameter (m)
  Value *a_ld_ = nullptr, *b_ld_ = nullptr;  // their ldmatrix lane offsets (ldmatrix_lanes)
  llvm::Function* f_ = nullptr;
  Value *tx_ = nullptr, *ty_idx_ = nullptr;
  bool mma_;                                                   // the tensor-core path
  MmaShape shape_;                                             // its instruction
  llvm::GlobalVariable* dyn_ = nullptr;                        // its stages (dynamic shared memory)
  Value *wm_ = nullptr, *wn_ = nullptr, *group_ = nullptr, *in_group_ = nullptr;
  llvm::AllocaInst* acc_ = nullptr;
  // The epilogue's operands, iteration space and body, and the run of product values it reads.
  std::vector<Value*> epi_ptrs_;
  LoopSpace space_;
  std::unique_ptr<BodyEmitter> body_;
  llvm::AllocaInst* product_ = nullptr;
  // A reduction epilogue: the thread's accumulator and the scratch (counter, block partials).
  bool red_ = false;
  llvm::AllocaInst *racc_ = nullptr, *rtmp_ = nullptr;
  Value* red_scratch_ = nullptr;
  llvm::GlobalVariable* red_smem_ = nullptr;  // the shared memory its slots reuse (finish_reduction)
};

// A tile forced by ARRAYC_GEMM_TILE: BMxBNxBK/TMxTN, then "/sS" (S pipeline stages on the tensor
// cores, 0: the default), "/simt" (no tensor cores), "/wg" (the warpgroup kernel; "/cp": filled by
// cp.async, not TMA; "/c1", "/c2": TMA in single blocks, in clusters of two) and "/m16kK" or
// "/m8k4" (the float64 mma shape: f64_k = K, or 0 for m8n8k4; -1: not given) in any order.
GemmTile parse_tile(const std::string& s, DType dtype, bool& simt, bool& wg, bool& cp, int& clusters, int& stages,
                    int& f64_k) {
  GemmTile t;
  char tail = 0;
  simt = wg = cp = false;
  clusters = 0;
  stages = 0;
  f64_k = -1;
  std::string tile = s;
  for (size_t slash; (slash = tile.rfind('/')) != std::string::npos;) {
    std::string opt = tile.substr(slash + 1);
    int n = 0;
    if (opt == "simt") simt = true;
    else if (opt == "wg") wg = true;
    else if (opt == "cp") cp = true;
    else if (opt == "c1" || opt == "c2") clusters = opt[1] - '0';
    else if (std::sscanf(opt.c_str(), "s%d%c", &n, &tail) == 1 && n >= 2 && n <= 8) stages = n;
    else if (opt == "m8k4") f64_k = 0;
    else if (std::sscanf(opt.c_str(), "m16k%d%c", &n, &tail) == 1 && (n == 4 || n == 8 || n == 16)) f64_k = n;
    else break;
    tile.resize(slash);
  }
  if (std::sscanf(tile.c_str(), "%dx%dx%d/%dx%d%c", &t.bm, &t.bn, &t.bk, &t.tm, &t.tn, &tail) != 5)
    throw Error("ARRAYC_GEMM_TILE=" + s +
                ": expected BMxBNxBK/TMxTN[/sS][/simt][/wg[/cp|/c1|/c2]][/m16kK|/m8k4] (S: 2 to 8 stages; K: 4, 8 or 16), e.g. 128x128x8/8x4/s3");
  if (std::string why = tile_problem(t, dtype); !why.empty() && !wg)  // the warpgroup kernel's: wgmma_problem
    throw Error("ARRAYC_GEMM_TILE=" + s + " cannot be used for " + dtype_name(dtype) + ": " + why);
  return t;
}

int64_t tiles(const GemmTile& t, const GemmProblem& p, bool gram = false) {
  int64_t mt = (p.m + t.bm - 1) / t.bm;
  if (gram) return mt * (mt + 1) / 2;
  return mt * ((p.n + t.bn - 1) / t.bn) * p.batch;
}

std::string identifier(const std::string& s) {
  std::string out = s;
  for (char& c : out)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return out;
}

}  // namespace

std::string GemmKernel::name() const {
  auto operand = [&](char which, GemmUnit u, bool v) {
    std::string s(1, which);
    s += u == GemmUnit::K ? 'k' : u == GemmUnit::Outer ? (which == 'a' ? 'm' : 'n') : 's';
    return s + std::to_string(v && u != GemmUnit::None ? vector_elems(mma ? operands() : dtype) : 1);
  };
  // 16-bit operands (issue 29): gemm_float16_float32_...
  const std::string types = is_half(in_dtype) ? std::string(dtype_name(in_dtype)) + "_" + dtype_name(dtype) : dtype_name(dtype);
  return "gemm_" + types + "_" + std::to_string(tile.bm) + "x" + std::to_string(tile.bn) + "x" +
         std::to_string(tile.bk) + "_" + std::to_string(tile.tm) + "x" + std::to_string(tile.tn) + "_" +
         operand('a', a_unit, a_vec) + "_" + operand('b', b_unit, b_vec) + (gram ? "_gram" : "") +
         (mma ? (dtype == DType::Float32 && !is_half(in_dtype) ? "_tf32_s" : "_mma_s") + std::to_string(stages) : "") +
         (mma && f64_k ? "_k" + std::to_string(f64_k) : "") + (wgmma ? "_wg" : "") + (tma ? "_tma" : "") +
         (cluster > 1 ? "_c" + std::to_string(cluster) : "") +
         (epilogue ? "_ep_" + identifier(epilogue->name) : "");
}

std::string GemmKernel::str() const {
  std::string s = "kernel " + name() + "\n";
  if (epilogue) s += "epilogue (product leaf " + std::to_string(product_leaf) + ")\n" + epilogue->str();
  return s;
}

GemmKernel choose_gemm(const GemmProblem& p, int multiprocessors) {
  GemmKernel g;
  g.dtype = p.dtype;
  // 16-bit operands (issue 29): vectors of 8 (the FMA kernel's loads of 4 are then aligned too).
  const bool half = is_half(p.in_dtype);
  if (half) g.in_dtype = p.in_dtype;
  const int64_t v = vector_elems(half ? p.in_dtype : p.dtype);
  // 16-byte loads along the unit dim need every vector's first element 16-byte aligned: the
  // first address, and the operand's other strides multiples of the vector (unless unused).
  auto vec_ok = [&](uintptr_t addr, int64_t other_stride, int64_t other_extent, int64_t batch_stride) {
    return addr % 16 == 0 && (other_extent == 1 || other_stride % v == 0) && (p.batch == 1 || batch_stride % v == 0);
  };
  g.a_unit = p.a_cs == 1 ? GemmUnit::K : p.a_rs == 1 ? GemmUnit::Outer : GemmUnit::None;
  g.b_unit = p.b_cs == 1 ? GemmUnit::Outer : p.b_rs == 1 ? GemmUnit::K : GemmUnit::None;
  g.a_vec = g.a_unit == GemmUnit::K ? vec_ok(p.a_addr, p.a_rs, p.m, p.a_bs)
            : g.a_unit == GemmUnit::Outer && vec_ok(p.a_addr, p.a_cs, p.k, p.a_bs);
  g.b_vec = g.b_unit == GemmUnit::Outer ? vec_ok(p.b_addr, p.b_rs, p.k, p.b_bs)
            : g.b_unit == GemmUnit::K && vec_ok(p.b_addr, p.b_cs, p.n, p.b_bs);

  // 16-bit operands on the tensor cores take the general kernel, both triangles, far faster than
  // the FMA triangle.
  const bool half_mma = half && p.half_mma;
  const bool gram = p.gram && p.batch == 1 && p.m == p.n && !half_mma;
  // The tensor cores: float64, and float32 where TF32 is allowed. Not for Gram products (kept on
  // FMAs, whose exact symmetry the triangle's mirror relies on). A warp's (4 tm) x (8 tn) tile
  // must be whole mma tiles (8 x 8 x 4 for float64, 16 x 8 x 8 for TF32) and fit the block's.
  const bool mma_dtype = (p.dtype == DType::Float64 || (p.dtype == DType::Float32 && p.tf32) || half_mma) && !gram;
  auto mma_ok = [&](const GemmTile& t, int stages, int f64_k) {
    const bool f64 = p.dtype == DType::Float64;
    const int im = f64 && !f64_k ? 8 : 16, ik = f64 ? (f64_k ? f64_k : 4) : half ? 16 : 8;
    if (!mma_dtype || stages < 2 || (4 * t.tm) % im || t.bm % (4 * t.tm) || t.bn % (8 * t.tn) || t.bk % ik) return false;
    // 16-bit: B's fragments come two n-tiles per ldmatrix, and each thread copies whole 16-byte runs.
    if (half && (t.tn % 2 || !tile_problem(t, p.in_dtype).empty())) return false;
    GemmKernel k = g;
    k.tile = t;
    k.mma = true;
    k.stages = stages;
    return pipeline_shared(k) <= kDynamicSharedLimit;
  };
  // Hopper's warpgroup mma (sm_90): 16-bit operands whose unit-stride dims take aligned 16-byte
  // runs (its stages are filled by 16-byte copies only); float32 on TF32 where both operands
  // run along k (the TF32 wgmma reads K-major operands only) and a tensor map can describe them
  // (the TMA's tf32 element type rounds as it loads; cp.async copies would leave the low bits,
  // which the tensor cores truncate).
  const bool tma = p.tma && tma_layout_ok(p, g);
  const bool tf32_wg = p.dtype == DType::Float32 && !half && p.tf32 && !gram && g.a_unit == GemmUnit::K &&
                       g.b_unit == GemmUnit::K && tma;
  const bool wgmma = (half_mma || tf32_wg) && p.wgmma && g.a_unit != GemmUnit::None && g.a_vec &&
                     g.b_unit != GemmUnit::None && g.b_vec;
  const DType wg_dtype = half ? p.in_dtype : p.dtype;
  // Its stages filled by TMA loads when the driver makes tensor maps, `cp` does not ask for
  // cp.async, and the operands are what a tensor map describes (tma_layout_ok); the TMA kernel
  // has one more warpgroup, the producer.
  bool cp = false;
  int clusters = 0;  // 0: where rows are misaligned (tma_rows_misaligned), 1: never, 2: always
  auto wgmma_kernel = [&](const GemmTile& t, int stages) {
    GemmKernel k = g;
    k.tile = t;
    k.mma = k.wgmma = true;
    k.tma = tma && !cp;
    k.cluster = k.tma && p.clusters && (p.m + t.bm - 1) / t.bm >= 2 && (clusters == 2 || (clusters == 0 && tma_rows_misaligned(p, g)))
                    ? 2
                    : 1;
    k.stages = stages;
    return k;
  };
  auto wgmma_ok = [&](const GemmTile& t, int stages) {
    if (!wgmma || !wgmma_problem(t, stages, wg_dtype).empty()) return false;
    GemmKernel k = wgmma_kernel(t, stages);
    return pipeline_shared(k) <= kDynamicSharedLimit && wgmma_registers_problem(k).empty();
  };
  auto take = [&](const GemmTile& t, int stages, int f64_k, bool wg = false) {  // f64_k -1: kF64K where the tile allows it
    g.tile = t;
    if (wg && wgmma_ok(t, stages)) {
      g = wgmma_kernel(t, stages);
      // The TMA kernel in single blocks walks its tiles with as many blocks as fit at once (shared
      // memory permitting), so that a block's next tile loads while it stores the last. Clusters
      // take one pair of tiles each: how many clusters fit at once depends on how the SMs group
      // (the two blocks of a cluster share a GPC), which a persistent grid would have to know.
      if (g.tma && g.cluster == 1)
        g.max_blocks = resident_blocks(g, multiprocessors);
      return;
    }
    if (f64_k < 0) f64_k = p.dtype == DType::Float64 && mma_ok(t, stages, kF64K) ? kF64K : 0;
    g.mma = mma_ok(t, stages, f64_k);
    g.stages = g.mma ? stages : 0;
    g.f64_k = g.mma ? f64_k : 0;
  };
  if (std::string forced = gemm_tile_setting(); !forced.empty()) {
    bool simt = false, wg = false;
    int stages = 0, f64_k = -1;
    GemmTile t = parse_tile(forced, p.dtype, simt, wg, cp, clusters, stages, f64_k);
    g.gram = gram && t.bm == t.bn;  // a tile that is not square: a general product
    if (wg && !wgmma)
      throw Error("ARRAYC_GEMM_TILE=" + forced + ": /wg is the warpgroup kernel, for float16/bfloat16 operands read in " +
                  "16-byte runs on an sm_90 GPU, or float32 on TF32 with both operands along k through tensor maps, " +
                  "which this product of " + dtype_name(wg_dtype) + " is not");
    if (wg && cp && tf32_wg)
      throw Error("ARRAYC_GEMM_TILE=" + forced + ": TF32 operands of the warpgroup kernel are loaded by the TMA, " +
                  "which rounds them; /cp is for 16-bit operands");
    const int wg_stages = stages ? stages : 4;  // the warpgroup kernel's default; the others' 3
    if (std::string why = wgmma_problem(t, wg_stages, wg_dtype); wg && !why.empty())
      throw Error("ARRAYC_GEMM_TILE=" + forced + " cannot be used for the warpgroup kernel: " + why);
    take(t, wg ? wg_stages : stages ? stages : 3, f64_k, wg);
    if (wg && !g.wgmma) {
      GemmKernel k = wgmma_kernel(t, wg_stages);
      std::string why = wgmma_registers_problem(k);
      if (why.empty())
        why = "its stages need " + std::to_string(pipeline_shared(k)) + " bytes of shared memory (at most " +
              std::to_string(kDynamicSharedLimit) + ")";
      throw Error("ARRAYC_GEMM_TILE=" + forced + " cannot be used for the warpgroup kernel: " + why);
    }
    if (simt) g.mma = false, g.stages = 0, g.f64_k = 0;
    if (f64_k >= 0 && (!g.mma || p.dtype != DType::Float64))
      throw Error("ARRAYC_GEMM_TILE=" + forced + ": /m16kK and /m8k4 are float64 tensor-core shapes, which this tile " +
                  "cannot use for " + dtype_name(p.dtype) + " (the warp tile (4 TM) x (8 TN) must be whole mma tiles, " +
                  "BK a multiple of K)");
    if (stages && !g.mma)
      throw Error("ARRAYC_GEMM_TILE=" + forced + ": stages are for the tensor cores, which this tile cannot use for " +
                  dtype_name(p.dtype) + (p.dtype == DType::Float32 && !p.tf32 && !half ? " (TF32 is off)" : ""));
    if (std::string why = static_shared_problem(t, p.dtype); !g.mma && !why.empty())
      throw Error("ARRAYC_GEMM_TILE=" + forced + " cannot be used for " + dtype_name(p.dtype) + ": " + why);
    return g;
  }
  // Big tiles reuse each loaded element most; take the biggest that still gives at least half
  // the SMs a block (W4 ran faster on 128 big tiles than on 512 mid ones on 132 SMs). Products
  // with few columns get a narrow tile rather than mostly idle threads. The FMA tiles are the
  // fastest measured on an H200 (docs/cuda.md has the sweep): W5 (3000^2 f32) 128x128x16/8x8
  // 1.62 ms, 128x64x16/8x4 1.68, 64x64x16/4x4 1.76; W3 (10000x784 . 784x10) 32x16x32/2x2
  // 0.043 ms, 64x16x32/4x2 0.046.
  const bool f64 = p.dtype == DType::Float64;
  // The tensor-core tiles, stages and (float64, sm_90+) mma shapes, the fastest of a sweep on an
  // H100 (docs/cuda.md): W4 (1000^3 f64, per call timed to synchronize / queued) 64x64x16/8x4/s4
  // on m16n8k4 0.062 / 0.052 ms, m16n8k8 0.063 / 0.055, m16n8k16 0.068 / 0.059 (3 stages 0.064 /
  // 0.056), m8n8k4 0.090 / 0.081; 32x64x16/s4 on m16n8k16 0.061 / 0.053, on m16n8k4 0.066 /
  // 0.058; 64x64x32/s3 0.064 / 0.057, 128x64x16/8x4 0.071 / 0.063, 64x32x16 0.085 / 0.076; W9's 4096^3 layer on TF32 256x128x32/16x8 0.985 ms,
  // 128x128x16/16x8 1.054, 128x256x16/16x8 1.139, 128x128x32/16x8 1.147, 128x128x16/8x8 1.531.
  struct Choice {
    GemmTile t;
    int stages = 0;
    int f64_k = -1;  // -1: kF64K
  };
  // 16-bit operands (issue 29), from a sweep on an H100 (docs/cuda.md), 4096^3 float16:
  // 256x128x64/16x8 3 stages 0.471 ms, 128x256x64 0.475, 128x128x64 0.493, 128x256x32 s4 0.523,
  // 256x128x32 s4 0.538 (s3 0.546, s5 0.537), 128x128x32/8x8 s4 0.641.
  const Choice big = half_mma ? Choice{{256, 128, 64, 16, 8}, 3}
                     : mma_dtype ? (f64 ? Choice{{64, 64, 16, 8, 4}, 4, 4} : Choice{{256, 128, 32, 16, 8}, 3})
                     : f64     ? Choice{{128, 64, 8, 8, 4}}
                               : Choice{{128, 128, 16, 8, 8}};
  const Choice mid = half_mma ? Choice{{128, 64, 32, 8, 4}, 4}
                     : mma_dtype ? (f64 ? Choice{{32, 64, 16, 8, 4}, 4} : Choice{{64, 64, 16, 8, 4}, 3})
                     : f64     ? Choice{{64, 64, 8, 4, 4}}
                               : Choice{{64, 64, 16, 4, 4}};
  const Choice small = half_mma ? Choice{{64, 64, 32, 8, 4}, 4}
                       : mma_dtype ? (f64 ? Choice{{32, 32, 16, 8, 4}, 4} : Choice{{32, 32, 16, 8, 4}, 3})
                       : f64     ? Choice{{32, 32, 16, 2, 2}}
                                 : Choice{{32, 32, 32, 2, 2}};
  const Choice narrow{{32, 16, 32, 2, 2}};
  // The warpgroup kernel's tiles (16-bit operands on sm_90), from sweeps on an H100 (docs/cuda.md): 4096^3 float16 128x256
  // 0.249 ms, 256x128 0.251, 128x128 0.275, 128x192 0.328 (6 waves of one block an SM against
  // 4); 3000^2 x @ x.T 128x192 0.172, 128x256 0.181, 256x128 0.183, 128x128 0.202 (3 waves
  // either way, the narrower tile doing less in each). So 128x192 where it takes no more waves.
  if (wgmma) {
    const int bk = 128 / static_cast<int>(dtype_size(wg_dtype));  // 128-byte rows
    const Choice wg_big{{128, 256, bk, 4, 32}, 4}, wg_narrow{{128, 192, bk, 4, 24}, 4}, wg_mid{{128, 128, bk, 4, 16}, 4},
        wg_small{{64, 64, bk, 4, 8}, 4};
    Choice c = wg_small;
    for (const Choice& t : {wg_big, wg_mid})
      if (2 * tiles(t.t, p) >= multiprocessors) {
        c = t;
        break;
      }
    auto waves = [&](const Choice& t) { return (tiles(t.t, p) + multiprocessors - 1) / multiprocessors; };
    if (c.t.bn == 256 && waves(wg_narrow) <= waves(wg_big)) c = wg_narrow;
    take(c.t, c.stages, 0, true);
    ARRAYC_INTERNAL_CHECK(g.wgmma, "built-in warpgroup gemm tile invalid");
    return g;
  }
  Choice c = small;
  if (gram) {  // square tiles; half as many as a general product has
    g.gram = true;
    for (const Choice& t : {big, mid})
      if (t.t.bm == t.t.bn && 2 * tiles(t.t, p, true) >= multiprocessors) {
        c = t;
        break;
      }
  } else if (p.n <= 16 && p.m > p.n && !half_mma) {
    c = narrow;
  } else {
    // Too few small tiles to give every SM one: the narrow tile, twice as many. W9's layer at
    // 256x784x256 (64 small tiles on 132 SMs) took 0.021 ms with it against 0.026 on an H100.
    // (16-bit operands keep the tensor cores' small tile.)
    if (tiles(small.t, p) < multiprocessors && !half_mma) c = narrow;
    for (const Choice& t : {big, mid})
      if (2 * tiles(t.t, p) >= multiprocessors) {
        c = t;
        break;
      }
  }
  take(c.t, c.stages, c.f64_k);
  std::string why = tile_problem(c.t, half_mma ? p.in_dtype : p.dtype);
  if (why.empty() && !g.mma) why = static_shared_problem(c.t, p.dtype);
  ARRAYC_INTERNAL_CHECK(why.empty(), "built-in gemm tile invalid: " + why);
  return g;
}

TmaOperand gemm_tma_operand(const GemmKernel& g, const GemmProblem& p, bool is_a) {
  ARRAYC_INTERNAL_CHECK(g.tma, "a tensor map for a kernel without TMA loads");
  const uint64_t e = dtype_size(g.operands());
  const bool along_k = (is_a ? g.a_unit : g.b_unit) == GemmUnit::K;
  const int64_t outer = is_a ? p.m : p.n;  // m of A, n of B
  // The stride of the operand's other (non-unit) dim, and of its batch; unused ones (an extent
  // of 1, a shared operand) any multiple of 16 bytes.
  const int64_t other = is_a ? (along_k ? p.a_rs : p.a_cs) : (along_k ? p.b_cs : p.b_rs);
  const int64_t bs = is_a ? p.a_bs : p.b_bs;
  const uint64_t other_extent = static_cast<uint64_t>(along_k ? outer : p.k);
  TmaOperand t;
  t.dims = {static_cast<uint64_t>(along_k ? p.k : outer), other_extent, static_cast<uint64_t>(bs ? p.batch : 1)};
  t.strides = {other_extent > 1 ? static_cast<uint64_t>(other) * e : 16, bs && p.batch > 1 ? static_cast<uint64_t>(bs) * e : 16};
  const int rows = is_a ? g.tile.bm : g.tile.bn;
  // K-major: all rows (B shared by a cluster: this block's share of them); MN-major: a 64 x bk atom.
  t.box = {static_cast<uint32_t>(128 / e), static_cast<uint32_t>(along_k ? (is_a ? rows : rows / g.cluster) : g.tile.bk), 1};
  return t;
}

unsigned gemm_dynamic_shared(const GemmKernel& g, int sm) {
  return g.mma && sm >= 80 ? static_cast<unsigned>(pipeline_shared(g)) : 0;
}

int resident_blocks(const GemmKernel& g, int multiprocessors) {
  return multiprocessors * std::max<int>(1, static_cast<int>(228 * 1024 / (pipeline_shared(g) + 1024)));
}

int64_t gemm_tile_group(const GemmKernel& g, const GemmProblem& p, int multiprocessors) {
  const std::optional<int64_t> forced = gemm_group_setting();
  if (!g.tma || g.gram) return 1;
  const int64_t unit = int64_t{g.tile.bm} * g.cluster, bn = g.tile.bn;  // a unit's rows and columns
  const int64_t units = (p.m + unit - 1) / unit, nt = (p.n + bn - 1) / bn;
  if (forced) return std::min(*forced, std::max<int64_t>(units, 1));
  const int64_t resident = resident_blocks(g, multiprocessors) / g.cluster;  // units at once
  if (units < 2 || resident < 2) return 1;
  // About as many rows as columns of elements: group x unit = (resident / group) x bn.
  const int64_t group = std::clamp<int64_t>(std::llround(std::sqrt(static_cast<double>(resident * bn) / unit)), 1, units);
  auto ceil = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  // The elements of A's and B's k-slabs that the resident units read: rows x unit + columns x bn.
  const int64_t by_rows = std::min(units, ceil(resident, nt)) * unit + std::min(nt, resident) * bn;
  const int64_t grouped = group * unit + std::min(nt, ceil(resident, group)) * bn;
  return 2 * by_rows > 3 * grouped ? group : 1;
}

unsigned gemm_grid(const GemmKernel& g, const GemmProblem& p) {
  if (g.cluster > 1) {  // clusters walk tiles in groups one above the other
    const int64_t groups = (p.m + g.tile.bm * g.cluster - 1) / (g.tile.bm * g.cluster) * ((p.n + g.tile.bn - 1) / g.tile.bn) * p.batch;
    const int64_t clusters = g.max_blocks ? std::min<int64_t>(groups, g.max_blocks / g.cluster) : groups;
    return static_cast<unsigned>(std::clamp<int64_t>(clusters, 1, 0x3fffffff) * g.cluster);
  }
  const int64_t t = tiles(g.tile, p, g.gram);
  return static_cast<unsigned>(std::clamp<int64_t>(g.max_blocks ? std::min<int64_t>(t, g.max_blocks) : t, 1, 0x7fffffff));
}

std::string gemm_epilogue_problem(const Kernel& k, const LaunchParams& launch, int product_ptr, const GemmProblem& p,
                                  int& leaf) {
  if (p.dtype != DType::Float32 && p.dtype != DType::Float64) return "no product kernel for its dtype";
  if (k.outputs.empty()) return "it stores nothing";
  const int64_t* params = launch.params.data();
  std::vector<int64_t> own(k.rank + 1, 0);  // offset, strides: the product's own layout
  if (k.is_reduction) {  // a full reduction (any of the five), read over the product's space in its order
    if (k.outer_rank() != 0) return "it reduces along some axes only";
    const DType t = k.outputs[0].dtype;
    if (t != DType::Float32 && t != DType::Float64) return std::string("it reduces to ") + dtype_name(t);
    int64_t stride = 1;
    for (int d = k.rank; d-- > 0;) {
      own[1 + d] = stride;
      stride *= params[d];
    }
  } else {
    const int64_t* out = &params[k.param_block(k.outputs[0].index)];
    own.assign(out, out + k.rank + 1);
  }
  leaf = -1;
  for (size_t i = 0; i < k.leaves.size(); ++i) {
    const KernelLeaf& lf = k.leaves[i];
    if (lf.ptr != product_ptr) continue;
    if (lf.op != Op::Buffer || lf.dtype != p.dtype || !std::equal(own.begin(), own.end(), &params[k.param_block(lf.index)]))
      return "it reads the product at other elements than its own";
    if (leaf >= 0) return "it reads the product twice";
    leaf = static_cast<int>(i);
  }
  if (leaf < 0) return "it does not read the product";
  std::vector<int64_t> ext(params, params + k.rank);
  const bool fits = (k.rank == 1 && ext[0] == p.batch * p.m * p.n) ||
                    (k.rank == 2 && ext[0] == p.batch * p.m && ext[1] == p.n) ||
                    (k.rank == 3 && ext[0] == p.batch && ext[1] == p.m && ext[2] == p.n);
  if (!fits) return "its iteration space is not the product's rows and columns";
  return "";
}

int gemm_transposed_operand(const GemmProblem& p, int multiprocessors) {
  if (p.dtype != DType::Float32 || is_half(p.in_dtype) || !p.tf32 || !p.wgmma || !p.tma || p.gram) return 0;
  if (p.m < 1 || p.n < 1) return 0;
  // Each operand not along k is copied; a copy must be read by enough rows (B: m) or columns
  // (A: n) of the product to pay for itself (kTransposeMinOther).
  const int which = (p.a_cs == 1 ? 0 : 1) | (p.b_rs == 1 ? 0 : 2);
  if (!which || ((which & 1) && p.n < kTransposeMinOther) || ((which & 2) && p.m < kTransposeMinOther)) return 0;
  return choose_gemm(gemm_transposed_problem(p, which), multiprocessors).wgmma ? which : 0;
}

GemmProblem gemm_transposed_problem(const GemmProblem& p, int which) {
  GemmProblem q = p;
  if (which & 1) {
    const bool shared = p.batch > 1 && p.a_bs == 0;  // one matrix for every product
    q.a_addr = 0, q.a_rs = p.k, q.a_cs = 1, q.a_bs = shared ? 0 : p.m * p.k;
  }
  if (which & 2) {
    const bool shared = p.batch > 1 && p.b_bs == 0;
    q.b_addr = 0, q.b_rs = 1, q.b_cs = p.k, q.b_bs = shared ? 0 : p.n * p.k;
  }
  return q;
}

GemmTranspose gemm_transpose(const GemmProblem& p, int which) {
  GemmTranspose t;
  const bool a = which == 1;
  t.x = a ? p.m : p.n;
  t.y = p.k;
  t.x_stride = a ? p.a_rs : p.b_cs;
  t.y_stride = a ? p.a_cs : p.b_rs;
  const int64_t bs = a ? p.a_bs : p.b_bs;
  t.batch = p.batch > 1 && bs == 0 ? 1 : p.batch;
  t.batch_stride = bs;
  return t;
}

// The transpose: tiles of 64 x 64 elements through shared memory (rows padded to 65, so that
// a warp's column reads hit 32 banks), 256 threads a block (4 rows of 64), tiles grid-strided.
// Thread t reads (x0 + t % 64, y0 + t / 64 + 4 i), i < 16, consecutive x in a warp (coalesced
// where x has unit stride), all 16 loads issued before any is used (an element past the edge
// reads the operand's first element instead, and is never written), then writes
// out[x0 + t / 64 + 4 i][y0 + t % 64], consecutive y (coalesced). Elements move as 32-bit
// integers: the copy is exact. (32 x 32 tiles of 4 loads a thread, each behind its own branch,
// moved 128 MB in 0.074 ms on an H100: about half its copy rate.)
PtxKernel emit_transpose_ptx(int sm) {
  const std::string entry = "arrayc_transpose_32bit";
  return compile_ptx(entry, sm, [&](llvm::Module& m) {
    constexpr int kTile = 64, kRows = 4, kPad = kTile + 1;
    llvm::LLVMContext& ctx = m.getContext();
    llvm::IRBuilder<> b(ctx);
    auto* gptr = llvm::PointerType::get(ctx, kGlobal);
    std::vector<llvm::Type*> args{gptr, gptr};
    args.insert(args.end(), 6, b.getInt64Ty());
    llvm::Function* f = declare_ptx_kernel(m, entry, args, 2);
    annotate_ptx_kernel(*f, "maxntidx", kTile * kRows);
    b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", f));
    Value *src = f->getArg(0), *dst = f->getArg(1), *X = f->getArg(2), *Y = f->getArg(3), *batch = f->getArg(4);
    Value *xs = f->getArg(5), *ys = f->getArg(6), *bs = f->getArg(7);
    llvm::Type* i32 = b.getInt32Ty();
    auto i64 = [&](int64_t v) { return b.getInt64(v); };
    auto sreg = [&](llvm::Intrinsic::ID id) { return read_sreg(b, id); };
    auto* tile_ty = llvm::ArrayType::get(i32, kTile * kPad);
    auto* tile = new llvm::GlobalVariable(m, tile_ty, false, llvm::GlobalValue::InternalLinkage, llvm::UndefValue::get(tile_ty),
                                          "tile", nullptr, llvm::GlobalValue::NotThreadLocal, kShared);
    Value* tid = sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
    Value* lane = b.CreateURem(tid, i64(kTile));
    Value* row0 = b.CreateUDiv(tid, i64(kTile));
    Value* xt = b.CreateUDiv(b.CreateAdd(X, i64(kTile - 1)), i64(kTile));
    Value* yt = b.CreateUDiv(b.CreateAdd(Y, i64(kTile - 1)), i64(kTile));
    Value* per = b.CreateMul(xt, yt);
    auto barrier = [&] { b.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {}); };
    auto at = [&](Value* row, Value* col) {  // tile[row][col]
      return b.CreateInBoundsGEP(i32, tile, b.CreateAdd(b.CreateMul(row, i64(kPad)), col));
    };
    emit_loop(b, sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x), b.CreateMul(per, batch),
              sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x), [&](Value* t) {
                Value* p = b.CreateUDiv(t, per);
                Value* r = b.CreateURem(t, per);
                Value* x0 = b.CreateMul(b.CreateUDiv(r, yt), i64(kTile));
                Value* y0 = b.CreateMul(b.CreateURem(r, yt), i64(kTile));
                Value* first = b.CreateMul(p, bs);
                Value* x = b.CreateAdd(x0, lane);
                std::vector<Value*> v;
                for (int i = 0; i < kTile / kRows; ++i) {
                  Value* y = b.CreateAdd(y0, b.CreateAdd(row0, i64(kRows * i)));
                  Value* in = b.CreateAnd(b.CreateICmpSLT(x, X), b.CreateICmpSLT(y, Y));
                  Value* off = b.CreateSelect(in, b.CreateAdd(first, b.CreateAdd(b.CreateMul(x, xs), b.CreateMul(y, ys))), first);
                  v.push_back(b.CreateAlignedLoad(i32, b.CreateInBoundsGEP(i32, src, off), llvm::Align(4)));
                }
                for (int i = 0; i < kTile / kRows; ++i)
                  b.CreateAlignedStore(v[i], at(b.CreateAdd(row0, i64(kRows * i)), lane), llvm::Align(4));
                barrier();
                Value* y = b.CreateAdd(y0, lane);
                for (int i = 0; i < kTile / kRows; ++i) {
                  Value* row = b.CreateAdd(row0, i64(kRows * i));
                  Value* xr = b.CreateAdd(x0, row);
                  emit_if(b, b.CreateAnd(b.CreateICmpSLT(xr, X), b.CreateICmpSLT(y, Y)), [&] {
                    Value* off = b.CreateAdd(b.CreateMul(b.CreateAdd(b.CreateMul(p, X), xr), Y), y);
                    Value* e = b.CreateAlignedLoad(i32, at(lane, row), llvm::Align(4));
                    b.CreateAlignedStore(e, b.CreateInBoundsGEP(i32, dst, off), llvm::Align(4));
                  });
                }
                barrier();  // the next tile overwrites the shared tile
              });
    b.CreateRetVoid();
  });
}

PtxKernel emit_gemm_ptx(const GemmKernel& g, int sm) {
  ARRAYC_INTERNAL_CHECK(g.dtype == DType::Float32 || g.dtype == DType::Float64, std::string("gemm kernel for ") + dtype_name(g.dtype));
  ARRAYC_INTERNAL_CHECK(!is_half(g.in_dtype) || (g.dtype == DType::Float32 && (!g.mma || sm >= 80)),
                        "a 16-bit gemm kernel for " + std::string(dtype_name(g.dtype)) + " or sm_" + std::to_string(sm));
  ARRAYC_INTERNAL_CHECK(!g.mma || g.stages >= 2, "a tensor-core gemm kernel without pipeline stages");
  ARRAYC_INTERNAL_CHECK(!g.wgmma || (sm == 90 && g.mma && (is_half(g.in_dtype) || (g.dtype == DType::Float32 && g.tma))),
                        "a warpgroup gemm kernel for sm_" + std::to_string(sm) + " or " + dtype_name(g.in_dtype));
  std::string entry = "arrayc_" + g.name();
  return compile_ptx(entry, sm, [&](llvm::Module& m) { GemmEmitter(g, m, sm).emit(entry); }, g.wgmma);
}

}  // namespace arrayc::detail
