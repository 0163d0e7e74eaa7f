// ShardedAdamW (ZeRO stage 1) under mpirun at 2 and 3 ranks: the same weights as unsharded AdamW
// after DataParallel's average, bit for bit (each blocking and overlapped with backward), its
// gathered state equal to AdamW's, a resume from a whole state, clipping with clip_grad_norm_'s
// bits, and ranks that disagree refused on every rank.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include <tapegrad/dist/data_parallel.h>
#include <tapegrad/dist/sharded_adamw.h>
#include <tapegrad/tapegrad.h>

namespace test_sharded_adamw {

using namespace tapegrad;

int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}
int world_size() {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

// A tiny GPT whose 2,928 parameters (float32) do not divide evenly over 3 ranks' chunks.
nn::GPTConfig tiny_gpt() {
  return nn::GPTConfig{.vocab_size = 24,
                       .context_length = 6,
                       .emb_dim = 12,
                       .n_heads = 2,
                       .n_layers = 1,
                       .drop_rate = 0.0,
                       .qkv_bias = true};
}

// The whole global batch of 2 rows per rank (every rank's rows), as one process trains on it:
// the same stream on every rank.
void whole_batch(const nn::GPTConfig& cfg, Ids& ids, Ids& targets) {
  const int64_t rows = 2 * world_size(), tokens = cfg.context_length;
  Generator g(2024);
  std::vector<int64_t> x(static_cast<size_t>(rows * tokens)), y(x.size());
  for (auto& id : x) id = g.random() % cfg.vocab_size;
  for (auto& t : y) t = g.random() % cfg.vocab_size;
  ids = Ids(Shape{rows, tokens}, x);
  targets = Ids(Shape{rows, tokens}, y);
}

// This rank's rows of it, by the data-parallel sharding rule (shard_rows).
void my_batch(const nn::GPTConfig& cfg, Ids& ids, Ids& targets) {
  Ids all_ids, all_targets;
  whole_batch(cfg, all_ids, all_targets);
  shard_rows(all_ids, world_rank(), world_size(), ids);
  shard_rows(all_targets, world_rank(), world_size(), targets);
}

Tensor loss_of(const nn::GPTModel& model, const Ids& ids, const Ids& targets) {
  Tensor logits = model(ids);
  return cross_entropy(reshape(logits, {ids.size(0) * ids.size(1), model.config().vocab_size}),
                       targets.values());
}

// Decay on the matrices only: two groups, as a user would.
std::vector<ParamGroup> groups_of(const std::vector<Parameter>& params) {
  std::vector<ParamGroup> groups(2);
  for (const Parameter& p : params)
    groups[p.shape().dims().size() >= 2 ? 0 : 1].params.push_back(p);
  groups[1].weight_decay = 0.0;
  return groups;
}

constexpr AdamWOptions kAdamW{.lr = 1e-2, .weight_decay = 0.1};

}  // namespace test_sharded_adamw

using namespace test_sharded_adamw;

