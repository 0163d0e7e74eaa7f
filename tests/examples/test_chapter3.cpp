// Tests for the chapter 3 examples and nn/{layers,attention}.cpp against PyTorch's goldens
// (tests/goldens/chapter3/, written by make_chapter3_goldens.py): every value the examples
// print within 1e-6 absolute + 1e-5 relative, initial weights and dropout masks bit for bit,
// and each example program's printed output containing torch's prints in the book's order.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include <tapegrad/graph/factory.h>
#include <tapegrad/graph/gradcheck.h>
#include <tapegrad/graph/random.h>
#include <tapegrad/nn/attention.h>
#include <tapegrad/nn/layers.h>
#include <tapegrad/nn/module.h>
#include <tapegrad/ops/ops.h>
#include "tests/examples/chapter3_goldens.h"

using namespace tapegrad;
namespace golden = tapegrad::testing::chapter3;
using golden::check_close;
using golden::check_exact;
using golden::goldens;

namespace {

Tensor book_inputs(DType dtype = DType::Float32) {
  return tensor({{0.43, 0.15, 0.89},
                 {0.55, 0.87, 0.66},
                 {0.57, 0.85, 0.64},
                 {0.22, 0.58, 0.33},
                 {0.77, 0.25, 0.10},
                 {0.05, 0.80, 0.55}},
                dtype);
}

Tensor book_batch() {
  Tensor one = reshape(book_inputs(), {1, 6, 3});
  return cat({one, one}, 0);
}

// The dropout keep-mask a copy of `generator` draws next for a tensor of `shape` (1 keeps).
Tensor keep_mask_from(const Generator& generator, const Shape& shape, double p) {
  Generator copy = generator;
  std::vector<uint8_t> keep(static_cast<size_t>(shape.numel()));
  copy.dropout_keep_mask(keep.data(), shape.numel(), p);
  return from_values(shape, std::vector<double>(keep.begin(), keep.end()));
}

// The book's §3.4.1 weights: torch.rand(3, 2) three times after manual_seed(123).
struct BookWeights {
  Tensor query, key, value;
};
BookWeights book_weights() {
  manual_seed(123);
  Tensor query = rand({3, 2});
  Tensor key = rand({3, 2});
  return {query, key, rand({3, 2})};
}

// Each parameter bit-exact against "<prefix>.<its name>", and exactly the golden's set.
void check_parameters_exact(const std::vector<Parameter>& params, const testing::GoldenFile& g,
                            const std::string& prefix) {
  std::vector<std::string> golden_names;  // in file order: torch's named_parameters order
  for (const std::string& name : g.names()) {
    if (name.starts_with(prefix + ".")) golden_names.push_back(name.substr(prefix.size() + 1));
  }
  std::vector<std::string> names;
  for (const Parameter& p : params) names.push_back(p.name());
  CHECK(names == golden_names);  // torch's named_parameters: same names, same order
  for (const Parameter& p : params) {
    INFO("parameter " << p.name());
    check_exact(p, g[prefix + "." + p.name()]);
  }
}

}  // namespace

// --- §3.3: simplified self-attention
// --------------------------------------------------------------

