// The losses of ops/losses.h written with ops, in torch 1.13's order of operations (so their
// gradients and recorded backwards are the ops'), plus the checks torch makes, as Errors.
#include <cmath>
#include <string>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/graph/scope.h>
#include <tapegrad/ops/detail/broadcast.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/losses.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

[[noreturn]] void fail(const char* op, const std::string& what) {
  throw Error(std::string(op) + ": " + what);
}

void check_reduction(const char* op, Reduction reduction) {
  if (reduction == Reduction::BatchMean) {
    fail(op, "reduction batchmean is kl_div's only (expected none, mean or sum)");
  }
}

// torch's apply_loss_reduction.
Tensor reduce(const char* op, const Tensor& loss, Reduction reduction) {
  check_reduction(op, reduction);
  if (reduction == Reduction::Mean) return mean(loss);
  if (reduction == Reduction::Sum) return sum(loss);
  return loss;
}

void check_same_shape(const char* op, const Tensor& prediction, const Tensor& target) {
  check_same_dtype(op, prediction, target);
  if (prediction.shape() != target.shape()) {
    fail(op, describe("input", prediction) + " and " + describe("target", target) +
                 ": shapes must be equal");
  }
}

struct Broadcast {
  Tensor input, target;
};

// torch's elementwise regression losses (mse, l1, smooth_l1, huber) take an input and a target
// that broadcast (torch warns that the sizes differ; tapegrad does not print): both expanded to
// the common shape first, as torch's broadcast_tensors, so the loss is computed, and reduced, on
// that shape, and expand's gradient sums back to each.
Broadcast broadcast_pair(const char* op, const Tensor& input, const Tensor& target) {
  check_same_dtype(op, input, target);
  if (input.shape() == target.shape()) return {input, target};
  bool ok = false;
  const Shape out = broadcast_shape(input.shape(), target.shape(), &ok);
  if (!ok) {
    fail(op, describe("input", input) + " and " + describe("target", target) +
                 ": shapes must be equal or broadcast");
  }
  return {input.shape() == out ? input : expand(input, out),
          target.shape() == out ? target : expand(target, out)};
}

// torch differentiates none of these weights (derivatives.yaml lists no formula: "not
// differentiable with respect to argument 'weight'"), so one that requires grad is an Error.
void check_no_weight_grad(const char* op, const char* role, const Tensor& weight) {
  if (weight.defined() && weight.requires_grad() && grad_enabled()) {
    fail(op, describe(role, weight) + " requires grad, but " + op +
                 " is not differentiable with respect to its " + role +
                 " (as torch); detach it or record under NoGradGuard");
  }
}

// A weight tensor's values as a constant of the input's dtype (weights get no gradient, as
// torch's loss weights), after checking there is no NaN in them.
Tensor constant_weight(const char* op, const char* role, const Tensor& weight, DType dtype) {
  if (weight.dtype() != dtype) {
    fail(op, describe(role, weight) + " is " + dtype_name(weight.dtype()) + " but the input is " +
                 dtype_name(dtype));
  }
  const std::vector<double> values = weight.values();
  for (size_t i = 0; i < values.size(); ++i) {
    if (std::isnan(values[i])) {
      fail(op, describe(role, weight) + ": " + role + position_text(weight.shape(), int64_t(i)) +
                   " is NaN");
    }
  }
  return from_values(weight.shape(), values, dtype);
}

// A weight that must broadcast to `input` without enlarging it.
Tensor broadcast_weight(const char* op, const char* role, const Tensor& weight,
                        const Tensor& input) {
  const Shape& w = weight.shape();
  const Shape& x = input.shape();
  bool fits = w.rank() <= x.rank();
  for (int d = 1; fits && d <= w.rank(); ++d) {
    fits = w.size(-d) == 1 || w.size(-d) == x.size(-d);
  }
  if (!fits) {
    fail(op, describe(role, weight) + " does not broadcast to " + describe("input", input));
  }
  return constant_weight(op, role, weight, input.dtype());
}

// The class weights [C] of nll_loss and cross_entropy, as values.
std::vector<double> class_weights(const char* op, const Tensor& weight, const Tensor& input,
                                  int64_t classes) {
  if (weight.rank() != 1 || weight.size(0) != classes) {
    fail(op, describe("weight", weight) + ": expected one weight per class, [" +
                 std::to_string(classes) + "] for " + describe("input", input));
  }
  return constant_weight(op, "weight", weight, input.dtype()).values();
}

