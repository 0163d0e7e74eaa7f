// The chapter-3 attention models, written as the book writes them, for tapegrad-dot to draw.
//
// Each statement records one node, in the book's order: C++ leaves the evaluation order of
// function arguments unspecified, so nesting calls that create nodes (a Parameter converted
// to a Tensor, an op) would let the compiler choose the tape order, and the drawing's node ids.
#include "tools/models.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

#include "graph/error.h"
#include "graph/factory.h"
#include "graph/random.h"
#include "ops/ops.h"

namespace tapegrad::tools {

namespace {

// §3.3: "Your journey starts with one step", 3-dim embeddings.
constexpr double kBookInputs[6][3] = {
    {0.43, 0.15, 0.89},  // Your     (x^1)
    {0.55, 0.87, 0.66},  // journey  (x^2)
    {0.57, 0.85, 0.64},  // starts   (x^3)
    {0.22, 0.58, 0.33},  // with     (x^4)
    {0.77, 0.25, 0.10},  // one      (x^5)
    {0.05, 0.80, 0.55},  // step     (x^6)
};

Tensor named(Tensor t, const char* name) {
  t.set_name(name);
  return t;
}

// One sequence [T, d_in] (the book's `inputs`), or a batch [B, T, d_in] of B copies of it (the
// book's torch.stack((inputs, inputs))). Other sizes than the book's draw torch.rand values
// from a generator of their own, so the parameters still get the book's draws.
Tensor make_inputs(const ModelSizes& s, bool batched, bool requires_grad) {
  std::vector<double> one(static_cast<size_t>(s.seq * s.d_in));
  if (s.seq == 6 && s.d_in == 3) {
    for (size_t i = 0; i < one.size(); ++i) one[i] = kBookInputs[i / 3][i % 3];
  } else {
    std::vector<float> drawn(one.size());
    Generator inputs_generator(0);
    inputs_generator.uniform(drawn.data(), static_cast<int64_t>(drawn.size()));
    for (size_t i = 0; i < one.size(); ++i) one[i] = drawn[i];
  }
  if (!batched) {
    return named(from_values({s.seq, s.d_in}, one, DType::Float32, requires_grad), "inputs");
  }
  std::vector<double> values;
  values.reserve(static_cast<size_t>(s.batch) * one.size());
  for (int64_t b = 0; b < s.batch; ++b) values.insert(values.end(), one.begin(), one.end());
  return named(from_values({s.batch, s.seq, s.d_in}, values, DType::Float32, requires_grad),
               "batch");
}

// nn.Parameter(torch.rand(rows, cols)), the weights of SelfAttention_v1.
Parameter rand_parameter(int64_t rows, int64_t cols, const char* name, Generator& g) {
  Parameter p(Shape{rows, cols}, DType::Float32, name);
  g.uniform(p.data<float>(), p.numel());
  return p;
}

// nn.Linear(in, out, bias): weight [out, in] then bias [out], drawn as torch draws them. Its
// forward records inside NameScope(name), so each projection is a cluster with its weights.
struct Linear {
  std::string name;
  Parameter weight;
  Parameter bias;

  Linear(int64_t in, int64_t out, bool with_bias, const std::string& layer_name,
         const std::string& param_prefix, Generator& g)
      : name(layer_name),
        weight(Shape{out, in}, DType::Float32, param_prefix + layer_name + ".weight") {
    linear_init_weight(weight.data<float>(), out, in, g);
    if (with_bias) {
      bias = Parameter(Shape{out}, DType::Float32, param_prefix + layer_name + ".bias");
      linear_init_bias(bias.data<float>(), out, in, g);
    }
  }

  Tensor operator()(const Tensor& x) const {
    NameScope scope(name, x.tape());
    Tensor w = x.tape().parameter(weight);
    if (!bias.defined()) return linear(x, w);
    Tensor b = x.tape().parameter(bias);
    return linear(x, w, b);
  }

