// Tests for train/training.cpp (the chapter-5 loop on a tiny GPT) and DataLoader::restore_epoch.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/random.h>
#include <tapegrad/graph/tape.h>
#include <tapegrad/nn/gpt.h>
#include <tapegrad/optim/adam.h>
#include <tapegrad/text/dataset.h>
#include <tapegrad/text/tokenizer.h>
#include <tapegrad/train/training.h>

using namespace tapegrad;

namespace {

const nn::GPTConfig kTiny{256, 8, 16, 2, 1, 0.0, false};

std::string some_text() {
  std::string text;
  for (int i = 0; i < 30; ++i) text += "the cat sat on the mat. ";
  return text;
}

std::vector<int64_t> ids_of(const Ids& ids) {
  return {ids.values().begin(), ids.values().end()};
}

}  // namespace

TEST_CASE("DataLoader::restore_epoch continues an epoch where it was saved", "[text][training]") {
  ByteTokenizer tokenizer;
  const GPTDataset dataset(some_text(), tokenizer, 8, 8);
  Generator g(5);
  DataLoader loader(dataset, 3, true, true, &g);
  Ids x, y;
  REQUIRE(loader.next(x, y));
  REQUIRE(loader.next(x, y));
  const std::vector<int64_t> order = loader.order();
  const int64_t position = loader.position();
  const std::vector<uint64_t> state = g.state();
  std::vector<std::vector<int64_t>> expected;
  while (loader.next(x, y)) expected.push_back(ids_of(x));
  REQUIRE(!expected.empty());

  Generator g2(99);
  g2.set_state(state);
  DataLoader resumed(dataset, 3, true, true, &g2);
  resumed.restore_epoch(order, position, false);
  std::vector<std::vector<int64_t>> got;
  while (resumed.next(x, y)) got.push_back(ids_of(x));
  CHECK(got == expected);
  CHECK(g2.state() == g.state());  // the same trailing draw at the epoch's end

  CHECK_THROWS_AS(resumed.restore_epoch({0, 1}, 0, false), Error);    // not a permutation
  CHECK_THROWS_AS(resumed.restore_epoch(order, 1000, false), Error);  // past the end
  DataLoader no_generator(dataset, 3, true, true);
  CHECK_THROWS_AS(no_generator.restore_epoch(order, 0, false), Error);  // torch's own sampler
}

TEST_CASE("train_model_simple: the loss falls, evaluations and samples are reported",
          "[text][training]") {
  Tape tape;
  TapeScope scope(tape);
  ByteTokenizer tokenizer;
  const std::string text = some_text();
  const TextSplit split = train_val_split(text, 0.8);
  const GPTDataset train(split.train, tokenizer, 8, 8), val(split.validation, tokenizer, 8, 8);
  manual_seed(1);
  nn::GPTModel model(kTiny);
  Generator g(2);
  DataLoader train_loader(train, 4, true, true, &g), train_eval(train, 4, true, true, &g),
      val_loader(val, 4, false, false, &g);

  // An untrained model's loss is near ln(V) (uniform over 256 bytes).
  const double first = calc_loss_loader(val_loader, model);
  CHECK(std::abs(first - std::log(256.0)) < 0.5);

  AdamW optimizer(model.parameters(), AdamWOptions{.lr = 1e-2, .weight_decay = 0.1});
  TrainOptions options;
  options.num_epochs = 100;
  options.max_steps = 40;
  options.eval_freq = 10;
  options.eval_iter = 2;
  options.start_context = "the";
  options.sample_tokens = 4;
  std::vector<int64_t> eval_steps;
  std::vector<double> val_losses;
  int samples = 0, steps = 0;
  TrainCallbacks callbacks;
  callbacks.on_step = [&](const TrainProgress&) { ++steps; };
  callbacks.on_eval = [&](const TrainProgress& p, const EvalLosses& l) {
    eval_steps.push_back(p.step);
    val_losses.push_back(l.val_loss);
  };
  callbacks.on_sample = [&](const TrainProgress&, const std::string& sample) {
    ++samples;
    CHECK(sample.size() == 3 + 4);  // the prompt's bytes and 4 new ones
  };
  const TrainState end = train_model_simple(model, train_loader, train_eval, val_loader, optimizer,
                                            nullptr, tokenizer, options, callbacks);
  CHECK(end.step == 40);
  CHECK(steps == 40);
  CHECK(end.tokens_seen == 40 * 4 * 8);
  CHECK(eval_steps == std::vector<int64_t>{1, 11, 21, 31, 40});
  CHECK(samples == end.epoch + 1);  // every finished epoch, and the stop mid-epoch
  INFO("val loss " << val_losses.front() << " -> " << val_losses.back());
  CHECK(val_losses.back() < 0.5 * val_losses.front());  // a repetitive text is learnt quickly
  CHECK(model.training());
}
