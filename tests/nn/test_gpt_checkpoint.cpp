// Tests for GPTModel::set_checkpoint_every: training steps with the blocks checkpointed give the
// bit-identical losses and weights of the unsegmented model (dropout on), with less kept on the
// tape.
#include <tapegrad/nn/gpt.h>

#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include <tapegrad/graph/checkpoint.h>
#include <tapegrad/graph/error.h>
#include <tapegrad/optim/adam.h>
#include <tapegrad/train/training.h>

using namespace tapegrad;

namespace test_gpt_checkpoint {

struct Run {
  std::vector<float> losses;
  std::vector<std::string> weights;  // each parameter's bytes after the steps
  size_t tape_bytes = 0;             // the last step's tape, plus the scratch tapes' peak
};

Run train(int64_t every, const std::string& generator_kind) {
  const nn::GPTConfig cfg{40, 8, 16, 2, 3, 0.2, false};
  manual_seed(123);
  Generator own(99);
  Generator& dropout_generator = generator_kind == "own" ? own : default_generator();
  nn::GPTModel model(cfg, DType::Float32, dropout_generator);
  model.set_checkpoint_every(every);
  AdamW opt(model.parameters());
  const Ids inputs(Shape{2, 8}, {1, 5, 9, 2, 7, 3, 3, 8, 4, 0, 12, 39, 6, 6, 1, 2});
  const Ids targets(Shape{2, 8}, {5, 9, 2, 7, 3, 3, 8, 11, 0, 12, 39, 6, 6, 1, 2, 30});
  Run run;
  Tape tape;
  TapeScope scope(tape);
  for (int step = 0; step < 3; ++step) {
    tape.reset();
    reset_checkpoint_peak();
    opt.zero_grad();
    Tensor loss = calc_loss_batch(inputs, targets, model);
    loss.backward();
    opt.step();
    run.losses.push_back(loss.data<float>()[0]);
    run.tape_bytes = tape.arena().bytes_in_use() + checkpoint_scratch_peak_bytes();
  }
  for (const Parameter& p : model.parameters()) {
    run.weights.emplace_back(static_cast<const char*>(p.raw_data()),
                             static_cast<size_t>(p.numel()) * sizeof(float));
  }
  return run;
}

}  // namespace test_gpt_checkpoint

using test_gpt_checkpoint::train;

TEST_CASE("GPTModel checkpoint_every: training steps are bit-identical with and without it",
          "[activation_checkpoint][gpt]") {
  for (const std::string kind : {"default", "own"}) {
    INFO("dropout generator: " << kind);
    const auto plain = train(0, kind);
    for (int64_t every : {1, 2, 3, 5}) {
      INFO("checkpoint_every " << every);
      const auto ckpt = train(every, kind);
      CHECK(std::memcmp(plain.losses.data(), ckpt.losses.data(), plain.losses.size() * 4) == 0);
      CHECK(plain.weights == ckpt.weights);
      if (every == 1) CHECK(ckpt.tape_bytes < plain.tape_bytes);
    }
  }
}

TEST_CASE("GPTModel checkpoint_every: a negative count is an Error",
          "[activation_checkpoint][gpt]") {
  manual_seed(1);
  nn::GPTModel model({40, 8, 16, 2, 1, 0.0, false});
  CHECK_THROWS_WITH(model.set_checkpoint_every(-1),
                    Catch::Matchers::Contains("checkpoint_every -1 must be >= 0"));
  CHECK(model.checkpoint_every() == 0);
}
