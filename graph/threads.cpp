// The thread pool behind parallel_for: n - 1 workers that spin briefly, then sleep on a futex.
#include "graph/threads.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "graph/error.h"

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
constexpr auto kSpin = std::chrono::microseconds(200);

template <class Pred>
void spin_then_wait(std::atomic<uint32_t>& word, Pred done) {
  const auto start = std::chrono::steady_clock::now();
  int round = 0;
  while (true) {
    for (int i = 0; i < 64; ++i) {
      if (done()) return;
      TAPEGRAD_PAUSE();
    }
    if (++round % 16 == 0 && std::chrono::steady_clock::now() - start > kSpin) break;
  }
  while (true) {
    const uint32_t seen = word.load(std::memory_order_acquire);
    if (done()) return;
    word.wait(seen, std::memory_order_acquire);
  }
}

class Pool {
 public:
  explicit Pool(int threads) {
    for (int w = 1; w < threads; ++w) workers_.emplace_back([this, w] { work(w); });
  }
  ~Pool() {
    stop_.store(true, std::memory_order_release);
    generation_.fetch_add(1, std::memory_order_acq_rel);
    generation_.notify_all();
    for (std::thread& t : workers_) t.join();
  }
  int threads() const { return static_cast<int>(workers_.size()) + 1; }

  void run(int parts, void (*call)(void*, int), void* context) {
    call_ = call;
    context_ = context;
    parts_ = parts;
    pending_.store(static_cast<uint32_t>(parts - 1), std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_acq_rel);
    generation_.notify_all();
    inside_part = true;
    call(context, 0);
    inside_part = false;
    spin_then_wait(pending_, [this] { return pending_.load(std::memory_order_acquire) == 0; });
  }

 private:
  void work(int index) {
    inside_part = true;
    uint32_t seen = 0;
    while (true) {
      spin_then_wait(generation_,
                     [&] { return generation_.load(std::memory_order_acquire) != seen; });
      seen = generation_.load(std::memory_order_acquire);
      if (stop_.load(std::memory_order_acquire)) return;
      if (index < parts_) {
        call_(context_, index);
        if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pending_.notify_all();
      }
    }
  }

  std::vector<std::thread> workers_;
  std::atomic<uint32_t> generation_{0};
  std::atomic<uint32_t> pending_{0};
  std::atomic<bool> stop_{false};
  void (*call_)(void*, int) = nullptr;
  void* context_ = nullptr;
  int parts_ = 0;
};

int thread_count = 1;
std::unique_ptr<Pool>& pool() {
  static std::unique_ptr<Pool> p;
  return p;
}

}  // namespace

void set_num_threads(int n) {
  if (n < 1) throw Error("set_num_threads: n must be at least 1 (got " + std::to_string(n) + ")");
  if (inside_part) throw Error("set_num_threads: called from inside a parallel loop");
  if (n == thread_count) return;
  pool().reset();
  if (n > 1) pool() = std::make_unique<Pool>(n);
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
