// A session's statements and commands: definitions, assignments, printing, the : commands and
// the stages they show, errors reported with a caret. The evaluator is in eval.cpp, the builtin
// functions in builtins.cpp, :time in timing.cpp.
#include "session.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iostream>

#include "gpu_stages.h"
#include "internal.h"
#include "interrupt.h"

namespace arrayc::tool {

namespace {
// A :load inside a :load stopped at an error, which its file already reported.
struct NestedLoadFailed {};
}  // namespace

// ---- stage names ----------------------------------------------------------------------------

std::optional<Stage> stage_from_name(std::string_view n) {
  static const std::pair<const char*, Stage> table[] = {
      {"graph", Stage::Graph}, {"optgraph", Stage::OptGraph}, {"fused", Stage::Fused},
      {"kernels", Stage::Kernels}, {"llvm", Stage::Llvm}, {"opt", Stage::Opt},
      {"asm", Stage::Asm}, {"ptx", Stage::Ptx}, {"cubin", Stage::Cubin}};
  for (auto& [name, s] : table)
    if (n == name) return s;
  return std::nullopt;
}

const char* stage_name(Stage s) {
  switch (s) {
    case Stage::Graph: return "graph";
    case Stage::OptGraph: return "optgraph";
    case Stage::Fused: return "fused";
    case Stage::Kernels: return "kernels";
    case Stage::Llvm: return "llvm";
    case Stage::Opt: return "opt";
    case Stage::Asm: return "asm";
    case Stage::Ptx: return "ptx";
    case Stage::Cubin: return "cubin";
  }
  return "?";
}

// ---- printing ---------------------------------------------------------------------------------

std::string format_array(const Array& a) {
  std::string text = to_string(a);
  return text + " : " + dtype_name(a.dtype()) + shape_str(a.shape());
}

std::string format_weak(const Value& v) {
  return v.integral ? int_str(v.integer) : format_number(v.number);
}

// ---- the session ------------------------------------------------------------------------------

Session::Session(Options opts) : opts_(std::move(opts)) {
  if (!opts_.out) opts_.out = &std::cout;
  if (!opts_.err) opts_.err = &std::cerr;
}

Session::~Session() = default;

std::vector<std::string> Session::user_names() const {
  std::vector<std::string> out;
  for (const auto& [name, v] : vars_) out.push_back(name);
  for (const auto& [name, d] : defs_) out.push_back(name);
  return out;
}

void Session::report(const std::string& filename, std::string_view source, const UserError& e) {
  std::ostream& err = *opts_.err;
  if (!e.pos) {
    err << filename << ": error: " << e.message << "\n";
    return;
  }
  err << filename << ":" << e.pos->line << ":" << e.pos->col << ": error: " << e.message << "\n";
  // The line, windowed around the column when it is long, and a caret under the spot.
  size_t start = 0;
  for (uint32_t l = 1; l < e.pos->line && start != std::string_view::npos; ++l) {
    start = source.find('\n', start);
    if (start != std::string_view::npos) ++start;
  }
  if (start == std::string_view::npos || start > source.size()) return;
  size_t end = source.find('\n', start);
  std::string_view line = source.substr(start, end == std::string_view::npos ? end : end - start);
  size_t col = e.pos->col - 1;
  size_t from = 0;
  std::string prefix;
  if (col > 60) {
    from = col - 40;
    prefix = "...";
  }
  std::string shown(line.substr(std::min(from, line.size()), 100));
  std::string suffix = line.size() > from + 100 ? "..." : "";
  for (char& c : shown)
    if (c == '\t' || c == '\r' || static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = ' ';
  err << "    " << prefix << shown << suffix << "\n";
  err << "    " << std::string(prefix.size() + (col - from), ' ') << "^\n";
}

bool Session::run_source(std::string source, const std::string& filename, bool keep_going) {
  auto prog = std::make_shared<Program>();
  try {
    lang::parse_program(std::move(source), *prog);
  } catch (const lang::SyntaxError& e) {
    report(filename, prog->source, UserError{e.pos, e.message});
    return false;
  }
  return run(prog, filename, keep_going);
}

bool Session::run(std::shared_ptr<const Program> prog, const std::string& filename, bool keep_going) {
  bool ok = true;
  int exprs = 0;
  for (const Stmt& s : prog->stmts) exprs += s.kind == StmtKind::Expr;
  for (const Stmt& s : prog->stmts) {
    if (quit_) break;
    if (sigint_received()) {  // Ctrl-C between statements of a batch run
      interrupted_ = true;
      ok = false;
      break;
    }
    try {
      if (opts_.emit && exprs > 1 && s.kind == StmtKind::Expr)
        *opts_.out << "# ---- line " << s.pos.line << ": " << s.source << "\n";
      if (s.kind == StmtKind::Def) {
        auto d = std::make_shared<Def>();
        d->name = std::string(s.name);
        d->prog = prog;
        d->stmt = &s;
        if (find_builtin(s.name)) throw UserError{s.pos, "'" + d->name + "' is a builtin function; choose another name"};
        if (dtype_from_name(s.name)) throw UserError{s.pos, "'" + d->name + "' is a dtype; choose another name"};
        if (s.params.size() > kMaxParams) throw UserError{s.pos, "a def takes at most 8 parameters"};
        // Names in the body must be parameters (or dtypes): a def sees nothing else.
        for (std::vector<int32_t> todo{s.expr}; !todo.empty();) {
          const Node& n = prog->node(todo.back());
          todo.pop_back();
          for (uint32_t k = 0; k < n.count; ++k) todo.push_back(static_cast<int32_t>(prog->child(n, k)));
          if (n.kind == NodeKind::Name && !dtype_from_name(n.text) &&
              !defs_.count(std::string(n.text)) &&  // transforms: grad(f)(x) inside a def names f
              std::find(s.params.begin(), s.params.end(), n.text) == s.params.end())
            fail(n, "unknown name '" + std::string(n.text) + "' in def " + d->name +
                        ": a def sees only its parameters" +
                        (vars_.count(std::string(n.text)) ? " (pass '" + std::string(n.text) + "' as an argument)" : ""));
        }
        vars_.erase(d->name);
        // Redefining a def drops every traced function: their traces may have inlined the old one.
        for (auto& [n, other] : defs_) other->jits.clear();
        defs_[d->name] = d;
      } else {
        exec(*prog, s, filename);
      }
    } catch (const UserError& e) {
      report(filename, prog->source, e.pos ? e : UserError{s.pos, e.message});
      ok = false;
    } catch (const NestedLoadFailed&) {
      ok = false;
    } catch (const Interrupted&) {
      *opts_.err << "interrupted\n";  // the variables keep their values
      interrupted_ = true;
      ok = false;
      break;
    } catch (const Error& e) {
      report(filename, prog->source, UserError{s.pos, e.what()});
      ok = false;
    } catch (const std::bad_alloc&) {
      report(filename, prog->source, UserError{s.pos, "out of memory"});
      ok = false;
    } catch (const std::exception& e) {
      report(filename, prog->source, UserError{s.pos, std::string("internal error: ") + e.what()});
      ok = false;
    }
    if (!ok && !keep_going) break;
  }
  opts_.out->flush();
  return ok;
}

void Session::exec(const Program& p, const Stmt& s, const std::string& filename) {
  Scope scope;
  if (s.expr >= 0) scope.root = &p.node(s.expr);
  switch (s.kind) {
    case StmtKind::Expr:
      if (opts_.emit) {
        show_stage(*opts_.emit, p, s.expr);
      } else {
        print_value(eval(p, s.expr, scope));
      }
      return;
    case StmtKind::Assign: {
      Value v = eval(p, s.expr, scope);
      if (v.kind == Value::Kind::None) throw UserError{s.pos, "nothing to assign"};
      std::string name(s.name);
      if (find_builtin(name) || dtype_from_name(name))
        throw UserError{s.pos, "'" + name + "' is a builtin name; choose another name"};
      defs_.erase(name);
      vars_[name] = std::move(v);
      return;
    }
    case StmtKind::Command: command(p, s, filename); return;
    case StmtKind::Def: return;  // handled by run()
  }
}

void Session::print_value(const Value& v) {
  std::ostream& out = *opts_.out;
  switch (v.kind) {
    case Value::Kind::None: return;
    case Value::Kind::Array: out << format_array(*v.array) << "\n"; return;
    case Value::Kind::Weak: out << format_weak(v) << "\n"; return;
    case Value::Kind::DType: out << dtype_name(v.dtype) << "\n"; return;
    case Value::Kind::String: out << '"' << v.text << "\"\n"; return;
  }
}

// ---- stages -------------------------------------------------------------------------------------

Stages Session::inspect_expr(const Program& p, int32_t expr) {
  const Node& root = p.node(expr);
  Scope scope;
  if (root.kind == NodeKind::Call && defs_.count(std::string(root.text))) {
    // The stages of a def: of its traced function for these arguments (arrays are parameters).
    Def& def = *defs_[std::string(root.text)];
    std::vector<Array> arrays;
    for (uint32_t k = 0; k < root.count; ++k) {
      const Node& a = p.node(static_cast<int32_t>(p.child(root, k)));
      if (a.kind == NodeKind::Keyword) fail(a, "a def takes positional arguments only");
      Value v = eval(p, static_cast<int32_t>(p.child(root, k)), scope);
      if (v.kind != Value::Kind::Array) {
        // Numbers are baked into the trace: show the stages through a call that does the same.
        arrays.clear();
        break;
      }
      arrays.push_back(*v.array);
    }
    if (arrays.size() == root.count) {
      std::vector<Value> args;
      for (const Array& a : arrays) args.push_back(array_value(a));
      call_jit(def, args);  // makes (or finds) the jit entry for this pattern
      std::string key;
      for (size_t i = 0; i < arrays.size(); ++i) key += "A;";
      try {
        return def.jits.at(key).inspect(arrays);
      } catch (const Error& e) {
        fail(root, e);
      }
    }
  }
  if (root.kind != NodeKind::Apply) scope.root = &root;  // grad(f)(x) and vmap(f)(x): their graph, not their value
  Value v = eval(p, expr, scope);
  if (v.kind == Value::Kind::Weak) v = array_value(strong(v));
  if (v.kind != Value::Kind::Array) fail(root, std::string("no stages for ") + kind_name(v) + ": it is not an array");
  try {
    return inspect({*v.array}, fusion_enabled());
  } catch (const Error& e) {
    fail(root, e);
  }
}

void Session::show_stage(Stage stage, const Program& p, int32_t expr) {
  std::ostream& out = *opts_.out;
  std::string text;
  if (stage == Stage::Ptx || stage == Stage::Cubin) {
    Stages st = inspect_expr(p, expr);
    text = stage == Stage::Ptx ? ptx_text(st, opts_.sm) : cubin_text(st);
  } else {
    Stages st = inspect_expr(p, expr);
    auto kernels = [&](std::string KernelStages::*field) {
      if (st.kernels.empty()) return std::string("; no compiled kernels (see :fused)\n");
      return st.all(field);
    };
    switch (stage) {
      case Stage::Graph: text = st.graph; break;
      case Stage::OptGraph: text = st.optimized; break;
      case Stage::Fused: text = st.fused; break;
      case Stage::Kernels: text = kernels(&KernelStages::kernel); break;
      case Stage::Llvm: text = kernels(&KernelStages::llvm); break;
      case Stage::Opt: text = kernels(&KernelStages::opt); break;
      case Stage::Asm: text = "; target: " + st.target + "\n" + kernels(&KernelStages::assembly); break;
      default: break;
    }
  }
  out << text;
  if (!text.empty() && text.back() != '\n') out << "\n";
}

// ---- commands -------------------------------------------------------------------------------

void Session::command(const Program& p, const Stmt& s, const std::string& filename) {
  std::string cmd(s.name);
  std::string arg(s.arg);
  if (auto stage = stage_from_name(cmd)) {
    if (opts_.emit) return;  // batch --emit prints its one stage
    show_stage(*stage, p, s.expr);
  } else if (cmd == "time") {
    if (opts_.emit) return;
    time_expr(p, s.expr);
  } else if (cmd == "help") {
    help(arg);
  } else if (cmd == "quit" || cmd == "q" || cmd == "exit") {
    quit_ = true;
  } else if (cmd == "device") {
    if (arg.empty()) {
      *opts_.out << "device: " << default_device().str() << "\n";
      return;
    }
    try {
      Device d = parse_device(arg);
      set_default_device(d);
      *opts_.out << "device: " << d.str() << "\n";
    } catch (UserError& e) {
      e.pos = s.pos;
      throw;
    }
  } else if (cmd == "fusion" || cmd == "fastmath") {
    bool fusion = cmd == "fusion";
    if (arg == "on" || arg == "off") {
      (fusion ? set_fusion : set_fast_math)(arg == "on");
    } else if (!arg.empty()) {
      throw UserError{s.pos, ":" + cmd + " takes on or off"};
    }
    *opts_.out << cmd << ": " << ((fusion ? fusion_enabled() : fast_math_enabled()) ? "on" : "off") << "\n";
  } else if (cmd == "precision") {  // matmul precision (issue 29)
    if (arg == "highest" || arg == "high") {
      set_matmul_precision(arg == "high" ? MatmulPrecision::High : MatmulPrecision::Highest);
    } else if (!arg.empty()) {
      throw UserError{s.pos, ":precision takes highest or high"};
    }
    *opts_.out << "precision: " << (matmul_precision() == MatmulPrecision::High ? "high (float32 products may use TF32)" : "highest")
               << "\n";
  } else if (cmd == "vars") {
    for (const auto& [name, v] : vars_) {
      *opts_.out << "  " << name << " : ";
      if (v.kind == Value::Kind::Array)
        *opts_.out << dtype_name(v.array->dtype()) << shape_str(v.array->shape())
                   << (v.array->is_evaluated() ? "" : " (lazy)");
      else if (v.kind == Value::Kind::Weak)
        *opts_.out << "number " << format_weak(v);
      else
        *opts_.out << kind_name(v);
      *opts_.out << "\n";
    }
    for (const auto& [name, d] : defs_) *opts_.out << "  " << d->stmt->source << "\n";
  } else if (cmd == "stats") {
    Stats st = stats();
    *opts_.out << "traces " << st.traces << ", compiles " << st.compiles << ", cache hits "
               << st.cache_hits << ", kernel launches " << st.kernel_launches << ", compile "
               << st.compile_ms << " ms; disk cache hits " << st.disk_hits << ", misses " << st.disk_misses
               << ", writes " << st.disk_writes << "\n";
  } else if (cmd == "cache") {
    if (arg == "clear") clear_disk_cache();
    else if (!arg.empty()) throw UserError{s.pos, ":cache takes nothing or clear"};
    DiskCacheInfo c = disk_cache_info();
    if (!c.enabled)
      *opts_.out << "disk cache: off (ARRAYC_CACHE=0)\n";
    else {
      Stats st = stats();
      int64_t looked = st.disk_hits + st.disk_misses;
      *opts_.out << "disk cache: " << c.dir << (c.writable ? "" : " (not writable: memory-only)") << ", " << c.entries
                 << " entries, " << c.bytes << " bytes of at most " << c.max_bytes << "; this session "
                 << st.disk_hits << " hits of " << looked << " lookups";
      if (looked > 0) *opts_.out << " (" << (100 * st.disk_hits / looked) << "%)";
      *opts_.out << "\n";
    }
  } else if (cmd == "load") {
    load(arg, s.pos);
  } else {
    throw UserError{s.pos, "unknown command :" + cmd};
  }
  (void)filename;
}

// :load FILE: runs a program file in this session, its input() files relative to it.
void Session::load(const std::string& file, lang::Pos at) {
  constexpr int kMaxLoadDepth = 16;
  if (file.empty()) throw UserError{at, ":load needs a file name"};
  if (load_depth_ >= kMaxLoadDepth)
    throw UserError{at, ":load " + file + ": files load each other more than " + std::to_string(kMaxLoadDepth) +
                            " deep (does a file load itself?)"};
  std::ifstream f(file, std::ios::binary);
  if (!f) throw UserError{at, "cannot open '" + file + "': " + std::strerror(errno)};
  std::string src((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::string saved = opts_.base_dir;
  size_t slash = file.rfind('/');
  opts_.base_dir = slash == std::string::npos ? "." : file.substr(0, slash);
  ++load_depth_;
  bool ok = run_source(std::move(src), file);
  --load_depth_;
  opts_.base_dir = saved;
  if (interrupted_) throw Interrupted();
  if (!ok && load_depth_ > 0) throw NestedLoadFailed{};  // reported once, by the outermost :load
  if (!ok) throw UserError{at, ":load " + file + " stopped at an error"};
}

void Session::help(std::string_view topic) {
  std::ostream& out = *opts_.out;
  if (!topic.empty()) {
    std::string t(topic);
    if (t[0] == ':') t = t.substr(1);
    if (const Builtin* b = find_builtin(t)) {
      out << b->help << "\n";
      return;
    }
    if (t != "ops") {
      out << "no help on '" << t << "'; :help lists the commands, :help ops the functions\n";
      return;
    }
    out << "functions:\n";
    for (const Builtin& b : builtins()) out << "  " << b.help << "\n";
    return;
  }
  out << R"(arrayc: type array expressions; a bare expression prints its value.
  x = arange(1000000.0) / 1000000.0 - 0.5      assignment (lazy: nothing runs yet)
  x = input(f32, [1000], seed=3)                program input: normal(0, 1), or file="x.bin"
  def selu(x) = 1.05 * where(x > 0, x, 1.67 * exp(x) - 1.67)    a jit function
  sum(selu(x))                                  prints the value
operators: + - * / // % ** @  == != < <= > >=  & | ^ ~ << >>  && || !   (Python's precedence)
commands (EXPR is any expression, or a call of a def):
  :graph EXPR      the graph as built          :optgraph EXPR  after the graph passes
  :fused EXPR      kernels and why each fusion ends
  :kernels EXPR    each kernel's text form     :llvm EXPR      LLVM IR before optimization
  :opt EXPR        LLVM IR after -O3           :asm EXPR       host assembly
  :ptx EXPR        PTX for --sm (no GPU needed) :cubin EXPR    on a GPU: registers, spills
  :time EXPR       each compile stage timed, then the steady-state run
  :device cpu|gpu0 where new arrays live       :fusion on|off  fuse elementwise work or not
  :fastmath on|off CPU sin/cos without huge arguments, f64 pow in double (docs/math_accuracy.md)
  :precision highest|high  float32 products exact, or on a GPU's TF32 tensor cores (docs/cuda.md)
  :vars            variables and defs          :stats          what the engine has done
  :cache [clear]   the disk cache (where, how full); clear empties it
  :load FILE       run a program file          :help ops       every function
  :quit            leave (or Ctrl-D)
)";
}

}  // namespace arrayc::tool
