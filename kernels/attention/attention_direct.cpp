// The direct causal attention kernel (kernels/attention/attention.h), for short sequences (T <=
// 128) with D a multiple of the 64-byte vector (16 floats, 8 doubles; D <= 4 vectors): whole score
// rows in registers, a few query rows at a time, no GEMM calls (at T = 64, D = 16 a GEMM call per
// tile costs more than its arithmetic; the op took half the time at the benchmark's small workload,
// from perf shares of the step).
#include <algorithm>
#include <cmath>
#include <limits>

#include <tapegrad/kernels/attention/attention.h>
#include <tapegrad/kernels/vec.h>
#include <tapegrad/kernels/vmath/vmath.h>

namespace tapegrad::detail::attention {

namespace {

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
using detail::reduce_lanes;
using detail::row_blocks;
using detail::transpose_block;
using detail::Vec;
using detail::VecOf;
using detail::vload;
using detail::vstore;

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

// Rows i0..i0+R-1 of the forward: scores, softmax over the i + 1 visible keys, O = P·V; each
// row's max into lse and its sum into sums (the head's lse = max + log sum once all rows are done:
// one log call per head).
// qs: the head's q rows (D apart), scaled by 1/√D when that is exact.
template <class T, int DV, int R>
void forward_rows(int64_t i0, const T* qs, const T* kt, const T* v, int64_t ld, T* o, T* lse,
                  T* sums, T* s, int64_t tp, T c, bool exact) {
  constexpr int64_t L = kLanes<T>, D = DV * L;
  const int64_t n_max = i0 + R, nv = (n_max + L - 1) / L, w = nv * L;
  scores_rows<T, DV, R>(qs + i0 * D, D, kt, tp, nv, s);
  T m[R];
  exp_rows<T, R>(i0, s, nv, c, exact, nullptr, m);
  T inv_l[R];
  for (int r = 0; r < R; ++r) {
    Vec<T> sum = {};
    for (int64_t jv = 0; jv < nv; ++jv) {
      Vec<T> x;
      vload(x, s + r * w + jv * L);
      sum += x;
    }
    sums[i0 + r] = hsum<T>(sum);
    inv_l[r] = T(1) / sums[i0 + r];
    lse[i0 + r] = m[r];
  }
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
  T* kt = scratch;              // [D, tp] Kᵀ
  T* qs = kt + d * tp;          // [t, D] scaled q
  T* s = qs + t * d;            // [kMaxRows, ≤ tp] scores, then probabilities
  T* sums = s + kMaxRows * tp;  // [t] the rows' sums, then their logs
  transpose_head(k, t, d, ld, tp, kt);
  scaled_rows(q, t, d, ld, c, exact, qs);
  row_blocks<kRows<DV>>(t, [&]<int R>(int64_t i0) {
    forward_rows<T, DV, R>(i0, qs, kt, v, ld, o, lse, sums, s, tp, c, exact);
  });
  vmath::log(sums, sums, t);
  for (int64_t i = 0; i < t; ++i) lse[i] = lse[i] + sums[i];  // max + log sum
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

}  // namespace

template <class T>
bool direct_takes(const Heads& g) {
  return use_direct<T>(g);
}
template <class T>
int64_t direct_forward_scratch(const Heads& g) {
  return (g.d + kMaxRows) * round_up(g.t, kLanes<T>) + g.t * g.d + g.t;
}
template <class T>
int64_t direct_backward_scratch(const Heads& g) {
  return (2 * g.d + 2 * kMaxRows) * round_up(g.t, kLanes<T>) + g.t * g.d + g.t;
}

// By D's vector count.
template <class T>
void direct_forward_head(const Heads& g, const T* q, const T* k, const T* v, T* o, T* lse,
                         T* scratch) {
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
void direct_backward_head(const Heads& g, const T* q, const T* k, const T* v, const T* o,
                          const T* dout, const T* lse, T* dq, T* dk, T* dv, T* scratch) {
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
