// Chapter 3, §3.4.1 of *Build a Large Language Model (From Scratch)*: self-attention with
// trainable weights, computed step by step for one query.
//
// Prints, in the book's order: the weight matrices W_query, W_key, W_value drawn by
// torch.rand(3, 2) after manual_seed(123) (the same numbers as PyTorch's), the query of
// "journey" (token 2), the keys and values of all tokens, the score of "journey" with itself,
// its scores with every token, the weights (softmax of the scores scaled by 1/√d_k) and its
// context vector. Every tensor prints as PyTorch prints it.
//
// Dimension names: T = 6 tokens, C_in = d_in = 3 input embedding dims, D = d_out = 2 (the book
// keeps it small to follow the numbers; GPT models use d_out = d_in).
#include <cmath>
#include <iostream>

#include <tapegrad/tapegrad.h>

using namespace tapegrad;

int main() {
  Tensor inputs = tensor({{0.43, 0.15, 0.89},    // Your     (x^1)
                          {0.55, 0.87, 0.66},    // journey  (x^2)
                          {0.57, 0.85, 0.64},    // starts   (x^3)
                          {0.22, 0.58, 0.33},    // with     (x^4)
                          {0.77, 0.25, 0.10},    // one      (x^5)
                          {0.05, 0.80, 0.55}});  // step     (x^6)      [T, C_in]
  Tensor x_2 = select(inputs, 0, 1);             // the second input, "journey"              [C_in]
  const int64_t d_in = inputs.size(1);
  const int64_t d_out = 2;

  // The book's nn.Parameter(torch.rand(d_in, d_out), requires_grad=False): fixed for now.
  manual_seed(123);
  Tensor W_query = rand({d_in, d_out});  // [C_in, D]
  Tensor W_key = rand({d_in, d_out});    // [C_in, D]
  Tensor W_value = rand({d_in, d_out});  // [C_in, D]
  std::cout << "W_query:\n" << W_query << "\n";
  std::cout << "W_key:\n" << W_key << "\n";
  std::cout << "W_value:\n" << W_value << "\n\n";

  // Query, key and value of "journey".
  Tensor query_2 = matmul(x_2, W_query);  // [C_in] x [C_in, D] -> [D]
  Tensor key_2 = matmul(x_2, W_key);      // [D]
  Tensor value_2 = matmul(x_2, W_value);  // [D]
  std::cout << "query_2: " << query_2 << "\n";
  (void)key_2;
  (void)value_2;

  // Keys and values of every token.
  Tensor keys = matmul(inputs, W_key);      // [T, C_in] x [C_in, D] -> [T, D]
  Tensor values = matmul(inputs, W_value);  // [T, D]
  std::cout << "keys.shape: " << keys.shape().str() << "\n";
  std::cout << "values.shape: " << values.shape().str() << "\n";
  std::cout << "keys:\n" << keys << "\n";
  std::cout << "values:\n" << values << "\n\n";

  // The score of "journey" with itself (ω22), then with every token.
  Tensor keys_2 = select(keys, 0, 1);           // [D]
  Tensor attn_score_22 = dot(query_2, keys_2);  // []
  std::cout << "attn_score_22: " << attn_score_22 << "\n";
  Tensor attn_scores_2 = matmul(query_2, t(keys));  // [D] x [D, T] -> [T]
  std::cout << "attn_scores_2: " << attn_scores_2 << "\n";

  // Scaled by 1/√d_k before the softmax, so that large dot products keep useful gradients.
  const double d_k = static_cast<double>(keys.size(-1));
  Tensor attn_weights_2 = softmax(attn_scores_2 / std::sqrt(d_k), -1);  // [T]
  std::cout << "attn_weights_2: " << attn_weights_2 << "\n";

  Tensor context_vec_2 = matmul(attn_weights_2, values);  // [T] x [T, D] -> [D]
  std::cout << "context_vec_2: " << context_vec_2 << "\n";
  return 0;
}