int class_dim(const Tensor& input) {
  return input.rank() == 1 ? 0 : 1;
}

// The targets' shape an input of this shape takes: [N, d1, ...] for [N, C, d1, ...], [] for [C].
void check_class_input(const char* op, const Tensor& input, const Shape& target_shape,
                       const char* target_role) {
  if (input.rank() == 0) fail(op, describe("input", input) + ": expected [N, C, d1, ...] or [C]");
  std::vector<int64_t> want;
  for (int d = 0; d < input.rank(); ++d) {
    if (d != class_dim(input)) want.push_back(input.size(d));
  }
  if (target_shape != Shape(std::span<const int64_t>(want))) {
    fail(op, describe("input", input) + " and " + target_role + " " + target_shape.str() +
                 ": expected " + target_role + " " + Shape(std::span<const int64_t>(want)).str());
  }
}

// Targets checked against [0, C) (ignore_index aside), naming the first bad one's position.
void check_targets(const char* op, const Ids& target, int64_t classes, int64_t ignore_index) {
  const std::span<const int64_t> t = target.values();
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] == ignore_index) continue;
    if (t[i] < 0 || t[i] >= classes) {
      fail(op, "target" + position_text(target.shape(), int64_t(i)) + " = " + std::to_string(t[i]) +
                   " is out of range [0, " + std::to_string(classes) + ")");
    }
  }
}

// Shape [N, 1, d1, ...] (or [1]) for an input [N, C, d1, ...] (or [C]).
Shape with_one_class(const Tensor& input) {
  std::vector<int64_t> dims(input.shape().dims().begin(), input.shape().dims().end());
  dims[static_cast<size_t>(class_dim(input))] = 1;
  return Shape(std::span<const int64_t>(dims));
}

// The class weights viewed to broadcast along the input's class dim: [1, C, 1, ...] or [C].
Tensor class_weight_view(const std::vector<double>& w, const Tensor& input) {
  std::vector<int64_t> dims(static_cast<size_t>(input.rank()), 1);
  dims[static_cast<size_t>(class_dim(input))] = input.size(class_dim(input));
  return from_values(Shape(std::span<const int64_t>(dims)), w, input.dtype());
}

struct Picked {
  Tensor loss;       // −w[t]·input[t] per position (0 where ignored), the targets' shape
  double total = 0;  // the mean's divisor: the sum of the selected weights
  Tensor ignored;    // 1 where the target is ignore_index, or undefined when none is
};

Picked pick_targets(const char* op, const Tensor& input, const Ids& target, const Tensor& weight,
                    int64_t ignore_index) {
  check_class_input(op, input, target.shape(), "target");
  const int64_t classes = input.size(class_dim(input));
  check_targets(op, target, classes, ignore_index);
  std::vector<double> w;
  if (weight.defined()) w = class_weights(op, weight, input, classes);
  const std::span<const int64_t> t = target.values();
  std::vector<int64_t> index(t.size());
  std::vector<double> selected(t.size()), ignored(t.size());
  bool any_ignored = false;
  Picked out;
  for (size_t i = 0; i < t.size(); ++i) {
    const bool skip = t[i] == ignore_index;
    any_ignored = any_ignored || skip;
    index[i] = skip ? 0 : t[i];
    ignored[i] = skip ? 1 : 0;
    selected[i] = skip ? 0 : w.empty() ? 1 : w[static_cast<size_t>(t[i])];
    out.total += selected[i];
  }
  const int dim = class_dim(input);
  Tensor x = squeeze(gather(input, dim, Ids(with_one_class(input), index)), dim);
  if (any_ignored) {
    // Filled rather than multiplied by 0: an ignored position may hold −inf.
    out.ignored = from_values(target.shape(), ignored, input.dtype());
    x = masked_fill(x, out.ignored, 0.0);
  }
  out.loss = neg(x);
  if (!w.empty()) out.loss = mul(out.loss, from_values(target.shape(), selected, input.dtype()));
  return out;
}

}  // namespace

const char* reduction_name(Reduction reduction) {
  switch (reduction) {
    case Reduction::None:
      return "none";
    case Reduction::Mean:
      return "mean";
    case Reduction::Sum:
      return "sum";
    case Reduction::BatchMean:
      return "batchmean";
  }
  return "?";
}

