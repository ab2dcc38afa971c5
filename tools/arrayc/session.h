// A session of the arrayc tool: variables, jit functions (def), the evaluator of the syntax tree
// onto the library's API, and the commands (:fused, :time, ...). The REPL and batch mode both
// drive one Session. Its parts: session.cpp (statements, commands, stages), eval.cpp (the
// evaluator and def calls), builtins.cpp (the builtin functions), timing.cpp (:time).
#pragma once
#include <arrayc/arrayc.h>

#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "parser.h"

namespace arrayc::tool {

// A mistake in the user's program, at a position (when known). Library errors (arrayc::Error)
// become one of these at the node that called the library, keeping their message.
struct UserError {
  std::optional<lang::Pos> pos;
  std::string message;
};

// The value of an expression.
struct Value {
  enum class Kind { None, Array, Weak, DType, String } kind = Kind::None;
  std::optional<Array> array;  // Array (optional: a default Array would build a graph node)
  double number = 0;      // Weak: a Python-like scalar, typed by what it meets (numpy's rules)
  bool integral = false;  // Weak: an integer, exactly `integer` (number is its nearest double)
  __int128 integer = 0;   // Weak, integral (exact integers, issue 26: 127 bits, no double between)
  DType dtype = DType::Float32;  // DType
  std::string text;       // String
};

// The compiler stages the tool can show, as named by --emit and the : commands.
enum class Stage { Graph, OptGraph, Fused, Kernels, Llvm, Opt, Asm, Ptx, Cubin };
std::optional<Stage> stage_from_name(std::string_view name);
const char* stage_name(Stage s);

struct Options {
  std::ostream* out = nullptr;      // results and stage text
  std::ostream* err = nullptr;      // errors and notes
  std::string base_dir = ".";       // where input(file=...) paths are relative to
  std::optional<Stage> emit;        // batch --emit: print this stage of each expression
  std::string sm = "sm_90";         // --sm for PTX
  bool interactive = false;         // the REPL: :quit ends it, errors never stop it
};

class Session {
 public:
  explicit Session(Options opts);
  ~Session();

  // Runs every statement of a parsed program. Returns false at the first error (after reporting
  // it with `filename` and a caret) unless keep_going, which goes on after errors and returns
  // whether all statements succeeded.
  bool run(std::shared_ptr<const lang::Program> prog, const std::string& filename,
           bool keep_going = false);

  // Parses and runs source text (what :load and batch mode use).
  bool run_source(std::string source, const std::string& filename, bool keep_going = false);

  // Reports a syntax error the way run() reports any error.
  void report(const std::string& filename, std::string_view source, const UserError& e);

  bool quit_requested() const { return quit_; }
  // Whether Ctrl-C stopped the last run (a batch run then exits with 130).
  bool interrupted() const { return interrupted_; }
  void clear_interrupted() { interrupted_ = false; }

  // For tab completion: variable and def names; the builtin function names.
  std::vector<std::string> user_names() const;
  static std::vector<std::string> builtin_names();

  struct Def;
  struct Builtin;
  struct Scope;

 private:
  void exec(const lang::Program& p, const lang::Stmt& s, const std::string& filename);
  void command(const lang::Program& p, const lang::Stmt& s, const std::string& filename);
  void print_value(const Value& v);
  void show_stage(Stage stage, const lang::Program& p, int32_t expr);
  void time_expr(const lang::Program& p, int32_t expr);
  void help(std::string_view topic);
  void load(const std::string& file, lang::Pos at);

  Value eval(const lang::Program& p, int32_t node, Scope& scope);
  Value eval_call(const lang::Program& p, const lang::Node& n, Scope& scope);
  Value eval_list(const lang::Program& p, const lang::Node& n, Scope& scope);
  Value eval_subscript(const lang::Program& p, const lang::Node& n, Scope& scope);  // indexing
  Value eval_apply(const lang::Program& p, const lang::Node& n, Scope& scope);  // transforms.cpp
  detail::ArrayFn transformed(const lang::Program& p, const lang::Node& maker, const std::vector<Value>& pattern, Scope& scope);
  Value call_def(const lang::Node& at, Def& def, std::vector<Value> args, Scope& scope);
  Value call_jit(Def& def, const std::vector<Value>& args);
  Value def_body(const Def& def, std::map<std::string, Value> locals, std::vector<const Def*> stack);
  Stages inspect_expr(const lang::Program& p, int32_t expr);

  Options opts_;
  std::map<std::string, Value> vars_;
  std::map<std::string, std::shared_ptr<Def>> defs_;
  bool quit_ = false;
  bool interrupted_ = false;
  int load_depth_ = 0;  // :load inside :load
};

// A value as the tool prints it: the library's numpy-like text (arrayc/format.h), then the
// type: "[0. 1. 2.] : float64[3]".
std::string format_array(const Array& a);
// A Python-like number: "3", "0.1" (an integer exactly, all its digits).
std::string format_weak(const Value& v);

}  // namespace arrayc::tool
