// Pretrained GPT-2: the four configurations, inferring one from a checkpoint, and loading
// Hugging Face's GPT-2 tensors into GPTModel through a staging state_dict (all or nothing).
#include <tapegrad/nn/gpt2_weights.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <type_traits>
#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/io/safetensors.h>

namespace tapegrad::nn {

namespace {

struct NamedConfig {
  const char* names[4];
  GPTConfig cfg;
};

constexpr NamedConfig kSizes[] = {
    {{"gpt2-small (124M)", "gpt2", "124M", "small"}, GPT2_CONFIG_124M},
    {{"gpt2-medium (355M)", "gpt2-medium", "355M", "medium"}, GPT2_CONFIG_355M},
    {{"gpt2-large (774M)", "gpt2-large", "774M", "large"}, GPT2_CONFIG_774M},
    {{"gpt2-xl (1558M)", "gpt2-xl", "1558M", "xl"}, GPT2_CONFIG_1558M},
};

std::string shape_str(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

// IEEE half -> float (subnormals, infinities and NaN included).
float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  if (exp == 0) {  // zero or subnormal: mant * 2^-24
    const float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  const uint32_t bits = exp == 0x1f ? (sign | 0x7f800000u | (mant << 13))
                                    : (sign | ((exp + 112) << 23) | (mant << 13));
  return std::bit_cast<float>(bits);
}

// Element `i` of a tensor's little-endian bytes (dtype checked by the caller).
double element(std::span<const uint8_t> bytes, const std::string& dtype, int64_t i) {
  const size_t k = static_cast<size_t>(i);
  if (dtype == "F32") {
    float v;
    std::memcpy(&v, bytes.data() + 4 * k, 4);
    return v;
  }
  if (dtype == "F64") {
    double v;
    std::memcpy(&v, bytes.data() + 8 * k, 8);
    return v;
  }
  uint16_t h;
  std::memcpy(&h, bytes.data() + 2 * k, 2);
  if (dtype == "BF16") return std::bit_cast<float>(static_cast<uint32_t>(h) << 16);
  return half_to_float(h);  // F16
}

// One parameter's load, planned while the file is checked and run once all of it passed:
// `fill` writes the parameter's elements from the mapped file, then releases the pages it read.
struct Write {
  std::string name;  // the book's parameter name
  std::vector<int64_t> shape;
  std::function<void(const Parameter&)> fill;
};

// Plans the loads of the checkpoint's tensors by Hugging Face name, remembering which entries
// were used. Float32 entries into float32 parameters are copied row by row (memcpy); others are
// converted element by element.
class Reader {
 public:
  Reader(const SafetensorsView& view, const MappedFile& file, std::string path, DType dtype)
      : view_(view), file_(file), path_(std::move(path)), dtype_(dtype) {
    if (view.find("transformer.wte.weight") != nullptr) prefix_ = "transformer.";
  }

  // The entry `name` (with the file's prefix), checked to have shape `dims` and a float dtype.
  const SafetensorsEntry& need(const std::string& name, const std::vector<int64_t>& dims) {
    const std::string full = prefix_ + name;
    const SafetensorsEntry* e = view_.find(full);
    if (e == nullptr) {
      throw Error(where() + "tensor \"" + full + "\" " + shape_str(dims) +
                  " is missing from the file");
    }
    if (e->shape != dims) {
      throw Error(where() + "tensor " + describe_entry(*e) + " does not fit the model's config: " +
                  "its shape is " + shape_str(e->shape) + ", the model needs " + shape_str(dims));
    }
    check_dtype(*e);
    used_.insert(e->name);
    return *e;
  }
  void check_dtype(const SafetensorsEntry& e) const {
    if (e.dtype != "F32" && e.dtype != "F64" && e.dtype != "F16" && e.dtype != "BF16") {
      throw Error(where() + "tensor " + describe_entry(e) +
                  ": only F32, F64, F16 and BF16 tensors can be loaded");
    }
  }

  // Columns [begin, begin + count) of the 2-D entry, transposed: [count, rows]
  // (Conv1D [in, out] -> nn.Linear [out, in]).
  Write columns_transposed(std::string name, const SafetensorsEntry& e, int64_t begin,
                           int64_t count) const {
    const int64_t rows = e.shape[0], cols = e.shape[1];
    return {
        std::move(name), {count, rows}, [this, &e, begin, count, rows, cols](const Parameter& p) {
          const auto bytes = view_.bytes(e);
          fill(p, count, rows,
               [&](int64_t o, int64_t r) { return element(bytes, e.dtype, r * cols + begin + o); });
          file_.release(bytes);
        }};
  }
  // Elements [begin, begin + count) of the 1-D entry.
  Write slice(std::string name, const SafetensorsEntry& e, int64_t begin, int64_t count) const {
    return {std::move(name), {count}, [this, &e, begin, count](const Parameter& p) {
              copy_rows(p, e, begin, 1, count);
            }};
  }
  // The 2-D entry as it is.
  Write whole(std::string name, const SafetensorsEntry& e) const {
    return {std::move(name), e.shape,
            [this, &e](const Parameter& p) { copy_rows(p, e, 0, e.shape[0], e.shape[1]); }};
  }

  const std::string& prefix() const { return prefix_; }
  const std::set<std::string>& used() const { return used_; }
  std::string where() const { return "load_gpt2_weights: " + path_ + ": "; }

 private:
  // p's `rows` x `cols` elements (r, c) = at(r, c).
  template <class F>
  void fill(const Parameter& p, int64_t rows, int64_t cols, F at) const {
    auto run = [&](auto* out) {
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < cols; ++c) {
          out[r * cols + c] = static_cast<std::remove_pointer_t<decltype(out)>>(at(r, c));
        }
      }
    };
    if (dtype_ == DType::Float64) {
      run(p.data<double>());
    } else {
      run(p.data<float>());
    }
  }
  // `rows` rows of `cols` elements of the entry, from element `first` on, into p; the file's
  // pages are released every few MB as they are copied, so the loader's peak memory stays near
  // the model's size.
  void copy_rows(const Parameter& p, const SafetensorsEntry& e, int64_t first, int64_t rows,
                 int64_t cols) const {
    const auto bytes = view_.bytes(e);
    const int64_t esize = safetensors_dtype_size(e.dtype);
    const int64_t chunk =
        std::max<int64_t>(1, (int64_t{4} << 20) / std::max<int64_t>(1, cols * esize));
    for (int64_t r0 = 0; r0 < rows; r0 += chunk) {
      const int64_t r1 = std::min(rows, r0 + chunk);
      const int64_t begin = first + r0 * cols, n = (r1 - r0) * cols;
      if (dtype_ == DType::Float32 && e.dtype == "F32") {
        std::memcpy(p.data<float>() + r0 * cols, bytes.data() + 4 * begin,
                    static_cast<size_t>(4 * n));
      } else if (dtype_ == DType::Float64) {
        double* out = p.data<double>() + r0 * cols;
        for (int64_t i = 0; i < n; ++i) out[i] = element(bytes, e.dtype, begin + i);
      } else {
        float* out = p.data<float>() + r0 * cols;
        for (int64_t i = 0; i < n; ++i)
          out[i] = static_cast<float>(element(bytes, e.dtype, begin + i));
      }
      file_.release(
          bytes.subspan(static_cast<size_t>(esize * begin), static_cast<size_t>(esize * n)));
    }
  }

