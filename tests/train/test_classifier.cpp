// Tests for train/classifier.h: the chapter-6 loops over a small in-memory loader, with GPTModel
// and with Qwen3Model and Llama3Model as drop-ins (last block or LoRA trained).
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

namespace test_classifier {

// Chapter 6's recipe on `model` (a Qwen3Model or Llama3Model): the head replaced by
// Linear(emb_dim, 2) after manual_seed(123), then either the last block and the final norm
// trainable, or (lora_rank > 0) LoRA on every Linear; a few epochs of train_classifier_simple.
template <class Model>
classifier::History finetune(Model& model, int64_t emb_dim, int64_t lora_rank) {
  model.requires_grad_(false);
  manual_seed(123);
  model.replace_module("out_head", nn::Linear(emb_dim, 2));
  if (lora_rank > 0) {
    model.requires_grad_(false);
    CHECK(nn::replace_linear_with_lora(model, lora_rank, 8.0) == 2 * 7 + 1);
  } else {
    model.trf_blocks[model.trf_blocks.size() - 1].requires_grad_(true);
    model.final_norm.requires_grad_(true);
  }
  FixedLoader train = loader(), train_eval = loader(), val = loader();
  AdamW optimizer(model.parameters(), {.lr = 1e-3, .weight_decay = 0.1});
  return classifier::train_classifier_simple(model, train, train_eval, val, optimizer,
                                             {.num_epochs = 4, .eval_freq = 3, .eval_iter = 2});
}

int64_t trainable(nn::Module& model) {
  int64_t n = 0;
  for (const Parameter& p : model.parameters()) n += p.requires_grad() ? 1 : 0;
  return n;
}

void check_history(const classifier::History& history) {
  CHECK(history.examples_seen == 12);
  REQUIRE(history.train_losses.size() == 3);  // 2 batches an epoch: steps 0, 3 and 6
  for (double l : history.train_losses) CHECK(std::isfinite(l));
  CHECK(history.train_losses.back() < history.train_losses.front());
}

}  // namespace test_classifier

TEST_CASE("classifier: Qwen3Model and Llama3Model as drop-ins, new head, last block or LoRA",
          "[classifier][train][qwen3][llama3]") {
  using namespace test_classifier;
  const nn::Qwen3Config qwen{50, 8, 16, 4, 2, 24, 4, true, 2, 1000000.0};
  const nn::Llama3Config llama{50, 8, 32, 16, 4, 2, 24, 2, 500000.0, {32.0, 1.0, 4.0, 8192}};
  for (const int64_t rank : {0, 2}) {
    INFO("LoRA rank " << rank);
    manual_seed(123);
    nn::Qwen3Model q(qwen);
    check_history(finetune(q, qwen.emb_dim, rank));
    // LoRA: A and B of each of the 15 Linears; else the last block's 11 (4 projections, q_norm,
    // k_norm, 3 feed-forward layers, 2 norms), the final norm and the head's weight and bias.
    CHECK(trainable(q) == (rank > 0 ? 30 : 14));
    manual_seed(123);
    nn::Llama3Model l(llama);
    check_history(finetune(l, llama.emb_dim, rank));
    CHECK(trainable(l) == (rank > 0 ? 30 : 12));
  }
}
