// torch.nn.init: the default initialisation of nn.Linear and the init functions (uniform_ ...
// trunc_normal_, calculate_gain), drawn as torch draws them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <tapegrad/graph/parameter.h>
#include <tapegrad/graph/random.h>

namespace tapegrad::nn {

// nn.Linear's default initialisation (reset_parameters), draws in torch's order: the weight
// [out_features, in_features] row-major with kaiming_uniform_(a = sqrt(5)), then the bias.
// Weight bound: sqrt(3) * sqrt(2 / (1 + a^2)) / sqrt(fan_in), in torch's Python double arithmetic;
// it differs from 1 / sqrt(fan_in) in the last bit for 695 of fan_in = 1..1024. Throws Error for
// fan_in < 1.
double kaiming_uniform_bound(int64_t fan_in, double a);
double linear_init_weight_bound(int64_t fan_in);  // kaiming_uniform_bound(fan_in, sqrt(5))
// The bias bound 1 / sqrt(fan_in) (0 when fan_in == 0, as in torch). Throws Error for fan_in < 0.
double linear_init_bound(int64_t fan_in);
// A weight with no elements draws nothing (torch's kaiming_uniform_ returns early).
void linear_init_weight(float* w, int64_t out_features, int64_t in_features, Generator& g);
void linear_init_weight(double* w, int64_t out_features, int64_t in_features, Generator& g);
// uniform(-bound, bound) over out_features elements; fan_in is the weight's in_features. With
// fan_in == 0 torch still draws out_features values, all 0.
void linear_init_bias(float* b, int64_t out_features, int64_t fan_in, Generator& g);
void linear_init_bias(double* b, int64_t out_features, int64_t fan_in, Generator& g);

// --- torch.nn.init -------------------------------------------------------------------------
// Each fills a parameter in place from the generator (the default one unless given), the same
// numbers as torch's function on a tensor of that shape and dtype after the same seed: the
// bounds and standard deviations in torch's Python double arithmetic, then torch's uniform_ or
// normal_ (graph/random.h). Errors are torch's ValueErrors, as tapegrad::Error.

// torch.nn.init.calculate_gain: 1 for "linear", "conv1d" ... "conv_transpose3d" and "sigmoid",
// 5/3 for "tanh", √2 for "relu", √(2 / (1 + slope²)) for "leaky_relu" (slope = param, 0.01 if
// absent), 3/4 for "selu"; anything else is an Error.
double calculate_gain(const std::string& nonlinearity, std::optional<double> param = std::nullopt);

// torch's _calculate_fan_in_and_fan_out: size(1)·receptive field and size(0)·receptive field,
// the receptive field being the product of the dims after the second. Rank < 2 is an Error.
struct Fans {
  int64_t fan_in = 0;
  int64_t fan_out = 0;
};
Fans calculate_fans(const Shape& shape);

void uniform_(const Parameter& p, double a = 0.0, double b = 1.0,
              Generator& g = default_generator());
void normal_(const Parameter& p, double mean = 0.0, double std = 1.0,
             Generator& g = default_generator());
void constant_(const Parameter& p, double value);
void zeros_(const Parameter& p);
void ones_(const Parameter& p);
// uniform(−a, a), a = gain·√(2 / (fan_in + fan_out))·√3; normal(0, gain·√(2 / (fan_in + fan_out))).
void xavier_uniform_(const Parameter& p, double gain = 1.0, Generator& g = default_generator());
void xavier_normal_(const Parameter& p, double gain = 1.0, Generator& g = default_generator());
// std = calculate_gain(nonlinearity, a) / √fan, fan from mode "fan_in" or "fan_out" (any case, as
// torch lowers it); uniform(−√3·std, √3·std) or normal(0, std). A parameter with a zero-size dim
// is left as it is and draws nothing, as torch (which warns).
void kaiming_uniform_(const Parameter& p, double a = 0.0, const std::string& mode = "fan_in",
                      const std::string& nonlinearity = "leaky_relu",
                      Generator& g = default_generator());
void kaiming_normal_(const Parameter& p, double a = 0.0, const std::string& mode = "fan_in",
                     const std::string& nonlinearity = "leaky_relu",
                     Generator& g = default_generator());
// torch 1.13's trunc_normal_(mean, std, a, b): uniform(2·Φ((a − mean) / std) − 1,
// 2·Φ((b − mean) / std) − 1) (Φ the normal CDF, in double), then torch's erfinv, · std·√2, + mean
// and clamp to [a, b], each step rounded in the parameter's dtype as torch's in-place ops round.
// std must be finite and > 0, mean finite and a <= b (torch would divide by zero or warn).
void trunc_normal_(const Parameter& p, double mean = 0.0, double std = 1.0, double a = -2.0,
                   double b = 2.0, Generator& g = default_generator());

// torch.nn.init.orthogonal_(tensor, gain): rows = size(0), cols = numel / rows; a [rows, cols]
// drawn by torch's normal_(0, 1) (the same draws), its QR's Q (of the transpose when rows < cols)
// with each column's sign making R's diagonal positive, times gain. torch runs LAPACK's QR in the
// parameter's dtype, tapegrad a Householder QR in double: that Q is unique, so the values agree to
// rounding (against torch 1.13 on tests/goldens/init: within 4e-6 in float32, 1e-12 in float64),
// not bit for bit; the generator is left where torch leaves it. Rank < 2 is an Error; a
// parameter with no elements is left as it is and draws nothing.
void orthogonal_(const Parameter& p, double gain = 1.0, Generator& g = default_generator());

}  // namespace tapegrad::nn
