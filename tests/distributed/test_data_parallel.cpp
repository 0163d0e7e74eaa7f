// DataParallel under mpirun -np 2: the initial broadcast, the gradient average, and a small GPT
// whose training equals one process on the concatenated batch, per element.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <tapegrad/dist/data_parallel.h>
#include <tapegrad/tapegrad.h>
#include "tests/compare.h"

namespace {

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

// Rank 0's copy of every rank's values of `p`, as one vector per rank (others get empty).
std::vector<std::vector<double>> gather_values(const Parameter& p) {
  std::vector<double> mine = p.values();
  std::vector<double> all(mine.size() * static_cast<size_t>(world_size()));
  MPI_Gather(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, all.data(),
             static_cast<int>(mine.size()), MPI_DOUBLE, 0, MPI_COMM_WORLD);
  std::vector<std::vector<double>> out;
  for (int r = 0; r < world_size(); ++r) {
    out.emplace_back(all.begin() + static_cast<std::ptrdiff_t>(r * mine.size()),
                     all.begin() + static_cast<std::ptrdiff_t>((r + 1) * mine.size()));
  }
  return out;
}

// A tiny GPT (the book's GPTModel with a small config): dropout off, so one process on the
// concatenated batch is the exact reference.
nn::GPTConfig tiny_gpt() {
  return nn::GPTConfig{.vocab_size = 32,
                       .context_length = 8,
                       .emb_dim = 16,
                       .n_heads = 2,
                       .n_layers = 2,
                       .drop_rate = 0.0,
                       .qkv_bias = false};
}

// The global batch every rank knows: [N·b, T] ids and targets from one seeded stream.
void make_batch(int64_t rows, int64_t tokens, int64_t vocab, Ids& ids, Ids& targets) {
  Generator g(2024);
  std::vector<int64_t> x(static_cast<size_t>(rows * tokens)), y(x.size());
  for (auto& id : x) id = g.random() % vocab;
  for (auto& t : y) t = g.random() % vocab;
  ids = Ids(Shape{rows, tokens}, x);
  targets = Ids(Shape{rows, tokens}, y);
}

// Rows [begin, end) of a [B, T] batch.
Ids rows_of(const Ids& batch, dist::Shard shard) {
  const int64_t tokens = batch.size(1);
  const auto values = batch.values();
  return Ids(Shape{shard.end - shard.begin, tokens},
             std::vector<int64_t>(values.begin() + shard.begin * tokens,
                                  values.begin() + shard.end * tokens));
}

Tensor gpt_loss(const nn::GPTModel& model, const Ids& ids, const Ids& targets) {
  Tensor logits = model(ids);  // [B, T, V]
  const int64_t rows = ids.size(0) * ids.size(1);
  return cross_entropy(reshape(logits, {rows, model.config().vocab_size}),
                       targets.values());  // []
}

// After every step, every parameter of every rank is bit-identical to rank 0's, and rank 0's
// equals the single process per element: |a − b| ≤ rtol·|b| + atol (torch's assertEqual /
// allclose rule), rtol the bound (1e-6 f32, 1e-12 f64). The atol (TAPEGRAD_DIST_REPORT=1
// prints what a run needs):
//  - float32: 1e-6, a thousandth of one step's update (lr 1e-3). float32 sums the two
//    half-batches in another order than one process does, clipping scales by a norm that differs
//    in its last bits, and Adam's m / √v turns a last-bit difference of a gradient that is noise
//    around zero into a visible difference of the update for an element whose value is near
//    zero, where rtol·|b| allows nothing. How visible depends on the vector width of the build's
//    kernels: measured worst |a − b| − rtol·|b| 7.0e-9 on an AVX-512 build, 5.13e-8 on an AVX2
//    one (-march=x86-64-v3). torch's float32 default atol is 1e-5, 10× looser.
//  - float64: 1e-15, far below one step's update. The ranks are bit-identical by construction
//    (the same bytes summed by one MPI_Allreduce, scaled by an exact 1/2), but against the single
//    process the batch's sums run in another order (each rank sums its half of the rows, then the
//    halves are added), so as in float32 an element Adam moved back and forth to near zero can
//    differ by more than rtol·|b|. Whether one does depends on the machine's and the build's
//    roundings (on one AVX-512 machine rtol alone held in Release and sanitizer builds, narrowly).
void train_and_compare(DType dtype, double rtol, double atol) {
  const int rank = world_rank(), size = world_size();
  constexpr int64_t kPerRank = 2;
  const nn::GPTConfig cfg = tiny_gpt();
  const int64_t global_rows = kPerRank * size;
  Ids ids, targets;
  make_batch(global_rows, cfg.context_length, cfg.vocab_size, ids, targets);

  // Each rank starts from its own weights: the broadcast must make them rank 0's.
  Generator init(dist::rank_seed(77, rank));
  nn::GPTModel model(cfg, dtype, init);
  const std::vector<Parameter> params = model.parameters();
  dist::DataParallel ddp(params, {.bucket_bytes = 4096});  // several buckets
  AdamW optimizer(params, {.lr = 1e-3, .weight_decay = 0.1});
  // The single-process reference on the whole batch, on rank 0.
  Generator reference_init(77);
  nn::GPTModel reference(cfg, dtype, reference_init);
  const std::vector<Parameter> reference_params = reference.parameters();
  AdamW reference_optimizer(reference_params, {.lr = 1e-3, .weight_decay = 0.1});

  const dist::Shard shard = dist::shard_of(global_rows, rank, size);
  const Ids my_ids = rows_of(ids, shard), my_targets = rows_of(targets, shard);
  Tape tape, reference_tape;
  double worst_excess = -1.0;  // the largest |a − b| − rtol·|b| seen: the atol this run needs
  double worst_tensor_excess = -1.0;  // likewise for ‖a − b‖ − rtol·‖b‖
  for (int step = 0; step < 5; ++step) {
    {
      TapeScope scope(tape);
      tape.reset();
      optimizer.zero_grad();
      gpt_loss(model, my_ids, my_targets).backward();
      ddp.average_gradients();
      // The averaged gradient's norm is above 0.5, so every step clips.
      CHECK(clip_grad_norm_(params, 0.5) > 0.5);
      optimizer.step();
    }
    if (rank == 0) {
      TapeScope scope(reference_tape);
      reference_tape.reset();
      reference_optimizer.zero_grad();
      gpt_loss(reference, ids, targets).backward();
      clip_grad_norm_(reference_params, 0.5);
      reference_optimizer.step();
    }
    // Only CHECKs below (no REQUIRE): a rank that left the loop early would leave the other
    // waiting in its next MPI_Gather, and the failure would become a hang.
    for (size_t i = 0; i < params.size(); ++i) {
      const auto per_rank = gather_values(params[i]);
      if (rank != 0) continue;
      const std::vector<double> expected = reference_params[i].values();
      const std::vector<double>& got = per_rank[0];
      INFO("step " << step + 1 << ", " << params[i].name());
      for (int r = 1; r < size; ++r) {
        INFO("rank " << r << " against rank 0");
        CHECK(per_rank[static_cast<size_t>(r)] == got);  // every rank bit-identical
      }
      // The element furthest beyond its bound (the first NaN is the worst of all).
      double excess = -INFINITY, diff = 0.0, norm = 0.0;
      size_t worst = 0;
      for (size_t k = 0; k < expected.size(); ++k) {
        const double e = std::abs(got[k] - expected[k]) - rtol * std::abs(expected[k]);
        if (!std::isnan(excess) && (std::isnan(e) || e > excess)) {
          excess = e;
          worst = k;
        }
        diff += (got[k] - expected[k]) * (got[k] - expected[k]);
        norm += expected[k] * expected[k];
      }
      worst_excess = testing::worse(worst_excess, excess);
      INFO("worst element " << worst << ": " << got[worst] << " vs one process "
                            << expected[worst]);
      CHECK(excess <= atol);  // |a − b| ≤ rtol·|b| + atol for every element; false for NaN
      // And the whole tensor: ‖a − b‖ ≤ rtol·‖b‖ + atol, with the same atol once (not √n times,
      // which the element rule would allow): many elements off by atol together fail here.
      const double tensor_excess = std::sqrt(diff) - rtol * std::sqrt(norm);
      worst_tensor_excess = testing::worse(worst_tensor_excess, tensor_excess);
      CHECK(tensor_excess <= atol);
    }
  }
  if (rank == 0 && std::getenv("TAPEGRAD_DIST_REPORT") != nullptr) {
    // TAPEGRAD_DIST_REPORT=1: the atol each rule needed in this run (negative: rtol alone holds).
    std::printf("%s: worst |a - b| - rtol·|b| = %.3g, worst ‖a - b‖ - rtol·‖b‖ = %.3g\n",
                dtype_name(dtype), worst_excess, worst_tensor_excess);
  }
}

}  // namespace

