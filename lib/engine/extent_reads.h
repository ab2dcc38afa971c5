// Which extents a jitted function reads while it is traced (issue 27: a new length without a
// trace). Array::shape() and Array::size() count a read on the calling thread; jit reads the
// count around the traces of a shape class's first call. A function whose traces read no
// extent, and whose graph holds only ops that cannot depend on an extent (extent_blind_graph),
// builds the same graph at every length of its class, so jit resizes its Program to a new length
// without tracing it again. (jit assumes what it assumes for every cached call: the function
// depends on its inputs alone.)
#pragma once
#include <cstdint>
#include <vector>

#include "ir/node.h"

namespace arrayc::detail {

// Inline: Array::shape() calls it, and the library reads shapes everywhere.
inline thread_local int64_t t_extent_reads = 0;
inline void note_extent_read() { ++t_extent_reads; }
inline int64_t extent_reads() { return t_extent_reads; }  // on this thread, ever

// Whether every node of the graph is an op whose construction reads no extent beyond what the
// shape class fixes (which dims are 0, 1 or equal): leaves that are inputs, captured buffers or
// constants, elementwise ops, broadcasts, reshapes, transposes and reductions.
bool extent_blind_graph(const std::vector<NodeRef>& outputs);

}  // namespace arrayc::detail
