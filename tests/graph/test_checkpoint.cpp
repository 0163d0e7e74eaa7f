// Tests for graph/checkpoint.cpp: gradients bit-identical to the unsegmented ops (dropout masks
// replayed), less memory held, nesting and repetition, and the errors.
#include <tapegrad/graph/checkpoint.h>

#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/factory.h>
#include <tapegrad/nn/gpt.h>
#include <tapegrad/nn/layers.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

using namespace tapegrad;

namespace test_checkpoint {

// The bytes of a float32 buffer, so that comparisons see -0 and NaN payloads too.
std::string bits(const void* data, int64_t numel) {
  if (data == nullptr) return {};
  return std::string(static_cast<const char*>(data), static_cast<size_t>(numel) * sizeof(float));
}

std::vector<std::string> parameter_grads(const nn::Module& m) {
  std::vector<std::string> out;
  for (const Parameter& p : m.parameters()) out.push_back(bits(p.raw_grad(), p.numel()));
  return out;
}

void zero_grads(const nn::Module& m) {
  for (const Parameter& p : m.parameters()) p.zero_grad();
}

struct Mlp {
  nn::Linear fc1{8, 16, true, DType::Float32, "fc1"};
  nn::Linear fc2{16, 8, true, DType::Float32, "fc2"};
  std::vector<Parameter> parameters() const {
    std::vector<Parameter> ps = fc1.parameters();
    for (const Parameter& p : fc2.parameters()) ps.push_back(p);
    return ps;
  }
  Tensor operator()(const Tensor& x) const { return fc2(gelu(fc1(x))); }
};

struct Step {
  std::vector<std::string> grads;  // parameters', then the input's
  std::string loss;
};

// loss = sum(mlp(x) * x) + sum(x * x): x is also used after the segment, so its gradient already
// holds terms when the segment's backward adds its own.
Step mlp_step(const Mlp& mlp, bool use_checkpoint) {
  for (const Parameter& p : mlp.parameters()) p.zero_grad();
  Tape tape;
  TapeScope scope(tape);
  manual_seed(5);
  Tensor x = requires_grad(rand({4, 8}));
  Tensor y = use_checkpoint
                 ? checkpoint([&mlp](std::span<const Tensor> in) { return mlp(in[0]); }, {x})
                 : mlp(x);
  Tensor loss = add(sum(mul(y, x)), sum(mul(x, x)));
  loss.backward();
  Step s;
  for (const Parameter& p : mlp.parameters()) s.grads.push_back(bits(p.raw_grad(), p.numel()));
  s.grads.push_back(bits(x.grad<float>(), x.numel()));
  s.loss = bits(loss.data<float>(), 1);
  return s;
}

nn::GPTConfig small_config() {
  nn::GPTConfig cfg;
  cfg.vocab_size = 50;
  cfg.context_length = 8;
  cfg.emb_dim = 16;
  cfg.n_heads = 2;
  cfg.n_layers = 2;
  cfg.drop_rate = 0.25;
  return cfg;
}

// Two transformer blocks with dropout, each its own segment or not; returns the gradients, the
// output's bits and the generator's state after the step.
struct BlockStep {
  std::vector<std::string> grads;
  std::string output;
  std::vector<uint64_t> rng_after;
  size_t tape_bytes = 0;
  size_t scratch_bytes = 0;
};

BlockStep blocks_step(const std::vector<nn::TransformerBlock*>& blocks, bool use_checkpoint,
                      const Tensor* seed_input = nullptr) {
  for (nn::TransformerBlock* b : blocks) zero_grads(*b);
  Tape tape;
  TapeScope scope(tape);
  manual_seed(11);
  Tensor x = seed_input != nullptr ? *seed_input : requires_grad(rand({2, 8, 16}));
  Tensor h = x;
  reset_checkpoint_peak();
  for (nn::TransformerBlock* b : blocks) {
    if (use_checkpoint) {
      h = checkpoint([b](std::span<const Tensor> in) { return (*b)(in[0]); }, {h});
    } else {
      h = (*b)(h);
    }
  }
  Tensor loss = sum(mul(h, h));
  loss.backward();
  BlockStep s;
  for (nn::TransformerBlock* b : blocks) {
    for (const std::string& g : parameter_grads(*b)) s.grads.push_back(g);
  }
  s.grads.push_back(bits(x.grad<float>(), x.numel()));
  s.output = bits(h.data<float>(), h.numel());
  s.rng_after = default_generator().state();
  s.tape_bytes = tape.arena().bytes_in_use();
  s.scratch_bytes = checkpoint_scratch_peak_bytes();
  return s;
}

}  // namespace test_checkpoint

using namespace test_checkpoint;

