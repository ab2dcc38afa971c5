// libFuzzer target for the arrayc language parser (tools/arrayc/parser.cpp): any input must
// either parse or raise lang::SyntaxError with a position inside the input; never crash, hang,
// overflow the stack or leak. Built and run by tests/repl/run_fuzz.sh (clang, ASan + UBSan).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string src(reinterpret_cast<const char*>(data), size);
  arrayc::lang::Program prog;
  try {
    arrayc::lang::parse_program(src, prog);
    // Every statement's expression and every child index is inside the arena.
    for (const auto& s : prog.stmts)
      if (s.expr >= static_cast<int32_t>(prog.nodes.size())) std::abort();
    for (uint32_t k : prog.kids)
      if (k >= prog.nodes.size()) std::abort();
  } catch (const arrayc::lang::SyntaxError& e) {
    if (e.pos.line == 0 || e.pos.col == 0 || e.message.empty()) std::abort();
  }
  return 0;
}
