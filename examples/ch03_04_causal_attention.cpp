// Chapter 3, §3.5 of *Build a Large Language Model (From Scratch)*: hiding future words with
// causal attention, and dropout.
//
// Prints, in the book's order: the attention weights of SelfAttention_v2 (manual_seed(789)),
// the lower-triangular mask, the weights masked and renormalised (the simple way), the scores
// with -inf above the diagonal and their softmax (the efficient way: the same weights), dropout
// with p = 0.5 on a 6x6 matrix of ones and on the causal weights (manual_seed(123) before each,
// so the masks are PyTorch's), and the CausalAttention class (manual_seed(123), dropout 0.0)
// on a batch of two copies of the input. Every tensor prints as PyTorch prints it.
//
// Dimension names: B = 2 sequences, T = 6 tokens (= context_length), C_in = d_in = 3,
// D = d_out = 2.
#include <cmath>
#include <iostream>
#include <limits>

#include <tapegrad/nn/attention.h>
#include <tapegrad/tapegrad.h>

using namespace tapegrad;

int main() {
  Tensor inputs = tensor({{0.43, 0.15, 0.89},    // Your     (x^1)
                          {0.55, 0.87, 0.66},    // journey  (x^2)
                          {0.57, 0.85, 0.64},    // starts   (x^3)
                          {0.22, 0.58, 0.33},    // with     (x^4)
                          {0.77, 0.25, 0.10},    // one      (x^5)
                          {0.05, 0.80, 0.55}});  // step     (x^6)      [T, C_in]
  const int64_t d_in = 3, d_out = 2;
  manual_seed(789);
  nn::SelfAttentionV2 sa_v2(d_in, d_out);

  // --- §3.5.1: applying a causal attention mask ------------------------------------------------
  Tensor queries = sa_v2.W_query(inputs);         // [T, D]
  Tensor keys = sa_v2.W_key(inputs);              // [T, D]
  Tensor attn_scores = matmul(queries, t(keys));  // [T, T]
  const double d_k = static_cast<double>(keys.size(-1));
  Tensor attn_weights = softmax(attn_scores / std::sqrt(d_k), -1);  // [T, T]
  std::cout << "attn_weights:\n" << attn_weights << "\n";

  // The simple way: zero the weights above the diagonal, then renormalise each row.
  const int64_t context_length = attn_scores.size(0);
  Tensor mask_simple = tril(ones({context_length, context_length}));  // [T, T]
  std::cout << "mask_simple:\n" << mask_simple << "\n";
  Tensor masked_simple = attn_weights * mask_simple;  // [T, T]
  std::cout << "masked_simple:\n" << masked_simple << "\n";
  Tensor row_sums = sum(masked_simple, -1, /*keepdim=*/true);  // [T, 1]
  Tensor masked_simple_norm = masked_simple / row_sums;        // [T, T] / [T, 1] -> [T, T]
  std::cout << "masked_simple_norm:\n" << masked_simple_norm << "\n";

  // The efficient way: -inf above the diagonal before the softmax, which then gives it 0.
  Tensor mask = triu(ones({context_length, context_length}), 1);  // 1 = hidden        [T, T]
  Tensor masked = masked_fill(attn_scores, mask, -std::numeric_limits<double>::infinity());
  std::cout << "masked:\n" << masked << "\n";           // [T, T]
  attn_weights = softmax(masked / std::sqrt(d_k), -1);  // [T, T]
  std::cout << "attn_weights:\n" << attn_weights << "\n\n";

  // --- §3.5.2: masking additional attention weights with dropout -------------------------------
  // In training, dropout zeroes each element with probability p and scales the rest by 1/(1-p).
  manual_seed(123);
  const double p = 0.5;           // dropout rate of 50%
  Tensor example = ones({6, 6});  // [6, 6]
  std::cout << "dropout(example):\n" << dropout(example, p, /*training=*/true) << "\n";
  manual_seed(123);
  std::cout << "dropout(attn_weights):\n" << dropout(attn_weights, p, /*training=*/true) << "\n\n";

  // --- §3.5.3: a compact causal attention class ------------------------------------------------
  Tensor batch = cat({reshape(inputs, {1, 6, 3}), reshape(inputs, {1, 6, 3})}, 0);  // [B, T, C_in]
  std::cout << "batch.shape: " << batch.shape().str() << "\n";
  manual_seed(123);
  nn::CausalAttention ca(d_in, d_out, batch.size(1), /*dropout=*/0.0);
  Tensor context_vecs = ca(batch);  // [B, T, D]
  std::cout << "context_vecs:\n" << context_vecs << "\n";
  std::cout << "context_vecs.shape: " << context_vecs.shape().str() << "\n";
  return 0;
}
