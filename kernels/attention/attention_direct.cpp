// The direct causal attention kernel (kernels/attention/attention.h), for short sequences (T <=
// 128) with D a multiple of the 64-byte vector (16 floats, 8 doubles; D <= 4 vectors): whole score
// rows in registers, a few query rows at a time, no GEMM calls (at T = 64, D = 16 a GEMM call per
// tile costs more than its arithmetic; the op took half the time at the benchmark's small workload,
// from perf shares of the step). Here: which shapes it takes, its scratch, and the variant of the
// CPU level in use (kernels/cpu/cpu.h); the arithmetic is kernels/attention/attention_isa.cpp's,
// built once per level.
#include <cmath>

#include <tapegrad/kernels/attention/attention.h>
#include <tapegrad/kernels/attention/attention_isa.h>
#include <tapegrad/kernels/cpu/cpu.h>
#include <tapegrad/kernels/vec.h>

namespace tapegrad::detail::attention {

namespace {

constexpr int64_t kDirectMaxT = 128;

using detail::kLanes;

template <class T>
bool use_direct(const Heads& g) {
  return g.t <= kDirectMaxT && g.d % kLanes<T> == 0 && g.d <= 4 * kLanes<T>;
}

inline int64_t round_up(int64_t n, int64_t to) {
  return (n + to - 1) / to * to;
}

// One head's arguments for the variants.
template <class T>
DirectHead<T> direct_head(const Heads& g) {
  DirectHead<T> h{};
  h.t = g.t;
  h.d = g.d;
  h.ld = g.row_stride;
  h.c = static_cast<T>(std::sqrt(static_cast<double>(g.d)));
  h.exact = exact_reciprocal(h.c);
  return h;
}

// The variant of the level in use (one atomic load a head): AVX-512's at avx512 and above,
// AVX2's at avx2, else baseline.
template <class T>
void run_forward(const DirectHead<T>& h) {
#if defined(__x86_64__)
  const CpuCapability level = cpu_capability();
  if (level >= CpuCapability::Avx512) return attention_avx512::forward_head(h);
  if (level == CpuCapability::Avx2) return attention_avx2::forward_head(h);
#endif
  attention_baseline::forward_head(h);
}
template <class T>
void run_backward(const DirectHead<T>& h) {
#if defined(__x86_64__)
  const CpuCapability level = cpu_capability();
  if (level >= CpuCapability::Avx512) return attention_avx512::backward_head(h);
  if (level == CpuCapability::Avx2) return attention_avx2::backward_head(h);
#endif
  attention_baseline::backward_head(h);
}

}  // namespace

template <class T>
bool direct_takes(const Heads& g) {
  return use_direct<T>(g);
}
template <class T>
int64_t direct_forward_scratch(const Heads& g) {
  return (g.d + kDirectMaxRows) * round_up(g.t, kLanes<T>) + g.t * g.d + g.t;
}
template <class T>
int64_t direct_backward_scratch(const Heads& g) {
  return (2 * g.d + 2 * kDirectMaxRows) * round_up(g.t, kLanes<T>) + g.t * g.d + g.t;
}

template <class T>
void direct_forward_head(const Heads& g, const T* q, const T* k, const T* v, T* o, T* lse,
                         T* scratch) {
  DirectHead<T> h = direct_head<T>(g);
  h.q = q, h.k = k, h.v = v, h.out = o, h.lse = lse, h.scratch = scratch;
  run_forward(h);
}
template <class T>
void direct_backward_head(const Heads& g, const T* q, const T* k, const T* v, const T* o,
                          const T* dout, const T* lse, T* dq, T* dk, T* dv, T* scratch) {
  DirectHead<T> h = direct_head<T>(g);
  h.q = q, h.k = k, h.v = v, h.o = o, h.dout = dout, h.saved_lse = lse;
  h.dq = dq, h.dk = dk, h.dv = dv, h.scratch = scratch;
  run_backward(h);
}

template <class T>
const Kernel<T>& direct_kernel() {
  static constexpr Kernel<T> kernel{direct_forward_scratch<T>, direct_backward_scratch<T>,
                                    direct_forward_head<T>, direct_backward_head<T>};
  return kernel;
}
template bool direct_takes<float>(const Heads&);
template bool direct_takes<double>(const Heads&);
template const Kernel<float>& direct_kernel<float>();
template const Kernel<double>& direct_kernel<double>();

}  // namespace tapegrad::detail::attention
