// Classification fine-tuning, as chapter 6 of *Build a Large Language Model (From Scratch)* does
// it (ch06/01_main-chapter-code/gpt_class_finetune.py), or with LoRA as appendix E does: texts
// padded with <|endoftext|> to the longest training text, the output head replaced by a
// Linear(emb_dim, classes) after torch.manual_seed(123), every weight frozen but the last
// transformer block, the final norm and the new head (or, with --lora-rank, every Linear wrapped
// in a LoRA adapter and only the adapters trained), AdamW 5e-5 with weight decay 0.1, the loss of
// the last token's logits, losses every --eval-freq steps and accuracies after every epoch.
//
// The model: a train_gpt checkpoint (--checkpoint), Hugging Face GPT-2 weights (--gpt2
// model.safetensors, the book's start), or a fresh model of the given size; or, with --model, the
// book's Qwen3 or Llama 3.2 (the book's Qwen3 README: a drop-in for chapter 6's code) from a
// Hugging Face checkpoint (--weights DIR, its tokenizer), or a small fresh one (qwen3-tiny,
// llama3-tiny), with the same recipe: out_head replaced by Linear(emb_dim, classes), the last
// block and the final norm trained, or LoRA on every Linear.
// The data: a tab-separated `label<TAB>text` file such as the UCI SMS Spam Collection (--data,
// with --classes ham,spam), balanced and split 70/10/20 as the book does (pandas' draws with
// random_state 123, reproduced); or by default the Testament task: King James verses (Debian's
// bible-kjv, via tools/kjv_text.sh) labelled old or new, --per-class of each (747, the book's
// count of spam messages), balanced and split the same way.
//
// Writes into --out DIR: train.tsv, validation.tsv, test.tsv (the split, as the book writes its
// CSVs), loss.png and accuracy.png (the book's figures, when gnuplot is there),
// metrics.csv, checkpoint.safetensors after every epoch (weights, AdamW state, generators),
// written atomically (--resume continues from the last finished epoch), and with LoRA
// lora.safetensors (the adapters alone, appendix E's small file).
// --print-counts prints the book's parameter counts (GPT_CONFIG_124M with qkv_bias and a 2-class
// head: all, chapter 6's trainable, LoRA's trainable) and exits.
// Dimension names: B batch, T tokens (the longest training text), C emb_dim, K classes.
#include <CLI/CLI.hpp>
#include <cinttypes>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <tapegrad/cli/cli.h>
#include <tapegrad/nn/lora.h>
#include <tapegrad/tapegrad.h>
#include <tapegrad/train/classifier.h>
#include "finetune_common.h"

using namespace tapegrad;
namespace ft = tapegrad::finetune;
namespace fs = std::filesystem;

namespace {

constexpr const char* kProgram = "tapegrad-finetune-classifier";

struct Options {
  ft::ModelOptions model;
  ft::LlmOptions llm;  // --model: Qwen3 or Llama 3.2 instead of GPT
  ft::RunOptions run;
  bool print_counts = false;
  std::string data;  // empty: the KJV Testament task
  std::string classes = "ham,spam";
  std::string kjv = default_kjv_path();
  int64_t per_class = 747;
  std::optional<int64_t> max_length;
  std::string out;
  ft::FitOptions fit{.epochs = 5, .eval_freq = 50};  // the book's chapter 6
};

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string part; std::getline(in, part, ',');) out.push_back(part);
  return out;
}

// The book's counts: GPT_CONFIG_124M with qkv_bias, the head replaced by Linear(768, 2); then
// chapter 6's recipe; then, all frozen again, LoRA on every Linear (rank 16, alpha 16 unless
// --lora-rank / --lora-alpha say otherwise). The weights are random: only the counts matter.
int print_counts(const Options& o) {
  nn::GPTConfig cfg = nn::GPT_CONFIG_124M;
  cfg.qkv_bias = true;
  cfg.drop_rate = 0.0;
  manual_seed(o.model.seed);
  nn::GPTModel model(cfg);
  model.requires_grad_(false);
  model.replace_module("out_head", nn::Linear(cfg.emb_dim, 2));
  const int64_t total = model.num_parameters();
  model.trf_blocks[model.trf_blocks.size() - 1].requires_grad_(true);
  model.final_norm.requires_grad_(true);
  const int64_t recipe = model.num_trainable_parameters();
  ft::RunOptions lora = o.run;
  if (lora.lora_rank == 0) lora.lora_rank = 16;
  ft::apply_lora(model, lora);
  std::printf("GPT_CONFIG_124M, qkv_bias, a 2-class head\n");
  std::printf("Total parameters: %" PRId64 "\n", total);
  std::printf("Trainable parameters, the last block, the final norm and the head: %" PRId64 "\n",
              recipe);
  std::printf("Trainable parameters, LoRA rank %" PRId64 ", alpha %g: %" PRId64 " (of %" PRId64
              " with the adapters)\n",
              lora.lora_rank, lora.lora_alpha, model.num_trainable_parameters(),
              model.num_parameters());
  return 0;
}

