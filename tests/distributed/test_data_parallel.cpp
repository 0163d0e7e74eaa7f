// DataParallel under mpirun -np 2: the initial broadcast, the gradient average, and training
// that equals one process on the concatenated batch.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "dist/data_parallel.h"
#include "tapegrad.h"

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

// A tiny language model: token embedding, a GELU layer, an output head.
struct TinyModel {
  static constexpr int64_t kVocab = 11, kEmb = 6, kHidden = 12;
  Parameter tok_emb, w1, b1, out_head;

  TinyModel(DType dtype, uint64_t seed) {
    Generator g(seed);
    auto init = [&](Shape shape, const char* name) {
      Parameter p(shape, dtype, name);
      std::vector<double> v(static_cast<size_t>(p.numel()));
      std::vector<double> u(v.size());
      g.uniform(u.data(), static_cast<int64_t>(u.size()), -0.5, 0.5);
      p.assign(u);
      return p;
    };
    tok_emb = init({kVocab, kEmb}, "tok_emb.weight");
    w1 = init({kHidden, kEmb}, "ff.weight");
    b1 = init({kHidden}, "ff.bias");
    out_head = init({kVocab, kHidden}, "out_head.weight");
  }
  std::vector<Parameter> parameters() const { return {tok_emb, w1, b1, out_head}; }

  // ids, targets: [B, T] row-major.
  Tensor loss(std::span<const int64_t> ids, std::span<const int64_t> targets, int64_t batch,
              int64_t tokens) const {
    Tensor x = embedding(tok_emb, ids, Shape{batch, tokens});                  // [B, T, C]
    Tensor h = gelu(linear(x, w1, b1));                                        // [B, T, 4C]
    Tensor logits = linear(h, out_head);                                       // [B, T, V]
    return cross_entropy(reshape(logits, {batch * tokens, kVocab}), targets);  // []
  }
};

// The global batch every rank knows: [N·b, T] ids and targets from one seeded stream.
void make_batch(int64_t rows, int64_t tokens, std::vector<int64_t>& ids,
                std::vector<int64_t>& targets) {
  Generator g(2024);
  ids.resize(static_cast<size_t>(rows * tokens));
  targets.resize(ids.size());
  for (auto& id : ids) id = g.random() % TinyModel::kVocab;
  for (auto& t : targets) t = g.random() % TinyModel::kVocab;
}

void train_and_compare(DType dtype, double tolerance) {
  const int rank = world_rank(), size = world_size();
  constexpr int64_t kPerRank = 3, kTokens = 5;
  const int64_t global_rows = kPerRank * size;
  std::vector<int64_t> ids, targets;
  make_batch(global_rows, kTokens, ids, targets);

  // Each rank starts from its own weights: the broadcast must make them rank 0's.
  TinyModel model(dtype, dist::rank_seed(77, rank));
  dist::DataParallel ddp(model.parameters(), {.bucket_bytes = 256});
  AdamW optimizer(model.parameters(), {.lr = 0.05, .weight_decay = 0.1});
  // The single-process reference on the whole batch, on rank 0.
  TinyModel reference(dtype, 77);
  AdamW reference_optimizer(reference.parameters(), {.lr = 0.05, .weight_decay = 0.1});

  const dist::Shard shard = dist::shard_of(global_rows, rank, size);
  const std::span<const int64_t> my_ids(ids.data() + shard.begin * kTokens,
                                        static_cast<size_t>((shard.end - shard.begin) * kTokens));
  const std::span<const int64_t> my_targets(
      targets.data() + shard.begin * kTokens,
      static_cast<size_t>((shard.end - shard.begin) * kTokens));
  Tape tape, reference_tape;
  for (int step = 0; step < 5; ++step) {
    {
      TapeScope scope(tape);
      tape.reset();
      optimizer.zero_grad();
      model.loss(my_ids, my_targets, shard.end - shard.begin, kTokens).backward();
      ddp.average_gradients();
      clip_grad_norm_(model.parameters(), 1.0);
      optimizer.step();
    }
    if (rank == 0) {
      TapeScope scope(reference_tape);
      reference_tape.reset();
      reference_optimizer.zero_grad();
      reference.loss(ids, targets, global_rows, kTokens).backward();
      clip_grad_norm_(reference.parameters(), 1.0);
      reference_optimizer.step();
    }
    for (size_t i = 0; i < model.parameters().size(); ++i) {
      const auto per_rank = gather_values(model.parameters()[i]);
      if (rank != 0) continue;
      const std::vector<double> expected = reference.parameters()[i].values();
      INFO("step " << step + 1 << ", " << model.parameters()[i].name());
      for (int r = 0; r < size; ++r) {
        REQUIRE(per_rank[static_cast<size_t>(r)] == per_rank[0]);  // every rank identical
      }
      // Relative error of the whole tensor, ‖a − b‖ / ‖b‖: float32 sums the two halves of the
      // batch in another order than one process does, and Adam's m / √v magnifies those last
      // bits in elements whose gradient is near zero, so an element-wise ratio would measure
      // noise around zero rather than the step.
      double diff = 0.0, norm = 0.0;
      for (size_t k = 0; k < expected.size(); ++k) {
        diff += (per_rank[0][k] - expected[k]) * (per_rank[0][k] - expected[k]);
        norm += expected[k] * expected[k];
      }
      const double relative = std::sqrt(diff / norm);
      CHECK(relative <= tolerance);  // false for NaN too
    }
  }
}

}  // namespace

TEST_CASE("distributed: 5 AdamW steps equal one process on the concatenated batch", "[train]") {
  SECTION("float32") {
    train_and_compare(DType::Float32, 1e-6);
  }
  SECTION("float64") {
    train_and_compare(DType::Float64, 1e-12);
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
  ddp.average_gradients();
  for (const Parameter& p : {a, b, c}) {
    const std::vector<double> g = p.grad_values();
    for (size_t k = 0; k < g.size(); ++k) {
      CHECK(g[k] == (size - 1) / 2.0 + static_cast<double>(k));
    }
  }
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
