// docs/models.md's "MyGPT" model definition, compiled and checked against nn::GPTModel (same keys,
// same weights, same logits): keep the two in sync (the block between the markers is copied
// from docs/models.md, which the docs_blocks test also builds and runs).
#include <catch2/catch.hpp>
#include <memory>
#include <numeric>
#include <vector>

#include <tapegrad/tapegrad.h>

using namespace tapegrad;

namespace {
// --- README begin
// The book's GPTModel (§4.6) on nn::Module: members built in the book's order, then registered
// under the book's names, so manual_seed(123) gives torch's weights and torch's state_dict keys.
struct MyGPT : nn::Module {
  nn::Embedding tok_emb, pos_emb;  // [V, C], [context_length, C]
  nn::Dropout drop_emb;
  nn::Sequential trf_blocks;  // n_layers x TransformerBlock
  nn::LayerNorm final_norm;
  nn::Linear out_head;  // [V, C], no bias

  static std::vector<std::shared_ptr<nn::UnaryModule>> blocks(const nn::GPTConfig& cfg) {
    std::vector<std::shared_ptr<nn::UnaryModule>> b;
    for (int64_t i = 0; i < cfg.n_layers; ++i)
      b.push_back(std::make_shared<nn::TransformerBlock>(cfg));
    return b;
  }
  explicit MyGPT(const nn::GPTConfig& cfg)
      : nn::Module("MyGPT"),
        tok_emb(cfg.vocab_size, cfg.emb_dim),
        pos_emb(cfg.context_length, cfg.emb_dim),
        drop_emb(cfg.drop_rate),
        trf_blocks(blocks(cfg)),
        final_norm(cfg.emb_dim),
        out_head(cfg.emb_dim, cfg.vocab_size, /*bias=*/false) {
    register_module("tok_emb", &MyGPT::tok_emb), register_module("pos_emb", &MyGPT::pos_emb);
    register_module("drop_emb", &MyGPT::drop_emb),
        register_module("trf_blocks", &MyGPT::trf_blocks);
    register_module("final_norm", &MyGPT::final_norm),
        register_module("out_head", &MyGPT::out_head);
  }
  Tensor forward(const Ids& in_idx) const {  // in_idx [B, T]
    std::vector<int64_t> pos(static_cast<size_t>(in_idx.size(1)));
    std::iota(pos.begin(), pos.end(), 0);                                   // torch.arange(T)
    Tensor x = tok_emb(in_idx) + pos_emb(Ids(Shape{in_idx.size(1)}, pos));  // [B, T, C]
    x = trf_blocks(drop_emb(x));                                            // [B, T, C]
    return out_head(final_norm(x));                                         // logits [B, T, V]
  }
};
// --- README end
}  // namespace

TEST_CASE("README GPT: the copyable definition equals nn::GPTModel", "[gpt][readme]") {
  const nn::GPTConfig cfg{50, 8, 8, 2, 2, 0.1, false};
  manual_seed(123);
  MyGPT mine(cfg);
  manual_seed(123);
  nn::GPTModel library(cfg);
  const auto a = mine.state_dict(), b = library.state_dict();
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].first == b[i].first);
    CHECK(a[i].second.values() == b[i].second.values());
  }
  Tape tape;
  TapeScope scope(tape);
  mine.eval();
  library.eval();
  const Ids in_idx = Ids::from_rows({{6, 49, 0}, {41, 8, 8}});
  CHECK(mine.forward(in_idx).values() == library(in_idx).values());
}
