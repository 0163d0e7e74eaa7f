// Adam and AdamW: torch.optim's single-tensor updates, one fused, threaded pass over all
// parameters.
#include <tapegrad/optim/adam.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <utility>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include <tapegrad/optim/util.h>

// The arithmetic below is written out operation by operation to round where torch rounds (its
// Python-side scalars unfused, its CPU kernels' fused multiply-adds as explicit std::fma), so
// the compiler must not contract a*b + c on its own (GCC's default in C++ is to contract).
#pragma GCC optimize("fp-contract=off")

namespace tapegrad {

using optim_detail::AdamStep;
using optim_detail::dispatch_dtype;
using optim_detail::for_all_elements;
using optim_detail::format_number;
using optim_detail::one_group;
using optim_detail::with_flags;

namespace {

AdamOptions from_adamw(const AdamWOptions& o) {
  return AdamOptions{.lr = o.lr,
                     .betas = o.betas,
                     .eps = o.eps,
                     .weight_decay = o.weight_decay,
                     .amsgrad = o.amsgrad,
                     .maximize = o.maximize};
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
AdamConstants<T> adam_constants(const AdamStep& s, T grad_scale) {
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
               T* __restrict v, T* __restrict v_max, int64_t n, const AdamStep& s) {
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

}  // namespace

Adam::Adam(std::vector<Parameter> params, AdamOptions options)
    : Adam("Adam", one_group(std::move(params)), options, false) {}

Adam::Adam(std::vector<ParamGroup> groups, AdamOptions options)
    : Adam("Adam", std::move(groups), options, false) {}

Adam::Adam(const char* name, std::vector<ParamGroup> groups, const AdamOptions& options,
           bool decoupled)
    : Optimizer(name, std::move(groups), options.lr, options.weight_decay),
      options_(options),
      decoupled_(decoupled) {
  for (int k = 0; k < 2; ++k) {
    const double beta = options.betas[static_cast<size_t>(k)];
    if (!(beta >= 0.0 && beta < 1.0)) {
      fail("betas[" + std::to_string(k) + "] must be in [0, 1), got " + format_number(beta));
    }
  }
  if (!(std::isfinite(options.eps) && options.eps > 0.0)) {
    fail("eps must be > 0, got " + format_number(options.eps));
  }
  if (options.amsgrad) {
    set_state_layout({"exp_avg", "exp_avg_sq", "max_exp_avg_sq"}, /*per_param_step=*/true);
  } else {
    set_state_layout({"exp_avg", "exp_avg_sq"}, /*per_param_step=*/true);
  }
}

void Adam::step() {
  // First the per-parameter bookkeeping (state, step count), then one pass over all elements.
  segments_.clear();
  size_t index = 0;
  for (const Group& group : groups_) {
    for (const Parameter& p : group.params) {
      ParamState& st = states_[index++];
      if (!p.requires_grad() || !p.has_grad()) continue;  // torch: .grad is None
      ensure_state(st, p);
      ++st.step;
      if (p.numel() == 0) continue;
      segments_.push_back(Segment{.param = p.raw_data(),
                                  .grad = p.grad_keeping_scale(),
                                  .grad_scale = p.grad_scale(),
                                  .m = st.slots[0].data(),
                                  .v = st.slots[1].data(),
                                  .v_max = st.slots[2].data(),  // null without amsgrad
                                  .n = p.numel(),
                                  .dtype = p.dtype(),
                                  .coupled_decay = !decoupled_ && group.weight_decay != 0.0,
                                  .s = AdamStep{group.lr, options_.betas[0], options_.betas[1],
                                                options_.eps, group.weight_decay, st.step}});
    }
  }
  for_all_elements(segments_, 20.0, [&](const Segment& seg, int64_t begin, int64_t end) {
    dispatch_dtype(seg.dtype, [&]<class T>() {
      T* v_max = seg.v_max != nullptr ? static_cast<T*>(seg.v_max) + begin : nullptr;
      with_flags(
          [&]<bool kMaximize, bool kDecoupled, bool kCoupledDecay, bool kAmsgrad>() {
            adam_loop<T, kMaximize, kDecoupled, kCoupledDecay, kAmsgrad>(
                static_cast<T*>(seg.param) + begin, static_cast<const T*>(seg.grad) + begin,
                static_cast<T>(seg.grad_scale), static_cast<T*>(seg.m) + begin,
                static_cast<T*>(seg.v) + begin, v_max, end - begin, seg.s);
          },
          options_.maximize, decoupled_, seg.coupled_decay, options_.amsgrad);
    });
  });
  ++steps_;
}

AdamW::AdamW(std::vector<Parameter> params, AdamWOptions options)
    : Adam("AdamW", one_group(std::move(params)), from_adamw(options), true) {}

AdamW::AdamW(std::vector<ParamGroup> groups, AdamWOptions options)
    : Adam("AdamW", std::move(groups), from_adamw(options), true) {}

}  // namespace tapegrad
