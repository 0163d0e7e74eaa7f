// causal_dot_product_attention: MultiHeadAttention's composed attention in one op, on one of two
// kernels chosen inside the op (the op, its name and arguments are the same either way):
//
// - with dropout drawn (training and p > 0): the exact kernel below, bit for bit the composed
//   ops, with torch's dropout mask stream;
// - without (eval, or p == 0): the fused kernels of kernels/attention/attention.h (direct for short
//   sequences, FlashAttention's blocked online softmax otherwise), which keep only the output
//   and one log-sum-exp per row, no [T, T] weights. Their sums run in another order (online
//   softmax, products formed in registers or per tile), so they are NOT bit for bit the
//   composed ops: within float32 rounding, which tests/ops/test_causal_dot_product_attention.cpp
//   checks against the composed ops and torch's numbers (tolerances stated there).
//   causal_attention_weights recomputes the weights of such a node with the exact kernel's
//   forward (bit for bit the composed softmax) from q and k, which the node keeps.
//
// A kernel, so over the 120-line budget of an op file: forward, backward and the layout they
// share only make sense read together.
//
// The exact kernel, per (batch, head), on q, k, v read in place from [B, T, H·D] and the output
// written in place there: S = q·kᵀ, causal mask (-inf above the diagonal), ÷ √D, softmax, torch's
// dropout, ·v — the composed ops matmul(q, transpose(k)), causal_mask, div_scalar, softmax,
// dropout, matmul of split_heads/merge_heads views, with the same arithmetic: each product is the
// same gemm call (same shapes, the same operand transposes: kᵀ is copied as transpose() does, only
// the leading dimensions differ), the elementwise steps are the same expressions, the rows go
// through the softmax op's own row functions (vmath::softmax_rows and its backward), and dropout's
// mask is drawn for the whole [B, H, T, T] weights at once, masked positions included, as torch's
// dropout on the weights tensor draws it.
// So the output and the gradients equal the composed ops' exactly (up to the sign of a zero),
// which tests/ops/test_causal_dot_product_attention.cpp checks; what differs is what is kept:
// only the probabilities P [B, H, T, T] and the keep mask (one byte per weight), no scores,
// masked or scaled copies, no dropped weights, no split or merged heads, no [T, T] gradients.
// Backward recomputes the dropped weights and kᵀ per (batch, head) in per-thread scratch.
#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <string>
#include <type_traits>

#include <tapegrad/graph/factory.h>
#include <tapegrad/graph/random.h>
#include <tapegrad/graph/threads.h>
#include <tapegrad/kernels/attention/attention.h>
#include <tapegrad/kernels/gemm/gemm.h>
#include <tapegrad/kernels/gemm/gemm_kernels.h>
#include <tapegrad/kernels/gemm/transpose.h>
#include <tapegrad/kernels/random/random.h>
#include <tapegrad/kernels/vmath/vmath.h>
#include <tapegrad/ops/detail/grad_util.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

// Head (b, h) of a [B, T, H·D] tensor: rows ld = H·D apart, starting at b·T·ld + h·D.
struct Heads {
  int64_t batch = 0, heads = 0, t = 0, d = 0, ld = 0;
  int64_t pairs() const { return batch * heads; }
  int64_t offset(int64_t pair) const { return (pair / heads) * t * ld + (pair % heads) * d; }
};

Heads heads_of(const Shape& s, int64_t num_heads) {
  return {s[0], num_heads, s[1], s[2] / num_heads, s[2]};
}

struct AttentionState {
  int64_t num_heads;
  double p;             // dropout probability; 0 when no mask was drawn
  const void* probs;    // exact kernel: P [B, H, T, T] in the dtype, from the tape's arena
                        // (64-byte aligned); null on the fused kernel
  const uint8_t* keep;  // dropout's keep mask [B, H, T, T], or null without dropout
  const void* lse;      // fused kernel: [B·H, T] row log-sum-exps in the dtype; else null
};

// The fused kernels' view of the same [B, T, H·D] heads.
detail::attention::Heads fused_heads(const Shape& s, int64_t num_heads) {
  return detail::attention::heads_of(s, num_heads);
}

