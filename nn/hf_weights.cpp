// Hugging Face Qwen3 / Llama 3 checkpoints (one file or an index and its shards) into the book's
// parameter names, planned and checked whole before any parameter is written.
#include <tapegrad/nn/hf_weights.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <tapegrad/graph/error.h>
#include <tapegrad/io/safetensors.h>
#include <tapegrad/kernels/gemm/linear_bf16.h>  // round_to_bf16_bits

namespace tapegrad::nn {

namespace {

namespace fs = std::filesystem;

std::string shape_str(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

// --- the index file: {"metadata": {...}, "weight_map": {"name": "file", ...}} -----------------

// A JSON file's object (nlohmann's parser); an Error "<where>..." when it is not one.
nlohmann::json parse_json_object(const std::vector<uint8_t>& bytes, const std::string& where) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(bytes.begin(), bytes.end());
  } catch (const nlohmann::json::exception& e) {
    throw Error(where + "not valid JSON: " + e.what());
  }
  if (!j.is_object()) throw Error(where + "not valid JSON of its kind: expected an object");
  return j;
}

// The index's weight_map: tensor name -> shard file.
std::map<std::string, std::string> weight_map_of(const std::vector<uint8_t>& bytes,
                                                 const std::string& where) {
  const nlohmann::json j = parse_json_object(bytes, where);
  if (!j.contains("weight_map") || !j["weight_map"].is_object()) {
    throw Error(where + "not valid JSON of its kind: expected a \"weight_map\" object");
  }
  std::map<std::string, std::string> map;
  for (const auto& [name, file] : j["weight_map"].items()) {
    if (!file.is_string()) {
      throw Error(where + "not valid JSON of its kind: expected a file name for \"" + name + "\"");
    }
    map.emplace(name, file.get<std::string>());
  }
  return map;
}

// --- the checkpoint: its files mapped, every tensor by name -------------------------------------

struct Shard {
  explicit Shard(std::string p) : path(std::move(p)), file(path) {}
  std::string path;
  MappedFile file;
  SafetensorsView view;
};

struct Located {
  const Shard* shard;
  const SafetensorsEntry* entry;
};

class Checkpoint {
 public:
  Checkpoint(const std::string& fn, const std::string& path) : where_(fn + ": ") {
    std::error_code ec;
    fs::path p(path);
    if (fs::is_directory(p, ec)) {
      if (fs::exists(p / "model.safetensors.index.json", ec)) {
        open_index(p / "model.safetensors.index.json");
      } else if (fs::exists(p / "model.safetensors", ec)) {
        open_single(p / "model.safetensors");
      } else {
        throw Error(where_ + path +
                    ": the directory holds neither model.safetensors nor "
                    "model.safetensors.index.json");
      }
    } else if (!fs::exists(p, ec)) {
      throw Error(where_ + path + ": no such file or directory");
    } else if (p.extension() == ".json") {
      open_index(p);
    } else {
      open_single(p);
    }
  }

  const Located* find(const std::string& name) const {
    const auto it = tensors_.find(name);
    return it == tensors_.end() ? nullptr : &it->second;
  }
  const std::map<std::string, Located>& tensors() const { return tensors_; }
  const std::string& where() const { return where_; }
  // "tensor "name" [2, 3] BF16 in <file>"
  static std::string describe(const Located& t) {
    return "tensor " + describe_entry(*t.entry) + " in " + t.shard->path;
  }

 private:
  const Shard& map_file(const fs::path& file) {
    auto shard = std::make_unique<Shard>(file.string());
    try {
      shard->view = parse_safetensors(shard->file.bytes(), shard->path);
    } catch (const Error& e) {
      throw Error(where_ + "not a safetensors file: " + e.what());
    }
    shards_.push_back(std::move(shard));
    return *shards_.back();
  }
  void add(const Shard& shard, const SafetensorsEntry& e) {
    const auto [it, fresh] = tensors_.emplace(e.name, Located{&shard, &e});
    if (!fresh) {
      throw Error(where_ + "tensor \"" + e.name + "\" is in both " + it->second.shard->path +
                  " and " + shard.path);
    }
  }
  void open_single(const fs::path& file) {
    const Shard& shard = map_file(file);
    for (const SafetensorsEntry& e : shard.view.entries) add(shard, e);
  }
  void open_index(const fs::path& index) {
    const std::string index_path = index.string();
    const auto weight_map = weight_map_of(read_whole_file(index_path), where_ + index_path + ": ");
    // Every shard the index names must be there before anything is read.
    std::set<std::string> files;
    for (const auto& [name, file] : weight_map) files.insert(file);
    const fs::path dir = index.parent_path();
    std::map<std::string, const Shard*> by_file;
    for (const std::string& file : files) {
      if (file.empty() || fs::path(file).is_absolute() || file.find("..") != std::string::npos) {
        throw Error(where_ + index_path + ": shard name \"" + file +
                    "\" must be a file name next to the index");
      }
      std::error_code ec;
      if (!fs::is_regular_file(dir / file, ec)) {
        throw Error(where_ + index_path + ": shard " + (dir / file).string() + " is missing");
      }
    }
    for (const std::string& file : files) by_file[file] = &map_file(dir / file);
    for (const auto& [name, file] : weight_map) {
      const Shard& shard = *by_file.at(file);
      const SafetensorsEntry* e = shard.view.find(name);
      if (e == nullptr) {
        throw Error(where_ + index_path + " puts tensor \"" + name + "\" in " + shard.path +
                    ", which does not hold it");
      }
      add(shard, *e);
    }
    // A shard's tensors the index leaves out are not the checkpoint's (HF reads the index).
  }

