// What a 512-bit instruction costs next to FMAs, measured rather than taken from a model; run by
// hand on an x86-64 host with AVX-512 (the numbers go into docs/math_accuracy.md, "Where the time
// goes"). It is not part of the CMake build:
//
//   g++ -O2 -mavx512f -mavx512dq benchmarks/port_probe.cpp -o /tmp/port_probe && /tmp/port_probe
//
// A transcendental loop such as W8's is bound by its multiplies and FMAs, so what matters about
// any other instruction is whether it competes with them. Each row times a block of 8 independent
// zmm FMAs (the FMA pipes' throughput, not their latency) with 4 of the instruction added and
// prints the extra time per added instruction in units of one FMA's share of the block: 0 when the
// instruction issues beside the FMAs, 1 when it takes an FMA's place. "alone" times the 4
// instructions without the FMAs, per instruction in the same unit: their own reciprocal
// throughput (on Zen 4, where a zmm FMA issues once per cycle, in cycles).
#include <x86intrin.h>

#include <cstdint>
#include <cstdio>

namespace {

#define FMA8                                                                   \
  "vfmadd231ps %%zmm0, %%zmm1, %%zmm2\n vfmadd231ps %%zmm0, %%zmm1, %%zmm3\n" \
  "vfmadd231ps %%zmm0, %%zmm1, %%zmm4\n vfmadd231ps %%zmm0, %%zmm1, %%zmm5\n" \
  "vfmadd231ps %%zmm0, %%zmm1, %%zmm6\n vfmadd231ps %%zmm0, %%zmm1, %%zmm7\n" \
  "vfmadd231ps %%zmm0, %%zmm1, %%zmm8\n vfmadd231ps %%zmm0, %%zmm1, %%zmm9\n"
// Four copies of one instruction writing zmm10-13 (XK4: under mask k1; K4: k2-k5), reading
// zmm0/zmm1.
#define X4(op) op "%%zmm10\n " op "%%zmm11\n " op "%%zmm12\n " op "%%zmm13\n"
#define XK4(op) \
  op "%%zmm10%{%%k1%}\n " op "%%zmm11%{%%k1%}\n " op "%%zmm12%{%%k1%}\n " op "%%zmm13%{%%k1%}\n"
#define K4(op) op "%%k2\n " op "%%k3\n " op "%%k4\n " op "%%k5\n"
#define CLOBBERS                                                                              \
  "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", \
      "xmm13", "k2", "k3", "k4", "k5", "cc"

constexpr int kIters = 20000;

// Best of 30 runs of kIters blocks, in TSC ticks per block.
template <class F>
double ticks(F block) {
  double best = 1e30;
  for (int run = 0; run < 30; ++run) {
    uint64_t t0 = __rdtsc();
    for (int i = 0; i < kIters; ++i) block();
    double t = static_cast<double>(__rdtsc() - t0) / kIters;
    if (t < best) best = t;
  }
  return best;
}

#define ROW(name, body)                                                                      \
  {                                                                                          \
    double with = ticks([] { __asm__ volatile(FMA8 body ::: CLOBBERS); });                   \
    double alone = ticks([] { __asm__ volatile(body ::: CLOBBERS); });                       \
    std::printf("%-24s %6.2f %6.2f\n", name, (with - base) / fma / 4, alone / fma / 4);       \
  }

}  // namespace

int main() {
  __asm__ volatile(
      "vxorps %%zmm0, %%zmm0, %%zmm0\n vxorps %%zmm1, %%zmm1, %%zmm1\n kxnorw %%k0, %%k0, %%k1" ::
          : "xmm0", "xmm1", "k1");
  double base = ticks([] { __asm__ volatile(FMA8 ::: CLOBBERS); });
  double fma = base / 8;  // one FMA's share of the block
  std::printf("8 zmm FMAs: %.2f TSC ticks per block\n", base);
  std::printf("%-24s %6s %6s\n", "instruction (zmm)", "+FMAs", "alone");
  ROW("vfmadd231ps", X4("vfmadd231ps %%zmm0, %%zmm1, "))
  ROW("vmulps", X4("vmulps %%zmm0, %%zmm1, "))
  ROW("vaddps", X4("vaddps %%zmm0, %%zmm1, "))
  ROW("vminps", X4("vminps %%zmm0, %%zmm1, "))
  ROW("vrndscaleps", X4("vrndscaleps $0, %%zmm1, "))
  ROW("vcvtps2dq", X4("vcvtps2dq %%zmm1, "))
  ROW("vscalefps", X4("vscalefps %%zmm0, %%zmm1, "))
  ROW("vblendmps {k}", XK4("vblendmps %%zmm0, %%zmm1, "))
  ROW("vmovaps {k} (a select)", XK4("vmovaps %%zmm0, "))
  ROW("vpaddd", X4("vpaddd %%zmm0, %%zmm1, "))
  ROW("vpandd", X4("vpandd %%zmm0, %%zmm1, "))
  ROW("vpternlogd", X4("vpternlogd $120, %%zmm0, %%zmm1, "))
  ROW("vpslld", X4("vpslld $3, %%zmm1, "))
  ROW("vpsrad", X4("vpsrad $3, %%zmm1, "))
  ROW("vpmaxud", X4("vpmaxud %%zmm0, %%zmm1, "))
  ROW("vpermps", X4("vpermps %%zmm0, %%zmm1, "))
  ROW("vpermi2ps", X4("vpermi2ps %%zmm0, %%zmm1, "))
  ROW("vpshufd", X4("vpshufd $78, %%zmm1, "))
  ROW("vcmpltps -> k", K4("vcmpltps %%zmm0, %%zmm1, "))
  ROW("vpcmpgtd -> k", K4("vpcmpgtd %%zmm0, %%zmm1, "))
  ROW("vptestnmd -> k", K4("vptestnmd %%zmm0, %%zmm1, "))
  ROW("vpmovd2m -> k", K4("vpmovd2m %%zmm1, "))
  ROW("vpmovm2d", X4("vpmovm2d %%k1, "))
  ROW("kortestw", "kortestw %%k1, %%k1\n kortestw %%k1, %%k1\n kortestw %%k1, %%k1\n kortestw %%k1, %%k1\n")
  // A range test without a mask register: the halves or-ed, one vptest of their sign bits.
  ROW("vextracti64x4 (ymm)", "vextracti64x4 $1, %%zmm1, %%ymm10\n vextracti64x4 $1, %%zmm1, %%ymm11\n"
                             "vextracti64x4 $1, %%zmm1, %%ymm12\n vextracti64x4 $1, %%zmm1, %%ymm13\n")
  ROW("vpor (ymm)", "vpor %%ymm0, %%ymm1, %%ymm10\n vpor %%ymm0, %%ymm1, %%ymm11\n"
                    "vpor %%ymm0, %%ymm1, %%ymm12\n vpor %%ymm0, %%ymm1, %%ymm13\n")
  ROW("vptest (ymm)", "vptest %%ymm0, %%ymm1\n vptest %%ymm0, %%ymm1\n vptest %%ymm0, %%ymm1\n vptest %%ymm0, %%ymm1\n")
  ROW("vmovaps (register)", X4("vmovaps %%zmm1, "))
  return 0;
}
