// Row chains: reductions along the last axis whose results the same elementwise work reads back
// broadcast (softmax's max and sum, layer norm's mean and variance) run inside that work's
// kernel, one kernel per block of rows that walks each row once per level of nested reductions
// and once more to store (on a GPU, rows of up to 16384 elements are read once and held in
// registers) (`:fused` shows "row chain: %N max along the rows ..."). On by default;
// ARRAYC_ROW_CHAINS=0 or set_row_chain_fusion(false) materializes every reduction, for what is
// compiled after the call. docs/architecture.md has the rules.
#pragma once

namespace arrayc {

void set_row_chain_fusion(bool enabled);
bool row_chain_fusion_enabled();

}  // namespace arrayc