TEST_CASE("chapter 3 §3.3: simplified self-attention matches PyTorch", "[chapter3]") {
  const auto& g = goldens("ch03_01_simplified_attention.txt");
  Tape tape;
  TapeScope scope(tape);
  Tensor inputs = book_inputs();
  check_exact(inputs, g["inputs"]);

  Tensor query = select(inputs, 0, 1);
  std::vector<Tensor> scores;
  for (int64_t i = 0; i < 6; ++i) scores.push_back(reshape(dot(select(inputs, 0, i), query), {1}));
  Tensor attn_scores_2 = cat(scores, 0);
  check_close(attn_scores_2, g["attn_scores_2"]);

  Tensor tmp = attn_scores_2 / sum(attn_scores_2);
  check_close(tmp, g["attn_weights_2_tmp"]);
  check_close(sum(tmp), g["attn_weights_2_tmp.sum"]);

  Tensor naive = exp(attn_scores_2) / sum(exp(attn_scores_2), 0);
  check_close(naive, g["attn_weights_2_naive"]);
  check_close(sum(naive), g["attn_weights_2_naive.sum"]);

  Tensor attn_weights_2 = softmax(attn_scores_2, 0);
  check_close(attn_weights_2, g["attn_weights_2"]);
  check_close(sum(attn_weights_2), g["attn_weights_2.sum"]);

  Tensor context_vec_2 = zeros({3});
  for (int64_t i = 0; i < 6; ++i) {
    context_vec_2 = context_vec_2 + select(attn_weights_2, 0, i) * select(inputs, 0, i);
  }
  check_close(context_vec_2, g["context_vec_2"]);
  check_close(context_vec_2, g["previous_context_vec_2"]);

  std::vector<Tensor> rows;
  for (int64_t i = 0; i < 6; ++i) {
    std::vector<Tensor> row;
    for (int64_t j = 0; j < 6; ++j) {
      row.push_back(reshape(dot(select(inputs, 0, i), select(inputs, 0, j)), {1}));
    }
    rows.push_back(reshape(cat(row, 0), {1, 6}));
  }
  check_close(cat(rows, 0), g["attn_scores_loop"]);

  Tensor attn_scores = matmul(inputs, t(inputs));
  check_close(attn_scores, g["attn_scores"]);
  Tensor attn_weights = softmax(attn_scores, -1);
  check_close(attn_weights, g["attn_weights"]);
  check_close(sum(attn_weights, -1), g["attn_weights.row_sums"]);
  check_close(matmul(attn_weights, inputs), g["all_context_vecs"]);
}

// --- §3.4.1: trainable weights, step by step -----------------------------------------------------

TEST_CASE("chapter 3 §3.4.1: rand(3, 2) after manual_seed(123) is PyTorch's, bit for bit",
          "[chapter3][random]") {
  const auto& g = goldens("ch03_02_trainable_weights.txt");
  Tape tape;
  TapeScope scope(tape);
  const BookWeights w = book_weights();
  check_exact(w.query, g["W_query"]);
  check_exact(w.key, g["W_key"]);
  check_exact(w.value, g["W_value"]);
}

TEST_CASE("chapter 3 §3.4.1: query, keys, values, scores, weights and context of token 2",
          "[chapter3]") {
  const auto& g = goldens("ch03_02_trainable_weights.txt");
  Tape tape;
  TapeScope scope(tape);
  Tensor inputs = book_inputs();
  Tensor x_2 = select(inputs, 0, 1);
  const auto [W_query, W_key, W_value] = book_weights();

  Tensor query_2 = matmul(x_2, W_query);
  check_close(query_2, g["query_2"]);
  check_close(matmul(x_2, W_key), g["key_2"]);
  check_close(matmul(x_2, W_value), g["value_2"]);
  Tensor keys = matmul(inputs, W_key);
  Tensor values = matmul(inputs, W_value);
  check_close(keys, g["keys"]);
  check_close(values, g["values"]);
  check_close(dot(query_2, select(keys, 0, 1)), g["attn_score_22"]);
  Tensor attn_scores_2 = matmul(query_2, t(keys));
  check_close(attn_scores_2, g["attn_scores_2"]);
  Tensor attn_weights_2 = softmax(attn_scores_2 / std::sqrt(2.0), -1);
  check_close(attn_weights_2, g["attn_weights_2"]);
  check_close(matmul(attn_weights_2, values), g["context_vec_2"]);
}

// --- §3.4.2: the SelfAttention classes
// -------------------------------------------------------------

TEST_CASE("chapter 3 §3.4.2: SelfAttentionV1 draws torch.rand weights and matches the book",
          "[chapter3][attention]") {
  const auto& g = goldens("ch03_03_self_attention_classes.txt");
  Tape tape;
  TapeScope scope(tape);
  manual_seed(123);
  nn::SelfAttentionV1 sa_v1(3, 2);
  check_parameters_exact(sa_v1.parameters(), g, "sa_v1");
  check_close(sa_v1(book_inputs()), g["sa_v1(inputs)"]);
}

TEST_CASE("chapter 3 §3.4.2: SelfAttentionV2's Linear layers draw torch's init and match",
          "[chapter3][attention][linear]") {
  const auto& g = goldens("ch03_03_self_attention_classes.txt");
  Tape tape;
  TapeScope scope(tape);
  manual_seed(789);
  nn::SelfAttentionV2 sa_v2(3, 2);
  check_parameters_exact(sa_v2.parameters(), g, "sa_v2");
  CHECK_FALSE(sa_v2.W_query.has_bias());
  check_close(sa_v2(book_inputs()), g["sa_v2(inputs)"]);
}