// Runs f(pair, parallel_gemm) for every (batch, head), as matmul runs its batch slices: split
// over the threads when there are at least as many pairs as threads (each product then on one
// thread), else in order with each product split over the threads.
template <class F>
void for_each_pair(const Heads& g, F&& f) {
  const int64_t pairs = g.pairs();
  if (pairs >= num_threads()) {
    const double cost = 6.0 * static_cast<double>(g.t * g.t * g.d);
    parallel_for(pairs, cost, [&](int part, int64_t begin, int64_t end) {
      for (int64_t pair = begin; pair < end; ++pair) f(part, pair, false);
    });
    return;
  }
  for (int64_t pair = 0; pair < pairs; ++pair) f(0, pair, true);
}

// gemm for one head's product; a tiny one (the book's heads) runs straight on gemm's tiny loop,
// which is what gemm would run for it, without the calls around it.
template <class T>
void head_product(MatrixView<T> c, std::type_identity_t<MatrixView<const T>> a,
                  std::type_identity_t<MatrixView<const T>> b, const GemmOptions& options) {
  if (detail::is_tiny_product(c.rows, c.cols, a.cols) &&
      detail::attention::full_precision_products<T>()) {
    detail::gemm_tiny<T>(c, a, b, static_cast<T>(options.alpha), options.accumulate);
    return;
  }
  gemm(c, a, b, options);
}

// kt [D, T] = the head's kᵀ.
template <class T>
void transpose_head(const Heads& g, const T* k, T* kt) {
  detail::transpose(k, g.ld, g.t, g.d, kt, g.t);
}

// P [T, T] = softmax(causal_mask(q·kᵀ) / √D) of one head; kt [D, T] scratch.
template <class T>
void probabilities_pair(const Heads& g, const T* q, const T* k, T* p, T* kt, bool par) {
  const int64_t t = g.t, d = g.d;
  const T c = static_cast<T>(std::sqrt(static_cast<double>(d)));
  transpose_head(g, k, kt);
  head_product(matrix(p, t, t), matrix(q, t, d, g.ld), matrix<const T>(kt, d, t),
               {.parallel = par});  // S = q·kᵀ
  for (int64_t i = 0; i < t; ++i) {
    T* row = p + i * t;
    for (int64_t j = 0; j <= i; ++j) row[j] = row[j] / c;
    std::fill(row + i + 1, row + t, -std::numeric_limits<T>::infinity());
    vmath::softmax_rows(row, row, 1, t);
  }
}

template <class T>
void forward_pair(const Heads& g, const T* q, const T* k, const T* v, T* out, T* p,
                  const uint8_t* keep, double prob, T* scratch, bool par) {
  const int64_t t = g.t, d = g.d;
  T* kt = scratch;    // [D, T]
  T* w = kt + d * t;  // [T, T] dropped weights
  probabilities_pair(g, q, k, p, kt, par);
  const T* weights = p;
  if (keep != nullptr) {
    vmath::masked_scale(p, keep, dropout_scale<T>(prob), w, t * t);  // W = P ⊙ keep / (1 − p)
    weights = w;
  }
  head_product(matrix(out, t, d, g.ld), matrix(weights, t, t), matrix(v, t, d, g.ld),
               {.parallel = par});  // O = W·v
}