TEST_CASE("checkpoint: an MLP's gradients are bit-identical with and without it",
          "[activation_checkpoint]") {
  manual_seed(1);
  Mlp mlp;
  const Step plain = mlp_step(mlp, false);
  const Step ckpt = mlp_step(mlp, true);
  CHECK(plain.loss == ckpt.loss);
  REQUIRE(plain.grads.size() == ckpt.grads.size());
  for (size_t i = 0; i < plain.grads.size(); ++i) {
    INFO(i);
    CHECK_FALSE(plain.grads[i].empty());
    CHECK(plain.grads[i] == ckpt.grads[i]);
  }
}

TEST_CASE("checkpoint: GPT blocks with dropout replay their masks, bit for bit",
          "[activation_checkpoint]") {
  manual_seed(3);
  nn::TransformerBlock b0(small_config(), DType::Float32, default_generator(), "b0");
  nn::TransformerBlock b1(small_config(), DType::Float32, default_generator(), "b1");
  const std::vector<nn::TransformerBlock*> blocks{&b0, &b1};
  const BlockStep plain = blocks_step(blocks, false);
  const BlockStep ckpt = blocks_step(blocks, true);
  CHECK(plain.output == ckpt.output);
  CHECK(plain.rng_after == ckpt.rng_after);  // the recomputation left the stream where it was
  REQUIRE(plain.grads.size() == ckpt.grads.size());
  for (size_t i = 0; i < plain.grads.size(); ++i) {
    INFO(i);
    CHECK(plain.grads[i] == ckpt.grads[i]);
  }
  // Without preserve_rng_state the recomputation draws other masks: the gradients differ.
  zero_grads(b0);
  Tape tape;
  TapeScope scope(tape);
  manual_seed(11);
  Tensor x = requires_grad(rand({2, 8, 16}));
  Tensor h = checkpoint([&b0](std::span<const Tensor> in) { return b0(in[0]); }, {x},
                        {.preserve_rng_state = false});
  sum(mul(h, h)).backward();
  CHECK(parameter_grads(b0)[0] != plain.grads[0]);
}

TEST_CASE("checkpoint: the tape keeps less, a scratch tape one segment at a time",
          "[activation_checkpoint]") {
  manual_seed(4);
  std::vector<std::unique_ptr<nn::TransformerBlock>> owned;
  std::vector<nn::TransformerBlock*> blocks;
  for (int i = 0; i < 6; ++i) {
    owned.push_back(std::make_unique<nn::TransformerBlock>(small_config(), DType::Float32,
                                                           default_generator(), "b"));
    blocks.push_back(owned.back().get());
  }
  const BlockStep plain = blocks_step(blocks, false);
  const BlockStep ckpt = blocks_step(blocks, true);
  CHECK(plain.grads == ckpt.grads);
  CHECK(plain.scratch_bytes == 0);
  CHECK(ckpt.scratch_bytes > 0);
  // Six segments, of which the scratch tape holds one at a time.
  INFO("without: " << plain.tape_bytes << ", with: " << ckpt.tape_bytes << " + "
                   << ckpt.scratch_bytes);
  CHECK(ckpt.tape_bytes + ckpt.scratch_bytes < plain.tape_bytes / 2);
}

TEST_CASE("checkpoint: nested, repeated, and walked twice with retain_graph",
          "[activation_checkpoint]") {
  manual_seed(2);
  Mlp mlp;
  auto run = [&mlp](int mode) {
    for (const Parameter& p : mlp.parameters()) p.zero_grad();
    Tape tape;
    TapeScope scope(tape);
    manual_seed(6);
    Tensor x = requires_grad(rand({4, 8}));
    auto twice = [&mlp](std::span<const Tensor> in) { return mlp(mlp(in[0])); };
    auto inner = [&mlp](std::span<const Tensor> in) {
      return checkpoint([&mlp](std::span<const Tensor> a) { return mlp(a[0]); }, {in[0]});
    };
    auto outer = [&mlp, inner](std::span<const Tensor> in) {
      return mlp(checkpoint(inner, {in[0]}));
    };
    Tensor y =
        mode == 0   ? twice(std::vector<Tensor>{x})
        : mode == 1 ? checkpoint(twice, {x})
        : mode == 2
            ? checkpoint(outer, {x})
            : checkpoint(
                  [&mlp](std::span<const Tensor> in) { return mlp(in[0]); },
                  {checkpoint([&mlp](std::span<const Tensor> in) { return mlp(in[0]); }, {x})});
    Tensor loss = sum(mul(y, y));
    loss.backward({.retain_graph = true});
    loss.backward();  // a second walk recomputes again and accumulates
    std::vector<std::string> g;
    for (const Parameter& p : mlp.parameters()) g.push_back(bits(p.raw_grad(), p.numel()));
    g.push_back(bits(x.grad<float>(), x.numel()));
    return g;
  };
  const auto plain = run(0);
  CHECK(run(1) == plain);  // one segment of two applications
  CHECK(run(2) == plain);  // a checkpoint inside a checkpoint inside a checkpoint
  CHECK(run(3) == plain);  // two segments in a row
}

