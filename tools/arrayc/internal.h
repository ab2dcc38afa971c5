// What the tool's source files share: the session's definitions, scopes and builtin table, and
// small helpers on values. Not a public interface (session.h is the one the REPL and main use).
#pragma once
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "session.h"

namespace arrayc::tool {

using lang::Node;
using lang::NodeKind;
using lang::Op;
using lang::Program;
using lang::Stmt;
using lang::StmtKind;

[[noreturn]] void fail(const Node& at, std::string msg);
// A library error raised at `at`, as a UserError there; arrayc::Interrupted passes through.
[[noreturn]] void fail(const Node& at, const Error& e);

// Values (eval.cpp).
Value array_value(Array a);

// Exact integers (issue 26; integers.cpp). A Python-like integer is exact in 127 bits, and where
// it becomes an array it is exact or an arrayc::Error naming `op` and the dtype (numpy 2's rules).
using Int = __int128;
std::string int_str(Int v);
Value weak_int(Int v);
Value weak_float(double v);
// The integer as an int64, if it is one.
std::optional<int64_t> int64_of(const Value& v);
// A weak scalar on its own becomes what numpy makes of a Python scalar: int64, uint64 past
// int64's range (np.asarray(2**63)), float64; an integer past uint64 raises.
Array strong(const Value& v, const char* op = "asarray");
// numpy's dtype for a Python int: int64, or uint64 past int64's range.
DType int_dtype(Int v);
// full(shape, v) exact, in `dtype` (default int_dtype(v)); raises when an integer dtype cannot
// hold v.
Array full_exact(const Shape& shape, Int v, std::optional<DType> dtype, const char* op, Device device = default_device());
// Raises (naming op and t) when the integer dtype t cannot hold v; floats and bool take any v.
void check_int(Int v, DType t, const char* op);
// A weak scalar next to the array `like` in `op` (numpy 2: typed by `like`, out of range raises).
Array weak_like(const Value& v, const Array& like, const char* op);
// Python's arithmetic on two integers (+, -, *, **; ** by a negative gives a float), exact;
// nullopt for the other ops (they run on arrays).
std::optional<Value> fold_ints(lang::Op op, Int x, Int y, const lang::Node& at);
Value negate(const Value& v, const lang::Node& at);
const char* kind_name(const Value& v);
std::optional<DType> dtype_from_name(std::string_view n);
// A name as shown in a message: long ones are cut.
std::string shown(std::string_view name);
// " (did you mean 'sum'?)" for the closest candidate, or "".
std::string suggestion(std::string_view name, const std::vector<std::string>& candidates);

// A traced function of n arrays, through arrayc::jit (n is known only at run time, so the
// jitted lambda is instantiated for each arity up to kMaxParams).
struct JitEntry {
  std::function<std::vector<Array>(const std::vector<Array>&)> call;
  std::function<Stages(const std::vector<Array>&)> inspect;
};
using Body = std::function<Array(const std::vector<Array>&)>;
constexpr size_t kMaxParams = 8;
JitEntry make_jit(size_t n, Body body);

struct Session::Def {
  std::string name;
  std::shared_ptr<const Program> prog;
  const Stmt* stmt = nullptr;
  std::map<std::string, JitEntry> jits;  // by the pattern of scalar arguments
};

struct Session::Scope {
  const std::map<std::string, Value>* locals = nullptr;
  bool globals = true;   // may read the session's variables
  bool tracing = false;  // inside a jit trace: def calls inline, input() is refused
  const lang::Node* root = nullptr;  // the statement's expression: a def called there runs jitted
  std::vector<const Def*> stack;  // defs being inlined
};

// A builtin function: its parameters ("name" required, "name?" optional, and last "**name" for
// any other keyword arguments, in Args::named) and its body.
struct Session::Builtin {
  const char* name;
  std::vector<const char*> params;
  const char* help;
  struct Args;
  std::function<Value(Args&)> fn;
};

struct Session::Builtin::Args {
  const Builtin* fn;
  const Node* call;
  const Session::Scope* scope;
  std::vector<std::optional<Value>> v;
  std::vector<const Node*> at;
  std::string base_dir;
  std::vector<std::pair<std::string, Value>> named;  // keywords a "**name" parameter took, in order
  std::vector<const Node*> named_at;

