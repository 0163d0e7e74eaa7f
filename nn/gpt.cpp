// The chapter 4 GPT: FeedForward, TransformerBlock, GPTModel, built in the book's order.
#include <tapegrad/nn/gpt.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/scope.h>
#include <tapegrad/nn/model_checks.h>

namespace tapegrad::nn {

void check_config(const GPTConfig& cfg) {
  check_positive("GPTConfig", "vocab_size", cfg.vocab_size);
  check_positive("GPTConfig", "context_length", cfg.context_length);
  check_positive("GPTConfig", "emb_dim", cfg.emb_dim);
  check_positive("GPTConfig", "n_heads", cfg.n_heads);
  check_positive("GPTConfig", "n_layers", cfg.n_layers);
  if (cfg.emb_dim % cfg.n_heads != 0) {
    throw Error("GPTConfig: emb_dim " + std::to_string(cfg.emb_dim) +
                " must be divisible by n_heads " + std::to_string(cfg.n_heads));
  }
  check_dropout_probability("GPTConfig: drop_rate", cfg.drop_rate);
}

namespace {

const GPTConfig& checked(const GPTConfig& cfg) {
  check_config(cfg);
  return cfg;
}

std::vector<std::shared_ptr<UnaryModule>> feed_forward_layers(const GPTConfig& cfg, DType dtype,
                                                              Generator& generator) {
  const int64_t C = cfg.emb_dim;
  std::vector<std::shared_ptr<UnaryModule>> layers;
  layers.push_back(std::make_shared<Linear>(C, 4 * C, true, dtype, "0", generator));  // [4C, C]
  layers.push_back(std::make_shared<GELU>("tanh", "1"));
  layers.push_back(std::make_shared<Linear>(4 * C, C, true, dtype, "2", generator));  // [C, 4C]
  return layers;
}

std::vector<std::shared_ptr<UnaryModule>> transformer_blocks(const GPTConfig& cfg, DType dtype,
                                                             Generator& generator) {
  std::vector<std::shared_ptr<UnaryModule>> blocks;
  for (int64_t i = 0; i < cfg.n_layers; ++i) {
    blocks.push_back(std::make_shared<TransformerBlock>(cfg, dtype, generator,
                                                        "TransformerBlock " + std::to_string(i)));
  }
  return blocks;
}

}  // namespace

// --- FeedForward ---------------------------------------------------------------------------------

FeedForward::FeedForward(const GPTConfig& cfg, DType dtype, Generator& generator, std::string name)
    : UnaryModule(std::move(name)),
      layers(feed_forward_layers(checked(cfg), dtype, generator), "layers") {
  register_module("layers", &FeedForward::layers);
}

Tensor FeedForward::forward(const Tensor& x) const {
  NameScope scope(name(), x.tape());
  return layers(x);  // [B, T, C] -> [B, T, 4C] -> [B, T, C]
}

// --- TransformerBlock ----------------------------------------------------------------------------

TransformerBlock::TransformerBlock(const GPTConfig& cfg, DType dtype, Generator& generator,
                                   std::string name)
    : UnaryModule(std::move(name)),
      att(checked(cfg).emb_dim, cfg.emb_dim, cfg.context_length, cfg.drop_rate, cfg.n_heads,
          cfg.qkv_bias, dtype, generator, "att"),
      ff(cfg, dtype, generator, "ff"),
      norm1(cfg.emb_dim, dtype, "norm1"),
      norm2(cfg.emb_dim, dtype, "norm2"),
      drop_shortcut(cfg.drop_rate, "drop_shortcut", generator) {
  register_module("att", &TransformerBlock::att);
  register_module("ff", &TransformerBlock::ff);
  register_module("norm1", &TransformerBlock::norm1);
  register_module("norm2", &TransformerBlock::norm2);
  register_module("drop_shortcut", &TransformerBlock::drop_shortcut);
}

Tensor TransformerBlock::forward(const Tensor& x) const {
  return forward(x, false);
}

Tensor TransformerBlock::forward(const Tensor& x, bool use_cache) const {
  NameScope scope(name(), x.tape());
  Tensor shortcut = x;            // [B, T, C]
  Tensor h = norm1(x);            // [B, T, C]
  h = att.forward(h, use_cache);  // [B, T, C]
  h = drop_shortcut(h);           // [B, T, C]
  h = h + shortcut;               // [B, T, C]
  shortcut = h;                   // [B, T, C]
  Tensor out = norm2(h);          // [B, T, C]
  out = ff(out);                  // [B, T, C]
  out = drop_shortcut(out);       // [B, T, C]
  return out + shortcut;          // [B, T, C]
}

// --- GPTModel ------------------------------------------------------------------------------------

GPTModel::GPTModel(const GPTConfig& cfg, DType dtype, Generator& generator, std::string name)
    : Module(std::move(name)),
      cfg_(checked(cfg)),
      tok_emb(cfg.vocab_size, cfg.emb_dim, dtype, "tok_emb", generator),
      pos_emb(cfg.context_length, cfg.emb_dim, dtype, "pos_emb", generator),
      drop_emb(cfg.drop_rate, "drop_emb", generator),
      trf_blocks(transformer_blocks(cfg, dtype, generator), "trf_blocks"),
      final_norm(cfg.emb_dim, dtype, "final_norm"),
      out_head(cfg.emb_dim, cfg.vocab_size, false, dtype, "out_head", generator) {
  register_module("tok_emb", &GPTModel::tok_emb);
  register_module("pos_emb", &GPTModel::pos_emb);
  register_module("drop_emb", &GPTModel::drop_emb);
  register_module("trf_blocks", &GPTModel::trf_blocks);
  register_module("final_norm", &GPTModel::final_norm);
  register_module("out_head", &GPTModel::out_head);
}

Tensor GPTModel::embed(const Ids& in_idx, int64_t first_position) const {
  // batch_size, seq_len = in_idx.shape; every id checked before anything is recorded.
  check_token_ids(name(), in_idx, cfg_.context_length, cfg_.vocab_size, first_position);
  const int64_t T = in_idx.size(1);
  // torch.arange(first, first + T), in the tape's arena so that a step allocates nothing.
  int64_t* positions = current_tape().arena().allocate_array<int64_t>(T);
  for (int64_t t = 0; t < T; ++t) positions[t] = first_position + t;
  Tensor tok_embeds = tok_emb(in_idx);  // [B, T, C]
  Tensor pos_embeds = pos_emb.forward(std::span<const int64_t>(positions, static_cast<size_t>(T)),
                                      Shape{T});  // [T, C]
  Tensor x = tok_embeds + pos_embeds;             // [B, T, C]
  return drop_emb(x);                             // [B, T, C]
}

Tensor GPTModel::forward(const Ids& in_idx) const {
  Tape& tape = current_tape();
  NameScope scope(name(), tape);
  Tensor x = embed(in_idx, 0);  // [B, T, C]
  x = trf_blocks(x);            // [B, T, C]
  x = final_norm(x);            // [B, T, C]
  return out_head(x);           // [B, T, V]
}

Tensor GPTModel::forward(const Ids& in_idx, bool use_cache, bool last_position_only) const {
  if (!use_cache && !last_position_only) return forward(in_idx);
  Tape& tape = current_tape();
  NameScope scope(name(), tape);
  const int64_t first = use_cache ? ptr_current_pos_ : 0;
  Tensor x = embed(in_idx, first);  // [B, T, C]
  const int64_t T = in_idx.size(1);
  for (size_t i = 0; i < trf_blocks.size(); ++i) {
    x = trf_blocks.at<TransformerBlock>(i).forward(x, use_cache);  // [B, T, C]
  }
  if (use_cache) ptr_current_pos_ += T;
  if (last_position_only) x = narrow(x, 1, T - 1, 1);  // [B, 1, C]
  x = final_norm(x);                                   // [B, T or 1, C]
  return out_head(x);                                  // [B, T or 1, V]
}

void GPTModel::reset_cache() const {
  for (size_t i = 0; i < trf_blocks.size(); ++i)
    trf_blocks.at<TransformerBlock>(i).att.reset_cache();
  ptr_current_pos_ = 0;
}

Tape* GPTModel::acquire_generation_tape() const {
  if (generation_tape_ == nullptr) return nullptr;  // moved from
  return generation_tape_->busy.exchange(true, std::memory_order_acquire) ? nullptr
                                                                          : &generation_tape_->tape;
}

void GPTModel::release_generation_tape() const {
  generation_tape_->tape.reset();  // forgets the nodes, keeps the arena's block
  generation_tape_->busy.store(false, std::memory_order_release);
}

void GPTModel::set_cache_window(int64_t window) {
  for (size_t i = 0; i < trf_blocks.size(); ++i) {
    trf_blocks.at<TransformerBlock>(i).att.set_cache_window(window);
  }
}

namespace {

std::vector<float> last_position_logits(const GPTModel& model, const Ids& prompt) {
  Tape tape;
  TapeScope scope(tape);
  NoGradGuard no_grad;
  const Tensor y =
      model.forward(prompt, /*use_cache=*/false, /*last_position_only=*/true);  // [1, 1, V]
  return {y.data<float>(), y.data<float>() + y.numel()};
}

}  // namespace

Bf16Conversion convert_to_bf16_weights(GPTModel& model, const Ids& prompt) {
  const std::vector<float> reference = last_position_logits(model, prompt);
  Bf16Conversion c;
  c.layers = use_bf16_weights(model);
  model.reset_cache();
  const std::vector<float> got = last_position_logits(model, prompt);
  double d2 = 0.0, r2 = 0.0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double d = static_cast<double>(got[i]) - reference[i];
    // Written so that a NaN wins: std::max would keep the old maximum.
    if (!(std::fabs(d) <= c.max_abs_error)) c.max_abs_error = std::fabs(d);
    d2 += d * d;
    r2 += static_cast<double>(reference[i]) * reference[i];
  }
  c.relative_error = std::sqrt(d2 / r2);
  c.same_argmax = std::max_element(got.begin(), got.end()) - got.begin() ==
                  std::max_element(reference.begin(), reference.end()) - reference.begin();
  return c;
}

}  // namespace tapegrad::nn