template <class T>
void backward_pair(const Heads& g, const T* q, const T* k, const T* v, const T* dout, const T* p,
                   const uint8_t* keep, double prob, T* dq, T* dk, T* dv, T* scratch, bool par) {
  const int64_t t = g.t, d = g.d;
  const T c = static_cast<T>(std::sqrt(static_cast<double>(d)));
  T* kt = scratch;     // [D, T]; then dKt [D, T]
  T* w = kt + d * t;   // [T, T] dropped weights
  T* dw = w + t * t;   // [T, T] dW, then dP
  T* ds = dw + t * t;  // [T, T] dS
  const T* weights = p;
  if (keep != nullptr) {
    vmath::masked_scale(p, keep, dropout_scale<T>(prob), w, t * t);  // W = P ⊙ keep / (1 − p)
    weights = w;
  }
  // matmul(W, v)'s backward: dW = dO·vᵀ, dv += Wᵀ·dO
  head_product(matrix(dw, t, t), matrix(dout, t, d, g.ld), matrix(v, t, d, g.ld).t(),
               {.parallel = par});
  if (dv != nullptr) {
    head_product(matrix(dv, t, d, g.ld), matrix(weights, t, t).t(), matrix(dout, t, d, g.ld),
                 {.accumulate = true, .parallel = par});
  }
  if (dq == nullptr && dk == nullptr) return;
  if (keep != nullptr) {  // dropout's backward: dP = dW ⊙ keep / (1 − p)
    vmath::masked_scale(dw, keep, dropout_scale<T>(prob), dw, t * t);
  }
  for (int64_t i = 0; i < t; ++i) {
    // softmax's backward, then ÷ √D's, then causal_mask's (masked scores get nothing)
    T* row = ds + i * t;
    vmath::softmax_rows_backward(p + i * t, dw + i * t, row, 1, t, /*accumulate=*/false);
    for (int64_t j = 0; j <= i; ++j) row[j] = row[j] / c;
    std::fill(row + i + 1, row + t, T(0));
  }
  if (dq != nullptr) {  // dq += dS·(kᵀ)ᵀ, kᵀ as the forward held it
    transpose_head(g, k, kt);
    head_product(matrix(dq, t, d, g.ld), matrix<const T>(ds, t, t), matrix<const T>(kt, d, t).t(),
                 {.accumulate = true, .parallel = par});
  }
  if (dk != nullptr) {  // dKt = qᵀ·dS, then transpose's backward: dk += dKtᵀ
    head_product(matrix(kt, d, t), matrix(q, t, d, g.ld).t(), matrix<const T>(ds, t, t),
                 {.parallel = par});
    detail::transpose(kt, g.t, g.d, g.t, dk, g.ld, /*add=*/true);
  }
}

void attention_backward(Tape& tape, const Node& node) {
  // O = W·V, W = dropout(P), P = softmax(mask(Q·Kᵀ) / √D) per (b, h)  =>
  // dV += Wᵀ·dO; dP = (dO·Vᵀ) ⊙ keep / (1 − p); dS = [j ≤ i] · P ⊙ (dP − rowsum(dP ⊙ P)) / √D;
  // dQ += dS·K; dK += dSᵀ·Q
  dispatch(node.dtype, [&]<class T>() {
    T* dq = tape.input_grad<T>(node, 0).to_add();
    T* dk = tape.input_grad<T>(node, 1).to_add();
    T* dv = tape.input_grad<T>(node, 2).to_add();
    if (!dq && !dk && !dv) return;
    const auto& [num_heads, prob, probs, keep, saved_lse] = node.state_as<AttentionState>();
    const Heads g = heads_of(node.shape, num_heads);
    const T* q = tape.input(node, 0).value_as<const T>();
    const T* k = tape.input(node, 1).value_as<const T>();
    const T* v = tape.input(node, 2).value_as<const T>();
    const T* dout = node.grad_as<const T>();
    if (saved_lse != nullptr) {  // the fused kernel: P recomputed per block from the lse
      detail::attention::backward_heads<T>(
          fused_heads(node.shape, num_heads), q, k, v, node.value_as<const T>(), dout,
          static_cast<const T*>(saved_lse), dq, dk, dv, tape.arena());
      return;
    }
    const T* p = static_cast<const T*>(probs);
    const int64_t tt = g.t * g.t;
    const int64_t per_part = g.d * g.t + 3 * tt;
    T* scratch = tape.arena().allocate_array<T>(per_part * num_threads());
    for_each_pair(g, [&](int part, int64_t pair, bool par) {
      const int64_t off = g.offset(pair);
      backward_pair<T>(g, q + off, k + off, v + off, dout + off, p + pair * tt,
                       keep ? keep + pair * tt : nullptr, prob, dq ? dq + off : nullptr,
                       dk ? dk + off : nullptr, dv ? dv + off : nullptr, scratch + per_part * part,
                       par);
    });
  });
}

// --- the drawing: the composed ops this op computes (OpDef::decomposition) ---------------------

