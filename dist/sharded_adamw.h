// ZeRO stage 1 over MPI: AdamW whose moments and update are split across the ranks, each rank
// keeping and updating 1/N of the elements, with the same weights as unsharded AdamW bit for bit.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include <tapegrad/graph/aligned_buffer.h>
#include <tapegrad/graph/parameter.h>
#include <tapegrad/graph/tape.h>
#include <tapegrad/optim/adam.h>
#include <tapegrad/optim/optimizer.h>

namespace tapegrad::dist {

struct ShardOptions {
  // The gradients are exchanged in buckets of about this many bytes (over all ranks), from the
  // last parameter back, as DataParallel's (torch's DDP sizes); a parameter larger than a bucket
  // is cut over several.
  int64_t bucket_bytes = 25 << 20;
  int64_t first_bucket_bytes = 1 << 20;  // the first (the last parameters), to start early
  // With backward_options(), at most this many buckets' exchanges are in flight; each holds two
  // buffers of its bucket's size, so the exchange never holds the whole gradient again. Starting
  // one more first finishes the oldest (it waits for it inside the reverse walk).
  int max_in_flight = 4;
  MPI_Comm comm = MPI_COMM_WORLD;
};

// AdamW (torch's, as tapegrad::AdamW) with ZeRO stage 1's sharding. Each trainable parameter is
// cut into clip_grad_norm_'s 64 chunks (optim/clip.h); the chunks, from the last parameter back,
// fill buckets, and each bucket's chunks are dealt to the ranks as N contiguous runs of nearly
// equal size, so each rank owns about 1/N of the elements, whole chunks, and keeps their moments.
// step() takes each rank's own (not averaged) gradients:
//  1. reduce-scatter, per bucket: MPI_Alltoallv, then each rank sums the N contributions to its
//     elements in rank order, (g0 + g1) + g2 + ..., and scales by 1/N as
//     DataParallel::average_gradients does. The order is fixed by this code, not by the MPI
//     library's algorithm: Open MPI's MPI_Reduce_scatter and MPI_Allreduce add three or more
//     ranks' terms in orders that depend on the message size and differ from each other.
//     With two ranks the sum is the same bits as any MPI_Allreduce (a + b has one rounding);
//     with more it equals DataParallel with DataParallelOptions::rank_order_sum;
//  2. each rank runs AdamW's kernel (optim_kernels::adam_update, tapegrad::AdamW's own loop) on
//     its elements, in the parameters' memory;
//  3. all-gather, per bucket: MPI_Allgatherv of every rank's updated elements into every rank's
//     parameters.
// AdamW is elementwise, so the weights equal unsharded AdamW's after DataParallel's average, bit
// for bit, on every rank. Construct after DataParallel (whose constructor makes the weights
// equal) and call step() straight after backward, without DataParallel::average_gradients().
// backward_options(tape), passed to that backward, starts each bucket's exchange from the reverse
// walk once its gradients are final (as DataParallel::backward_options does), the same bits.
// Every rank must construct it with the same parameters (count, shapes, dtype, order) and
// options: the constructor compares the layouts and throws Error on every rank otherwise.
// Gradient clipping by norm needs the norm of the averaged gradient, which no rank holds whole:
// clip_grad_norm_ over the parameters before step() is refused (step() throws on a pending clip
// scale); set_clip_grad_norm() clips inside step(), with clip_grad_norm_'s bits (below).
class ShardedAdamW : public Optimizer {
 public:
  explicit ShardedAdamW(std::vector<Parameter> params, AdamWOptions options = {},
                        ShardOptions shard = {});
  explicit ShardedAdamW(std::vector<ParamGroup> groups, AdamWOptions options = {},
                        ShardOptions shard = {});
  ~ShardedAdamW() override;

  // For the next backward on `tape` (after the forward that recorded it): starts each bucket's
  // reduce-scatter from the reverse walk once its gradients are final, in bucket order on every
  // rank. step() must follow that backward. With one process, plain options.
  BackwardOptions backward_options(const Tape& tape);
  void step() override;

  // Clip the averaged gradient by its total 2-norm at the next step() (max_norm > 0; 0: no
  // clipping), with clip_grad_norm_(optimizer, max_norm)'s coefficient bit for bit: each rank
  // sums the squares of its own chunks as clip_grad_norm_ sums each chunk, the chunk sums are
  // all-gathered, and every rank adds them in clip_grad_norm_'s order (chunks in order, the
  // parameters in the optimiser's order), so a clipped sharded run is the unsharded run's bits.
  void set_clip_grad_norm(double max_norm);
  double last_grad_norm() const { return last_grad_norm_; }  // before clipping; 0 when not set