TEST_CASE("chapter 3 exercise 3.1: SelfAttentionV1 with V2's transposed weights gives V2's output",
          "[chapter3][attention]") {
  const auto& g = goldens("ch03_03_self_attention_classes.txt");
  Tape tape;
  TapeScope scope(tape);
  manual_seed(123);
  nn::SelfAttentionV1 sa_v1(3, 2);
  manual_seed(789);
  nn::SelfAttentionV2 sa_v2(3, 2);
  sa_v1.W_query.assign(t(sa_v2.W_query.weight).values());
  sa_v1.W_key.assign(t(sa_v2.W_key.weight).values());
  sa_v1.W_value.assign(t(sa_v2.W_value.weight).values());
  Tensor inputs = book_inputs();
  check_close(sa_v1(inputs), g["sa_v1_transferred(inputs)"]);
  check_close(sa_v1(inputs), g["sa_v2(inputs)"]);
}

TEST_CASE("chapter 3: SelfAttentionV2 with qkv_bias draws weight then bias per layer, as torch",
          "[chapter3][attention][linear]") {
  const auto& g = goldens("ch03_03_self_attention_classes.txt");
  Tape tape;
  TapeScope scope(tape);
  manual_seed(789);
  nn::SelfAttentionV2 sa(3, 2, /*qkv_bias=*/true);
  check_parameters_exact(sa.parameters(), g, "sa_v2_bias");
  check_close(sa(book_inputs()), g["sa_v2_bias(inputs)"]);
}

// --- §3.5: causal attention and dropout
// ------------------------------------------------------------

TEST_CASE("chapter 3 §3.5.1: causal masking, the simple way and the -inf way", "[chapter3]") {
  const auto& g = goldens("ch03_04_causal_attention.txt");
  Tape tape;
  TapeScope scope(tape);
  manual_seed(789);
  nn::SelfAttentionV2 sa_v2(3, 2);
  check_parameters_exact(sa_v2.parameters(), g, "sa_v2");
  Tensor inputs = book_inputs();
  Tensor queries = sa_v2.W_query(inputs);
  Tensor keys = sa_v2.W_key(inputs);
  Tensor attn_scores = matmul(queries, t(keys));
  Tensor attn_weights = softmax(attn_scores / std::sqrt(2.0), -1);
  check_close(attn_weights, g["attn_weights"]);

  Tensor mask_simple = tril(ones({6, 6}));
  check_exact(mask_simple, g["mask_simple"]);
  Tensor masked_simple = attn_weights * mask_simple;
  check_close(masked_simple, g["masked_simple"]);
  Tensor masked_simple_norm = masked_simple / sum(masked_simple, -1, true);
  check_close(masked_simple_norm, g["masked_simple_norm"]);

  Tensor masked =
      masked_fill(attn_scores, triu(ones({6, 6}), 1), -std::numeric_limits<double>::infinity());
  check_close(masked, g["masked"]);
  check_close(causal_mask(attn_scores), g["masked"]);  // the op the layers use: the same
  check_close(softmax(masked / std::sqrt(2.0), -1), g["causal_attn_weights"]);
}

TEST_CASE("chapter 3 §3.5.2: dropout masks after manual_seed(123) are PyTorch's, bit for bit",
          "[chapter3][dropout][random]") {
  const auto& g = goldens("ch03_04_causal_attention.txt");
  Tape tape;
  TapeScope scope(tape);
  manual_seed(123);
  Tensor dropped_ones = dropout(ones({6, 6}), 0.5, true);
  check_exact(dropped_ones, g["dropout(ones)"]);
  // The kept elements are the golden mask's ones, scaled by 1/(1-p) = 2.
  std::vector<double> mask;
  for (double v : dropped_ones.values()) mask.push_back(v / 2.0);
  check_exact(from_values({6, 6}, mask), g["dropout(ones).mask"]);

  // Same seed, same mask, on the causal attention weights.
  Tensor weights = from_values({6, 6}, g["causal_attn_weights"].values);
  manual_seed(123);
  Tensor dropped = dropout(weights, 0.5, true);
  check_close(dropped, g["dropout(attn_weights)"]);
  const auto& m = g["dropout(attn_weights).mask"].values;
  const std::vector<double> w = weights.values(), d = dropped.values();
  for (size_t i = 0; i < m.size(); ++i) CHECK(d[i] == (m[i] != 0.0 ? w[i] * 2.0f : 0.0));
}