  std::string where_;
  std::vector<std::unique_ptr<Shard>> shards_;
  std::map<std::string, Located> tensors_;
};

// --- names ------------------------------------------------------------------------------------

bool starts_with(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}
bool ends_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

// The Hugging Face name of one of the book's parameters, or "" when it has none.
std::string hf_name(const std::string& book) {
  static const std::array<std::pair<const char*, const char*>, 13> kBlock{{
      {"att.W_query.weight", "self_attn.q_proj.weight"},
      {"att.W_key.weight", "self_attn.k_proj.weight"},
      {"att.W_value.weight", "self_attn.v_proj.weight"},
      {"att.out_proj.weight", "self_attn.o_proj.weight"},
      {"att.q_norm.scale", "self_attn.q_norm.weight"},
      {"att.k_norm.scale", "self_attn.k_norm.weight"},
      {"norm1.scale", "input_layernorm.weight"},
      {"norm1.weight", "input_layernorm.weight"},
      {"norm2.scale", "post_attention_layernorm.weight"},
      {"norm2.weight", "post_attention_layernorm.weight"},
      {"ff.fc1.weight", "mlp.gate_proj.weight"},
      {"ff.fc2.weight", "mlp.up_proj.weight"},
      {"ff.fc3.weight", "mlp.down_proj.weight"},
  }};
  if (book == "tok_emb.weight") return "model.embed_tokens.weight";
  if (book == "final_norm.scale" || book == "final_norm.weight") return "model.norm.weight";
  if (book == "out_head.weight") return "lm_head.weight";
  if (!starts_with(book, "trf_blocks.")) return "";
  const size_t dot = book.find('.', 11);
  if (dot == std::string::npos) return "";
  const std::string n = book.substr(11, dot - 11);
  const std::string rest = book.substr(dot + 1);
  for (const auto& [ours, theirs] : kBlock) {
    if (rest == ours) return "model.layers." + n + "." + theirs;
  }
  return "";
}

// IEEE half -> float (subnormals, infinities and NaN included).
float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    const float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  const uint32_t bits = exp == 0x1f ? (sign | 0x7f800000u | (mant << 13))
                                    : (sign | ((exp + 112) << 23) | (mant << 13));
  return std::bit_cast<float>(bits);
}

// Elements [begin, begin + n) of an entry's bytes into out (float or double), exactly.
template <class T>
void convert(std::span<const uint8_t> bytes, const std::string& dtype, int64_t begin, int64_t n,
             T* out) {
  const uint8_t* p = bytes.data();
  if (dtype == "F32") {
    if constexpr (std::is_same_v<T, float>) {
      std::memcpy(out, p + 4 * begin, static_cast<size_t>(4 * n));
    } else {
      for (int64_t i = 0; i < n; ++i) {
        float v;
        std::memcpy(&v, p + 4 * (begin + i), 4);
        out[i] = v;
      }
    }
  } else if (dtype == "F64") {
    for (int64_t i = 0; i < n; ++i) {
      double v;
      std::memcpy(&v, p + 8 * (begin + i), 8);
      out[i] = static_cast<T>(v);
    }
  } else {
    const bool bf16 = dtype == "BF16";
    for (int64_t i = 0; i < n; ++i) {
      uint16_t h;
      std::memcpy(&h, p + 2 * (begin + i), 2);
      out[i] = bf16 ? std::bit_cast<float>(static_cast<uint32_t>(h) << 16) : half_to_float(h);
    }
  }
}

