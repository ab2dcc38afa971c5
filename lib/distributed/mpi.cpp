#include "distributed/mpi.h"

#include <dlfcn.h>

#include <chrono>
#include <climits>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include "arrayc/error.h"
#include "support/env.h"

namespace arrayc::detail::mpi {
namespace {

// OpenMPI's handles are pointers to its predefined objects.
using Handle = void*;
constexpr int kSuccess = 0;
constexpr int kThreadMultiple = 3;  // MPI_THREAD_MULTIPLE in OpenMPI
void* const kInPlace = reinterpret_cast<void*>(1);

struct Library {
  void* lib = nullptr;
  std::string reason;
#define ARRAYC_MPI_FUNCTIONS(X)                                                            \
  X(MPI_Initialized, int, int*)                                                            \
  X(MPI_Finalized, int, int*)                                                              \
  X(MPI_Init_thread, int, int*, char***, int, int*)                                        \
  X(MPI_Finalize, int)                                                                     \
  X(MPI_Comm_rank, int, Handle, int*)                                                      \
  X(MPI_Comm_size, int, Handle, int*)                                                      \
  X(MPI_Comm_set_errhandler, int, Handle, Handle)                                          \
  X(MPI_Error_string, int, int, char*, int*)                                               \
  X(MPI_Iallreduce, int, const void*, void*, int, Handle, Handle, Handle, Handle*)         \
  X(MPI_Iallgather, int, const void*, int, Handle, void*, int, Handle, Handle, Handle*)    \
  X(MPI_Ireduce_scatter_block, int, const void*, void*, int, Handle, Handle, Handle, Handle*) \
  X(MPI_Ibcast, int, void*, int, Handle, int, Handle, Handle*)                             \
  X(MPI_Ibarrier, int, Handle, Handle*)                                                    \
  X(MPI_Test, int, Handle*, int*, void*)
#define ARRAYC_MPI_MEMBER(name, ret, ...) ret (*name)(__VA_ARGS__) = nullptr;
  ARRAYC_MPI_FUNCTIONS(ARRAYC_MPI_MEMBER)
#undef ARRAYC_MPI_MEMBER
  Handle world = nullptr, errors_return = nullptr;
  Handle byte = nullptr, u8 = nullptr, i32 = nullptr, i64 = nullptr, f32 = nullptr, f64 = nullptr;
  Handle sum = nullptr, prod = nullptr, max = nullptr, min = nullptr;
  int rank = 0, size = 1;
  std::mutex mu;                  // abandoned
  std::vector<Handle> abandoned;  // collectives that timed out, still pending

