// A thread of its own that moves outstanding non-blocking MPI collectives on while the owner's
// thread computes: the alternative to testing them from the backward walk (DataParallelOptions).
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace tapegrad::dist {

// Parked until start(); then calls `test` (the owner's MPI_Test over its started requests)
// every `interval` until stop(), which returns once the thread is parked again, so that the
// owner's MPI calls after stop() need no lock. Between start() and stop() the owner makes its
// own MPI calls holding mpi_mutex(): the two threads' MPI calls are serialised
// (MPI_THREAD_SERIALIZED, which MpiSession and Job request).
class ProgressThread {
 public:
  ProgressThread(std::function<void()> test, std::chrono::microseconds interval);
  ~ProgressThread();
  ProgressThread(const ProgressThread&) = delete;
  ProgressThread& operator=(const ProgressThread&) = delete;

  void start();
  void stop();
  std::mutex& mpi_mutex() { return mpi_; }

 private:
  void loop();

  std::function<void()> test_;
  std::chrono::microseconds interval_;
  std::mutex mpi_;    // held around every MPI call while the thread runs
  std::mutex state_;  // guards the flags below
  std::condition_variable changed_;
  bool active_ = false, parked_ = false, quit_ = false;
  std::thread thread_;  // last: starts once the members above exist
};

// Throws Error naming `who` unless MPI was initialised with at least MPI_THREAD_SERIALIZED.
void require_serialized_threads(const char* who);

}  // namespace tapegrad::dist