// Accuracy and loss on every batch of the three sets.
template <class Model>
void report(Model& model, ClassificationDataLoader& train, ClassificationDataLoader& val,
            ClassificationDataLoader& test, const char* when) {
  const double a[3] = {classifier::calc_accuracy_loader(train, model),
                       classifier::calc_accuracy_loader(val, model),
                       classifier::calc_accuracy_loader(test, model)};
  const double l[3] = {classifier::calc_loss_loader(train, model),
                       classifier::calc_loss_loader(val, model),
                       classifier::calc_loss_loader(test, model)};
  std::printf("Accuracy %s fine-tuning: training %.2f%%, validation %.2f%%, test %.2f%%\n", when,
              a[0] * 100, a[1] * 100, a[2] * 100);
  std::printf("Loss %s fine-tuning: training %.4f, validation %.4f, test %.4f\n", when, l[0], l[1],
              l[2]);
  std::fflush(stdout);
}

// The run on `model` (nn::GPTModel, or with --model nn::Qwen3Model / nn::Llama3Model: the book's
// Qwen3 README calls Qwen3Model a drop-in for chapter 6's code, and its recipe is the same).
template <class Model>
int run_model(const Options& o, Model& model, const Tokenizer& tokenizer,
              const std::string& origin) {
  const auto cfg = model.config();

  // --- data: balanced, split 70/10/20, written out as the book writes train/validation/test.csv
  std::vector<std::string> classes;
  std::vector<LabeledText> balanced;
  std::string data_origin;
  if (!o.data.empty()) {
    classes = split_commas(o.classes);
    if (classes.size() < 2)
      throw Error(std::string(kProgram) + ": --classes needs two or more names");
    balanced = create_balanced_dataset(read_labeled_tsv(o.data, classes),
                                       static_cast<int64_t>(classes.size()));
    data_origin = o.data;
  } else {
    classes = testament_classes();
    balanced = kjv_testament_dataset(apps::read_text(kProgram, "--kjv", o.kjv), o.per_class);
    data_origin = "the KJV Testament task (" + o.kjv + ")";
  }
  const LabeledSplit split = random_split(balanced, 0.7, 0.1);
  cli::create_directories("--out", o.out);
  apps::write_file(kProgram, o.out + "/train.tsv", labeled_tsv(split.train, classes));
  apps::write_file(kProgram, o.out + "/validation.tsv", labeled_tsv(split.validation, classes));
  apps::write_file(kProgram, o.out + "/test.tsv", labeled_tsv(split.test, classes));

  const int64_t pad = ft::pad_id(tokenizer);
  std::optional<int64_t> max_length = o.max_length;
  SpamDataset train_ds(split.train, tokenizer, max_length, pad);
  if (train_ds.max_length() > cfg.context_length) {  // the book asserts; cut to the context here
    std::printf("note: the longest training text has %" PRId64
                " tokens, more than the context length %" PRId64 "; texts are cut to %" PRId64
                " tokens\n",
                train_ds.max_length(), cfg.context_length, cfg.context_length);
    train_ds = SpamDataset(split.train, tokenizer, cfg.context_length, pad);
  }
  const SpamDataset val_ds(split.validation, tokenizer, train_ds.max_length(), pad);
  const SpamDataset test_ds(split.test, tokenizer, train_ds.max_length(), pad);
  Generator data_generator(o.model.seed);  // the shuffling: torch.Generator().manual_seed(seed)
  ClassificationDataLoader train_loader(train_ds, o.fit.batch_size, true, true, &data_generator);
  ClassificationDataLoader train_eval_loader(train_ds, o.fit.batch_size, true, true,
                                             &data_generator);
  ClassificationDataLoader val_loader(val_ds, o.fit.batch_size, false, false);
  ClassificationDataLoader test_loader(test_ds, o.fit.batch_size, false, false);
  if (train_loader.size() == 0) {
    throw Error(std::string(kProgram) + ": " + std::to_string(train_ds.size()) +
                " training texts, fewer than one batch (--batch-size)");
  }

  // --- the model: a K-class head, then the book's frozen recipe or appendix E's LoRA
  const auto K = static_cast<int64_t>(classes.size());
  model.requires_grad_(false);
  manual_seed(o.model.seed);
  model.replace_module("out_head", nn::Linear(cfg.emb_dim, K));  // [K, C] with bias
  std::string trained = ft::apply_lora(model, o.run);
  if (trained.empty()) {
    trained = "the last block, the final norm and the head";
    model.trf_blocks[model.trf_blocks.size() - 1].requires_grad_(true);
    model.final_norm.requires_grad_(true);
    model.out_head.requires_grad_(true);
  }
  std::printf(
      "%s: %s, tokenizer %s; data %s: %zu training, %zu validation, %zu test texts of %" PRId64
      " tokens, classes",
      kProgram, origin.c_str(), tokenizer.name().c_str(), data_origin.c_str(), split.train.size(),
      split.validation.size(), split.test.size(), train_ds.max_length());
  for (const std::string& c : classes) std::printf(" %s", c.c_str());
  std::printf("\nTotal parameters: %" PRId64 "\nTrainable parameters: %" PRId64 " (%s)\n",
              model.num_parameters(), model.num_trainable_parameters(), trained.c_str());

  AdamW optimizer(model.trainable_parameters(),
                  AdamWOptions{.lr = o.fit.lr, .weight_decay = o.fit.weight_decay});
  const NamedParameters params = model.named_parameters();
  const std::string ckpt = o.out + "/checkpoint.safetensors";
  std::ostringstream cs;
  if (!o.llm.model.empty()) cs << "model=" << o.llm.model << " ";
  cs << "tokenizer=" << tokenizer.name() << " emb_dim=" << cfg.emb_dim
     << " n_layers=" << cfg.n_layers << " classes=" << o.classes << " texts=" << balanced.size()
     << " max_length=" << train_ds.max_length() << " batch_size=" << o.fit.batch_size
     << " lr=" << o.fit.lr << " weight_decay=" << o.fit.weight_decay << ft::run_config(o.run)
     << " seed=" << o.model.seed;
  const std::string config = cs.str();
  CheckpointExtras extras;
  extras.optimizer = &optimizer;
  extras.generators = {{"default", &default_generator()}, {"data", &data_generator}};
  int64_t epochs_done = 0;
  std::string metrics = "epoch,step,train_loss,val_loss,train_acc,val_acc\n";
  if (o.fit.resume) {
    ft::resume_from(ckpt, "finetune_classifier.config", config, params, extras, kProgram);
    epochs_done = std::stoll(extras.metadata.at("finetune_classifier.epochs_done"));
    metrics = extras.metadata.at("finetune_classifier.metrics");
    std::printf("resumed %s after epoch %" PRId64 "\n", ckpt.c_str(), epochs_done);
  }

  // The book prints accuracies over 10 batches and losses over 5 before training; here every
  // batch of each set is used (the training set's last partial batch is dropped, as the book's
  // drop_last), before and after, so the two lines compare the same texts.
  report(model, train_eval_loader, val_loader, test_loader, o.fit.resume ? "resumed" : "before");

  classifier::Options options;
  options.num_epochs = o.fit.epochs - epochs_done;
  options.eval_freq = o.fit.eval_freq;
  options.eval_iter = o.fit.eval_iter;
  std::vector<double> train_losses, val_losses, train_accs, val_accs;
  int64_t last_step = 0;
  classifier::Callbacks callbacks;
  callbacks.on_eval = [&](int64_t epoch, int64_t step, const classifier::EvalLosses& l) {
    std::printf("Ep %" PRId64 " (Step %06" PRId64 "): Train loss %.3f, Val loss %.3f\n",
                epochs_done + epoch + 1, step, l.train_loss, l.val_loss);
    std::fflush(stdout);
    char row[160];
    std::snprintf(row, sizeof row, "%" PRId64 ",%" PRId64 ",%.17g,%.17g,,\n",
                  epochs_done + epoch + 1, step, l.train_loss, l.val_loss);
    metrics += row;
    last_step = step;
  };
  callbacks.on_epoch = [&](int64_t epoch, double train_acc, double val_acc) {
    std::printf("Training accuracy: %.2f%% | Validation accuracy: %.2f%%\n", train_acc * 100,
                val_acc * 100);
    char row[160];
    std::snprintf(row, sizeof row, "%" PRId64 ",%" PRId64 ",,,%.17g,%.17g\n",
                  epochs_done + epoch + 1, last_step, train_acc, val_acc);
    metrics += row;
    CheckpointExtras e = extras;
    e.metadata = {{"finetune_classifier.config", config},
                  {"finetune_classifier.epochs_done", std::to_string(epochs_done + epoch + 1)},
                  {"finetune_classifier.metrics", metrics}};
    save_checkpoint(ckpt, params, e);
  };
  const auto t0 = std::chrono::steady_clock::now();
  const classifier::History history = classifier::train_classifier_simple(
      model, train_loader, train_eval_loader, val_loader, optimizer, options, callbacks);
  std::printf("Training completed in %.2f minutes.\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / 60.0);
  apps::write_file(kProgram, o.out + "/metrics.csv", metrics);

  report(model, train_eval_loader, val_loader, test_loader, "after");
  if (o.run.lora_rank > 0) {
    nn::save_lora(model, o.out + "/lora.safetensors");
    std::printf("LoRA adapters saved as %s\n", (o.out + "/lora.safetensors").c_str());
  }

  if (o.fit.plot && !history.train_losses.empty()) {  // the book's plot_values, twice
    const auto n_epochs = static_cast<double>(o.fit.epochs - epochs_done);
    const auto seen = static_cast<double>(history.examples_seen);
    apps::try_plot(o.out + "/loss.png", kProgram, [&] {
      plot_values(o.out + "/loss.png", apps::linspace(0, n_epochs, history.train_losses.size()),
                  apps::linspace(0, seen, history.train_losses.size()), history.train_losses,
                  history.val_losses, "loss");
    });
    apps::try_plot(o.out + "/accuracy.png", kProgram, [&] {
      plot_values(o.out + "/accuracy.png", apps::linspace(0, n_epochs, history.train_accs.size()),
                  apps::linspace(0, seen, history.train_accs.size()), history.train_accs,
                  history.val_accs, "accuracy");
    });
  }
  std::printf("Model saved as %s\n", ckpt.c_str());
  return 0;
}

int run(const Options& o) {
  ft::apply_run_options(o.run);
  return ft::with_model(o.model, o.llm, kProgram,
                        [&](auto& model, const Tokenizer& tokenizer, const std::string& origin) {
                          return run_model(o, model, tokenizer, origin);
                        });
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{
      "Classification fine-tuning (the book's chapter 6, or appendix E's LoRA) from a "
      "train_gpt checkpoint, GPT-2 weights or a fresh model; by default on which "
      "Testament a King James verse comes from.",
      kProgram};
  ft::add_model_options(app, o.model);
  ft::add_llm_options(app, o.llm);
  ft::add_run_options(app, o.run);
  app.add_flag("--print-counts", o.print_counts,
               "print the book's parameter counts (GPT_CONFIG_124M, qkv_bias, a 2-class head; "
               "LoRA at --lora-rank, 16 by default) and exit");
  app.add_option("--data", o.data, "a tab-separated label<TAB>text file (default: the KJV task)")
      ->check(CLI::ExistingFile);
  app.add_option("--classes", o.classes, "--data's class names, comma-separated, in label order");
  app.add_option("--kjv", o.kjv, "the King James text for the default task");
  app.add_option("--per-class", o.per_class, "verses of each Testament in the default task")
      ->check(cli::positive());
  app.add_option("--max-length", o.max_length, "cut texts to N tokens (default: the longest)")
      ->check(cli::positive());
  auto* out = app.add_option("--out", o.out, "output folder (created when missing)");
  ft::add_fit_options(app, o.fit, "texts", "evaluation and accuracy", "loss.png and accuracy.png");
  if (const auto code = cli::parse(app, argc, argv)) return *code;
  if (!o.print_counts && out->count() == 0) {
    std::cerr << kProgram << ": --out is required\n(" << kProgram << " --help lists the options)\n";
    return cli::kUsageError;
  }
  return cli::run(kProgram, [&] { return o.print_counts ? print_counts(o) : run(o); });
}