Tensor mse_loss(const Tensor& prediction, const Tensor& target, Reduction reduction) {
  check_reduction("mse_loss", reduction);
  if (reduction == Reduction::Mean) return mse_loss(prediction, target);
  const auto [p, t] = broadcast_pair("mse_loss", prediction, target);
  return reduce("mse_loss", square(p - t), reduction);
}

Tensor l1_loss(const Tensor& prediction, const Tensor& target, Reduction reduction) {
  check_reduction("l1_loss", reduction);
  const auto [p, t] = broadcast_pair("l1_loss", prediction, target);
  return reduce("l1_loss", abs(p - t), reduction);
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target_in,
                      const SmoothL1LossOptions& options) {
  const char* op = "smooth_l1_loss";
  check_reduction(op, options.reduction);
  const auto [prediction, target] = broadcast_pair(op, input, target_in);
  const double beta = options.beta;
  if (!(beta >= 0)) fail(op, "beta = " + std::to_string(beta) + " must be >= 0");
  if (beta == 0) {
    // |d|, with torch's backward: x <= −β gives −dY, with x = P − T for P and x = T − P for T
    // (its target gradient is the input's with the two swapped), so both get −dY at d = 0.
    // Each argument's branch sees the other detached; (a + b) − a is |d| exactly, +0 at d = 0.
    const auto branch = [](const Tensor& x) { return where(le(x, 0.0), neg(x), x); };
    const Tensor for_p = branch(prediction - detach(target));
    const Tensor for_t = branch(target - detach(prediction));
    return reduce(op, add_scalar(for_p + for_t - detach(for_p), 0.0), options.reduction);
  }
  const Tensor z = abs(prediction - target);
  // torch's kernel: z < β ? 0.5·z·z / β : z − 0.5·β
  const Tensor inner = div_scalar(scale(z, 0.5) * z, beta);
  const Tensor outer = add_scalar(z, -0.5 * beta);
  return reduce(op, where(lt(z, beta), inner, outer), options.reduction);
}

Tensor huber_loss(const Tensor& input, const Tensor& target_in, const HuberLossOptions& options) {
  const char* op = "huber_loss";
  check_reduction(op, options.reduction);
  const auto [prediction, target] = broadcast_pair(op, input, target_in);
  const double delta = options.delta;
  if (!(delta > 0)) fail(op, "delta = " + std::to_string(delta) + " must be > 0");
  const Tensor z = abs(prediction - target);
  // torch's kernel: z < δ ? 0.5·z·z : δ·(z − 0.5·δ)
  const Tensor inner = scale(z, 0.5) * z;
  const Tensor outer = scale(add_scalar(z, -0.5 * delta), delta);
  return reduce(op, where(lt(z, delta), inner, outer), options.reduction);
}

Tensor binary_cross_entropy(const Tensor& input, const Tensor& target,
                            const BCELossOptions& options) {
  const char* op = "binary_cross_entropy";
  check_reduction(op, options.reduction);
  check_same_shape(op, input, target);
  check_no_weight_grad(op, "weight", options.weight);
  Tensor loss = binary_cross_entropy_elementwise(input, target);
  if (options.weight.defined()) {
    loss = mul(loss, broadcast_weight(op, "weight", options.weight, input));
  }
  return reduce(op, loss, options.reduction);
}

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const BCEWithLogitsLossOptions& options) {
  const char* op = "binary_cross_entropy_with_logits";
  check_reduction(op, options.reduction);
  check_same_shape(op, input, target);
  check_no_weight_grad(op, "weight", options.weight);
  check_no_weight_grad(op, "pos_weight", options.pos_weight);
  // torch's stable form: m = max(−x, 0), log(1 + e^−x) = log(e^−m + e^(−x−m)) + m
  const Tensor m = clamp_min(neg(input), 0.0);
  const Tensor log_terms = log(exp(neg(m)) + exp(neg(input) - m));
  Tensor loss;
  if (options.pos_weight.defined()) {
    const Tensor pw = broadcast_weight(op, "pos_weight", options.pos_weight, input);
    const Tensor log_weight = add_scalar(add_scalar(pw, -1.0) * target, 1.0);
    loss = (1.0 - target) * input + log_weight * (log_terms + m);
  } else {
    loss = (1.0 - target) * input + m + log_terms;
  }
  if (options.weight.defined()) {
    loss = mul(loss, broadcast_weight(op, "weight", options.weight, input));
  }
  return reduce(op, loss, options.reduction);
}

