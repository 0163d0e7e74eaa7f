// The models for tapegrad-dot to draw: the library's own modules (nn/attention.h,
// nn/gpt.h), so the drawing is the graph of the very modules users train.
//
// Only the simplified self-attention of §3.3 has no module (it has no parameters): it is
// composed from ops here, as the book writes it, one node per statement so that the tape order
// (the drawing's node ids) does not depend on the compiler's argument evaluation order.
#include "apps/dot_models.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/factory.h>
#include <tapegrad/graph/ids.h>
#include <tapegrad/graph/random.h>
#include <tapegrad/nn/attention.h>
#include <tapegrad/nn/gpt.h>
#include <tapegrad/ops/ops.h>

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

// --- the models: each builds its module from `g` (seeded as the book seeds it), records the
// forward (the module's NameScope gives the drawing its clusters) and returns the output ---

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
  const nn::SelfAttentionV1 module(s.d_in, s.d_out, DType::Float32, g);
  m.parameters = module.parameters();
  return module(make_inputs(s, false, false));  // [T, C] -> [T, D]
}

// §3.4.2: the same with nn.Linear(d_in, d_out, bias=False) projections.
Tensor self_attention_v2(const ModelSizes& s, Generator& g, BuiltModel& m) {
  const nn::SelfAttentionV2 module(s.d_in, s.d_out, false, DType::Float32, g);
  m.parameters = module.parameters();
  return module(make_inputs(s, false, false));  // [T, C] -> [T, D]
}

// §3.5.3: causal attention over a batch, with dropout on the attention weights (the mask
// drawn from `g` after the parameters, as torch's global generator draws it).
Tensor causal(const ModelSizes& s, Generator& g, BuiltModel& m) {
  const nn::CausalAttention module(s.d_in, s.d_out, s.seq, s.dropout, false, DType::Float32, g);
  m.parameters = module.parameters();
  return module(make_inputs(s, true, false));  // [B, T, C] -> [B, T, D]
}

// §3.6.1: H CausalAttention heads side by side ("head 0", ...), concatenated along the last dim.
Tensor multihead_wrapper(const ModelSizes& s, Generator& g, BuiltModel& m) {
  const nn::MultiHeadAttentionWrapper module(s.d_in, s.d_out, s.seq, s.dropout, s.heads, false,
                                             DType::Float32, g);
  m.parameters = module.parameters();
  return module(make_inputs(s, true, false));  // [B, T, C] -> [B, T, H·D]
}

// §3.6.2: one projection for all heads, split into H heads of d_out / H, merged back, and an
// output projection; the heads are a dimension of the tensors, not separate ops.
Tensor multihead(const ModelSizes& s, Generator& g, BuiltModel& m) {
  const nn::MultiHeadAttention module(s.d_in, s.d_out, s.seq, s.dropout, s.heads, false,
                                      DType::Float32, g);
  m.parameters = module.parameters();
  return module(make_inputs(s, true, false));  // [B, T, C] -> [B, T, D]
}

// "163,009,536"
std::string thousands(int64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// §4.6 and §5.1.2: GPTModel in training mode (dropout active) on a batch of token ids, and the
// book's loss, cross_entropy(logits.flatten(0, 1), targets.flatten()). The ids are the book's
// ("every effort moves" / "I really like", targets one token on) for 2 x 3 tokens and a vocabulary
// that holds them, else drawn from a generator of their own (the weights keep the book's draws).
Tensor gpt(const ModelSizes& s, Generator& g, BuiltModel& m) {
  const nn::GPTConfig& cfg = s.gpt;
  const nn::GPTModel model(cfg, DType::Float32, g);
  m.parameters = model.parameters();
  const int64_t B = s.batch, T = s.tokens;
  std::vector<int64_t> inputs, targets;
  if (B == 2 && T == 3 && cfg.vocab_size > 11311) {
    inputs = {16833, 3626, 6100, 40, 1107, 588};
    targets = {3626, 6100, 345, 1107, 588, 11311};
  } else {
    Generator ids_generator(0);
    std::vector<double> u(static_cast<size_t>(B * (T + 1)));
    ids_generator.uniform(u.data(), static_cast<int64_t>(u.size()));
    std::vector<int64_t> text(u.size());
    for (size_t i = 0; i < u.size(); ++i) {
      text[i] = std::min(cfg.vocab_size - 1, static_cast<int64_t>(u[i] * cfg.vocab_size));
    }
    for (int64_t b = 0; b < B; ++b) {  // a row of T + 1 ids: inputs, and targets one on
      const auto row = text.begin() + b * (T + 1);
      inputs.insert(inputs.end(), row, row + T);
      targets.insert(targets.end(), row + 1, row + T + 1);
    }
  }
  const Ids in_idx(Shape{B, T}, std::move(inputs));
  Tensor logits = named(model(in_idx), "logits");                                // [B, T, V]
  Tensor flat = named(reshape(logits, {B * T, cfg.vocab_size}), "logits_flat");  // [B·T, V]
  m.loss = named(cross_entropy(flat, targets), "loss");                          // []
  char drop[32];
  std::snprintf(drop, sizeof drop, "%g", cfg.drop_rate);
  m.description = "batch " + std::to_string(B) + ", tokens " + std::to_string(T) + "; vocab " +
                  std::to_string(cfg.vocab_size) + ", context " +
                  std::to_string(cfg.context_length) + ", emb " + std::to_string(cfg.emb_dim) +
                  ", heads " + std::to_string(cfg.n_heads) + ", layers " +
                  std::to_string(cfg.n_layers) + ", drop_rate " + drop +
                  (cfg.qkv_bias ? ", qkv_bias" : "") + "; " + thousands(model.num_parameters()) +
                  " parameters; loss = cross_entropy(logits, targets)";
  return logits;
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
    {"gpt", "GPTModel (§4.6)", 123, gpt, true, false, true, true},
};

constexpr std::array<std::string_view, std::size(kModels)> kModelNames = [] {
  std::array<std::string_view, std::size(kModels)> names{};
  for (size_t i = 0; i < names.size(); ++i) names[i] = kModels[i].name;
  return names;
}();

// The tool's own checks, before a module sees the sizes: its messages name the tool's flags.
void check_sizes(std::string_view model, const ModelSizes& s) {
  if (model == "gpt") {
    for (auto [value, what] : {std::pair{s.batch, "batch"}, {s.tokens, "tokens"}}) {
      if (value < 1) {
        throw Error("gpt: " + std::string(what) + " is " + std::to_string(value) +
                    ", must be at least 1");
      }
    }
    nn::check_config(s.gpt);
    if (s.tokens > s.gpt.context_length) {
      throw Error("gpt: tokens " + std::to_string(s.tokens) + " is more than the context length " +
                  std::to_string(s.gpt.context_length));
    }
    return;
  }
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
  // A generator of the tool's own, seeded as the book's torch.manual_seed: the same draws as
  // manual_seed(seed) and the modules' default generator, without touching the global one.
  Generator g(sizes.seed >= 0 ? static_cast<uint64_t>(sizes.seed) : entry->book_seed);
  BuiltModel m;
  m.title = entry->title;
  m.output = entry->forward(sizes, g, m);
  if (!m.loss.defined()) {
    m.loss = named(sum(m.output), "loss");  // outside the module: the model ends at its output
    m.description = sizes_text(*entry, sizes) + "; loss = sum of the output";
  }
  if (name == "simplified") m.description += "; the inputs require grad";
  return m;
}

}  // namespace tapegrad::tools
