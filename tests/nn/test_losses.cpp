// Tests for nn/losses.h: each module is its functional loss with the module's options.
#include <catch2/catch.hpp>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/nn/losses.h>

using namespace tapegrad;

TEST_CASE("nn loss modules: names and results are their functional forms'", "[nn][losses]") {
  Tape tape;
  TapeScope scope(tape);
  Tensor p = tensor({{0.2, 0.9, 0.4}, {0.7, 0.1, 0.5}}, DType::Float64);
  Tensor t = tensor({{0.0, 1.0, 0.5}, {1.0, 0.0, 0.25}}, DType::Float64);
  const Ids ids({2}, {2, 0});
  Tensor w = tensor({0.5, 1.0, 2.0}, DType::Float64);

  CHECK(nn::L1Loss().name() == "L1Loss");
  CHECK(nn::L1Loss({.reduction = Reduction::Sum})(p, t).item() ==
        l1_loss(p, t, Reduction::Sum).item());
  CHECK(nn::MSELoss()(p, t).item() == mse_loss(p, t).item());
  CHECK(nn::SmoothL1Loss({.beta = 0.3})(p, t).item() == smooth_l1_loss(p, t, {.beta = 0.3}).item());
  CHECK(nn::HuberLoss({.reduction = Reduction::None, .delta = 0.2})(p, t).values() ==
        huber_loss(p, t, {.reduction = Reduction::None, .delta = 0.2}).values());
  CHECK(nn::BCELoss({.weight = w})(p, t).item() ==
        binary_cross_entropy(p, t, {.weight = w}).item());
  CHECK(nn::BCEWithLogitsLoss({.pos_weight = w})(p, t).item() ==
        binary_cross_entropy_with_logits(p, t, {.pos_weight = w}).item());
  CHECK(nn::KLDivLoss({.reduction = Reduction::BatchMean})(log(p), t).item() ==
        kl_div(log(p), t, {.reduction = Reduction::BatchMean}).item());
  CHECK(nn::NLLLoss({.weight = w})(log(p), ids).item() ==
        nll_loss(log(p), ids, {.weight = w}).item());
  nn::CrossEntropyLoss ce({.weight = w, .label_smoothing = 0.1});
  CHECK(ce.name() == "CrossEntropyLoss");
  CHECK(ce(p, ids).item() == cross_entropy(p, ids, ce.options).item());
  CHECK(ce(p, t).item() == cross_entropy(p, t, ce.options).item());
  Tensor y = tensor({1.0, -1.0}, DType::Float64);
  CHECK(nn::CosineEmbeddingLoss({.margin = 0.1})(p, t, y).item() ==
        cosine_embedding_loss(p, t, y, {.margin = 0.1}).item());
  CHECK(nn::MarginRankingLoss({.margin = 0.5}).name() == "MarginRankingLoss");
  CHECK(nn::MarginRankingLoss({.margin = 0.5})(sum(p, 1), sum(t, 1), y).item() ==
        margin_ranking_loss(sum(p, 1), sum(t, 1), y, {.margin = 0.5}).item());
  CHECK(nn::CosineSimilarity(1)(p, t).values() == cosine_similarity(p, t, 1).values());
  // A module's bad option is its loss's Error.
  CHECK_THROWS_WITH(nn::HuberLoss({.delta = -1.0})(p, t), Catch::Contains("huber_loss: delta"));
}
