// What the two fine-tuning programs (finetune_classifier, finetune_instruct) share: where the
// model comes from (a train_gpt checkpoint, Hugging Face GPT-2 safetensors, or a fresh model of a
// given size) and its options, the run options (threads, --matmul-precision, LoRA) and --resume.
// What every program shares is in common.h.
#pragma once

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cctype>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include <tapegrad/cli/cli.h>
#include <tapegrad/io/atomic_file.h>
#include <tapegrad/io/safetensors.h>
#include <tapegrad/nn/hf_weights.h>
#include <tapegrad/nn/lora.h>
#include <tapegrad/tapegrad.h>
#include <tapegrad/text/llm_tokenizers.h>
#include "common.h"

namespace tapegrad::finetune {

namespace fs = std::filesystem;

// The model's origin and, for a fresh model, its size (the book's test_mode config by default:
// context 120, C 12, 2 heads, 1 layer).
struct ModelOptions {
  std::string checkpoint;  // a train_gpt checkpoint.safetensors
  std::string gpt2;        // Hugging Face GPT-2 model.safetensors
  std::string gpt2_name;   // its size name when n_heads cannot be inferred ("gpt2-medium", ...)
  std::string tokenizer = "gpt2";  // a fresh model's tokenizer: gpt2 or bytes
  int64_t context_length = 120, emb_dim = 12, n_heads = 2, n_layers = 1;
  bool qkv_bias = false;
  double drop_rate = 0.0;  // the book fine-tunes with dropout 0.0
  uint64_t seed = 123;
};

struct LoadedModel {
  std::unique_ptr<nn::GPTModel> model;
  std::unique_ptr<Tokenizer> tokenizer;
  std::string origin;  // for the report
};

// The model's options, the same in both programs.
inline void add_model_options(CLI::App& app, ModelOptions& o) {
  auto* ckpt = app.add_option("--checkpoint", o.checkpoint, "start from a train_gpt checkpoint")
                   ->check(CLI::ExistingFile);
  app.add_option("--gpt2", o.gpt2, "start from Hugging Face GPT-2 model.safetensors")
      ->check(CLI::ExistingFile)
      ->excludes(ckpt);
  app.add_option("--gpt2-name", o.gpt2_name, "the GPT-2 size when heads cannot be inferred");
  app.add_option("--tokenizer", o.tokenizer, "a fresh model's tokenizer: gpt2 or bytes")
      ->check(CLI::IsMember({"gpt2", "bytes"}));
  app.add_option("--context-length", o.context_length, "a fresh model's context length")
      ->check(cli::positive());
  app.add_option("--emb-dim", o.emb_dim, "a fresh model's embedding size")->check(cli::positive());
  app.add_option("--n-heads", o.n_heads, "a fresh model's heads")->check(cli::positive());
  app.add_option("--n-layers", o.n_layers, "a fresh model's blocks")->check(cli::positive());
  app.add_option("--drop-rate", o.drop_rate, "dropout while fine-tuning")
      ->check(cli::probability());
  app.add_option("--seed", o.seed,
                 "torch.manual_seed before the model (and the classifier's new head); the data "
                 "loader's generator");
}

// The training loop's options, the same in both programs (each gives its own defaults, the
// book's for its chapter): --resume, --epochs, --batch-size, --lr, --weight-decay, --eval-freq,
// --eval-iter and --no-plot.
struct FitOptions {
  bool resume = false;
  int64_t epochs = 1;
  int64_t batch_size = 8;
  double lr = 5e-5;
  double weight_decay = 0.1;
  int64_t eval_freq = 5;
  int64_t eval_iter = 5;
  bool plot = true;
};

// `rows`: what a batch holds ("texts"); `eval_iter`: what --eval-iter's batches are for;
// `plots`: the figures --no-plot leaves out.
inline void add_fit_options(CLI::App& app, FitOptions& o, const std::string& rows,
                            const std::string& eval_iter, const std::string& plots) {
  app.add_flag("--resume", o.resume, "continue from --out's checkpoint.safetensors");
  app.add_option("--epochs", o.epochs, "epochs")->check(cli::positive());
  app.add_option("--batch-size", o.batch_size, rows + " per batch")->check(cli::positive());
  app.add_option("--lr", o.lr, "AdamW's learning rate")->check(cli::positive_finite());
  app.add_option("--weight-decay", o.weight_decay, "AdamW's weight decay")
      ->check(cli::non_negative());
  app.add_option("--eval-freq", o.eval_freq, "evaluate every N steps")->check(cli::positive());
  app.add_option("--eval-iter", o.eval_iter, "batches per " + eval_iter)->check(cli::positive());
  app.add_flag("!--no-plot", o.plot, "do not draw " + plots);
}

// How a run computes and what it trains: threads, matrix-product precision, and appendix E's
// LoRA (rank 0: no adapters).
struct RunOptions {
  int threads = 1;
  std::string matmul_precision = "highest";
  int64_t lora_rank = 0;
  double lora_alpha = 16;
};

inline void add_run_options(CLI::App& app, RunOptions& o) {
  app.add_option("--threads", o.threads, "threads per step")->check(cli::in_range(1, 256));
  cli::add_matmul_precision(app, o.matmul_precision);
  app.add_option("--lora-rank", o.lora_rank,
                 "freeze the model and train LoRA adapters of this rank on every Linear (the "
                 "book's appendix E; 0: off)")
      ->check(cli::non_negative());
  app.add_option("--lora-alpha", o.lora_alpha, "the adapters' alpha (output scaled by alpha/rank)")
      ->check(cli::positive_finite());
}

// Threads and precision, for the whole process.
inline void apply_run_options(const RunOptions& o) {
  set_num_threads(o.threads);
  set_matmul_precision(cli::matmul_precision_named(o.matmul_precision));
}

// Appendix E's recipe when --lora-rank is set: every weight frozen, then every Linear wrapped in
// a LoRA adapter, each A drawn from the default generator where it stands (the book draws them
// right after the new head, without reseeding). Returns the report's words for what is trained.
inline std::string apply_lora(nn::Module& model, const RunOptions& o) {
  if (o.lora_rank <= 0) return "";
  model.requires_grad_(false);
  const int64_t n = nn::replace_linear_with_lora(model, o.lora_rank, o.lora_alpha);
  std::ostringstream s;
  s << "LoRA rank " << o.lora_rank << ", alpha " << o.lora_alpha << " on " << n << " Linear layers";
  return s.str();
}

inline std::string run_config(const RunOptions& o) {
  std::ostringstream s;
  s << " matmul_precision=" << o.matmul_precision << " lora_rank=" << o.lora_rank
    << " lora_alpha=" << o.lora_alpha;
  return s.str();
}

// Builds the model: torch.manual_seed(seed) then GPTModel(cfg), and the weights of the checkpoint
// or GPT-2 file when one is given.
inline LoadedModel load_model(const ModelOptions& o, const std::string& program) {
  LoadedModel out;
  nn::GPTConfig cfg{0, o.context_length, o.emb_dim, o.n_heads, o.n_layers, o.drop_rate, o.qkv_bias};
  std::string tokenizer = o.tokenizer;
  if (!o.checkpoint.empty()) {
    apps::CheckpointModel saved;
    try {
      const MappedFile file(o.checkpoint);
      saved = apps::checkpoint_model(parse_safetensors(file.bytes(), o.checkpoint), o.checkpoint);
    } catch (const Error& e) {
      throw Error(program + ": --checkpoint: " + e.what());
    }
    if (saved.lora_rank > 0) {
      throw Error(program + ": --checkpoint " + o.checkpoint +
                  " holds LoRA adapters: fine-tune from the model they were trained on");
    }
    tokenizer = saved.tokenizer;
    cfg = saved.cfg;
    cfg.drop_rate = o.drop_rate;
    out.origin = saved.writer + " checkpoint " + o.checkpoint;
  } else if (!o.gpt2.empty()) {
    cfg = nn::infer_gpt2_config(o.gpt2, o.gpt2_name);
    cfg.drop_rate = o.drop_rate;
    tokenizer = "gpt2";
    out.origin = "GPT-2 weights " + o.gpt2;
  } else {
    out.origin = "a fresh model (random weights, seed " + std::to_string(o.seed) + ")";
  }
  out.tokenizer = make_tokenizer(tokenizer);
  cfg.vocab_size = out.tokenizer->n_vocab();
  nn::check_config(cfg);
  manual_seed(o.seed);
  out.model = std::make_unique<nn::GPTModel>(cfg);
  if (!o.checkpoint.empty()) load_checkpoint(o.checkpoint, out.model->named_parameters());
  if (!o.gpt2.empty()) nn::load_gpt2_weights(*out.model, o.gpt2);
  return out;
}

// --model: the book's Qwen3 or Llama 3.2 instead of GPT. A name as tapegrad-generate takes it
// (qwen3-0.6b ... qwen3-32b, llama3.2-1b, llama3.2-3b; qwen3 or llama3 alone: the sizes from
// --weights' config.json) with --weights the Hugging Face checkpoint and the model's tokenizer
// (--tokenizer-file, else the checkpoint's tokenizer.json, else the one tools/fetch_tokenizers.sh
// fetched); or qwen3-tiny / llama3-tiny, a small fresh model (C 32, 4 heads, 2 kv groups, 2
// blocks, F 48; random weights from --seed) on --tokenizer's vocabulary with --context-length.
struct LlmOptions {
  std::string model, weights, tokenizer_file;
};

inline void add_llm_options(CLI::App& app, LlmOptions& o) {
  app.add_option("--model", o.model,
                 "the book's Qwen3 or Llama 3.2 instead of GPT: qwen3-0.6b ... qwen3-32b, "
                 "llama3.2-1b, llama3.2-3b (or qwen3 / llama3: the sizes from --weights' "
                 "config.json) with --weights; qwen3-tiny or llama3-tiny: a small fresh model");
  app.add_option("--weights", o.weights,
                 "--model's Hugging Face checkpoint: its directory, index or model.safetensors");
  app.add_option("--tokenizer-file", o.tokenizer_file,
                 "--model's tokenizer.json (default: the checkpoint's, else the fetched one)");
}

struct LoadedLlm {
  std::unique_ptr<nn::Qwen3Model> qwen;  // one of the two
  std::unique_ptr<nn::Llama3Model> llama;
  std::unique_ptr<Tokenizer> tokenizer;
  std::string origin;  // for the report
};

// Builds --model's model after torch.manual_seed(seed), with its checkpoint's weights. Throws
// Error naming the option: an unknown name, --weights missing (or given to a tiny model), a
// config.json or checkpoint that does not fit, a tokenizer file that cannot be read or has more
// ids than the model's vocabulary.
inline LoadedLlm load_llm(const ModelOptions& m, const LlmOptions& o, const std::string& program) {
  std::string name = o.model;
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const bool qwen = name.rfind("qwen3", 0) == 0 || name.rfind("qwen/qwen3", 0) == 0;
  const bool llama = name.rfind("llama3", 0) == 0 || name.rfind("llama-3", 0) == 0 ||
                     name.rfind("meta-llama/", 0) == 0;
  const std::string where = program + ": --model " + o.model + ": ";
  if (!qwen && !llama) {
    throw Error(where +
                "not a Qwen3 or Llama 3.2 name (qwen3-0.6b ... qwen3-32b, llama3.2-1b, "
                "llama3.2-3b, qwen3, llama3, qwen3-tiny, llama3-tiny)");
  }
  if (!m.checkpoint.empty() || !m.gpt2.empty()) {
    throw Error(where + "starts from --weights, not from --checkpoint or --gpt2");
  }
  LoadedLlm out;
  const bool tiny = name == "qwen3-tiny" || name == "llama3-tiny";
  if (tiny) {
    if (!o.weights.empty()) {
      throw Error(program + ": --weights: " + o.model + " is a fresh model (random weights)");
    }
    out.tokenizer = make_tokenizer(m.tokenizer);
    const int64_t v = out.tokenizer->n_vocab(), t = m.context_length;
    manual_seed(m.seed);
    if (qwen) {
      out.qwen = std::make_unique<nn::Qwen3Model>(
          nn::Qwen3Config{v, t, 32, 4, 2, 48, 8, true, 2, 1000000.0});
    } else {
      out.llama = std::make_unique<nn::Llama3Model>(
          nn::Llama3Config{v, t, t, 32, 4, 2, 48, 2, 500000.0, {32.0, 1.0, 4.0, 8192}});
    }
    out.origin = "a fresh " + o.model + " (random weights, seed " + std::to_string(m.seed) + ")";
    return out;
  }
  if (o.weights.empty()) {
    throw Error(program + ": --weights: --model " + o.model +
                " needs its Hugging Face checkpoint (the directory from huggingface.co)");
  }
  std::error_code ec;
  const fs::path dir =
      fs::is_directory(o.weights, ec) ? fs::path(o.weights) : fs::path(o.weights).parent_path();
  std::variant<nn::Qwen3Config, nn::Llama3Config> cfg;
  try {
    if (qwen) {
      cfg = name == "qwen3" ? nn::qwen3_config_from_json(dir.string()) : nn::qwen3_config(o.model);
    } else {
      cfg =
          name == "llama3" ? nn::llama3_config_from_json(dir.string()) : nn::llama3_config(o.model);
    }
  } catch (const Error& e) {
    const std::string what = e.what();
    throw Error(program +
                (what.find("_from_json") != std::string::npos ? ": --weights: " : ": --model: ") +
                what);
  }
  fs::path file = o.tokenizer_file;
  if (file.empty()) {
    file = fs::exists(dir / "tokenizer.json", ec)
               ? dir / "tokenizer.json"
               : default_tokenizer_file(qwen ? "qwen3" : "llama3");
  }
  try {
    if (qwen) {
      out.tokenizer = std::make_unique<Qwen3Tokenizer>(Qwen3Tokenizer::from_file(file));
    } else {
      out.tokenizer = std::make_unique<Llama3Tokenizer>(Llama3Tokenizer::from_file(file));
    }
  } catch (const Error& e) {
    throw Error(program + ": --tokenizer-file: " + e.what());
  }
  const int64_t vocab = std::visit([](const auto& c) { return c.vocab_size; }, cfg);
  if (out.tokenizer->n_vocab() > vocab) {
    throw Error(program + ": --tokenizer-file: " + file.string() + " has " +
                std::to_string(out.tokenizer->n_vocab()) + " ids, more than " + o.model +
                "'s vocabulary " + std::to_string(vocab));
  }
  manual_seed(m.seed);
  try {
    if (qwen) {
      out.qwen = std::make_unique<nn::Qwen3Model>(std::get<nn::Qwen3Config>(cfg));
      nn::load_qwen3_weights(*out.qwen, o.weights);
    } else {
      out.llama = std::make_unique<nn::Llama3Model>(std::get<nn::Llama3Config>(cfg));
      nn::load_llama3_weights(*out.llama, o.weights);
    }
  } catch (const Error& e) {
    throw Error(program + ": --weights: " + e.what());
  }
  out.origin = o.model + " weights " + o.weights;
  return out;
}

// Both programs' model choice: --model's Qwen3 or Llama 3.2 (load_llm), else the GPT of the
// model options (load_model), handed to run_model(model, tokenizer, origin), a generic lambda.
// --weights or --tokenizer-file without --model is an Error naming the option.
template <class Run>
int with_model(const ModelOptions& m, const LlmOptions& o, const std::string& program,
               Run&& run_model) {
  if (!o.model.empty()) {
    const LoadedLlm loaded = load_llm(m, o, program);
    if (loaded.qwen) return run_model(*loaded.qwen, *loaded.tokenizer, loaded.origin);
    return run_model(*loaded.llama, *loaded.tokenizer, loaded.origin);
  }
  if (!o.weights.empty() || !o.tokenizer_file.empty()) {
    throw Error(program + ": " + (o.weights.empty() ? "--tokenizer-file" : "--weights") +
                ": only with --model (Qwen3 or Llama 3.2)");
  }
  const LoadedModel loaded = load_model(m, program);
  return run_model(*loaded.model, *loaded.tokenizer, loaded.origin);
}

// --resume: loads the checkpoint `ckpt` into `params` and `extras` when its metadata
// `config_key` equals `config` (this run's settings); otherwise throws, naming both settings,
// before anything is changed.
inline void resume_from(const std::string& ckpt, const std::string& config_key,
                        const std::string& config, const NamedParameters& params,
                        CheckpointExtras& extras, const std::string& program) {
  const std::vector<uint8_t> bytes = read_whole_file(ckpt);
  apps::require_config(parse_safetensors(bytes, ckpt), config_key, config, ckpt, program);
  load_checkpoint_bytes(bytes, ckpt, params, extras);
}

// The id that pads batches and ends generation: <|endoftext|> (50256) for GPT-2's tokenizer; the
// bytes tokenizer has none, so the NUL byte (0) stands in.
inline int64_t pad_id(const Tokenizer& tokenizer) {
  return tokenizer.eot_token().value_or(0);
}

}  // namespace tapegrad::finetune
