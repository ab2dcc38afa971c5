// Lexer and recursive-descent parser of the arrayc language (grammar: docs/repl.md).
//
// Robustness rules (the parser is fuzzed): tokens are produced on demand (no token array), the
// recursion depth and the tree height are both capped, and every error is a SyntaxError with a
// position, never a crash.
#include "parser.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>
#include <system_error>

namespace arrayc::lang {

const char* op_spelling(Op op) {
  switch (op) {
    case Op::None: return "?";
    case Op::Add: return "+";
    case Op::Sub: return "-";
    case Op::Mul: return "*";
    case Op::Div: return "/";
    case Op::Pow: return "**";
    case Op::MatMul: return "@";
    case Op::Eq: return "==";
    case Op::Ne: return "!=";
    case Op::Lt: return "<";
    case Op::Le: return "<=";
    case Op::Gt: return ">";
    case Op::Ge: return ">=";
    case Op::And: return "&&";
    case Op::Or: return "||";
    case Op::Neg: return "-";
    case Op::Plus: return "+";
    case Op::Not: return "!";
    case Op::FloorDiv: return "//";
    case Op::Mod: return "%";
    case Op::BitAnd: return "&";
    case Op::BitOr: return "|";
    case Op::BitXor: return "^";
    case Op::Shl: return "<<";
    case Op::Shr: return ">>";
    case Op::Invert: return "~";
  }
  return "?";
}

namespace {

// The commands of the REPL (and of programs: a line may start with one). The first group takes
// an expression.
const std::vector<std::string_view> kExprCommands = {"graph", "optgraph", "fused", "kernels",
                                                     "llvm",  "opt",      "asm",   "ptx",
                                                     "cubin", "time"};
const std::vector<std::string_view> kOtherCommands = {"device", "fusion", "fastmath", "help", "quit",
                                                      "q",      "exit",   "vars",     "load", "stats", "cache",
                                                      "precision"};  // matmul precision (issue 29)

}  // namespace

bool is_expression_command(std::string_view cmd) {
  return std::find(kExprCommands.begin(), kExprCommands.end(), cmd) != kExprCommands.end();
}

const std::vector<std::string_view>& command_names() {
  static const std::vector<std::string_view> all = [] {
    std::vector<std::string_view> v = kExprCommands;
    v.insert(v.end(), kOtherCommands.begin(), kOtherCommands.end());
    return v;
  }();
  return all;
}

namespace {

bool is_ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_ident_char(char c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

enum class Tok : uint8_t {
  End, Newline, Number, Ident, String,
  LParen, RParen, LBracket, RBracket, Comma, Semicolon, Colon, Assign,
  Plus, Minus, Star, Slash, StarStar, At, EqEq, NotEq, Less, LessEq, Greater, GreaterEq,
  Amp, Pipe, Tilde, Bang,
  AmpAmp, PipePipe, Caret, Percent, SlashSlash, LessLess, GreaterGreater,
  Ellipsis,  // indexing
};

const char* tok_name(Tok t) {
  switch (t) {
    case Tok::End: return "end of input";
    case Tok::Newline: return "end of line";
    case Tok::Number: return "number";
    case Tok::Ident: return "name";
    case Tok::String: return "string";
    case Tok::LParen: return "'('";
    case Tok::RParen: return "')'";
    case Tok::LBracket: return "'['";
    case Tok::RBracket: return "']'";
    case Tok::Comma: return "','";
    case Tok::Semicolon: return "';'";
    case Tok::Colon: return "':'";
    case Tok::Assign: return "'='";
    case Tok::Plus: return "'+'";
    case Tok::Minus: return "'-'";
    case Tok::Star: return "'*'";
    case Tok::Slash: return "'/'";
    case Tok::StarStar: return "'**'";
    case Tok::At: return "'@'";
    case Tok::EqEq: return "'=='";
    case Tok::NotEq: return "'!='";
    case Tok::Less: return "'<'";
    case Tok::LessEq: return "'<='";
    case Tok::Greater: return "'>'";
    case Tok::GreaterEq: return "'>='";
    case Tok::Amp: return "'&'";
    case Tok::Pipe: return "'|'";
    case Tok::Tilde: return "'~'";
    case Tok::Bang: return "'!'";
    case Tok::AmpAmp: return "'&&'";
    case Tok::PipePipe: return "'||'";
    case Tok::Caret: return "'^'";
    case Tok::Percent: return "'%'";
    case Tok::SlashSlash: return "'//'";
    case Tok::LessLess: return "'<<'";
    case Tok::GreaterGreater: return "'>>'";
    case Tok::Ellipsis: return "'...'";
  }
  return "token";
}

struct Token {
  Tok kind = Tok::End;
  Pos pos;
  size_t begin = 0, end = 0;  // offsets in the source
};

// On-demand lexer. Newlines inside brackets are skipped (as Python joins lines there); a
// backslash at the end of a line joins it with the next.
class Lexer {
 public:
  Lexer(std::string_view src, uint32_t first_line) : src_(src) { pos_.line = first_line; }

  Token next() {
    skip_space();
    Token t;
    t.pos = pos_;
    t.begin = i_;
    if (i_ >= src_.size()) {
      t.kind = Tok::End;
      t.end = i_;
      return t;
    }
    char c = src_[i_];
    if (c == '\n') {
      advance();
      t.kind = Tok::Newline;
    } else if (is_digit(c) || (c == '.' && i_ + 1 < src_.size() && is_digit(src_[i_ + 1]))) {
      lex_number();
      t.kind = Tok::Number;
    } else if (is_ident_start(c)) {
      while (i_ < src_.size() && is_ident_char(src_[i_])) advance();
      t.kind = Tok::Ident;
    } else if (c == '"' || c == '\'') {
      lex_string(c, t.pos);
      t.kind = Tok::String;
    } else {
      t.kind = lex_punct(c, t.pos);
    }
    t.end = i_;
    if (t.kind == Tok::LParen || t.kind == Tok::LBracket) ++depth_;
    if ((t.kind == Tok::RParen || t.kind == Tok::RBracket) && depth_ > 0) --depth_;
    return t;
  }

  // The rest of the current line (for commands with a plain-text argument), trimmed.
  std::string_view rest_of_line() {
    size_t b = i_;
    while (i_ < src_.size() && src_[i_] != '\n') advance();
    std::string_view s = src_.substr(b, i_ - b);
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
      s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
      s.remove_suffix(1);
    return s;
  }

  size_t offset() const { return i_; }
  std::string_view source() const { return src_; }

 private:
  void advance() {
    if (src_[i_] == '\n') {
      ++pos_.line;
      pos_.col = 1;
    } else {
      ++pos_.col;
    }
    ++i_;
  }

  void skip_space() {
    while (i_ < src_.size()) {
      char c = src_[i_];
      if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
        advance();
      } else if (c == '#') {
        while (i_ < src_.size() && src_[i_] != '\n') advance();
      } else if (c == '\\' && i_ + 1 < src_.size() &&
                 (src_[i_ + 1] == '\n' ||
                  (src_[i_ + 1] == '\r' && i_ + 2 < src_.size() && src_[i_ + 2] == '\n'))) {
        advance();
        while (src_[i_] != '\n') advance();
        advance();
      } else if (c == '\n' && depth_ > 0) {
        advance();
      } else {
        break;
      }
    }
  }

  void lex_number() {
    while (i_ < src_.size() && (is_digit(src_[i_]) || src_[i_] == '_')) advance();
    if (i_ < src_.size() && src_[i_] == '.') {
      advance();
      while (i_ < src_.size() && is_digit(src_[i_])) advance();
    }
    if (i_ < src_.size() && (src_[i_] == 'e' || src_[i_] == 'E')) {
      size_t j = i_ + 1;
      if (j < src_.size() && (src_[j] == '+' || src_[j] == '-')) ++j;
      if (j < src_.size() && is_digit(src_[j])) {
        while (i_ < j) advance();
        while (i_ < src_.size() && is_digit(src_[i_])) advance();
      }
    }
    if (i_ < src_.size() && is_ident_char(src_[i_])) {
      Pos p = pos_;
      throw SyntaxError{p, "invalid character '" + std::string(1, src_[i_]) + "' in number"};
    }
  }

  void lex_string(char quote, Pos start) {
    advance();
    while (i_ < src_.size() && src_[i_] != quote) {
      if (src_[i_] == '\n') break;
      if (src_[i_] == '\\' && i_ + 1 < src_.size() && src_[i_ + 1] != '\n') advance();
      advance();
    }
    if (i_ >= src_.size() || src_[i_] != quote) throw SyntaxError{start, "unterminated string"};
    advance();
  }

  Tok lex_punct(char c, Pos p) {
    auto two = [&](char second) { return i_ + 1 < src_.size() && src_[i_ + 1] == second; };
    Tok k;
    size_t len = 1;
    switch (c) {
      case '(': k = Tok::LParen; break;
      case ')': k = Tok::RParen; break;
      case '[': k = Tok::LBracket; break;
      case ']': k = Tok::RBracket; break;
      case ',': k = Tok::Comma; break;
      case ';': k = Tok::Semicolon; break;
      case ':': k = Tok::Colon; break;
      case '+': k = Tok::Plus; break;
      case '-': k = Tok::Minus; break;
      case '/': if (two('/')) { k = Tok::SlashSlash; len = 2; } else { k = Tok::Slash; } break;
      case '@': k = Tok::At; break;
      case '&': if (two('&')) { k = Tok::AmpAmp; len = 2; } else { k = Tok::Amp; } break;
      case '|': if (two('|')) { k = Tok::PipePipe; len = 2; } else { k = Tok::Pipe; } break;
      case '^': k = Tok::Caret; break;
      case '%': k = Tok::Percent; break;
      case '~': k = Tok::Tilde; break;
      case '.':  // indexing: '...' (a '.' before a digit starts a number)
        if (!(two('.') && i_ + 2 < src_.size() && src_[i_ + 2] == '.')) throw SyntaxError{p, "unexpected character '.'"};
        k = Tok::Ellipsis;
        len = 3;
        break;
      case '*': if (two('*')) { k = Tok::StarStar; len = 2; } else { k = Tok::Star; } break;
      case '=': if (two('=')) { k = Tok::EqEq; len = 2; } else { k = Tok::Assign; } break;
      case '!': if (two('=')) { k = Tok::NotEq; len = 2; } else { k = Tok::Bang; } break;
      case '<':
        if (two('=')) { k = Tok::LessEq; len = 2; } else if (two('<')) { k = Tok::LessLess; len = 2; } else { k = Tok::Less; }
        break;
      case '>':
        if (two('=')) { k = Tok::GreaterEq; len = 2; } else if (two('>')) { k = Tok::GreaterGreater; len = 2; } else { k = Tok::Greater; }
        break;
      default: {
        unsigned char u = static_cast<unsigned char>(c);
        std::string shown;
        if (u >= 0x20 && u < 0x7f) {
          shown = {'\'', c, '\''};
        } else {
          static const char* hex = "0123456789abcdef";
          shown = std::string("byte 0x") + hex[u >> 4] + hex[u & 15];
        }
        throw SyntaxError{p, "unexpected character " + shown};
      }
    }
    for (size_t k2 = 0; k2 < len; ++k2) advance();
    return k;
  }

  std::string_view src_;
  size_t i_ = 0;
  Pos pos_;
  int depth_ = 0;  // open brackets
};

constexpr int kMaxNesting = 200;  // recursion depth of the parser (brackets, calls, prefixes)

class Parser {
 public:
  Parser(Program& prog, uint32_t first_line)
      : p_(prog), lex_(prog.source, first_line) {
    tok_ = lex_.next();
  }

