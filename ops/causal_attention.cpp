// causal_attention: softmax(causal_mask(q·kᵀ) / √D)·v per (batch, head), fused: the kernels
// (direct for short sequences, blocked with an online softmax otherwise) and their run over the
// threads are in kernels/attention/attention.h.
#include <string>
#include <utility>

#include <tapegrad/graph/threads.h>
#include <tapegrad/kernels/attention/attention.h>
#include <tapegrad/ops/detail/grad_util.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

using detail::attention::Heads;
using detail::attention::heads_of;

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
    detail::attention::backward_heads<T>(
        heads_of(node.shape, num_heads), qn.value_as<const T>(), kn.value_as<const T>(),
        vn.value_as<const T>(), node.value_as<const T>(), node.grad_as<const T>(),
        static_cast<const T*>(saved_lse), dq, dk, dv, tape.arena());
  });
}

void causal_attention_grad_graph(GradGraph& g) {
  // O = softmax(mask(Q·Kᵀ) / √D)·V, recorded as those ops (its second derivative is theirs)
  const int64_t h = g.state<CausalAttentionState>().num_heads;
  grad_through(g, [&](std::span<const Tensor> in) {
    const auto heads = [&](const Tensor& x) { return h == 0 ? x : split_heads(x, h); };
    const Tensor q = heads(in[0]), k = heads(in[1]), v = heads(in[2]);  // [B, H, T, D]
    const double d = static_cast<double>(q.shape()[3]);
    const Tensor scores = causal_mask(matmul(q, transpose(k, 2, 3)));             // [B, H, T, T]
    const Tensor out = matmul(softmax(div_scalar(scores, std::sqrt(d)), -1), v);  // [B, H, T, D]
    return h == 0 ? out : merge_heads(out);
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
        },
    .grad_graph = causal_attention_grad_graph};
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
    detail::attention::forward_heads<T>(g, q.data<T>(), k.data<T>(), v.data<T>(), output_data<T>(y),
                                        static_cast<T*>(saved_lse), arena);
  });
  return y;
}

}  // namespace tapegrad