// Generates text from OpenAI's pretrained GPT-2 weights (a Hugging Face model.safetensors), as
// the book's gpt_generate.py does after load_weights_into_gpt (chapter 5).
//
// Usage: generate_gpt2 --weights model.safetensors [--prompt TEXT | --ids 15496,11,314]
//                      [--max-new-tokens N] [--temperature T] [--top-k K] [--seed S]
//                      [--model NAME] [--n-heads H] [--vocab-dir DIR] [--threads N]
// The configuration (124M, 355M, 774M or 1558M) is read from the file's shapes
// (nn::infer_gpt2_config). Text needs GPT-2's encoder.json and vocab.bpe in --vocab-dir
// (tools/fetch_gpt2_vocab.sh fetches them); --ids gives token ids instead, and the output is then
// decoded when the vocabulary is there, printed as ids when not.
//
// Decoding is the book's generate() (nn::generate) with the KV cache: the logits of the last
// position, cut to the top k when k > 0, divided by the temperature and sampled when T > 0 with
// torch.multinomial's stream from a Generator seeded with --seed (the same seed gives torch's
// ids), else their argmax; it stops at <|endoftext|>. The context is cropped to the model's last
// context_length tokens. Each token is printed as it is produced; the run ends with the
// prefill's and the decode's tokens/s on stderr.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "graph/threads.h"
#include "tapegrad.h"
#include "tools/cli.h"

using namespace tapegrad;

namespace {

// "15496, 11,314" -> {15496, 11, 314}.
std::vector<int64_t> parse_ids(const std::string& text) {
  std::vector<int64_t> ids;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    try {
      size_t used = 0;
      ids.push_back(std::stoll(item, &used));
      if (item.find_first_not_of(" \t", used) != std::string::npos) throw std::invalid_argument("");
    } catch (const std::exception&) {
      throw Error("--ids: \"" + item + "\" is not an integer (give ids as 15496,11,314)");
    }
  }
  if (ids.empty()) throw Error("--ids: no ids given");
  return ids;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Generate text with pretrained GPT-2 weights (Hugging Face model.safetensors)",
               "tapegrad-generate"};
  std::string weights, prompt = "Every effort moves you", ids_text, model_name;
  std::string vocab_dir = default_gpt2_vocab_dir().string();
  int64_t max_new_tokens = 25, top_k = 0, n_heads = 0;
  double temperature = 0.0;
  uint64_t seed = 123;
  int threads = 1;
  app.add_option("--weights", weights, "GPT-2 checkpoint: Hugging Face's model.safetensors")
      ->required();
  auto* prompt_opt = app.add_option("--prompt", prompt, "Text to continue")->capture_default_str();
  app.add_option("--ids", ids_text, "Token ids to continue, as 15496,11,314 (instead of --prompt)")
      ->excludes(prompt_opt);
  app.add_option("--max-new-tokens", max_new_tokens, "Tokens to generate")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--temperature", temperature, "Sampling temperature; 0 takes the argmax")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--top-k", top_k, "Sample among the k most likely tokens; 0: all")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--seed", seed, "Seed of the sampling generator")->capture_default_str();
  app.add_option("--model", model_name,
                 "GPT-2 size for n_heads (gpt2, gpt2-medium, gpt2-large, gpt2-xl, 124M, ...); "
                 "default: from emb_dim");
  app.add_option("--n-heads", n_heads, "Attention heads, for files of non-GPT-2 sizes")
      ->check(CLI::PositiveNumber);
  app.add_option("--vocab-dir", vocab_dir, "Folder with GPT-2's encoder.json and vocab.bpe")
      ->capture_default_str();
  app.add_option("--threads", threads, "Threads for the kernels")
      ->capture_default_str()
      ->check(CLI::Range(1, 255));
  if (const std::optional<int> exit_code = cli::parse(app, argc, argv)) return *exit_code;

  try {
    set_num_threads(threads);
    std::unique_ptr<Tokenizer> tokenizer;
    std::string tokenizer_error;
    try {
      tokenizer = make_tokenizer("gpt2", vocab_dir);
    } catch (const Error& e) {
      tokenizer_error = e.what();
    }
    std::vector<int64_t> ids;
    if (!ids_text.empty()) {
      ids = parse_ids(ids_text);
    } else {
      if (!tokenizer) {
        throw Error(
            "--prompt needs GPT-2's vocabulary (run tools/fetch_gpt2_vocab.sh, or give "
            "--vocab-dir, or token ids with --ids): " +
            tokenizer_error);
      }
      ids = tokenizer->encode(prompt);
      if (ids.empty()) throw Error("--prompt: the prompt is empty");
    }

    const nn::GPTConfig cfg = nn::infer_gpt2_config(weights, model_name, n_heads);
    std::cerr << "GPT-2: " << cfg.n_layers << " layers, emb_dim " << cfg.emb_dim << ", "
              << cfg.n_heads << " heads, vocabulary " << cfg.vocab_size << ", context "
              << cfg.context_length << "\n";
    nn::GPTModel model(cfg);
    nn::load_gpt2_weights(model, weights);
    model.eval();

    Generator generator(seed);
    const size_t prompt_len = ids.size();
    const auto n = static_cast<int64_t>(ids.size());
    // Each token is printed as soon as it is drawn: the text decoded so far, less what is
    // already on the screen (a token may end inside a multi-byte character).
    std::string shown;
    size_t ids_shown = 0;
    auto show = [&] {
      if (tokenizer) {
        const std::string text = tokenizer->decode(ids);
        if (text.size() > shown.size() && text.compare(0, shown.size(), shown) == 0) {
          std::cout << text.substr(shown.size()) << std::flush;
          shown = text;
        }
      } else {
        for (; ids_shown < ids.size(); ++ids_shown) {
          std::cout << (ids_shown ? "," : "") << ids[ids_shown] << std::flush;
        }
      }
    };
    if (!tokenizer) std::cerr << "(no GPT-2 vocabulary in " << vocab_dir << ": printing ids)\n";
    show();
    nn::GenerationStats stats;
    nn::GenerateOptions options;
    options.max_new_tokens = max_new_tokens;
    options.context_size = cfg.context_length;
    options.temperature = temperature;
    if (top_k > 0) options.top_k = top_k;
    if (tokenizer) options.eos_id = tokenizer->eot_token();
    options.generator = &generator;
    options.on_token = [&](const Ids& next) {
      ids.push_back(next[0]);
      show();
    };
    options.stats = &stats;
    nn::generate(model, Ids(Shape{1, n}, ids), options);
    std::cout << "\n";
    std::cerr << "(" << prompt_len << " prompt tokens, " << ids.size() - prompt_len
              << " generated)\n";
    const double decode_rate = stats.decode_seconds > 0
                                   ? static_cast<double>(stats.decode_tokens) / stats.decode_seconds
                                   : 0.0;
    std::cerr << "prefill: " << stats.prompt_tokens << " tokens in " << stats.prefill_seconds
              << " s, " << static_cast<double>(stats.prompt_tokens) / stats.prefill_seconds
              << " tokens/s; decode: " << stats.decode_tokens << " tokens in "
              << stats.decode_seconds << " s, " << decode_rate << " tokens/s\n";
  } catch (const Error& e) {
    std::cerr << "tapegrad-generate: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