  void program() {
    for (;;) {
      while (tok_.kind == Tok::Newline || tok_.kind == Tok::Semicolon) bump();
      if (tok_.kind == Tok::End) return;
      p_.stmts.push_back(statement());
    }
  }

 private:
  // ---- tokens ----
  void bump() { tok_ = lex_.next(); }
  std::string_view text(const Token& t) const {
    return std::string_view(p_.source).substr(t.begin, t.end - t.begin);
  }
  [[noreturn]] void fail(const Token& t, const std::string& msg) {
    throw SyntaxError{t.pos, msg, t.kind == Tok::End};
  }
  [[noreturn]] void unexpected(const std::string& wanted) {
    std::string found = tok_name(tok_.kind);
    if (tok_.kind == Tok::Ident || tok_.kind == Tok::Number) {
      std::string_view s = text(tok_);
      if (s.size() > 40) s = s.substr(0, 40);
      found += " '" + std::string(s) + (text(tok_).size() > 40 ? "...'" : "'");
    }
    fail(tok_, "expected " + wanted + ", found " + found);
  }
  void expect(Tok k, const char* what) {
    if (tok_.kind != k) unexpected(what);
    bump();
  }
  void skip_newlines() {
    while (tok_.kind == Tok::Newline) bump();
  }

  // ---- nodes ----
  struct Built {
    int32_t index;
    int height;
  };
  Built add(Node n, const std::vector<Built>& children, const Token& at) {
    int h = 0;
    n.first = static_cast<uint32_t>(p_.kids.size());
    n.count = static_cast<uint32_t>(children.size());
    for (const Built& c : children) {
      p_.kids.push_back(static_cast<uint32_t>(c.index));
      h = std::max(h, c.height);
    }
    if (h + 1 > kMaxDepth)
      throw SyntaxError{at.pos, "expression is nested too deeply (more than " +
                                    std::to_string(kMaxDepth) + " levels)"};
    p_.nodes.push_back(n);
    return Built{static_cast<int32_t>(p_.nodes.size() - 1), h + 1};
  }

