#include "threadpool.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "napi_util.h"

namespace tensor_native::pool {
namespace {

// Work is handed out as numbered tasks that any thread may claim, the caller included. The caller
// claims tasks until none are left and then waits only for tasks that another thread has already
// started. So when the OS deschedules a worker (another process wants the core), the caller does that
// worker's share itself instead of spinning at a barrier until the worker runs again: a pool of N
// threads on a busy machine degrades towards one thread's speed, never below it.
//
// A task's work depends only on its number, never on which thread runs it, so results stay bit-identical
// for a given task count.
class Pool {
 public:
  ~Pool() { stop(); }

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  void resize(int n) {
    if (n < 1) n = 1;
    if (n == size()) return;
    stop();
    quit_ = false;
    for (int t = 1; t < n; t++) workers_.emplace_back([this] { loop(); });
  }

  // fn(task, ntasks) for every task in [0, ntasks); returns when all are done.
  void run(int ntasks, const std::function<void(int, int)>& fn) {
    if (size() == 1 || ntasks <= 1) {
      for (int t = 0; t < ntasks; t++) fn(t, ntasks);
      return;
    }
    uint64_t gen;
    {
      std::lock_guard<std::mutex> lock(mu_);
      task_.store(&fn, std::memory_order_relaxed);
      ntasks_.store(ntasks, std::memory_order_relaxed);
      done_.store(0, std::memory_order_relaxed);
      gen = (state_.load(std::memory_order_relaxed) >> 32) + 1;
      // The new generation with its claim counter at 0; publishes task_ and ntasks_ to claimers.
      state_.store(gen << 32, std::memory_order_release);
    }
    cv_.notify_all();
    work(gen, ntasks, fn);
    // Tasks other threads took: spin briefly (they are usually nearly done), then give the core away
    // so that a descheduled worker gets to finish its task.
    for (int spins = 0; done_.load(std::memory_order_acquire) < ntasks; spins++) {
      if (spins < 2048) {
#if defined(__x86_64__)
        __builtin_ia32_pause();
#endif
      } else {
        std::this_thread::yield();
      }
    }
  }

 private:
  // Claims the next task of generation `gen`; false when that generation has none left.
  bool claim(uint64_t gen, int ntasks, int& task) {
    uint64_t s = state_.load(std::memory_order_acquire);
    for (;;) {
      if ((s >> 32) != gen) return false;
      const uint32_t next = static_cast<uint32_t>(s);
      if (next >= static_cast<uint32_t>(ntasks)) return false;
      if (state_.compare_exchange_weak(s, s + 1, std::memory_order_acq_rel, std::memory_order_acquire)) {
        task = static_cast<int>(next);
        return true;
      }
    }
  }

  void work(uint64_t gen, int ntasks, const std::function<void(int, int)>& fn) {
    int task;
    while (claim(gen, ntasks, task)) {
      fn(task, ntasks);
      done_.fetch_add(1, std::memory_order_acq_rel);
    }
  }

  void loop() {
    uint64_t seen = state_.load(std::memory_order_acquire) >> 32;
    for (;;) {
      // Spin a little before sleeping: kernels arrive in quick succession during a step. Kept short so
      // that an idle pool does not take the cores from other processes for long.
      uint64_t gen = seen;
      for (int spins = 0; spins < 4096; spins++) {
        gen = state_.load(std::memory_order_acquire) >> 32;
        if (gen != seen || quit_) break;
#if defined(__x86_64__)
        __builtin_ia32_pause();
#endif
      }
      if (gen == seen && !quit_) {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return (state_.load(std::memory_order_acquire) >> 32) != seen || quit_; });
        gen = state_.load(std::memory_order_acquire) >> 32;
      }
      if (quit_) return;
      seen = gen;
      // task_ and ntasks_ belong to `gen` unless the caller already moved on, and then claim() fails.
      const auto* fn = task_.load(std::memory_order_acquire);
      const int ntasks = ntasks_.load(std::memory_order_acquire);
      if (fn != nullptr) work(gen, ntasks, *fn);
    }
  }

  void stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      quit_ = true;
    }
    cv_.notify_all();
    for (auto& w : workers_) w.join();
    workers_.clear();
  }

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable cv_;
  // High 32 bits: the generation (one per run); low 32 bits: the next unclaimed task.
  std::atomic<uint64_t> state_{0};
  std::atomic<int> done_{0};
  std::atomic<int> ntasks_{0};
  std::atomic<const std::function<void(int, int)>*> task_{nullptr};
  std::atomic<bool> quit_{false};
};

Pool& instance() {
  static Pool pool;
  return pool;
}

}  // namespace

int threads() { return instance().size(); }
void set_threads(int n) { instance().resize(n); }

void run_all(const std::function<void(int, int)>& fn) { instance().run(instance().size(), fn); }

void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  if (grain < 1) grain = 1;
  int64_t parts = std::min<int64_t>(threads(), (n + grain - 1) / grain);
  if (parts <= 1) {
    fn(0, n);
    return;
  }
  run_all([&](int tid, int) {
    if (tid >= parts) return;
    int64_t begin = n * tid / parts, end = n * (tid + 1) / parts;
    if (begin < end) fn(begin, end);
  });
}

}  // namespace tensor_native::pool

namespace tensor_native {

static napi_value threads_binding(const Args& args) { return args.number(pool::threads()); }
static napi_value set_threads_binding(const Args& args) {
  int64_t n = args.i64(0);
  if (n < 1 || n > 256) throw ArgError("setThreads: thread count must be in [1, 256], got " + std::to_string(n));
  pool::set_threads(static_cast<int>(n));
  return args.undefined();
}

void register_threadpool(Registry& r) {
  r.add("threads", threads_binding);
  r.add("setThreads", set_threads_binding);
}

}  // namespace tensor_native
