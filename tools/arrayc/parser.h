// The arrayc language: lexer and parser. No dependency on libarrayc or LLVM, so that the parser
// can be fuzzed on its own (tests/repl/fuzz_parser.cpp). The grammar is in docs/repl.md.
//
// The syntax tree lives in one flat arena (Program::nodes), children by index: freeing it never
// recurses, and tree height is capped (kMaxDepth) so that evaluating it cannot overflow the stack.
#pragma once
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

namespace arrayc::lang {

struct Pos {
  uint32_t line = 1;  // 1-based
  uint32_t col = 1;   // 1-based, in bytes
};

// A syntax error: where, what, and whether more input could complete it (the REPL then asks for
// another line instead of reporting the error).
struct SyntaxError {
  Pos pos;
  std::string message;
  bool incomplete = false;
};

enum class NodeKind : uint8_t {
  Number,   // number, integral
  Bool,     // number is 0 or 1
  Name,     // text
  String,   // text (escapes resolved)
  List,     // [a, b, ...]: children
  Unary,    // op, one child
  Binary,   // op, two children
  Call,     // text = callee, children = arguments (Keyword nodes for name=value)
  Keyword,  // text = keyword, one child
  // indexing: x[1:3, ::-1, None, ..., 0]
  Subscript,  // children = the indexed expression, then one child per index item
  Slice,      // start:stop:step; number = bit mask of the parts present (1 start, 2 stop,
              // 4 step), children = those parts in order
  Ellipsis,   // ...
  NewAxis,    // None or newaxis as an index item
  Apply,    // f(...)(args): children = the Call that makes the function, then the arguments (transforms)
};

enum class Op : uint8_t {
  None,
  Add, Sub, Mul, Div, Pow, MatMul,
  Eq, Ne, Lt, Le, Gt, Ge,
  And, Or,
  Neg, Plus, Not,
  // numpy math (issue 28): '//', '%', bitwise '&', '|', '^', '<<', '>>' and '~'.
  FloorDiv, Mod, BitAnd, BitOr, BitXor, Shl, Shr, Invert,
};
const char* op_spelling(Op op);

struct Node {
  NodeKind kind = NodeKind::Number;
  Op op = Op::None;
  bool integral = false;
  Pos pos;
  double number = 0;
  __int128 integer = 0;  // Number, integral: the exact value (number is its nearest double)
  std::string_view text;
  uint32_t first = 0, count = 0;  // children: Program::kids[first .. first + count)
};

enum class StmtKind : uint8_t {
  Expr,     // expr                       prints its value
  Assign,   // name = expr
  Def,      // def name(params) = expr    a jit function
  Command,  // :name [argument]           REPL command; expr set for the stage commands
};

struct Stmt {
  StmtKind kind = StmtKind::Expr;
  Pos pos;
  std::string_view name;               // Assign/Def: the name; Command: the command
  std::vector<std::string_view> params; // Def
  int32_t expr = -1;                   // root node, or -1 (a command without expression)
  std::string_view arg;                // Command: the raw argument text (trimmed)
  std::string_view source;             // the statement's text
};

// The commands whose argument is an expression (":fused y", ":time sum(y)").
bool is_expression_command(std::string_view cmd);
// Every command, for :help and tab completion.
const std::vector<std::string_view>& command_names();

struct Program {
  std::string source;  // everything below points into it
  std::vector<Node> nodes;
  std::vector<uint32_t> kids;
  std::vector<Stmt> stmts;
  std::deque<std::string> strings;  // unescaped string literals

  const Node& node(int32_t i) const { return nodes[static_cast<size_t>(i)]; }
  uint32_t child(const Node& n, uint32_t k) const { return kids[n.first + k]; }
  Program() = default;
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
};

constexpr int kMaxDepth = 1000;  // tree height; deeper input is a syntax error

// Parses a whole program. Throws SyntaxError. `first_line` numbers the first line of `source`
// (the REPL counts lines across inputs).
void parse_program(std::string source, Program& out, uint32_t first_line = 1);

// Is `name` a valid identifier?
bool is_identifier(std::string_view name);

}  // namespace arrayc::lang