  struct NestGuard {
    Parser& p;
    NestGuard(Parser& parser, const Token& at) : p(parser) {
      if (++p.nesting_ > kMaxNesting)
        throw SyntaxError{at.pos, "expression is nested too deeply (more than " +
                                      std::to_string(kMaxNesting) + " levels)"};
    }
    ~NestGuard() { --p.nesting_; }
  };

  // ---- statements ----
  Stmt statement() {
    Stmt s;
    s.pos = tok_.pos;
    size_t begin = tok_.begin;
    if (tok_.kind == Tok::Colon) {
      command(s);
    } else if (tok_.kind == Tok::Ident && text(tok_) == "def") {
      def(s);
    } else if (tok_.kind == Tok::Ident && peek_assign()) {
      s.kind = StmtKind::Assign;
      s.name = text(tok_);
      check_assignable(tok_);
      bump();
      bump();  // '='
      skip_newlines();
      s.expr = expr().index;
    } else {
      s.kind = StmtKind::Expr;
      s.expr = expr().index;
    }
    size_t end = lex_end_of_statement();
    s.source = std::string_view(p_.source).substr(begin, end - begin);
    while (!s.source.empty() && (s.source.back() == ' ' || s.source.back() == '\r'))
      s.source.remove_suffix(1);
    return s;
  }

