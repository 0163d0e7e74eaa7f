// Tests for nn/llama3.cpp: the book's Llama3Model, its weights, rope tables, logits, training
// and parameter counts.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include <tapegrad/graph/random.h>
#include <tapegrad/nn/llama3.h>
#include <tapegrad/optim/optim.h>
#include "tests/goldens.h"

using namespace tapegrad;

namespace test_llama3 {

// make_qwen3_goldens.py's LLAMA3_CONFIG_TINY.
constexpr nn::Llama3Config kTiny{97, 16, 64, 32, 4, 2, 48, 2, 500000.0, {32.0, 1.0, 4.0, 8192}};

std::string joined_names(const nn::Module& model) {
  std::string out;
  for (const auto& [name, p] : model.named_parameters()) out += (out.empty() ? "" : " ") + name;
  return out;
}

void require_relative(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  REQUIRE(got.size() == want.size());
  double scale = 0.0;
  for (double v : want) scale = std::max(scale, std::abs(v));
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": " << got[i] << " vs torch " << want[i]);
    REQUIRE(std::abs(got[i] - want[i]) <= tol * scale);
  }
}

}  // namespace test_llama3

TEST_CASE("Llama3Model: torch's names and weights after manual_seed(123), its rope tables",
          "[llama3][goldens]") {
  using test_llama3::kTiny;
  const testing::GoldenFile golden("qwen3", "qwen3.txt");
  manual_seed(123);
  const nn::Llama3Model model(kTiny);
  CHECK(test_llama3::joined_names(model) == golden["llama_tiny.param_names"].text);
  const nn::StateDict params = model.named_parameters();
  // W_key and W_value are drawn before W_query, as the book's __init__ creates them.
  for (const char* name : {"trf_blocks.0.att.W_key.weight", "trf_blocks.1.att.W_query.weight"}) {
    INFO(name);
    CHECK(params.at(name).values() == golden[std::string("llama_tiny.param.") + name].values);
  }
  // rescale_theta (500000 · 16 / 64) and the smoothing: torch's buffers bit for bit.
  CHECK(model.rope_theta() == 125000.0);
  const RopeTables tables = compute_rope_params(8, model.rope_theta(), 16, kTiny.rope_freq);
  CHECK(std::vector<double>(tables.cos.begin(), tables.cos.end()) ==
        golden["llama_tiny.cos"].values);
  CHECK(std::vector<double>(tables.sin.begin(), tables.sin.end()) ==
        golden["llama_tiny.sin"].values);
}

TEST_CASE("Llama3Model: logits and 20 AdamW steps' losses within 1e-5 of the book's",
          "[llama3][goldens][train]") {
  using test_llama3::kTiny;
  const testing::GoldenFile golden("qwen3", "qwen3.txt");
  {
    manual_seed(123);
    const nn::Llama3Model model(kTiny);
    Tape tape;
    TapeScope scope(tape);
    const Ids in_idx(golden["llama_tiny.in_idx"].shape, golden["llama_tiny.in_idx"].ints());
    const Tensor logits = model(in_idx);
    CHECK(logits.shape() == Shape{2, 6, 97});
    test_llama3::require_relative(logits.values(), golden["llama_tiny.logits"].values, 1e-5);
  }
  manual_seed(123);
  nn::Llama3Model model(kTiny);
  AdamW optimizer(model.parameters(), AdamWOptions{.lr = 5e-4, .weight_decay = 0.1});
  const Ids inputs(golden["train.inputs"].shape, golden["train.inputs"].ints());
  const std::vector<int64_t> targets = golden["train.targets"].ints();
  const std::vector<double>& want = golden["llama_tiny.train_losses"].values;
  Tape tape;
  TapeScope scope(tape);
  for (size_t step = 0; step < want.size(); ++step) {
    tape.reset();
    optimizer.zero_grad();
    Tensor loss = cross_entropy(flatten(model(inputs), 0, 1), targets);  // []
    loss.backward();
    optimizer.step();
    INFO("step " << step << ": loss " << loss.item() << " vs torch " << want[step]);
    REQUIRE(std::abs(loss.item() - want[step]) <= 1e-5 * std::abs(want[step]));
  }
}

TEST_CASE("Llama3Model: parameter counts, Llama 3.2 1B's equal to the book's", "[llama3]") {
  using test_llama3::kTiny;
  const testing::GoldenFile golden("qwen3", "qwen3.txt");
  manual_seed(1);
  const nn::Llama3Model model(kTiny);
  CHECK(model.num_parameters() == nn::Llama3Model::count_parameters(kTiny));
  // 1,498,482,688 in the book's notebook; counted from the shapes.
  CHECK(nn::Llama3Model::count_parameters(nn::LLAMA32_CONFIG_1B) ==
        static_cast<int64_t>(golden["llama32_1b.num_parameters"].values[0]));
}

TEST_CASE("Llama3Model: bad configs and ids are named", "[llama3][errors]") {
  using test_llama3::kTiny;
  nn::Llama3Config bad = kTiny;
  bad.n_heads = 3;
  CHECK_THROWS_WITH(nn::Llama3Model(bad),
                    "Llama3Config: emb_dim 32 must be divisible by n_heads 3");
  bad = kTiny;
  bad.n_kv_groups = 3;
  CHECK_THROWS_WITH(nn::Llama3Model(bad),
                    "Llama3Config: n_heads 4 must be divisible by n_kv_groups 3");
  bad = kTiny;
  bad.orig_context_length = 0;
  CHECK_THROWS_WITH(nn::Llama3Model(bad), "Llama3Config: orig_context_length 0 must be positive");
  manual_seed(1);
  const nn::Llama3Model model(kTiny);
  Tape tape;
  TapeScope scope(tape);
  CHECK_THROWS_WITH(model(Ids::from_rows({{-1, 2}})),
                    "Llama3Model: in_idx [1, 2]: id -1 at element 0 is outside the vocabulary "
                    "[0, 97)");
}
