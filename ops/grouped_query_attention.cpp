// grouped_query_attention: causal attention with fewer key/value heads than query heads (the
// attention of the book's Qwen3 and Llama 3 GroupedQueryAttention), fused: the kernels of
// kernels/attention/attention.h with each query head reading its group's kv head in place.
#include <cmath>
#include <span>
#include <string>

#include <tapegrad/kernels/attention/attention.h>
#include <tapegrad/ops/detail/grad_util.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

using detail::attention::Heads;
using detail::attention::heads_of;

struct GroupedQueryAttentionState {
  int64_t kv_heads;  // G
  const void* lse;   // [B·H, T] row log-sum-exps, in the inputs' dtype, from the tape's arena
};

void grouped_query_attention_backward(Tape& tape, const Node& node) {
  // As causal_attention's per query head, with K and V those of its group's kv head: dK and dV of
  // a kv head sum over the H / G query heads that read it (repeat_interleave's backward).
  dispatch(node.dtype, [&]<class T>() {
    const Node& qn = tape.input(node, 0);
    const Node& kn = tape.input(node, 1);
    const Node& vn = tape.input(node, 2);
    T* dq = tape.input_grad<T>(node, 0).to_add();
    T* dk = tape.input_grad<T>(node, 1).to_add();
    T* dv = tape.input_grad<T>(node, 2).to_add();
    if (!dq && !dk && !dv) return;
    const auto& [kv_heads, saved_lse] = node.state_as<GroupedQueryAttentionState>();
    detail::attention::grouped_backward_heads<T>(
        heads_of(node.shape, 0), kv_heads, qn.value_as<const T>(), kn.value_as<const T>(),
        vn.value_as<const T>(), node.value_as<const T>(), node.grad_as<const T>(),
        static_cast<const T*>(saved_lse), dq, dk, dv, tape.arena());
  });
}

void grouped_query_attention_grad_graph(GradGraph& g) {
  // The book's composed form: the kv heads repeated to the query heads, then causal attention as
  // its ops (its second derivative is theirs).
  const int64_t group = g.input(0).shape()[1] / g.state<GroupedQueryAttentionState>().kv_heads;
  grad_through(g, [&](std::span<const Tensor> in) {
    const Tensor& q = in[0];
    const Tensor k = group == 1 ? in[1] : repeat_interleave(in[1], group, 1);  // [B, H, T, D]
    const Tensor v = group == 1 ? in[2] : repeat_interleave(in[2], group, 1);  // [B, H, T, D]
    const double d = static_cast<double>(q.shape()[3]);
    const Tensor scores = causal_mask(matmul(q, transpose(k, 2, 3)));  // [B, H, T, T]
    return matmul(softmax(div_scalar(scores, std::sqrt(d)), -1), v);   // [B, H, T, D]
  });
}

const OpDef kGroupedQueryAttention{
    .name = "grouped_query_attention",
    .backward = grouped_query_attention_backward,
    .arguments =
        [](const Tape&, const Node& n) {
          return "H = " + std::to_string(n.shape[1]) +
                 ", G = " + std::to_string(n.state_as<GroupedQueryAttentionState>().kv_heads);
        },
    .saves = saves::kInput0 | saves::kInput1 | saves::kInput2 | saves::kOutput,
    .state_bytes =
        [](const Tape&, const Node& n) {
          const Heads g = heads_of(n.shape, 0);
          return g.batch * g.heads * g.t * dtype_size(n.dtype);
        },
    .grad_graph = grouped_query_attention_grad_graph};
TAPEGRAD_REGISTER_OP(kGroupedQueryAttention);

[[noreturn]] void throw_gqa_error(const Tensor& q, const Tensor& k, const Tensor& v,
                                  const std::string& what) {
  throw Error("grouped_query_attention: " + describe("q", q) + ", " + describe("k", k) + ", " +
              describe("v", v) + ": " + what);
}

}  // namespace

Tensor grouped_query_attention(const Tensor& q, const Tensor& k, const Tensor& v) {
  check_same_dtype("grouped_query_attention", q, k);
  check_same_dtype("grouped_query_attention", q, v);
  if (q.rank() != 4 || k.rank() != 4 || v.rank() != 4) {
    throw_gqa_error(q, k, v, "expected q [B, H, T, D] and k, v [B, G, T, D]");
  }
  if (k.shape() != v.shape()) throw_gqa_error(q, k, v, "k and v must have the same shape");
  if (q.size(0) != k.size(0) || q.size(2) != k.size(2) || q.size(3) != k.size(3)) {
    throw_gqa_error(q, k, v, "q, k and v must agree in B, T and D");
  }
  const int64_t heads = q.size(1), groups = k.size(1);
  if (groups <= 0 || heads % groups != 0) {
    throw_gqa_error(q, k, v,
                    "the query heads H " + std::to_string(heads) +
                        " must be a multiple of the key/value heads G " + std::to_string(groups));
  }
  // One kv head per query head is causal attention itself (the same op and numbers).
  if (groups == heads) return causal_attention(q, k, v);
  const Heads g = heads_of(q.shape(), 0);
  if (g.d == 0) throw_gqa_error(q, k, v, "the head size D is 0");
  Arena& arena = q.tape().arena();
  void* saved_lse =
      arena.allocate(static_cast<size_t>(g.batch * g.heads * g.t * dtype_size(q.dtype())));
  Tensor y = q.tape().record(kGroupedQueryAttention, q.shape(), q.dtype(), {q, k, v},
                             GroupedQueryAttentionState{groups, saved_lse});
  dispatch(y.dtype(), [&]<class T>() {
    detail::attention::grouped_forward_heads<T>(g, groups, q.data<T>(), k.data<T>(), v.data<T>(),
                                                output_data<T>(y), static_cast<T*>(saved_lse),
                                                arena);
  });
  return y;
}

}  // namespace tapegrad
