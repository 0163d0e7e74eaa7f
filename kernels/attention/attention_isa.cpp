// The direct causal attention kernel's arithmetic (kernels/attention/attention_direct.cpp
// chooses the shapes, sizes the scratch and picks the variant), built once per instruction-set
// level from this one file: CMake compiles it with TAPEGRAD_ISA_LEVEL 0 (baseline), 1 (AVX2) or
// 2 (AVX-512) and that level's flags, and the level names the namespace. Whole score rows in
// registers, a few query rows at a time, no GEMM calls (at T = 64, D = 16 a GEMM call per tile
// costs more than its arithmetic): S vectorised over the keys (from Kᵀ, transposed once per
// head), O, dQ, dK, dV vectorised over D (a row of q, k, v is one to four vectors). Whole rows,
// so no online softmax; exp is the level's vmath exp (softmax's), masked keys -inf before it, so
// exactly 0 after. Every level lays the rows out in the same 64-byte vectors and sums each lane's
// terms in the same order (one AVX-512 register per vector; AVX2 tiles the blocks by 32-byte
// halves and the baseline, SSE or NEON, by 16-byte quarters, so the accumulators fit the level's
// registers: a tile changes which lanes are in flight, not any lane's order), so the levels with
// FMA give the same bits. See
// kernels/cpu/isa_level.h for why nothing here may be inline or a template outside this file's
// namespace, and why it calls builtins rather than the standard library.
#include <cstdint>

#include <tapegrad/kernels/attention/attention_isa.h>
#include <tapegrad/kernels/cpu/isa_level.h>
#include <tapegrad/kernels/vmath/vmath_isa.h>

#define TAPEGRAD_ATTENTION_NAMESPACE TAPEGRAD_ISA_NAMESPACE(attention)
#define TAPEGRAD_VMATH_NAMESPACE TAPEGRAD_ISA_NAMESPACE(vmath)

