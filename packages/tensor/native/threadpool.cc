#include "threadpool.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "napi_util.h"

namespace tensor_native::pool {
namespace {

class Pool {
 public:
  ~Pool() { stop(); }

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  void resize(int n) {
    if (n < 1) n = 1;
    if (n == size()) return;
    stop();
    quit_ = false;
    // Workers start from the current generation, read here before any later run() bumps it: a
    // worker that only loaded it once running could already see the first task's generation and
    // skip that task, leaving run() waiting forever.
    const uint64_t start = generation_.load(std::memory_order_acquire);
    for (int t = 1; t < n; t++) workers_.emplace_back([this, t, start] { loop(t, start); });
  }

  void run(const std::function<void(int, int)>& fn) {
    const int n = size();
    if (n == 1) {
      fn(0, 1);
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      task_ = &fn;
      pending_.store(n - 1, std::memory_order_relaxed);
      generation_.fetch_add(1, std::memory_order_release);
    }
    cv_.notify_all();
    fn(0, n);
    // Spin briefly (workers usually finish together), then yield.
    for (int spins = 0; pending_.load(std::memory_order_acquire) != 0; spins++) {
      if (spins > 4096) std::this_thread::yield();
    }
    task_ = nullptr;
  }

 private:
  void loop(int tid, uint64_t seen) {
    for (;;) {
      // Spin a little before sleeping: kernels arrive in quick succession during a step.
      uint64_t gen = seen;
      for (int spins = 0; spins < 20000; spins++) {
        gen = generation_.load(std::memory_order_acquire);
        if (gen != seen || quit_) break;
#if defined(__x86_64__)
        __builtin_ia32_pause();
#endif
      }
      if (gen == seen && !quit_) {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return generation_.load(std::memory_order_acquire) != seen || quit_; });
        gen = generation_.load(std::memory_order_acquire);
      }
      if (quit_) return;
      seen = gen;
      (*task_)(tid, size());
      pending_.fetch_sub(1, std::memory_order_acq_rel);
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
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0};
  std::atomic<bool> quit_{false};
  const std::function<void(int, int)>* task_ = nullptr;
};

Pool& instance() {
  static Pool pool;
  return pool;
}

}  // namespace

int threads() { return instance().size(); }
void set_threads(int n) { instance().resize(n); }

void run_all(const std::function<void(int, int)>& fn) { instance().run(fn); }

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
