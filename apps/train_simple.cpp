// Chapter 5 of *Build a Large Language Model (From Scratch)* in one page: pretrain a small GPT
// on a text as the book's gpt_train.py does (ch05/01_main-chapter-code), with the library's
// pieces under the book's names (train/training.h): calc_loss_batch, calc_loss_loader,
// evaluate_model, generate_and_print_sample (generate_sample) and train_model_simple.
//   torch.manual_seed(123); model = GPTModel(cfg)
//   optimizer = AdamW(model.parameters(), lr=0.0004, weight_decay=0.1)
//   a 0.90 split; create_dataloader_v1(batch_size 2, max_length = stride = context_length;
//   training: shuffle, drop_last; validation: neither)
//   train_model_simple(..., num_epochs=10, eval_freq=5, eval_iter=5,
//                      start_context="Every effort moves you")
// The book trains GPT_CONFIG_124M on "The Verdict" (20,479 characters); this program trains a
// tiny GPT (bytes tokenizer, C 64, 2 layers) on the first 20,479 characters of the King James
// Bible (tools/kjv_text.sh) or --data FILE, in seconds. The full trainer is tapegrad-train-gpt.
//
// Usage: tapegrad-train-simple [--data FILE] [--epochs N] ...     (--help lists the options)
// Dimension names: B batch (--batch-size), T tokens (--context-length), C (--emb-dim).
#include <tapegrad/cli/cli.h>
#include <tapegrad/tapegrad.h>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

using namespace tapegrad;

namespace {

constexpr const char* kProgram = "tapegrad-train-simple";  // its name in bin/

struct Settings {
  std::string data = default_kjv_path();
  int64_t max_chars = 20479;  // the length of the book's "The Verdict"; 0: the whole text
  std::string tokenizer = "bytes";
  nn::GPTConfig cfg{0, 64, 64, 4, 2, 0.1, false};  // vocab from the tokenizer, T 64, C 64
  int64_t num_epochs = 10, batch_size = 2, eval_freq = 5, eval_iter = 5, sample_tokens = 50;
  double learning_rate = 0.0004, weight_decay = 0.1;
  uint64_t seed = 123;
  std::string start_context = "Every effort moves you";
};

// The first max_chars characters (code points, as Python slices a str) of text.
std::string first_chars(const std::string& text, int64_t max_chars) {
  size_t end = 0;
  for (int64_t n = 0; end < text.size() && (max_chars == 0 || n < max_chars); ++n) {
    ++end;
    while (end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) ++end;
  }
  return text.substr(0, end);
}

int run(const Settings& s) {
  const auto start = std::chrono::steady_clock::now();
  const std::unique_ptr<Tokenizer> tokenizer = make_tokenizer(s.tokenizer);
  nn::GPTConfig cfg = s.cfg;
  cfg.vocab_size = tokenizer->n_vocab();
  if (cfg.emb_dim % cfg.n_heads != 0) throw Error("--n-heads: must divide --emb-dim");
  const std::string text_data =
      first_chars(read_training_text(s.data, std::string(kProgram) + ": --data"), s.max_chars);

  manual_seed(s.seed);
  nn::GPTModel model(cfg);
  AdamW optimizer(model.parameters(),
                  AdamWOptions{.lr = s.learning_rate, .weight_decay = s.weight_decay});

  const TextSplit split = train_val_split(text_data, 0.90);
  const int64_t T = cfg.context_length;
  auto dataset = [&](std::string_view part, const char* which) {
    try {
      return GPTDataset(part, *tokenizer, T, T);
    } catch (const Error& e) {
      throw Error("--data " + s.data + ": the " + which + " part is too short (--max-chars, " +
                  "--context-length): " + e.what());
    }
  };
  const GPTDataset train_ds = dataset(split.train, "training");
  const GPTDataset val_ds = dataset(split.validation, "validation");
  Generator generator(s.seed);  // the loaders' torch.Generator
  DataLoader train_loader(train_ds, s.batch_size, true, true, &generator);
  DataLoader train_eval_loader(train_ds, s.batch_size, true, true, &generator);  // evaluation's
  DataLoader val_loader(val_ds, s.batch_size, false, false, &generator);
  std::printf("%s: %lld parameters, %zu characters of %s, %lld training batches per epoch\n",
              kProgram, static_cast<long long>(model.num_parameters()), text_data.size(),
              s.data.c_str(), static_cast<long long>(train_loader.size()));

  TrainOptions options;
  options.num_epochs = s.num_epochs;
  options.eval_freq = s.eval_freq;
  options.eval_iter = s.eval_iter;
  options.start_context = s.start_context;
  options.sample_tokens = s.sample_tokens;
  TrainCallbacks print;
  print.on_eval = [](const TrainProgress& p, const EvalLosses& l) {  // the book's global_step
    std::printf("Ep %lld (Step %06lld): Train loss %.3f, Val loss %.3f\n",
                static_cast<long long>(p.epoch + 1), static_cast<long long>(p.step - 1),
                l.train_loss, l.val_loss);
  };
  print.on_sample = [](const TrainProgress&, const std::string& sample) {
    std::string flat = sample;  // generate_and_print_sample prints it on one line
    for (char& c : flat) c = c == '\n' ? ' ' : c;
    std::printf("%s\n", flat.c_str());
  };
  train_model_simple(model, train_loader, train_eval_loader, val_loader, optimizer, nullptr,
                     *tokenizer, options, print);
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  std::printf("Training completed in %.2f minutes.\n", took.count() / 60.0);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  CLI::App app{"Chapter 5's training loop (train_model_simple) on a tiny GPT, in seconds.",
               kProgram};
  app.add_option("--data", s.data, "text to train on (default: the King James Bible)");
  app.add_option("--max-chars", s.max_chars, "train on the first N characters (0: all)")
      ->check(cli::non_negative());
  app.add_option("--tokenizer", s.tokenizer, "bytes, or gpt2 (tools/fetch_gpt2_vocab.sh)")
      ->check(CLI::IsMember({"bytes", "gpt2"}));
  app.add_option("--epochs", s.num_epochs, "num_epochs")->check(cli::positive());
  app.add_option("--context-length", s.cfg.context_length, "T")->check(cli::positive());
  app.add_option("--emb-dim", s.cfg.emb_dim, "C")->check(cli::positive());
  app.add_option("--n-heads", s.cfg.n_heads, "attention heads")->check(cli::positive());
  app.add_option("--n-layers", s.cfg.n_layers, "transformer blocks")->check(cli::positive());
  app.add_option("--drop-rate", s.cfg.drop_rate, "dropout")->check(cli::probability());
  app.add_option("--batch-size", s.batch_size, "B")->check(cli::positive());
  app.add_option("--lr", s.learning_rate, "AdamW's lr")->check(cli::positive_finite());
  app.add_option("--weight-decay", s.weight_decay, "AdamW's weight_decay")
      ->check(cli::non_negative());
  app.add_option("--eval-freq", s.eval_freq, "evaluate every N steps")->check(cli::positive());
  app.add_option("--eval-iter", s.eval_iter, "batches per evaluation")->check(cli::positive());
  app.add_option("--seed", s.seed, "torch.manual_seed");
  app.add_option("--prompt", s.start_context, "start_context of the samples");
  app.add_option("--sample-tokens", s.sample_tokens, "tokens per sample")
      ->check(cli::non_negative());
  if (const std::optional<int> exit_code = cli::parse(app, argc, argv)) return *exit_code;
  return cli::run(kProgram, [&] { return run(s); });
}
