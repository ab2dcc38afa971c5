// The pool: num_threads() - 1 workers plus the calling thread. A job is published by writing its
// fields, opening a gate and bumping an epoch word that idle workers watch (spinning briefly, then
// sleeping on a futex). Workers join through the gate, claim chunks from a shared counter and
// leave; the caller closes the gate once every chunk is claimed and waits for the joined workers
// to leave, after which the job's fields may be reused.
#include "backend/host/thread_pool.h"

#include <cblas.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "arrayc/error.h"
#include "backend/host/blas_config.h"
#include "support/env.h"
#include "support/interrupt.h"

namespace arrayc::detail {
namespace {

// More chunks than threads, so that a thread that wakes late simply claims fewer of them.
constexpr int64_t kChunksPerThread = 4;
// And no chunk longer than this many elements, so that arrayc::interrupt() (Ctrl-C), checked
// between chunks, stops a huge computation within a fraction of a second: sum(sin(arange(3e9)))
// on 2 threads took 5.6 s to stop with 8 chunks.
constexpr int64_t kMaxChunkElements = int64_t{1} << 24;
// How long an idle worker polls for the next job before it sleeps: long enough to cover the gap
// between back-to-back kernels, short enough not to steal much CPU from other work.
constexpr auto kSpinTime = std::chrono::microseconds(100);

void futex_wait(std::atomic<uint32_t>* word, uint32_t expected) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT_PRIVATE, expected, nullptr,
          nullptr, 0);
}

void futex_wake(std::atomic<uint32_t>* word, int count) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE_PRIVATE, count, nullptr,
          nullptr, 0);
}

// The CPUs this process may run on.
int num_cpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// At most this many threads per CPU: past it, threads only cost memory and start-up time
// (ARRAYC_NUM_THREADS=100000 once started 99,999 threads: 6-10 s and 2.2 GB, then failed).
constexpr int kMaxThreadsPerCpu = 16;
int max_threads() { return kMaxThreadsPerCpu * num_cpus(); }
std::string max_threads_why() {
  return " (" + std::to_string(kMaxThreadsPerCpu) + " per CPU, " + std::to_string(num_cpus()) + " CPUs)";
}

int default_num_threads() {
  if (std::optional<int64_t> n = num_threads_setting(max_threads(), max_threads_why()))
    return static_cast<int>(*n);
  return num_cpus();
}

// OpenBLAS runs its own threads; sized like ours (but never more than the CPUs), the two never
// oversubscribe the CPUs. OpenBLAS starts them here; one it cannot start made its shutdown at
// exit crash or hang.
void set_blas_threads(int n) {
  quiet_blas_idle_threads();  // before OpenBLAS's workers meet the pool's
  openblas_set_num_threads(std::min(n, num_cpus()));
}

// 0 until first resolved; then the thread count every chunk layout is computed from.
std::atomic<int> g_num_threads{0};
std::mutex g_num_threads_mutex;

// True on pool workers, and on a caller while it runs its share of a job: parallel calls made
// there run inline instead of dispatching to a pool that is already busy with this job.
thread_local bool t_in_job = false;

int64_t chunk_begin(int64_t n, int64_t chunks, int64_t chunk) {
  return chunk * (n / chunks) + std::min(chunk, n % chunks);
}

void run_inline(int64_t n, int64_t chunks, ChunkFn fn, void* ctx) {
  for (int64_t c = 0; c < chunks; ++c) {
    check_interrupt();  // arrayc::interrupt(): stop between chunks
    fn(ctx, c, chunk_begin(n, chunks, c), chunk_begin(n, chunks, c + 1));
  }
}

class Pool {
 public:
  // Held by the one caller dispatching a job (and by set_num_threads while it restarts workers).
  std::mutex dispatch_mutex;