  Library() {
    std::string path = mpi_library_setting();
    // Global: OpenMPI's plugins resolve their symbols against libmpi.
    lib = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (!lib) {
      const char* e = dlerror();
      reason = "MPI (" + path + ") could not be loaded: " + (e ? e : "unknown error") +
               " (install OpenMPI, e.g. apt-get install openmpi-bin libopenmpi3, or set ARRAYC_MPI_LIBRARY)";
      return;
    }
#define ARRAYC_MPI_LOAD(name, ...)                                   \
  name = reinterpret_cast<decltype(name)>(dlsym(lib, #name));        \
  if (!name) {                                                       \
    reason = "MPI (" + path + ") lacks " #name;                      \
    return;                                                          \
  }
    ARRAYC_MPI_FUNCTIONS(ARRAYC_MPI_LOAD)
#undef ARRAYC_MPI_LOAD
    struct {
      Handle* slot;
      const char* symbol;
    } objects[] = {{&world, "ompi_mpi_comm_world"}, {&errors_return, "ompi_mpi_errors_return"},
                   {&byte, "ompi_mpi_byte"},        {&u8, "ompi_mpi_uint8_t"},
                   {&i32, "ompi_mpi_int32_t"},      {&i64, "ompi_mpi_int64_t"},
                   {&f32, "ompi_mpi_float"},        {&f64, "ompi_mpi_double"},
                   {&sum, "ompi_mpi_op_sum"},       {&prod, "ompi_mpi_op_prod"},
                   {&max, "ompi_mpi_op_max"},       {&min, "ompi_mpi_op_min"}};
    for (auto& o : objects) {
      *o.slot = dlsym(lib, o.symbol);
      if (!*o.slot) {
        reason = "MPI (" + path + ") is not OpenMPI: it lacks " + o.symbol;
        return;
      }
    }
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      int provided = 0;
      if (int r = MPI_Init_thread(nullptr, nullptr, kThreadMultiple, &provided); r != kSuccess) {
        reason = "MPI_Init_thread failed: " + error_text(r);
        return;
      }
      // MPI_Finalize waits for pending collectives: it is skipped (rather than hang) when one
      // that timed out is still pending after a last second.
      std::atexit([] {
        Library& l = *instance();
        int finalized = 0;
        l.MPI_Finalized(&finalized);
        if (finalized || !l.settle(std::chrono::seconds(1))) return;
        l.MPI_Finalize();
      });
    }
    MPI_Comm_set_errhandler(world, errors_return);
    MPI_Comm_rank(world, &rank);
    MPI_Comm_size(world, &size);
  }

  std::string error_text(int code) const {
    char text[512] = {};
    int n = 0;
    if (MPI_Error_string && MPI_Error_string(code, text, &n) == kSuccess) return std::string(text, n);
    return "MPI error " + std::to_string(code);
  }

  void check(int r, const std::string& what) const {
    if (r != kSuccess) throw Error(what + " failed (rank " + std::to_string(rank) + " of " + std::to_string(size) +
                                   "): " + error_text(r));
  }

  // Whether every abandoned collective completes within `within`.
  bool settle(std::chrono::milliseconds within) {
    std::lock_guard<std::mutex> lock(mu);
    auto deadline = std::chrono::steady_clock::now() + within;
    for (Handle& req : abandoned) {
      for (int done = 0; !done;) {
        if (MPI_Test(&req, &done, nullptr) != kSuccess) return false;
        if (!done && std::chrono::steady_clock::now() > deadline) return false;
        if (!done) std::this_thread::sleep_for(std::chrono::microseconds(100));
      }
    }
    abandoned.clear();
    return true;
  }

  static Library*& instance() {
    static Library* l = nullptr;
    return l;
  }
};

Library& loaded(const std::string& what) {
  static std::once_flag once;
  std::call_once(once, [] { Library::instance() = new Library; });
  Library& l = *Library::instance();
  if (!l.reason.empty()) throw Error(what + ": " + l.reason);
  return l;
}

Handle type_of(Library& l, DType t, bool reduce, Op op, const std::string& what) {
  switch (t) {
    case DType::Bool:
      if (!reduce || op == Op::Max || op == Op::Min) return l.u8;
      break;
    case DType::Int32: return l.i32;
    case DType::Int64: return l.i64;
    case DType::Float32: return l.f32;
    case DType::Float64: return l.f64;
    default: break;
  }
  throw Error(what + ": MPI has no " + (reduce ? "sum/product" : "transfer") + " of dtype " + dtype_name(t));
}

Handle op_of(Library& l, Op op) {
  switch (op) {
    case Op::Sum: return l.sum;
    case Op::Prod: return l.prod;
    case Op::Max: return l.max;
    case Op::Min: return l.min;
  }
  return l.sum;
}

// Waits for a nonblocking collective by polling, so that a process that never joins it ends the
// call after ARRAYC_COLLECTIVE_TIMEOUT seconds with arrayc::Error rather than a hang (MPI cannot
// cancel a collective: the request is kept, and MPI_Finalize skipped at exit if it never ends).
// `req` is a reference: the call that starts the collective, and sets it, may be an argument.
void wait(Library& l, int started, Handle& req, const std::string& what) {
  l.check(started, what);
  int64_t seconds = collective_timeout_setting();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  for (int spins = 0;; ++spins) {
    int done = 0;
    l.check(l.MPI_Test(&req, &done, nullptr), what + ": MPI_Test");
    if (done) return;
    if (std::chrono::steady_clock::now() > deadline) {
      std::lock_guard<std::mutex> lock(l.mu);
      l.abandoned.push_back(req);
      throw Error(what + " did not finish within ARRAYC_COLLECTIVE_TIMEOUT=" + std::to_string(seconds) +
                  " seconds (process " + std::to_string(l.rank) + " of " + std::to_string(l.size) +
                  "; did another process not call it?)");
    }
    if (spins > 2000) std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

int count_of(size_t count, const std::string& what) {
  if (count > static_cast<size_t>(INT_MAX))
    throw Error(what + ": " + std::to_string(count) + " elements is more than MPI's int count allows (" +
                std::to_string(INT_MAX) + ")");
  return static_cast<int>(count);
}

}  // namespace

int rank() { return loaded("process rank").rank; }
int size() { return loaded("process count").size; }

void all_reduce(const void* send, void* recv, size_t count, DType t, Op op, const std::string& what) {
  Library& l = loaded(what);
  Handle req = nullptr;
  int r = l.MPI_Iallreduce(send == recv ? kInPlace : send, recv, count_of(count, what), type_of(l, t, true, op, what),
                           op_of(l, op), l.world, &req);
  wait(l, r, req, what + ": MPI_Iallreduce");
}

void all_gather(const void* send, void* recv, size_t count, DType t, const std::string& what) {
  Library& l = loaded(what);
  Handle type = type_of(l, t, false, Op::Sum, what), req = nullptr;
  int n = count_of(count, what);
  wait(l, l.MPI_Iallgather(send, n, type, recv, n, type, l.world, &req), req, what + ": MPI_Iallgather");
}

void reduce_scatter(const void* send, void* recv, size_t count, DType t, Op op, const std::string& what) {
  Library& l = loaded(what);
  Handle req = nullptr;
  int r = l.MPI_Ireduce_scatter_block(send, recv, count_of(count, what), type_of(l, t, true, op, what), op_of(l, op),
                                      l.world, &req);
  wait(l, r, req, what + ": MPI_Ireduce_scatter_block");
}

void broadcast(void* buf, size_t bytes, int root, const std::string& what) {
  Library& l = loaded(what);
  Handle req = nullptr;
  wait(l, l.MPI_Ibcast(buf, count_of(bytes, what), l.byte, root, l.world, &req), req, what + ": MPI_Ibcast");
}

void barrier(const std::string& what) {
  Library& l = loaded(what);
  Handle req = nullptr;
  wait(l, l.MPI_Ibarrier(l.world, &req), req, what + ": MPI_Ibarrier");
}

}  // namespace arrayc::detail::mpi