// One parameter's values from one tensor, copied a few MB at a time, each part's pages released
// once read so the file's pages and the model's values are not both resident.
void fill(const Parameter& p, const Located& t) {
  const SafetensorsEntry& e = *t.entry;
  const auto bytes = t.shard->view.bytes(e);
  const int64_t esize = safetensors_dtype_size(e.dtype);
  const int64_t n = e.numel();
  const int64_t chunk = std::max<int64_t>(1, (int64_t{4} << 20) / esize);
  for (int64_t b = 0; b < n; b += chunk) {
    const int64_t m = std::min(chunk, n - b);
    if (p.dtype() == DType::Float64) {
      convert(bytes, e.dtype, b, m, p.data<double>() + b);
    } else {
      convert(bytes, e.dtype, b, m, p.data<float>() + b);
    }
    t.shard->file.release(
        bytes.subspan(static_cast<size_t>(esize * b), static_cast<size_t>(esize * m)));
  }
}

// A Linear's weight as bfloat16 bits straight from a tensor: BF16 bits copied, the other dtypes
// read as float32 and rounded to nearest even (torch's .to(torch.bfloat16)), a few MB at a time,
// each part's file pages released once read.
void fill_bf16(Linear& linear, const Located& t) {
  const SafetensorsEntry& e = *t.entry;
  const auto bytes = t.shard->view.bytes(e);
  const int64_t esize = safetensors_dtype_size(e.dtype);
  const int64_t n = e.numel();
  const int64_t chunk = (int64_t{4} << 20) / 4;
  linear.set_bf16_weight([&](uint16_t* bits) {
    std::vector<float> wide;
    for (int64_t b = 0; b < n; b += chunk) {
      const int64_t m = std::min(chunk, n - b);
      if (e.dtype == "BF16") {
        std::memcpy(bits + b, bytes.data() + 2 * b, static_cast<size_t>(2 * m));
      } else {
        wide.resize(static_cast<size_t>(m));
        convert(bytes, e.dtype, b, m, wide.data());
        round_to_bf16_bits(wide.data(), bits + b, m);
      }
      t.shard->file.release(
          bytes.subspan(static_cast<size_t>(esize * b), static_cast<size_t>(esize * m)));
    }
  });
}

// With bf16_linears, every float32 Linear's weight is filled as bfloat16 (fill_bf16) whether or
// not it holds float32 values (a model built under Bf16LoadGuard holds none).
void load_hf(Module& model, const char* fn, const std::string& path, bool bf16_linears = false) {
  const Checkpoint ckpt(fn, path);
  const std::string where = ckpt.where() + path + ": ";
  const DType dtype = model.named_parameters().front().second.dtype();
  if (dtype != DType::Float32 && dtype != DType::Float64) {
    throw Error(where + "the model must be float32 or float64");
  }
  std::map<const ParameterImpl*, Linear*> linear_of;  // the weights that go to bfloat16
  if (bf16_linears) {
    for (Module* m : model.modules()) {
      auto* linear = dynamic_cast<Linear*>(m);
      if (linear != nullptr && linear->weight.dtype() == DType::Float32) {
        linear_of[linear->weight.get()] = linear;
      }
    }
  }
  std::vector<std::pair<Parameter, const Located*>> plan;
  std::vector<std::pair<Linear*, const Located*>> bf16_plan;
  std::set<std::string> used;
  for (const auto& [book, param] : model.named_parameters()) {
    std::string hf = hf_name(book);
    if (hf.empty()) {
      throw Error(where + "the model's parameter " + book + " has no Hugging Face name");
    }
    const Located* t = ckpt.find(hf);
    if (t == nullptr && hf == "lm_head.weight") {
      hf = "model.embed_tokens.weight";  // tied: the book reuses the embedding
      t = ckpt.find(hf);
    }
    if (t == nullptr) {
      throw Error(where + "tensor \"" + hf + "\" " + param.shape().str() + " (for " + book +
                  ") is missing from the checkpoint");
    }
    const std::string& dt = t->entry->dtype;
    if (dt != "F32" && dt != "BF16" && dt != "F16" && dt != "F64") {
      throw Error(where + Checkpoint::describe(*t) +
                  ": only F32, BF16, F16 and F64 tensors can be loaded");
    }
    if (Shape(t->entry->shape) != param.shape()) {
      throw Error(where + Checkpoint::describe(*t) +
                  " does not fit the model's config: its shape is " + shape_str(t->entry->shape) +
                  ", the model's " + book + " is " + param.shape().str());
    }
    used.insert(hf);
    if (const auto it = linear_of.find(param.get()); it != linear_of.end()) {
      bf16_plan.emplace_back(it->second, t);
      continue;
    }
    param.raw_data();  // throws, naming it, when its values were released (bf16 weights)
    plan.emplace_back(param, t);
  }
  std::string unexpected;
  for (const auto& [name, t] : ckpt.tensors()) {
    if (used.count(name) || ends_with(name, ".rotary_emb.inv_freq")) continue;
    unexpected += (unexpected.empty() ? "" : ", ") + Checkpoint::describe(t);
  }
  if (!unexpected.empty()) {
    throw Error(where + "tensor(s) the model has no place for (another config?): " + unexpected);
  }
  for (const auto& [param, t] : plan) fill(param, *t);
  for (const auto& [linear, t] : bf16_plan) fill_bf16(*linear, *t);
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

template <class Config, size_t N>
Config by_name(const char* fn, std::string_view name, std::string key,
               const std::array<std::pair<const char*, Config>, N>& known) {
  const size_t slash = key.rfind('/');
  if (slash != std::string::npos) key = key.substr(slash + 1);
  for (const char* suffix : {"-instruct", "-base"}) {
    if (ends_with(key, suffix)) key.resize(key.size() - std::strlen(suffix));
  }
  std::string list;
  for (const auto& [n, cfg] : known) {
    if (key == n) return cfg;
    list += (list.empty() ? "\"" : ", \"") + std::string(n) + "\"";
  }
  throw Error(std::string(fn) + ": unknown model name \"" + std::string(name) +
              "\"; known: " + list);
}

}  // namespace