  size_t lex_end_of_statement() {
    size_t end = tok_.begin;
    if (tok_.kind == Tok::Newline || tok_.kind == Tok::Semicolon) {
      bump();
    } else if (tok_.kind != Tok::End) {
      unexpected("end of statement");
    }
    return end;
  }

  bool peek_assign() {
    // name '=' (not '=='): look one token ahead without disturbing the lexer's state.
    Lexer saved = lex_;
    Token t = lex_.next();
    lex_ = saved;
    return t.kind == Tok::Assign;
  }

  void check_assignable(const Token& name) {
    std::string_view n = text(name);
    if (n == "def" || n == "true" || n == "false" || n == "True" || n == "False")
      fail(name, "cannot assign to '" + std::string(n) + "'");
  }

  void command(Stmt& s) {
    s.kind = StmtKind::Command;
    Token colon = tok_;
    bump();
    if (tok_.kind != Tok::Ident || tok_.begin != colon.end)
      fail(tok_, "expected a command name after ':' (try :help)");
    s.name = text(tok_);
    if (std::find(command_names().begin(), command_names().end(), s.name) ==
        command_names().end())
      fail(tok_, "unknown command ':" + std::string(s.name) + "' (try :help)");
    if (is_expression_command(s.name)) {
      bump();
      size_t b = tok_.begin;
      if (tok_.kind == Tok::Newline || tok_.kind == Tok::End || tok_.kind == Tok::Semicolon)
        fail(tok_, "':" + std::string(s.name) + "' needs an expression, as in ':" +
                       std::string(s.name) + " sum(x)'");
      s.expr = expr().index;
      s.arg = std::string_view(p_.source).substr(b, tok_.begin - b);
    } else {
      // Plain-text argument: the rest of the line, read raw (it may be a file name).
      s.arg = lex_.rest_of_line();
      bump();
    }
  }

