// Data-parallel training over MPI: every rank holds the whole model, sees its own share of each
// global batch, and averages gradients with MPI_Allreduce before the optimiser steps.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <tapegrad/graph/parameter.h>
#include <tapegrad/train/training.h>

namespace tapegrad::dist {

// MPI_Init on construction, MPI_Finalize on destruction: one per process, in main().
class MpiSession {
 public:
  MpiSession(int& argc, char**& argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int rank() const { return rank_; }
  int world_size() const { return world_size_; }

 private:
  int rank_ = 0;
  int world_size_ = 1;
};

// Runs `body` and turns an exception on any rank into a clear end of the whole job: the rank
// prints `rank R of N: error: <what>` to stderr and calls MPI_Abort, which stops every rank
// within seconds (instead of the others hanging in their next collective). Returns body's code.
int run_or_abort(const std::function<int()>& body, MPI_Comm comm = MPI_COMM_WORLD);

struct DataParallelOptions {
  // Gradients are packed into buckets of about this many bytes and reduced one bucket at a time
  // (torch's DDP default is 25 MiB): fewer, larger messages than one per parameter.
  int64_t bucket_bytes = 25 << 20;
  MPI_Comm comm = MPI_COMM_WORLD;
};

// In the spirit of torch's DistributedDataParallel, over a model's parameters:
//  - construction broadcasts rank 0's values to every rank, so all start identical;
//  - average_gradients(), called after backward and before clipping and the optimiser step,
//    replaces every gradient by its mean over the ranks.
// Buckets follow the parameters' order and have a fixed layout, so every rank reduces the same
// bytes in the same order and the results are identical on every rank and from run to run.
// The bucket buffers are allocated once: steady-state steps allocate nothing.
class DataParallel {
 public:
  explicit DataParallel(std::vector<Parameter> parameters, DataParallelOptions options = {});

  void broadcast_parameters();  // rank 0's values everywhere (also done by the constructor)
  void average_gradients();

  // Wall time spent in average_gradients() (packing, MPI_Allreduce, which includes waiting for
  // the slowest rank, and unpacking) since construction or the last reset: the communication
  // share of a step. 0 with one process (nothing to reduce).
  double allreduce_seconds() const { return allreduce_seconds_; }
  void reset_allreduce_seconds() { allreduce_seconds_ = 0.0; }

  int rank() const { return rank_; }
  int world_size() const { return world_size_; }
  int num_buckets() const { return static_cast<int>(buckets_.size()); }
  const std::vector<Parameter>& parameters() const { return parameters_; }

 private:
  struct Bucket {
    DType dtype;
    std::vector<size_t> members;  // indices into parameters_
    int64_t elements = 0;
  };
  std::vector<Parameter> parameters_;
  DataParallelOptions options_;
  std::vector<Bucket> buckets_;
  std::vector<char> staging_;  // one bucket's bytes, reused
  int rank_ = 0;
  int world_size_ = 1;
  double allreduce_seconds_ = 0.0;
};

// This rank's share of a global batch of `global_batch` samples: samples [begin, end), by the
// one rule train_model_simple also uses (shard_range in train/training.h).
using Shard = RowShard;
inline Shard shard_of(int64_t global_batch, int rank, int world_size) {
  return shard_range(global_batch, rank, world_size);
}

// A seed for rank `rank`'s own generator (dropout masks differ across ranks, as each rank's
// samples do), derived deterministically from the run's seed.
uint64_t rank_seed(uint64_t seed, int rank);

}  // namespace tapegrad::dist
