// What the benchmark's processes report about themselves: wall and CPU clocks, peak RSS, load;
// and the workers' side of the protocol that reports them.
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <functional>
#include <string>

#include "tools/process/heap_counter.h"

namespace tapegrad_bench {

inline double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// CPU time of the whole process (all its threads), in seconds.
inline double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// CPU time of the calling thread, in seconds.
inline double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// A "<key>: <n> kB" line of /proc/self/status, in KiB; -1 when /proc does not say.
inline long status_kib(const std::string& key) {
  std::ifstream status("/proc/self/status");
  std::string line;
  const std::string prefix = key + ":";
  while (std::getline(status, line)) {
    if (line.rfind(prefix, 0) == 0) return std::strtol(line.c_str() + prefix.size(), nullptr, 10);
  }
  return -1;
}

// The process's peak resident set (VmHWM), and its resident set now (VmRSS), in KiB.
inline long peak_rss_kib() {
  return status_kib("VmHWM");
}
inline long rss_kib() {
  return status_kib("VmRSS");
}

// The machine's 1, 5 and 15 minute load averages, as /proc/loadavg writes them.
inline std::string load_average() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  f >> a >> b >> c;
  return a + " " + b + " " + c;
}

// A worker's side of tapegrad-bench's protocol, once the worker has printed its "ready ..." line:
// for each "s" on stdin, `steps` steps of `step` (which returns the loss), answered "<seconds>
// <first loss> <last loss> <heap allocations> <CPU seconds> <CPU seconds of the calling thread>";
// for "q", the peak RSS (KiB), and returns 0. (A parent reading five fields, as an older build's
// does, ignores the sixth.)
inline int serve_steps(const std::function<double()>& step, int steps) {
  std::fflush(stdout);
  char command[16];
  while (std::fgets(command, sizeof command, stdin) != nullptr) {
    if (command[0] == 'q') {
      std::printf("%ld\n", peak_rss_kib());
      std::fflush(stdout);
      return 0;
    }
    const uint64_t allocations_before = tapegrad::process::heap_allocations();
    double first = 0, last = 0;
    const double cpu0 = cpu_seconds(), thread0 = thread_cpu_seconds(), t0 = now_seconds();
    for (int i = 0; i < steps; ++i) {
      last = step();
      if (i == 0) first = last;
    }
    const double elapsed = now_seconds() - t0, cpu = cpu_seconds() - cpu0;
    const double thread_cpu = thread_cpu_seconds() - thread0;
    const uint64_t allocations = tapegrad::process::heap_allocations() - allocations_before;
    std::printf("%.9g %.9g %.9g %llu %.9g %.9g\n", elapsed, first, last,
                static_cast<unsigned long long>(allocations), cpu, thread_cpu);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace tapegrad_bench