  void def(Stmt& s) {
    s.kind = StmtKind::Def;
    bump();
    if (tok_.kind != Tok::Ident) unexpected("a function name after 'def'");
    check_assignable(tok_);
    s.name = text(tok_);
    bump();
    expect(Tok::LParen, "'(' after the function name");
    if (tok_.kind != Tok::RParen) {
      for (;;) {
        if (tok_.kind != Tok::Ident) unexpected("a parameter name");
        check_assignable(tok_);
        std::string_view pn = text(tok_);
        if (std::find(s.params.begin(), s.params.end(), pn) != s.params.end())
          fail(tok_, "duplicate parameter '" + std::string(pn) + "'");
        s.params.push_back(pn);
        bump();
        if (tok_.kind == Tok::Comma) {
          bump();
          continue;
        }
        break;
      }
    }
    expect(Tok::RParen, "')' or ',' in the parameter list");
    expect(Tok::Assign, "'=' and the function's expression, as in 'def f(a, b) = a * b'");
    skip_newlines();
    s.expr = expr().index;
  }

  // ---- expressions, lowest precedence first (Python's order; && and || are its 'and', 'or') ----
  //   expr   := lor
  //   lor    := land { '||' land }
  //   land   := cmp { '&&' cmp }
  //   cmp    := bor [ ('=='|'!='|'<'|'<='|'>'|'>=') bor ]
  //   bor    := bxor { '|' bxor }
  //   bxor   := band { '^' band }
  //   band   := shift { '&' shift }
  //   shift  := sum { ('<<'|'>>') sum }
  //   sum    := term { ('+'|'-') term }
  //   term   := unary { ('*'|'/'|'//'|'%'|'@') unary }
  //   unary  := ('-'|'+'|'~'|'!') unary | power
  //   power  := postfix [ '**' unary ]
  //   postfix := primary { '[' item { ',' item } ']' }          (indexing)
  //   item   := '...' | None | newaxis | [expr] ':' [expr] [':' [expr]] | expr
  Built expr() {
    NestGuard g(*this, tok_);
    return binary_level(0);
  }

  static constexpr int kCompareLevel = 2, kUnaryLevel = 9;
  static Op binary_op(Tok k, int level) {
    switch (level) {
      case 0: return k == Tok::PipePipe ? Op::Or : Op::None;
      case 1: return k == Tok::AmpAmp ? Op::And : Op::None;
      case kCompareLevel:
        switch (k) {
          case Tok::EqEq: return Op::Eq;
          case Tok::NotEq: return Op::Ne;
          case Tok::Less: return Op::Lt;
          case Tok::LessEq: return Op::Le;
          case Tok::Greater: return Op::Gt;
          case Tok::GreaterEq: return Op::Ge;
          default: return Op::None;
        }
      case 3: return k == Tok::Pipe ? Op::BitOr : Op::None;
      case 4: return k == Tok::Caret ? Op::BitXor : Op::None;
      case 5: return k == Tok::Amp ? Op::BitAnd : Op::None;
      case 6: return k == Tok::LessLess ? Op::Shl : k == Tok::GreaterGreater ? Op::Shr : Op::None;
      case 7: return k == Tok::Plus ? Op::Add : k == Tok::Minus ? Op::Sub : Op::None;
      case 8:
        switch (k) {
          case Tok::Star: return Op::Mul;
          case Tok::Slash: return Op::Div;
          case Tok::SlashSlash: return Op::FloorDiv;
          case Tok::Percent: return Op::Mod;
          case Tok::At: return Op::MatMul;
          default: return Op::None;
        }
      default: return Op::None;
    }
  }

  Built binary_level(int level) {
    if (level == kUnaryLevel) return unary();
    Built lhs = binary_level(level + 1);
    for (;;) {
      Op op = binary_op(tok_.kind, level);
      if (op == Op::None) return lhs;
      Token at = tok_;
      bump();
      skip_newlines();
      Built rhs = binary_level(level + 1);
      Node n;
      n.kind = NodeKind::Binary;
      n.op = op;
      n.pos = at.pos;
      lhs = add(n, {lhs, rhs}, at);
      if (level == kCompareLevel && binary_op(tok_.kind, kCompareLevel) != Op::None)
        fail(tok_, "comparisons do not chain; write (a < b) & (b < c)");
    }
  }

  Built unary() {
    Op op = Op::None;
    switch (tok_.kind) {
      case Tok::Minus: op = Op::Neg; break;
      case Tok::Plus: op = Op::Plus; break;
      case Tok::Tilde: op = Op::Invert; break;
      case Tok::Bang: op = Op::Not; break;
      default: return power();
    }
    Token at = tok_;
    NestGuard g(*this, at);
    bump();
    Built operand = unary();
    Node n;
    n.kind = NodeKind::Unary;
    n.op = op;
    n.pos = at.pos;
    return add(n, {operand}, at);
  }