  const SafetensorsView& view_;
  const MappedFile& file_;
  std::string path_;
  DType dtype_;
  std::string prefix_;
  std::set<std::string> used_;
};

bool starts_with(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}
bool ends_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

// The block index of "h.<N>.<rest>" (after the prefix), or -1.
int64_t block_index(std::string_view name) {
  if (!starts_with(name, "h.")) return -1;
  name.remove_prefix(2);
  int64_t n = 0;
  size_t i = 0;
  for (; i < name.size() && name[i] >= '0' && name[i] <= '9' && i < 9; ++i)
    n = n * 10 + (name[i] - '0');
  if (i == 0 || i >= name.size() || name[i] != '.') return -1;
  return n;
}

// HF's attention buffers, not weights.
bool is_ignored_buffer(std::string_view rest) {
  return block_index(rest) >= 0 &&
         (ends_with(rest, ".attn.bias") || ends_with(rest, ".attn.masked_bias"));
}

}  // namespace

GPTConfig gpt2_config(std::string_view name) {
  std::string known;
  for (const NamedConfig& s : kSizes) {
    for (const char* n : s.names) {
      if (name == n) return s.cfg;
      known += std::string(known.empty() ? "" : ", ") + "\"" + n + "\"";
    }
  }
  throw Error("gpt2_config: unknown GPT-2 model name \"" + std::string(name) +
              "\"; known: " + known);
}