TEST_CASE("distributed: 5 AdamW steps of a GPT equal one process on the concatenated batch",
          "[train]") {
  SECTION("float32") {
    train_and_compare(DType::Float32, 1e-6, 1e-6);
  }
  SECTION("float64") {
    // Not 0: summed in another order than one process (above), a near-zero value may pass rtol.
    train_and_compare(DType::Float64, 1e-12, 1e-15);
  }
}

TEST_CASE("distributed: the average overlapped with backward equals the blocking one",
          "[overlap]") {
  // The overlapped reductions moved on by MPI_Test from the walk, or by a progress thread.
  const bool progress_thread = GENERATE(false, true);
  INFO((progress_thread ? "progress thread" : "MPI_Test from the reverse walk"));
  const int rank = world_rank(), size = world_size();
  const nn::GPTConfig cfg = tiny_gpt();
  Ids ids, targets;
  make_batch(2 * size, cfg.context_length, cfg.vocab_size, ids, targets);
  const dist::Shard shard = dist::shard_of(2 * size, rank, size);
  const Ids my_ids = rows_of(ids, shard), my_targets = rows_of(targets, shard);
  // Two copies of one model: one averaged after backward, one while backward runs.
  Generator init_a(5), init_b(5);
  nn::GPTModel blocking(cfg, DType::Float32, init_a), overlapped(cfg, DType::Float32, init_b);
  const std::vector<Parameter> pa = blocking.parameters(), pb = overlapped.parameters();
  const dist::DataParallelOptions small{.bucket_bytes = 4096, .first_bucket_bytes = 1024};
  dist::DataParallelOptions small_b = small;
  small_b.progress_thread = progress_thread;
  dist::DataParallel ddp_a(pa, small), ddp_b(pb, small_b);
  REQUIRE(ddp_b.num_buckets() >= 4);
  AdamW opt_a(pa, {.lr = 1e-3}), opt_b(pb, {.lr = 1e-3});
  Tape tape;
  for (int step = 0; step < 3; ++step) {
    TapeScope scope(tape);
    tape.reset();
    opt_a.zero_grad();
    gpt_loss(blocking, my_ids, my_targets).backward();
    ddp_a.average_gradients();
    opt_a.step();
    tape.reset();
    opt_b.zero_grad();
    gpt_loss(overlapped, my_ids, my_targets).backward(ddp_b.backward_options(tape));
    // backward_options twice without an average between is refused.
    CHECK_THROWS_WITH(ddp_b.backward_options(tape), Catch::Contains("average_gradients"));
    ddp_b.average_gradients();
    // The last parameters' buckets were final (and started) before the walk reached the
    // embeddings, whose bucket can only start at its end.
    CHECK(ddp_b.buckets_started_in_backward() >= ddp_b.num_buckets() - 1);
    opt_b.step();
    for (size_t i = 0; i < pa.size(); ++i) {
      INFO("step " << step + 1 << ", " << pa[i].name());
      CHECK(pb[i].values() == pa[i].values());  // bit for bit, on every rank
    }
  }
}

