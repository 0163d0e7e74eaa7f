// The fused causal attention kernels behind ops/causal_attention.cpp and (without dropout)
// ops/causal_dot_product_attention.cpp, per (batch, head):
// softmax(causal_mask(q·kᵀ) / √D)·v and its backward. Three kernels, chosen by shape: the direct
// one (kernels/attention/attention_direct.cpp) for short sequences with D a multiple of the 64-byte
// vector (16 floats, 8 doubles; D <= 4 vectors), the blocked one
// (kernels/attention/attention_blocked.cpp, FlashAttention's online softmax) for every other shape,
// except single-feature heads so short that the blocked kernel runs them as one block of tiny
// products (D = 1, T <= 9: the book's T = 6): those run its arithmetic in plain loops
// (kernels/attention/attention_one_block.cpp), bit for bit. Internal to ops/.
//
// Which path runs, per (batch, head) of a training or prefill step (kernel_for below, the first
// rule that applies):
// 1. float32 at MatmulPrecision::BFloat16: attention_blocked.cpp, whose tile products go
//    through kernels/gemm/gemm.h (and so its rules).
// 2. D a multiple of one vector (16 floats, 8 doubles), D <= 4 vectors, short T (direct_takes):
//    attention_direct.cpp.
// 3. D = 1 and T <= 9 (one_block_takes): attention_one_block.cpp.
// 4. every other shape: attention_blocked.cpp.
// Grouped-query attention (ops/grouped_query_attention.cpp) runs the same per-head kernels with
// each query head reading its group's kv head in place (grouped_forward_heads below).
// Generation with a KV cache (new queries over cached keys and values, no gradient):
// cached_attention.h.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include <tapegrad/graph/arena.h>
#include <tapegrad/graph/shape.h>
#include <tapegrad/graph/threads.h>
#include <tapegrad/kernels/gemm/matmul_precision.h>

