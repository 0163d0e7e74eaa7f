// The one-block causal attention kernel (kernels/attention/attention.h): the blocked kernel's
// arithmetic, operation by operation, for the single-feature heads it runs as one block of tiny
// products (the book's chapter 3 sizes: T = 6, D = 1), in plain loops.
//
// There the blocked kernel (kernels/attention/attention_blocked.cpp) makes, per head, one query
// block and one key block, and every product is [t, t]·[t, 1]-sized: m + n + k = 2t + 1, which gemm
// runs as its tiny loop (kernels/gemm/gemm_kernels.h) when below 20. A head is a few dozen
// multiply-adds, and what the step paid for was the calls around them (a gemm call per product,
// an Eigen expression per row). This kernel calls gemm_tiny itself, makes the same vmath calls
// for each row's exp and sum (the same rows, so the same bits at any CPU level), and writes the
// rest of the row steps as loops that round as the blocked kernel's expressions do, so it computes
// exactly what the blocked kernel does (bit for bit; tests/kernels/attention/
// test_attention_one_block.cpp compares the two on every shape it takes).
//
// Why D = 1 only: then no row step multiplies and adds (rowsum(dO ⊙ O) is one product), so
// nothing here depends on which multiply-adds the compiler fuses (C++ lets it), and the products
// are gemm_tiny's, unfused on purpose. With D > 1 that sum would be Eigen's, compiled in two files
// and fused or not as each one's compile decides.
#include <algorithm>
#include <cmath>
#include <limits>

#include <tapegrad/kernels/attention/attention.h>
#include <tapegrad/kernels/gemm/gemm_kernels.h>
#include <tapegrad/kernels/vmath/vmath.h>

namespace tapegrad::detail::attention {

namespace {

// The longest such head: 2t + 1 < 20.
constexpr int64_t kMaxT = 9;

// std::max, as Eigen's maxCoeff applies it (a NaN may be kept or skipped, in either kernel: the
// row is NaN either way, through its exp).
template <class T>
inline T max_of(T a, T b) {
  return a < b ? b : a;
}

// With D = 1, √D = 1: the blocked kernel's scaling by 1/√D (gemm's alpha, exactly 1) and its
// division of the scores (skipped when √D is a power of two) change nothing, and are left out.
template <class T>
void one_block_forward(const Heads& g, const T* q, const T* k, const T* v, T* o, T* lse,
                       T* scratch) {
  const int64_t t = g.t, ld = g.row_stride;
  T* s = scratch;      // [t, t] scores, then probabilities
  T* acc = s + t * t;  // [t] unnormalised output
  gemm_tiny<T>(matrix(s, t, t), matrix(q, t, 1, ld), matrix(k, t, 1, ld).t(), T(1),
               false);  // S = Q·Kᵀ
  T m[kMaxT], l[kMaxT];
  for (int64_t r = 0; r < t; ++r) {
    T* row = s + r * t;
    const int64_t n = r + 1;  // the keys row r sees
    T row_max = row[0];
    for (int64_t j = 1; j < n; ++j) row_max = max_of(row_max, row[j]);
    m[r] = max_of(-std::numeric_limits<T>::infinity(), row_max);  // the running max starts at -inf
    for (int64_t j = 0; j < n; ++j) row[j] -= m[r];
    vmath::exp(row, row, n);
    std::fill(row + n, row + t, T(0));
    l[r] = vmath::sum(row, n);
  }
  std::fill(acc, acc + t, T(0));
  gemm_tiny<T>(matrix(acc, t, 1), matrix<const T>(s, t, t), matrix(v, t, 1, ld), T(1),
               true);  // acc += P·V
  for (int64_t r = 0; r < t; ++r) {
    o[r * ld] = acc[r] * (T(1) / l[r]);
    lse[r] = m[r] + std::log(l[r]);
  }
}

template <class T>
void one_block_backward(const Heads& g, const T* q, const T* k, const T* v, const T* o,
                        const T* dout, const T* lse, T* dq, T* dk, T* dv, T* scratch) {
  const int64_t t = g.t, ld = g.row_stride;
  T* p = scratch;     // [t, t] probabilities
  T* dp = p + t * t;  // [t, t] dP, then dS
  T delta[kMaxT];     // rowsum(dO ⊙ O): one product
  for (int64_t i = 0; i < t; ++i) delta[i] = dout[i * ld] * o[i * ld];
  gemm_tiny<T>(matrix(p, t, t), matrix(q, t, 1, ld), matrix(k, t, 1, ld).t(), T(1),
               false);  // S = Q·Kᵀ
  for (int64_t r = 0; r < t; ++r) {
    T* row = p + r * t;
    const int64_t n = r + 1;
    for (int64_t j = 0; j < n; ++j) row[j] -= lse[r];
    vmath::exp(row, row, n);
    std::fill(row + n, row + t, T(0));
  }
  if (dv) {  // dV += Pᵀ·dO
    gemm_tiny<T>(matrix(dv, t, 1, ld), matrix<const T>(p, t, t).t(), matrix(dout, t, 1, ld), T(1),
                 true);
  }
  if (!dq && !dk) return;
  gemm_tiny<T>(matrix(dp, t, t), matrix(dout, t, 1, ld), matrix(v, t, 1, ld).t(), T(1),
               false);               // dP = dO·Vᵀ
  for (int64_t r = 0; r < t; ++r) {  // dS = P ⊙ (dP − delta)
    const T* pr = p + r * t;
    T* ds = dp + r * t;
    for (int64_t j = 0; j < t; ++j) ds[j] = pr[j] * (ds[j] - delta[r]);
  }
  if (dq) {  // dQ += dS·K
    gemm_tiny<T>(matrix(dq, t, 1, ld), matrix<const T>(dp, t, t), matrix(k, t, 1, ld), T(1), true);
  }
  if (dk) {  // dK += dSᵀ·Q
    gemm_tiny<T>(matrix(dk, t, 1, ld), matrix<const T>(dp, t, t).t(), matrix(q, t, 1, ld), T(1),
                 true);
  }
}

template <class T>
int64_t one_block_forward_scratch(const Heads& g) {
  return g.t * g.t + g.t;
}
template <class T>
int64_t one_block_backward_scratch(const Heads& g) {
  return 2 * g.t * g.t;
}

}  // namespace

template <class T>
bool one_block_takes(const Heads& g) {
  return g.d == 1 && is_tiny_product(g.t, g.t, g.d);
}

template <class T>
const Kernel<T>& one_block_kernel() {
  static constexpr Kernel<T> kernel{one_block_forward_scratch<T>, one_block_backward_scratch<T>,
                                    one_block_forward<T>, one_block_backward<T>};
  return kernel;
}
template bool one_block_takes<float>(const Heads&);
template bool one_block_takes<double>(const Heads&);
template const Kernel<float>& one_block_kernel<float>();
template const Kernel<double>& one_block_kernel<double>();

}  // namespace tapegrad::detail::attention
