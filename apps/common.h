// What tapegrad's programs share beyond the command line (cli/cli.h): their input text and
// output files, the key=value run configurations their checkpoints carry, loss.csv and its
// figure, and the GPT language model a tapegrad checkpoint holds.
#pragma once

#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <tapegrad/io/atomic_file.h>
#include <tapegrad/io/safetensors.h>
#include <tapegrad/nn/lora.h>
#include <tapegrad/tapegrad.h>

namespace tapegrad::apps {

// The text file an option names (--data, --kjv), whole; errors name the program and the option.
inline std::string read_text(const std::string& program, const std::string& option,
                             const std::string& path) {
  return read_training_text(path, program + ": " + option);
}

// A file of the --out folder, through the one atomic writer (io/atomic_file.h): `path` is never
// half written. A failure names the program and the option.
inline void write_file(const std::string& program, const std::string& path,
                       const std::string& text) {
  try {
    write_file_atomically(path, text);
  } catch (const Error& e) {
    throw Error(program + ": --out: " + e.what());
  }
}

// {1, 2, 3} <-> "1,2,3": a data loader's order in a checkpoint's metadata.
inline std::string join(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i > 0) s += ',';
    s += std::to_string(v[i]);
  }
  return s;
}
inline std::vector<int64_t> split_ints(const std::string& s) {
  std::vector<int64_t> out;
  std::istringstream in(s);
  for (std::string part; std::getline(in, part, ',');) out.push_back(std::stoll(part));
  return out;
}

// "a=1 b=x" -> {a: 1, b: x}: the run configuration a checkpoint carries ("train_gpt.config").
inline std::map<std::string, std::string> key_values(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  for (std::string word; in >> word;) {
    const size_t eq = word.find('=');
    if (eq != std::string::npos) out[word.substr(0, eq)] = word.substr(eq + 1);
  }
  return out;
}

// --resume: throws, before anything is loaded, unless the checkpoint `ckpt` carries `config` (this
// run's settings) under the metadata key `config_key`; the message shows both settings.
inline void require_config(const SafetensorsView& view, const std::string& config_key,
                           const std::string& config, const std::string& ckpt,
                           const std::string& program) {
  const std::string* saved = view.find_metadata(config_key);
  if (saved == nullptr) {
    throw Error(program + ": --resume: " + ckpt + " is not a checkpoint of this program (no " +
                config_key + "; nothing was changed)");
  }
  if (*saved != config) {
    throw Error(program + ": --resume: " + ckpt +
                " is a checkpoint of another configuration (nothing was changed):\n  file: " +
                *saved + "\n  this run: " + config);
  }
}

// loss.csv: "step,train_loss,val_loss,tokens_seen", a row per evaluation.
inline constexpr const char* kLossCsvHeader = "step,train_loss,val_loss,tokens_seen\n";

// loss.csv at `path` kept up to (and including) `step`: the rows a resumed run continues from.
inline std::string csv_up_to(const std::string& path, int64_t step) {
  std::ifstream in(path);
  std::string line, out = kLossCsvHeader;
  if (!in) return out;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    if (!line.empty() && std::stoll(line) <= step) out += line + "\n";
  }
  return out;
}

// loss.csv's columns.
struct LossRows {
  std::vector<double> steps, train, val, tokens;
};
inline LossRows loss_rows(const std::string& csv) {
  LossRows rows;
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::istringstream f(line);
    std::string a, b, c, d;
    std::getline(f, a, ','), std::getline(f, b, ','), std::getline(f, c, ','), std::getline(f, d);
    rows.steps.push_back(std::stod(a)), rows.train.push_back(std::stod(b));
    rows.val.push_back(std::stod(c)), rows.tokens.push_back(std::stod(d));
  }
  return rows;
}

inline std::vector<double> linspace(double from, double to, size_t n) {  // torch.linspace
  std::vector<double> out(n);
  for (size_t i = 0; i < n; ++i) {
    out[i] =
        n == 1 ? from : from + (to - from) * static_cast<double>(i) / static_cast<double>(n - 1);
  }
  return out;
}

