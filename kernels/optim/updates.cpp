// The optimisers' element updates and clip_grad_norm_'s sum of squares
// (kernels/optim/updates.h): the per-step constants here, the loops in the variant of the CPU
// level in use (kernels/optim/updates_isa.cpp, built once per level).
#include <tapegrad/kernels/optim/updates.h>

#include <cmath>
#include <cstdint>

#include <tapegrad/kernels/cpu/cpu.h>
#include <tapegrad/kernels/optim/updates_isa.h>

namespace tapegrad::optim_kernels {

namespace {

using isa::AdamConstants;

// The constants torch's roundings need. Its roundings, in order: the gradient times its pending
// clip coefficient (clip_grad_norm_'s g.mul_(coef), deferred to here; 1, exact, when none); each
// Python scalar cast to T; mul_ then add_(alpha) as fma(y, alpha, x·s); addcmul_ as fma(value·g, g,
// x); the denominator as sqrt(v) / T(bc2_sqrt) + T(eps); addcdiv_ as p + (T(-step_size)·m) / denom.
template <class T>
AdamConstants<T> adam_constants(const AdamScalars& s, T grad_scale) {
  const double t = static_cast<double>(s.t);
  const double bias_correction1 = 1.0 - std::pow(s.beta1, t);
  const double bias_correction2 = 1.0 - std::pow(s.beta2, t);
  return {.grad_scale = grad_scale,
          .neg_step_size = static_cast<T>(-(s.lr / bias_correction1)),
          .bc2_sqrt = static_cast<T>(std::sqrt(bias_correction2)),
          .b1 = static_cast<T>(s.beta1),
          .one_minus_b1 = static_cast<T>(1.0 - s.beta1),
          .b2 = static_cast<T>(s.beta2),
          .one_minus_b2 = static_cast<T>(1.0 - s.beta2),
          .eps = static_cast<T>(s.eps),
          .wd = static_cast<T>(s.weight_decay),
          .shrink = static_cast<T>(1.0 - s.lr * s.weight_decay)};
}

}  // namespace

// The level is one atomic load (cpu.cpp): picked per call, so the test hook reaches it.
template <class T>
void adam_update(T* p, const T* grad, T grad_scale, T* m, T* v, T* v_max, int64_t n,
                 const AdamScalars& s, const AdamFlags& flags) {
  const AdamConstants<T> c = adam_constants<T>(s, grad_scale);
#if defined(__x86_64__)
  const CpuCapability level = cpu_capability();
  if (level >= CpuCapability::Avx512)
    return isa::updates_avx512::adam(p, grad, m, v, v_max, n, c, flags);
  if (level == CpuCapability::Avx2)
    return isa::updates_avx2::adam(p, grad, m, v, v_max, n, c, flags);
#endif
  isa::updates_baseline::adam(p, grad, m, v, v_max, n, c, flags);
}

template <class T>
void sgd_update(T* p, const T* grad, T grad_scale, T* buf, int64_t n, const SgdScalars& s,
                const SgdFlags& flags) {
#if defined(__x86_64__)
  const CpuCapability level = cpu_capability();
  if (level >= CpuCapability::Avx512)
    return isa::updates_avx512::sgd(p, grad, grad_scale, buf, n, s, flags);
  if (level == CpuCapability::Avx2)
    return isa::updates_avx2::sgd(p, grad, grad_scale, buf, n, s, flags);
#endif
  isa::updates_baseline::sgd(p, grad, grad_scale, buf, n, s, flags);
}

template <class T>
double sum_of_squares(const T* g, T scale, int64_t begin, int64_t end) {
#if defined(__x86_64__)
  const CpuCapability level = cpu_capability();
  if (level >= CpuCapability::Avx512)
    return isa::updates_avx512::sum_of_squares(g, scale, begin, end);
  if (level == CpuCapability::Avx2) return isa::updates_avx2::sum_of_squares(g, scale, begin, end);
#endif
  return isa::updates_baseline::sum_of_squares(g, scale, begin, end);
}

template void adam_update<float>(float*, const float*, float, float*, float*, float*, int64_t,
                                 const AdamScalars&, const AdamFlags&);
template void adam_update<double>(double*, const double*, double, double*, double*, double*,
                                  int64_t, const AdamScalars&, const AdamFlags&);
template void sgd_update<float>(float*, const float*, float, float*, int64_t, const SgdScalars&,
                                const SgdFlags&);
template void sgd_update<double>(double*, const double*, double, double*, int64_t,
                                 const SgdScalars&, const SgdFlags&);

template double sum_of_squares<float>(const float*, float, int64_t, int64_t);
template double sum_of_squares<double>(const double*, double, int64_t, int64_t);

}  // namespace tapegrad::optim_kernels
