// Float16 speed on both devices (issue 28): an elementwise kernel whose only array operand is one
// contiguous float16 or bfloat16 array computes a function of 16 bits, which has 65536 values.
// For long arrays a backend runs the kernel's own compiled code once over every 16-bit pattern,
// into a table, and then looks each element up in it: the same bits as running the kernel on
// the array, since the table is made by that very code, at a cost that no longer depends on how
// much math the kernel does (W8 in float16: three transcendentals and nine roundings to float16
// per element, otherwise compute-bound on both the host and an H100). The host makes the table
// again at every run (the kernel's constants are launch parameters), for 65536 elements, so it
// pays from half_table_min_elements() on; a GPU keeps it with the step's launch and makes it
// again only when those parameters change. The host's lookup is backend/host/half_table.h; the GPU's
// is a kernel of its own (backend/cuda: HalfTableLaunch).
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "kernel/kernel.h"

namespace arrayc::detail {

constexpr int64_t kHalfPatterns = 1 << 16;  // the 16-bit inputs

// Where a tabulated kernel's input and output are (its leaf and output, by pointer and indexed
// operand), and their dtypes.
struct HalfTable {
  int in_ptr = -1, in_index = -1;
  int out_ptr = -1, out_index = -1;
  DType out = DType::Float32;
};

// Whether k can run by a table: not a reduction or row chain, one loop dim; one leaf in memory,
// float16 or bfloat16 at unit stride, and otherwise only constants (no iota, random numbers or
// gathers, whose values depend on the position); one output of 1, 2 or 4 bytes at unit
// stride; and at least one instruction that is not a cast (a cast alone is one conversion).
std::optional<HalfTable> half_table_for(const Kernel& k);

// The least number of elements for which a run takes the table (default 2^20: the table's
// 65536 evaluations are then at most 1/16 of the work); tests lower it.
int64_t half_table_min_elements();
void set_half_table_min_elements(int64_t n);
// How many runs took a table so far in this process (tests: that the path was taken); a
// backend counts each with note_half_table_run().
int64_t half_table_runs();
void note_half_table_run();

// Each 16-bit pattern once, in order: the table's input.
const uint16_t* half_patterns();

// The launch parameters of k's run over the patterns (for a step whose parameters are `params`):
// one dim of 65536, the input and the output at offset 0 and unit stride.
std::vector<int64_t> half_table_params(const HalfTable& t, const Kernel& k, const std::vector<int64_t>& params);

}  // namespace arrayc::detail