  Built power() {
    Built base = postfix();
    if (tok_.kind != Tok::StarStar) return base;
    Token at = tok_;
    NestGuard g(*this, at);
    bump();
    skip_newlines();
    Built exponent = unary();  // right-associative; -x**2 is -(x**2), 2**-1 works
    Node n;
    n.kind = NodeKind::Binary;
    n.op = Op::Pow;
    n.pos = at.pos;
    return add(n, {base, exponent}, at);
  }

  // Indexing: subscripts after a primary, as x[1:3, ::-1, None, ..., 0].
  Built postfix() {
    Built base = primary();
    while (tok_.kind == Tok::LBracket) {
      Token at = tok_;
      NestGuard g(*this, at);
      bump();
      std::vector<Built> kids{base};
      while (tok_.kind != Tok::RBracket) {
        kids.push_back(index_item());
        if (tok_.kind == Tok::Comma) {
          bump();
          continue;
        }
        if (tok_.kind != Tok::RBracket) unexpected("']' or ',' in the index");
      }
      bump();
      Node n;
      n.kind = NodeKind::Subscript;
      n.pos = at.pos;
      base = add(n, kids, at);
    }
    return base;
  }

  Built index_item() {
    Token t = tok_;
    Node n;
    n.pos = t.pos;
    if (t.kind == Tok::Ellipsis) {
      bump();
      n.kind = NodeKind::Ellipsis;
      return add(n, {}, t);
    }
    if (t.kind == Tok::Ident && (text(t) == "None" || text(t) == "newaxis")) {
      Lexer saved = lex_;
      Token next = lex_.next();
      lex_ = saved;
      if (next.kind == Tok::Comma || next.kind == Tok::RBracket) {
        bump();
        n.kind = NodeKind::NewAxis;
        return add(n, {}, t);
      }
    }
    auto part_ends = [&] { return tok_.kind == Tok::Colon || tok_.kind == Tok::Comma || tok_.kind == Tok::RBracket; };
    std::vector<Built> parts;
    int mask = 0;
    if (!part_ends()) {
      Built e = expr();
      if (tok_.kind != Tok::Colon) return e;  // a plain index
      parts.push_back(e);
      mask |= 1;
    }
    if (tok_.kind != Tok::Colon) unexpected("an index");
    bump();
    if (!part_ends()) {
      parts.push_back(expr());
      mask |= 2;
    }
    if (tok_.kind == Tok::Colon) {
      bump();
      if (!part_ends()) {
        parts.push_back(expr());
        mask |= 4;
      }
    }
    n.kind = NodeKind::Slice;
    n.number = mask;
    return add(n, parts, t);
  }

  Built primary() {
    Token t = tok_;
    switch (t.kind) {
      case Tok::Number: {
        bump();
        return number(t);
      }
      case Tok::String: {
        bump();
        Node n;
        n.kind = NodeKind::String;
        n.pos = t.pos;
        p_.strings.push_back(unescape(text(t)));
        n.text = p_.strings.back();
        return add(n, {}, t);
      }
      case Tok::Ident: {
        bump();
        std::string_view name = text(t);
        Node n;
        n.pos = t.pos;
        if (name == "true" || name == "True" || name == "false" || name == "False") {
          n.kind = NodeKind::Bool;
          n.number = (name[0] == 't' || name[0] == 'T') ? 1 : 0;
          return add(n, {}, t);
        }
        if (name == "def") fail(t, "'def' starts a statement: def f(a, b) = expr");
        n.text = name;
        if (tok_.kind != Tok::LParen) {
          n.kind = NodeKind::Name;
          return add(n, {}, t);
        }
        n.kind = NodeKind::Call;
        NestGuard g(*this, tok_);
        bump();
        std::vector<Built> args = arguments(Tok::RParen, "')' or ',' after an argument", true);
        Built call = add(n, args, t);
        // transforms: grad(f)(x), vmap(f)(xs): a call of the function a call returns
        while (tok_.kind == Tok::LParen) {
          Token open = tok_;
          NestGuard ga(*this, tok_);
          bump();
          std::vector<Built> more{call};
          for (const Built& b : arguments(Tok::RParen, "')' or ',' after an argument", false)) more.push_back(b);
          Node a;
          a.kind = NodeKind::Apply;
          a.pos = n.pos;
          a.text = name;
          call = add(a, more, open);
        }
        return call;
      }
      case Tok::LParen: {
        NestGuard g(*this, t);
        bump();
        Built inner = expr();
        expect(Tok::RParen, "')'");
        return inner;
      }
      case Tok::LBracket: {
        NestGuard g(*this, t);
        bump();
        std::vector<Built> items = arguments(Tok::RBracket, "']' or ',' in the list", false);
        Node n;
        n.kind = NodeKind::List;
        n.pos = t.pos;
        return add(n, items, t);
      }
      default:
        unexpected("an expression");
    }
  }

