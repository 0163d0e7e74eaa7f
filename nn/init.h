// torch.nn.init's role: the default initialisation of nn.Linear, drawn as torch draws it.
#pragma once

#include <cstdint>

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

}  // namespace tapegrad::nn
