// Instruction fine-tuning, as chapter 7 of *Build a Large Language Model (From Scratch)* does it
// (ch07/01_main-chapter-code/gpt_instruction_finetuning.py): entries in the Alpaca prompt format
// (format_input), padded batches whose padding after the first <|endoftext|> is ignored by the loss
// (custom_collate_fn, cross_entropy's ignore_index -100), AdamW 5e-5 with weight decay 0.1, the
// training and validation loss every --eval-freq steps, then greedy responses to the test
// entries, stopped at <|endoftext|> and cut out of the generated text as the book does.
//
// The model: a train_gpt checkpoint (--checkpoint), Hugging Face GPT-2 weights (--gpt2
// model.safetensors, as the book starts from GPT-2), or a fresh model of the given size; or, with
// --model, the book's Qwen3 or Llama 3.2 (its Qwen3 README: a drop-in for chapter 7's code) from a
// Hugging Face checkpoint (--weights DIR) with its own tokenizer, whose <|endoftext|> (Qwen3) or
// <|end_of_text|> (Llama 3) ends each entry and pads the batches, or a small fresh one
// (qwen3-tiny, llama3-tiny). LoRA (--lora-rank) wraps every Linear of any of them.
// The data: the book's instruction-data.json layout (--data), or by default a demonstration set
// built from the King James Bible (Debian's bible-kjv, via tools/kjv_text.sh): --count entries of
// three tasks (kjv_instruction_set in text/instruction.h: name a verse's book, complete a verse,
// give its chapter and verse), split 85/10/5 as the book splits its 1100 entries.
//
// Writes into --out DIR: instruction-data.json (the entries used), loss.csv and loss.png (the
// book's loss figure, when gnuplot is there), instruction-data-with-response.json (the test
// entries with "model_response", as the book writes them) and checkpoint.safetensors (weights,
// AdamW state, generators, data position), written atomically; --resume continues from it.
// Dimension names: B batch, T tokens per batch (the longest entry + 1, at most
// --allowed-max-length), C emb_dim.
#include <tapegrad/cli/cli.h>
#include <CLI/CLI.hpp>
#include <cinttypes>
#include <cstdio>
#include <iostream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <tapegrad/tapegrad.h>
#include "finetune_common.h"

using namespace tapegrad;
namespace ft = tapegrad::finetune;
namespace fs = std::filesystem;

