// torch.nn's loss modules (issue #36): each holds its loss's options (ops/losses.h) and calls the
// functional form, as torch.nn.CrossEntropyLoss(weight=..., label_smoothing=...) calls
// F.cross_entropy. No parameters; a class weight stays the caller's tensor (not a buffer).
//
//   nn::CrossEntropyLoss criterion({.ignore_index = -100, .label_smoothing = 0.1});
//   Tensor loss = criterion(logits, targets);
#pragma once

#include <string>
#include <utility>

#include <tapegrad/nn/module.h>
#include <tapegrad/ops/losses.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad::nn {

// A loss of (input, target) tensors with options O, computed by F.
template <class O, Tensor (*F)(const Tensor&, const Tensor&, const O&)>
class PairLoss : public Module {
 public:
  PairLoss(O options, std::string name) : Module(std::move(name)), options(std::move(options)) {}
  Tensor forward(const Tensor& input, const Tensor& target) const {
    return F(input, target, options);
  }
  Tensor operator()(const Tensor& input, const Tensor& target) const {
    return forward(input, target);
  }

  O options;
};

// The reduction alone, for the losses whose only option it is.
struct ReductionOptions {
  Reduction reduction = Reduction::Mean;
};

namespace detail {
inline Tensor l1(const Tensor& p, const Tensor& t, const ReductionOptions& o) {
  return l1_loss(p, t, o.reduction);
}
inline Tensor mse(const Tensor& p, const Tensor& t, const ReductionOptions& o) {
  return mse_loss(p, t, o.reduction);
}
}  // namespace detail

class L1Loss : public PairLoss<ReductionOptions, detail::l1> {
 public:
  explicit L1Loss(ReductionOptions options = {}, std::string name = "L1Loss")
      : PairLoss(std::move(options), std::move(name)) {}
};
class MSELoss : public PairLoss<ReductionOptions, detail::mse> {
 public:
  explicit MSELoss(ReductionOptions options = {}, std::string name = "MSELoss")
      : PairLoss(std::move(options), std::move(name)) {}
};
class SmoothL1Loss : public PairLoss<SmoothL1LossOptions, smooth_l1_loss> {
 public:
  explicit SmoothL1Loss(SmoothL1LossOptions options = {}, std::string name = "SmoothL1Loss")
      : PairLoss(std::move(options), std::move(name)) {}
};
class HuberLoss : public PairLoss<HuberLossOptions, huber_loss> {
 public:
  explicit HuberLoss(HuberLossOptions options = {}, std::string name = "HuberLoss")
      : PairLoss(std::move(options), std::move(name)) {}
};
class BCELoss : public PairLoss<BCELossOptions, binary_cross_entropy> {
 public:
  explicit BCELoss(BCELossOptions options = {}, std::string name = "BCELoss")
      : PairLoss(std::move(options), std::move(name)) {}
};
class BCEWithLogitsLoss
    : public PairLoss<BCEWithLogitsLossOptions, binary_cross_entropy_with_logits> {
 public:
  explicit BCEWithLogitsLoss(BCEWithLogitsLossOptions options = {},
                             std::string name = "BCEWithLogitsLoss")
      : PairLoss(std::move(options), std::move(name)) {}
};
class KLDivLoss : public PairLoss<KLDivOptions, kl_div> {
 public:
  explicit KLDivLoss(KLDivOptions options = {}, std::string name = "KLDivLoss")
      : PairLoss(std::move(options), std::move(name)) {}
};

// torch.nn.NLLLoss: class targets as Ids.
class NLLLoss : public Module {
 public:
  explicit NLLLoss(NLLLossOptions options = {}, std::string name = "NLLLoss")
      : Module(std::move(name)), options(std::move(options)) {}
  Tensor forward(const Tensor& input, const Ids& target) const {
    return nll_loss(input, target, options);
  }
  Tensor operator()(const Tensor& input, const Ids& target) const { return forward(input, target); }

  NLLLossOptions options;
};

// torch.nn.CrossEntropyLoss: class targets (Ids) or probability targets (a Tensor).
class CrossEntropyLoss : public Module {
 public:
  explicit CrossEntropyLoss(CrossEntropyOptions options = {}, std::string name = "CrossEntropyLoss")
      : Module(std::move(name)), options(std::move(options)) {}
  Tensor forward(const Tensor& input, const Ids& target) const {
    return cross_entropy(input, target, options);
  }
  Tensor forward(const Tensor& input, const Tensor& target) const {
    return cross_entropy(input, target, options);
  }
  Tensor operator()(const Tensor& input, const Ids& target) const { return forward(input, target); }
  Tensor operator()(const Tensor& input, const Tensor& target) const {
    return forward(input, target);
  }

  CrossEntropyOptions options;
};

// torch.nn.CosineEmbeddingLoss and MarginRankingLoss: (input1, input2, target).
template <Tensor (*F)(const Tensor&, const Tensor&, const Tensor&, const MarginLossOptions&)>
class TripleLoss : public Module {
 public:
  TripleLoss(MarginLossOptions options, std::string name)
      : Module(std::move(name)), options(options) {}
  Tensor forward(const Tensor& x1, const Tensor& x2, const Tensor& y) const {
    return F(x1, x2, y, options);
  }
  Tensor operator()(const Tensor& x1, const Tensor& x2, const Tensor& y) const {
    return forward(x1, x2, y);
  }

  MarginLossOptions options;
};

class CosineEmbeddingLoss : public TripleLoss<cosine_embedding_loss> {
 public:
  explicit CosineEmbeddingLoss(MarginLossOptions options = {},
                               std::string name = "CosineEmbeddingLoss")
      : TripleLoss(options, std::move(name)) {}
};
class MarginRankingLoss : public TripleLoss<margin_ranking_loss> {
 public:
  explicit MarginRankingLoss(MarginLossOptions options = {}, std::string name = "MarginRankingLoss")
      : TripleLoss(options, std::move(name)) {}
};

// torch.nn.CosineSimilarity(dim=1, eps=1e-8).
class CosineSimilarity : public Module {
 public:
  explicit CosineSimilarity(int dim = 1, double eps = 1e-8, std::string name = "CosineSimilarity")
      : Module(std::move(name)), dim(dim), eps(eps) {}
  Tensor forward(const Tensor& x1, const Tensor& x2) const {
    return cosine_similarity(x1, x2, dim, eps);
  }
  Tensor operator()(const Tensor& x1, const Tensor& x2) const { return forward(x1, x2); }

  int dim;
  double eps;
};

}  // namespace tapegrad::nn
