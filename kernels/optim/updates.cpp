// The optimisers' element updates (kernels/optim/updates.h): Adam/AdamW with an AVX-512 register
// path for float32, and SGD.
#include <tapegrad/kernels/optim/updates.h>

#include <cmath>
#include <cstdint>
#include <type_traits>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

// The arithmetic below is written out operation by operation to round where torch rounds (its
// Python-side scalars unfused, its CPU kernels' fused multiply-adds as explicit std::fma), so
// the compiler must not contract a*b + c on its own (GCC's default in C++ is to contract).
#pragma GCC optimize("fp-contract=off")

namespace tapegrad::optim_kernels {

namespace {

// Turns runtime flags into template arguments, so an update loop is compiled once per
// combination with no branch inside (and vectorizes):
//   with_flags([&]<bool kA, bool kB>() { loop<kA, kB>(...); }, a, b);
template <bool... Known, class F>
void with_flags(F&& f) {
  f.template operator()<Known...>();
}
template <bool... Known, class F, class... Rest>
void with_flags(F&& f, bool flag, Rest... rest) {
  if (flag) {
    with_flags<Known..., true>(f, rest...);
  } else {
    with_flags<Known..., false>(f, rest...);
  }
}

// One element of the update, written once for a scalar T and for a register of 16 floats (the
// lane ops below), so the vector loop rounds exactly as the scalar tail does. torch's roundings,
// in order: the gradient times its pending clip coefficient (clip_grad_norm_'s g.mul_(coef),
// deferred to here; 1, exact, when none); each Python scalar cast to T; mul_ then add_(alpha) as
// fma(y, alpha, x·s); addcmul_ as fma(value·g, g, x); the denominator as sqrt(v) / T(bc2_sqrt) +
// T(eps); addcdiv_ as p + (T(-step_size)·m) / denom.
template <class T>
struct AdamConstants {
  T grad_scale, neg_step_size, bc2_sqrt, b1, one_minus_b1, b2, one_minus_b2, eps, wd, shrink;
};

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

// Scalar lane ops.
template <class T>
T fused(T a, T b, T c) {
  return std::fma(a, b, c);
}
template <class T>
T root(T x) {
  return std::sqrt(x);
}
template <class T>
T negated(T x) {
  return -x;
}
// torch.maximum: NaN wins, so a NaN moment is not silently dropped.
template <class T>
T maximum(T a, T b) {
  return a > b || a != a ? a : b;
}

#if defined(__AVX512F__)
// 16 floats; the same IEEE operations as the scalar ops, lane by lane (vsqrtps and vdivps are
// correctly rounded like std::sqrt and /).
struct F32x16 {
  __m512 x;
  static F32x16 broadcast(float a) { return {_mm512_set1_ps(a)}; }
  static F32x16 load(const float* p) { return {_mm512_loadu_ps(p)}; }
  void store(float* p) const { _mm512_storeu_ps(p, x); }
};
inline F32x16 operator*(F32x16 a, F32x16 b) {
  return {_mm512_mul_ps(a.x, b.x)};
}
inline F32x16 operator/(F32x16 a, F32x16 b) {
  return {_mm512_div_ps(a.x, b.x)};
}
inline F32x16 operator+(F32x16 a, F32x16 b) {
  return {_mm512_add_ps(a.x, b.x)};
}
inline F32x16 fused(F32x16 a, F32x16 b, F32x16 c) {
  return {_mm512_fmadd_ps(a.x, b.x, c.x)};
}
inline F32x16 root(F32x16 a) {
  return {_mm512_sqrt_ps(a.x)};
}
inline F32x16 negated(F32x16 a) {  // flips the sign bit, as -x does (0 becomes -0)
  return {_mm512_castsi512_ps(
      _mm512_xor_si512(_mm512_castps_si512(a.x), _mm512_set1_epi32(INT32_MIN)))};
}
inline F32x16 maximum(F32x16 a, F32x16 b) {
  const __mmask16 take_a =
      _mm512_cmp_ps_mask(a.x, b.x, _CMP_GT_OQ) | _mm512_cmp_ps_mask(a.x, a.x, _CMP_UNORD_Q);
  return {_mm512_mask_blend_ps(take_a, b.x, a.x)};
}
#endif

// Updates p, m, v (and v_max) for one element or one register of elements; V is T or F32x16.
template <bool kMaximize, bool kDecoupled, bool kCoupledDecay, bool kAmsgrad, class V, class T>
void adam_element(T* p, const T* grad, T* m, T* v, T* v_max, const AdamConstants<V>& c) {
  auto load = [](const T* x) {
    if constexpr (std::is_same_v<V, T>) {
      return *x;
    } else {
      return V::load(x);
    }
  };
  auto store = [](T* x, V value) {
    if constexpr (std::is_same_v<V, T>) {
      *x = value;
    } else {
      value.store(x);
    }
  };
  V g = load(grad) * c.grad_scale;
  if constexpr (kMaximize) g = negated(g);
  V w = load(p);
  if constexpr (kDecoupled) w = w * c.shrink;
  if constexpr (kCoupledDecay) g = fused(w, c.wd, g);
  const V m_i = fused(g, c.one_minus_b1, load(m) * c.b1);
  const V v_i = fused(c.one_minus_b2 * g, g, load(v) * c.b2);
  store(m, m_i);
  store(v, v_i);
  V second = v_i;
  if constexpr (kAmsgrad) {
    second = maximum(v_i, load(v_max));
    store(v_max, second);
  }
  const V denom = root(second) / c.bc2_sqrt + c.eps;
  store(p, w + (c.neg_step_size * m_i) / denom);
}

// One pass over n elements: every value read once and written once (the update is bound by
// memory; 163M parameters stream 4.6 GB per step).
template <class T, bool kMaximize, bool kDecoupled, bool kCoupledDecay, bool kAmsgrad>
void adam_loop(T* __restrict p, const T* __restrict grad, T grad_scale, T* __restrict m,
               T* __restrict v, T* __restrict v_max, int64_t n, const AdamScalars& s) {
  const AdamConstants<T> c = adam_constants<T>(s, grad_scale);
  int64_t i = 0;
#if defined(__AVX512F__)
  if constexpr (std::is_same_v<T, float>) {
    const auto b = [](float x) { return F32x16::broadcast(x); };
    const AdamConstants<F32x16> cv{
        b(c.grad_scale), b(c.neg_step_size), b(c.bc2_sqrt), b(c.b1), b(c.one_minus_b1),
        b(c.b2),         b(c.one_minus_b2),  b(c.eps),      b(c.wd), b(c.shrink)};
    for (; i + 16 <= n; i += 16) {
      adam_element<kMaximize, kDecoupled, kCoupledDecay, kAmsgrad>(
          p + i, grad + i, m + i, v + i, kAmsgrad ? v_max + i : nullptr, cv);
    }
  }
#endif
  for (; i < n; ++i) {
    adam_element<kMaximize, kDecoupled, kCoupledDecay, kAmsgrad>(p + i, grad + i, m + i, v + i,
                                                                 kAmsgrad ? v_max + i : nullptr, c);
  }
}

// torch casts each Python scalar to the parameter's dtype, and its add(x, y, alpha) kernel
// computes fma(y, alpha, x): the same roundings here. The flags are template arguments so the
// loop has no branches and vectorizes.
template <class T, bool kMaximize, bool kDecay, bool kMomentum, bool kNesterov, bool kFirst>
void sgd_loop(T* __restrict p, const T* __restrict grad, T grad_scale, T* __restrict buf, int64_t n,
              double lr, double momentum, double dampening, double weight_decay) {
  const T wd = static_cast<T>(weight_decay);
  const T mom = static_cast<T>(momentum);
  const T keep = static_cast<T>(1.0 - dampening);
  const T neg_lr = static_cast<T>(-lr);
  for (int64_t i = 0; i < n; ++i) {
    const T g = grad[i] * grad_scale;  // clip_grad_norm_'s g.mul_(coef), deferred (1: exact)
    T d = kMaximize ? -g : g;
    if constexpr (kDecay) d = std::fma(p[i], wd, d);
    if constexpr (kMomentum) {
      const T b = kFirst ? d : std::fma(d, keep, buf[i] * mom);  // torch clones g on step 1
      buf[i] = b;
      d = kNesterov ? std::fma(b, mom, d) : b;
    }
    p[i] = std::fma(d, neg_lr, p[i]);
  }
}

}  // namespace

template <class T>
void adam_update(T* p, const T* grad, T grad_scale, T* m, T* v, T* v_max, int64_t n,
                 const AdamScalars& s, const AdamFlags& flags) {
  with_flags(
      [&]<bool kMaximize, bool kDecoupled, bool kCoupledDecay, bool kAmsgrad>() {
        adam_loop<T, kMaximize, kDecoupled, kCoupledDecay, kAmsgrad>(p, grad, grad_scale, m, v,
                                                                     v_max, n, s);
      },
      flags.maximize, flags.decoupled, flags.coupled_decay, flags.amsgrad);
}

template <class T>
void sgd_update(T* p, const T* grad, T grad_scale, T* buf, int64_t n, const SgdScalars& s,
                const SgdFlags& flags) {
  with_flags(
      [&]<bool kMaximize, bool kDecay, bool kMomentum, bool kNesterov, bool kFirst>() {
        sgd_loop<T, kMaximize, kDecay, kMomentum, kNesterov, kFirst>(
            p, grad, grad_scale, buf, n, s.lr, s.momentum, s.dampening, s.weight_decay);
      },
      flags.maximize, flags.decay, flags.momentum, flags.nesterov, flags.first);
}

template void adam_update<float>(float*, const float*, float, float*, float*, float*, int64_t,
                                 const AdamScalars&, const AdamFlags&);
template void adam_update<double>(double*, const double*, double, double*, double*, double*,
                                  int64_t, const AdamScalars&, const AdamFlags&);
template void sgd_update<float>(float*, const float*, float, float*, int64_t, const SgdScalars&,
                                const SgdFlags&);
template void sgd_update<double>(double*, const double*, double, double*, int64_t,
                                 const SgdScalars&, const SgdFlags&);

}  // namespace tapegrad::optim_kernels