  // Runs a job with chunks > 1 on the pool; the caller holds dispatch_mutex.
  void run(int64_t n, int64_t chunks, ChunkFn fn, void* ctx) {
    if (workers_.empty()) start(num_threads() - 1);
    n_ = n;
    chunks_ = chunks;
    fn_ = fn;
    ctx_ = ctx;
    next_chunk_.store(0, std::memory_order_relaxed);
    failed_.store(false, std::memory_order_relaxed);
    error_ = nullptr;
    gate_.store(kGateOpen, std::memory_order_release);
    epoch_.fetch_add(1, std::memory_order_seq_cst);
    // Pairs with the seq_cst increment in wait_for_job: either we see the sleeper or it sees
    // the new epoch in futex_wait. Wake no more workers than there are chunks to share.
    if (sleepers_.load(std::memory_order_seq_cst) > 0)
      futex_wake(&epoch_, static_cast<int>(std::min<int64_t>(chunks - 1, INT_MAX)));

    t_in_job = true;
    work();
    t_in_job = false;

    // Every chunk is claimed; once the workers that joined have left, all of them are done.
    gate_.fetch_and(~kGateOpen, std::memory_order_relaxed);
    for (int spins = 0; gate_.load(std::memory_order_acquire) != 0; ++spins) {
      if (spins < 1000) cpu_relax();
      else std::this_thread::yield();
    }
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }

  // Stops and joins the workers; the next run starts new ones. Caller holds dispatch_mutex.
  void stop() {
    if (workers_.empty()) return;
    stopping_.store(true, std::memory_order_relaxed);
    epoch_.fetch_add(1, std::memory_order_seq_cst);
    futex_wake(&epoch_, INT_MAX);
    for (std::thread& t : workers_) t.join();
    workers_.clear();
    stopping_.store(false, std::memory_order_relaxed);
  }

 private:
  static constexpr uint64_t kGateOpen = uint64_t{1} << 63;  // low bits: workers inside the job

  // Starts `count` workers; when the system refuses one (a process or thread limit: ulimit -u),
  // stops those started and raises arrayc::Error.
  void start(int count) {
    uint32_t epoch = epoch_.load(std::memory_order_relaxed);
    for (int i = 0; i < count; ++i) {
      try {
        workers_.emplace_back([this, epoch] { worker_main(epoch); });
      } catch (const std::system_error& e) {
        stop();
        throw Error("thread pool: cannot start worker thread " + std::to_string(i + 1) + " of " +
                    std::to_string(count) + " (" + e.what() + "); use fewer threads (ARRAYC_NUM_THREADS or set_num_threads, now " +
                    std::to_string(count + 1) + ")");
      }
    }
  }

  void worker_main(uint32_t seen) {
    t_in_job = true;
    for (;;) {
      seen = wait_for_job(seen);
      if (stopping_.load(std::memory_order_relaxed)) return;
      if (!join()) continue;  // woke after the job was already fully claimed
      work();
      gate_.fetch_sub(1, std::memory_order_release);
    }
  }

  // Returns the new epoch once it differs from `seen`.
  uint32_t wait_for_job(uint32_t seen) {
    auto deadline = std::chrono::steady_clock::now() + kSpinTime;
    for (int spins = 1;; ++spins) {
      uint32_t epoch = epoch_.load(std::memory_order_acquire);
      if (epoch != seen) return epoch;
      if (spins % 256 != 0 || std::chrono::steady_clock::now() < deadline) {
        cpu_relax();
        continue;
      }
      sleepers_.fetch_add(1, std::memory_order_seq_cst);
      futex_wait(&epoch_, seen);
      sleepers_.fetch_sub(1, std::memory_order_relaxed);
    }
  }

  // Enters the open job, if any; the acquire makes the job's fields visible.
  bool join() {
    uint64_t gate = gate_.load(std::memory_order_relaxed);
    while (gate & kGateOpen) {
      if (gate_.compare_exchange_weak(gate, gate + 1, std::memory_order_acquire,
                                      std::memory_order_relaxed))
        return true;
    }
    return false;
  }

