// The optimisers' update loops per instruction-set level (kernels/optim/updates_isa.cpp, built
// once per level with that level's flags), as updates.cpp calls them. Only plain structs and
// declarations here (kernels/cpu/isa_level.h says why).
#pragma once

#include <cstdint>

#include <tapegrad/kernels/cpu/isa_declare.h>
#include <tapegrad/kernels/optim/updates.h>

namespace tapegrad::optim_kernels::isa {

// Adam's per-step constants, each Python scalar already cast to T as torch casts it (see
// updates.cpp).
template <class T>
struct AdamConstants {
  T grad_scale, neg_step_size, bc2_sqrt, b1, one_minus_b1, b2, one_minus_b2, eps, wd, shrink;
};

// Every level rounds each element the same way (no contraction; the fused multiply-adds are
// explicit), so the bits do not depend on the level; the levels differ in register width:
// baseline one element at a time (its fused multiply-adds are the C library's), AVX2 8 floats a
// register, AVX-512 16.
#define TAPEGRAD_UPDATES_DECLARE                                                           \
  void adam(float* p, const float* grad, float* m, float* v, float* v_max, int64_t n,      \
            const AdamConstants<float>& c, const AdamFlags& flags);                        \
  void adam(double* p, const double* grad, double* m, double* v, double* v_max, int64_t n, \
            const AdamConstants<double>& c, const AdamFlags& flags);                       \
  void sgd(float* p, const float* grad, float grad_scale, float* buf, int64_t n,           \
           const SgdScalars& s, const SgdFlags& flags);                                    \
  void sgd(double* p, const double* grad, double grad_scale, double* buf, int64_t n,       \
           const SgdScalars& s, const SgdFlags& flags);                                    \
  double sum_of_squares(const float* g, float scale, int64_t begin, int64_t end);          \
  double sum_of_squares(const double* g, double scale, int64_t begin, int64_t end);

TAPEGRAD_DECLARE_PER_LEVEL(updates, TAPEGRAD_UPDATES_DECLARE)
#undef TAPEGRAD_UPDATES_DECLARE

}  // namespace tapegrad::optim_kernels::isa