TEST_CASE("chapter 3 §3.5.3: CausalAttention on the batch of two copies", "[chapter3][attention]") {
  const auto& g = goldens("ch03_04_causal_attention.txt");
  Tape tape;
  TapeScope scope(tape);
  Tensor batch = book_batch();
  check_exact(batch, g["batch"]);
  manual_seed(123);
  nn::CausalAttention ca(3, 2, 6, 0.0);
  check_parameters_exact(ca.parameters(), g, "ca");
  Tensor context_vecs = ca(batch);
  CHECK(context_vecs.shape() == Shape{2, 6, 2});
  check_close(context_vecs, g["ca(batch)"]);
}

TEST_CASE("chapter 3: CausalAttention with dropout 0.5 draws torch's mask after its weights",
          "[chapter3][attention][dropout]") {
  const auto& g = goldens("ch03_04_causal_attention.txt");
  Tape tape;
  TapeScope scope(tape);
  Tensor batch = book_batch();
  manual_seed(123);
  nn::CausalAttention ca(3, 2, 6, 0.5);
  // The mask the layer's dropout draws next, from a copy of the generator: torch's, bit for bit.
  check_exact(keep_mask_from(default_generator(), {2, 6, 6}, 0.5), g["ca_dropout(batch).mask"]);
  CHECK(ca.training());  // modules start in training mode, as torch's
  check_close(ca(batch), g["ca_dropout(batch)"]);
  ca.eval();
  check_close(ca(batch), g["ca_dropout.eval(batch)"]);
  ca.train();
  CHECK(ca.training());
}

// --- §3.6: multi-head attention
// --------------------------------------------------------------------

TEST_CASE("chapter 3 §3.6.1: MultiHeadAttentionWrapper concatenates two CausalAttention heads",
          "[chapter3][attention]") {
  const auto& g = goldens("ch03_05_multihead_attention.txt");
  Tape tape;
  TapeScope scope(tape);
  manual_seed(123);
  nn::MultiHeadAttentionWrapper wrapper(3, 2, 6, 0.0, 2);
  check_parameters_exact(wrapper.parameters(), g, "wrapper");
  Tensor out = wrapper(book_batch());
  CHECK(out.shape() == Shape{2, 6, 4});
  check_close(out, g["wrapper(batch)"]);
}

TEST_CASE("chapter 3 §3.6.2: MultiHeadAttention with weight splits", "[chapter3][attention]") {
  const auto& g = goldens("ch03_05_multihead_attention.txt");
  Tape tape;
  TapeScope scope(tape);
  manual_seed(123);
  nn::MultiHeadAttention mha(3, 2, 6, 0.0, 2);
  CHECK(mha.head_dim() == 1);
  check_parameters_exact(mha.parameters(), g, "mha");
  Tensor out = mha(book_batch());
  CHECK(out.shape() == Shape{2, 6, 2});
  check_close(out, g["mha(batch)"]);
}

TEST_CASE("chapter 3 §3.6.2: the batched matrix product equals the per-head products",
          "[chapter3]") {
  const auto& g = goldens("ch03_05_multihead_attention.txt");
  Tape tape;
  TapeScope scope(tape);
  Tensor a = from_values({1, 2, 3, 4}, g["a"].values);
  check_close(matmul(a, transpose(a, 2, 3)), g["a@a.transpose(2,3)"]);
  Tensor first_head = select(select(a, 0, 0), 0, 0);
  check_close(matmul(first_head, t(first_head)), g["first_res"]);
  Tensor second_head = select(select(a, 0, 0), 0, 1);
  check_close(matmul(second_head, t(second_head)), g["second_res"]);
}

