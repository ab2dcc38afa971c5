// jit's new-length path: a Program planned for one set of input extents, resized to other
// extents of the same shape class without tracing, scheduling or looking a kernel up.
//
// The shape class of a call's inputs keeps, per dimension, whether its extent is 0, 1 or
// something else, and which of the "something else" dims have equal extents: each group of
// equal extents is one symbol. Within a class, the kernels (specialized on rank, stride kinds and
// broadcast pattern, never on extents) stay the same; only the sizes in the schedule change:
// extents, strides, offsets, slot shapes, product dims. Each of those is fitted, once per class,
// as a monomial of the symbols, coefficient * prod(symbol_i ^ e_i), from three schedules of the
// traced function: at the call's extents and at two probes where every symbol is multiplied by a
// distinct prime (2, 3, 5, ... and the next primes). A size that is not such a monomial (n / 2,
// n - 1, the bits of 1.0 / n), or a schedule whose structure changes between the three (a kernel
// that differs, a step more, a function that fails at a probe length), leaves the class without
// resizing: each new length is traced again, as before.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/compile.h"

namespace arrayc::detail {

// The shape class of some input shapes.
struct ShapeClass {
  std::vector<int64_t> key;      // per input: rank, then per dim 0, 1, or 2 + its symbol
  std::vector<int64_t> symbols;  // each symbol's extent, in order of first appearance
};
ShapeClass shape_class(const std::vector<Shape>& shapes);

// The input shapes of a class at these symbol values.
std::vector<Shape> class_shapes(const ShapeClass& c, const std::vector<int64_t>& symbols);

// A traced graph in numbers: per node (in post order) its op, dtype, device, dims, inputs (by
// position), integer attributes, a constant's bits and a captured buffer's address, with every
// extent-like integer (a dim, an attribute) that equals a symbol's extent written as that
// symbol. Two traces of one class give the same fingerprint exactly when the function built the
// same graph at both extents, up to those extents: jit compares it before it resizes, so a
// function that branches on an extent (a literal bound, another op, a constant that depends on
// the size) is planned again rather than resized into the other branch's Program. Conservative:
// an extent that coincides with an unrelated integer only costs a new plan. One walk, no text:
// it is made on every call at a new length.
using ClassFingerprint = std::vector<int64_t>;
ClassFingerprint class_fingerprint(const std::vector<NodeRef>& outputs, const std::vector<int64_t>& symbols);

// The probes' symbol values: each symbol times a distinct prime, for probe 0 or 1. Empty when
// there are too many symbols to probe, when a probe would merge two symbols (two equal extents)
// or when its arrays would pass 2^40 elements.
std::vector<int64_t> probe_symbols(const ShapeClass& c, int probe);

// A Program that jit can resize to any extents of its shape class.
class ResizableProgram {
 public:
  // Fits base's sizes from the schedules at the two probes (probe_symbols(c, 0) and (c, 1)).
  // Null when some size is not a monomial of the symbols or the structures differ.
  static std::shared_ptr<const ResizableProgram> fit(std::shared_ptr<const Program> base, const ShapeClass& c,
                                                     const Schedule& probe0, const Schedule& probe1,
                                                     const CompileOptions& opts, ClassFingerprint fingerprint);
  // Whether a trace at other extents of the class has base's class_fingerprint: the class's graph.
  bool traced_as_class(const std::vector<NodeRef>& outputs, const std::vector<int64_t>& symbols) const;
  // The Program at these symbol values: base's schedule with every size recomputed, and each step's
  // launch made again from base's (backend.h: Backend::replan). Null if a size overflows.
  std::unique_ptr<Program> resize(const std::vector<int64_t>& symbols) const;

 private:
  struct Monomial {
    int64_t coefficient = 0;
    std::vector<uint8_t> exponents;  // per symbol; empty for a constant
  };
  std::shared_ptr<const Program> base_;
  std::vector<Monomial> sizes_;  // in the order of for_each_size (jit_resize.cpp)
  CompileOptions opts_;
  ClassFingerprint fingerprint_;
};

}  // namespace arrayc::detail
