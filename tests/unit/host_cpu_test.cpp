// ARRAYC_HOST_CPU: the CPU the host JIT compiles for. A name LLVM does not know, or a CPU with a
// feature this machine lacks (its code could execute an instruction this machine does not have),
// is an arrayc::Error naming the variable; whether this machine has a feature is checked here
// against the compiler's own cpuid test (__builtin_cpu_supports), not LLVM's.
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>

#include "arrayc/arrayc.h"
#include "backend/host/host_jit.h"
#include "support/errors.h"
#include "support/host_cpu.h"

namespace {

using arrayc::detail::check_host_cpu;

#if defined(__x86_64__)

TEST(HostCpu, NamesLlvmDoesNotKnow) {
  for (const char* cpu : {"foo", "x86-64-v5", "X86-64-V3", " x86-64-v3", "znver", "sm_90", "native"}) {
    SCOPED_TRACE(cpu);
    EXPECT_ARRAYC_ERROR(check_host_cpu(cpu), std::string("ARRAYC_HOST_CPU=") + cpu + ": LLVM knows no CPU '" + cpu + "'",
                        "x86-64-v3 for AVX2");
  }
}

TEST(HostCpu, EachLevelIsAcceptedExactlyWhenThisMachineRunsIt) {
  __builtin_cpu_init();
  bool v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2");
  bool v4 = v3 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
            __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  EXPECT_NO_THROW(check_host_cpu("x86-64"));
  EXPECT_NO_THROW(check_host_cpu("x86-64-v2"));
  if (v3) EXPECT_NO_THROW(check_host_cpu("x86-64-v3"));
  else EXPECT_ARRAYC_ERROR(check_host_cpu("x86-64-v3"), "ARRAYC_HOST_CPU=x86-64-v3: this machine's CPU", "lacks", "avx2");
  if (v4) EXPECT_NO_THROW(check_host_cpu("x86-64-v4"));
  else EXPECT_ARRAYC_ERROR(check_host_cpu("x86-64-v4"), "ARRAYC_HOST_CPU=x86-64-v4: this machine's CPU", "lacks", "avx512f",
                           "cannot run here");
  // CPUs with AVX-512 everywhere, and AMX: a machine lacking one of them gets the error naming it.
  for (const char* cpu : {"skylake-avx512", "icelake-server", "sapphirerapids", "znver4"}) {
    SCOPED_TRACE(cpu);
    if (!v4) EXPECT_ARRAYC_ERROR(check_host_cpu(cpu), std::string("ARRAYC_HOST_CPU=") + cpu + ":", "avx512f");
  }
}

TEST(HostCpu, FeaturesAreLlvmsForTheCpu) {
  auto has = [](const std::vector<std::string>& f, const std::string& x) {
    return std::find(f.begin(), f.end(), x) != f.end();
  };
  std::vector<std::string> v3 = arrayc::detail::cpu_features("x86-64-v3"), v4 = arrayc::detail::cpu_features("x86-64-v4");
  EXPECT_TRUE(has(v3, "+avx2") && has(v3, "+fma") && !has(v3, "+avx512f"));
  EXPECT_TRUE(has(v4, "+avx2") && has(v4, "+avx512f") && has(v4, "+avx512bw"));
  EXPECT_ARRAYC_ERROR(arrayc::detail::cpu_features("pentium9"), "LLVM knows no CPU 'pentium9'");
}

// Kernels compiled for a named CPU whatever this machine is: each width's vector type appears.
TEST(HostCpu, KernelsForEachWidth) {
  arrayc::Array x = arrayc::arange(64, arrayc::DType::Float32);
  for (const arrayc_test::CpuWidth& w : arrayc_test::x86_widths()) {
    std::vector<arrayc::detail::HostStages> st = arrayc_test::stages_for_cpu({x * 2.0f + 1.0f}, w.cpu);
    ASSERT_EQ(st.size(), 1u);
    EXPECT_NE(st[0].opt_ir.find(w.floats), std::string::npos) << w.cpu << "\n" << st[0].opt_ir;
    EXPECT_NE(st[0].opt_ir.find(std::string("\"target-cpu\"=\"") + w.cpu + "\""), std::string::npos) << st[0].opt_ir;
  }
}

// The vector math picks its table lookups by the target's features, not the host's: exp's
// float32 table is read by vpermps pairs for AVX2 and one vpermps for AVX-512 (code for AVX2 with
// AVX-512 instructions in it would not run on an AVX2 machine, and did not compile).
TEST(HostCpu, VectorMathFollowsTheTargetCpu) {
  arrayc::Array x = arrayc::arange(64, arrayc::DType::Float32);
  for (const arrayc_test::CpuWidth& w : arrayc_test::x86_widths()) {
    std::vector<arrayc::detail::HostStages> st = arrayc_test::stages_for_cpu({arrayc::exp(x)}, w.cpu);
    ASSERT_EQ(st.size(), 1u);
    bool avx512 = w.lanes == 16;
    EXPECT_EQ(st[0].opt_ir.find("llvm.x86.avx512.permvar.sf.512") != std::string::npos, avx512) << w.cpu;
    if (!avx512) EXPECT_NE(st[0].opt_ir.find("llvm.x86.avx2.permps"), std::string::npos) << w.cpu;
    EXPECT_NE(st[0].assembly.find("vpermps"), std::string::npos) << w.cpu;
    // pow's f64 table: AVX-512's vpermi2pd only where the target has it (LLVM aborted on it in
    // code for x86-64-v3 when the emitter followed the host's features).
    std::vector<arrayc::detail::HostStages> p = arrayc_test::stages_for_cpu({arrayc::pow(x, 2.5f)}, w.cpu);
    ASSERT_EQ(p.size(), 1u);
    EXPECT_EQ(p[0].opt_ir.find("llvm.x86.avx512.vpermi2var.pd.512") != std::string::npos, avx512) << w.cpu;
  }
}

// The variable itself, read by the host JIT when it first compiles: in a fresh process (the JIT
// lives for the process), a bad value gives the error from the first evaluation.
TEST(HostCpu, TheVariableIsCheckedAtTheFirstCompile) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // a fresh process: re-executes this test alone
  EXPECT_EXIT(
      {
        setenv("ARRAYC_HOST_CPU", "no-such-cpu", 1);
        try {
          (arrayc::arange(10, arrayc::DType::Float32) + 1.0f).eval();
        } catch (const arrayc::Error& e) {
          std::cerr << e.what();
          std::exit(3);
        }
        std::exit(0);
      },
      ::testing::ExitedWithCode(3), "ARRAYC_HOST_CPU=no-such-cpu: LLVM knows no CPU 'no-such-cpu'");
}

#endif

}  // namespace