Tensor nll_loss(const Tensor& input, const Ids& target, const NLLLossOptions& options) {
  const char* op = "nll_loss";
  check_reduction(op, options.reduction);
  check_no_weight_grad(op, "weight", options.weight);
  const Picked p = pick_targets(op, input, target, options.weight, options.ignore_index);
  if (options.reduction == Reduction::None) return p.loss;
  const Tensor total = sum(p.loss);
  if (options.reduction == Reduction::Sum) return total;
  // Every target ignored: 0 / 0 = NaN, as torch.
  return div_scalar(total, p.total);
}

Tensor cross_entropy(const Tensor& input, const Ids& target, const CrossEntropyOptions& options) {
  const char* op = "cross_entropy";
  check_reduction(op, options.reduction);
  // With class indices torch's cross_entropy runs nll_loss, whose weight has no derivative.
  check_no_weight_grad(op, "weight", options.weight);
  const double ls = options.label_smoothing;
  if (!(ls >= 0 && ls <= 1)) {
    fail(op, "label_smoothing = " + std::to_string(ls) + " must be in [0, 1]");
  }
  check_class_input(op, input, target.shape(), "target");
  const int dim = class_dim(input);
  const int64_t classes = input.size(dim);
  check_targets(op, target, classes, options.ignore_index);
  std::vector<double> w;
  if (options.weight.defined()) w = class_weights(op, options.weight, input, classes);
  if (!options.weight.defined() && ls == 0 && options.reduction == Reduction::Mean &&
      (input.rank() == 1 || input.rank() == 2)) {
    return cross_entropy(input, target.values(), options.ignore_index);  // the fused op
  }
  const Tensor log_probs = log_softmax(input, dim);
  const Tensor nll =
      nll_loss(log_probs, target, {options.weight, options.ignore_index, options.reduction});
  if (ls == 0) return nll;
  // torch 1.13's cross_entropy_loss_label_smoothing.
  Tensor smooth;
  if (!w.empty()) {
    smooth = neg(sum(log_probs * class_weight_view(w, input), dim));
  } else {
    smooth = neg(sum(log_probs, dim));
  }
  const std::span<const int64_t> t = target.values();
  std::vector<double> ignored(t.size());
  double selected = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    const bool skip = t[i] == options.ignore_index;
    ignored[i] = skip ? 1 : 0;
    if (!skip) selected += w.empty() ? 1 : w[static_cast<size_t>(t[i])];
  }
  smooth = masked_fill(smooth, from_values(target.shape(), ignored, input.dtype()), 0.0);
  Tensor ret;
  if (options.reduction == Reduction::Mean) {
    // Divided as nll_loss's mean: by the summed weights of the targets not ignored.
    ret = div_scalar(sum(smooth), selected);
  } else {
    ret = reduce(op, smooth, options.reduction);
  }
  return scale(nll, 1 - ls) + scale(ret, ls / static_cast<double>(classes));
}

Tensor cross_entropy(const Tensor& input, const Tensor& target,
                     const CrossEntropyOptions& options) {
  const char* op = "cross_entropy";
  check_reduction(op, options.reduction);
  const double ls = options.label_smoothing;
  if (!(ls >= 0 && ls <= 1)) {
    fail(op, "label_smoothing = " + std::to_string(ls) + " must be in [0, 1]");
  }
  check_same_dtype(op, input, target);
  if (input.rank() == 0 || input.shape() != target.shape()) {
    fail(op, describe("input", input) + " and probability " + describe("target", target) +
                 ": expected the target of the input's shape, [N, C, d1, ...] or [C]");
  }
  if (options.ignore_index >= 0) {
    fail(op, "ignore_index = " + std::to_string(options.ignore_index) +
                 " with probability targets (torch's rule: ignore_index must be negative)");
  }
  const int dim = class_dim(input);
  const int64_t classes = input.size(dim);
  const Tensor log_probs = log_softmax(input, dim);
  Tensor t = target;
  if (ls > 0) t = add_scalar(scale(target, 1 - ls), ls / static_cast<double>(classes));
  Tensor terms = log_probs * t;
  if (options.weight.defined()) {
    const std::vector<double> w = class_weights(op, options.weight, input, classes);
    if (options.weight.requires_grad() && grad_enabled()) {
      // torch's composite multiplies by the weight itself here, so it gets a gradient: the same
      // values as the constant, viewed along the class dim.
      const Shape view = class_weight_view(w, input).shape();
      terms = terms * reshape(options.weight, view.dims());
    } else {
      terms = terms * class_weight_view(w, input);
    }
  }
  switch (options.reduction) {
    case Reduction::None:
      return neg(sum(terms, dim));
    case Reduction::Sum:
      return neg(sum(terms));
    default:
      return div_scalar(neg(sum(terms)), static_cast<double>(input.numel() / classes));
  }
}

