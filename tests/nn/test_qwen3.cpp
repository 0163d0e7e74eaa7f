// Tests for nn/qwen3.cpp: the book's Qwen3Model, its weights, logits and parameter counts.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include <tapegrad/graph/random.h>
#include <tapegrad/nn/qwen3.h>
#include <tapegrad/optim/optim.h>
#include "tests/goldens.h"

using namespace tapegrad;

namespace test_qwen3 {

// make_qwen3_goldens.py's QWEN3_CONFIG_TINY.
constexpr nn::Qwen3Config kTiny{97, 16, 32, 4, 2, 48, 8, true, 2, 1000000.0};

std::string joined_names(const nn::Module& model) {
  std::string out;
  for (const auto& [name, p] : model.named_parameters()) out += (out.empty() ? "" : " ") + name;
  return out;
}

}  // namespace test_qwen3

TEST_CASE("Qwen3Model: torch's parameter names, and manual_seed(123) gives its weights",
          "[qwen3]") {
  using test_qwen3::kTiny;
  const testing::GoldenFile golden("qwen3", "qwen3.txt");
  manual_seed(123);
  nn::Qwen3Model model(kTiny);
  CHECK(test_qwen3::joined_names(model) == golden["tiny.param_names"].text);
  const nn::StateDict params = model.named_parameters();
  for (const char* name :
       {"tok_emb.weight", "trf_blocks.0.att.W_key.weight", "trf_blocks.1.ff.fc3.weight",
        "trf_blocks.1.att.q_norm.scale", "out_head.weight"}) {
    INFO(name);
    CHECK(params.at(name).values() == golden[std::string("tiny.param.") + name].values);
  }
}

TEST_CASE("Qwen3Model: logits of the small config within 1e-5 of the book's under torch",
          "[qwen3][goldens]") {
  using test_qwen3::kTiny;
  const testing::GoldenFile golden("qwen3", "qwen3.txt");
  manual_seed(123);
  nn::Qwen3Model model(kTiny);
  const Ids in_idx(golden["tiny.in_idx"].shape, golden["tiny.in_idx"].ints());
  Tape tape;
  TapeScope scope(tape);
  const Tensor logits = model(in_idx);
  CHECK(logits.shape() == Shape{2, 6, 97});
  const std::vector<double> got = logits.values();
  const std::vector<double>& want = golden["tiny.logits"].values;
  REQUIRE(got.size() == want.size());
  double scale = 0.0;
  for (double v : want) scale = std::max(scale, std::abs(v));
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("logit " << i << ": " << got[i] << " vs torch " << want[i]);
    REQUIRE(std::abs(got[i] - want[i]) <= 1e-5 * scale);
  }
  // The logits train: every weight gets a gradient.
  const Tensor loss = sum(mul(logits, logits));
  loss.backward();
  for (const auto& [name, p] : model.named_parameters()) {
    INFO(name);
    CHECK(p.has_grad());
  }
}

TEST_CASE("Qwen3Model: parameter counts, the 0.6B config's equal to the book's", "[qwen3]") {
  using test_qwen3::kTiny;
  const testing::GoldenFile golden("qwen3", "qwen3.txt");
  manual_seed(1);
  const nn::Qwen3Model model(kTiny);
  CHECK(model.num_parameters() == nn::Qwen3Model::count_parameters(kTiny));
  CHECK(model.num_parameters() == static_cast<int64_t>(golden["tiny.num_parameters"].values[0]));
  // 751,632,384 in the book's notebook; counted from the shapes (building it takes 3 GB).
  CHECK(nn::Qwen3Model::count_parameters(nn::QWEN_CONFIG_06_B) ==
        static_cast<int64_t>(golden["qwen3_06b.num_parameters"].values[0]));
  nn::Qwen3Config no_qk_norm = kTiny;
  no_qk_norm.qk_norm = false;
  CHECK(nn::Qwen3Model(no_qk_norm).num_parameters() ==
        nn::Qwen3Model::count_parameters(no_qk_norm));
}

TEST_CASE("Qwen3Model: bad configs and ids are named", "[qwen3][errors]") {
  using test_qwen3::kTiny;
  nn::Qwen3Config bad = kTiny;
  bad.n_kv_groups = 3;
  CHECK_THROWS_WITH(nn::Qwen3Model(bad),
                    "Qwen3Config: n_heads 4 must be divisible by n_kv_groups 3");
  bad = kTiny;
  bad.head_dim = 7;
  CHECK_THROWS_WITH(nn::Qwen3Model(bad),
                    "Qwen3Config: the head dim 7 must be even (RoPE rotates halves)");
  bad = kTiny;
  bad.hidden_dim = 0;
  CHECK_THROWS_WITH(nn::Qwen3Model(bad), "Qwen3Config: hidden_dim 0 must be positive");
  manual_seed(1);
  const nn::Qwen3Model model(kTiny);
  Tape tape;
  TapeScope scope(tape);
  CHECK_THROWS_WITH(model(Ids::from_rows({{1, 97}})),
                    "Qwen3Model: in_idx [1, 2]: id 97 at element 1 is outside the vocabulary "
                    "[0, 97)");
  CHECK_THROWS_WITH(model(Ids(Shape{1, 17}, std::vector<int64_t>(17, 0))),
                    "Qwen3Model: in_idx [1, 17] has 17 tokens, more than context_length 16");
  CHECK_THROWS_WITH(model(Ids::from_row({1, 2})),
                    "Qwen3Model: in_idx [2] must be [B, T] (batch, tokens)");
}

TEST_CASE("Qwen3Model: 20 AdamW steps give the book's model's losses under torch within 1e-5",
          "[qwen3][goldens][train]") {
  using test_qwen3::kTiny;
  const testing::GoldenFile golden("qwen3", "qwen3.txt");
  manual_seed(123);
  nn::Qwen3Model model(kTiny);
  model.train();
  AdamW optimizer(model.parameters(), AdamWOptions{.lr = 5e-4, .weight_decay = 0.1});
  const Ids inputs(golden["train.inputs"].shape, golden["train.inputs"].ints());
  const std::vector<int64_t> targets = golden["train.targets"].ints();
  const std::vector<double>& want = golden["train.losses"].values;
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
  CHECK(want.back() < want.front());  // it learns
}