  // Comma-separated expressions up to `close` (a trailing comma is allowed); keyword arguments
  // (name=value) when `keywords`.
  std::vector<Built> arguments(Tok close, const char* wanted, bool keywords) {
    std::vector<Built> out;
    bool seen_keyword = false;
    while (tok_.kind != close) {
      if (keywords && tok_.kind == Tok::Ident && peek_assign()) {
        Token key = tok_;
        bump();
        bump();
        Node n;
        n.kind = NodeKind::Keyword;
        n.pos = key.pos;
        n.text = text(key);
        out.push_back(add(n, {expr()}, key));
        seen_keyword = true;
      } else {
        if (seen_keyword) fail(tok_, "a positional argument cannot follow a keyword argument");
        out.push_back(expr());
      }
      if (tok_.kind == Tok::Comma) {
        bump();
        continue;
      }
      if (tok_.kind != close) unexpected(wanted);
    }
    bump();
    return out;
  }

  Built number(const Token& t) {
    std::string digits;
    std::string_view s = text(t);
    digits.reserve(s.size());
    for (char c : s)
      if (c != '_') digits.push_back(c);
    Node n;
    n.kind = NodeKind::Number;
    n.pos = t.pos;
    n.integral = digits.find_first_of(".eE") == std::string::npos;
    const char* b = digits.data();
    const char* e = b + digits.size();
    auto r = std::from_chars(b, e, n.number);
    if (r.ec == std::errc::result_out_of_range) {
      // Underflow rounds to 0 as in Python; overflow is an error (Python gives inf for floats
      // but we would rather say so).
      bool tiny = digits.find_first_of("eE") != std::string::npos &&
                  digits.find("e-") != std::string::npos;
      if (!tiny) fail(t, "number '" + std::string(s.substr(0, 40)) + "' is out of range");
      n.number = 0;
    } else if (r.ec != std::errc() || r.ptr != e) {
      fail(t, "malformed number '" + std::string(s.substr(0, 40)) + "'");
    }
    if (n.integral) {  // exact integers (issue 26): the digits themselves, not their double
      constexpr __int128 kMax = ~(static_cast<unsigned __int128>(1) << 127);
      for (char c : digits) {
        if (n.integer > (kMax - (c - '0')) / 10)
          fail(t, "integer '" + std::string(s.substr(0, 40)) + "' is out of range (integers hold 127 bits)");
        n.integer = n.integer * 10 + (c - '0');
      }
    }
    return add(n, {}, t);
  }

  static std::string unescape(std::string_view quoted) {
    std::string out;
    for (size_t i = 1; i + 1 < quoted.size(); ++i) {
      char c = quoted[i];
      if (c == '\\' && i + 2 < quoted.size()) {
        char d = quoted[++i];
        out.push_back(d == 'n' ? '\n' : d == 't' ? '\t' : d);
      } else {
        out.push_back(c);
      }
    }
    return out;
  }

  Program& p_;
  Lexer lex_;
  Token tok_;
  int nesting_ = 0;
};

}  // namespace

bool is_identifier(std::string_view name) {
  if (name.empty() || !is_ident_start(name[0])) return false;
  return std::all_of(name.begin(), name.end(), is_ident_char);
}

void parse_program(std::string source, Program& out, uint32_t first_line) {
  out.source = std::move(source);
  out.nodes.clear();
  out.kids.clear();
  out.stmts.clear();
  out.strings.clear();
  Parser parser(out, first_line);
  parser.program();
}

}  // namespace arrayc::lang
