// batch_norm: torch.nn.functional.batch_norm, composed from mean, sub, mul, rsqrt and add (so its
// gradients of every order are those ops'); the running statistics are updated in double, as
// torch's CPU kernel accumulates.
#include <string>
#include <vector>

#include <tapegrad/graph/parameter.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void check_channel_tensor(const Tensor& x, const Shape& shape, DType dtype, const char* role,
                          int64_t channels) {
  if (shape != Shape{channels} || dtype != x.dtype()) {
    throw_unary_error("batch_norm", x,
                      std::string(role) + " " + shape.str() + " " + dtype_name(dtype) +
                          " must be [C] = [" + std::to_string(channels) + "] " +
                          dtype_name(x.dtype()));
  }
}

// running = (1 − m)·running + m·batch per channel, with the batch's mean and unbiased variance
// summed in double over every dim but 1.
template <class T>
void update_running_stats(const Tensor& x, Parameter& running_mean, Parameter& running_var,
                          double momentum) {
  const int64_t n = x.size(0), channels = x.size(1), inner = x.numel() / (n * channels);
  const int64_t count = n * inner;
  const T* xv = x.data<T>();
  for (int64_t c = 0; c < channels; ++c) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < inner; ++j) sum += xv[(i * channels + c) * inner + j];
    }
    const double mean = sum / static_cast<double>(count);
    double squares = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < inner; ++j) {
        const double d = xv[(i * channels + c) * inner + j] - mean;
        squares += d * d;
      }
    }
    const double unbiased = squares / static_cast<double>(count - 1);
    if (running_mean.defined()) {
      T& rm = running_mean.data<T>()[c];
      rm = static_cast<T>(momentum * mean + (1.0 - momentum) * rm);
    }
    if (running_var.defined()) {
      T& rv = running_var.data<T>()[c];
      rv = static_cast<T>(momentum * unbiased + (1.0 - momentum) * rv);
    }
  }
}

}  // namespace

Tensor batch_norm(const Tensor& x, Parameter running_mean, Parameter running_var,
                  const Tensor& weight, const Tensor& bias, bool training, double momentum,
                  double eps) {
  if (x.rank() < 2) throw_unary_error("batch_norm", x, "expected an input [N, C, *]");
  const int64_t channels = x.size(1);
  if (!(eps >= 0.0))
    throw_unary_error("batch_norm", x, "eps must be >= 0, got " + number_text(eps));
  check_scalar_argument("batch_norm", x, "momentum", momentum);
  if (weight.defined()) check_channel_tensor(x, weight.shape(), weight.dtype(), "weight", channels);
  if (bias.defined()) check_channel_tensor(x, bias.shape(), bias.dtype(), "bias", channels);
  for (const auto& [stat, role] :
       {std::pair<const Parameter*, const char*>{&running_mean, "running_mean"},
        {&running_var, "running_var"}}) {
    if (stat->defined()) check_channel_tensor(x, stat->shape(), stat->dtype(), role, channels);
  }
  // The statistics per channel broadcast as [1, C, 1, ..., 1]; weight and bias likewise.
  std::vector<int64_t> channel_shape(static_cast<size_t>(x.rank()), 1);
  channel_shape[1] = channels;
  std::vector<int> reduce_dims{0};
  for (int d = 2; d < x.rank(); ++d) reduce_dims.push_back(d);

  Tensor y;
  if (training) {
    const int64_t per_channel = channels == 0 ? 0 : x.numel() / channels;
    if (per_channel <= 1) {
      throw_unary_error("batch_norm", x,
                        "expected more than 1 value per channel when training, got " +
                            std::to_string(per_channel));
    }
    const Tensor centred = x - mean(x, reduce_dims, true);                   // [N, C, *]
    const Tensor variance = mean(mul(centred, centred), reduce_dims, true);  // [1, C, 1..]
    y = mul(centred, rsqrt(variance + eps));                                 // [N, C, *]
    dispatch(x.dtype(),
             [&]<class T>() { update_running_stats<T>(x, running_mean, running_var, momentum); });
  } else {
    if (!running_mean.defined() || !running_var.defined()) {
      throw_unary_error("batch_norm", x,
                        "running_mean and running_var must be given when not training");
    }
    Tape& tape = x.tape();
    const Tensor rm = tape.leaf(Shape{channels}, x.dtype(), running_mean.raw_data(), false);
    const Tensor rv = tape.leaf(Shape{channels}, x.dtype(), running_var.raw_data(), false);
    y = mul(x - reshape(rm, channel_shape), rsqrt(reshape(rv, channel_shape) + eps));  // [N, C, *]
  }
  if (weight.defined()) y = mul(y, reshape(weight, channel_shape));
  if (bias.defined()) y = add(y, reshape(bias, channel_shape));
  return y;
}

}  // namespace tapegrad
