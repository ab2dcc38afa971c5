// Array: a lazy handle to a node of the expression graph. Building ops on Arrays records work;
// eval() (or reading the values) compiles and runs it. Copies of an Array share one value: once
// evaluated, all of them see the buffer, which lives as long as any Array refers to it.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "arrayc/device.h"
#include "arrayc/dtype.h"
#include "arrayc/error.h"

namespace arrayc {

class Index;  // indexing (arrayc/indexing.h)
class At;

namespace detail {
struct Node;
struct ArrayImpl;
using NodeRef = std::shared_ptr<const Node>;
}  // namespace detail

class Array {
 public:
  Array();  // a float32 scalar 0; exists so that Arrays can live in containers
  explicit Array(detail::NodeRef node);

  // Copies of an Array share one value, and may be used from several threads at once: shape,
  // dtype and device never change, and node() is a copy taken under the lock that evaluation
  // publishes its result with. Evaluation is single-flight: threads that evaluate one Array at once
  // wait for the first one's result rather than computing it again.
  const Shape& shape() const;
  DType dtype() const;
  Device device() const;
  int64_t ndim() const;
  int64_t size() const;  // number of elements

  // Computes the value now (a no-op when already computed) and returns *this.
  const Array& eval() const;
  bool is_evaluated() const;

  // Copies the values to the host, row-major, converting to T (T's dtype need not match) as the
  // cast op does: a float to an integer T truncates, saturates at T's range, NaN -> 0.
  template <typename T> std::vector<T> to_vector() const;
  // The single value of a size-1 array.
  template <typename T> T item() const;

  // A copy on another device (or this array, when it is already there).
  Array to(Device d) const;

  // The graph behind this array, as text (see docs/architecture.md for the format).
  std::string graph_text() const;

  detail::NodeRef node() const;  // for the library's internals and tools: a reference of its own

  // Indexing (arrayc/indexing.h, docs/indexing.md): x[1], x[{1, Slice(none, none, -1)}],
  // x(Slice(1, 3), _), x[mask]; x.at(index).set(v) / .add(v).
  Array operator[](const Index& index) const;
  Array operator[](std::initializer_list<Index> indices) const;
  Array operator[](const std::vector<Index>& indices) const;
  template <typename... I> Array operator()(const I&... indices) const;
  At at(const Index& index) const;
  At at(std::initializer_list<Index> indices) const;

 private:
  friend void eval(const std::vector<Array>& arrays);
  std::shared_ptr<detail::ArrayImpl> impl_;
};

// Evaluates several arrays together: one schedule, so that work they share is done once and
// elementwise outputs of one shape fuse into one kernel with several outputs.
void eval(const std::vector<Array>& arrays);

}  // namespace arrayc
