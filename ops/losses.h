// torch.nn.functional's losses with their keyword options (issue #36): the reduction, class
// weights, ignore_index, label smoothing, probability targets, pos_weight, beta and delta, margins.
//
//   Tensor loss = cross_entropy(logits, targets, {.weight = w, .label_smoothing = 0.1});
//   Tensor per_row = nll_loss(log_probs, targets, {.reduction = Reduction::None});
//
// Every loss is torch's formula, with torch's order of operations where that decides the last bit,
// written with ops (so its gradient, and its recorded backward, are theirs) except
// binary_cross_entropy, whose clamped logs and gradient are torch's own kernel
// (ops/binary_cross_entropy.cpp). Targets are constants (never given a gradient) except where
// torch differentiates them: the elementwise losses' targets (mse, l1, smooth_l1, huber, bce,
// bce_with_logits, kl_div) and cosine_embedding's and margin_ranking's two inputs.
#pragma once

#include <cstdint>

#include <tapegrad/graph/ids.h>
#include <tapegrad/graph/tape.h>

namespace tapegrad {

// torch's reduction="none" | "mean" | "sum"; BatchMean ("batchmean": the sum over the batch size,
// the first dim) is kl_div's only, and any other loss given it throws Error.
enum class Reduction { None, Mean, Sum, BatchMean };
const char* reduction_name(Reduction reduction);  // "none", "mean", "sum", "batchmean"

// mse_loss(prediction, target) (ops.h) is Reduction::Mean; the other reductions here.
Tensor mse_loss(const Tensor& prediction, const Tensor& target, Reduction reduction);
// |P − T|; its gradient at P = T is 0 (sgn(0) = 0, as torch).
Tensor l1_loss(const Tensor& prediction, const Tensor& target,
               Reduction reduction = Reduction::Mean);

struct SmoothL1LossOptions {
  Reduction reduction = Reduction::Mean;
  double beta = 1.0;  // >= 0; 0 gives |P − T| (torch's gradient there: −1 at P = T)
};
// z = |P − T|: 0.5·z²/β where z < β, else z − 0.5·β.
Tensor smooth_l1_loss(const Tensor& prediction, const Tensor& target,
                      const SmoothL1LossOptions& options = {});

struct HuberLossOptions {
  Reduction reduction = Reduction::Mean;
  double delta = 1.0;  // > 0
};
// z = |P − T|: 0.5·z² where z < δ, else δ·(z − 0.5·δ).
Tensor huber_loss(const Tensor& prediction, const Tensor& target,
                  const HuberLossOptions& options = {});

struct BCELossOptions {
  Tensor weight{};  // optional: broadcast to the input's shape, multiplies each element's loss
  Reduction reduction = Reduction::Mean;
};
// −w·(t·log x + (1 − t)·log(1 − x)), each log clamped to >= −100 as torch; x and t in [0, 1].
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target,
                            const BCELossOptions& options = {});
// The fused op under it: the loss per element (reduction none, no weight), with torch's
// gradients dX = dY·(X − T) / max(X·(1 − X), 1e-12) and dT = dY·(log(1 − X) − log X).
// Input and target values outside [0, 1] are Errors naming the position.
Tensor binary_cross_entropy_elementwise(const Tensor& input, const Tensor& target);

struct BCEWithLogitsLossOptions {
  Tensor weight{};      // optional: broadcast to the input's shape
  Tensor pos_weight{};  // optional: the positive class's weight, broadcast along the last dim
  Reduction reduction = Reduction::Mean;
};
// binary_cross_entropy(sigmoid(x), t) in torch's stable form (no overflow for large |x|).
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const BCEWithLogitsLossOptions& options = {});

struct NLLLossOptions {
  Tensor weight{};              // optional: [C], a weight per class (not NaN)
  int64_t ignore_index = -100;  // targets equal to it take no part (and no weight)
  Reduction reduction = Reduction::Mean;
};
// input [N, C, d1, ...] (or [C]) of log-probabilities, target [N, d1, ...] (or []) in [0, C):
// −w[t]·input[n, t, ...] per position; the mean divides by the sum of the weights of the targets
// not ignored (every target ignored gives NaN, as torch).
Tensor nll_loss(const Tensor& input, const Ids& target, const NLLLossOptions& options = {});

struct CrossEntropyOptions {
  Tensor weight{};  // optional: [C]
  int64_t ignore_index = -100;
  Reduction reduction = Reduction::Mean;
  double label_smoothing = 0.0;  // in [0, 1]
};
// nll_loss(log_softmax(input, class dim), target) with torch 1.13's label smoothing:
// (1 − ε)·nll + ε/C·Σ_c w_c·(−log_softmax)_c, its mean divided as nll_loss's. The call forms of
// ops.h (a mean without weights or smoothing over [N, C] or [C]) are the fused op.
Tensor cross_entropy(const Tensor& input, const Ids& target, const CrossEntropyOptions& options);
// Probability targets, of the input's shape: −Σ_c w_c·t_c·log_softmax(input)_c per position (t
// smoothed to t·(1 − ε) + ε/C first); the mean divides by the number of positions. ignore_index
// must stay negative (torch's rule: it has no meaning here).
Tensor cross_entropy(const Tensor& input, const Tensor& target,
                     const CrossEntropyOptions& options = {});

struct KLDivOptions {
  Reduction reduction = Reduction::Mean;  // Mean averages every element; BatchMean is KL's mean
  bool log_target = false;
};
// input holds log-probabilities; target probabilities (or their logs with log_target):
// t·(log t − input), 0 where t = 0 (torch's xlogy), or exp(t)·(t − input) with log_target.
Tensor kl_div(const Tensor& input, const Tensor& target, const KLDivOptions& options = {});

// x1·x2 / max(‖x1‖·‖x2‖, eps) along dim (torch 1.13's form), x1 and x2 broadcast.
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int dim = 1, double eps = 1e-8);

struct MarginLossOptions {
  double margin = 0.0;
  Reduction reduction = Reduction::Mean;
};
// x1, x2 [N, D] (or [D]) and y [N] (or []) of ±1: 1 − cos(x1, x2) where y = 1,
// max(0, cos(x1, x2) − margin) where y = −1 (cos with torch's eps 1e-12 inside the square root).
Tensor cosine_embedding_loss(const Tensor& x1, const Tensor& x2, const Tensor& y,
                             const MarginLossOptions& options = {});
// max(0, −y·(x1 − x2) + margin), x1, x2 and y broadcast.
Tensor margin_ranking_loss(const Tensor& x1, const Tensor& x2, const Tensor& y,
                           const MarginLossOptions& options = {});

}  // namespace tapegrad
