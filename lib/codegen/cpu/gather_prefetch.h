// Host gather bandwidth (issue 28): a gather whose index is read from memory along the loop's
// row knows its positions ahead of time, so the host loop can prefetch the source elements that
// a later block of the row will gather (codegen/cpu/cpu_kernel.cpp's prefetched_row). That keeps
// more misses in flight than the hardware gathers alone, which wait for their lines in order.
#pragma once
#include <cstdint>
#include <optional>

#include "kernel/kernel.h"

namespace arrayc::detail {

struct PrefetchedGather {
  int gather_leaf = -1;  // the Gather leaf whose source is prefetched
  int index_leaf = -1;   // the memory leaf its index is read from, contiguous along the row
};

// The first gather of an elementwise kernel (not a reduction, row chain or tiled kernel) whose
// index instruction is a load of a memory operand with unit stride along the last loop dim.
std::optional<PrefetchedGather> prefetched_gather(const Kernel& k);

// How many elements ahead such a gather's source is prefetched: ARRAYC_GATHER_PREFETCH, else
// kGatherPrefetchDistance (0: no prefetching).
constexpr int64_t kGatherPrefetchDistance = 0;
int64_t gather_prefetch_distance();
// Overrides it for the kernels compiled from now on (tests).
void set_gather_prefetch_distance(int64_t elements);

// The row is walked in blocks of this many elements, each preceded by its prefetches.
constexpr int64_t kGatherPrefetchBlock = 512;

}  // namespace arrayc::detail
