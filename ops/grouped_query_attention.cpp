// grouped_query_attention: causal attention with fewer key/value heads than query heads (the
// attention of the book's Qwen3 and Llama 3 GroupedQueryAttention), composed from ops.
#include <string>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

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
  // The book's keys.repeat_interleave(group_size, dim=1): query head h reads kv head h / group
  // size, and repeat_interleave's backward sums the gradients of the heads that share one. Then
  // the fused causal attention on [B, H, T, D] (no [T, T] scores kept).
  const int64_t group_size = heads / groups;
  const Tensor keys = group_size == 1 ? k : repeat_interleave(k, group_size, 1);
  const Tensor values = group_size == 1 ? v : repeat_interleave(v, group_size, 1);
  return causal_attention(q, keys, values);
}

}  // namespace tapegrad
