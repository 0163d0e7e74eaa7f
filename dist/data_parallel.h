// Data-parallel training over MPI: every rank holds the whole model, sees its own share of each
// global batch, and averages gradients with MPI_Allreduce before the optimiser steps.
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <tapegrad/dist/progress_thread.h>
#include <tapegrad/graph/parameter.h>
#include <tapegrad/train/training.h>

namespace tapegrad::dist {

// MPI_Init_thread (MPI_THREAD_SERIALIZED) on construction, MPI_Finalize on destruction: one per
// process, in main().
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
  // The first bucket (the last parameters, whose gradients backward finishes first) is smaller,
  // so that with backward_options() its reduction starts early (torch's DDP: 1 MiB).
  int64_t first_bucket_bytes = 1 << 20;
  // Sum each gradient element over the ranks in rank order, (g0 + g1) + g2 + ..., instead of in
  // the order the MPI library's MPI_Allreduce picks (Open MPI's depends on the message size at
  // three or more ranks): each bucket is exchanged with MPI_Alltoall, summed, and all-gathered.
  // The same bits as ShardedAdamW's reduce-scatter at any number of ranks, and whatever the
  // bucket sizes; with two ranks the same bits as the default too (a + b has one rounding).
  bool rank_order_sum = false;
  // How the overlapped reductions move on (Open MPI progresses a non-blocking collective only
  // inside MPI calls): false, MPI_Test on the started ones after each node of the reverse walk;
  // true, a thread of DataParallel's own testing them every progress_interval while backward
  // runs (dist/progress_thread.h). docs/distributed.md measures both.
  bool progress_thread = false;
  std::chrono::microseconds progress_interval{50};
  MPI_Comm comm = MPI_COMM_WORLD;
};

// The reverse walk's node after which each parameter's gradient on `tape` is final: the one after
// its leaf, made at the parameter's first use, whose first consumer comes right after it, or the
// first checkpoint node whose segment used it (graph/checkpoint.h: that node's backward
// accumulates it), whichever comes first; never (INT32_MAX) for a parameter this step's forward
// did not use, whose gradient is final already. Built once per backward (one pass over the tape).
class GradientsFinal {
 public:
  explicit GradientsFinal(const Tape& tape);
  int32_t after(const ParameterImpl& parameter) const;

 private:
  const Tape& tape_;
  std::unordered_map<const ParameterImpl*, int32_t> segments_;  // first checkpoint node using it
};

// In the spirit of torch's DistributedDataParallel, over a model's parameters:
//  - construction broadcasts rank 0's values to every rank, so all start identical;
//  - average_gradients(), called after backward and before clipping and the optimiser step,
//    replaces every gradient by its mean over the ranks;
//  - backward_options(tape), passed to that backward, overlaps the reduction with it: each
//    bucket's MPI_Iallreduce starts as soon as the reverse walk has written its last gradient,
//    and average_gradients() then waits for them.
// Buckets take the parameters from the last one back (roughly the order backward finishes
// them), have a fixed layout and start in the same order on every rank, so every rank reduces
// the same bytes in the same order and the results are identical on every rank and from run to
// run, overlapped or not (with two ranks, bit for bit the blocking path: a sum of two terms has
// one rounding whichever algorithm adds them). Buffers are allocated once: steady-state steps
// allocate nothing. Every rank must give the same parameters (count, shapes, dtypes) and
// options: the constructor compares the ranks' layouts and throws Error on every rank otherwise.
class DataParallel {
 public:
  explicit DataParallel(std::vector<Parameter> parameters, DataParallelOptions options = {});
  ~DataParallel();
  DataParallel(const DataParallel&) = delete;
  DataParallel& operator=(const DataParallel&) = delete;

  void broadcast_parameters();  // rank 0's values everywhere (also done by the constructor)
  // For the next backward on `tape` (after the forward that recorded it): starts each bucket's
  // reduction from the reverse walk once its gradients are final. average_gradients() must
  // follow that backward. With one process, plain options.
  BackwardOptions backward_options(const Tape& tape);
  void average_gradients();

  // Wall time spent in DataParallel's calls (packing, starting reductions, MPI_Allreduce or the
  // wait for the overlapped reductions, which includes waiting for the slowest rank, and
  // unpacking) since construction or the last reset: the communication a step does not hide.
  // 0 with one process (nothing to reduce).
  double allreduce_seconds() const { return allreduce_seconds_; }
  void reset_allreduce_seconds() { allreduce_seconds_ = 0.0; }

  int rank() const { return rank_; }
  int world_size() const { return world_size_; }
  int num_buckets() const { return static_cast<int>(buckets_.size()); }
  // Buckets whose reduction the last overlapped backward started before it returned.
  int buckets_started_in_backward() const { return started_in_backward_; }
  const std::vector<Parameter>& parameters() const { return parameters_; }

 private:
  struct Bucket {
    DType dtype;
    std::vector<size_t> members;  // indices into parameters_
    int64_t elements = 0;
    std::vector<char> buffer;    // its own bytes while overlapped (allocated at first use)
    std::vector<char> received;  // rank_order_sum: every rank's share of it (overlapped)
    MPI_Request request = MPI_REQUEST_NULL;
    int32_t ready_after = 0;  // final once the reverse walk has passed this node
  };
  void pack(const Bucket& bucket, char* out) const;
  void unpack(const Bucket& bucket, const char* sums) const;
  void check_same_layout() const;
  int64_t share(const Bucket& bucket) const;  // rank_order_sum: elements per rank, padded
  // rank_order_sum: `mine` ← the rank-order sums of this rank's share (from `received`, every
  // rank's share of the bucket), then every rank's sums all-gathered into `packed`.
  void sum_in_rank_order(const Bucket& bucket, char* packed, const char* received);
  void start(size_t b);        // pack bucket b and start its MPI_Iallreduce
  void after_node(int32_t i);  // BackwardOptions::after_node of an overlapped backward
  void test_started();         // MPI_Test on the started buckets' requests

  std::vector<Parameter> parameters_;
  DataParallelOptions options_;
  std::vector<Bucket> buckets_;
  std::vector<char> staging_;           // one bucket's bytes, reused by the blocking path
  std::vector<char> staging_received_;  // rank_order_sum's MPI_Alltoall, blocking path
  int64_t staging_bytes_ = 0;           // the largest bucket's (padded) bytes
  bool overlapping_ = false;            // backward_options() armed the buckets for this step
  size_t started_ = 0;                  // buckets started so far this step, in order
  int started_in_backward_ = 0;
  int rank_ = 0;
  int world_size_ = 1;
  double allreduce_seconds_ = 0.0;
  std::unique_ptr<ProgressThread> progress_;  // options_.progress_thread, with 2+ ranks
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
