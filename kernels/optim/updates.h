// The optimisers' element updates: torch.optim's single-tensor Adam/AdamW and SGD over one
// contiguous range of a parameter, rounding where torch rounds; and clip_grad_norm_'s sum of
// squares.
//
// Which path runs: the variant of the CPU level in use (kernels/cpu/cpu.h;
// kernels/optim/updates_isa.cpp): float32 Adam/AdamW updates 16 elements a register at AVX-512,
// 8 at AVX2, then the tail one at a time with the same operations (so the bits do not depend on
// where a range starts, nor on the level); float64, SGD, and the baseline level run the
// one-element loop, which the compiler vectorises. The flags choose a loop compiled without
// branches for each combination.
#pragma once

#include <cstdint>

namespace tapegrad::optim_kernels {

// One parameter's Adam hyper-parameters and step count t (from 1).
struct AdamScalars {
  double lr, beta1, beta2, eps, weight_decay;
  int64_t t;
};
struct AdamFlags {
  bool maximize = false;
  bool decoupled = false;      // AdamW: p·(1 - lr·wd) before the update
  bool coupled_decay = false;  // Adam with weight decay: g + wd·p
  bool amsgrad = false;        // v_max is then read and written
};
// p, m, v (and v_max) updated in place over n elements; grad is multiplied by grad_scale first
// (clip_grad_norm_'s pending coefficient, 1 when none).
template <class T>
void adam_update(T* p, const T* grad, T grad_scale, T* m, T* v, T* v_max, int64_t n,
                 const AdamScalars& s, const AdamFlags& flags);

struct SgdScalars {
  double lr, momentum, dampening, weight_decay;
};
struct SgdFlags {
  bool maximize = false;
  bool decay = false;     // weight_decay != 0
  bool momentum = false;  // buf is then read and written
  bool nesterov = false;
  bool first = false;  // the parameter's first step: the buffer starts as a copy of g
};
template <class T>
void sgd_update(T* p, const T* grad, T grad_scale, T* buf, int64_t n, const SgdScalars& s,
                const SgdFlags& flags);

// Σ (g[i]·scale)² over [begin, end) in double (clip_grad_norm_'s chunks, optim/clip.h): 8 running
// sums, element i into sum (i − begin) mod 8, combined pairwise; the same bits at every level.
template <class T>
double sum_of_squares(const T* g, T scale, int64_t begin, int64_t end);

extern template void adam_update<float>(float*, const float*, float, float*, float*, float*,
                                        int64_t, const AdamScalars&, const AdamFlags&);
extern template void adam_update<double>(double*, const double*, double, double*, double*, double*,
                                         int64_t, const AdamScalars&, const AdamFlags&);
extern template void sgd_update<float>(float*, const float*, float, float*, int64_t,
                                       const SgdScalars&, const SgdFlags&);
extern template void sgd_update<double>(double*, const double*, double, double*, int64_t,
                                        const SgdScalars&, const SgdFlags&);
extern template double sum_of_squares<float>(const float*, float, int64_t, int64_t);
extern template double sum_of_squares<double>(const double*, double, int64_t, int64_t);

}  // namespace tapegrad::optim_kernels
