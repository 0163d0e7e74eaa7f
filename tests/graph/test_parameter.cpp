// Tests for graph/parameter.cpp: the gradient's pending state (zero_grad and clip_grad_norm_
// record what they would do; backward writes into a zero gradient; the optimisers fold the clip
// coefficient into their pass), always against the same steps with the work done at once; and
// release_values: every later use of the values is an Error naming the parameter.
#include <tapegrad/graph/parameter.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/graph/ids.h>
#include <tapegrad/graph/random.h>
#include <tapegrad/graph/tape.h>
#include <tapegrad/nn/gpt.h>
#include <tapegrad/ops/ops.h>
#include <tapegrad/optim/adam.h>
#include <tapegrad/optim/clip.h>
#include <tapegrad/optim/sgd.h>

using namespace tapegrad;

namespace {

// Applies every pending zero_grad / clip at once: the path without deferred work.
void materialize(const std::vector<Parameter>& params) {
  for (const Parameter& p : params) {
    if (p.has_grad()) p.raw_grad();
  }
}

// Plants NaN and Inf in the stored gradient, which a pending zero_grad makes stale.
void plant_garbage(const Parameter& p) {
  auto* g = static_cast<float*>(p.get()->grad.data());
  for (int64_t i = 0; i < p.numel(); ++i) {
    g[i] = i % 2 == 0 ? std::numeric_limits<float>::quiet_NaN()
                      : std::numeric_limits<float>::infinity();
  }
}

// Bit for bit, values and gradients (materialised by reading them).
void require_same_bits(const Parameter& a, const Parameter& b) {
  INFO(a.name());
  REQUIRE(std::memcmp(a.raw_data(), b.raw_data(), static_cast<size_t>(a.numel()) * 4) == 0);
  REQUIRE(a.has_grad() == b.has_grad());
  if (a.has_grad()) {
    REQUIRE(std::memcmp(a.raw_grad(), b.raw_grad(), static_cast<size_t>(a.numel()) * 4) == 0);
  }
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

Parameter param(const Shape& shape, uint64_t seed, const char* name) {
  Generator gen(seed);
  std::vector<double> v(static_cast<size_t>(shape.numel()));
  gen.uniform(v.data(), shape.numel(), -0.5, 0.5);
  return Parameter::from_values(shape, v, DType::Float32, name);
}

// Two copies of the same weights, for a deferred run and a materialised one.
struct Twin {
  Parameter lazy, eager;
  Twin(const Shape& shape, uint64_t seed, const char* name)
      : lazy(param(shape, seed, name)), eager(param(shape, seed, name)) {}
};

}  // namespace

TEST_CASE("parameter: readers see zeros after zero_grad and the clipped values after clip",
          "[parameter]") {
  Parameter w = param({4, 3}, 1, "w");
  Tape tape;
  TapeScope scope(tape);
  auto step = [&] {
    tape.reset();
    const Tensor x = from_values({2, 3}, std::vector<double>{1, -2, 3, 4, 5, -6});
    sum(mul(linear(x, w), linear(x, w))).backward();
  };
  step();
  const std::vector<double> g = w.grad_values();

  w.zero_grad();
  plant_garbage(w);  // stale: every reader must see zeros
  CHECK(w.grad_values() == std::vector<double>(12, 0.0));
  CHECK(w.grad<float>()[5] == 0.0f);
  w.zero_grad();
  plant_garbage(w);
  CHECK(tape.parameter(w).grad_values() == std::vector<double>(12, 0.0));

  step();
  CHECK(w.grad_values() == g);
  const double total = clip_grad_norm_({w}, 0.5);
  // torch: g.mul_(clamp(max_norm / (total + 1e-6), max=1)) in float
  const float coef = std::min(1.0f / (static_cast<float>(total) + 1e-6f) * 0.5f, 1.0f);
  REQUIRE(coef < 1.0f);
  std::vector<double> clipped;
  for (double v : g) clipped.push_back(static_cast<float>(static_cast<float>(v) * coef));
  CHECK(same_bits(w.grad_values(), clipped));
  const Tensor leaf = tape.parameter(w);  // the tape's view of the gradient reads the same
  CHECK(same_bits(leaf.grad_values(), clipped));
}

TEST_CASE("parameter: zero_grad's stale NaN/Inf never leaks into a backward", "[parameter]") {
  // linear writes its products (GEMM beta 0), cross_entropy and dropout their terms, embedding
  // scatters into materialised zeros; a tied weight gets both its consumers' terms.
  Twin emb({6, 4}, 2, "emb"), w1({4, 4}, 3, "w1"), b1({4}, 4, "b1");
  const std::vector<int64_t> ids{1, 3, 3, 5}, targets{0, 2, 5, 1};
  auto step = [&](const Parameter& e, const Parameter& w, const Parameter& b, bool lazy) {
    for (const Parameter& p : {e, w, b}) {
      p.zero_grad();
      if (lazy && p.has_grad()) plant_garbage(p);
      if (!lazy) p.raw_grad();
    }
    Tape tape;
    TapeScope scope(tape);
    Generator gen(7);
    Tensor h = embedding(e, ids, Shape{4});                    // [4, 4]
    h = dropout(linear(linear(h, w, b), w), 0.25, true, gen);  // w used twice
    cross_entropy(linear(h, e), targets).backward();           // tied head: [4, 6]
  };
  for (int s = 0; s < 3; ++s) {
    step(emb.lazy, w1.lazy, b1.lazy, true);
    step(emb.eager, w1.eager, b1.eager, false);
    require_same_bits(emb.lazy, emb.eager);
    require_same_bits(w1.lazy, w1.eager);
    require_same_bits(b1.lazy, b1.eager);
    for (double v : w1.lazy.grad_values()) REQUIRE(std::isfinite(v));
  }
}

TEST_CASE("parameter: stale NaN in the tape's reused gradient memory never leaks", "[parameter]") {
  Parameter w = param({8, 8}, 5, "w");
  const std::vector<double> xs(64, 0.25);
  std::vector<double> reference;
  for (bool poison : {false, true}) {
    w.zero_grad();
    Tape tape;
    if (poison) {  // the first allocations of the step are carved from this released NaN
      const size_t bytes = 1 << 20;
      auto* junk = static_cast<float*>(tape.arena().allocate(bytes));
      std::fill_n(junk, bytes / 4, std::numeric_limits<float>::quiet_NaN());
      tape.arena().release(junk, bytes);
    }
    TapeScope scope(tape);
    const Tensor x = from_values({8, 8}, xs, DType::Float32, true);
    Tensor h = reshape(matmul(x, w), {64});
    h = reshape(add(h, h), {8, 8});  // add(h, h): one buffer, both terms
    sum(matmul(h, w)).backward();
    if (!poison) reference = w.grad_values();
    if (poison) {
      CHECK(same_bits(w.grad_values(), reference));
      for (double v : x.grad_values()) CHECK(std::isfinite(v));
    }
  }
}

TEST_CASE("parameter: retain_graph and a second backward accumulate after zero_grad",
          "[parameter]") {
  Twin w({3, 3}, 6, "w");
  for (const Parameter& p : {w.lazy, w.eager}) {
    p.raw_grad();  // has a gradient, then a pending zero_grad
    p.zero_grad();
    if (p == w.eager) p.raw_grad();
    Tape tape;
    TapeScope scope(tape);
    const Tensor x = from_values({2, 3}, std::vector<double>{1, 2, 3, -1, 0.5, 2});
    const Tensor loss = sum(matmul(x, p));
    loss.backward({.retain_graph = true});
    loss.backward();
  }
  require_same_bits(w.lazy, w.eager);
  CHECK(w.lazy.grad_values()[0] == 0.0);  // column sums of x, twice: 2·(1 − 1) = 0
  CHECK(w.lazy.grad_values()[3] == 2 * 2.5);
}

TEST_CASE("parameter: a parameter no backward reached after zero_grad steps as with zeros",
          "[parameter]") {
  // torch's zero_grad(set_to_none=False): .grad holds zeros, so AdamW still decays the weight
  // and updates its moments.
  Twin used({2, 2}, 8, "used"), unused({3}, 9, "unused");
  auto run = [](const Parameter& u, const Parameter& n, bool lazy) {
    AdamW opt({u, n}, {.lr = 0.1, .weight_decay = 0.1});
    for (int s = 0; s < 3; ++s) {
      opt.zero_grad();
      if (lazy && n.has_grad()) plant_garbage(n);
      if (!lazy) materialize({u, n});
      Tape tape;
      TapeScope scope(tape);
      const Tensor x = from_values({2}, std::vector<double>{1, -1});
      if (s == 0) {
        sum(add(matmul(u, x), sum(n))).backward();  // the first step reaches both
      } else {
        sum(matmul(u, x)).backward();
      }
      if (s != 1) clip_grad_norm_({u, n}, 0.5);  // step 1: AdamW meets the stale buffer itself
      if (!lazy) materialize({u, n});
      opt.step();
    }
    return opt.state();
  };
  const OptimizerState lazy = run(used.lazy, unused.lazy, true);
  const OptimizerState eager = run(used.eager, unused.eager, false);
  require_same_bits(used.lazy, used.eager);
  require_same_bits(unused.lazy, unused.eager);
  CHECK(unused.lazy.grad_values() == std::vector<double>(3, 0.0));
  REQUIRE(lazy.tensors.size() == eager.tensors.size());
  for (size_t i = 0; i < lazy.tensors.size(); ++i) {
    CHECK(same_bits(lazy.tensors[i].values, eager.tensors[i].values));
  }
}

TEST_CASE("parameter: clipping twice, and the norm of a pending clip, round as torch does",
          "[parameter]") {
  Twin w({5, 7}, 10, "w");
  std::vector<double> norms[2];
  for (const Parameter& p : {w.lazy, w.eager}) {
    const bool eager = p == w.eager;
    Tape tape;
    TapeScope scope(tape);
    const Tensor x = from_values({7}, std::vector<double>{3, -1, 4, 1, -5, 9, 2});
    sum(mul(matmul(p, x), matmul(p, x))).backward();
    for (double max_norm : {2.0, 0.3, 0.1}) {
      norms[eager].push_back(clip_grad_norm_({p}, max_norm));
      if (eager) p.raw_grad();
    }
    SGD({p}, {.lr = 0.5, .momentum = 0.9}).step();  // the pending scale folded into SGD's pass
  }
  CHECK(same_bits(norms[0], norms[1]));
  CHECK(norms[0][1] < norms[0][0]);  // each clip saw the previous one's scaled gradient
  require_same_bits(w.lazy, w.eager);
}

TEST_CASE("parameter: GPT steps with clipping and AdamW, bit for bit with the work done at once",
          "[parameter][gpt]") {
  const nn::GPTConfig cfg{50, 8, 16, 2, 2, 0.1, false};
  const Ids inputs(Shape{2, 8},
                   std::vector<int64_t>{1, 5, 9, 2, 7, 7, 3, 0, 4, 8, 1, 6, 2, 9, 5, 3});
  std::vector<int64_t> targets(16);
  for (size_t i = 0; i < targets.size(); ++i) targets[i] = static_cast<int64_t>((i * 7) % 50);
  struct Run {
    std::vector<Parameter> params;
    OptimizerState state;
    std::vector<double> losses;
  };
  auto train = [&](bool eager) {
    manual_seed(123);
    nn::GPTModel model(cfg);
    model.train();
    Run r{model.parameters(), {}, {}};
    AdamW optimizer(r.params, {.lr = 4e-4, .weight_decay = 0.1});
    Tape tape;
    for (int s = 0; s < 3; ++s) {
      tape.reset();
      TapeScope scope(tape);
      optimizer.zero_grad();
      if (eager) materialize(r.params);
      const Tensor logits = model(inputs);                                    // [B, T, V]
      const Tensor loss = cross_entropy(reshape(logits, {16, 50}), targets);  // []
      loss.backward();
      clip_grad_norm_(r.params, 0.05);  // small enough to clip every step
      if (eager) materialize(r.params);
      optimizer.step();
      r.losses.push_back(loss.item());
    }
    r.state = optimizer.state();
    return r;
  };
  const Run lazy = train(false), eager = train(true);
  CHECK(same_bits(lazy.losses, eager.losses));
  REQUIRE(lazy.params.size() == eager.params.size());
  for (size_t i = 0; i < lazy.params.size(); ++i)
    require_same_bits(lazy.params[i], eager.params[i]);
  REQUIRE(lazy.state.tensors.size() == eager.state.tensors.size());
  for (size_t i = 0; i < lazy.state.tensors.size(); ++i) {
    INFO(lazy.state.tensors[i].name);
    CHECK(same_bits(lazy.state.tensors[i].values, eager.state.tensors[i].values));
  }
}

TEST_CASE("parameter: after release_values every use of the values names it", "[parameter]") {
  Parameter p = Parameter::from_values({2, 2}, {1.0, 2.0, 3.0, 4.0}, DType::Float32, "proj.weight");
  CHECK(p.has_values());
  p.release_values("kept elsewhere for the test");
  CHECK_FALSE(p.has_values());
  CHECK(p.shape() == Shape{2, 2});  // shape, dtype and name stay
  CHECK(p.name() == "proj.weight");
  // (Catch's && keeps references: both parts must outlive the combined matcher)
  const auto name = Catch::Contains("\"proj.weight\" [2, 2]");
  const auto why = Catch::Contains("kept elsewhere for the test");
  const auto names_it = name && why;
  REQUIRE_THROWS_WITH(p.data<float>(), names_it);
  REQUIRE_THROWS_WITH(p.raw_data(), names_it);
  REQUIRE_THROWS_WITH(p.values(), names_it);
  REQUIRE_THROWS_WITH(p.assign(std::vector<double>{0, 0, 0, 0}), names_it);
  Tape tape;
  TapeScope scope(tape);
  REQUIRE_THROWS_WITH(tape.parameter(p), names_it);
  REQUIRE_THROWS_WITH(sum(p), names_it);  // any op: the leaf is refused before it is recorded
  CHECK(tape.size() == 0);
}
