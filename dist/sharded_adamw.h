// ZeRO stage 1 over MPI: AdamW whose moments and update are split across the ranks, each rank
// keeping and updating 1/N of the elements, with the same weights as unsharded AdamW bit for bit.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include <tapegrad/graph/aligned_buffer.h>
#include <tapegrad/graph/parameter.h>
#include <tapegrad/optim/adam.h>
#include <tapegrad/optim/optimizer.h>

namespace tapegrad::dist {

struct ShardOptions {
  // The flat gradient is exchanged a chunk of about this many bytes (over all ranks) at a time,
  // so the exchange buffers stay this small whatever the model's size.
  int64_t chunk_bytes = 25 << 20;
  MPI_Comm comm = MPI_COMM_WORLD;
};

// AdamW (torch's, as tapegrad::AdamW) with ZeRO stage 1's sharding. The trainable parameters
// are laid end to end in one flat vector of E elements, cut into chunks of N·C elements (the last
// padded with zeros); rank r owns elements [r·C, (r+1)·C) of every chunk, so each rank keeps the
// moments of about E/N elements. step() takes each rank's own (not averaged) gradients:
//  1. reduce-scatter: the chunk's gradients are exchanged with MPI_Alltoall and each rank sums
//     the N contributions to its elements in rank order, (g0 + g1) + g2 + ..., then scales by
//     1/N as DataParallel::average_gradients does. The order is fixed by this code, not by the
//     MPI library's algorithm: Open MPI's MPI_Reduce_scatter and MPI_Allreduce add three or more
//     ranks' terms in orders that depend on the message size and differ from each other.
//     With two ranks the sum is the same bits as any MPI_Allreduce (a + b has one rounding);
//     with more it equals DataParallel with DataParallelOptions::rank_order_sum;
//  2. each rank runs AdamW's kernel (optim_kernels::adam_update, tapegrad::AdamW's own loop) on
//     its elements, in the parameters' memory;
//  3. all-gather: MPI_Allgather of every rank's updated elements into every rank's parameters.
// AdamW is elementwise, so the weights equal unsharded AdamW's after DataParallel's average, bit
// for bit, on every rank. Construct after DataParallel (whose constructor makes the weights
// equal) and call step() straight after backward, without DataParallel::average_gradients().
// Every rank must construct it with the same parameters (count, shapes, dtype, order) and
// chunk size: the constructor compares the layouts and throws Error on every rank otherwise.
// Gradient clipping by norm needs the norm of the averaged gradient, which no rank holds:
// clip_grad_norm_ over the parameters before step() is refused (step() throws on a pending
// clip scale); clip_grad_norm() clips inside step(), with the norm summed over the shards.
class ShardedAdamW : public Optimizer {
 public:
  explicit ShardedAdamW(std::vector<Parameter> params, AdamWOptions options = {},
                        ShardOptions shard = {});
  explicit ShardedAdamW(std::vector<ParamGroup> groups, AdamWOptions options = {},
                        ShardOptions shard = {});
  ~ShardedAdamW() override;

  void step() override;

  // Clip the averaged gradient by its total 2-norm at the next step() (max_norm > 0; 0: no
  // clipping). The norm is summed over the shards in rank order, so every rank gets the same
  // coefficient; it is not the same bits as clip_grad_norm_ over whole tensors (another
  // summation order), so clipped runs are not bit-identical to unsharded ones.
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
  // Wall time in step()'s exchanges (packing, MPI_Alltoall, the sums, MPI_Allgather, unpacking).
  double communication_seconds() const { return communication_seconds_; }

 private:
  // A run of flat elements inside one parameter.
  struct Piece {
    size_t param;      // index into params_
    int64_t offset;    // first element in the parameter
    int64_t position;  // first element in its chunk, in [0, N·C)
    int64_t n;
  };
  // This rank's owned elements of one parameter within one chunk.
  struct Owned {
    Piece piece;
    size_t group;
    int64_t state_offset;  // into the moment buffers
  };
  struct Chunk {
    std::vector<Piece> pieces;  // cover [0, N·C) but the padding, in flat order
    std::vector<Owned> owned;   // the pieces inside [r·C, (r+1)·C)
  };

  void build_layout();
  void check_same_layout() const;
  template <class T>
  void step_typed();

  AdamWOptions options_;
  ShardOptions shard_;
  int rank_ = 0;
  int world_size_ = 1;
  DType dtype_ = DType::Float32;
  std::vector<Parameter> params_;    // the trainable ones, in the groups' order
  std::vector<size_t> group_of_;     // params_[i]'s group
  std::vector<size_t> state_index_;  // params_[i]'s index across groups (Optimizer's <i>)
  int64_t total_ = 0;
  int64_t per_rank_ = 0;  // C
  int64_t owned_ = 0;
  std::vector<Chunk> chunks_;
  AlignedBuffer exp_avg_, exp_avg_sq_, max_exp_avg_sq_;
  AlignedBuffer send_, receive_;  // one chunk each
  int64_t t_ = 0;                 // AdamW's step count (every parameter steps together)
  double max_norm_ = 0.0;
  double last_grad_norm_ = 0.0;
  double communication_seconds_ = 0.0;
};

}  // namespace tapegrad::dist