TEST_CASE("checkpoint: parameters get gradients when no input requires one",
          "[activation_checkpoint]") {
  manual_seed(7);
  Mlp mlp;
  std::vector<std::vector<double>> expected;
  for (bool use : {false, true}) {
    for (const Parameter& p : mlp.parameters()) p.zero_grad();
    Tape tape;
    TapeScope scope(tape);
    Tensor x = full({2, 8}, 0.5);
    Tensor y =
        use ? checkpoint([&mlp](std::span<const Tensor> in) { return mlp(in[0]); }, {x}) : mlp(x);
    CHECK(y.requires_grad());
    sum(y).backward();
    if (!use) {
      for (const Parameter& p : mlp.parameters()) expected.push_back(p.grad_values());
    } else {
      for (size_t i = 0; i < expected.size(); ++i) {
        CHECK(mlp.parameters()[i].grad_values() == expected[i]);
      }
    }
  }
}

TEST_CASE("checkpoint: under no_grad it only computes", "[activation_checkpoint]") {
  manual_seed(8);
  Mlp mlp;
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(rand({2, 8}));
  NoGradGuard no_grad;
  const int32_t before = tape.size();
  Tensor y = checkpoint([&mlp](std::span<const Tensor> in) { return mlp(in[0]); }, {x});
  CHECK(tape.size() == before + 1);  // the segment's nodes stayed on the scratch tape
  CHECK_FALSE(y.requires_grad());
  CHECK(y.values() == mlp(x).values());
}

TEST_CASE("checkpoint: bad uses are Errors", "[activation_checkpoint]") {
  manual_seed(9);
  Mlp mlp;
  Tape tape;
  TapeScope scope(tape);
  Tensor x = requires_grad(rand({2, 8}));
  const auto message = [](auto&& f) {
    try {
      f();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  using Catch::Matchers::Contains;
  CHECK_THAT(message([&] { checkpoint(CheckpointFunction{}, {x}); }), Contains("no function"));
  CHECK_THAT(message([&] { checkpoint([](std::span<const Tensor>) { return Tensor(); }, {x}); }),
             Contains("returned no tensor"));
  CHECK_THAT(message([&] { checkpoint([&x](std::span<const Tensor>) { return x; }, {x}); }),
             Contains("returned a tensor of another tape"));
  CHECK_THAT(
      message([&] { checkpoint([&x](std::span<const Tensor> in) { return add(in[0], x); }, {x}); }),
      Contains("belongs to another tape"));
  CHECK_THAT(
      message([&] { checkpoint([](std::span<const Tensor> in) { return in[0]; }, {Tensor()}); }),
      Contains("input 0 is undefined"));
  Tape other;
  Tensor z = other.leaf({2, 8}, DType::Float32, nullptr, true);
  CHECK_THAT(message([&] {
               checkpoint([](std::span<const Tensor> in) { return add(in[0], in[1]); }, {x, z});
             }),
             Contains("input 1 belongs to another tape than input 0"));
  Tape stale_tape;
  Tensor stale = stale_tape.leaf({2}, DType::Float32, nullptr, true);
  stale_tape.reset();
  CHECK_THAT(
      message([&] { checkpoint([](std::span<const Tensor> in) { return in[0]; }, {stale}); }),
      Contains("reset"));

  // A function that computes something else the second time.
  int calls = 0;
  Tensor odd = checkpoint(
      [&calls](std::span<const Tensor> in) {
        return ++calls == 1 ? mul(in[0], in[0]) : sum(in[0]);
      },
      {x});
  CHECK_THAT(message([&] { sum(odd).backward(); }),
             Contains("must compute the same thing both times"));

  // Neither grad() nor create_graph goes through it (torch's reentrant checkpoint refuses both).
  Tape t2;
  TapeScope s2(t2);
  Tensor w = requires_grad(rand({2, 8}));
  Tensor y = sum(checkpoint([](std::span<const Tensor> in) { return mul(in[0], in[0]); }, {w}));
  CHECK_THAT(message([&] { grad(y, {w}, {.create_graph = true}); }),
             Contains("checkpoint") && Contains("has no recorded backward"));
  CHECK_THAT(message([&] { grad(y, {w}); }), Contains("has no recorded backward"));
}
