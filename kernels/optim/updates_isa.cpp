// The optimisers' update loops (kernels/optim/updates_isa.h), built once per instruction-set
// level from this one file (TAPEGRAD_ISA_LEVEL, kernels/cpu/isa_level.h): Adam/AdamW with a
// register path for float32 (8 floats at AVX2, 16 at AVX-512, 4 at arm64's baseline, NEON), SGD
// and clip_grad_norm_'s sum of squares as plain loops the compiler vectorises. No standard header:
// see kernels/cpu/isa_level.h.
#include <cstdint>

#include <tapegrad/kernels/cpu/isa_level.h>
#include <tapegrad/kernels/optim/updates_isa.h>

#if TAPEGRAD_ISA_LEVEL >= 1
#include <immintrin.h>
#endif
// arm64's baseline has NEON (every armv8-a CPU; always-inline intrinsics, never emitted).
#if TAPEGRAD_ISA_LEVEL == 0 && defined(__aarch64__)
#define TAPEGRAD_UPDATES_NEON 1
#include <arm_neon.h>
#else
#define TAPEGRAD_UPDATES_NEON 0
#endif

// The arithmetic below is written out operation by operation to round where torch rounds (its
// Python-side scalars unfused, its CPU kernels' fused multiply-adds as explicit fused()), so
// the compiler must not contract a*b + c on its own (GCC's default in C++ is to contract).
#pragma GCC optimize("fp-contract=off")

#define TAPEGRAD_UPDATES_NAMESPACE TAPEGRAD_ISA_NAMESPACE(updates)

