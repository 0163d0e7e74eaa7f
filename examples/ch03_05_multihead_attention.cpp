// Chapter 3, §3.6 of *Build a Large Language Model (From Scratch)*: multi-head attention.
//
// Prints, in the book's order: the output of MultiHeadAttentionWrapper (two CausalAttention
// heads side by side, manual_seed(123), d_out 2 per head: 4 columns), the output of
// MultiHeadAttention (one projection split into two heads of size 1, the heads merged and
// projected by out_proj; manual_seed(123), d_out 2), and the batched matrix product behind the
// heads, checked against two separate per-head products. Every tensor prints as PyTorch does.
// The book's MultiHeadAttention is also written out here from ops, as the book writes it;
// nn::MultiHeadAttention (nn/attention.h) is the library's copy.
//
// Usage: ch03_05_multihead_attention [--heatmap FILE]
//   --heatmap FILE  also draw MultiHeadAttention's weights for "Your journey starts with one
//                   step" (one heatmap per head, the six tokens on both axes) to the PNG FILE
//                   with gnuplot (viz/plot.h); the printed output is the same with or without.
//
// Dimension names: B = 2 sequences, T = 6 tokens (= context_length), C_in = d_in = 3,
// D = d_out, H = num_heads, D_h = D / H the head size.
#include <tapegrad/cli/cli.h>
#include <cmath>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <tapegrad/nn/attention.h>
#include <tapegrad/tapegrad.h>

using namespace tapegrad;

// The book's MultiHeadAttention.forward, line by line, over the layers of an nn one.
Tensor book_multihead_forward(const nn::MultiHeadAttention& m, const Tensor& x) {
  const int64_t H = m.num_heads();
  Tensor keys = m.W_key(x);       // [B, T, D]
  Tensor queries = m.W_query(x);  // [B, T, D]
  Tensor values = m.W_value(x);   // [B, T, D]
  // .view(b, num_tokens, num_heads, head_dim).transpose(1, 2) in one op:
  keys = split_heads(keys, H);                                  // [B, H, T, D_h]
  queries = split_heads(queries, H);                            // [B, H, T, D_h]
  values = split_heads(values, H);                              // [B, H, T, D_h]
  Tensor attn_scores = matmul(queries, transpose(keys, 2, 3));  // [B, H, T, T]
  attn_scores = causal_mask(attn_scores);  // masked_fill_(mask_bool, -inf)   [B, H, T, T]
  const double d_k = static_cast<double>(keys.size(-1));
  Tensor attn_weights = softmax(attn_scores / std::sqrt(d_k), -1);  // [B, H, T, T]
  // (dropout 0.0 here; the layer applies dropout(attn_weights, p, training) when p > 0)
  // .transpose(1, 2).contiguous().view(b, num_tokens, d_out) in one op:
  Tensor context_vec = merge_heads(matmul(attn_weights, values));  // [B, T, D]
  return m.out_proj(context_vec);                                  // [B, T, D]
}

int main(int argc, char** argv) {
  std::string heatmap;  // --heatmap FILE
  CLI::App app("Chapter 3, §3.6: multi-head attention, printed as PyTorch prints it.",
               "ch03_05_multihead_attention");
  app.add_option("--heatmap", heatmap,
                 "also draw MultiHeadAttention's weights (one heatmap per head) to this PNG file "
                 "with gnuplot")
      ->type_name("FILE");
  if (const std::optional<int> exit_code = cli::parse(app, argc, argv)) return *exit_code;

  Tensor inputs = tensor({{0.43, 0.15, 0.89},    // Your     (x^1)
                          {0.55, 0.87, 0.66},    // journey  (x^2)
                          {0.57, 0.85, 0.64},    // starts   (x^3)
                          {0.22, 0.58, 0.33},    // with     (x^4)
                          {0.77, 0.25, 0.10},    // one      (x^5)
                          {0.05, 0.80, 0.55}});  // step     (x^6)      [T, C_in]
  Tensor batch = cat({reshape(inputs, {1, 6, 3}), reshape(inputs, {1, 6, 3})}, 0);  // [B, T, C_in]

  // --- §3.6.1: stacking multiple single-head attention layers ----------------------------------
  manual_seed(123);
  const int64_t context_length = batch.size(1);  // the number of tokens
  int64_t d_in = 3, d_out = 2;
  nn::MultiHeadAttentionWrapper wrapper(d_in, d_out, context_length, 0.0, /*num_heads=*/2);
  Tensor context_vecs = wrapper(batch);  // [B, T, H*D]
  std::cout << "context_vecs (MultiHeadAttentionWrapper):\n" << context_vecs << "\n";
  std::cout << "context_vecs.shape: " << context_vecs.shape().str() << "\n\n";

  // --- §3.6.2: multi-head attention with weight splits -----------------------------------------
  manual_seed(123);
  d_in = batch.size(2);
  d_out = 2;
  nn::MultiHeadAttention mha(d_in, d_out, context_length, 0.0, /*num_heads=*/2);
  mha.keep_attention(!heatmap.empty());  // its softmax weights, kept for the heatmap
  context_vecs = mha(batch);             // [B, T, D]
  std::cout << "context_vecs (MultiHeadAttention):\n" << context_vecs << "\n";
  std::cout << "context_vecs.shape: " << context_vecs.shape().str() << "\n";
  std::cout << "written out from ops:\n" << book_multihead_forward(mha, batch) << "\n\n";

  // The batched matrix product the heads rely on: (b, num_heads, num_tokens, head_dim).
  const std::vector<double> a_values = {0.2745, 0.6584, 0.2775, 0.8573,  // head 0
                                        0.8993, 0.0390, 0.9268, 0.7388, 0.7179, 0.7058,
                                        0.9156, 0.4340, 0.0772, 0.3565, 0.1479, 0.5331,  // head 1
                                        0.4066, 0.2318, 0.4545, 0.9737, 0.4606, 0.5159,
                                        0.4220, 0.5786};
  Tensor a = from_values({1, 2, 3, 4}, a_values);                                    // [1, 2, 3, 4]
  std::cout << "a @ a.transpose(2, 3):\n" << matmul(a, transpose(a, 2, 3)) << "\n";  // [1, 2, 3, 3]

  Tensor first_head = select(select(a, 0, 0), 0, 0);     // a[0, 0, :, :]   [3, 4]
  Tensor first_res = matmul(first_head, t(first_head));  // [3, 3]
  std::cout << "First head:\n" << first_res << "\n";
  Tensor second_head = select(select(a, 0, 0), 0, 1);       // a[0, 1, :, :]   [3, 4]
  Tensor second_res = matmul(second_head, t(second_head));  // [3, 3]
  std::cout << "\nSecond head:\n" << second_res << "\n";

  if (!heatmap.empty()) {  // the first sequence's weights, [H, T, T]
    const nn::AttentionWeights& weights = mha.last_attention();  // [B, H, T, T]
    const Shape per_sequence{weights.shape.size(1), weights.shape.size(2), weights.shape.size(3)};
    try {
      plot_attention(heatmap, per_sequence, weights.sequence(0),
                     {"Your", "journey", "starts", "with", "one", "step"},
                     "MultiHeadAttention weights (chapter 3, manual_seed(123), 2 heads)");
    } catch (const Error& e) {
      std::cerr << e.what() << "\n";
      return 1;
    }
    std::cerr << "wrote " << heatmap << "\n";
  }
  return 0;
}