TEST_CASE("distributed: the broadcast and the gradient average", "[average]") {
  const int rank = world_rank(), size = world_size();
  REQUIRE(size >= 2);
  Parameter a({3, 4}, DType::Float32, "a"), b({5}, DType::Float64, "b"),
      c({7}, DType::Float32, "c");
  for (const Parameter& p : {a, b, c}) {
    std::vector<double> v(static_cast<size_t>(p.numel()));
    for (size_t k = 0; k < v.size(); ++k) v[k] = 100.0 * rank + static_cast<double>(k);
    Parameter(p).assign(v);
  }
  // 16-byte buckets: several buckets, one per dtype change, and a parameter larger than one.
  dist::DataParallel ddp({a, b, c}, {.bucket_bytes = 16});
  CHECK(ddp.num_buckets() >= 3);
  for (const Parameter& p : {a, b, c}) {
    const std::vector<double> v = p.values();
    for (size_t k = 0; k < v.size(); ++k) CHECK(v[k] == static_cast<double>(k));  // rank 0's
  }
  // Gradients rank + k on each rank: the mean is (size - 1) / 2 + k.
  for (const Parameter& p : {a, b, c}) {
    for (int64_t k = 0; k < p.numel(); ++k) {
      if (p.dtype() == DType::Float32) p.grad<float>()[k] = static_cast<float>(rank + k);
      if (p.dtype() == DType::Float64) p.grad<double>()[k] = static_cast<double>(rank + k);
    }
  }
  CHECK(ddp.allreduce_seconds() == 0.0);
  ddp.average_gradients();
  CHECK(ddp.allreduce_seconds() > 0.0);  // the time it took is kept
  for (const Parameter& p : {a, b, c}) {
    const std::vector<double> g = p.grad_values();
    for (size_t k = 0; k < g.size(); ++k) {
      CHECK(g[k] == (size - 1) / 2.0 + static_cast<double>(k));
    }
  }
  // The average reads gradients with their pending work applied: a's zero_grad (NaN left in its
  // stale buffer), c's clip coefficient (clip_grad_norm_ defers the multiply).
  a.zero_grad();
  static_cast<float*>(a.get()->grad.data())[0] = std::nanf("");
  const std::vector<double> g = c.grad_values();  // equal on every rank
  const double total = clip_grad_norm_({c}, 1.0);
  const float coef = std::min(1.0f / (static_cast<float>(total) + 1e-6f), 1.0f);  // torch's
  REQUIRE(coef < 1.0f);
  ddp.average_gradients();
  CHECK(a.grad_values() == std::vector<double>(12, 0.0));
  const std::vector<double> clipped = c.grad_values();
  for (size_t k = 0; k < g.size(); ++k) {
    CHECK(clipped[k] == static_cast<double>(static_cast<float>(g[k]) * coef));
  }
  ddp.reset_allreduce_seconds();
  CHECK(ddp.allreduce_seconds() == 0.0);
}

TEST_CASE("distributed: shards cover the global batch once, in rank order", "[shard]") {
  CHECK(dist::shard_of(8, 0, 2).begin == 0);
  CHECK(dist::shard_of(8, 0, 2).end == 4);
  CHECK(dist::shard_of(8, 1, 2).begin == 4);
  CHECK(dist::shard_of(8, 1, 2).end == 8);
  CHECK_THROWS_WITH(dist::shard_of(7, 0, 2), Catch::Contains("does not split evenly over 2"));
  CHECK(dist::rank_seed(123, 0) == 123);
  CHECK(static_cast<uint32_t>(dist::rank_seed(123, 1)) != 123u);
}
