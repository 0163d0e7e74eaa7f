// A program's place in a data-parallel job, with no MPI in its source: the processes mpirun
// started, or one process alone, and the little they exchange (rank 0's bytes, the gradients'
// average, every process's generator state).
//
// Two implementations, one per build, behind the same header:
//  - dist/job.cpp, in tapegrad_dist (built when CMake finds MPI): under mpirun (Open MPI's
//    OMPI_COMM_WORLD_SIZE is set) the job is MPI_COMM_WORLD (MpiSession, DataParallel and
//    run_or_abort of dist/data_parallel.h); started without mpirun, a job of one process that
//    never touches MPI;
//  - dist/job_single.cpp, linked instead when the build has no MPI: always a job of one process.
// A program links whichever the build has (apps/CMakeLists.txt) and needs no #ifdef.
#pragma once

#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <tapegrad/graph/parameter.h>
#include <tapegrad/graph/tape.h>
#include <tapegrad/optim/adam.h>
#include <tapegrad/optim/optimizer.h>

namespace tapegrad::dist {

namespace detail {
// Job::run for a process alone: the message on stderr, then error_status.
inline int run_alone(const std::function<int()>& body, int error_status) {
  try {
    return body();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return error_status;
  }
}
}  // namespace detail

class Job {
 public:
  // Joins the job mpirun started (MPI_Init), or makes a job of this process alone. One per
  // process, in main(), after the options are parsed; the destructor leaves the job (MPI_Finalize).
  Job(int& argc, char**& argv);
  ~Job();
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;

  int rank() const { return rank_; }
  int world_size() const { return world_size_; }
  bool is_main() const { return rank_ == 0; }  // the process that prints and writes files

  // Runs `body` and returns its exit status. An exception ends the job: in a job over MPI the
  // process prints "rank R of N: error: <what>" on stderr and stops every process (MPI_Abort:
  // the others are not left waiting in their next exchange); alone, it prints "<what>" and
  // returns `error_status`.
  int run(const std::function<int()>& body, int error_status) const;

  // Rank 0's bytes (or text) on every process; with one process, the argument unchanged.
  void broadcast(std::vector<uint8_t>& bytes) const;
  std::string broadcast(const std::string& text) const {
    std::vector<uint8_t> bytes(text.begin(), text.end());
    broadcast(bytes);
    return std::string(bytes.begin(), bytes.end());
  }

  // Every process's words on rank 0, in rank order (the other processes get nothing); with one
  // process, {words}.
  std::vector<std::vector<uint64_t>> gather(const std::vector<uint64_t>& words) const;

  // The gradients of `parameters` averaged over the job's processes (dist::DataParallel, whose
  // construction gives every process rank 0's values). share_parameters() once, then
  // average_gradients() after every backward; with one process both do nothing.
  void share_parameters(const std::vector<Parameter>& parameters);
  // Options for the backward on `tape` that overlap the average with it
  // (DataParallel::backward_options; with a sharded optimiser, ShardedAdamW::backward_options,
  // whose step() then finishes the exchange); average_gradients() must follow that backward.
  // With one process, plain options.
  BackwardOptions backward_options(const Tape& tape);
  void average_gradients();
  // Seconds spent in average_gradients so far (0 with one process); with a sharded optimiser,
  // in its step's reduce-scatter and all-gather.
  double allreduce_seconds() const;

  // AdamW over `parameters`. With `shard` in a job of several processes, ZeRO stage 1
  // (dist::ShardedAdamW: each process keeps and updates 1/N of the moments; the same weights as
  // AdamW): its step() averages the gradients itself, so average_gradients() then does nothing.
  // Otherwise (or alone) a plain AdamW. The job keeps a pointer to a sharded one: it must outlive
  // the job's calls below.
  std::unique_ptr<Optimizer> make_adamw(std::vector<Parameter> parameters, AdamWOptions options,
                                        bool shard);
  bool optimizer_sharded() const { return sharded_; }
  // Gradient clipping by total norm for make_adamw's optimiser. A sharded one clips inside its
  // step (ShardedAdamW::set_clip_grad_norm, clip_grad_norm_'s bits) and this returns true; else
  // false, and the caller runs clip_grad_norm_ between the average and the step.
  bool clip_in_step(double max_norm);
  // The optimiser's whole state in AdamW's format (Optimizer::state()). With a sharded optimiser
  // it is gathered on rank 0 (the others get an empty state): every process must call it.
  OptimizerState optimizer_state(const Optimizer& optimizer) const;
  // Restores a whole AdamW state (a file's, written by a sharded run or not, on any number of
  // processes): a sharded optimiser takes its share.
  void load_optimizer_state(Optimizer& optimizer, const OptimizerState& state) const;

  // The seed of this process's own generator (dist::rank_seed): the run's seed on rank 0.
  uint64_t rank_seed(uint64_t seed) const;

 private:
  struct Mpi;  // the MPI session and DataParallel, in a job over MPI
  std::unique_ptr<Mpi> mpi_;
  int rank_ = 0;
  int world_size_ = 1;
  bool sharded_ = false;
};

}  // namespace tapegrad::dist
