// causal_attention: softmax(causal_mask(q·kᵀ) / √D)·v per (batch, head), fused and blocked.
//
// A kernel, so over the 120-line budget of an op file: the blocked forward and backward (online
// softmax, recomputed probabilities) only make sense read together, and so do the direct ones.
//
// Two kernels per head, chosen by shape. Short sequences (T <= 128) with D a multiple of the
// 64-byte vector (16 floats, 8 doubles; D <= 4 vectors) run the direct kernel below: whole score
// rows in registers, a few query rows at a time, no GEMM calls (at T = 64, D = 16 a GEMM call
// per tile costs more than its arithmetic; the op took half the time at the benchmark's small
// workload, from perf shares of the step). Every other shape runs the blocked one:
//
// Forward, per (batch, head) and block of kBr query rows: the key blocks (kBc keys) up to the
// block's last row are scored with one GEMM each, and an online softmax (running max m and sum l
// per row, FlashAttention's) folds them into the output, so no [T, T] scores exist; blocks wholly
// above the diagonal are never computed. Only each row's log-sum-exp L = m + log l is saved.
// Backward recomputes each block's probabilities P = exp(S − L) from q and k and forms
// dv, dq, dk from them (FlashAttention-2's order: key blocks outside, query blocks inside).
// (batch, head) pairs are split over the threads; each writes only its own slices, so the
// result is the same whatever the thread count.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "graph/threads.h"
#include "kernels/gemm.h"
#include "kernels/gemm_vec.h"
#include "kernels/vmath.h"
#include "ops/detail/op_util.h"
#include "ops/ops.h"

