// The thread pool behind parallel_for: n - 1 workers that spin briefly, then sleep on a futex,
// and claim the parts of each loop alongside the calling thread.
#include <tapegrad/graph/threads.h>

#include <Eigen/Core>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <tapegrad/graph/error.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define TAPEGRAD_PAUSE() _mm_pause()
#else
#define TAPEGRAD_PAUSE() ((void)0)
#endif

namespace tapegrad {

namespace {

thread_local bool inside_part = false;

// Spin this long before sleeping: longer than the gap between the parallel loops of one step,
// so a step's loops do not pay a futex wake-up each, short enough not to burn a shared core.
constexpr auto kSpin = std::chrono::microseconds(100);

// Spins briefly on `done`, then sleeps on the pool's condition variable. (Not
// std::atomic::wait: GCC 12's notify can miss a waiter that is just going to sleep.)
template <class Pred>
void spin_then_wait(std::mutex& mutex, std::condition_variable& cv, Pred done) {
  const auto start = std::chrono::steady_clock::now();
  int round = 0;
  while (true) {
    for (int i = 0; i < 64; ++i) {
      if (done()) return;
      TAPEGRAD_PAUSE();
    }
    if (++round % 16 == 0 && std::chrono::steady_clock::now() - start > kSpin) break;
  }
  std::unique_lock<std::mutex> lock(mutex);
  cv.wait(lock, done);
}

// Parts are claimed, not assigned: whoever is free (the caller first) takes the next unclaimed
// part, so a worker the OS has not scheduled yet never holds up the caller. A part's range
// depends only on its index, so results do not depend on which thread ran it.
class Pool {
 public:
  explicit Pool(int threads) {
    for (int w = 1; w < threads; ++w) workers_.emplace_back([this] { work(); });
  }
  ~Pool() {
    stop_.store(true, std::memory_order_release);
    wake_.fetch_add(1, std::memory_order_acq_rel);
    notify();
    for (std::thread& t : workers_) t.join();
  }

  void run(int parts, void (*call)(void*, int), void* context) {
    call_ = call;
    context_ = context;
    pending_.store(static_cast<uint32_t>(parts), std::memory_order_relaxed);
    ++run_;
    // The claim word: run number (high bits), part count, next part.
    claim_.store((run_ << 16) | (static_cast<uint64_t>(parts) << 8), std::memory_order_release);
    wake_.fetch_add(1, std::memory_order_acq_rel);
    notify();
    inside_part = true;
    claim_and_run();
    inside_part = false;
    spin_then_wait(mutex_, cv_, [this] { return pending_.load(std::memory_order_acquire) == 0; });
  }

 private:
  // Runs parts of the current run until none is left unclaimed.
  void claim_and_run() {
    uint64_t word = claim_.load(std::memory_order_acquire);
    while (true) {
      const uint64_t parts = (word >> 8) & 0xFF, next = word & 0xFF;
      if (next >= parts) return;
      if (!claim_.compare_exchange_weak(word, word + 1, std::memory_order_acq_rel,
                                        std::memory_order_acquire)) {
        continue;  // someone else claimed (word was reloaded)
      }
      call_(context_, static_cast<int>(next));
      if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) notify();
      word = claim_.load(std::memory_order_acquire);
    }
  }

  void work() {
    inside_part = true;
    // From 0, not from a load: a worker the OS starts late must still see every wake-up,
    // including the destructor's.
    uint32_t seen = 0;
    while (true) {
      spin_then_wait(mutex_, cv_, [&] {
        return wake_.load(std::memory_order_acquire) != seen ||
               stop_.load(std::memory_order_acquire);
      });
      seen = wake_.load(std::memory_order_acquire);
      if (stop_.load(std::memory_order_acquire)) return;
      claim_and_run();
    }
  }

  // Wakes every sleeper; the empty critical section orders the state change before any sleeper's
  // check of it (a sleeper holds the mutex from its check until it waits).
  void notify() {
    { std::lock_guard<std::mutex> lock(mutex_); }
    cv_.notify_all();
  }

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::atomic<uint32_t> wake_{0};
  std::atomic<uint64_t> claim_{0};
  std::atomic<uint32_t> pending_{0};
  std::atomic<bool> stop_{false};
  uint64_t run_ = 0;
  void (*call_)(void*, int) = nullptr;
  void* context_ = nullptr;
};

int thread_count = 1;
std::unique_ptr<Pool>& pool() {
  static std::unique_ptr<Pool> p;
  return p;
}

}  // namespace

void set_num_threads(int n) {
  if (n < 1 || n > 255) {
    throw Error("set_num_threads: n must be in 1..255 (got " + std::to_string(n) + ")");
  }
  if (inside_part) throw Error("set_num_threads: called from inside a parallel loop");
  if (n == thread_count) return;
  pool().reset();
  if (n > 1) {
    Eigen::initParallel();  // Eigen's lazily initialised cache sizes, set before threads race
    pool() = std::make_unique<Pool>(n);
  }
  thread_count = n;
}

int num_threads() {
  return inside_part ? 1 : thread_count;
}

namespace detail {
void run_parts(int parts, void (*call)(void*, int), void* context) {
  if (parts <= 1 || inside_part || !pool()) {
    for (int p = 0; p < parts; ++p) call(context, p);
    return;
  }
  pool()->run(parts, call, context);
}
}  // namespace detail

}  // namespace tapegrad
