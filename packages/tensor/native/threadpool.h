// A fixed pool of worker threads. Work is split into numbered tasks whose ranges depend only on the
// task number and count; any thread (the caller included) may run any task, so a result never depends
// on scheduling (same inputs and same thread count give the same bits), and a descheduled worker never
// stalls the others: the caller runs the tasks nobody took.
#pragma once
#include <cstdint>
#include <functional>

namespace tensor_native::pool {

int threads();
void set_threads(int n);

// fn(task, ntasks) for task = 0 .. threads()−1, on whichever threads are free (tasks must not wait
// for each other); returns when all are done.
void run_all(const std::function<void(int tid, int nthreads)>& fn);

// Splits [0, n) into one contiguous range per thread (ranges of at least `grain` items; fewer
// threads are used for small n) and calls fn(begin, end) for each.
void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t begin, int64_t end)>& fn);

}  // namespace tensor_native::pool