void load_qwen3_weights(Qwen3Model& model, const std::string& path) {
  load_hf(model, "load_qwen3_weights", path);
}

void load_llama3_weights(Llama3Model& model, const std::string& path) {
  load_hf(model, "load_llama3_weights", path);
}

std::unique_ptr<Qwen3Model> load_qwen3_model_bf16(const Qwen3Config& cfg, const std::string& path) {
  std::unique_ptr<Qwen3Model> model;
  {
    const Bf16LoadGuard guard;
    model = std::make_unique<Qwen3Model>(cfg);
  }
  load_hf(*model, "load_qwen3_model_bf16", path, /*bf16_linears=*/true);
  return model;
}

std::unique_ptr<Llama3Model> load_llama3_model_bf16(const Llama3Config& cfg,
                                                    const std::string& path) {
  std::unique_ptr<Llama3Model> model;
  {
    const Bf16LoadGuard guard;
    model = std::make_unique<Llama3Model>(cfg);
  }
  load_hf(*model, "load_llama3_model_bf16", path, /*bf16_linears=*/true);
  return model;
}

Qwen3Config qwen3_config(std::string_view name) {
  static constexpr std::array<std::pair<const char*, Qwen3Config>, 6> kKnown{{
      {"qwen3-0.6b", QWEN_CONFIG_06_B},
      {"qwen3-1.7b", QWEN3_CONFIG_1_7B},
      {"qwen3-4b", QWEN3_CONFIG_4B},
      {"qwen3-8b", QWEN3_CONFIG_8B},
      {"qwen3-14b", QWEN3_CONFIG_14B},
      {"qwen3-32b", QWEN3_CONFIG_32B},
  }};
  return by_name("qwen3_config", name, lower(name), kKnown);
}

namespace {

// A Hugging Face config.json (`path` the file or its directory), its numbers read by name; every
// Error names the function, the file and the field.
class ConfigJson {
 public:
  ConfigJson(const char* fn, const std::string& path) {
    std::error_code ec;
    const fs::path file =
        fs::is_directory(path, ec) ? fs::path(path) / "config.json" : fs::path(path);
    where_ = std::string(fn) + ": " + file.string() + ": ";
    std::vector<uint8_t> bytes;
    try {
      bytes = read_whole_file(file.string());
    } catch (const Error& e) {
      throw Error(std::string(fn) + ": " + e.what());
    }
    fields_ = parse_json_object(bytes, where_);
  }
  double number(const char* key) const { return number_in(fields_, key, ""); }
  int64_t integer(const char* key) const { return integer_in(fields_, key, ""); }
  // An object field ("rope_scaling"); an Error when it is missing or not an object.
  const nlohmann::json& object(const char* key) const {
    if (!fields_.contains(key) || !fields_[key].is_object()) {
      throw Error(where_ + "\"" + std::string(key) + "\" must be an object, not " +
                  (fields_.contains(key) ? fields_[key].dump() : std::string("missing")));
    }
    return fields_[key];
  }
  const nlohmann::json& fields() const { return fields_; }
  double number_in(const nlohmann::json& j, const char* key, const std::string& parent) const {
    const std::string name = parent + key;
    if (!j.contains(key)) throw Error(where_ + "no \"" + name + "\"");
    if (!j[key].is_number()) {
      throw Error(where_ + "\"" + name + "\" is " + j[key].dump() + ", not a number");
    }
    return j[key].get<double>();
  }
  int64_t integer_in(const nlohmann::json& j, const char* key, const std::string& parent) const {
    const double v = number_in(j, key, parent);
    if (v != std::floor(v) || std::abs(v) > 1e15) {
      throw Error(where_ + "\"" + parent + key + "\" must be an integer");
    }
    return static_cast<int64_t>(v);
  }
  const std::string& where() const { return where_; }