  void append_parameters(std::vector<Parameter>& out) const {
    out.push_back(weight);
    if (bias.defined()) out.push_back(bias);
  }
};

// softmax(scores / √d_k, -1), as the book writes it.
Tensor attention_weights(const Tensor& scores, int64_t d_k) {
  Tensor scaled = scores / std::sqrt(static_cast<double>(d_k));
  return named(softmax(scaled, -1), "attn_weights");
}

// §3.5.3 CausalAttention's forward, inside the caller's scope.
struct CausalHead {
  Linear W_query, W_key, W_value;
  double dropout_p;

  CausalHead(const ModelSizes& s, const std::string& prefix, Generator& g)
      : W_query(s.d_in, s.d_out, false, "W_query", prefix, g),
        W_key(s.d_in, s.d_out, false, "W_key", prefix, g),
        W_value(s.d_in, s.d_out, false, "W_value", prefix, g),
        dropout_p(s.dropout) {}

  Tensor operator()(const Tensor& x, Generator& g) const {
    Tensor keys = named(W_key(x), "keys");                          // [B, T, D]
    Tensor queries = named(W_query(x), "queries");                  // [B, T, D]
    Tensor values = named(W_value(x), "values");                    // [B, T, D]
    Tensor keys_t = transpose(keys, 1, 2);                          // [B, D, T]
    Tensor scores = named(matmul(queries, keys_t), "attn_scores");  // [B, T, T]
    Tensor masked = causal_mask(scores);                            // [B, T, T]
    Tensor weights = attention_weights(masked, keys.size(-1));      // [B, T, T]
    Tensor dropped = dropout(weights, dropout_p, true, g);          // [B, T, T]
    return named(matmul(dropped, values), "context_vec");           // [B, T, D]
  }

