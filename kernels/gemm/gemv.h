// Matrix-vector products for one-row inference (a decode step): y = W·x (+ b), each weight read
// once, at the memory bandwidth the machine gives.
#pragma once

#include <cstdint>

namespace tapegrad {

// y[o] = Σ_i W[o, i]·x[i] (+ bias[o] when bias is not null), for o in [0, out): nn.Linear's
// x·Wᵀ + b for one row x [in], with W [out, in] row-major (torch's layout). Rows of W are split
// over the thread setting's threads (graph/threads.h) when there are enough of them; each
// output is the same sum however many threads run, so results are bit-identical run to run and
// across thread counts. y must not alias w, x or bias.
void gemv(const float* w, const float* x, const float* bias, float* y, int64_t out, int64_t in);

}  // namespace tapegrad
