// Generates text from a GPT model's weights, as the book's gpt_generate.py does after
// load_weights_into_gpt (chapter 5). --weights is either
//  - OpenAI's pretrained GPT-2 (a Hugging Face model.safetensors): the configuration (124M, 355M,
//    774M or 1558M) is read from the file's shapes (nn::infer_gpt2_config), the tokenizer is
//    GPT-2's; or
//  - a tapegrad checkpoint of a language model (tapegrad-train-gpt's, or tapegrad-finetune-
//    instruct's, LoRA adapters included): its run configuration gives the model's sizes and its
//    tokenizer (gpt2 or bytes). A classifier's checkpoint is refused.
//
// Usage: tapegrad-generate --weights FILE [--prompt TEXT | --ids 15496,11,314]
//                      [--max-new-tokens N] [--temperature T] [--top-k K] [--seed S]
//                      [--model NAME] [--n-heads H] [--vocab-dir DIR] [--threads N]
//                      [--dtype float32|bf16]
// GPT-2's tokenizer needs encoder.json and vocab.bpe in --vocab-dir (tools/fetch_gpt2_vocab.sh
// fetches them); --ids gives token ids instead, and the output is then decoded when the
// vocabulary is there, printed as ids when not.
//
// Decoding is the book's generate() (nn::generate) with the KV cache: the logits of the last
// position, cut to the top k when k > 0, divided by the temperature and sampled when T > 0 with
// torch.multinomial's stream from a Generator seeded with --seed (the same seed gives torch's
// ids), else their argmax; it stops at <|endoftext|>. The context is cropped to the model's last
// context_length tokens. Each token is printed as it is produced; the run ends with the
// prefill's and the decode's tokens/s on stderr.
//
// --dtype bf16 keeps the linear layers' weights as bfloat16 (nn::use_bf16_weights: half the
// bytes a decode step reads). The file is loaded in float32 first, and the first step's logits
// (the prompt's last position) are computed with those weights and again with the bfloat16
// ones: the run ends with their difference.
//
// --model qwen3-0.6b (1.7b, 4b, 8b, 14b, 32b) or llama3.2-1b (3b) runs the book's Qwen3Model or
// Llama3Model instead, with --weights a Hugging Face checkpoint: its directory (model.safetensors,
// or model.safetensors.index.json and its shards), the index, or the one file
// (nn::load_qwen3_weights / load_llama3_weights). --prompt goes through the model's tokenizer
// (text/llm_tokenizers.h: --tokenizer, else tokenizer.json beside the checkpoint, else the one
// tools/fetch_tokenizers.sh fetched), --chat wraps it as the book's chat format (--thinking lets
// Qwen3 think), and the output is text; with --ids it is ids. --model qwen3 (llama3) alone takes
// the sizes from the checkpoint's config.json (nn::qwen3_config_from_json,
// llama3_config_from_json). --dtype bf16 loads the file straight into bfloat16 linear weights
// (nn::load_qwen3_model_bf16: BF16 tensors' bits copied, F32 ones rounded to nearest even; no
// float32 copy, so the peak memory is the bfloat16 model's). Generation stops at --eos-id, by
// default (with --prompt) at the tokenizer's end of text, or of the turn with --chat. A prompt
// longer than the model's context is an Error (the GPT path crops it, as the book does).
#include <tapegrad/cli/cli.h>
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <tapegrad/graph/threads.h>
#include <tapegrad/tapegrad.h>
#include "common.h"

using namespace tapegrad;