  void append_parameters(std::vector<Parameter>& out) const {
    W_query.append_parameters(out);
    W_key.append_parameters(out);
    W_value.append_parameters(out);
  }
};

// --- the models: each records its forward inside its module's scope and returns its output ---

// §3.3.2: no weights; the inputs require grad so that a backward has somewhere to go.
Tensor simplified(const ModelSizes& s, Generator&, BuiltModel&) {
  Tensor inputs = make_inputs(s, false, true);  // [T, C]
  NameScope scope("simplified self-attention");
  Tensor inputs_t = t(inputs);                                     // [C, T]
  Tensor scores = named(matmul(inputs, inputs_t), "attn_scores");  // [T, T]
  Tensor weights = named(softmax(scores, -1), "attn_weights");     // [T, T]
  return named(matmul(weights, inputs), "all_context_vecs");       // [T, C]
}

// §3.4.2: raw weights W [d_in, d_out] from torch.rand, used as x·W.
Tensor self_attention_v1(const ModelSizes& s, Generator& g, BuiltModel& m) {
  Parameter W_query = rand_parameter(s.d_in, s.d_out, "W_query", g);
  Parameter W_key = rand_parameter(s.d_in, s.d_out, "W_key", g);
  Parameter W_value = rand_parameter(s.d_in, s.d_out, "W_value", g);
  m.parameters = {W_query, W_key, W_value};
  Tensor x = make_inputs(s, false, false);  // [T, C]
  NameScope scope("SelfAttention_v1");
  Tensor wk = W_key;
  Tensor keys = named(matmul(x, wk), "keys");  // [T, D]
  Tensor wq = W_query;
  Tensor queries = named(matmul(x, wq), "queries");  // [T, D]
  Tensor wv = W_value;
  Tensor values = named(matmul(x, wv), "values");                 // [T, D]
  Tensor keys_t = t(keys);                                        // [D, T]
  Tensor scores = named(matmul(queries, keys_t), "attn_scores");  // [T, T]
  Tensor weights = attention_weights(scores, keys.size(-1));      // [T, T]
  return named(matmul(weights, values), "context_vec");           // [T, D]
}

// §3.4.2: the same with nn.Linear(d_in, d_out, bias=False) projections.
Tensor self_attention_v2(const ModelSizes& s, Generator& g, BuiltModel& m) {
  const Linear W_query(s.d_in, s.d_out, false, "W_query", "", g);
  const Linear W_key(s.d_in, s.d_out, false, "W_key", "", g);
  const Linear W_value(s.d_in, s.d_out, false, "W_value", "", g);
  for (const Linear* l : {&W_query, &W_key, &W_value}) l->append_parameters(m.parameters);
  Tensor x = make_inputs(s, false, false);  // [T, C]
  NameScope scope("SelfAttention_v2");
  Tensor keys = named(W_key(x), "keys");                          // [T, D]
  Tensor queries = named(W_query(x), "queries");                  // [T, D]
  Tensor values = named(W_value(x), "values");                    // [T, D]
  Tensor keys_t = t(keys);                                        // [D, T]
  Tensor scores = named(matmul(queries, keys_t), "attn_scores");  // [T, T]
  Tensor weights = attention_weights(scores, keys.size(-1));      // [T, T]
  return named(matmul(weights, values), "context_vec");           // [T, D]
}

// §3.5.3: causal attention over a batch, with dropout on the attention weights.
Tensor causal(const ModelSizes& s, Generator& g, BuiltModel& m) {
  const CausalHead head(s, "", g);
  head.append_parameters(m.parameters);
  Tensor x = make_inputs(s, true, false);  // [B, T, C]
  NameScope scope("CausalAttention");
  return head(x, g);  // [B, T, D]
}

// §3.6.1: H CausalAttention heads side by side, concatenated along the last dim.
Tensor multihead_wrapper(const ModelSizes& s, Generator& g, BuiltModel& m) {
  std::vector<CausalHead> heads;
  heads.reserve(static_cast<size_t>(s.heads));
  for (int64_t h = 0; h < s.heads; ++h) {
    heads.emplace_back(s, "heads." + std::to_string(h) + ".", g);
    heads.back().append_parameters(m.parameters);
  }
  Tensor x = make_inputs(s, true, false);  // [B, T, C]
  NameScope scope("MultiHeadAttentionWrapper");
  std::vector<Tensor> outputs;
  for (int64_t h = 0; h < s.heads; ++h) {
    NameScope head_scope("head " + std::to_string(h));
    outputs.push_back(heads[static_cast<size_t>(h)](x, g));  // [B, T, D]
  }
  return named(cat(outputs, -1), "context_vec");  // [B, T, H·D]
}

// §3.6.2: one projection for all heads, split into H heads of d_out / H, merged back, and an
// output projection; the heads are a dimension of the tensors, not separate ops.
Tensor multihead(const ModelSizes& s, Generator& g, BuiltModel& m) {
  const int64_t head_dim = s.d_out / s.heads;
  const Linear W_query(s.d_in, s.d_out, false, "W_query", "", g);
  const Linear W_key(s.d_in, s.d_out, false, "W_key", "", g);
  const Linear W_value(s.d_in, s.d_out, false, "W_value", "", g);
  const Linear out_proj(s.d_out, s.d_out, true, "out_proj", "", g);
  for (const Linear* l : {&W_query, &W_key, &W_value, &out_proj}) {
    l->append_parameters(m.parameters);
  }
  Tensor x = make_inputs(s, true, false);  // [B, T, C]
  NameScope scope("MultiHeadAttention");
  Tensor keys_flat = W_key(x);                                            // [B, T, D]
  Tensor queries_flat = W_query(x);                                       // [B, T, D]
  Tensor values_flat = W_value(x);                                        // [B, T, D]
  Tensor keys = named(split_heads(keys_flat, s.heads), "keys");           // [B, H, T, D/H]
  Tensor values = named(split_heads(values_flat, s.heads), "values");     // [B, H, T, D/H]
  Tensor queries = named(split_heads(queries_flat, s.heads), "queries");  // [B, H, T, D/H]
  Tensor keys_t = transpose(keys, 2, 3);                                  // [B, H, D/H, T]
  Tensor scores = named(matmul(queries, keys_t), "attn_scores");          // [B, H, T, T]
  Tensor masked = causal_mask(scores);                                    // [B, H, T, T]
  Tensor weights = attention_weights(masked, head_dim);                   // [B, H, T, T]
  Tensor dropped = dropout(weights, s.dropout, true, g);                  // [B, H, T, T]
  Tensor context = matmul(dropped, values);                               // [B, H, T, D/H]
  Tensor merged = named(merge_heads(context), "context_vec");             // [B, T, D]
  return out_proj(merged);                                                // [B, T, D]
}

struct ModelEntry {
  std::string_view name;
  const char* title;
  uint64_t book_seed;  // the torch.manual_seed before the book builds it
  Tensor (*forward)(const ModelSizes&, Generator&, BuiltModel&);
  bool batched, uses_d_out, uses_heads, uses_dropout;
};

constexpr ModelEntry kModels[] = {
    {"simplified", "Simplified self-attention (§3.3.2)", 123, simplified, false, false, false,
     false},
    {"self-attention-v1", "SelfAttention_v1 (§3.4.2)", 123, self_attention_v1, false, true, false,
     false},
    {"self-attention-v2", "SelfAttention_v2 (§3.4.2)", 789, self_attention_v2, false, true, false,
     false},
    {"causal", "CausalAttention (§3.5.3)", 123, causal, true, true, false, true},
    {"multihead-wrapper", "MultiHeadAttentionWrapper (§3.6.1)", 123, multihead_wrapper, true, true,
     true, true},
    {"multihead", "MultiHeadAttention (§3.6.2)", 123, multihead, true, true, true, true},
};

constexpr std::array<std::string_view, std::size(kModels)> kModelNames = [] {
  std::array<std::string_view, std::size(kModels)> names{};
  for (size_t i = 0; i < names.size(); ++i) names[i] = kModels[i].name;
  return names;
}();

void check_sizes(std::string_view model, const ModelSizes& s) {
  for (auto [value, what] : {std::pair{s.batch, "batch"},
                             {s.seq, "seq"},
                             {s.d_in, "d_in"},
                             {s.d_out, "d_out"},
                             {s.heads, "heads"}}) {
    if (value < 1) {
      throw Error(std::string(model) + ": " + what + " is " + std::to_string(value) +
                  ", must be at least 1");
    }
  }
  if (!(s.dropout >= 0.0 && s.dropout < 1.0)) {
    throw Error(std::string(model) + ": dropout " + std::to_string(s.dropout) +
                " must be in [0, 1)");
  }
  if (model == "multihead" && s.d_out % s.heads != 0) {
    throw Error("multihead: d_out " + std::to_string(s.d_out) + " must be divisible by heads " +
                std::to_string(s.heads));
  }
}

// "batch 2, seq 6, d_in 3, d_out 2, heads 2, dropout 0": the sizes the model uses.
std::string sizes_text(const ModelEntry& e, const ModelSizes& s) {
  std::string t = e.batched ? "batch " + std::to_string(s.batch) + ", " : "";
  t += "seq " + std::to_string(s.seq) + ", d_in " + std::to_string(s.d_in);
  if (e.uses_d_out) t += ", d_out " + std::to_string(s.d_out);
  if (e.uses_heads) t += ", heads " + std::to_string(s.heads);
  if (e.uses_dropout) {
    char p[32];
    std::snprintf(p, sizeof p, "%g", s.dropout);
    t += std::string(", dropout ") + p;
  }
  return t;
}

}  // namespace

std::span<const std::string_view> model_names() {
  return kModelNames;
}

BuiltModel build_model(Tape& tape, std::string_view name, const ModelSizes& sizes) {
  const ModelEntry* entry = nullptr;
  for (const ModelEntry& e : kModels) {
    if (e.name == name) entry = &e;
  }
  if (entry == nullptr) {
    std::string known;
    for (std::string_view m : kModelNames) known += (known.empty() ? "" : ", ") + std::string(m);
    throw Error("unknown model \"" + std::string(name) + "\"; the models are " + known);
  }
  check_sizes(name, sizes);
  TapeScope on_tape(tape);
  Generator g(sizes.seed >= 0 ? static_cast<uint64_t>(sizes.seed) : entry->book_seed);
  BuiltModel m;
  m.title = entry->title;
  m.output = entry->forward(sizes, g, m);
  m.loss = named(sum(m.output), "loss");  // outside the module: the model ends at its output
  m.description = sizes_text(*entry, sizes) + "; loss = sum of the output";
  if (name == "simplified") m.description += "; the inputs require grad";
  return m;
}

}  // namespace tapegrad::tools
