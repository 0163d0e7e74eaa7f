// causal_attention: softmax(causal_mask(q·kᵀ) / √D)·v per (batch, head), fused and blocked.
//
// A kernel, so over the 120-line budget of an op file: the blocked forward and backward (online
// softmax, recomputed probabilities) only make sense read together.
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

#include "graph/threads.h"
#include "ops/detail/gemm.h"
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
    T* dq = tape.grad_for<T>(node, 0);
    T* dk = tape.grad_for<T>(node, 1);
    T* dv = tape.grad_for<T>(node, 2);
    if (!dq && !dk && !dv) return;
    const auto& [num_heads, saved_lse] = node.state_as<CausalAttentionState>();
    const Heads g = heads_of(node.shape, num_heads);
    const int64_t pairs = g.batch * g.heads;
    const int64_t per_part = 2 * kBr * kBc + g.t;
    T* scratch = tape.arena().allocate_array<T>(per_part * num_threads());
    const T* lse = static_cast<const T*>(saved_lse);
    const double cost = 5.0 * static_cast<double>(g.t * g.t * g.d);
    parallel_for(pairs, cost, [&](int part, int64_t begin, int64_t end) {
      for (int64_t pair = begin; pair < end; ++pair) {
        const int64_t off = g.offset(pair);
        backward_head<T>(g, qn.value_as<const T>() + off, kn.value_as<const T>() + off,
                         vn.value_as<const T>() + off, node.value_as<const T>() + off,
                         node.grad_as<const T>() + off, lse + pair * g.t, dq ? dq + off : nullptr,
                         dk ? dk + off : nullptr, dv ? dv + off : nullptr,
                         scratch + per_part * part);
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
    const int64_t per_part = kBr * kBc + kBr * g.d + 2 * kBr;
    T* scratch = arena.allocate_array<T>(per_part * num_threads());
    const T* qv = value_of<T>(q);
    const T* kv = value_of<T>(k);
    const T* vv = value_of<T>(v);
    T* out = value_of<T>(y);
    const double cost = 2.5 * static_cast<double>(g.t * g.t * g.d);
    parallel_for(pairs, cost, [&](int part, int64_t begin, int64_t end) {
      for (int64_t pair = begin; pair < end; ++pair) {
        const int64_t off = g.offset(pair);
        forward_head<T>(g, qv + off, kv + off, vv + off, out + off, lse + pair * g.t,
                        scratch + per_part * part);
      }
    });
  });
  return y;
}

}  // namespace tapegrad
