// One softmax row, forward and backward: the arithmetic of the softmax op, shared with the ops
// that must agree with it bit for bit (causal_dot_product_attention).
#pragma once

#include <cstdint>

namespace tapegrad::detail {

// y = exp(x − max) · (1 / Σ exp(x − max)) over n contiguous values, torch's _vec_softmax_lastdim
// operation by operation (SLEEF's exp, torch's summation order), so the bits do not depend on
// the row's address. x may equal y. -inf entries give exactly 0; a NaN makes the row NaN.
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