namespace {

constexpr const char* kProgram = "tapegrad-finetune-instruct";

struct Options {
  ft::ModelOptions model;
  ft::LlmOptions llm;  // --model: Qwen3 or Llama 3.2 instead of GPT
  ft::RunOptions run;
  std::string data;  // empty: the KJV demonstration set
  std::string kjv = default_kjv_path();
  int64_t count = 1100;  // the book's set has 1100 entries
  std::string out;
  ft::FitOptions fit{.epochs = 2, .eval_freq = 5};  // the book's chapter 7
  int64_t allowed_max_length = 1024;
  int64_t max_new_tokens = 256;
  int64_t max_test = 0;  // 0: every test entry gets a response
  int64_t checkpoint_every = 0;
};

template <class Config>
std::string config_string(const Options& o, const Config& cfg, const Tokenizer& tok,
                          size_t entries) {
  std::ostringstream s;
  if (!o.llm.model.empty()) s << "model=" << o.llm.model << " ";
  s << "tokenizer=" << tok.name() << " vocab_size=" << cfg.vocab_size
    << " context_length=" << cfg.context_length << " emb_dim=" << cfg.emb_dim
    << " n_heads=" << cfg.n_heads << " n_layers=" << cfg.n_layers;
  if constexpr (requires { cfg.drop_rate; }) {  // GPT's; Qwen3 and Llama 3.2 have no dropout
    s << " drop_rate=" << cfg.drop_rate << " qkv_bias=" << cfg.qkv_bias;
  }
  s << " batch_size=" << o.fit.batch_size << " lr=" << o.fit.lr
    << " weight_decay=" << o.fit.weight_decay << " seed=" << o.model.seed << " entries=" << entries
    << " allowed_max_length=" << o.allowed_max_length << ft::run_config(o.run);
  return s.str();
}

// The run on `model`: nn::GPTModel, or with --model nn::Qwen3Model / nn::Llama3Model.
template <class Model>
int run_model(const Options& o, Model& model, const Tokenizer& tokenizer,
              const std::string& origin) {
  const auto cfg = model.config();
  const int64_t pad = ft::pad_id(tokenizer);

  std::vector<InstructionEntry> data;
  std::string data_origin;
  if (!o.data.empty()) {
    data = read_instruction_json(o.data);
    data_origin = o.data;
  } else {
    data = kjv_instruction_set(apps::read_text(kProgram, "--kjv", o.kjv), o.count);
    data_origin =
        "the KJV demonstration set (" + std::to_string(o.count) + " entries from " + o.kjv + ")";
  }
  const InstructionSplit split = split_instruction_data(data);
  if (split.train.size() < static_cast<size_t>(o.fit.batch_size) || split.validation.empty() ||
      split.test.empty()) {
    throw Error(std::string(kProgram) + ": " + std::to_string(data.size()) + " entries give " +
                std::to_string(split.train.size()) + " training, " +
                std::to_string(split.validation.size()) + " validation and " +
                std::to_string(split.test.size()) +
                " test entries: at least one batch (--batch-size) of training entries and one "
                "of each other is needed");
  }
  cli::create_directories("--out", o.out);
  apps::write_file(kProgram, o.out + "/instruction-data.json", instruction_json(data));

  const std::optional<int64_t> allowed = std::min(o.allowed_max_length, cfg.context_length);
  const InstructionDataset train_ds(split.train, tokenizer), val_ds(split.validation, tokenizer);
  Generator data_generator(o.model.seed);  // the shuffling: torch.Generator().manual_seed(seed)
  InstructionDataLoader train_loader(train_ds, o.fit.batch_size, true, true, &data_generator,
                                     allowed, pad);
  InstructionDataLoader train_eval_loader(train_ds, o.fit.batch_size, true, true, &data_generator,
                                          allowed, pad);
  InstructionDataLoader val_loader(val_ds, o.fit.batch_size, false, false, &data_generator, allowed,
                                   pad);
  // Appendix E's LoRA when --lora-rank is set: only the adapters train.
  std::string trained = ft::apply_lora(model, o.run);
  if (trained.empty()) trained = "every weight";
  AdamW optimizer(model.trainable_parameters(),
                  AdamWOptions{.lr = o.fit.lr, .weight_decay = o.fit.weight_decay});
  const std::string config = config_string(o, cfg, tokenizer, data.size());
  const std::string ckpt = o.out + "/checkpoint.safetensors";
  CheckpointExtras extras;
  extras.optimizer = &optimizer;
  extras.generators = {{"default", &default_generator()}, {"data", &data_generator}};
  const NamedParameters params = model.named_parameters();

  std::printf("%s: %s, %" PRId64 " parameters (%" PRId64
              " trained: %s), tokenizer %s; data %s: %zu training, %zu validation, "
              "%zu test entries; batch %" PRId64 ", lr %g, %" PRId64 " epoch(s)\n",
              kProgram, origin.c_str(), model.num_parameters(), model.num_trainable_parameters(),
              trained.c_str(), tokenizer.name().c_str(), data_origin.c_str(), split.train.size(),
              split.validation.size(), split.test.size(), o.fit.batch_size, o.fit.lr, o.fit.epochs);

  TrainState start;
  std::string csv = apps::kLossCsvHeader;
  if (o.fit.resume) {
    ft::resume_from(ckpt, "finetune_instruct.config", config, params, extras, kProgram);
    auto& m = extras.metadata;
    start = {std::stoll(m.at("finetune_instruct.step")),
             std::stoll(m.at("finetune_instruct.epoch")),
             std::stoll(m.at("finetune_instruct.tokens_seen"))};
    train_loader.sampler().restore_epoch(apps::split_ints(m.at("finetune_instruct.data.order")),
                                         std::stoll(m.at("finetune_instruct.data.position")),
                                         m.at("finetune_instruct.data.exhausted") == "1");
    csv = apps::csv_up_to(o.out + "/loss.csv", start.step);
    std::printf("resumed %s at step %" PRId64 "\n", ckpt.c_str(), start.step);
  }
  auto save = [&](const TrainState& state) {
    CheckpointExtras e = extras;
    const BatchSampler& s = train_loader.sampler();
    e.metadata = {{"finetune_instruct.config", config},
                  {"finetune_instruct.step", std::to_string(state.step)},
                  {"finetune_instruct.epoch", std::to_string(state.epoch)},
                  {"finetune_instruct.tokens_seen", std::to_string(state.tokens_seen)},
                  {"finetune_instruct.data.order", apps::join(s.order())},
                  {"finetune_instruct.data.position", std::to_string(s.position())},
                  {"finetune_instruct.data.exhausted", s.sampler_exhausted() ? "1" : "0"}};
    save_checkpoint(ckpt, params, e);
  };

  // The book's "Initial losses" (calc_loss_loader over 5 batches of each loader).
  const EvalLosses before = evaluate_model(model, train_eval_loader, val_loader, o.fit.eval_iter);
  std::printf("%s losses\n   Training loss: %.4f\n   Validation loss: %.4f\n",
              o.fit.resume ? "Resumed" : "Initial", before.train_loss, before.val_loss);

  const int64_t steps_per_epoch = train_loader.size();
  const int64_t total_steps = steps_per_epoch * o.fit.epochs;
  TrainOptions options;
  options.num_epochs = o.fit.epochs;
  options.eval_freq = o.fit.eval_freq;
  options.eval_iter = o.fit.eval_iter;
  options.start_context = format_input(split.validation[0]);
  options.sample_tokens = 35;
  TrainCallbacks callbacks;
  callbacks.on_step = [&](const TrainProgress& p) {
    if (isatty(STDOUT_FILENO)) {
      std::printf("\rstep %" PRId64 "/%" PRId64 "  loss %.3f", p.step, total_steps, p.loss);
      std::fflush(stdout);
    }
    if (o.checkpoint_every > 0 && p.step % o.checkpoint_every == 0 && p.step < total_steps) {
      apps::write_file(kProgram, o.out + "/loss.csv", csv);
      save({p.step, p.epoch, p.tokens_seen});
    }
  };
  callbacks.on_eval = [&](const TrainProgress& p, const EvalLosses& l) {
    if (isatty(STDOUT_FILENO)) std::printf("\r%60s\r", "");
    std::printf("Ep %" PRId64 " (Step %06" PRId64 "): Train loss %.3f, Val loss %.3f\n",
                p.epoch + 1, p.step - 1, l.train_loss, l.val_loss);
    char row[160];
    std::snprintf(row, sizeof row, "%" PRId64 ",%.17g,%.17g,%" PRId64 "\n", p.step, l.train_loss,
                  l.val_loss, p.tokens_seen);
    csv += row;
  };
  callbacks.on_sample = [&](const TrainProgress&, const std::string& sample) {
    std::string flat = sample;
    for (char& c : flat)
      if (c == '\n') c = ' ';
    std::printf("%s\n", flat.c_str());
  };
  const auto t0 = std::chrono::steady_clock::now();
  const TrainState end =
      train_model_simple(model, train_loader, train_eval_loader, val_loader, optimizer, nullptr,
                         tokenizer, options, callbacks, start);
  const double minutes =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / 60.0;
  std::printf("Training completed in %.2f minutes.\n", minutes);
  apps::write_file(kProgram, o.out + "/loss.csv", csv);
  save(end);
  if (o.run.lora_rank > 0) {  // appendix E's small file: the adapters alone
    nn::save_lora(model, o.out + "/lora.safetensors");
    std::printf("LoRA adapters saved as %s\n", (o.out + "/lora.safetensors").c_str());
  }

  const EvalLosses after = evaluate_model(model, train_eval_loader, val_loader, o.fit.eval_iter);
  std::printf("Final losses\n   Training loss: %.4f\n   Validation loss: %.4f\n", after.train_loss,
              after.val_loss);

  if (o.fit.plot) {  // the book's plot_losses: loss against epochs, tokens seen on top
    const apps::LossRows rows = apps::loss_rows(csv);
    if (!rows.train.empty()) {
      const std::vector<double> epochs =
          apps::linspace(0, static_cast<double>(o.fit.epochs), rows.train.size());
      apps::try_plot(o.out + "/loss.png", kProgram, [&] {
        plot_values(o.out + "/loss.png", epochs, rows.tokens, rows.train, rows.val, "loss",
                    "Tokens seen");
      });
    }
  }

  // The book's response loop: greedy, at most max_new_tokens, stopping at <|endoftext|>.
  std::vector<InstructionEntry> test = split.test;
  if (o.max_test > 0 && static_cast<size_t>(o.max_test) < test.size())
    test.resize(static_cast<size_t>(o.max_test));
  std::vector<std::string> responses;
  model.eval();
  for (size_t i = 0; i < test.size(); ++i) {
    const std::string input_text = format_input(test[i]);
    const std::vector<int64_t> ids = tokenizer.encode(input_text);
    // The prompt's last context_length tokens, as generate's idx[:, -context_size:] sees them.
    const Ids prompt(Shape{1, static_cast<int64_t>(ids.size())}, ids);  // [1, T]
    nn::GenerateOptions greedy;
    greedy.max_new_tokens = o.max_new_tokens;
    greedy.context_size = cfg.context_length;
    greedy.eos_id = pad;
    const Ids generated = nn::generate(model, prompt, greedy);  // [1, T + new]
    responses.push_back(extract_response(tokenizer.decode(generated.values()), input_text));
    if (isatty(STDOUT_FILENO)) {
      std::printf("\rresponses %zu/%zu", i + 1, test.size());
      std::fflush(stdout);
    }
  }
  if (isatty(STDOUT_FILENO)) std::printf("\n");
  const std::string responses_path = o.out + "/instruction-data-with-response.json";
  apps::write_file(kProgram, responses_path, instruction_json(test, responses));
  size_t exact = 0;
  for (size_t i = 0; i < test.size(); ++i) exact += responses[i] == test[i].output;
  std::printf("Responses: %zu of %zu test entries answered exactly as their output; saved as %s\n",
              exact, test.size(), responses_path.c_str());
  for (size_t i = 0; i < std::min<size_t>(3, test.size()); ++i) {
    std::printf("--- %s\n    input: %s\n    correct: %s\n    model: %s\n",
                test[i].instruction.c_str(), test[i].input.c_str(), test[i].output.c_str(),
                responses[i].c_str());
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
      "Instruction fine-tuning (the book's chapter 7) from a train_gpt checkpoint, GPT-2 "
      "weights or a fresh model, or (--model) Qwen3 or Llama 3.2; by default on a "
      "demonstration set built from the King James Bible.",
      kProgram};
  ft::add_model_options(app, o.model);
  ft::add_llm_options(app, o.llm);
  ft::add_run_options(app, o.run);
  app.add_option("--data", o.data,
                 "instruction data in the book's JSON layout (default: the KJV "
                 "demonstration set)")
      ->check(CLI::ExistingFile);
  app.add_option("--kjv", o.kjv, "the King James text for the default data");
  app.add_option("--count", o.count, "entries of the KJV demonstration set")
      ->check(cli::positive());
  app.add_option("--out", o.out, "output folder (created when missing)")->required();
  ft::add_fit_options(app, o.fit, "entries", "evaluation", "loss.png");
  app.add_option("--allowed-max-length", o.allowed_max_length,
                 "tokens per batch row at most (and at most the context length)")
      ->check(cli::positive());
  app.add_option("--max-new-tokens", o.max_new_tokens, "tokens per generated response")
      ->check(cli::positive());
  app.add_option("--max-test", o.max_test, "respond to the first N test entries only (0: all)")
      ->check(cli::non_negative());
  app.add_option("--checkpoint-every", o.checkpoint_every,
                 "also save every N steps (0: at the end)")
      ->check(cli::non_negative());
  if (const auto code = cli::parse(app, argc, argv)) return *code;
  return cli::run(kProgram, [&] { return run(o); });
}
