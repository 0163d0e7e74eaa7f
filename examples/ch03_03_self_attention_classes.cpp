// Chapter 3, §3.4.2 of *Build a Large Language Model (From Scratch)*: self-attention as a
// reusable class, and exercise 3.1.
//
// Prints, in the book's order: the context vectors of SelfAttention_v1 (raw weight matrices
// from torch.rand after manual_seed(123)), of SelfAttention_v2 (nn.Linear layers without bias,
// torch's initialisation, after manual_seed(789)), and of v1 once it holds v2's weights
// (exercise 3.1: nn.Linear stores W transposed, so v1 gets Wᵀ): the same numbers as v2's.
// The classes are tapegrad::nn::SelfAttentionV1/V2 (nn/attention.h); the first is also
// written out here from ops, as the book writes it.
//
// Dimension names: T = 6 tokens, C_in = d_in = 3, D = d_out = 2.
#include <cmath>
#include <iostream>

#include <tapegrad/nn/attention.h>
#include <tapegrad/tapegrad.h>

using namespace tapegrad;

// The book's SelfAttention_v1, line by line (nn::SelfAttentionV1 is the library's copy).
struct BookSelfAttentionV1 {
  Parameter W_query, W_key, W_value;  // [C_in, D] each, x·W

  Tensor forward(const Tensor& x) const {
    Tensor keys = matmul(x, W_key);                 // [T, C_in] x [C_in, D] -> [T, D]
    Tensor queries = matmul(x, W_query);            // [T, D]
    Tensor values = matmul(x, W_value);             // [T, D]
    Tensor attn_scores = matmul(queries, t(keys));  // omega              [T, T]
    const double d_k = static_cast<double>(keys.size(-1));
    Tensor attn_weights = softmax(attn_scores / std::sqrt(d_k), -1);  // [T, T]
    return matmul(attn_weights, values);                              // [T, D]
  }
};

int main() {
  Tensor inputs = tensor({{0.43, 0.15, 0.89},    // Your     (x^1)
                          {0.55, 0.87, 0.66},    // journey  (x^2)
                          {0.57, 0.85, 0.64},    // starts   (x^3)
                          {0.22, 0.58, 0.33},    // with     (x^4)
                          {0.77, 0.25, 0.10},    // one      (x^5)
                          {0.05, 0.80, 0.55}});  // step     (x^6)      [T, C_in]
  const int64_t d_in = 3, d_out = 2;

  // SelfAttention_v1: three torch.rand(d_in, d_out) matrices, drawn query, key, value.
  manual_seed(123);
  nn::SelfAttentionV1 sa_v1(d_in, d_out);
  BookSelfAttentionV1 book_v1{sa_v1.W_query, sa_v1.W_key, sa_v1.W_value};  // shares the weights
  std::cout << "sa_v1(inputs):\n" << sa_v1(inputs) << "\n";                // [T, D]
  std::cout << "written out from ops:\n" << book_v1.forward(inputs) << "\n\n";

  // SelfAttention_v2: nn.Linear(d_in, d_out, bias=False) for each, weights [D, C_in].
  manual_seed(789);
  nn::SelfAttentionV2 sa_v2(d_in, d_out);
  std::cout << "sa_v2(inputs):\n" << sa_v2(inputs) << "\n\n";  // [T, D]

  // Exercise 3.1: v1 computes x·W, nn.Linear computes x·Wᵀ, so v1 takes the transposes.
  sa_v1.W_query.assign(t(sa_v2.W_query.weight).values());  // [D, C_in] -> [C_in, D]
  sa_v1.W_key.assign(t(sa_v2.W_key.weight).values());
  sa_v1.W_value.assign(t(sa_v2.W_value.weight).values());
  std::cout << "sa_v1(inputs) with sa_v2's weights:\n" << sa_v1(inputs) << "\n";  // [T, D]
  return 0;
}