  bool has(size_t i) const { return v[i].has_value(); }
  const Node& where(size_t i) const { return at[i] ? *at[i] : *call; }
  std::string param(size_t i) const {
    std::string p = fn->params[i];
    if (!p.empty() && p.back() == '?') p.pop_back();
    return p;
  }
  [[noreturn]] void bad(size_t i, const std::string& what) const {
    fail(where(i), std::string(fn->name) + "(): argument '" + param(i) + "' must be " + what +
                       ", not " + kind_name(*v[i]));
  }
  const Value& get(size_t i) const { return *v[i]; }

  // Arrays among the given arguments; weak scalars typed by the first array (numpy's rules).
  std::vector<Array> arrays(std::initializer_list<size_t> idx) const {
    const Array* like = nullptr;
    for (size_t i : idx)
      if (get(i).kind == Value::Kind::Array) {
        like = &*get(i).array;
        break;
      }
    std::vector<Array> out;
    for (size_t i : idx) {
      const Value& x = get(i);
      if (x.kind == Value::Kind::Array) {
        out.push_back(*x.array);
      } else if (x.kind == Value::Kind::Weak) {
        out.push_back(like ? weak_like(x, *like, fn->name) : strong(x, fn->name));
      } else {
        bad(i, "an array or a number");
      }
    }
    return out;
  }
  Array array(size_t i) const { return arrays({i})[0]; }
  DType dtype(size_t i) const {
    if (get(i).kind != Value::Kind::DType) bad(i, "a dtype (f32, f64, i32, i64, bool)");
    return get(i).dtype;
  }
  double number(size_t i) const {
    const Value& x = get(i);
    if (x.kind == Value::Kind::Weak) return x.number;
    if (x.kind == Value::Kind::Array && x.array->ndim() == 0) return x.array->item<double>();
    bad(i, "a number");
  }
  int64_t integer(size_t i) const {
    const Value& x = get(i);
    if (auto i = int64_of(x)) return *i;
    if (x.kind == Value::Kind::Array && x.array->ndim() == 0 && is_int(x.array->dtype()))
      return x.array->item<int64_t>();
    bad(i, "an integer");
  }
  bool boolean(size_t i) const {
    const Value& x = get(i);
    if (x.kind == Value::Kind::Weak) return x.number != 0;
    if (x.kind == Value::Kind::Array && x.array->ndim() == 0) return x.array->item<bool>();
    bad(i, "true or false");
  }
  std::string string(size_t i) const {
    if (get(i).kind != Value::Kind::String) bad(i, "a string");
    return get(i).text;
  }
  // A list of integers ([2, 3]) or one integer.
  std::vector<int64_t> ints(size_t i) const {
    const Value& x = get(i);
    if (x.kind == Value::Kind::Weak) return {integer(i)};
    if (x.kind == Value::Kind::Array && x.array->ndim() <= 1 &&
        (is_int(x.array->dtype()) || x.array->size() == 0))
      return x.array->to_vector<int64_t>();
    bad(i, "an integer or a list of integers");
  }
  Shape shape(size_t i) const {
    Shape s = ints(i);
    for (int64_t d : s)
      if (d < 0) fail(where(i), std::string(fn->name) + "(): negative dimension " + std::to_string(d) + " in shape " + shape_str(s));
    return s;
  }
};

// The builtin functions, in the order :help ops lists them (builtins.cpp).
const std::vector<Session::Builtin>& builtins();
const Session::Builtin* find_builtin(std::string_view name);

}  // namespace arrayc::tool
