// Links lib/ir and lib/support alone, without the engine, the backends or LLVM, and evaluates a
// graph with the reference interpreter: the IR stands on its own (docs/architecture.md).
#include <cstdio>

#include "ir/build.h"
#include "ir/interpreter.h"

int main() {
  using namespace arrayc::detail;
  const arrayc::Device cpu{arrayc::Device::Kind::CPU, 0};
  NodeRef x = make_iota({4}, arrayc::DType::Float32, cpu);
  NodeRef y = make_elementwise(Op::Mul, {x, x});
  HostArray r = interpret(y);
  bool ok = r.f.size() == 4 && r.f[3] == 9.0;
  std::printf("%s\n", ok ? "ir alone: ok" : "ir alone: wrong values");
  return ok ? 0 : 1;
}
