// The process heap after a burst of frees.
#pragma once

namespace arrayc::detail {

// Merges the small blocks this thread's heap has freed and not merged yet, now. glibc's malloc
// keeps freed small blocks unmerged ("fastbins") and merges all of them at the next request of
// 1 KiB or more, whenever that comes. A compile frees tens of thousands of them, so the merge
// used to land in the next call that asked for such a block: jit's first call at a new length,
// 10 to 20 us slower (docs/architecture.md, "A new length"). jit calls this after it planned a
// Program, where the merge costs nothing noticeable. Harmless with any other malloc.
void settle_heap();

}  // namespace arrayc::detail
