// A tiny GPT trained for 20 steps by the library, replayed against PyTorch's losses (goldens from
// tests/goldens/train/make_train_goldens.py): same init from manual_seed, same batches, same
// dropout stream, every loss and gradient norm within 1e-4 relative. Once as a plain loop of the
// library's pieces, once through train_model_simple (train/training.h), train_gpt's loop.
#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include <tapegrad/graph/ids.h>
#include <tapegrad/graph/random.h>
#include <tapegrad/graph/tape.h>
#include <tapegrad/nn/gpt.h>
#include <tapegrad/ops/ops.h>
#include <tapegrad/optim/adam.h>
#include <tapegrad/optim/clip.h>
#include <tapegrad/text/dataset.h>
#include <tapegrad/text/tokenizer.h>
#include <tapegrad/train/training.h>
#include "tests/compare.h"
#include "tests/goldens.h"

using namespace tapegrad;

namespace {

std::string golden_path(const std::string& file) {
  return std::string(TAPEGRAD_GOLDEN_DIR) + "/train/" + file;
}

std::string read_text() {
  std::ifstream in(golden_path("genesis1.txt"), std::ios::binary);
  REQUIRE(in);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// One run of train_goldens.txt: its configuration and torch's values per step.
struct GoldenRun {
  nn::GPTConfig cfg;
  int64_t batch_size = 0;
  double lr = 0, weight_decay = 0, max_norm = 0;
  int64_t steps = 0;
  double train_ratio = 0;
  int64_t eval_freq = 0, eval_iter = 0;
  uint64_t seed = 0;
  std::vector<double> losses;                          // [steps]
  std::vector<double> grad_norms;                      // [steps]
  std::map<int64_t, std::pair<double, double>> evals;  // step -> (train loss, val loss)
};

GoldenRun golden_run(const std::string& name) {
  const auto& file = testing::golden_file("train/train_goldens.txt");
  const std::vector<double>& c = file[name + ":config"].values;
  REQUIRE(c.size() == 15);
  GoldenRun run;
  const auto integer = [](double v) { return static_cast<int64_t>(v); };
  run.cfg.vocab_size = integer(c[0]);
  run.cfg.context_length = integer(c[1]);
  run.cfg.emb_dim = integer(c[2]);
  run.cfg.n_heads = integer(c[3]);
  run.cfg.n_layers = integer(c[4]);
  run.cfg.drop_rate = c[5];
  run.cfg.qkv_bias = false;
  run.batch_size = integer(c[6]);
  run.lr = c[7];
  run.weight_decay = c[8];
  run.max_norm = c[9];
  run.steps = integer(c[10]);
  run.train_ratio = c[11];
  run.eval_freq = integer(c[12]);
  run.eval_iter = integer(c[13]);
  run.seed = static_cast<uint64_t>(c[14]);
  run.losses = file[name + ":loss"].values;
  run.grad_norms = file[name + ":grad_norm"].values;
  if (file.contains(name + ":eval_step")) {
    const std::vector<int64_t> steps = file[name + ":eval_step"].ints();
    const std::vector<double>& evals = file[name + ":eval"].values;  // [k, 2]
    REQUIRE(evals.size() == 2 * steps.size());
    for (size_t k = 0; k < steps.size(); ++k)
      run.evals[steps[k]] = {evals[2 * k], evals[2 * k + 1]};
  }
  REQUIRE(run.steps == static_cast<int64_t>(run.losses.size()));
  REQUIRE(run.grad_norms.size() == run.losses.size());
  return run;
}

// cross_entropy(logits.flatten(0, 1), targets.flatten()) for one batch, on the current tape.
Tensor batch_loss(const nn::GPTModel& model, const Ids& inputs, const Ids& targets) {
  Tensor logits = model(inputs);  // [B, T, V]
  const int64_t rows = logits.size(0) * logits.size(1);
  return cross_entropy(reshape(logits, {rows, logits.size(2)}), targets.values());  // []
}

void check_within(const std::vector<double>& actual, const std::vector<double>& expected,
                  const char* what) {
  REQUIRE(actual.size() == expected.size());
  testing::MaxError worst;
  for (size_t i = 0; i < actual.size(); ++i) {
    INFO(what << " at step " << i + 1 << ": tapegrad " << actual[i] << ", torch " << expected[i]);
    CHECK(testing::relative_error(actual[i], expected[i]) <= 1e-4);
    worst.add(testing::relative_error(actual[i], expected[i]));
  }
  INFO(what << ": worst relative error " << worst.value);
  CHECK(worst.within(1e-4));
}

}  // namespace

TEST_CASE("train replay: 20 steps of a tiny GPT give torch's losses", "[text][train]") {
  const GoldenRun golden = golden_run("loop");
  const std::string text = read_text();
  const int64_t T = golden.cfg.context_length;
  const GPTDataset dataset(text, ByteTokenizer(), T, T);

  // torch.manual_seed(seed); GPTModel(cfg): the weights, then the loader's and dropout's draws,
  // all from the default generator, as in torch.
  manual_seed(golden.seed);
  nn::GPTModel model(golden.cfg);
  model.train();
  AdamW optimizer(model.parameters(),
                  AdamWOptions{.lr = golden.lr, .weight_decay = golden.weight_decay});
  DataLoader loader(dataset, golden.batch_size, /*shuffle=*/true, /*drop_last=*/true);
  REQUIRE(loader.size() < golden.steps);  // the run crosses an epoch boundary

  Tape tape;
  TapeScope scope(tape);
  Ids inputs, targets;
  std::vector<double> losses, norms;
  while (static_cast<int64_t>(losses.size()) < golden.steps) {
    if (!loader.next(inputs, targets)) continue;  // the epoch ended: the next call begins one
    tape.reset();
    optimizer.zero_grad();
    Tensor loss = batch_loss(model, inputs, targets);  // []
    loss.backward();
    norms.push_back(clip_grad_norm_(optimizer, golden.max_norm));
    optimizer.step();
    losses.push_back(loss.item());
  }
  check_within(losses, golden.losses, "loss");
  check_within(norms, golden.grad_norms, "clip_grad_norm_");
}

TEST_CASE("train replay: train_model_simple gives torch's losses and evaluations",
          "[text][train]") {
  // The book's train_model_simple as train_gpt runs it (train/training.h): a 0.9 split, the
  // loaders sharing one Generator, clipping, evaluate_model every eval_freq steps (its loaders'
  // draws shift the shuffles that follow), a sample after the first epoch, 20 steps.
  const GoldenRun golden = golden_run("book");
  const std::string text = read_text();
  const int64_t T = golden.cfg.context_length;
  const ByteTokenizer tokenizer;
  const TextSplit split = train_val_split(text, golden.train_ratio);
  const GPTDataset train_ds(split.train, tokenizer, T, T);
  const GPTDataset val_ds(split.validation, tokenizer, T, T);

  manual_seed(golden.seed);  // the weights, then dropout
  nn::GPTModel model(golden.cfg);
  model.train();
  Generator data_generator(golden.seed);  // torch.Generator().manual_seed(seed)
  DataLoader train_loader(train_ds, golden.batch_size, true, true, &data_generator);
  DataLoader train_eval_loader(train_ds, golden.batch_size, true, true, &data_generator);
  DataLoader val_loader(val_ds, golden.batch_size, false, false, &data_generator);
  REQUIRE(train_loader.size() < golden.steps);  // the run crosses an epoch boundary
  AdamW optimizer(model.parameters(),
                  AdamWOptions{.lr = golden.lr, .weight_decay = golden.weight_decay});

  TrainOptions options;
  options.num_epochs = (golden.steps + train_loader.size() - 1) / train_loader.size();
  options.max_steps = golden.steps;
  options.eval_freq = golden.eval_freq;
  options.eval_iter = golden.eval_iter;
  options.max_grad_norm = golden.max_norm;
  options.start_context = "And God said";
  options.sample_tokens = 20;
  std::vector<double> losses, norms;
  std::map<int64_t, std::pair<double, double>> evals;
  int samples = 0;
  TrainCallbacks callbacks;
  callbacks.on_step = [&](const TrainProgress& p) {
    CHECK(p.step == static_cast<int64_t>(losses.size()) + 1);
    losses.push_back(p.loss);
    norms.push_back(p.grad_norm);
  };
  callbacks.on_eval = [&](const TrainProgress& p, const EvalLosses& e) {
    evals[p.step] = {e.train_loss, e.val_loss};
  };
  callbacks.on_sample = [&](const TrainProgress&, const std::string& sample) {
    CHECK(sample.rfind("And God said", 0) == 0);
    ++samples;
  };
  const TrainState end = train_model_simple(model, train_loader, train_eval_loader, val_loader,
                                            optimizer, nullptr, tokenizer, options, callbacks);
  CHECK(end.step == golden.steps);
  CHECK(samples >= 1);
  check_within(losses, golden.losses, "loss");
  check_within(norms, golden.grad_norms, "clip_grad_norm_");
  REQUIRE(evals.size() == golden.evals.size());
  std::vector<double> eval_values, golden_values;
  for (const auto& [step, e] : golden.evals) {
    INFO("evaluation after step " << step);
    REQUIRE(evals.count(step) == 1);
    eval_values.insert(eval_values.end(), {evals[step].first, evals[step].second});
    golden_values.insert(golden_values.end(), {e.first, e.second});
  }
  check_within(eval_values, golden_values, "evaluate_model (train, val) pairs");
}
