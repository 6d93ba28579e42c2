// A fixed pool of worker threads. The calling thread takes part as thread 0. Work is split by
// static ranges only, so a result never depends on scheduling: same inputs and same thread count
// give the same bits.
#pragma once
#include <cstdint>
#include <functional>

namespace tensor_native::pool {

int threads();
void set_threads(int n);

// fn(tid, nthreads) on every thread of the pool (the caller is tid 0); returns when all are done.
void run_all(const std::function<void(int tid, int nthreads)>& fn);

// Splits [0, n) into one contiguous range per thread (ranges of at least `grain` items; fewer
// threads are used for small n) and calls fn(begin, end) for each.
void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t begin, int64_t end)>& fn);

}  // namespace tensor_native::pool