TEST_CASE("distributed: sharded AdamW equals AdamW after the average, blocking and overlapped",
          "[zero]") {
  const int size = world_size();
  const nn::GPTConfig cfg = tiny_gpt();
  Ids ids, targets;
  my_batch(cfg, ids, targets);
  // With three or more ranks MPI_Allreduce's order is the library's: the unsharded runs sum in
  // rank order, as the sharded one does (with two, the default is the same bits).
  const dist::DataParallelOptions dp{
      .bucket_bytes = 4096, .first_bucket_bytes = 1024, .rank_order_sum = size > 2};
  Generator init_a(5), init_b(5), init_c(5);
  Generator init_e(5);
  nn::GPTModel blocking(cfg, DType::Float32, init_a), overlapped(cfg, DType::Float32, init_b),
      sharded(cfg, DType::Float32, init_c), sharded_overlapped(cfg, DType::Float32, init_e);
  const std::vector<Parameter> pa = blocking.parameters(), pb = overlapped.parameters(),
                               pc = sharded.parameters(), pe = sharded_overlapped.parameters();
  dist::DataParallel ddp_a(pa, dp), ddp_b(pb, dp), ddp_c(pc), ddp_e(pe);
  AdamW opt_a(groups_of(pa), kAdamW), opt_b(groups_of(pb), kAdamW);
  // 1 KiB buckets: several, parameters cut over buckets and ranks.
  dist::ShardedAdamW opt_c(groups_of(pc), kAdamW, {.bucket_bytes = 1024});
  // Overlapped, with at most two buckets in flight: starting a third finishes the oldest inside
  // the reverse walk.
  dist::ShardedAdamW opt_e(groups_of(pe), kAdamW,
                           {.bucket_bytes = 1024, .first_bucket_bytes = 256, .max_in_flight = 2});
  const int64_t total = opt_c.total_elements();
  CHECK(total == sharded.num_parameters());
  int64_t owned = opt_c.shard_elements(), sum_owned = 0;
  MPI_Allreduce(&owned, &sum_owned, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  CHECK(sum_owned == total);  // every element has one owner
  // 1/N of each bucket, up to one of clip_grad_norm_'s chunks (at most 1 KiB / 4 B here).
  CHECK(owned <= (total + size - 1) / size + opt_c.num_buckets() * 256);
  CHECK(opt_c.state_bytes() == 2 * owned * 4);
  CHECK(opt_e.num_buckets() > 3);

  Tape tape;
  for (int step = 0; step < 3; ++step) {
    TapeScope scope(tape);
    tape.reset();
    opt_a.zero_grad();
    loss_of(blocking, ids, targets).backward();
    ddp_a.average_gradients();
    opt_a.step();
    tape.reset();
    opt_b.zero_grad();
    loss_of(overlapped, ids, targets).backward(ddp_b.backward_options(tape));
    ddp_b.average_gradients();
    opt_b.step();
    tape.reset();
    opt_c.zero_grad();
    loss_of(sharded, ids, targets).backward();
    opt_c.step();  // each rank's own gradients: the sharded step averages them
    tape.reset();
    opt_e.zero_grad();
    loss_of(sharded_overlapped, ids, targets).backward(opt_e.backward_options(tape));
    opt_e.step();
    CHECK(opt_e.buckets_started_in_backward() == opt_e.num_buckets());  // all from the walk
    for (size_t i = 0; i < pa.size(); ++i) {
      INFO("step " << step + 1 << ", " << pa[i].name() << ", rank " << world_rank());
      CHECK(pb[i].values() == pa[i].values());
      CHECK(pc[i].values() == pa[i].values());  // bit for bit, on every rank
      CHECK(pe[i].values() == pa[i].values());
    }
  }

  // The state gathered on rank 0 is AdamW's, name for name and bit for bit.
  const OptimizerState whole = opt_c.gather_state(0);
  const OptimizerState reference = opt_a.state();
  if (world_rank() == 0) {
    CHECK(whole.optimizer == reference.optimizer);
    CHECK(whole.step == reference.step);
    REQUIRE(whole.scalars.size() == reference.scalars.size());
    for (size_t k = 0; k < whole.scalars.size(); ++k) {
      CHECK(whole.scalars[k].name == reference.scalars[k].name);
      CHECK(whole.scalars[k].value == reference.scalars[k].value);
    }
    REQUIRE(whole.tensors.size() == reference.tensors.size());
    for (size_t k = 0; k < whole.tensors.size(); ++k) {
      INFO(reference.tensors[k].name);
      CHECK(whole.tensors[k].name == reference.tensors[k].name);
      CHECK(whole.tensors[k].shape == reference.tensors[k].shape);
      CHECK(whole.tensors[k].values == reference.tensors[k].values);
    }
  } else {
    CHECK(whole.tensors.empty());
  }

  // Through Optimizer&, the local state is refused rather than returned without the moments.
  const Optimizer& as_base = opt_c;
  CHECK_THROWS_WITH(as_base.state(), Catch::Contains("gather_state"));

  // A sharded optimiser resumed from AdamW's whole state (another bucket size: another layout)
  // continues as AdamW does.
  Generator init_d(6);
  nn::GPTModel resumed(cfg, DType::Float32, init_d);
  std::vector<Parameter> pd = resumed.parameters();
  for (size_t i = 0; i < pd.size(); ++i) pd[i].assign(pa[i].values());
  dist::ShardedAdamW opt_d(groups_of(pd), kAdamW, {.bucket_bytes = 600});
  static_cast<Optimizer&>(opt_d).load_state(reference);  // load_full_state
  opt_d.set_clip_grad_norm(0.05);
  opt_e.set_clip_grad_norm(0.05);
  for (int step = 0; step < 2; ++step) {
    TapeScope scope(tape);
    tape.reset();
    opt_a.zero_grad();
    loss_of(blocking, ids, targets).backward();
    ddp_a.average_gradients();
    const double norm = clip_grad_norm_(opt_a, 0.05);  // and clipping, below
    opt_a.step();
    tape.reset();
    opt_d.zero_grad();
    loss_of(resumed, ids, targets).backward();
    opt_d.step();
    tape.reset();
    opt_e.zero_grad();
    loss_of(sharded_overlapped, ids, targets).backward(opt_e.backward_options(tape));
    opt_e.step();
    // The norm of the chunks summed on their ranks, added in clip_grad_norm_'s order: its bits.
    CHECK(norm > 0.05);  // it clipped
    CHECK(opt_d.last_grad_norm() == norm);
    CHECK(opt_e.last_grad_norm() == norm);
    for (size_t i = 0; i < pa.size(); ++i) {
      INFO("clipped step " << step + 1 << ", " << pa[i].name() << ", rank " << world_rank());
      CHECK(pd[i].values() == pa[i].values());
      CHECK(pe[i].values() == pa[i].values());
    }
  }

  // clip_grad_norm_ over the (not averaged) gradients before a sharded step is refused.
  {
    TapeScope scope(tape);
    tape.reset();
    opt_d.zero_grad();
    loss_of(resumed, ids, targets).backward();
    clip_grad_norm_(pd, 1e-4);
    CHECK_THROWS_WITH(opt_d.step(), Catch::Contains("set_clip_grad_norm"));
  }
  // An overlapped backward must be followed by its step.
  {
    TapeScope scope(tape);
    tape.reset();
    opt_e.zero_grad();
    loss_of(sharded_overlapped, ids, targets).backward(opt_e.backward_options(tape));
    CHECK_THROWS_WITH(opt_e.backward_options(tape), Catch::Contains("not followed by step()"));
    opt_e.step();
  }
}

TEST_CASE(
    "distributed: buckets, overlap, sharding and activation checkpointing together "
    "follow one process on the whole batch",
    "[zero]") {
  // Three runs from the same weights: one process on every rank's rows (plain AdamW); the plain
  // data-parallel run (blocking DataParallel, AdamW, in rank order at 3 ranks); and all of it at
  // once (ShardedAdamW in small buckets, overlapped with backward, every block checkpointed).
  // The last has the plain data-parallel run's weights bit for bit, and its losses are one
  // process's within float64 rounding. (Weights are not compared with one process's: where a
  // gradient is zero there and rounding noise summed over ranks, AdamW's m / sqrt(v) makes a
  // step of a whole lr out of it, of either sign.)
  nn::GPTConfig cfg = tiny_gpt();
  cfg.n_layers = 2;
  Ids ids, targets, all_ids, all_targets;
  my_batch(cfg, ids, targets);
  whole_batch(cfg, all_ids, all_targets);
  Generator init_a(7), init_b(7), init_c(7);
  nn::GPTModel one(cfg, DType::Float64, init_a), plain(cfg, DType::Float64, init_b),
      composed(cfg, DType::Float64, init_c);
  composed.set_checkpoint_every(1);  // every block recomputed in backward
  const std::vector<Parameter> pa = one.parameters(), pb = plain.parameters(),
                               pc = composed.parameters();
  AdamW opt_a(groups_of(pa), kAdamW), opt_b(groups_of(pb), kAdamW);
  dist::DataParallel ddp_b(pb, {.rank_order_sum = world_size() > 2});
  dist::ShardedAdamW opt_c(groups_of(pc), kAdamW,
                           {.bucket_bytes = 2048, .first_bucket_bytes = 512, .max_in_flight = 2});
  REQUIRE(opt_c.num_buckets() > 3);
  Tape tape;
  for (int step = 0; step < 3; ++step) {
    TapeScope scope(tape);
    tape.reset();
    opt_a.zero_grad();
    Tensor loss_a = loss_of(one, all_ids, all_targets);  // one process, every rank's rows
    loss_a.backward();
    opt_a.step();
    const double whole = loss_a.item();
    tape.reset();
    opt_b.zero_grad();
    loss_of(plain, ids, targets).backward();
    ddp_b.average_gradients();
    opt_b.step();
    tape.reset();
    opt_c.zero_grad();
    Tensor loss_c = loss_of(composed, ids, targets);
    loss_c.backward(opt_c.backward_options(tape));
    opt_c.step();
    CHECK(opt_c.buckets_started_in_backward() == opt_c.num_buckets());
    // The ranks' losses (equal rows each) average to the whole batch's.
    const double mine = loss_c.item();
    double sum = 0.0;
    MPI_Allreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    INFO("step " << step + 1 << ", rank " << world_rank());
    CHECK(std::abs(sum / world_size() - whole) <= 1e-12 * std::abs(whole));
    for (size_t i = 0; i < pb.size(); ++i) {
      INFO(pb[i].name());
      CHECK(pc[i].values() == pb[i].values());
    }
  }
}

TEST_CASE("distributed: ranks that disagree about the parameters are refused on every rank",
          "[zero]") {
  const int rank = world_rank(), last = world_size() - 1;
  Generator init(3);
  std::vector<Parameter> params{Parameter(Shape{4, 3}), Parameter(Shape{5})};
  // The last rank's second tensor has another shape.
  if (rank == last) params[1] = Parameter(Shape{6});
  CHECK_THROWS_WITH(dist::ShardedAdamW(params, kAdamW),
                    Catch::Contains("ShardedAdamW: the ranks disagree") &&
                        Catch::Contains("rank " + std::to_string(last) + " "));
  CHECK_THROWS_WITH(dist::DataParallel(params),
                    Catch::Contains("DataParallel: the ranks disagree about the model"));
  // The same tensors, other buckets on one rank.
  params[1] = Parameter(Shape{5});
  CHECK_THROWS_WITH(dist::DataParallel(params, {.first_bucket_bytes = rank == last ? 16 : 4096}),
                    Catch::Contains("disagree about the model or the buckets"));
  CHECK_THROWS_WITH(
      dist::ShardedAdamW(params, kAdamW, {.first_bucket_bytes = rank == last ? 16 : 4096}),
      Catch::Contains("disagree"));
  // And two dtypes in one sharded optimiser: refused (one flat vector).
  std::vector<Parameter> mixed{Parameter(Shape{2}), Parameter(Shape{2}, DType::Float64)};
  CHECK_THROWS_WITH(dist::ShardedAdamW(mixed, kAdamW), Catch::Contains("one dtype"));
}