namespace tapegrad::detail::attention {

// Where head (b, h) of q, k, v and the output lives: [B, H, T, D] or [B, T, H·D] read in place.
struct Heads {
  int64_t batch = 0, heads = 0, t = 0, d = 0;
  int64_t row_stride = 0, batch_stride = 0, head_stride = 0;
  int64_t offset(int64_t pair) const {
    return (pair / heads) * batch_stride + (pair % heads) * head_stride;
  }
};

inline Heads heads_of(const Shape& s, int64_t num_heads) {
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
inline bool exact_reciprocal(T c) {
  int exponent = 0;
  return std::frexp(c, &exponent) == T(0.5) && std::isnormal(T(1) / c);
}

// One kernel's entry points for dtype T: scratch elements per thread, and one head's forward (o
// and its rows' log-sum-exps lse) and backward (dq, dk, dv accumulated; any of them may be null).
template <class T>
struct Kernel {
  int64_t (*forward_scratch)(const Heads& g);
  int64_t (*backward_scratch)(const Heads& g);
  void (*forward_head)(const Heads& g, const T* q, const T* k, const T* v, T* o, T* lse,
                       T* scratch);
  void (*backward_head)(const Heads& g, const T* q, const T* k, const T* v, const T* o,
                        const T* dout, const T* lse, T* dq, T* dk, T* dv, T* scratch);
};

// The three kernels (kernels/attention/attention_blocked.cpp,
// kernels/attention/attention_direct.cpp, kernels/attention/attention_one_block.cpp), and whether
// the direct and the one-block ones take a shape.
template <class T>
const Kernel<T>& blocked_kernel();
template <class T>
const Kernel<T>& direct_kernel();
template <class T>
bool direct_takes(const Heads& g);
template <class T>
const Kernel<T>& one_block_kernel();
template <class T>
bool one_block_takes(const Heads& g);

// The kernel for this shape and its entry points.
// At MatmulPrecision::BFloat16 float32 heads run the blocked kernel, whose products are gemm's
// (the direct and one-block kernels form them themselves, in float32).
template <class T>
bool full_precision_products() {  // in T, not bf16
  if constexpr (std::is_same_v<T, float>) {
    return !bf16_products();
  } else {
    return true;
  }
}
template <class T>
const Kernel<T>& kernel_for(const Heads& g) {
  if (!full_precision_products<T>()) return blocked_kernel<T>();
  if (direct_takes<T>(g)) return direct_kernel<T>();
  return one_block_takes<T>(g) ? one_block_kernel<T>() : blocked_kernel<T>();
}
template <class T>
int64_t forward_scratch(const Heads& g) {
  return kernel_for<T>(g).forward_scratch(g);
}
template <class T>
int64_t backward_scratch(const Heads& g) {
  return kernel_for<T>(g).backward_scratch(g);
}
template <class T>
void forward_head(const Heads& g, const T* q, const T* k, const T* v, T* o, T* lse, T* scratch) {
  kernel_for<T>(g).forward_head(g, q, k, v, o, lse, scratch);
}
template <class T>
void backward_head(const Heads& g, const T* q, const T* k, const T* v, const T* o, const T* dout,
                   const T* lse, T* dq, T* dk, T* dv, T* scratch) {
  kernel_for<T>(g).backward_head(g, q, k, v, o, dout, lse, dq, dk, dv, scratch);
}

// Every head's forward, then every head's backward: the (batch, head) pairs split over the
// threads, each with its scratch from `arena`; each writes only its own slices, so the result is
// the same whatever the thread count. f(pair, offset of its head, its thread's scratch).
template <class T, class F>
void for_each_head(const Heads& g, int64_t per_part, double cost, Arena& arena, F&& f) {
  T* scratch = arena.allocate_array<T>(per_part * num_threads());
  parallel_for(g.batch * g.heads, cost, [&](int part, int64_t begin, int64_t end) {
    for (int64_t pair = begin; pair < end; ++pair) {
      f(pair, g.offset(pair), scratch + per_part * part);
    }
  });
}
template <class T>
void forward_heads(const Heads& g, const T* q, const T* k, const T* v, T* o, T* lse, Arena& arena) {
  const double cost = 2.5 * static_cast<double>(g.t * g.t * g.d);
  for_each_head<T>(g, forward_scratch<T>(g), cost, arena, [&](int64_t pair, int64_t off, T* s) {
    forward_head<T>(g, q + off, k + off, v + off, o + off, lse + pair * g.t, s);
  });
}
template <class T>
void backward_heads(const Heads& g, const T* q, const T* k, const T* v, const T* o, const T* dout,
                    const T* lse, T* dq, T* dk, T* dv, Arena& arena) {
  const double cost = 5.0 * static_cast<double>(g.t * g.t * g.d);
  for_each_head<T>(g, backward_scratch<T>(g), cost, arena, [&](int64_t pair, int64_t off, T* s) {
    backward_head<T>(g, q + off, k + off, v + off, o + off, dout + off, lse + pair * g.t,
                     dq ? dq + off : nullptr, dk ? dk + off : nullptr, dv ? dv + off : nullptr, s);
  });
}

// Grouped-query attention (the book's GroupedQueryAttention): q and the output [B, H, T, D] as
// `g` (4-D, num_heads 0) on k, v [B, G, T, D] with G = kv_heads dividing H, query head h of a
// batch reading kv head h / (H / G), without repeating the kv heads. The same per-head kernels.
// The forward splits the (batch, query head) pairs over the threads; the backward splits the
// (batch, kv head) pairs, each running its group's query heads in order into the kv head's dK and
// dV, so those sums run in one order whatever the thread count.
inline int64_t kv_offset(const Heads& g, int64_t kv_heads, int64_t pair) {
  const int64_t batch = pair / g.heads, group = g.heads / kv_heads;
  return (batch * kv_heads + (pair % g.heads) / group) * g.head_stride;
}
template <class T>
void grouped_forward_heads(const Heads& g, int64_t kv_heads, const T* q, const T* k, const T* v,
                           T* o, T* lse, Arena& arena) {
  const double cost = 2.5 * static_cast<double>(g.t * g.t * g.d);
  for_each_head<T>(g, forward_scratch<T>(g), cost, arena, [&](int64_t pair, int64_t off, T* s) {
    const int64_t kv = kv_offset(g, kv_heads, pair);
    forward_head<T>(g, q + off, k + kv, v + kv, o + off, lse + pair * g.t, s);
  });
}
template <class T>
void grouped_backward_heads(const Heads& g, int64_t kv_heads, const T* q, const T* k, const T* v,
                            const T* o, const T* dout, const T* lse, T* dq, T* dk, T* dv,
                            Arena& arena) {
  const int64_t group = g.heads / kv_heads, per_part = backward_scratch<T>(g);
  const double cost = 5.0 * static_cast<double>(g.t * g.t * g.d * group);
  T* scratch = arena.allocate_array<T>(per_part * num_threads());
  parallel_for(g.batch * kv_heads, cost, [&](int part, int64_t begin, int64_t end) {
    for (int64_t unit = begin; unit < end; ++unit) {
      const int64_t kv = unit * g.head_stride;  // kv head unit % G of batch unit / G
      for (int64_t pair = unit * group; pair < (unit + 1) * group; ++pair) {
        const int64_t off = g.offset(pair);
        backward_head<T>(g, q + off, k + kv, v + kv, o + off, dout + off, lse + pair * g.t,
                         dq ? dq + off : nullptr, dk ? dk + kv : nullptr, dv ? dv + kv : nullptr,
                         scratch + per_part * part);
      }
    }
  });
}

}  // namespace tapegrad::detail::attention