// What the DOT writer draws for the op (the ops of nn::MultiHeadAttention's forward as the book
// writes them), on leaves standing for q, k, v [B, T, C]. The dropout mask comes from a fresh
// Generator: the drawing needs the shapes; a test compares the values with the op's on a fresh
// generator too.
Tensor attention_decomposition(std::span<const Tensor> qkv, const Node& node) {
  const AttentionState s = node.state_as<AttentionState>();  // a copy: node may move below
  auto named = [](Tensor t, const char* name) {
    t.set_name(name);
    return t;
  };
  const double d = static_cast<double>(node.shape[2] / s.num_heads);
  Tensor keys = named(split_heads(qkv[1], s.num_heads), "keys");                 // [B, H, T, D]
  Tensor queries = named(split_heads(qkv[0], s.num_heads), "queries");           // [B, H, T, D]
  Tensor values = named(split_heads(qkv[2], s.num_heads), "values");             // [B, H, T, D]
  Tensor scores = named(matmul(queries, transpose(keys, 2, 3)), "attn_scores");  // [B, H, T, T]
  scores = causal_mask(scores);  // [B, H, T, T], -inf above the diagonal
  Tensor weights = named(softmax(div_scalar(scores, std::sqrt(d)), -1), "attn_weights");
  if (s.keep != nullptr) {
    Generator generator;
    weights = dropout(weights, s.p, true, generator);  // [B, H, T, T]
  }
  return named(merge_heads(matmul(weights, values)), "context_vec");  // [B, T, H·D]
}

void causal_dot_product_attention_grad_graph(GradGraph& g) {
  // The book's attention ops (attention_decomposition) with the saved dropout mask, recorded
  const AttentionState s = g.state<AttentionState>();
  const Shape out_shape = g.node().shape;
  Tensor keep;  // [B, H, T, T]
  if (s.keep != nullptr) {
    const Heads heads = heads_of(out_shape, s.num_heads);
    const Shape shape{heads.batch, heads.heads, heads.t, heads.t};
    keep =
        from_values(shape, std::vector<double>(s.keep, s.keep + shape.numel()), g.grad().dtype());
  }
  grad_through(g, [&](std::span<const Tensor> in) {
    const Tensor q = split_heads(in[0], s.num_heads), k = split_heads(in[1], s.num_heads);
    const Tensor v = split_heads(in[2], s.num_heads);  // [B, H, T, D]
    const double d = static_cast<double>(q.shape()[3]);
    const Tensor scores = causal_mask(matmul(q, transpose(k, 2, 3)));  // [B, H, T, T]
    Tensor weights = softmax(div_scalar(scores, std::sqrt(d)), -1);    // [B, H, T, T]
    if (keep.defined()) weights = div_scalar(mul(weights, keep), 1.0 - s.p);
    return merge_heads(matmul(weights, v));  // [B, T, H·D]
  });
}

const OpDef kCausalDotProductAttention{
    .name = "causal_dot_product_attention",
    .backward = attention_backward,
    .arguments =
        [](const Tape&, const Node& n) {
          const AttentionState& s = n.state_as<AttentionState>();
          std::string text = "H = " + std::to_string(s.num_heads);
          if (s.keep != nullptr) text += ", dropout p = " + number_text(s.p);
          return text;
        },
    .saves = saves::kInput0 | saves::kInput1 | saves::kInput2,
    .state_bytes =
        [](const Tape&, const Node& n) {
          const AttentionState& s = n.state_as<AttentionState>();
          const Heads g = heads_of(n.shape, s.num_heads);
          if (s.lse != nullptr) return g.pairs() * g.t * dtype_size(n.dtype);
          const int64_t weights = g.pairs() * g.t * g.t;
          return weights * dtype_size(n.dtype) + (s.keep != nullptr ? weights : 0);
        },
    // The fused kernel's backward reads the output too.
    .saves_of =
        [](const Node& n) {
          const uint32_t inputs = saves::kInput0 | saves::kInput1 | saves::kInput2;
          return n.state_as<AttentionState>().lse != nullptr ? inputs | saves::kOutput : inputs;
        },
    .decomposition = attention_decomposition,
    .grad_graph = causal_dot_product_attention_grad_graph};
TAPEGRAD_REGISTER_OP(kCausalDotProductAttention);

[[noreturn]] void throw_attention_error(const Tensor& q, const Tensor& k, const Tensor& v,
                                        const std::string& what) {
  throw Error("causal_dot_product_attention: " + describe("q", q) + ", " + describe("k", k) + ", " +
              describe("v", v) + ": " + what);
}

}  // namespace

