// Correctness checks of the harness (docs/benchmarks.md, "Correctness"):
//  - against the reference interpreter: every element the reference covers must lie within the
//    interpreter's per-element error bound, built from a table of ULPs per op (reference_ulps);
//  - fused against unfused on every element: |a - b| <= fvu_ulps * eps(dtype) * (|b| + rms(b)).
// Both are NaN-aware: NaN must meet NaN, an infinity the same infinity.
#pragma once
#include <arrayc/arrayc.h>

#include <string>
#include <vector>

#include "bench.h"
#include "ir/interpreter.h"

namespace bench {

// The ULPs one application of `op` may be off by (beyond its inputs' error). Reductions and
// products: the factor of eps * sqrt(count) * sum(|terms|).
double reference_ulps(arrayc::detail::Op op, DType dtype);

// The interpreter's values and error bounds for the expression `root` (not yet evaluated).
arrayc::detail::HostArray interpret_with_bounds(const Array& root);

// Fills a Reference from an interpreted array: `index[k]` is the flat output index of element k
// of `h` (empty: the identity).
Instance::Reference reference_from(const arrayc::detail::HostArray& h, std::vector<int64_t> index,
                                   std::string note);

// "" when `got` matches the reference, else a message naming the first mismatches.
std::string check_reference(const Values& got, const Instance::Reference& ref, DType dtype);
// "" when the two outputs agree on every element, else a message.
std::string check_pair(const Values& a, const Values& b, DType dtype, double ulps,
                       const char* a_name, const char* b_name);

// A deterministic sample of `count` flat indices of [0, n), sorted: the first and last 1024 and
// a spread of the rest (a fixed multiplicative hash). All of [0, n) when n <= count.
std::vector<int64_t> sample_indices(int64_t n, int64_t count);

}  // namespace bench
