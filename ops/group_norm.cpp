// group_norm: torch.nn.functional.group_norm, composed from reshape, layer_norm and a per-channel
// affine, so its gradients of every order are those ops'.
#include <algorithm>
#include <string>
#include <vector>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void check_channel_vector(const Tensor& x, const Tensor& t, const char* role, int64_t channels) {
  if (!t.defined()) return;
  check_same_dtype("group_norm", x, t);
  if (t.shape() != Shape{channels}) {
    throw_binary_error("group_norm", x, "with", t,
                       std::string(role) + " must be [C] = [" + std::to_string(channels) + "]");
  }
}

}  // namespace

Tensor group_norm(const Tensor& x, int64_t num_groups, const Tensor& weight, const Tensor& bias,
                  double eps) {
  if (x.rank() < 2) throw_unary_error("group_norm", x, "expected an input [N, C, *]");
  const int64_t n = x.size(0), channels = x.size(1);
  if (num_groups <= 0 || channels % num_groups != 0) {
    throw_unary_error("group_norm", x,
                      "num_groups " + std::to_string(num_groups) +
                          " must be positive and divide the channels C " +
                          std::to_string(channels));
  }
  if (!(eps >= 0.0))
    throw_unary_error("group_norm", x, "eps must be >= 0, got " + number_text(eps));
  check_channel_vector(x, weight, "weight", channels);
  check_channel_vector(x, bias, "bias", channels);
  const Shape shape = x.shape();
  // Each (sample, group) is one row of C/G·(spatial size) values, normalised as layer_norm does
  // a row (biased variance, two passes).
  const int64_t row = x.numel() / std::max<int64_t>(n * num_groups, 1);
  Tensor y = reshape(layer_norm(reshape(x, {n, num_groups, row}), Tensor(), Tensor(), eps),
                     shape.dims());  // [N, C, *]
  // weight and bias [C] as [C, 1, ..., 1], broadcast over N and the spatial dims.
  std::vector<int64_t> channel_shape(static_cast<size_t>(x.rank() - 1), 1);
  channel_shape[0] = channels;
  if (weight.defined()) y = mul(y, reshape(weight, channel_shape));
  if (bias.defined()) y = add(y, reshape(bias, channel_shape));
  return y;
}

}  // namespace tapegrad