 private:
  std::string where_;
  nlohmann::json fields_;
};

}  // namespace

Qwen3Config qwen3_config_from_json(const std::string& path) {
  const ConfigJson json("qwen3_config_from_json", path);
  const std::string& where = json.where();
  auto integer = [&](const char* key) { return json.integer(key); };
  auto number = [&](const char* key) { return json.number(key); };
  Qwen3Config cfg;
  cfg.vocab_size = integer("vocab_size");
  cfg.context_length = integer("max_position_embeddings");
  cfg.emb_dim = integer("hidden_size");
  cfg.n_heads = integer("num_attention_heads");
  cfg.n_layers = integer("num_hidden_layers");
  cfg.hidden_dim = integer("intermediate_size");
  cfg.head_dim = integer("head_dim");
  cfg.n_kv_groups = integer("num_key_value_heads");
  cfg.rope_base = number("rope_theta");
  cfg.qk_norm = true;
  try {
    check_config(cfg);
  } catch (const Error& e) {
    throw Error(where + e.what());
  }
  return cfg;
}

Llama3Config llama3_config_from_json(const std::string& path, int64_t context_length) {
  const ConfigJson json("llama3_config_from_json", path);
  Llama3Config cfg;
  cfg.vocab_size = json.integer("vocab_size");
  cfg.orig_context_length = json.integer("max_position_embeddings");
  cfg.context_length = std::min(context_length, cfg.orig_context_length);
  cfg.emb_dim = json.integer("hidden_size");
  cfg.n_heads = json.integer("num_attention_heads");
  cfg.n_layers = json.integer("num_hidden_layers");
  cfg.hidden_dim = json.integer("intermediate_size");
  cfg.n_kv_groups = json.integer("num_key_value_heads");
  cfg.rope_base = json.number("rope_theta");
  if (json.fields().contains("head_dim") && cfg.n_heads > 0) {
    const int64_t head_dim = json.integer("head_dim");
    if (head_dim * cfg.n_heads != cfg.emb_dim) {
      throw Error(json.where() + "\"head_dim\" " + std::to_string(head_dim) + " times " +
                  "\"num_attention_heads\" " + std::to_string(cfg.n_heads) +
                  " must be \"hidden_size\" " + std::to_string(cfg.emb_dim) +
                  " (the book's Llama 3 splits the embedding into its heads)");
    }
  }
  const nlohmann::json& scaling = json.object("rope_scaling");
  if (!scaling.contains("rope_type") || scaling["rope_type"] != "llama3") {
    throw Error(json.where() + "\"rope_scaling.rope_type\" must be \"llama3\" (Llama 3's " +
                "frequency smoothing), not " +
                (scaling.contains("rope_type") ? scaling["rope_type"].dump() : "missing"));
  }
  cfg.rope_freq.factor = json.number_in(scaling, "factor", "rope_scaling.");
  cfg.rope_freq.low_freq_factor = json.number_in(scaling, "low_freq_factor", "rope_scaling.");
  cfg.rope_freq.high_freq_factor = json.number_in(scaling, "high_freq_factor", "rope_scaling.");
  cfg.rope_freq.original_context_length = static_cast<double>(
      json.integer_in(scaling, "original_max_position_embeddings", "rope_scaling."));
  try {
    check_config(cfg);
  } catch (const Error& e) {
    throw Error(json.where() + e.what());
  }
  return cfg;
}

Llama3Config llama3_config(std::string_view name) {
  static constexpr std::array<std::pair<const char*, Llama3Config>, 2> kKnown{{
      {"llama3.2-1b", LLAMA32_CONFIG_1B},
      {"llama3.2-3b", LLAMA32_CONFIG_3B},
  }};
  std::string key = lower(name);
  // Hugging Face's spelling, meta-llama/Llama-3.2-1B.
  const size_t at = key.find("llama-3.2-");
  if (at != std::string::npos) key = key.substr(0, at) + "llama3.2-" + key.substr(at + 10);
  return by_name("llama3_config", name, key, kKnown);
}

}  // namespace tapegrad::nn
