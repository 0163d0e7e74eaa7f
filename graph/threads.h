// The thread setting: how many threads tapegrad's kernels use, and the static parallel loop.
//
// Default 1: a step runs on the calling thread alone. set_num_threads(n) lets the batch/head
// loops of batched matmul and fused attention, and the large matrix products, split their
// output over n threads (the caller plus n - 1 pool threads). The split is static and every
// part writes its own outputs, reducing in the same order whatever the timing, so results are
// bit-identical from run to run for a given thread count (they may differ between counts,
// since a product split in two blocks its sums differently).
//
// Not OpenMP: tapegrad keeps its own small pool, so Eigen stays single-threaded inside each
// part, a program linking tapegrad needs no -fopenmp, and an OpenMP runtime used by the program
// (LibTorch's, say) never competes with it for the same cores by surprise.
#pragma once

#include <cstdint>

namespace tapegrad {

// Sets the number of threads (1 <= n <= 255; throws Error otherwise). Call it between steps, from
// the thread that runs the steps, not while a step is running.
void set_num_threads(int n);
int num_threads();

namespace detail {
void run_parts(int parts, void (*call)(void* context, int part), void* context);
}

// Calls fn(part, begin, end) for `parts` contiguous, nearly equal ranges of [0, n): at most
// num_threads() of them, fewer when n is smaller or when n * cost_per_item (rough floating-point
// operations) is too little work to be worth waking a thread. Part p always gets the same range
// for the same n and thread count, whichever thread claims it (the caller takes parts too, so a
// worker the OS has not scheduled yet never holds the loop up). Runs serially when called from
// inside a part. Returns after every part has finished.
template <class F>
void parallel_for(int64_t n, double cost_per_item, F&& fn) {
  // ~ 10-20 microseconds of work: more than waking a thread costs.
  constexpr double kMinWorkPerPart = 2e6;
  int parts = num_threads();
  if (static_cast<double>(n) * cost_per_item < kMinWorkPerPart * 2) parts = 1;
  if (parts > n) parts = static_cast<int>(n);
  if (parts <= 1) {
    if (n > 0) fn(0, int64_t{0}, n);
    return;
  }
  struct Context {
    F* fn;
    int64_t n;
    int parts;
  } context{&fn, n, parts};
  detail::run_parts(
      parts,
      [](void* c, int part) {
        const Context& ctx = *static_cast<const Context*>(c);
        const int64_t begin = ctx.n * part / ctx.parts;
        const int64_t end = ctx.n * (part + 1) / ctx.parts;
        if (begin < end) (*ctx.fn)(part, begin, end);
      },
      &context);
}

}  // namespace tapegrad
