// What the two fine-tuning programs (finetune_classifier, finetune_instruct) share: where the
// model comes from (a train_gpt checkpoint, Hugging Face GPT-2 safetensors, or a fresh model of a
// given size), reading the King James text, writing into --out and the plots.
#pragma once

#include <unistd.h>

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
#include <vector>

#include "io/atomic_file.h"
#include "io/safetensors.h"
#include "tapegrad.h"

namespace tapegrad::finetune {

namespace fs = std::filesystem;

// The King James text (--kjv; default_kjv_path() by default, text/kjv.h), whole.
inline std::string read_kjv(const std::string& path, const std::string& program) {
  return read_training_text(path, program + ": --kjv");
}

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

inline std::map<std::string, std::string> key_values(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  for (std::string word; in >> word;) {
    const size_t eq = word.find('=');
    if (eq != std::string::npos) out[word.substr(0, eq)] = word.substr(eq + 1);
  }
  return out;
}

// Builds the model: torch.manual_seed(seed) then GPTModel(cfg), and the weights of the checkpoint
// or GPT-2 file when one is given.
inline LoadedModel load_model(const ModelOptions& o, const std::string& program) {
  LoadedModel out;
  nn::GPTConfig cfg{0, o.context_length, o.emb_dim, o.n_heads, o.n_layers, o.drop_rate, o.qkv_bias};
  std::string tokenizer = o.tokenizer;
  if (!o.checkpoint.empty()) {
    const std::vector<uint8_t> bytes = read_whole_file(o.checkpoint);
    const SafetensorsView view = parse_safetensors(bytes, o.checkpoint);
    const std::string* saved = view.find_metadata("train_gpt.config");
    if (saved == nullptr) {
      throw Error(program + ": --checkpoint " + o.checkpoint + " was not written by train_gpt");
    }
    auto kv = key_values(*saved);
    auto get = [&](const char* key) {
      if (!kv.count(key)) throw Error(program + ": --checkpoint " + o.checkpoint + ": no " + key);
      return kv[key];
    };
    tokenizer = get("tokenizer");
    cfg = {std::stoll(get("vocab_size")),
           std::stoll(get("context_length")),
           std::stoll(get("emb_dim")),
           std::stoll(get("n_heads")),
           std::stoll(get("n_layers")),
           o.drop_rate,
           false};
    out.origin = "train_gpt checkpoint " + o.checkpoint;
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

// The id that pads batches and ends generation: <|endoftext|> (50256) for GPT-2's tokenizer; the
// bytes tokenizer has none, so the NUL byte (0) stands in.
inline int64_t pad_id(const Tokenizer& tokenizer) {
  return tokenizer.eot_token().value_or(0);
}

// A file of the --out folder, through the one atomic writer (io/atomic_file.h): `path` is never
// half written. A failure names the program and the option.
inline void write_file(const std::string& path, const std::string& text, const std::string& who) {
  try {
    write_file_atomically(path, text);
  } catch (const Error& e) {
    throw Error(who + ": --out: " + e.what());
  }
}

inline std::vector<double> linspace(double from, double to, size_t n) {  // torch.linspace
  std::vector<double> out(n);
  for (size_t i = 0; i < n; ++i) {
    out[i] =
        n == 1 ? from : from + (to - from) * static_cast<double>(i) / static_cast<double>(n - 1);
  }
  return out;
}

// Draws a figure when gnuplot is there; a missing gnuplot is a note on stderr, not a failure.
template <class Draw>
void try_plot(const std::string& png, const std::string& who, Draw draw) {
  try {
    draw();
    std::printf("wrote %s\n", png.c_str());
  } catch (const Error& e) {
    std::fprintf(stderr, "%s: no %s: %s\n", who.c_str(), png.c_str(), e.what());
  }
}

inline std::string join(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

inline std::vector<int64_t> split_ints(const std::string& s) {
  std::vector<int64_t> out;
  std::istringstream in(s);
  for (std::string part; std::getline(in, part, ',');) out.push_back(std::stoll(part));
  return out;
}

}  // namespace tapegrad::finetune