TEST_CASE("chapter 3: MultiHeadAttention with qkv_bias and with dropout 0.5 in training",
          "[chapter3][attention][dropout]") {
  const auto& g = goldens("ch03_05_multihead_attention.txt");
  Tape tape;
  TapeScope scope(tape);
  Tensor batch = book_batch();
  manual_seed(123);
  nn::MultiHeadAttention with_bias(3, 2, 6, 0.0, 2, /*qkv_bias=*/true);
  check_parameters_exact(with_bias.parameters(), g, "mha_bias");
  check_close(with_bias(batch), g["mha_bias(batch)"]);

  manual_seed(123);
  nn::MultiHeadAttention with_dropout(3, 4, 6, 0.5, 2);
  check_parameters_exact(with_dropout.parameters(), g, "mha_dropout");
  check_exact(keep_mask_from(default_generator(), {2, 2, 6, 6}, 0.5), g["mha_dropout(batch).mask"]);
  check_close(with_dropout(batch), g["mha_dropout(batch)"]);
}

// --- the modules' mechanics
// ------------------------------------------------------------------------

TEST_CASE("nn::Linear: shapes, names, forward equals x·Wᵀ + b", "[linear]") {
  Tape tape;
  TapeScope scope(tape);
  manual_seed(1);
  nn::Linear layer(3, 2, true, DType::Float64, "proj");
  CHECK(layer.weight.shape() == Shape{2, 3});
  CHECK(layer.bias.shape() == Shape{2});
  CHECK(layer.weight.name() == "proj.weight");
  CHECK(layer.bias.name() == "proj.bias");
  CHECK(layer.parameters().size() == 2);
  // torch's bound for both: 1/√in_features (up to the last bit of its arithmetic).
  const double bound = 1.0 / std::sqrt(3.0) * (1.0 + 1e-12);
  for (double v : layer.weight.values()) CHECK(std::fabs(v) <= bound);
  for (double v : layer.bias.values()) CHECK(std::fabs(v) <= bound);

  Tensor x = tensor({{1.0, 2.0, 3.0}}, DType::Float64);
  Tensor y = layer(x);
  const auto w = layer.weight.values(), b = layer.bias.values();
  for (int o = 0; o < 2; ++o) {
    const double expected = w[3 * o] + 2 * w[3 * o + 1] + 3 * w[3 * o + 2] + b[o];
    CHECK(y.values()[static_cast<size_t>(o)] == Approx(expected).epsilon(1e-14));
  }
  CHECK_THROWS_WITH(layer(tensor({{1.0, 2.0}}, DType::Float64)),
                    Catch::Contains("Linear \"proj\": input [1, 2] must end in 3 features"));
  nn::Linear no_bias(3, 2, false);
  CHECK_FALSE(no_bias.has_bias());
  CHECK(no_bias.parameters().size() == 1);
}

TEST_CASE("nn attention modules: shape and configuration errors name the module",
          "[attention][errors]") {
  Tape tape;
  TapeScope scope(tape);
  CHECK_THROWS_WITH(
      nn::MultiHeadAttention(3, 5, 6, 0.0, 2),
      Catch::Contains("MultiHeadAttention: d_out 5 must be divisible by num_heads 2"));
  CHECK_THROWS_WITH(nn::CausalAttention(3, 2, 6, 1.5),
                    Catch::Contains("CausalAttention: dropout probability"));
  nn::MultiHeadAttention mha(3, 2, 4, 0.0, 2);
  CHECK_THROWS_WITH(mha(book_inputs()),
                    Catch::Contains("MultiHeadAttention: input [6, 3] must be [B, T, 3]"));
  CHECK_THROWS_WITH(mha(book_batch()), Catch::Contains("has 6 tokens, more than context_length 4"));
  nn::SelfAttentionV1 sa(3, 2);
  CHECK_THROWS_WITH(sa(book_batch()),
                    Catch::Contains("SelfAttention_v1: input [2, 6, 3] must be [T, 3]"));
}

