// One softmax row, forward and backward: the arithmetic of the softmax op, shared with the ops
// that must agree with it bit for bit (causal_dot_product_attention).
#pragma once

#include <cstdint>

namespace tapegrad::detail {

// y = exp(x − max) · (1 / Σ exp(x − max)) over n contiguous values (torch's _vec_softmax_lastdim
// order: max, exp, 1 / sum, scale). x may equal y. -inf entries give exactly 0.
// The last bits depend on y's address modulo 64 bytes (Eigen's vectorised loops start at the
// first aligned element and handle the ones before it apart): a caller that must reproduce the
// softmax op computes its rows at the same offsets from an arena (64-byte aligned) block.
template <class T>
void softmax_row(const T* x, T* y, int64_t n);

// dx += y ⊙ (dy − Σ dy ⊙ y) over n contiguous values (y is softmax's output). With
// overwrite = true, dx = y ⊙ (dy − Σ dy ⊙ y): the same bits as += into zeros, but for the sign
// of a zero.
template <class T>
void softmax_row_backward(const T* y, const T* dy, T* dx, int64_t n, bool overwrite = false);

extern template void softmax_row<float>(const float*, float*, int64_t);
extern template void softmax_row<double>(const double*, double*, int64_t);
extern template void softmax_row_backward<float>(const float*, const float*, float*, int64_t, bool);
extern template void softmax_row_backward<double>(const double*, const double*, double*, int64_t,
                                                  bool);

}  // namespace tapegrad::detail