// Draws a figure (viz/plot.h, with gnuplot) and says so; a missing gnuplot is a note on stderr,
// not a failure.
template <class Draw>
void try_plot(const std::string& png, const std::string& program, Draw draw) {
  try {
    draw();
    std::printf("wrote %s\n", png.c_str());
    std::fflush(stdout);
  } catch (const Error& e) {
    std::fprintf(stderr, "%s: no %s: %s\n", program.c_str(), png.c_str(), e.what());
  }
}

// The GPT language model a tapegrad checkpoint holds, from the run configuration it carries:
// tapegrad-train-gpt's "train_gpt.config" or tapegrad-finetune-instruct's
// "finetune_instruct.config" (vocab_size, context_length, emb_dim, n_heads, n_layers, tokenizer;
// the latter also qkv_bias and the LoRA adapters' rank and alpha).
struct CheckpointModel {
  std::string writer;     // "train_gpt" or "finetune_instruct"
  std::string tokenizer;  // "gpt2" or "bytes"
  nn::GPTConfig cfg;
  int64_t lora_rank = 0;  // > 0: the weights are LoRA adapters' (nn::replace_linear_with_lora)
  double lora_alpha = 16;
};

// True when the file's metadata says a tapegrad program wrote it ("tapegrad.format").
inline bool is_tapegrad_checkpoint(const SafetensorsView& view) {
  return view.find_metadata("tapegrad.format") != nullptr;
}

// The model of a tapegrad checkpoint. Throws Error naming `path` when it holds no language model
// (a classifier's, or a run configuration without the model's sizes).
inline CheckpointModel checkpoint_model(const SafetensorsView& view, const std::string& path) {
  if (view.find_metadata("finetune_classifier.config") != nullptr) {
    throw Error(path +
                " is a tapegrad-finetune-classifier checkpoint: a classifier, not a language "
                "model");
  }
  CheckpointModel m;
  const std::string* config = nullptr;
  for (const char* writer : {"train_gpt", "finetune_instruct"}) {
    config = view.find_metadata(std::string(writer) + ".config");
    if (config != nullptr) {
      m.writer = writer;
      break;
    }
  }
  if (config == nullptr) {
    throw Error(path +
                " has no model configuration (train_gpt.config or finetune_instruct.config "
                "metadata): not a checkpoint of tapegrad-train-gpt or tapegrad-finetune-instruct");
  }
  std::map<std::string, std::string> kv = key_values(*config);
  auto get = [&](const char* key) {
    const auto it = kv.find(key);
    if (it == kv.end()) throw Error(path + ": " + m.writer + ".config has no " + key);
    return it->second;
  };
  try {
    m.tokenizer = get("tokenizer");
    m.cfg = {std::stoll(get("vocab_size")),
             std::stoll(get("context_length")),
             std::stoll(get("emb_dim")),
             std::stoll(get("n_heads")),
             std::stoll(get("n_layers")),
             std::stod(get("drop_rate")),
             kv.count("qkv_bias") && kv["qkv_bias"] == "1"};
    if (kv.count("lora_rank")) m.lora_rank = std::stoll(kv["lora_rank"]);
    if (kv.count("lora_alpha")) m.lora_alpha = std::stod(kv["lora_alpha"]);
  } catch (const std::logic_error&) {  // std::stoll / std::stod on a malformed value
    throw Error(path + ": " + m.writer + ".config has a malformed value: " + *config);
  }
  nn::check_config(m.cfg);
  return m;
}

// The model of checkpoint_model(), built (with its LoRA adapters, if any) and loaded with the
// checkpoint's weights.
inline std::unique_ptr<nn::GPTModel> load_checkpoint_model(const CheckpointModel& m,
                                                           const std::string& path) {
  auto model = std::make_unique<nn::GPTModel>(m.cfg);
  if (m.lora_rank > 0) nn::replace_linear_with_lora(*model, m.lora_rank, m.lora_alpha);
  load_checkpoint(path, model->named_parameters());
  return model;
}

}  // namespace tapegrad::apps
