// Tests for graph/threads.cpp: the thread setting and the static parallel loop.
#include <tapegrad/graph/threads.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <vector>

#include <tapegrad/graph/error.h>

using namespace tapegrad;

TEST_CASE("threads: the setting defaults to 1 and rejects n < 1", "[threads]") {
  CHECK(num_threads() == 1);
  CHECK_THROWS_WITH(set_num_threads(0), "set_num_threads: n must be in 1..255 (got 0)");
  CHECK(num_threads() == 1);
}

TEST_CASE("threads: parallel_for covers every item once in static parts", "[threads]") {
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    INFO("threads " << threads);
    for (int64_t n : {0, 1, 2, 5, 1000}) {
      std::vector<std::atomic<int>> seen(static_cast<size_t>(n));
      std::vector<int> part_of(static_cast<size_t>(n), -1);
      std::atomic<int> parts_run{0}, nested_threads{0};
      parallel_for(n, 1e9, [&](int part, int64_t begin, int64_t end) {
        ++parts_run;
        nested_threads += num_threads();  // (Catch's CHECK is not for other threads)
        for (int64_t i = begin; i < end; ++i) {
          seen[static_cast<size_t>(i)]++;
          part_of[static_cast<size_t>(i)] = part;
        }
      });
      for (int64_t i = 0; i < n; ++i) CHECK(seen[static_cast<size_t>(i)] == 1);
      CHECK(parts_run == std::min<int64_t>(n, threads));
      // Inside a split loop, nested loops run serially; a loop that did not split leaves the
      // threads to the loops inside it.
      if (parts_run > 1) CHECK(nested_threads == parts_run);
      // Part p gets [n·p/parts, n·(p+1)/parts).
      const int parts = static_cast<int>(std::min<int64_t>(n, threads));
      for (int64_t i = 0; i < n; ++i) {
        const int p = part_of[static_cast<size_t>(i)];
        CHECK(n * p / parts <= i);
        CHECK(i < n * (p + 1) / parts);
      }
    }
  }
  set_num_threads(1);
}

TEST_CASE("threads: little work stays on the calling thread", "[threads]") {
  set_num_threads(2);
  int parts = 0;
  parallel_for(100, 1.0, [&](int, int64_t, int64_t) { ++parts; });
  set_num_threads(1);
  CHECK(parts == 1);
}