Tensor kl_div(const Tensor& input, const Tensor& target, const KLDivOptions& options) {
  const char* op = "kl_div";
  check_same_shape(op, input, target);
  Tensor loss;
  if (options.log_target) {
    loss = exp(target) * (target - input);
  } else {
    // xlogy(t, t): 0 where t = 0; the log reads 1 there, so no 0·(−inf) reaches the gradient.
    const Tensor zero = eq(target, 0.0);
    const Tensor xlogy = masked_fill(target * log(masked_fill(target, zero, 1.0)), zero, 0.0);
    loss = xlogy - target * input;
  }
  if (options.reduction == Reduction::BatchMean) {
    const Tensor total = sum(loss);
    return input.rank() == 0 ? total : div_scalar(total, static_cast<double>(input.size(0)));
  }
  return reduce(op, loss, options.reduction);
}

Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int dim, double eps) {
  const char* op = "cosine_similarity";
  check_same_dtype(op, x1, x2);
  // torch 1.13: each side divided by its norm (clamped to eps) first, then the products summed.
  if (x1.rank() != x2.rank()) {
    // The dim must name the same axis in both (torch broadcasts first; equal ranks make it so).
    fail(op, describe("x1", x1) + " and " + describe("x2", x2) + ": ranks must be equal");
  }
  const Tensor a = x1 / clamp_min(norm(x1, 2.0, dim, true), eps);
  const Tensor b = x2 / clamp_min(norm(x2, 2.0, dim, true), eps);
  return sum(a * b, dim);
}

Tensor cosine_embedding_loss(const Tensor& x1, const Tensor& x2, const Tensor& y,
                             const MarginLossOptions& options) {
  const char* op = "cosine_embedding_loss";
  check_reduction(op, options.reduction);
  check_same_shape(op, x1, x2);
  check_same_dtype(op, x1, y);
  const int dim = y.rank();
  if (y.rank() > 1) {
    fail(op, describe("target", y) + ": expected a 0-D or 1-D target (multi-target unsupported)");
  }
  if (x1.rank() != y.rank() + 1 || (y.rank() == 1 && y.size(0) != x1.size(0))) {
    fail(op, describe("target", y) + " and " + describe("input1", x1) +
                 ": expected inputs [N, D] for a target [N], [D] for a target []");
  }
  const double kEps = 1e-12;  // torch's EPSILON
  const Tensor prod_sum = sum(x1 * x2, dim);
  const Tensor mag1 = add_scalar(sum(x1 * x1, dim), kEps);
  const Tensor mag2 = add_scalar(sum(x2 * x2, dim), kEps);
  const Tensor cos = prod_sum / sqrt(mag1 * mag2);
  const Tensor zeros = full(cos.shape(), 0.0, cos.dtype());
  const Tensor pos = 1.0 - cos;
  const Tensor neg_part = clamp_min(add_scalar(cos, -options.margin), 0.0);
  const Tensor out = where(eq(y, 1.0), pos, zeros) + where(eq(y, -1.0), neg_part, zeros);
  return reduce(op, out, options.reduction);
}

Tensor margin_ranking_loss(const Tensor& x1, const Tensor& x2, const Tensor& y,
                           const MarginLossOptions& options) {
  const char* op = "margin_ranking_loss";
  check_reduction(op, options.reduction);
  check_same_dtype(op, x1, x2);
  check_same_dtype(op, x1, y);
  if (x1.rank() != x2.rank() || x1.rank() != y.rank()) {
    fail(op, describe("input1", x1) + ", " + describe("input2", x2) + " and " +
                 describe("target", y) + ": all must have the same rank");
  }
  const Tensor out = clamp_min(add_scalar(neg(y) * (x1 - x2), options.margin), 0.0);
  return reduce(op, out, options.reduction);
}

}  // namespace tapegrad
