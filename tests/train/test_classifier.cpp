// Tests for train/classifier.h: the chapter-6 loops over a small in-memory loader.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include <tapegrad/tapegrad.h>

using namespace tapegrad;

namespace {

// The loader interface the loops read (size, begin_epoch, next), over fixed batches.
struct FixedLoader {
  std::vector<Ids> inputs, labels;
  size_t position = 0;
  int64_t size() const { return static_cast<int64_t>(inputs.size()); }
  void begin_epoch() { position = 0; }
  bool next(Ids& x, Ids& y) {
    if (position == inputs.size()) return false;
    x = inputs[position];
    y = labels[position++];
    return true;
  }
};

FixedLoader loader() {
  return {{Ids::from_rows({{6, 49, 0, 17}, {41, 8, 8, 30}}), Ids::from_rows({{1, 2, 3, 4}})},
          {Ids::from_row({0, 1}), Ids::from_row({1})}};
}

}  // namespace

TEST_CASE("classifier: loss and accuracy loaders, train_classifier_simple's lists",
          "[classifier][train]") {
  const nn::GPTConfig cfg{50, 8, 8, 2, 2, 0.0, true};
  manual_seed(123);
  nn::GPTModel model(cfg);
  model.requires_grad_(false);
  model.replace_module("out_head", nn::Linear(cfg.emb_dim, 2));
  FixedLoader train = loader(), train_eval = loader(), val = loader();

  // calc_loss_loader is the mean of the batches' losses; accuracy counts argmax == label.
  double expected = 0.0, first = 0.0;
  int64_t correct = 0;
  {
    Tape tape;
    TapeScope scope(tape);
    for (size_t i = 0; i < train.inputs.size(); ++i) {
      const double loss =
          classifier::calc_loss_batch(train.inputs[i], train.labels[i], model).item();
      if (i == 0) first = loss;
      expected += loss;
      correct += classifier::count_correct(train.inputs[i], train.labels[i], model);
    }
  }
  CHECK(classifier::calc_loss_loader(train, model) == Approx(expected / 2).epsilon(1e-12));
  CHECK(classifier::calc_accuracy_loader(train, model) == static_cast<double>(correct) / 3.0);
  CHECK(!model.training());  // the book's calc_accuracy_loader leaves eval mode on
  CHECK(classifier::calc_loss_loader(train, model, 1) == first);  // num_batches = 1
  FixedLoader empty;
  CHECK(std::isnan(classifier::calc_loss_loader(empty, model)));

  AdamW optimizer(model.parameters(), {.lr = 5e-5, .weight_decay = 0.1});
  const classifier::History history = classifier::train_classifier_simple(
      model, train, train_eval, val, optimizer, {.num_epochs = 2, .eval_freq = 1, .eval_iter = 1});
  CHECK(history.examples_seen == 6);        // 2 epochs x (2 + 1) examples
  CHECK(history.train_losses.size() == 4);  // every step
  CHECK(history.val_losses.size() == 4);
  CHECK(history.train_accs.size() == 2);  // every epoch
  for (double a : history.val_accs) CHECK((a >= 0.0 && a <= 1.0));
  for (double l : history.train_losses) CHECK(std::isfinite(l));
  CHECK(history.train_losses.back() < history.train_losses.front());
  CHECK_THROWS_WITH(classifier::train_classifier_simple(model, train, train_eval, val, optimizer,
                                                        {.eval_freq = 0}),
                    Catch::Contains("eval_freq must be >= 1"));
  CHECK_THROWS_WITH(classifier::calc_loss_batch(train.inputs[0], Ids::from_row({0}), model),
                    Catch::Contains("one class per sequence"));
}