  // The whole state in unsharded AdamW's format (Optimizer::state()'s names, every parameter's
  // moments in its shape), gathered on `root` (the other ranks get an empty state). Collective:
  // every rank must call it. AdamW::load_state accepts it, and load_full_state below.
  OptimizerState gather_state(int root = 0) const;
  // The sharded state has no local whole: state() throws Error (use gather_state on every rank),
  // so that a checkpoint or a caller through Optimizer& never gets the scalars without the moments.
  OptimizerState state() const override;
  // load_full_state.
  void load_state(const OptimizerState& state) override { load_full_state(state); }
  // Takes this rank's share of a whole state (an unsharded AdamW's state(), or gather_state()'s),
  // so a run resumes on any number of ranks. Throws Error, changing nothing, when it does not fit.
  void load_full_state(const OptimizerState& state);

  int rank() const { return rank_; }
  int world_size() const { return world_size_; }
  int64_t total_elements() const { return total_; }  // E
  int64_t shard_elements() const { return owned_; }  // this rank's share of E
  int64_t state_bytes() const;                       // this rank's moment buffers
  int num_buckets() const { return static_cast<int>(buckets_.size()); }
  // Buckets whose exchange the last overlapped backward started before it returned.
  int buckets_started_in_backward() const { return started_in_backward_; }
  // Wall time in the exchanges (packing, starting and testing them from the reverse walk, the
  // waits, the rank-order sums, the norm's gather, MPI_Allgatherv, unpacking) since construction.
  double communication_seconds() const { return communication_seconds_; }

 private:
  // One of clip_grad_norm_'s chunks: elements [begin, end) of params_[param].
  struct Unit {
    size_t param;
    int64_t begin, end;
  };
  // Elements [offset, offset + n) of params_[param], at `position` in its bucket's packing.
  struct Run {
    size_t param;
    int64_t offset, position, n;
  };
  // This rank's run of one parameter in one bucket, and where its moments are.
  struct Owned {
    Run run;
    size_t group;
    int64_t state_offset;
  };
  struct Bucket {
    std::vector<size_t> units;        // into units_, packed end to end in this order
    std::vector<Run> runs;            // the units merged by parameter: the packing
    std::vector<Owned> owned;         // this rank's part of the runs
    std::vector<int> counts, displs;  // every rank's part: elements, first element
    std::vector<int> receive_counts, receive_displs;  // this rank's part from every rank
    int64_t elements = 0;
    int32_t ready_after = 0;  // final once the reverse walk has passed this node
    MPI_Request request = MPI_REQUEST_NULL;
    int slot = -1;  // its buffers while its exchange is in flight
  };
  struct Slot {
    AlignedBuffer send, receive;
  };

  void build_layout();
  void check_same_layout() const;
  void after_node(int32_t i);
  template <class T>
  void start(size_t b);  // pack bucket b and start its MPI_Ialltoallv
  template <class T>
  void finish(size_t b);  // wait for it, sum in rank order into the gradients
  void finish_in_flight();
  template <class T>
  void step_typed();
  template <class T>
  double clip_coefficient_sum();  // Σ of clip_grad_norm_'s terms, over every rank's chunks

  AdamWOptions options_;
  ShardOptions shard_;
  int rank_ = 0;
  int world_size_ = 1;
  DType dtype_ = DType::Float32;
  std::vector<Parameter> params_;    // the trainable ones, in the groups' order
  std::vector<size_t> group_of_;     // params_[i]'s group
  std::vector<size_t> state_index_;  // params_[i]'s index across groups (Optimizer's <i>)
  int64_t total_ = 0;
  int64_t owned_ = 0;
  std::vector<Unit> units_;
  std::vector<std::vector<size_t>> units_of_param_;  // params_[i]'s units, in chunk order
  std::vector<Bucket> buckets_;
  std::vector<int> unit_counts_, unit_displs_;  // the chunk sums every rank contributes
  std::vector<size_t> unit_order_;              // the units in that order (rank by rank)
  std::vector<double> unit_sums_;               // by unit, and gathered in unit_order_
  std::vector<double> gathered_sums_;
  AlignedBuffer exp_avg_, exp_avg_sq_, max_exp_avg_sq_;
  std::vector<Slot> slots_;        // allocated at first use, up to max_in_flight
  std::vector<int> free_slots_;    // slots_ not in flight
  std::vector<size_t> in_flight_;  // buckets started and not finished, oldest first
  int64_t send_elements_ = 0, receive_elements_ = 0;  // a slot's buffers
  bool overlapping_ = false;
  size_t started_ = 0;
  int started_in_backward_ = 0;
  int64_t t_ = 0;  // AdamW's step count (every parameter steps together)
  double max_norm_ = 0.0;
  double last_grad_norm_ = 0.0;
  double communication_seconds_ = 0.0;
};

}  // namespace tapegrad::dist
