// Gradient clipping, as torch.nn.utils.clip_grad_norm_ / clip_grad_value_ (1.13): call after
// backward and before optimizer.step().
#pragma once

#include <vector>

#include <tapegrad/graph/parameter.h>

namespace tapegrad {

class Optimizer;

// Scales every gradient by min(1, max_norm / (total_norm + 1e-6)), where total_norm is the
// norm_type-norm of all gradients taken together (2 by default; INFINITY for the largest
// magnitude; any p > 0), and returns total_norm, like torch. The norm is accumulated in double;
// the coefficient is computed and applied in each gradient's dtype, as torch does. The scaling
// is deferred (no pass over the gradients here): the optimisers apply it in their own pass, any
// other reader of the gradient before it reads (Parameter), with torch's rounding.
// Throws Error, scaling nothing, when max_norm < 0 or norm_type <= 0, or when the norm is not
// finite and error_if_nonfinite is set (otherwise, like torch, the gradients are scaled by the
// resulting NaN/0 coefficient). Parameters with requires_grad() == false or without a gradient
// (no backward reached them: torch's .grad None) are left out.
double clip_grad_norm_(const std::vector<Parameter>& params, double max_norm,
                       double norm_type = 2.0, bool error_if_nonfinite = false);
double clip_grad_norm_(const Optimizer& optimizer, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);

// clip_grad_norm_'s 2-norm in parts, for a caller that holds each gradient in pieces (a sharded
// optimiser: dist::ShardedAdamW), so that it gets clip_grad_norm_'s bits. A gradient of n
// elements is summed in kClipNormChunks chunks, chunk c being elements
// [clip_norm_chunk_begin(n, c), clip_norm_chunk_begin(n, c + 1)); each chunk's Σ g² depends on
// that chunk's elements alone. The tensor's Σ g² is its chunks' sums added in chunk order from
// 0.0 (an empty chunk adds +0.0, which changes nothing), clip_norm_part turns it into the
// tensor's term, the terms are added in parameter order from 0.0, and clip_norm_total gives the
// total norm.
inline constexpr int kClipNormChunks = 64;
inline int64_t clip_norm_chunk_begin(int64_t n, int c) {
  return n * c / kClipNormChunks;
}
// Σ g[i]² over [begin, end) of one chunk (begin, end its bounds), in double.
double clip_norm_chunk_sum_of_squares(const float* g, int64_t begin, int64_t end);
double clip_norm_chunk_sum_of_squares(const double* g, int64_t begin, int64_t end);
// A tensor's term of the total, from its Σ g²: its norm rounded to its dtype, squared.
double clip_norm_part(double sum_of_squares, DType dtype);
// The total norm from the terms' sum: its square root, rounded to float32 when every gradient is.
double clip_norm_total(double sum_of_parts, bool all_float32);

// Clamps every gradient element to [-clip_value, clip_value] (clip_value >= 0).
void clip_grad_value_(const std::vector<Parameter>& params, double clip_value);
void clip_grad_value_(const Optimizer& optimizer, double clip_value);

}  // namespace tapegrad