GPTConfig infer_gpt2_config(const std::string& path, std::string_view model_name, int64_t n_heads) {
  const std::string where = "infer_gpt2_config: " + path + ": ";
  const MappedFile file(path);  // only the header is read
  const SafetensorsView view = parse_safetensors(file.bytes(), path);
  const std::string prefix = view.find("transformer.wte.weight") ? "transformer." : "";
  auto matrix = [&](const std::string& name) {
    const SafetensorsEntry* e = view.find(prefix + name);
    if (e == nullptr) throw Error(where + "no tensor \"" + name + "\": not a GPT-2 checkpoint");
    if (e->shape.size() != 2) {
      throw Error(where + "tensor " + describe_entry(*e) + " must be a matrix");
    }
    return e->shape;
  };
  const auto wte = matrix("wte.weight");
  const auto wpe = matrix("wpe.weight");
  if (wpe[1] != wte[1]) {
    throw Error(where + "wpe.weight " + shape_str(wpe) + " and wte.weight " + shape_str(wte) +
                " differ in emb_dim");
  }
  std::set<int64_t> blocks;
  for (const SafetensorsEntry& e : view.entries) {
    if (!starts_with(e.name, prefix)) continue;
    const int64_t n = block_index(std::string_view(e.name).substr(prefix.size()));
    if (n >= 0) blocks.insert(n);
  }
  const int64_t n_layers = static_cast<int64_t>(blocks.size());
  if (n_layers == 0 || *blocks.rbegin() != n_layers - 1) {
    throw Error(where + "the blocks h.N present are not h.0 .. h." + std::to_string(n_layers - 1));
  }
  GPTConfig cfg{wte[0], wpe[0], wte[1], 0, n_layers, 0.0, true};
  if (n_heads > 0) {
    cfg.n_heads = n_heads;
  } else if (!model_name.empty()) {
    const GPTConfig named = gpt2_config(model_name);
    if (named.emb_dim != cfg.emb_dim || named.n_layers != cfg.n_layers) {
      throw Error(where + "the file has emb_dim " + std::to_string(cfg.emb_dim) + " and " +
                  std::to_string(n_layers) + " layers, \"" + std::string(model_name) + "\" has " +
                  std::to_string(named.emb_dim) + " and " + std::to_string(named.n_layers));
    }
    cfg.n_heads = named.n_heads;
  } else {
    for (const NamedConfig& s : kSizes) {
      if (s.cfg.emb_dim == cfg.emb_dim) cfg.n_heads = s.cfg.n_heads;
    }
    if (cfg.n_heads == 0) {
      throw Error(where + "emb_dim " + std::to_string(cfg.emb_dim) +
                  " is not one of GPT-2's sizes (768, 1024, 1280, 1600): give n_heads");
    }
  }
  check_config(cfg);
  return cfg;
}

