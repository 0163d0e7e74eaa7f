// Chapter 3, §3.3 of *Build a Large Language Model (From Scratch)*: a simplified self-attention
// mechanism, without trainable weights.
//
// Prints, as the book does and in its order: the attention scores of the query "journey"
// (token 2) against every token, those scores normalised by their sum and by softmax (naive
// and torch's), the context vector of "journey", then the same for all tokens at once: the
// scores by two loops and by one matrix product, the attention weights and their row sums, and
// all context vectors. Every tensor prints as PyTorch prints it; the values match PyTorch's
// (tests/examples/test_chapter3.cpp checks them against tests/goldens/chapter3/).
//
// Dimension names: T = 6 tokens ("Your journey starts with one step"), C = 3 embedding dims.
#include <iostream>
#include <vector>

#include <tapegrad/tapegrad.h>

using namespace tapegrad;

int main() {
  Tensor inputs = tensor({{0.43, 0.15, 0.89},    // Your     (x^1)
                          {0.55, 0.87, 0.66},    // journey  (x^2)
                          {0.57, 0.85, 0.64},    // starts   (x^3)
                          {0.22, 0.58, 0.33},    // with     (x^4)
                          {0.77, 0.25, 0.10},    // one      (x^5)
                          {0.05, 0.80, 0.55}});  // step     (x^6)      [T, C]
  const int64_t T = inputs.size(0);
  std::cout << "inputs:\n" << inputs << "\n\n";

  // --- §3.3.1: the context vector of one token ----------------------------------------------
  // The attention score of the query x^2 with each token x^i is their dot product.
  Tensor query = select(inputs, 0, 1);  // inputs[1], "journey"             [C]
  std::vector<Tensor> scores;
  for (int64_t i = 0; i < T; ++i) {
    Tensor x_i = select(inputs, 0, i);                // [C]
    scores.push_back(reshape(dot(x_i, query), {1}));  // [1]
  }
  Tensor attn_scores_2 = cat(scores, 0);  // [T]
  std::cout << "attn_scores_2: " << attn_scores_2 << "\n";

  // Normalised so that the weights sum to 1: first simply by the sum...
  Tensor attn_weights_2_tmp = attn_scores_2 / sum(attn_scores_2);  // [T] / [] -> [T]
  std::cout << "Attention weights: " << attn_weights_2_tmp << "\n";
  std::cout << "Sum: " << sum(attn_weights_2_tmp) << "\n";

  // ...then by softmax, which keeps the weights positive: the naive formula...
  auto softmax_naive = [](const Tensor& x) { return exp(x) / sum(exp(x), 0); };  // [T]
  Tensor attn_weights_2_naive = softmax_naive(attn_scores_2);                    // [T]
  std::cout << "Attention weights: " << attn_weights_2_naive << "\n";
  std::cout << "Sum: " << sum(attn_weights_2_naive) << "\n";

  // ...and the library's softmax, which is safe from overflow.
  Tensor attn_weights_2 = softmax(attn_scores_2, 0);  // [T]
  std::cout << "Attention weights: " << attn_weights_2 << "\n";
  std::cout << "Sum: " << sum(attn_weights_2) << "\n";

  // The context vector is the weighted sum of all inputs.
  Tensor context_vec_2 = zeros(query.shape());  // [C]
  for (int64_t i = 0; i < T; ++i) {
    Tensor x_i = select(inputs, 0, i);                                   // [C]
    context_vec_2 = context_vec_2 + select(attn_weights_2, 0, i) * x_i;  // [] * [C] -> [C]
  }
  std::cout << "context_vec_2: " << context_vec_2 << "\n\n";

  // --- §3.3.2: the context vectors of all tokens ----------------------------------------------
  // All pairs of dot products, by two loops...
  std::vector<Tensor> rows;
  for (int64_t i = 0; i < T; ++i) {
    Tensor x_i = select(inputs, 0, i);  // [C]
    std::vector<Tensor> row;
    for (int64_t j = 0; j < T; ++j) {
      Tensor x_j = select(inputs, 0, j);           // [C]
      row.push_back(reshape(dot(x_i, x_j), {1}));  // [1]
    }
    rows.push_back(reshape(cat(row, 0), {1, T}));  // [1, T]
  }
  Tensor attn_scores_loop = cat(rows, 0);  // [T, T]
  std::cout << "attn_scores (loops):\n" << attn_scores_loop << "\n";

  // ...and by one matrix product.
  Tensor attn_scores = matmul(inputs, t(inputs));  // [T, C] x [C, T] -> [T, T]
  std::cout << "attn_scores (inputs @ inputs.T):\n" << attn_scores << "\n";

  Tensor attn_weights = softmax(attn_scores, -1);  // each row sums to 1     [T, T]
  std::cout << "attn_weights:\n" << attn_weights << "\n";
  std::cout << "All row sums: " << sum(attn_weights, -1) << "\n";  // [T]

  Tensor all_context_vecs = matmul(attn_weights, inputs);  // [T, T] x [T, C] -> [T, C]
  std::cout << "all_context_vecs:\n" << all_context_vecs << "\n";
  std::cout << "Previous 2nd context vector: " << context_vec_2 << "\n";
  return 0;
}