namespace tapegrad {

namespace {

constexpr int64_t kBr = 32;   // query rows per block
constexpr int64_t kBc = 256;  // keys per block

// Where head (b, h) of q, k, v and the output lives: [B, H, T, D] or [B, T, H·D] read in place.
struct Heads {
  int64_t batch = 0, heads = 0, t = 0, d = 0;
  int64_t row_stride = 0, batch_stride = 0, head_stride = 0;
  int64_t offset(int64_t pair) const {
    return (pair / heads) * batch_stride + (pair % heads) * head_stride;
  }
};

Heads heads_of(const Shape& s, int64_t num_heads) {
  Heads g;
  if (num_heads == 0) {
    g.batch = s[0];
    g.heads = s[1];
    g.t = s[2];
    g.d = s[3];
    g.row_stride = g.d;
    g.head_stride = g.t * g.d;
    g.batch_stride = g.heads * g.t * g.d;
  } else {
    g.batch = s[0];
    g.heads = num_heads;
    g.t = s[1];
    g.d = s[2] / num_heads;
    g.row_stride = s[2];
    g.head_stride = g.d;
    g.batch_stride = g.t * s[2];
  }
  return g;
}

// Whether x · (1/c) == x / c for every x: c is a power of two (and 1/c is normal).
template <class T>
bool exact_reciprocal(T c) {
  int exponent = 0;
  return std::frexp(c, &exponent) == T(0.5) && std::isnormal(T(1) / c);
}

// Keys j0.. of a block that row i (global) may see: j <= i.
inline int64_t visible(int64_t i, int64_t j0, int64_t jb) {
  return std::clamp<int64_t>(i - j0 + 1, 0, jb);
}

template <class T>
void forward_head(const Heads& g, const T* q, const T* k, const T* v, T* o, T* lse, T* scratch) {
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
        // The whole row goes through one vectorised exp (masked keys as -inf); the masked ones
        // are then set to exactly 0, whatever the packet exp makes of -inf.
        if (!exact) row.head(n) /= c;
        row.tail(jb - n).setConstant(-std::numeric_limits<T>::infinity());
        // (A NaN the max skips still reaches the sum through its exp: the row is NaN either way.)
        const T m_new = std::max(m[r], row.head(n).maxCoeff());
        row = (row - m_new).exp();
        row.tail(jb - n).setZero();
        if (j0 == 0) {
          l[r] = row.head(n).sum();  // the first block: nothing to rescale
        } else {
          const T alpha = std::exp(m[r] - m_new);
          l[r] = l[r] * alpha + row.head(n).sum();
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
void backward_head(const Heads& g, const T* q, const T* k, const T* v, const T* o, const T* dout,
                   const T* lse, T* dq, T* dk, T* dv, T* scratch) {
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
        row.tail(jb - n).setConstant(-std::numeric_limits<T>::infinity());
        if (exact) {
          row = (row - lse[i0 + r]).exp();
        } else {
          row = (row / c - lse[i0 + r]).exp();
        }
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

// --- The direct kernel, for short sequences (T <= kDirectMaxT) with D a multiple of the vector
// width (16 floats or 8 doubles = 64 bytes, D <= 4 vectors): the heads of GPT-sized models with
// a small context. There a blocked GEMM call per [32, 32] tile costs more in its setup (packing,
// dispatch) than in its arithmetic, so the scores of four query rows are formed whole, in
// registers: S vectorised over the keys (from Kᵀ, transposed once per head), O, dQ, dK, dV
// vectorised over D (a row of q, k, v is one to four vectors). Whole rows, so no online softmax;
// exp is SLEEF's (vmath::exp, as softmax's), masked keys -inf before it, so exactly 0 after.

constexpr int64_t kDirectMaxT = 128;
// Query rows per step: 8 while a row of q is at most two vectors (more rows share each load of
// Kᵀ and each read-modify-write of dK, dV), else 4 (the accumulators must stay in registers).
constexpr int kMaxRows = 8;
template <int DV>
constexpr int kRows = DV <= 2 ? 8 : 4;

using detail::kLanes;
using detail::row_blocks;
using detail::transpose_block;
using detail::Vec;
using detail::VecOf;
using detail::vload;
using detail::vstore;

// op(v, v with its lanes swapped pairwise at each distance), halving down to one lane. (In
// place, by reference: see Vec.)
template <class T, class Op>
inline T reduce_lanes(const Vec<T>& in, Op op) {
  Vec<T> v = in;
  if constexpr (kLanes<T> == 16) {
    Vec<T> s = __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7);
    op(v, s);
    s = __builtin_shufflevector(v, v, 4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15, 8, 9, 10, 11);
    op(v, s);
    s = __builtin_shufflevector(v, v, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13);
    op(v, s);
    s = __builtin_shufflevector(v, v, 1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14);
    op(v, s);
  } else {
    Vec<T> s = __builtin_shufflevector(v, v, 4, 5, 6, 7, 0, 1, 2, 3);
    op(v, s);
    s = __builtin_shufflevector(v, v, 2, 3, 0, 1, 6, 7, 4, 5);
    op(v, s);
    s = __builtin_shufflevector(v, v, 1, 0, 3, 2, 5, 4, 7, 6);
    op(v, s);
  }
  return v[0];
}
template <class T>
inline T hmax(const Vec<T>& v) {
  return reduce_lanes<T>(v, [](Vec<T>& a, const Vec<T>& b) { a = a > b ? a : b; });
}
template <class T>
inline T hsum(const Vec<T>& v) {
  return reduce_lanes<T>(v, [](Vec<T>& a, const Vec<T>& b) { a += b; });
}
// The lanes of the key vector starting at key j0 that a row seeing keys [0, n) may not see: -inf.
template <class T>
inline void mask_keys(Vec<T>& v, int64_t j0, int64_t n) {
  using Lane = decltype(VecOf<T>::kIota[0] + 0);
  const Lane visible = static_cast<Lane>(std::clamp<int64_t>(n - j0, 0, kLanes<T>));
  v = VecOf<T>::kIota < visible ? v : -std::numeric_limits<T>::infinity();
}

template <class T>
bool use_direct(const Heads& g) {
  return g.t <= kDirectMaxT && g.d % kLanes<T> == 0 && g.d <= 4 * kLanes<T>;
}

inline int64_t round_up(int64_t n, int64_t to) {
  return (n + to - 1) / to * to;
}

// xt [D, tp] = xᵀ for the [t, D] rows at x (row stride ld), keys t..tp zero.
template <class T>
void transpose_head(const T* x, int64_t t, int64_t d, int64_t ld, int64_t tp, T* xt) {
  constexpr int64_t L = kLanes<T>;
  int64_t j0 = 0;
  for (; j0 + L <= t; j0 += L) {
    for (int64_t e = 0; e < d; e += L) {
      Vec<T> r[L];
      for (int64_t i = 0; i < L; ++i) vload(r[i], x + (j0 + i) * ld + e);
      transpose_block<T>(r);
      for (int64_t i = 0; i < L; ++i) vstore(xt + (e + i) * tp + j0, r[i]);
    }
  }
  for (int64_t dd = 0; dd < d; ++dd) {
    T* out = xt + dd * tp;
    for (int64_t j = j0; j < t; ++j) out[j] = x[j * ld + dd];
    std::fill(out + t, out + tp, T(0));
  }
}

// s[r, :] = x_r · Yᵀ for R rows x_r (ldx apart) and the keys [0, nv · L) of yt [D, tp];
// the rows of s nv · L apart.
template <class T, int DV, int R>
void scores_rows(const T* x, int64_t ldx, const T* yt, int64_t tp, int64_t nv, T* s) {
  constexpr int64_t L = kLanes<T>, D = DV * L;
  for (int64_t jv = 0; jv < nv; ++jv) {
    Vec<T> acc[R] = {};
    for (int64_t dd = 0; dd < D; ++dd) {
      Vec<T> y;
      vload(y, yt + dd * tp + jv * L);
      for (int r = 0; r < R; ++r) acc[r] += x[r * ldx + dd] * y;
    }
    for (int r = 0; r < R; ++r) vstore(s + (r * nv + jv) * L, acc[r]);
  }
}

// s[r, :] = exp(s[r, :] / (exact ? 1 : c) − shift_r) for R rows of nv vectors, keys past row
// i0 + r masked to exactly 0; shift_r = the row's max (forward, returned in m) or its saved
// log-sum-exp (backward, given in lse).
template <class T, int R>
void exp_rows(int64_t i0, T* s, int64_t nv, T c, bool exact, const T* lse, T* m) {
  constexpr int64_t L = kLanes<T>;
  const int64_t w = nv * L;
  for (int r = 0; r < R; ++r) {
    const int64_t n = i0 + r + 1;
    T* row = s + r * w;
    T shift;
    if (lse) {
      shift = lse[r];
    } else {
      Vec<T> mv = {};  // (taken from the first vector)
      for (int64_t jv = 0; jv < nv; ++jv) {
        Vec<T> x;
        vload(x, row + jv * L);
        if (!exact) x /= c;
        mask_keys<T>(x, jv * L, n);
        mv = jv == 0 ? x : (x > mv ? x : mv);
        vstore(row + jv * L, x);
      }
      // (A NaN the max skips still reaches the sum through its exp: the row is NaN either way.)
      shift = m[r] = hmax<T>(mv);
    }
    for (int64_t jv = 0; jv < nv; ++jv) {
      Vec<T> x;
      vload(x, row + jv * L);
      if (lse) {
        if (!exact) x /= c;
        mask_keys<T>(x, jv * L, n);
      }
      x -= shift;
      vstore(row + jv * L, x);
    }
  }
  vmath::exp(s, s, R * w);
}

// acc[r] = Σ_{j < n} wt[r · w + j] · x_j for R rows of weights and the rows x_j (ld apart).
// With few accumulators, even and odd j go to two sets, so the multiply-adds are not one chain.
template <class T, int DV, int R>
void weighted_rows(const T* wt, int64_t w, const T* x, int64_t ld, int64_t n,
                   Vec<T> (&acc)[R][DV]) {
  constexpr int64_t L = kLanes<T>;
  constexpr int kSets = R * DV <= 8 ? 2 : 1;
  Vec<T> part[kSets][R][DV] = {};
  int64_t j = 0;
  for (; j + kSets <= n; j += kSets) {
    for (int k = 0; k < kSets; ++k) {
      Vec<T> xj[DV];
      for (int e = 0; e < DV; ++e) vload(xj[e], x + (j + k) * ld + e * L);
      for (int r = 0; r < R; ++r) {
        const T c = wt[r * w + j + k];
        for (int e = 0; e < DV; ++e) part[k][r][e] += c * xj[e];
      }
    }
  }
  for (; j < n; ++j) {
    Vec<T> xj[DV];
    for (int e = 0; e < DV; ++e) vload(xj[e], x + j * ld + e * L);
    for (int r = 0; r < R; ++r) {
      const T c = wt[r * w + j];
      for (int e = 0; e < DV; ++e) part[0][r][e] += c * xj[e];
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int e = 0; e < DV; ++e) {
      acc[r][e] = part[0][r][e];
      for (int k = 1; k < kSets; ++k) acc[r][e] += part[k][r][e];
    }
  }
}

// Rows i0..i0+R-1 of the forward: scores, softmax over the i + 1 visible keys, O = P·V.
// qs: the head's q rows (D apart), scaled by 1/√D when that is exact.
template <class T, int DV, int R>
void forward_rows(int64_t i0, const T* qs, const T* kt, const T* v, int64_t ld, T* o, T* lse, T* s,
                  int64_t tp, T c, bool exact) {
  constexpr int64_t L = kLanes<T>, D = DV * L;
  const int64_t n_max = i0 + R, nv = (n_max + L - 1) / L, w = nv * L;
  scores_rows<T, DV, R>(qs + i0 * D, D, kt, tp, nv, s);
  T m[R];
  exp_rows<T, R>(i0, s, nv, c, exact, nullptr, m);
  T inv_l[R], log_l[R];
  for (int r = 0; r < R; ++r) {
    Vec<T> sum = {};
    for (int64_t jv = 0; jv < nv; ++jv) {
      Vec<T> x;
      vload(x, s + r * w + jv * L);
      sum += x;
    }
    log_l[r] = hsum<T>(sum);
    inv_l[r] = T(1) / log_l[r];
  }
  vmath::log(log_l, log_l, R);  // the R rows' logs in one vector
  for (int r = 0; r < R; ++r) lse[i0 + r] = m[r] + log_l[r];
  Vec<T> acc[R][DV];
  weighted_rows<T, DV, R>(s, w, v, ld, n_max, acc);  // O·l = P·V
  for (int r = 0; r < R; ++r) {
    for (int e = 0; e < DV; ++e) {
      const Vec<T> out = acc[r][e] * inv_l[r];
      vstore(o + (i0 + r) * ld + e * L, out);
    }
  }
}

// The head's q rows, D apart, times 1/√D when that is exact (then the scores need no division).
template <class T>
void scaled_rows(const T* q, int64_t t, int64_t d, int64_t ld, T c, bool exact, T* qs) {
  const T scale = exact ? T(1) / c : T(1);
  for (int64_t i = 0; i < t; ++i) {
    for (int64_t e = 0; e < d; e += kLanes<T>) {
      Vec<T> x;
      vload(x, q + i * ld + e);
      x *= scale;
      vstore(qs + i * d + e, x);
    }
  }
}

template <class T, int DV>
void forward_head_direct(const Heads& g, const T* q, const T* k, const T* v, T* o, T* lse,
                         T* scratch) {
  const int64_t t = g.t, d = g.d, ld = g.row_stride, tp = round_up(t, kLanes<T>);
  const T c = static_cast<T>(std::sqrt(static_cast<double>(d)));
  const bool exact = exact_reciprocal(c);
  T* kt = scratch;      // [D, tp] Kᵀ
  T* qs = kt + d * tp;  // [t, D] scaled q
  T* s = qs + t * d;    // [kMaxRows, ≤ tp] scores, then probabilities
  transpose_head(k, t, d, ld, tp, kt);
  scaled_rows(q, t, d, ld, c, exact, qs);
  row_blocks<kRows<DV>>(t, [&]<int R>(int64_t i0) {
    forward_rows<T, DV, R>(i0, qs, kt, v, ld, o, lse, s, tp, c, exact);
  });
}

// The pointers of one head's backward.
template <class T>
struct HeadGrads {
  const T *qs, *q, *k, *kt, *vt, *dout, *lse, *delta;
  T *dq, *dk, *dv;
  int64_t ld, tp;
  T c;
  bool exact;
};

// Rows i0..i0+R-1 of the backward: P recomputed from the saved log-sum-exps, then
// dV_j += Σ_r P[r, j] dO_r, dS = P ⊙ (dO·Vᵀ − delta) / √D, dQ_r += Σ_j dS[r, j] K_j,
// dK_j += Σ_r dS[r, j] Q_r.

// dst[j, :] += Σ_r weights[r·w + j] · rows[r] for the keys j < n: a rank-R update of the key rows
// (dV += Pᵀ·dO, dK += dSᵀ·Q), each row of dst read and written once.
template <class T, int DV, int R>
void add_weighted_rows(T* dst, int64_t ld, int64_t n, const T* weights, int64_t w,
                       const Vec<T> (&rows)[R][DV]) {
  constexpr int64_t L = kLanes<T>;
  for (int64_t j = 0; j < n; ++j) {
    for (int e = 0; e < DV; ++e) {
      Vec<T> acc;
      vload(acc, dst + j * ld + e * L);
      for (int r = 0; r < R; ++r) acc += weights[r * w + j] * rows[r][e];
      vstore(dst + j * ld + e * L, acc);
    }
  }
}
template <class T, int DV, int R>
void backward_rows(const HeadGrads<T>& h, int64_t i0, T* p, T* ds) {
  constexpr int64_t L = kLanes<T>, D = DV * L;
  const int64_t ld = h.ld, n_max = i0 + R, nv = (n_max + L - 1) / L, w = nv * L;
  scores_rows<T, DV, R>(h.qs + i0 * D, D, h.kt, h.tp, nv, p);
  exp_rows<T, R>(i0, p, nv, h.c, h.exact, h.lse + i0, nullptr);
  Vec<T> go[R][DV];  // dO rows
  for (int r = 0; r < R; ++r) {
    for (int e = 0; e < DV; ++e) vload(go[r][e], h.dout + (i0 + r) * ld + e * L);
  }
  if (h.dv) add_weighted_rows<T, DV, R>(h.dv, ld, n_max, p, w, go);  // dV += Pᵀ·dO
  if (!h.dq && !h.dk) return;
  scores_rows<T, DV, R>(h.dout + i0 * ld, ld, h.vt, h.tp, nv, ds);  // dP = dO·Vᵀ
  const T inv_c = T(1) / h.c;
  for (int r = 0; r < R; ++r) {
    for (int64_t jv = 0; jv < nv; ++jv) {
      Vec<T> x, pr;
      vload(x, ds + r * w + jv * L);
      vload(pr, p + r * w + jv * L);
      if (h.exact) {
        x = pr * (x - h.delta[i0 + r]) * inv_c;
      } else {
        x = pr * (x - h.delta[i0 + r]) / h.c;
      }
      vstore(ds + r * w + jv * L, x);
    }
  }
  if (h.dq) {
    Vec<T> acc[R][DV];
    weighted_rows<T, DV, R>(ds, w, h.k, ld, n_max, acc);  // dS·K
    for (int r = 0; r < R; ++r) {
      for (int e = 0; e < DV; ++e) {
        Vec<T> cur;
        vload(cur, h.dq + (i0 + r) * ld + e * L);
        cur += acc[r][e];
        vstore(h.dq + (i0 + r) * ld + e * L, cur);
      }
    }
  }
  if (h.dk) {
    Vec<T> qr[R][DV];
    for (int r = 0; r < R; ++r) {
      for (int e = 0; e < DV; ++e) vload(qr[r][e], h.q + (i0 + r) * ld + e * L);
    }
    add_weighted_rows<T, DV, R>(h.dk, ld, n_max, ds, w, qr);  // dK += dSᵀ·Q
  }
}

template <class T, int DV>
void backward_head_direct(const Heads& g, const T* q, const T* k, const T* v, const T* o,
                          const T* dout, const T* lse, T* dq, T* dk, T* dv, T* scratch) {
  const int64_t t = g.t, d = g.d, ld = g.row_stride, tp = round_up(t, kLanes<T>);
  const T c = static_cast<T>(std::sqrt(static_cast<double>(d)));
  const bool exact = exact_reciprocal(c);
  T* kt = scratch;                // [D, tp] Kᵀ
  T* vt = kt + d * tp;            // [D, tp] Vᵀ
  T* qs = vt + d * tp;            // [t, D] scaled q
  T* p = qs + t * d;              // [kMaxRows, ≤ tp] probabilities
  T* ds = p + kMaxRows * tp;      // [kMaxRows, ≤ tp] dP, then dS
  T* delta = ds + kMaxRows * tp;  // [t] rowsum(dO ⊙ O)
  transpose_head(k, t, d, ld, tp, kt);
  transpose_head(v, t, d, ld, tp, vt);
  scaled_rows(q, t, d, ld, c, exact, qs);
  for (int64_t i = 0; i < t; ++i) {
    Vec<T> sum = {};
    for (int64_t e = 0; e < d; e += kLanes<T>) {
      Vec<T> a, b;
      vload(a, dout + i * ld + e);
      vload(b, o + i * ld + e);
      sum += a * b;
    }
    delta[i] = hsum<T>(sum);
  }
  const HeadGrads<T> h{qs, q, k, kt, vt, dout, lse, delta, dq, dk, dv, ld, tp, c, exact};
  row_blocks<kRows<DV>>(t, [&]<int R>(int64_t i0) { backward_rows<T, DV, R>(h, i0, p, ds); });
}

// The per-head kernels for this shape: direct (by D's vector count) or blocked.
template <class T>
void forward_head_any(const Heads& g, const T* q, const T* k, const T* v, T* o, T* lse,
                      T* scratch) {
  if (!use_direct<T>(g)) return forward_head<T>(g, q, k, v, o, lse, scratch);
  switch (g.d / kLanes<T>) {
    case 1:
      return forward_head_direct<T, 1>(g, q, k, v, o, lse, scratch);
    case 2:
      return forward_head_direct<T, 2>(g, q, k, v, o, lse, scratch);
    case 3:
      return forward_head_direct<T, 3>(g, q, k, v, o, lse, scratch);
    default:
      return forward_head_direct<T, 4>(g, q, k, v, o, lse, scratch);
  }
}

template <class T>
void backward_head_any(const Heads& g, const T* q, const T* k, const T* v, const T* o,
                       const T* dout, const T* lse, T* dq, T* dk, T* dv, T* scratch) {
  if (!use_direct<T>(g)) return backward_head<T>(g, q, k, v, o, dout, lse, dq, dk, dv, scratch);
  switch (g.d / kLanes<T>) {
    case 1:
      return backward_head_direct<T, 1>(g, q, k, v, o, dout, lse, dq, dk, dv, scratch);
    case 2:
      return backward_head_direct<T, 2>(g, q, k, v, o, dout, lse, dq, dk, dv, scratch);
    case 3:
      return backward_head_direct<T, 3>(g, q, k, v, o, dout, lse, dq, dk, dv, scratch);
    default:
      return backward_head_direct<T, 4>(g, q, k, v, o, dout, lse, dq, dk, dv, scratch);
  }
}

// Scratch elements per thread.
template <class T>
int64_t forward_scratch(const Heads& g) {
  if (use_direct<T>(g)) return (g.d + kMaxRows) * round_up(g.t, kLanes<T>) + g.t * g.d;
  return kBr * kBc + kBr * g.d + 2 * kBr;
}
template <class T>
int64_t backward_scratch(const Heads& g) {
  if (use_direct<T>(g))
    return (2 * g.d + 2 * kMaxRows) * round_up(g.t, kLanes<T>) + g.t * g.d + g.t;
  return 2 * kBr * kBc + g.t;
}

struct CausalAttentionState {
  int64_t num_heads;  // 0: 4-D [B, H, T, D] inputs
  const void* lse;    // [B·H, T] row log-sum-exps, in the inputs' dtype, from the tape's arena
};

void causal_attention_backward(Tape& tape, const Node& node) {
  // O = softmax(mask(Q·Kᵀ) / √D)·V, P its probabilities  =>  dV += Pᵀ·dO,
  // dS = P ⊙ (dO·Vᵀ − rowsum(dO ⊙ O)) / √D, dQ += dS·K, dK += dSᵀ·Q   (P recomputed per block)
  dispatch(node.dtype, [&]<class T>() {
    const Node& qn = tape.input(node, 0);
    const Node& kn = tape.input(node, 1);
    const Node& vn = tape.input(node, 2);
    T* dq = tape.input_grad<T>(node, 0).to_add();
    T* dk = tape.input_grad<T>(node, 1).to_add();
    T* dv = tape.input_grad<T>(node, 2).to_add();
    if (!dq && !dk && !dv) return;
    const auto& [num_heads, saved_lse] = node.state_as<CausalAttentionState>();
    const Heads g = heads_of(node.shape, num_heads);
    const int64_t pairs = g.batch * g.heads;
    const int64_t per_part = backward_scratch<T>(g);
    T* scratch = tape.arena().allocate_array<T>(per_part * num_threads());
    const T* lse = static_cast<const T*>(saved_lse);
    const double cost = 5.0 * static_cast<double>(g.t * g.t * g.d);
    parallel_for(pairs, cost, [&](int part, int64_t begin, int64_t end) {
      for (int64_t pair = begin; pair < end; ++pair) {
        const int64_t off = g.offset(pair);
        backward_head_any<T>(g, qn.value_as<const T>() + off, kn.value_as<const T>() + off,
                             vn.value_as<const T>() + off, node.value_as<const T>() + off,
                             node.grad_as<const T>() + off, lse + pair * g.t,
                             dq ? dq + off : nullptr, dk ? dk + off : nullptr,
                             dv ? dv + off : nullptr, scratch + per_part * part);
      }
    });
  });
}

const OpDef kCausalAttention{
    .name = "causal_attention",
    .backward = causal_attention_backward,
    .arguments =
        [](const Tape&, const Node& n) {
          return "H = " +
                 std::to_string(
                     heads_of(n.shape, n.state_as<CausalAttentionState>().num_heads).heads);
        },
    .saves = saves::kInput0 | saves::kInput1 | saves::kInput2 | saves::kOutput,
    .state_bytes =
        [](const Tape&, const Node& n) {
          const Heads g = heads_of(n.shape, n.state_as<CausalAttentionState>().num_heads);
          return g.batch * g.heads * g.t * dtype_size(n.dtype);
        }};
TAPEGRAD_REGISTER_OP(kCausalAttention);

[[noreturn]] void throw_attention_error(const Tensor& q, const Tensor& k, const Tensor& v,
                                        const std::string& what) {
  throw Error("causal_attention: " + describe("q", q) + ", " + describe("k", k) + ", " +
              describe("v", v) + ": " + what);
}

}  // namespace

Tensor causal_attention(const Tensor& q, const Tensor& k, const Tensor& v, int64_t num_heads) {
  check_same_dtype("causal_attention", q, k);
  check_same_dtype("causal_attention", q, v);
  if (num_heads < 0) {
    throw_attention_error(q, k, v,
                          "num_heads must be >= 0 (got " + std::to_string(num_heads) + ")");
  }
  if (num_heads == 0 && q.rank() != 4) {
    throw_attention_error(q, k, v,
                          "expected 4-D [B, H, T, D] tensors (or 3-D [B, T, C] with num_heads)");
  }
  if (num_heads > 0 && q.rank() != 3) {
    throw_attention_error(q, k, v, "with num_heads, expected 3-D [B, T, C] tensors");
  }
  if (q.shape() != k.shape() || q.shape() != v.shape()) {
    throw_attention_error(q, k, v, "q, k and v must have the same shape");
  }
  if (num_heads > 0 && q.shape()[2] % num_heads != 0) {
    throw_attention_error(q, k, v,
                          "C " + std::to_string(q.shape()[2]) + " is not divisible by num_heads " +
                              std::to_string(num_heads));
  }
  const Heads g = heads_of(q.shape(), num_heads);
  if (g.d == 0) throw_attention_error(q, k, v, "the head size D is 0");
  const int64_t pairs = g.batch * g.heads;
  Arena& arena = q.tape().arena();
  void* saved_lse = arena.allocate(static_cast<size_t>(pairs * g.t * dtype_size(q.dtype())));
  Tensor y = q.tape().record(kCausalAttention, q.shape(), q.dtype(), {q, k, v},
                             CausalAttentionState{num_heads, saved_lse});
  dispatch(y.dtype(), [&]<class T>() {
    T* lse = static_cast<T*>(saved_lse);
    const int64_t per_part = forward_scratch<T>(g);
    T* scratch = arena.allocate_array<T>(per_part * num_threads());
    const T* qv = q.data<T>();
    const T* kv = k.data<T>();
    const T* vv = v.data<T>();
    T* out = output_data<T>(y);
    const double cost = 2.5 * static_cast<double>(g.t * g.t * g.d);
    parallel_for(pairs, cost, [&](int part, int64_t begin, int64_t end) {
      for (int64_t pair = begin; pair < end; ++pair) {
        const int64_t off = g.offset(pair);
        forward_head_any<T>(g, qv + off, kv + off, vv + off, out + off, lse + pair * g.t,
                            scratch + per_part * part);
      }
    });
  });
  return y;
}

}  // namespace tapegrad
