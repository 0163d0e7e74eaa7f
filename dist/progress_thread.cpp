// ProgressThread: the parked thread, its start/stop handshake and its polling loop.
#include <tapegrad/dist/progress_thread.h>

#include <mpi.h>

#include <string>

#include <tapegrad/graph/error.h>

namespace tapegrad::dist {

ProgressThread::ProgressThread(std::function<void()> test, std::chrono::microseconds interval)
    : test_(std::move(test)), interval_(interval), thread_([this] { loop(); }) {}

ProgressThread::~ProgressThread() {
  {
    std::lock_guard lock(state_);
    quit_ = true;
    active_ = false;
  }
  changed_.notify_all();
  thread_.join();
}

void ProgressThread::start() {
  {
    std::lock_guard lock(state_);
    active_ = true;
  }
  changed_.notify_all();
}

void ProgressThread::stop() {
  std::unique_lock lock(state_);
  active_ = false;
  changed_.notify_all();
  changed_.wait(lock, [this] { return parked_; });
}

void ProgressThread::loop() {
  std::unique_lock lock(state_);
  for (;;) {
    parked_ = true;
    changed_.notify_all();
    changed_.wait(lock, [this] { return active_ || quit_; });
    if (quit_) return;
    parked_ = false;  // here, not in start(): a stop() before this wake-up finds it parked
    while (active_) {
      lock.unlock();
      {
        std::lock_guard mpi(mpi_);
        test_();
      }
      std::this_thread::sleep_for(interval_);
      lock.lock();
    }
  }
}

void require_serialized_threads(const char* who) {
  int provided = MPI_THREAD_SINGLE;
  MPI_Query_thread(&provided);
  if (provided < MPI_THREAD_SERIALIZED) {
    throw Error(std::string(who) +
                ": a progress thread needs MPI initialised with MPI_THREAD_SERIALIZED or more "
                "(MpiSession and dist::Job request it; this MPI provided level " +
                std::to_string(provided) + ")");
  }
}

}  // namespace tapegrad::dist