  // Claims and runs chunks until none are left. After a failure (an exception, or
  // arrayc::Interrupted once interrupt() was called), chunks are claimed but skipped.
  void work() {
    for (;;) {
      int64_t c = next_chunk_.fetch_add(1, std::memory_order_relaxed);
      if (c >= chunks_) return;
      if (failed_.load(std::memory_order_relaxed)) continue;
      try {
        check_interrupt();  // arrayc::interrupt(): skip the chunks left; run() rethrows
        fn_(ctx_, c, chunk_begin(n_, chunks_, c), chunk_begin(n_, chunks_, c + 1));
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex_);
        if (!error_) error_ = std::current_exception();
        failed_.store(true, std::memory_order_relaxed);
      }
    }
  }

  std::vector<std::thread> workers_;
  std::atomic<uint32_t> epoch_{0};  // bumped once per job; idle workers watch it
  std::atomic<int> sleepers_{0};    // workers blocked in futex_wait on epoch_
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> gate_{0};
  std::atomic<int64_t> next_chunk_{0};
  std::atomic<bool> failed_{false};
  std::mutex error_mutex_;
  std::exception_ptr error_;
  // The current job; written only while the gate is closed and no worker is inside.
  int64_t n_ = 0;
  int64_t chunks_ = 0;
  ChunkFn fn_ = nullptr;
  void* ctx_ = nullptr;
};

// Never destroyed, so that parallel calls made during static destruction still work and exit
// does not have to join sleeping workers.
Pool& pool() {
  static Pool* const instance = new Pool();
  return *instance;
}

}  // namespace

int num_threads() {
  int n = g_num_threads.load(std::memory_order_relaxed);
  if (n > 0) return n;
  std::lock_guard<std::mutex> lock(g_num_threads_mutex);
  if (g_num_threads.load(std::memory_order_relaxed) == 0) {
    n = default_num_threads();
    set_blas_threads(n);
    g_num_threads.store(n, std::memory_order_relaxed);
  }
  return g_num_threads.load(std::memory_order_relaxed);
}

void set_num_threads(int n) {
  if (n < 1 || n > max_threads())
    throw Error("set_num_threads: need from 1 to " + std::to_string(max_threads()) + " threads" + max_threads_why() +
                ", got " + std::to_string(n));
  ARRAYC_INTERNAL_CHECK(!t_in_job, "set_num_threads called from inside a parallel job");
  std::lock_guard<std::mutex> lock(g_num_threads_mutex);
  std::lock_guard<std::mutex> dispatch(pool().dispatch_mutex);
  if (g_num_threads.load(std::memory_order_relaxed) == n) return;
  pool().stop();
  set_blas_threads(n);
  g_num_threads.store(n, std::memory_order_relaxed);
}

int64_t num_chunks(int64_t n, int64_t grain) {
  ARRAYC_INTERNAL_CHECK(n >= 0, "num_chunks: negative range length");
  grain = std::max<int64_t>(grain, 1);
  int threads = num_threads();
  if (n <= grain) return 1;
  // One thread splits only a range long enough to need interrupt checks inside it.
  int64_t per_threads = threads == 1 ? 1 : kChunksPerThread * threads;
  return std::min<int64_t>(n / grain, std::max<int64_t>(per_threads, n / kMaxChunkElements));  // n > grain: >= 1
}

void parallel_chunks(int64_t n, int64_t grain, ChunkFn fn, void* ctx) {
  int64_t chunks = num_chunks(n, grain);
  if (chunks == 1) {
    fn(ctx, 0, 0, n);
    return;
  }
  Pool& p = pool();
  // One thread, nested inside a job, or another thread is dispatching: run the same chunks
  // here, in order.
  if (num_threads() == 1 || t_in_job || !p.dispatch_mutex.try_lock()) {
    run_inline(n, chunks, fn, ctx);
    return;
  }
  std::lock_guard<std::mutex> lock(p.dispatch_mutex, std::adopt_lock);
  p.run(n, chunks, fn, ctx);
}

void parallel_for(int64_t n, int64_t grain, RangeFn fn, void* ctx) {
  if (num_chunks(n, grain) == 1) {
    fn(ctx, 0, n);
    return;
  }
  struct Range {
    RangeFn fn;
    void* ctx;
  } range{fn, ctx};
  parallel_chunks(
      n, grain,
      [](void* r, int64_t, int64_t begin, int64_t end) {
        static_cast<Range*>(r)->fn(static_cast<Range*>(r)->ctx, begin, end);
      },
      &range);
}

}  // namespace arrayc::detail