Tensor causal_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    int64_t num_heads, double dropout_p, bool training,
                                    Generator& generator) {
  check_same_dtype("causal_dot_product_attention", q, k);
  check_same_dtype("causal_dot_product_attention", q, v);
  if (q.rank() != 3) throw_attention_error(q, k, v, "expected 3-D [B, T, C] tensors");
  if (q.shape() != k.shape() || q.shape() != v.shape()) {
    throw_attention_error(q, k, v, "q, k and v must have the same shape");
  }
  if (num_heads <= 0 || q.shape()[2] % num_heads != 0) {
    throw_attention_error(q, k, v,
                          "C " + std::to_string(q.shape()[2]) + " must be divisible by num_heads " +
                              std::to_string(num_heads));
  }
  if (!(dropout_p >= 0.0 && dropout_p < 1.0)) {
    throw_attention_error(q, k, v, "dropout p must be in [0, 1), got " + std::to_string(dropout_p));
  }
  if (q.shape()[2] == 0) throw_attention_error(q, k, v, "the head size D is 0");
  const Heads g = heads_of(q.shape(), num_heads);
  const bool drop = training && dropout_p > 0.0;
  const int64_t weights = g.pairs() * g.t * g.t;
  Arena& arena = q.tape().arena();
  if (!drop) {  // nothing drawn: the fused kernel (see the top of this file)
    void* lse = arena.allocate(static_cast<size_t>(g.pairs() * g.t * dtype_size(q.dtype())));
    Tensor y = q.tape().record(kCausalDotProductAttention, q.shape(), q.dtype(), {q, k, v},
                               AttentionState{num_heads, 0.0, nullptr, nullptr, lse});
    if (weights == 0) return y;
    dispatch(y.dtype(), [&]<class T>() {
      detail::attention::forward_heads<T>(fused_heads(q.shape(), num_heads), q.data<T>(),
                                          k.data<T>(), v.data<T>(), output_data<T>(y),
                                          static_cast<T*>(lse), arena);
    });
    return y;
  }
  void* probs = arena.allocate(static_cast<size_t>(weights * dtype_size(q.dtype())));
  uint8_t* keep = arena.allocate_array<uint8_t>(weights);
  Tensor y = q.tape().record(kCausalDotProductAttention, q.shape(), q.dtype(), {q, k, v},
                             AttentionState{num_heads, dropout_p, probs, keep, nullptr});
  // dropout on the [B, H, T, T] weights draws its mask in one go, in their order.
  generator.dropout_keep_mask(keep, weights, dropout_p, random_kernels::block_loops());
  if (weights == 0) return y;  // no tokens or no sequences: an empty output
  dispatch(y.dtype(), [&]<class T>() {
    const int64_t tt = g.t * g.t;
    const int64_t per_part = g.d * g.t + tt;
    T* scratch = arena.allocate_array<T>(per_part * num_threads());
    const T* qv = q.data<T>();
    const T* kv = k.data<T>();
    const T* vv = v.data<T>();
    T* out = output_data<T>(y);
    T* p = static_cast<T*>(probs);
    for_each_pair(g, [&](int part, int64_t pair, bool par) {
      const int64_t off = g.offset(pair);
      forward_pair<T>(g, qv + off, kv + off, vv + off, out + off, p + pair * tt,
                      keep ? keep + pair * tt : nullptr, dropout_p, scratch + per_part * part, par);
    });
  });
  return y;
}

std::vector<double> causal_attention_weights(const Tensor& out) {
  const Node& node = out.node();
  if (node.op != &kCausalDotProductAttention) {
    throw Error("causal_attention_weights: " + describe("out", out) +
                " is not an output of causal_dot_product_attention");
  }
  const AttentionState& s = node.state_as<AttentionState>();
  const Heads g = heads_of(node.shape, s.num_heads);
  const auto n = static_cast<size_t>(g.pairs() * g.t * g.t);
  std::vector<double> values(n);
  dispatch(node.dtype, [&]<class T>() {
    if (s.probs != nullptr) {
      const T* p = static_cast<const T*>(s.probs);
      std::copy(p, p + n, values.begin());
      return;
    }
    // The fused kernel kept no weights: the exact kernel's softmax from q and k, one head at a
    // time, in order.
    const Tape& tape = out.tape();
    const T* q = tape.input(node, 0).value_as<const T>();
    const T* k = tape.input(node, 1).value_as<const T>();
    std::vector<T> p(static_cast<size_t>(g.t * g.t)), kt(static_cast<size_t>(g.d * g.t));
    for (int64_t pair = 0; pair < g.pairs(); ++pair) {
      const int64_t off = g.offset(pair);
      probabilities_pair<T>(g, q + off, k + off, p.data(), kt.data(), false);
      std::copy(p.begin(), p.end(), values.begin() + pair * g.t * g.t);
    }
  });
  return values;
}

}  // namespace tapegrad