void load_gpt2_weights(GPTModel& model, const std::string& path) {
  const GPTConfig& cfg = model.config();
  const int64_t V = cfg.vocab_size, T = cfg.context_length, C = cfg.emb_dim;
  const MappedFile file(path);  // read in place: no copy of the file in memory
  SafetensorsView view;
  try {
    view = parse_safetensors(file.bytes(), path);
  } catch (const Error& e) {
    throw Error(std::string("load_gpt2_weights: not a safetensors file: ") + e.what());
  }
  const DType dtype = model.tok_emb.weight.dtype();
  Reader in(view, file, path, dtype);

  // Every load planned and checked first, so the model is untouched unless all of it fits;
  // then each parameter is written once, straight from the file (no staging copy).
  std::vector<Write> plan;  // the book's names
  const SafetensorsEntry& wte = in.need("wte.weight", {V, C});
  plan.push_back(in.whole("tok_emb.weight", wte));
  plan.push_back(in.whole("pos_emb.weight", in.need("wpe.weight", {T, C})));
  auto norm = [&](const std::string& hf, const std::string& book) {
    plan.push_back(in.slice(book + ".scale", in.need(hf + ".weight", {C}), 0, C));
    plan.push_back(in.slice(book + ".shift", in.need(hf + ".bias", {C}), 0, C));
  };
  // A Conv1D [in, out] as an nn.Linear [out, in] (columns [begin, begin + out) of the weight).
  auto linear = [&](const SafetensorsEntry& w, const SafetensorsEntry& b, int64_t begin,
                    int64_t out, const std::string& book) {
    plan.push_back(in.columns_transposed(book + ".weight", w, begin, out));
    plan.push_back(in.slice(book + ".bias", b, begin, out));
  };
  for (int64_t i = 0; i < cfg.n_layers; ++i) {
    const std::string h = "h." + std::to_string(i) + ".";
    const std::string blk = "trf_blocks." + std::to_string(i) + ".";
    norm(h + "ln_1", blk + "norm1");
    const auto& qkv_w = in.need(h + "attn.c_attn.weight", {C, 3 * C});  // q | k | v
    const auto& qkv_b = in.need(h + "attn.c_attn.bias", {3 * C});
    linear(qkv_w, qkv_b, 0, C, blk + "att.W_query");
    linear(qkv_w, qkv_b, C, C, blk + "att.W_key");
    linear(qkv_w, qkv_b, 2 * C, C, blk + "att.W_value");
    linear(in.need(h + "attn.c_proj.weight", {C, C}), in.need(h + "attn.c_proj.bias", {C}), 0, C,
           blk + "att.out_proj");
    norm(h + "ln_2", blk + "norm2");
    linear(in.need(h + "mlp.c_fc.weight", {C, 4 * C}), in.need(h + "mlp.c_fc.bias", {4 * C}), 0,
           4 * C, blk + "ff.layers.0");
    linear(in.need(h + "mlp.c_proj.weight", {4 * C, C}), in.need(h + "mlp.c_proj.bias", {C}), 0, C,
           blk + "ff.layers.2");
  }
  norm("ln_f", "final_norm");
  // GPT-2 ties the head to wte; a GPT2LMHeadModel file may hold it as lm_head.weight.
  const SafetensorsEntry* head = view.find("lm_head.weight");
  if (head != nullptr) {
    if (head->shape != std::vector<int64_t>{V, C}) {
      throw Error(in.where() + "tensor " + describe_entry(*head) +
                  " does not fit the model's config: its shape is " + shape_str(head->shape) +
                  ", the model needs " + shape_str({V, C}));
    }
    in.check_dtype(*head);
  }
  plan.push_back(in.whole("out_head.weight", head != nullptr ? *head : wte));

  std::vector<std::string> unexpected;
  for (const SafetensorsEntry& e : view.entries) {
    if (in.used().count(e.name) || (head != nullptr && &e == head)) continue;
    if (starts_with(e.name, in.prefix()) &&
        is_ignored_buffer(std::string_view(e.name).substr(in.prefix().size()))) {
      continue;
    }
    unexpected.push_back(describe_entry(e));
  }
  if (!unexpected.empty()) {
    std::string list;
    for (const auto& u : unexpected) list += (list.empty() ? "" : ", ") + u;
    throw Error(in.where() + "unexpected tensor(s) for a model of " + std::to_string(cfg.n_layers) +
                " layers: " + list);
  }
  // Every parameter planned once, with its shape (the buffers, the masks, are computed).
  std::map<std::string, Parameter> params;
  for (const auto& [name, p] : model.named_parameters()) params.emplace(name, p);
  std::set<std::string> planned;
  for (const Write& w : plan) {
    const auto it = params.find(w.name);
    if (it == params.end()) throw Error(in.where() + "the model has no parameter " + w.name);
    if (it->second.shape() != Shape(w.shape)) {
      throw Error(in.where() + "parameter " + w.name + " " + it->second.shape().str() +
                  " does not match the file's " + shape_str(w.shape));
    }
    it->second.raw_data();  // throws, naming it, when its values were released (bf16 weights)
    planned.insert(w.name);
  }
  for (const auto& [name, p] : params) {
    if (!planned.count(name)) throw Error(in.where() + "no tensor maps to parameter " + name);
  }
  for (const Write& w : plan) w.fill(params.at(w.name));
}

}  // namespace tapegrad::nn