namespace {

constexpr const char* kProgram = "tapegrad-generate";  // its name in bin/

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

// What a Qwen3 or Llama 3.2 run takes from the command line.
struct HfRun {
  std::string model_name, weights, dtype;
  std::vector<int64_t> ids;
  const Tokenizer* tokenizer = nullptr;  // --prompt: text in and out; --ids: ids
  int64_t max_new_tokens = 0, top_k = 0;
  std::optional<int64_t> eos_id;
  double temperature = 0.0;
  uint64_t seed = 0;
  // The tokenizer's end (with --prompt, no --eos-id); a small model without that id never makes it.
  std::optional<int64_t> default_eos;
};

// --model qwen3-* / llama3.2-*: the book's model of that config, the Hugging Face checkpoint at
// --weights, ids in and out. With --dtype bf16 the checkpoint goes straight into bfloat16 linear
// weights (load_bf16: nn::load_qwen3_model_bf16 / load_llama3_model_bf16), never held in float32.
template <class Model, class Config, class Load, class LoadBf16>
int run_hf(const HfRun& o, const Config& cfg, const char* family, Load load, LoadBf16 load_bf16) {
  for (const int64_t id : o.ids) {
    if (id < 0 || id >= cfg.vocab_size) {
      throw Error(std::string(o.tokenizer ? "--prompt: its token " : "--ids: ") +
                  std::to_string(id) + " is outside " + o.model_name + "'s vocabulary [0, " +
                  std::to_string(cfg.vocab_size) + ")");
    }
  }
  // The book's generate would crop such a prompt to its last context_length tokens without a
  // word; a prompt the model cannot read whole is refused before the weights load.
  if (static_cast<int64_t>(o.ids.size()) > cfg.context_length) {
    throw Error(std::string(o.tokenizer ? "--prompt: " : "--ids: ") + std::to_string(o.ids.size()) +
                " tokens, longer than " + o.model_name + "'s context of " +
                std::to_string(cfg.context_length) + " tokens");
  }
  if (o.eos_id && (*o.eos_id < 0 || *o.eos_id >= cfg.vocab_size)) {
    throw Error("--eos-id: " + std::to_string(*o.eos_id) + " is outside " + o.model_name +
                "'s vocabulary [0, " + std::to_string(cfg.vocab_size) + ")");
  }
  if (o.top_k > cfg.vocab_size) {
    throw Error("--top-k: " + std::to_string(o.top_k) + " is larger than the vocabulary " +
                std::to_string(cfg.vocab_size));
  }
  std::cerr << family << " " << o.model_name << ": " << cfg.n_layers << " layers, emb_dim "
            << cfg.emb_dim << ", " << cfg.n_heads << " heads, " << cfg.n_kv_groups
            << " kv groups, vocabulary " << cfg.vocab_size << ", context " << cfg.context_length
            << (o.tokenizer ? "" : " (ids in and out)") << "\n";
  std::unique_ptr<Model> owned;
  try {
    if (o.dtype == "bf16") {
      owned = load_bf16(cfg, o.weights);
    } else {
      owned = std::make_unique<Model>(cfg);
      load(*owned, o.weights);
    }
  } catch (const Error& e) {
    throw Error("--weights: " + std::string(e.what()));
  }
  Model& model = *owned;
  model.eval();
  const auto n = static_cast<int64_t>(o.ids.size());
  std::optional<int64_t> bf16;  // linear layers with bfloat16 weights
  if (o.dtype == "bf16") {
    bf16 = 0;
    for (nn::Module* m : model.modules()) {
      const auto* linear = dynamic_cast<const nn::Linear*>(m);
      if (linear != nullptr && linear->has_bf16_weight()) ++*bf16;
    }
  }
  Generator generator(o.seed);
  std::vector<int64_t> ids = o.ids;
  if (o.tokenizer) {
    std::cout << o.tokenizer->decode(ids);
  } else {
    for (size_t i = 0; i < ids.size(); ++i) std::cout << (i ? "," : "") << ids[i];
  }
  std::cout << std::flush;
  nn::GenerationStats stats;
  nn::GenerateOptions options;
  options.max_new_tokens = o.max_new_tokens;
  options.context_size = cfg.context_length;
  options.temperature = o.temperature;
  if (o.top_k > 0) options.top_k = o.top_k;
  options.eos_id = o.eos_id;
  if (!o.eos_id && o.default_eos && *o.default_eos < cfg.vocab_size) options.eos_id = o.default_eos;
  options.generator = &generator;
  options.on_token = [&](const Ids& next) {
    ids.push_back(next[0]);
    if (o.tokenizer) {  // a token's bytes (a character cut in two is whole after the next)
      std::cout << o.tokenizer->decode(std::vector<int64_t>{next[0]}) << std::flush;
    } else {
      std::cout << "," << next[0] << std::flush;
    }
  };
  options.stats = &stats;
  nn::generate(model, Ids(Shape{1, n}, o.ids), options);
  std::cout << "\n";
  std::cerr << "(" << n << " prompt tokens, " << ids.size() - o.ids.size() << " generated)\n";
  const double decode_rate = stats.decode_seconds > 0
                                 ? static_cast<double>(stats.decode_tokens) / stats.decode_seconds
                                 : 0.0;
  std::cerr << "prefill: " << stats.prompt_tokens << " tokens in " << stats.prefill_seconds
            << " s; decode: " << stats.decode_tokens << " tokens in " << stats.decode_seconds
            << " s, " << decode_rate << " tokens/s\n";
  if (bf16) {
    std::cerr << "bf16 weights (" << *bf16
              << " linear layers), loaded straight into bfloat16 (no float32 copy)\n";
  }
  return 0;
}

bool starts_with(const std::string& s, const char* prefix) {
  return s.rfind(prefix, 0) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Generate text with a GPT model: pretrained GPT-2 weights (Hugging Face model.safetensors) "
      "or a checkpoint of tapegrad-train-gpt or tapegrad-finetune-instruct",
      kProgram};
  std::string weights, prompt = "Every effort moves you", ids_text, model_name;
  std::string vocab_dir = default_gpt2_vocab_dir().string();
  int64_t max_new_tokens = 25, top_k = 0, n_heads = 0;
  double temperature = 0.0;
  uint64_t seed = 123;
  int threads = 1;
  std::string dtype = "float32";
  int64_t eos_id = -1;
  std::string tokenizer_file;
  bool chat = false, thinking = false;
  app.add_option("--weights", weights,
                 "Hugging Face's GPT-2 model.safetensors, or a tapegrad-train-gpt / "
                 "tapegrad-finetune-instruct checkpoint.safetensors")
      ->required();
  auto* prompt_opt = app.add_option("--prompt", prompt, "Text to continue");
  auto* ids_opt = app.add_option("--ids", ids_text,
                                 "Token ids to continue, as 15496,11,314 (instead of --prompt)")
                      ->excludes(prompt_opt);
  app.add_option("--max-new-tokens", max_new_tokens, "Tokens to generate")
      ->check(cli::in_range(0, static_cast<double>(nn::kMaxNewTokens)));
  app.add_option("--temperature", temperature, "Sampling temperature; 0 takes the argmax")
      ->check(cli::non_negative_finite());
  app.add_option("--top-k", top_k, "Sample among the k most likely tokens; 0: all")
      ->check(cli::non_negative());
  app.add_option("--seed", seed, "Seed of the sampling generator");
  app.add_option("--model", model_name,
                 "GPT-2 size for n_heads (gpt2, gpt2-medium, gpt2-large, gpt2-xl, 124M, ...; "
                 "default: from emb_dim), or qwen3-0.6b, qwen3-1.7b, qwen3-4b, qwen3-8b, "
                 "qwen3-14b, qwen3-32b, llama3.2-1b, llama3.2-3b with a Hugging Face checkpoint "
                 "(file, index or directory) as --weights and --ids; qwen3 or llama3 alone: the "
                 "sizes from the checkpoint's config.json");
  app.add_option("--eos-id", eos_id,
                 "Stop at this id (Qwen3 and Llama models; default with --prompt: the "
                 "tokenizer's end of text, or of the turn with --chat)")
      ->check(cli::non_negative());
  app.add_option("--tokenizer", tokenizer_file,
                 "Qwen3's or Llama 3's tokenizer for --prompt (default: tokenizer.json beside the "
                 "checkpoint, else the one tools/fetch_tokenizers.sh fetched)");
  app.add_flag("--chat", chat,
               "Qwen3 and Llama: wrap --prompt as the book's chat format (a user turn, then the "
               "assistant's)");
  app.add_flag("--thinking", thinking,
               "Qwen3 with --chat: let the model think (no empty <think></think> prefilled)");
  app.add_option("--n-heads", n_heads, "Attention heads, for GPT-2 files of non-GPT-2 sizes")
      ->check(cli::positive());
  app.add_option("--vocab-dir", vocab_dir, "Folder with GPT-2's encoder.json and vocab.bpe");
  app.add_option("--threads", threads, "Threads for the kernels")->check(cli::in_range(1, 255));
  app.add_option("--dtype", dtype,
                 "Linear layers' weights: float32, or bf16 (bfloat16, inference only: half the "
                 "bytes per token; the first step's logits are compared with float32's)")
      ->check(CLI::IsMember({"float32", "bf16"}));
  if (const std::optional<int> exit_code = cli::parse(app, argc, argv)) return *exit_code;