TEST_CASE("nn attention modules: forward records inside module and head scopes", "[attention]") {
  Tape tape;
  TapeScope scope(tape);
  nn::MultiHeadAttentionWrapper wrapper(3, 2, 6, 0.0, 2);
  nn::MultiHeadAttention mha(3, 2, 6, 0.0, 2);
  Tensor batch = book_batch();
  wrapper(batch);
  mha(batch);
  std::set<std::string> paths;
  for (int32_t i = 0; i < tape.size(); ++i) paths.insert(tape.scopes().path(tape.node(i).scope));
  CHECK(paths.count("MultiHeadAttentionWrapper/head 0") == 1);
  CHECK(paths.count("MultiHeadAttentionWrapper/head 1/W_key") == 1);
  CHECK(paths.count("MultiHeadAttention") == 1);
  CHECK(paths.count("MultiHeadAttention/out_proj") == 1);
  // Parameters are named as torch names them.
  CHECK(wrapper.parameters()[3].name() == "heads.1.W_query.weight");
  CHECK(mha.parameters().back().name() == "out_proj.bias");
}

TEST_CASE("nn attention modules: gradients of every parameter pass gradcheck (float64)",
          "[attention][gradcheck]") {
  manual_seed(7);
  nn::MultiHeadAttention mha(3, 4, 6, 0.0, 2, /*qkv_bias=*/true, DType::Float64);
  auto report = gradcheck_parameters(
      "MultiHeadAttention",
      [&]() {
        Tensor one = reshape(book_inputs(DType::Float64), {1, 6, 3});
        return mha(cat({one, one}, 0));
      },
      mha.parameters());
  INFO(report.message);
  CHECK(report.passed);
  CHECK(report.checked > 0);

  nn::SelfAttentionV1 sa(3, 2, DType::Float64);
  auto report_v1 = gradcheck_parameters(
      "SelfAttention_v1", [&]() { return sa(book_inputs(DType::Float64)); }, sa.parameters());
  INFO(report_v1.message);
  CHECK(report_v1.passed);

  nn::MultiHeadAttentionWrapper wrapper(3, 2, 6, 0.0, 2, false, DType::Float64);
  auto report_w = gradcheck_parameters(
      "MultiHeadAttentionWrapper",
      [&]() {
        return wrapper(reshape(book_inputs(DType::Float64), {1, 6, 3}));
      },
      wrapper.parameters());
  INFO(report_w.message);
  CHECK(report_w.passed);
}

// --- the example programs print PyTorch's strings, in the book's order
// -----------------------------

namespace {

// Each printed golden found in the program's output after the previous one: the book's order.
void check_program_prints_goldens(const std::string& program, const std::string& file) {
  int status = -1;
  const std::string output =
      golden::run_program(golden::example_binary(program) + " 2>&1", &status);
  INFO("program: " << golden::example_binary(program)
                   << " (build the examples: cmake --build build)\noutput:\n"
                   << output);
  REQUIRE(status == 0);
  size_t position = 0;
  int shown = 0;
  const auto& g = goldens(file);
  for (const std::string& name : g.names()) {  // the printed tensors' "<name>:str", in order
    if (!name.ends_with(":str")) continue;
    ++shown;
    const std::string& printed = g[name].text;
    const size_t found = output.find(printed, position);
    INFO("expected, after what was already matched, golden \"" << name << "\":\n" << printed);
    CHECK(found != std::string::npos);
    if (found != std::string::npos) position = found + printed.size();
  }
  CHECK(shown > 0);
}

}  // namespace

TEST_CASE("example ch03_01_simplified_attention prints PyTorch's tensors", "[chapter3][examples]") {
  check_program_prints_goldens("ch03_01_simplified_attention", "ch03_01_simplified_attention.txt");
}

TEST_CASE("example ch03_02_trainable_weights prints PyTorch's tensors", "[chapter3][examples]") {
  check_program_prints_goldens("ch03_02_trainable_weights", "ch03_02_trainable_weights.txt");
}

TEST_CASE("example ch03_03_self_attention_classes prints PyTorch's tensors",
          "[chapter3][examples]") {
  check_program_prints_goldens("ch03_03_self_attention_classes",
                               "ch03_03_self_attention_classes.txt");
}

TEST_CASE("example ch03_04_causal_attention prints PyTorch's tensors", "[chapter3][examples]") {
  check_program_prints_goldens("ch03_04_causal_attention", "ch03_04_causal_attention.txt");
}

TEST_CASE("example ch03_05_multihead_attention prints PyTorch's tensors", "[chapter3][examples]") {
  check_program_prints_goldens("ch03_05_multihead_attention", "ch03_05_multihead_attention.txt");
}
