// The blocked causal attention kernel (kernels/attention/attention.h), for every shape the direct
// one does not take.
//
// Forward, per (batch, head) and block of kBr query rows: the key blocks (kBc keys) up to the
// block's last row are scored with one GEMM each, and an online softmax (running max m and sum l
// per row, FlashAttention's) folds them into the output, so no [T, T] scores exist; blocks wholly
// above the diagonal are never computed. Only each row's log-sum-exp L = m + log l is saved.
// Backward recomputes each block's probabilities P = exp(S − L) from q and k and forms
// dv, dq, dk from them (FlashAttention-2's order: key blocks outside, query blocks inside).
// The exps and row sums are vmath's, so they run at the CPU level in use (kernels/cpu/cpu.h);
// the products are gemm's.
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>

#include <tapegrad/kernels/attention/attention.h>
#include <tapegrad/kernels/gemm/gemm.h>
#include <tapegrad/kernels/vmath/vmath.h>

namespace tapegrad::detail::attention {

namespace {

template <class T>
using ArrayMap = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;
template <class T>
using ConstArrayMap = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;

constexpr int64_t kBr = 32;   // query rows per block
constexpr int64_t kBc = 256;  // keys per block

// Keys j0.. of a block that row i (global) may see: j <= i.
inline int64_t visible(int64_t i, int64_t j0, int64_t jb) {
  return std::clamp<int64_t>(i - j0 + 1, 0, jb);
}

}  // namespace

template <class T>
void blocked_forward_head(const Heads& g, const T* q, const T* k, const T* v, T* o, T* lse,
                          T* scratch) {
  const int64_t t = g.t, d = g.d, ld = g.row_stride;
  const T c = static_cast<T>(std::sqrt(static_cast<double>(d)));
  // When √D is a power of two (D = 1, 4, 16, 64, ...), multiplying by 1/√D is exactly the
  // division: then the GEMM applies it, saving a pass over the scores.
  const bool exact = exact_reciprocal(c);
  T* s = scratch;          // [kBr, kBc] scores, then probabilities
  T* acc = s + kBr * kBc;  // [kBr, d] unnormalised output
  T* m = acc + kBr * d;    // [kBr] running max
  T* l = m + kBr;          // [kBr] running sum
  for (int64_t i0 = 0; i0 < t; i0 += kBr) {
    const int64_t ib = std::min(kBr, t - i0);
    const int64_t kend = i0 + ib;  // keys beyond the block's last row are all masked
    std::fill(m, m + ib, -std::numeric_limits<T>::infinity());
    std::fill(l, l + ib, T(0));
    std::fill(acc, acc + ib * d, T(0));
    for (int64_t j0 = 0; j0 < kend; j0 += kBc) {
      const int64_t jb = std::min(kBc, kend - j0);
      // S = Q·Kᵀ (· 1/√D when exact), Q [ib, d] and K [jb, d] rows of the [T, C] inputs
      gemm(matrix(s, ib, jb), matrix(q + i0 * ld, ib, d, ld), matrix(k + j0 * ld, jb, d, ld).t(),
           {.alpha = exact ? T(1) / c : T(1), .parallel = false});
      for (int64_t r = 0; r < ib; ++r) {
        const int64_t n = visible(i0 + r, j0, jb);
        ArrayMap<T> row(s + r * jb, jb);
        if (n == 0) {
          row.setZero();
          continue;
        }
        // The visible keys go through the CPU level's exp and sum (vmath's, built per level);
        // the masked ones are exactly 0.
        if (!exact) row.head(n) /= c;
        // (A NaN the max skips still reaches the sum through its exp: the row is NaN either way.)
        const T m_new = std::max(m[r], row.head(n).maxCoeff());
        row.head(n) -= m_new;
        vmath::exp(row.data(), row.data(), n);
        row.tail(jb - n).setZero();
        if (j0 == 0) {
          l[r] = vmath::sum(row.data(), n);  // the first block: nothing to rescale
        } else {
          const T alpha = std::exp(m[r] - m_new);
          l[r] = l[r] * alpha + vmath::sum(row.data(), n);
          if (alpha != T(1)) ArrayMap<T>(acc + r * d, d) *= alpha;
        }
        m[r] = m_new;
      }
      gemm(matrix(acc, ib, d), matrix(s, ib, jb), matrix(v + j0 * ld, jb, d, ld),
           {.accumulate = true, .parallel = false});  // acc += P·V
    }
    for (int64_t r = 0; r < ib; ++r) {
      const T inv = T(1) / l[r];
      ArrayMap<T>(o + (i0 + r) * ld, d) = ConstArrayMap<T>(acc + r * d, d) * inv;
      lse[i0 + r] = m[r] + std::log(l[r]);
    }
  }
}

template <class T>
void blocked_backward_head(const Heads& g, const T* q, const T* k, const T* v, const T* o,
                           const T* dout, const T* lse, T* dq, T* dk, T* dv, T* scratch) {
  const int64_t t = g.t, d = g.d, ld = g.row_stride;
  const T c = static_cast<T>(std::sqrt(static_cast<double>(d)));
  const bool exact = exact_reciprocal(c);
  const T inv_c = T(1) / c;
  T* p = scratch;             // [kBr, kBc] probabilities
  T* dp = p + kBr * kBc;      // [kBr, kBc] dP, then dS
  T* delta = dp + kBr * kBc;  // [t] rowsum(dO ⊙ O)
  for (int64_t i = 0; i < t; ++i) {
    delta[i] = (ConstArrayMap<T>(dout + i * ld, d) * ConstArrayMap<T>(o + i * ld, d)).sum();
  }
  for (int64_t j0 = 0; j0 < t; j0 += kBc) {
    const int64_t jfull = std::min(kBc, t - j0);
    for (int64_t i0 = j0 / kBr * kBr; i0 < t; i0 += kBr) {
      const int64_t ib = std::min(kBr, t - i0);
      const int64_t jb = std::min(jfull, i0 + ib - j0);  // keys past the block's last row: masked
      if (jb <= 0) continue;
      gemm(matrix(p, ib, jb), matrix(q + i0 * ld, ib, d, ld), matrix(k + j0 * ld, jb, d, ld).t(),
           {.alpha = exact ? inv_c : T(1), .parallel = false});  // S = Q·Kᵀ
      for (int64_t r = 0; r < ib; ++r) {
        const int64_t n = visible(i0 + r, j0, jb);
        ArrayMap<T> row(p + r * jb, jb);
        if (exact) {
          row.head(n) -= lse[i0 + r];
        } else {
          row.head(n) = row.head(n) / c - lse[i0 + r];
        }
        vmath::exp(row.data(), row.data(), n);
        row.tail(jb - n).setZero();  // exactly 0, as in the forward
      }
      if (dv) {  // dV += Pᵀ·dO
        gemm(matrix(dv + j0 * ld, jb, d, ld), matrix(p, ib, jb).t(),
             matrix(dout + i0 * ld, ib, d, ld), {.accumulate = true, .parallel = false});
      }
      if (!dq && !dk) continue;
      gemm(matrix(dp, ib, jb), matrix(dout + i0 * ld, ib, d, ld),
           matrix(v + j0 * ld, jb, d, ld).t(), {.parallel = false});  // dP = dO·Vᵀ
      for (int64_t r = 0; r < ib; ++r) {
        ArrayMap<T> ds(dp + r * jb, jb);
        if (exact) {
          ds = ConstArrayMap<T>(p + r * jb, jb) * (ds - delta[i0 + r]) * inv_c;
        } else {
          ds = ConstArrayMap<T>(p + r * jb, jb) * (ds - delta[i0 + r]) / c;
        }
      }
      if (dq) {  // dQ += dS·K
        gemm(matrix(dq + i0 * ld, ib, d, ld), matrix(dp, ib, jb), matrix(k + j0 * ld, jb, d, ld),
             {.accumulate = true, .parallel = false});
      }
      if (dk) {  // dK += dSᵀ·Q
        gemm(matrix(dk + j0 * ld, jb, d, ld), matrix(dp, ib, jb).t(),
             matrix(q + i0 * ld, ib, d, ld), {.accumulate = true, .parallel = false});
      }
    }
  }
}

template <class T>
int64_t blocked_forward_scratch(const Heads& g) {
  return kBr * kBc + kBr * g.d + 2 * kBr;
}
template <class T>
int64_t blocked_backward_scratch(const Heads& g) {
  return 2 * kBr * kBc + g.t;
}

template <class T>
const Kernel<T>& blocked_kernel() {
  static constexpr Kernel<T> kernel{blocked_forward_scratch<T>, blocked_backward_scratch<T>,
                                    blocked_forward_head<T>, blocked_backward_head<T>};
  return kernel;
}
template const Kernel<float>& blocked_kernel<float>();
template const Kernel<double>& blocked_kernel<double>();

}  // namespace tapegrad::detail::attention