namespace tapegrad::detail::attention::TAPEGRAD_ATTENTION_NAMESPACE {

namespace {

// Query rows per step: 8 while a row of q is at most two vectors (more rows share each load of
// Kᵀ and each read-modify-write of dK, dV), else 4 (the accumulators must stay in registers).
template <int DV>
constexpr int kRows = DV <= 2 ? 8 : 4;
static_assert(kRows<1> <= kDirectMaxRows);

template <class T>
struct VecOf;
template <>
struct VecOf<float> {
  typedef float type __attribute__((vector_size(64)));
  typedef int32_t lanes __attribute__((vector_size(64)));
  static constexpr lanes kIota = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  static const vmath::levels::Kernels<float>& kernels() {
    return vmath::levels::TAPEGRAD_VMATH_NAMESPACE::kFloat;
  }
};
template <>
struct VecOf<double> {
  typedef double type __attribute__((vector_size(64)));
  typedef int64_t lanes __attribute__((vector_size(64)));
  static constexpr lanes kIota = {0, 1, 2, 3, 4, 5, 6, 7};
  static const vmath::levels::Kernels<double>& kernels() {
    return vmath::levels::TAPEGRAD_VMATH_NAMESPACE::kDouble;
  }
};
// Passed by reference only: by value, a 64-byte vector's ABI depends on the target flags.
template <class T>
using Vec = typename VecOf<T>::type;
template <class T>
constexpr int64_t kLanes = 64 / sizeof(T);

// The level's vmath functions (exp, log), as vmath.cpp picks them at this level.
template <class T>
const vmath::levels::Kernels<T>& level_kernels() {
  return VecOf<T>::kernels();
}

// The register the product loops compute on: a whole 64-byte vector at AVX-512, a part of one
// elsewhere (kParts per vector: AVX2's 32 bytes, SSE's and NEON's 16). Lane-wise only, so a
// vector's parts get the bits the whole would.
#if TAPEGRAD_ISA_LEVEL == 2
constexpr int kParts = 1;
#elif TAPEGRAD_ISA_LEVEL == 1
constexpr int kParts = 2;
#else
constexpr int kParts = 4;
#endif
template <class T>
struct RegOf {
  typedef T type __attribute__((vector_size(64 / kParts)));
};
template <class T>
using Reg = typename RegOf<T>::type;
template <class T>
constexpr int64_t kRegLanes = kLanes<T> / kParts;

// A whole vector (Vec) or a register (Reg) from or to memory.
template <class V, class T>
inline void vload(V& v, const T* p) {
  __builtin_memcpy(&v, p, sizeof v);
}
template <class V, class T>
inline void vstore(T* p, const V& v) {
  __builtin_memcpy(p, &v, sizeof v);
}

// op(v, v with its lanes swapped pairwise at each distance), halving down to one lane.
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
  const int64_t left = n - j0;
  const Lane visible = static_cast<Lane>(left < 0 ? 0 : (left > kLanes<T> ? kLanes<T> : left));
  v = VecOf<T>::kIota < visible ? v : static_cast<T>(-__builtin_inf());
}

inline int64_t round_up(int64_t n, int64_t to) {
  return (n + to - 1) / to * to;
}

// f.operator()<R>(i0) for the blocks of R rows covering [0, t): the full ones, then one block of
// the rest (its row count a template argument too, so its accumulators stay in registers).
template <int R, class F>
void rest_rows(int64_t rest, int64_t i0, F& f) {
  if constexpr (R >= 1) {
    if (rest == R) {
      f.template operator()<R>(i0);
    } else {
      rest_rows<R - 1>(rest, i0, f);
    }
  }
}
template <int R, class F>
void row_blocks(int64_t t, F&& f) {
  int64_t i0 = 0;
  for (; i0 + R <= t; i0 += R) f.template operator()<R>(i0);
  rest_rows<R - 1>(t - i0, i0, f);
}

// xt [D, tp] = xᵀ for the [t, D] rows at x (row stride ld), keys t..tp zero. Once per head: a
// plain loop (the arithmetic is in the rows below).
template <class T>
void transpose_head(const T* x, int64_t t, int64_t d, int64_t ld, int64_t tp, T* xt) {
  for (int64_t dd = 0; dd < d; ++dd) {
    T* out = xt + dd * tp;
    for (int64_t j = 0; j < t; ++j) out[j] = x[j * ld + dd];
    for (int64_t j = t; j < tp; ++j) out[j] = T(0);
  }
}

// s[r, :] = x_r · Yᵀ for R rows x_r (ldx apart) and the keys [0, nv · L) of yt [D, tp];
// the rows of s nv · L apart.
template <class T, int DV, int R>
void scores_rows(const T* x, int64_t ldx, const T* yt, int64_t tp, int64_t nv, T* s) {
  constexpr int64_t L = kRegLanes<T>, D = DV * kLanes<T>;
  const int64_t w = nv * kLanes<T>;
  for (int64_t jr = 0; jr < nv * kParts; ++jr) {
    Reg<T> acc[R] = {};
    for (int64_t dd = 0; dd < D; ++dd) {
      Reg<T> y;
      vload(y, yt + dd * tp + jr * L);
      for (int r = 0; r < R; ++r) acc[r] += x[r * ldx + dd] * y;
    }
    for (int r = 0; r < R; ++r) vstore(s + r * w + jr * L, acc[r]);
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
  level_kernels<T>().exp(s, s, R * w);
}

// put(r, c, Σ_{j < n} wt[r · w + j] · x_j's register column c) for R rows of weights and the
// rows x_j (ld apart), D = DV vectors wide. With few accumulators in the whole block (counted in
// 64-byte vectors, so every level sums alike), even and odd j go to two sets, so the
// multiply-adds are not one chain. Tiles of RG rows × CG register columns: the whole block at
// AVX-512, else at most 8 accumulators.
template <class T, int DV, int R>
constexpr int kSets = R* DV <= 8 ? 2 : 1;

template <class T, int DV, int R, int R0, int RG, int CG, class Put>
void weighted_tile(const T* wt, int64_t w, const T* x, int64_t ld, int64_t n, int c0, Put& put) {
  constexpr int64_t L = kRegLanes<T>;
  constexpr int S = kSets<T, DV, R>;
  Reg<T> part[S][RG][CG] = {};
  int64_t j = 0;
  for (; j + S <= n; j += S) {
    for (int k = 0; k < S; ++k) {
      Reg<T> xj[CG];
      for (int e = 0; e < CG; ++e) vload(xj[e], x + (j + k) * ld + (c0 + e) * L);
      for (int r = 0; r < RG; ++r) {
        const T c = wt[(R0 + r) * w + j + k];
        for (int e = 0; e < CG; ++e) part[k][r][e] += c * xj[e];
      }
    }
  }
  for (; j < n; ++j) {
    Reg<T> xj[CG];
    for (int e = 0; e < CG; ++e) vload(xj[e], x + j * ld + (c0 + e) * L);
    for (int r = 0; r < RG; ++r) {
      const T c = wt[(R0 + r) * w + j];
      for (int e = 0; e < CG; ++e) part[0][r][e] += c * xj[e];
    }
  }
  for (int r = 0; r < RG; ++r) {
    for (int e = 0; e < CG; ++e) {
      Reg<T> acc = part[0][r][e];
      for (int k = 1; k < S; ++k) acc += part[k][r][e];
      put(R0 + r, c0 + e, acc);
    }
  }
}
template <class T, int DV, int R, int R0, int RG, int CG, class Put>
void weighted_row_tiles(const T* wt, int64_t w, const T* x, int64_t ld, int64_t n, Put& put) {
  if constexpr (R0 < R) {
    constexpr int G = R - R0 < RG ? R - R0 : RG;
    for (int c0 = 0; c0 < DV * kParts; c0 += CG) {
      weighted_tile<T, DV, R, R0, G, CG>(wt, w, x, ld, n, c0, put);
    }
    weighted_row_tiles<T, DV, R, R0 + RG, RG, CG>(wt, w, x, ld, n, put);
  }
}
template <class T, int DV, int R, class Put>
void weighted_rows(const T* wt, int64_t w, const T* x, int64_t ld, int64_t n, Put&& put) {
  constexpr int C = DV * kParts;
  constexpr int RG = kParts == 1 || R < 4 ? R : 4;
  constexpr int CG = kParts == 1 ? C : (kSets<T, DV, R> == 1 && C % 2 == 0 ? 2 : 1);
  weighted_row_tiles<T, DV, R, 0, RG, CG>(wt, w, x, ld, n, put);
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
  // O·l = P·V
  weighted_rows<T, DV, R>(s, w, v, ld, n_max, [&](int r, int col, const Reg<T>& acc) {
    const Reg<T> out = acc * inv_l[r];
    vstore(o + (i0 + r) * ld + col * kRegLanes<T>, out);
  });
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
void forward_head_direct(const DirectHead<T>& h) {
  const int64_t t = h.t, d = h.d, ld = h.ld, tp = round_up(t, kLanes<T>);
  const T c = h.c;
  const bool exact = h.exact;
  const T *q = h.q, *k = h.k, *v = h.v;
  T *o = h.out, *lse = h.lse;
  T* kt = h.scratch;                  // [D, tp] Kᵀ
  T* qs = kt + d * tp;                // [t, D] scaled q
  T* s = qs + t * d;                  // [kDirectMaxRows, ≤ tp] scores, then probabilities
  T* sums = s + kDirectMaxRows * tp;  // [t] the rows' sums, then their logs
  transpose_head(k, t, d, ld, tp, kt);
  scaled_rows(q, t, d, ld, c, exact, qs);
  row_blocks<kRows<DV>>(t, [&]<int R>(int64_t i0) {
    forward_rows<T, DV, R>(i0, qs, kt, v, ld, o, lse, sums, s, tp, c, exact);
  });
  level_kernels<T>().log(sums, sums, t);
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

// dst[j, :] += Σ_r weights[r·w + j] · src[r] for the keys j < n and the R rows at src (lds
// apart): a rank-R update of the key rows (dV += Pᵀ·dO, dK += dSᵀ·Q), each row of dst read and
// written once per pass; one pass at AVX-512, else one per CG register columns (R · CG rows'
// registers held).
template <class T, int DV, int R>
void add_weighted_rows(T* dst, int64_t ld, int64_t n, const T* weights, int64_t w, const T* src,
                       int64_t lds) {
  constexpr int64_t L = kRegLanes<T>;
  constexpr int C = DV * kParts;
  constexpr int CG = kParts == 1 ? C : (R * 2 <= 12 ? 2 : 1);
  for (int c0 = 0; c0 < C; c0 += CG) {
    Reg<T> rows[R][CG];
    for (int r = 0; r < R; ++r) {
      for (int e = 0; e < CG; ++e) vload(rows[r][e], src + r * lds + (c0 + e) * L);
    }
    for (int64_t j = 0; j < n; ++j) {
      for (int e = 0; e < CG; ++e) {
        Reg<T> acc;
        vload(acc, dst + j * ld + (c0 + e) * L);
        for (int r = 0; r < R; ++r) acc += weights[r * w + j] * rows[r][e];
        vstore(dst + j * ld + (c0 + e) * L, acc);
      }
    }
  }
}
template <class T, int DV, int R>
void backward_rows(const HeadGrads<T>& h, int64_t i0, T* p, T* ds) {
  constexpr int64_t L = kLanes<T>, D = DV * L;
  const int64_t ld = h.ld, n_max = i0 + R, nv = (n_max + L - 1) / L, w = nv * L;
  scores_rows<T, DV, R>(h.qs + i0 * D, D, h.kt, h.tp, nv, p);
  exp_rows<T, R>(i0, p, nv, h.c, h.exact, h.lse + i0, nullptr);
  if (h.dv) add_weighted_rows<T, DV, R>(h.dv, ld, n_max, p, w, h.dout + i0 * ld, ld);  // Pᵀ·dO
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
    weighted_rows<T, DV, R>(ds, w, h.k, ld, n_max, [&](int r, int col, const Reg<T>& acc) {
      T* row = h.dq + (i0 + r) * ld + col * kRegLanes<T>;
      Reg<T> cur;
      vload(cur, row);
      cur += acc;
      vstore(row, cur);
    });  // dS·K
  }
  if (h.dk) add_weighted_rows<T, DV, R>(h.dk, ld, n_max, ds, w, h.q + i0 * ld, ld);  // dSᵀ·Q
}

template <class T, int DV>
void backward_head_direct(const DirectHead<T>& hd) {
  const int64_t t = hd.t, d = hd.d, ld = hd.ld, tp = round_up(t, kLanes<T>);
  const T c = hd.c;
  const bool exact = hd.exact;
  const T *q = hd.q, *k = hd.k, *v = hd.v, *o = hd.o, *dout = hd.dout, *lse = hd.saved_lse;
  T *dq = hd.dq, *dk = hd.dk, *dv = hd.dv;
  T* kt = hd.scratch;                   // [D, tp] Kᵀ
  T* vt = kt + d * tp;                  // [D, tp] Vᵀ
  T* qs = vt + d * tp;                  // [t, D] scaled q
  T* p = qs + t * d;                    // [kDirectMaxRows, ≤ tp] probabilities
  T* ds = p + kDirectMaxRows * tp;      // [kDirectMaxRows, ≤ tp] dP, then dS
  T* delta = ds + kDirectMaxRows * tp;  // [t] rowsum(dO ⊙ O)
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

// By D's vector count.
template <class T>
void forward_by_width(const DirectHead<T>& h) {
  switch (h.d / kLanes<T>) {
    case 1:
      return forward_head_direct<T, 1>(h);
    case 2:
      return forward_head_direct<T, 2>(h);
    case 3:
      return forward_head_direct<T, 3>(h);
    default:
      return forward_head_direct<T, 4>(h);
  }
}
template <class T>
void backward_by_width(const DirectHead<T>& h) {
  switch (h.d / kLanes<T>) {
    case 1:
      return backward_head_direct<T, 1>(h);
    case 2:
      return backward_head_direct<T, 2>(h);
    case 3:
      return backward_head_direct<T, 3>(h);
    default:
      return backward_head_direct<T, 4>(h);
  }
}

// The book's order per query: scores q·k, / √D_h, their max; exp(score − max) and its sum; then
// out = Σ_j (e_j / sum)·v_j. One element at a time (the sums in the book's order), exp the C
// library's.
inline float c_exp(float x) {
  return __builtin_expf(x);
}
inline double c_exp(double x) {
  return __builtin_exp(x);
}
template <class T>
void cached_rows(const CachedHead<T>& c) {
  const int64_t dh = c.head_dim, ld = c.ld;
  T* scores = c.scores;
  for (int64_t i = 0; i < c.new_tokens; ++i) {
    const T* qi = c.q + i * ld;
    T* oi = c.out + i * ld;
    const int64_t seen = c.first + i + 1;  // keys 0 .. first + i; the rest are masked
    T max_score = static_cast<T>(-__builtin_inf());
    for (int64_t j = 0; j < seen; ++j) {
      const T* kj = c.keys + j * dh;
      T s = 0;
      for (int64_t d = 0; d < dh; ++d) s += qi[d] * kj[d];
      s /= c.scale;
      scores[j] = s;
      max_score = max_score < s ? s : max_score;  // std::max's choice
    }
    T sum = 0;
    for (int64_t j = 0; j < seen; ++j) {
      const T e = c_exp(scores[j] - max_score);
      scores[j] = e;
      sum += e;
    }
    for (int64_t d = 0; d < dh; ++d) oi[d] = T{0};
    for (int64_t j = 0; j < seen; ++j) {
      const T w = scores[j] / sum;
      const T* vj = c.values + j * dh;
      for (int64_t d = 0; d < dh; ++d) oi[d] += w * vj[d];
    }
  }
}

}  // namespace

void cached_head(const CachedHead<float>& h) {
  cached_rows(h);
}
void cached_head(const CachedHead<double>& h) {
  cached_rows(h);
}
void forward_head(const DirectHead<float>& h) {
  forward_by_width(h);
}
void forward_head(const DirectHead<double>& h) {
  forward_by_width(h);
}
void backward_head(const DirectHead<float>& h) {
  backward_by_width(h);
}
void backward_head(const DirectHead<double>& h) {
  backward_by_width(h);
}

}  // namespace tapegrad::detail::attention::TAPEGRAD_ATTENTION_NAMESPACE