namespace tapegrad::optim_kernels::isa::TAPEGRAD_UPDATES_NAMESPACE {

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

// One element of the update, written once for a scalar T and for a register of floats (the lane
// ops below), so the vector loop rounds exactly as the scalar tail does (see updates.cpp for
// torch's roundings).
// Scalar lane ops.
inline float fused(float a, float b, float c) {
  return __builtin_fmaf(a, b, c);
}
inline double fused(double a, double b, double c) {
  return __builtin_fma(a, b, c);
}
inline float root(float x) {
  return __builtin_sqrtf(x);
}
inline double root(double x) {
  return __builtin_sqrt(x);
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

#if TAPEGRAD_ISA_LEVEL == 2
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
#elif TAPEGRAD_ISA_LEVEL == 1
// 8 floats, the same IEEE operations as the scalar ops.
struct F32x8 {
  __m256 x;
  static F32x8 broadcast(float a) { return {_mm256_set1_ps(a)}; }
  static F32x8 load(const float* p) { return {_mm256_loadu_ps(p)}; }
  void store(float* p) const { _mm256_storeu_ps(p, x); }
};
inline F32x8 operator*(F32x8 a, F32x8 b) {
  return {_mm256_mul_ps(a.x, b.x)};
}
inline F32x8 operator/(F32x8 a, F32x8 b) {
  return {_mm256_div_ps(a.x, b.x)};
}
inline F32x8 operator+(F32x8 a, F32x8 b) {
  return {_mm256_add_ps(a.x, b.x)};
}
inline F32x8 fused(F32x8 a, F32x8 b, F32x8 c) {
  return {_mm256_fmadd_ps(a.x, b.x, c.x)};
}
inline F32x8 root(F32x8 a) {
  return {_mm256_sqrt_ps(a.x)};
}
inline F32x8 negated(F32x8 a) {  // flips the sign bit, as -x does (0 becomes -0)
  return {_mm256_xor_ps(a.x, _mm256_set1_ps(-0.0f))};
}
inline F32x8 maximum(F32x8 a, F32x8 b) {
  const __m256 take_a =
      _mm256_or_ps(_mm256_cmp_ps(a.x, b.x, _CMP_GT_OQ), _mm256_cmp_ps(a.x, a.x, _CMP_UNORD_Q));
  return {_mm256_blendv_ps(b.x, a.x, take_a)};
}
#elif TAPEGRAD_UPDATES_NEON
// 4 floats, the same IEEE operations as the scalar ops (fsqrt and fdiv are correctly rounded,
// fmla is one rounding as fmaf).
struct F32x4 {
  float32x4_t x;
  static F32x4 broadcast(float a) { return {vdupq_n_f32(a)}; }
  static F32x4 load(const float* p) { return {vld1q_f32(p)}; }
  void store(float* p) const { vst1q_f32(p, x); }
};
inline F32x4 operator*(F32x4 a, F32x4 b) {
  return {vmulq_f32(a.x, b.x)};
}
inline F32x4 operator/(F32x4 a, F32x4 b) {
  return {vdivq_f32(a.x, b.x)};
}
inline F32x4 operator+(F32x4 a, F32x4 b) {
  return {vaddq_f32(a.x, b.x)};
}
inline F32x4 fused(F32x4 a, F32x4 b, F32x4 c) {  // a·b + c
  return {vfmaq_f32(c.x, a.x, b.x)};
}
inline F32x4 root(F32x4 a) {
  return {vsqrtq_f32(a.x)};
}
inline F32x4 negated(F32x4 a) {  // flips the sign bit, as -x does (0 becomes -0)
  return {vnegq_f32(a.x)};
}
inline F32x4 maximum(F32x4 a, F32x4 b) {
  const uint32x4_t take_a = vorrq_u32(vcgtq_f32(a.x, b.x), vmvnq_u32(vceqq_f32(a.x, a.x)));
  return {vbslq_f32(take_a, a.x, b.x)};
}
#endif

// Updates p, m, v (and v_max) for one element or one register of elements; V is T or a register.
template <bool kMaximize, bool kDecoupled, bool kCoupledDecay, bool kAmsgrad, class V, class T>
void adam_element(T* p, const T* grad, T* m, T* v, T* v_max, const AdamConstants<V>& c) {
  auto load = [](const T* x) {
    if constexpr (sizeof(V) == sizeof(T)) {
      return *x;
    } else {
      return V::load(x);
    }
  };
  auto store = [](T* x, V value) {
    if constexpr (sizeof(V) == sizeof(T)) {
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
void adam_loop(T* __restrict p, const T* __restrict grad, T* __restrict m, T* __restrict v,
               T* __restrict v_max, int64_t n, const AdamConstants<T>& c) {
  int64_t i = 0;
#if TAPEGRAD_ISA_LEVEL >= 1 || TAPEGRAD_UPDATES_NEON
  if constexpr (sizeof(T) == sizeof(float)) {
#if TAPEGRAD_ISA_LEVEL == 2
    using Register = F32x16;
#elif TAPEGRAD_ISA_LEVEL == 1
    using Register = F32x8;
#else
    using Register = F32x4;
#endif
    constexpr int64_t kWidth = sizeof(Register) / sizeof(float);
    const auto b = [](float x) { return Register::broadcast(x); };
    const AdamConstants<Register> cv{
        b(c.grad_scale), b(c.neg_step_size), b(c.bc2_sqrt), b(c.b1), b(c.one_minus_b1),
        b(c.b2),         b(c.one_minus_b2),  b(c.eps),      b(c.wd), b(c.shrink)};
    for (; i + kWidth <= n; i += kWidth) {
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
    if constexpr (kDecay) d = fused(p[i], wd, d);
    if constexpr (kMomentum) {
      const T b = kFirst ? d : fused(d, keep, buf[i] * mom);  // torch clones g on step 1
      buf[i] = b;
      d = kNesterov ? fused(b, mom, d) : b;
    }
    p[i] = fused(d, neg_lr, p[i]);
  }
}

template <class T>
void adam_dispatch(T* p, const T* grad, T* m, T* v, T* v_max, int64_t n, const AdamConstants<T>& c,
                   const AdamFlags& flags) {
  with_flags(
      [&]<bool kMaximize, bool kDecoupled, bool kCoupledDecay, bool kAmsgrad>() {
        adam_loop<T, kMaximize, kDecoupled, kCoupledDecay, kAmsgrad>(p, grad, m, v, v_max, n, c);
      },
      flags.maximize, flags.decoupled, flags.coupled_decay, flags.amsgrad);
}

template <class T>
void sgd_dispatch(T* p, const T* grad, T grad_scale, T* buf, int64_t n, const SgdScalars& s,
                  const SgdFlags& flags) {
  with_flags(
      [&]<bool kMaximize, bool kDecay, bool kMomentum, bool kNesterov, bool kFirst>() {
        sgd_loop<T, kMaximize, kDecay, kMomentum, kNesterov, kFirst>(
            p, grad, grad_scale, buf, n, s.lr, s.momentum, s.dampening, s.weight_decay);
      },
      flags.maximize, flags.decay, flags.momentum, flags.nesterov, flags.first);
}

// Σ (g·scale)² over [begin, end) in double: element i into running sum (i − begin) mod 8, the 8
// sums combined pairwise. Each sum is lane-wise, so the compiler's vectors (2 or 4 doubles, as
// the level has) give the same bits at every level.
template <class T>
double sum_of_squares_loop(const T* g, T scale, int64_t begin, int64_t end) {
  constexpr int kSums = 8;
  double sums[kSums] = {};
  int64_t i = begin;
  for (; i + kSums <= end; i += kSums) {
    for (int l = 0; l < kSums; ++l) {
      const double x = static_cast<double>(g[i + l] * scale);
      sums[l] += x * x;
    }
  }
  for (int l = 0; i < end; ++i, ++l) {
    const double x = static_cast<double>(g[i] * scale);
    sums[l] += x * x;
  }
  for (int width = kSums / 2; width > 0; width /= 2) {
    for (int l = 0; l < width; ++l) sums[l] += sums[l + width];
  }
  return sums[0];
}

}  // namespace

double sum_of_squares(const float* g, float scale, int64_t begin, int64_t end) {
  return sum_of_squares_loop(g, scale, begin, end);
}
double sum_of_squares(const double* g, double scale, int64_t begin, int64_t end) {
  return sum_of_squares_loop(g, scale, begin, end);
}
void adam(float* p, const float* grad, float* m, float* v, float* v_max, int64_t n,
          const AdamConstants<float>& c, const AdamFlags& flags) {
  adam_dispatch(p, grad, m, v, v_max, n, c, flags);
}
void adam(double* p, const double* grad, double* m, double* v, double* v_max, int64_t n,
          const AdamConstants<double>& c, const AdamFlags& flags) {
  adam_dispatch(p, grad, m, v, v_max, n, c, flags);
}
void sgd(float* p, const float* grad, float grad_scale, float* buf, int64_t n, const SgdScalars& s,
         const SgdFlags& flags) {
  sgd_dispatch(p, grad, grad_scale, buf, n, s, flags);
}
void sgd(double* p, const double* grad, double grad_scale, double* buf, int64_t n,
         const SgdScalars& s, const SgdFlags& flags) {
  sgd_dispatch(p, grad, grad_scale, buf, n, s, flags);
}

}  // namespace tapegrad::optim_kernels::isa::TAPEGRAD_UPDATES_NAMESPACE