  return cli::run(kProgram, [&] {
    set_num_threads(threads);
    std::vector<int64_t> ids;  // --ids, else --prompt's once the tokenizer is known
    if (ids_opt->count() > 0) ids = parse_ids(ids_text);
    std::string lower_name = model_name;
    for (char& c : lower_name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const bool qwen3 = starts_with(lower_name, "qwen3") || starts_with(lower_name, "qwen/qwen3");
    const bool llama3 = starts_with(lower_name, "llama3") || starts_with(lower_name, "llama-3") ||
                        starts_with(lower_name, "meta-llama/");
    if (!qwen3 && !llama3 && (chat || thinking || !tokenizer_file.empty())) {
      throw Error(std::string(chat       ? "--chat"
                              : thinking ? "--thinking"
                                         : "--tokenizer") +
                  ": only for Qwen3 and Llama models (--model qwen3-... or llama3.2-...)");
    }
    if (qwen3 || llama3) {
      if (n_heads > 0)
        throw Error("--n-heads: only for GPT-2 files (" + model_name + " has its own)");
      if (thinking && !(qwen3 && chat)) throw Error("--thinking: only with --chat on Qwen3");
      if (chat && ids_opt->count() > 0) throw Error("--chat: wraps --prompt, not --ids");
      // The checkpoint's folder (--weights is it, or a file in it): its config.json and
      // tokenizer.json.
      const std::filesystem::path checkpoint_dir =
          std::filesystem::is_directory(weights) ? std::filesystem::path(weights)
                                                 : std::filesystem::path(weights).parent_path();
      std::unique_ptr<Tokenizer> tokenizer;
      std::optional<int64_t> default_eos;
      if (ids.empty()) {  // --prompt, through the model's tokenizer
        std::filesystem::path file = tokenizer_file;
        if (file.empty()) {
          file = std::filesystem::exists(checkpoint_dir / "tokenizer.json")
                     ? checkpoint_dir / "tokenizer.json"
                     : default_tokenizer_file(qwen3 ? "qwen3" : "llama3");
        }
        try {
          if (qwen3) {
            auto qwen = std::make_unique<Qwen3Tokenizer>(Qwen3Tokenizer::from_file(file));
            ids =
                chat ? qwen->encode_chat(prompt, {.add_thinking = thinking}) : qwen->encode(prompt);
            default_eos = qwen->eos_token_id(/*base_model=*/!chat);
            tokenizer = std::move(qwen);
          } else {
            auto llama = std::make_unique<Llama3Tokenizer>(Llama3Tokenizer::from_file(file));
            ids = chat ? llama->encode_chat(prompt) : llama->encode(prompt);
            default_eos = chat ? Llama3Tokenizer::kEndOfTurn : Llama3Tokenizer::kEndOfText;
            tokenizer = std::move(llama);
          }
        } catch (const Error& e) {
          throw Error("--tokenizer: " + std::string(e.what()));
        }
        if (ids.empty()) throw Error("--prompt: the prompt is empty");
      }
      HfRun run{model_name, weights,      dtype,       ids,  tokenizer.get(), max_new_tokens,
                top_k,      std::nullopt, temperature, seed, default_eos};
      if (eos_id >= 0) run.eos_id = eos_id;
      try {
        if (qwen3) {
          // "qwen3" alone: the sizes from the checkpoint's config.json.
          const nn::Qwen3Config cfg = lower_name == "qwen3"
                                          ? nn::qwen3_config_from_json(checkpoint_dir.string())
                                          : nn::qwen3_config(model_name);
          return run_hf<nn::Qwen3Model>(
              run, cfg, "Qwen3",
              [](nn::Qwen3Model& m, const std::string& p) { nn::load_qwen3_weights(m, p); },
              nn::load_qwen3_model_bf16);
        }
        // "llama3" alone: the sizes from the checkpoint's config.json.
        const nn::Llama3Config cfg = lower_name == "llama3"
                                         ? nn::llama3_config_from_json(checkpoint_dir.string())
                                         : nn::llama3_config(model_name);
        return run_hf<nn::Llama3Model>(
            run, cfg, "Llama 3.2",
            [](nn::Llama3Model& m, const std::string& p) { nn::load_llama3_weights(m, p); },
            nn::load_llama3_model_bf16);
      } catch (const Error& e) {
        const std::string what = e.what();
        if (what.rfind("qwen3_config_from_json", 0) == 0 ||
            what.rfind("llama3_config_from_json", 0) == 0) {
          throw Error("--weights: " + what);
        }
        if (what.rfind("qwen3_config", 0) == 0 || what.rfind("llama3_config", 0) == 0) {
          throw Error("--model: " + what);
        }
        throw;
      }
    }
    if (eos_id >= 0)
      throw Error("--eos-id: only for Qwen3 and Llama models (GPT-2 stops at <|endoftext|>)");
    // The model: a tapegrad checkpoint says what it is in its metadata; anything else is read as
    // GPT-2 weights.
    std::optional<apps::CheckpointModel> saved;
    try {
      const MappedFile file(weights);  // only the header is read
      const SafetensorsView view = parse_safetensors(file.bytes(), weights);
      if (apps::is_tapegrad_checkpoint(view)) saved = apps::checkpoint_model(view, weights);
    } catch (const Error& e) {
      throw Error("--weights: " + std::string(e.what()));
    }
    nn::GPTConfig cfg;
    try {
      cfg = saved ? saved->cfg : nn::infer_gpt2_config(weights, model_name, n_heads);
    } catch (const Error& e) {
      throw Error("--weights: " + std::string(e.what()));
    }
    for (const int64_t id : ids) {  // --ids (the prompt's ids come from the model's tokenizer)
      if (id < 0 || id >= cfg.vocab_size) {
        throw Error("--ids: " + std::to_string(id) + " is outside the model's vocabulary [0, " +
                    std::to_string(cfg.vocab_size) + ")");
      }
    }
    const std::string tokenizer_name = saved ? saved->tokenizer : "gpt2";
    std::cerr << (saved ? "tapegrad " + saved->writer + " checkpoint" : std::string("GPT-2"))
              << ": " << cfg.n_layers << " layers, emb_dim " << cfg.emb_dim << ", " << cfg.n_heads
              << " heads, vocabulary " << cfg.vocab_size << ", context " << cfg.context_length
              << ", tokenizer " << tokenizer_name
              << (saved && saved->lora_rank > 0 ? ", LoRA rank " + std::to_string(saved->lora_rank)
                                                : std::string())
              << "\n";

    std::unique_ptr<Tokenizer> tokenizer;
    std::string tokenizer_error;
    try {
      tokenizer = make_tokenizer(tokenizer_name, vocab_dir);
    } catch (const Error& e) {
      tokenizer_error = e.what();
    }
    if (ids.empty()) {
      if (!tokenizer) {
        throw Error(
            "--prompt needs GPT-2's vocabulary (run tools/fetch_gpt2_vocab.sh, or give "
            "--vocab-dir, or token ids with --ids): " +
            tokenizer_error);
      }
      ids = tokenizer->encode(prompt);
      if (ids.empty()) throw Error("--prompt: the prompt is empty");
    }

    std::unique_ptr<nn::GPTModel> model;
    try {
      if (saved) {
        model = apps::load_checkpoint_model(*saved, weights);
      } else {
        model = std::make_unique<nn::GPTModel>(cfg);
        nn::load_gpt2_weights(*model, weights);
      }
    } catch (const Error& e) {
      throw Error("--weights: " + std::string(e.what()));
    }
    model->eval();

    // --dtype bf16: the first step's last-position logits with the float32 weights, then with
    // the bfloat16 ones (the generation's prefill: the prompt's last context_length tokens).
    std::optional<nn::Bf16Conversion> bf16;
    if (dtype == "bf16") {
      const size_t fed = std::min(ids.size(), static_cast<size_t>(cfg.context_length));
      bf16 = nn::convert_to_bf16_weights(
          *model,
          Ids(Shape{1, static_cast<int64_t>(fed)},
              std::vector<int64_t>(ids.end() - static_cast<std::ptrdiff_t>(fed), ids.end())));
    }

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
    nn::generate(*model, Ids(Shape{1, n}, ids), options);
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
    if (bf16) {
      std::cerr << "bf16 weights: the first step's last-position logits against float32's: max "
                << "abs error " << bf16->max_abs_error << ", relative error "
                << bf16->relative_error
                << " (L2 norm of the difference / L2 norm of the float32 logits); argmax "
                << (bf16->same_argmax ? "the same" : "differs") << "\n";
    }
    return 0;
  });
}
