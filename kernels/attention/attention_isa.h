// The direct causal attention kernel's variants per instruction set
// (kernels/attention/attention_isa.cpp, built once per level with that level's flags), as
// kernels/attention/attention_direct.cpp picks them. Only plain structs and declarations here
// (kernels/cpu/isa_level.h says why).
#pragma once

#include <cstdint>

#include <tapegrad/kernels/cpu/isa_declare.h>

namespace tapegrad::detail::attention {

// One head of the direct kernel: t rows of d features (a multiple of 64 bytes, at most four of
// them), row stride ld; c = √d and exact = whether 1/c is exact. The forward reads q, k, v and
// writes o and lse; the backward reads q, k, v, o, dout and lse, and adds into dq, dk, dv (any of
// them null), and saved_lse, the forward's lse; scratch holds direct_forward_scratch /
// direct_backward_scratch elements.
template <class T>
struct DirectHead {
  int64_t t, d, ld;
  T c;
  bool exact;
  const T *q, *k, *v, *o, *dout, *saved_lse;
  T *out, *lse, *dq, *dk, *dv, *scratch;
};

// One (batch, head) pair of cached_attention (kernels/attention/cached_attention.h): new_tokens
// queries q (row stride ld) over the cached keys and values ([window, head_dim] each), query i
// seeing keys [0, first + i]; out (row stride ld) gets the weighted values; scores holds a row
// of them (first + new_tokens elements); scale = √head_dim.
template <class T>
struct CachedHead {
  int64_t new_tokens, first, head_dim, ld;
  T scale;
  const T *q, *keys, *values;
  T *out, *scores;
};

// The rows of scores one block of query rows takes in the scratch (the most rows per block).
constexpr int64_t kDirectMaxRows = 8;

// Every level runs the direct kernel's same blocks on the same 64-byte vectors (16 floats, 8
// doubles), and the cached one's same scalar loops, so the levels with FMA give the same bits; the
// baseline's products are rounded before they are added.
#define TAPEGRAD_ATTENTION_LEVEL_DECLARATIONS      \
  void forward_head(const DirectHead<float>& h);   \
  void forward_head(const DirectHead<double>& h);  \
  void backward_head(const DirectHead<float>& h);  \
  void backward_head(const DirectHead<double>& h); \
  void cached_head(const CachedHead<float>& h);    \
  void cached_head(const CachedHead<double>& h);

TAPEGRAD_DECLARE_PER_LEVEL(attention, TAPEGRAD_ATTENTION_LEVEL_DECLARATIONS)
#undef TAPEGRAD_ATTENTION_LEVEL_DECLARATIONS

}  // namespace tapegrad::detail::attention
