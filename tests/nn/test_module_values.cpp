// Modules are values: a user's struct holding modules lives in a std::vector that grows, and a
// moved module keeps its names, parameters, buffers and registration; state_dict().at(name).
#include <catch2/catch.hpp>
#include <string>
#include <utility>
#include <vector>

#include <tapegrad/tapegrad.h>

using namespace tapegrad;

namespace {

// What a user writes first: a block of library modules held by value.
struct Block {
  nn::MultiHeadAttention att;
  nn::Linear fc;
  Block(int64_t d, int64_t context_length, int64_t heads)
      : att(d, d, context_length, 0.0, heads), fc(d, d) {}
  Tensor operator()(const Tensor& x) const { return fc(att(x)); }  // [B, T, d] -> [B, T, d]
  std::vector<Parameter> parameters() const {
    std::vector<Parameter> out = att.parameters();
    for (const Parameter& p : fc.parameters()) out.push_back(p);
    return out;
  }
};

// Each registered parameter is the module's own member (same storage), in torch's order.
void check_registration(const nn::MultiHeadAttention& att) {
  const nn::StateDict sd = att.state_dict();
  CHECK(sd.at("W_query.weight") == att.W_query.weight);
  CHECK(sd.at("W_key.weight") == att.W_key.weight);
  CHECK(sd.at("W_value.weight") == att.W_value.weight);
  CHECK(sd.at("out_proj.weight") == att.out_proj.weight);
  CHECK(sd.at("out_proj.bias") == att.out_proj.bias);
  CHECK(sd.at("mask").shape() == Shape{8, 8});
  std::vector<std::string> keys;
  for (const auto& [name, p] : sd) keys.push_back(name);
  // torch's order: the module's own buffers, then its children's parameters.
  CHECK(keys == std::vector<std::string>{"mask", "W_query.weight", "W_key.weight", "W_value.weight",
                                         "out_proj.weight", "out_proj.bias"});
}

}  // namespace

TEST_CASE("modules as values: a vector of blocks grows, trains with AdamW", "[module][values]") {
  set_num_threads(1);
  manual_seed(123);
  std::vector<Block> blocks;
  blocks.emplace_back(16, 8, 4);
  const size_t first_capacity = blocks.capacity();
  const Parameter first_weight = blocks[0].att.W_query.weight;
  const std::string first_name = first_weight.name();
  while (blocks.size() <= first_capacity + 2) blocks.emplace_back(16, 8, 4);
  REQUIRE(blocks.capacity() > first_capacity);  // every block moved at least once

  // The first block moved with its weights, names and registration.
  CHECK(blocks[0].att.W_query.weight == first_weight);
  CHECK(blocks[0].att.W_query.weight.name() == first_name);
  for (const Block& b : blocks) check_registration(b.att);

  std::vector<Parameter> params;
  for (const Block& b : blocks) {
    for (const Parameter& p : b.parameters()) params.push_back(p);
  }
  AdamW optimizer(params, {.lr = 1e-2});
  std::vector<float> x0(2 * 8 * 16), target0(2 * 8 * 16);
  default_generator().normal(x0.data(), static_cast<int64_t>(x0.size()));
  default_generator().normal(target0.data(), static_cast<int64_t>(target0.size()));
  std::vector<double> losses;
  for (int step = 0; step < 5; ++step) {
    Tape tape;
    TapeScope scope(tape);
    Tensor h = from_data(Shape{2, 8, 16}, x0);
    for (const Block& b : blocks) h = b(h);  // [2, 8, 16]
    Tensor loss = mse_loss(h, from_data(Shape{2, 8, 16}, target0));
    losses.push_back(loss.item());
    optimizer.zero_grad();
    tape.backward(loss);
    if (step == 0) {
      for (const Parameter& p : params) {
        INFO(p.name());
        REQUIRE(p.has_grad());
        bool nonzero = false;
        for (double g : p.grad_values()) nonzero = nonzero || g != 0.0;
        CHECK(nonzero);
      }
    }
    optimizer.step();
  }
  CHECK(losses.back() < losses.front());
}

TEST_CASE("modules as values: move construction and assignment keep the registration",
          "[module][values]") {
  const nn::GPTConfig cfg{50, 8, 8, 2, 2, 0.0, true};
  manual_seed(123);
  nn::GPTModel a(cfg);
  const nn::StateDict before = a.state_dict();
  nn::GPTModel b(std::move(a));
  const nn::StateDict moved = b.state_dict();
  REQUIRE(moved.size() == before.size());
  for (size_t i = 0; i < moved.size(); ++i) {
    CHECK(moved[i].first == before[i].first);
    if (!before[i].first.ends_with("mask")) CHECK(moved[i].second == before[i].second);
  }
  CHECK(b.state_dict().at("trf_blocks.0.att.W_query.weight") ==
        b.named_parameters().at("trf_blocks.0.att.W_query.weight"));
  CHECK(b.state_dict().at("out_head.weight") == b.out_head.weight);
  CHECK(b.out_head.weight.name() == "out_head.weight");

  manual_seed(7);
  nn::GPTModel c(cfg);
  c = std::move(b);  // value semantics: c is now the first model
  CHECK(c.state_dict().at("tok_emb.weight") == before.at("tok_emb.weight"));
  CHECK(c.tok_emb.weight == before.at("tok_emb.weight"));

  std::vector<nn::GPTModel> models;
  for (int i = 0; i < 3; ++i) models.emplace_back(cfg);
  for (const nn::GPTModel& m : models) {
    CHECK(m.state_dict().at("final_norm.scale") == m.final_norm.scale);
    CHECK(m.num_parameters() == c.num_parameters());
  }
}

TEST_CASE("StateDict::at names a missing key and the closest ones", "[module][values]") {
  const nn::GPTConfig cfg{50, 8, 8, 2, 2, 0.0, false};
  manual_seed(123);
  nn::GPTModel model(cfg);
  const nn::StateDict sd = model.state_dict();
  CHECK(sd.at(0).first == "tok_emb.weight");  // the vector's own at(index) still works
  CHECK(sd.contains("trf_blocks.1.ff.layers.2.bias"));
  CHECK_FALSE(sd.contains("trf_blocks.1.ff.layers.2.biass"));
  CHECK_THROWS_WITH(sd.at("trf_blocks.0.att.W_qeury.weight"),
                    Catch::Contains("no key \"trf_blocks.0.att.W_qeury.weight\"") &&
                        Catch::Contains("\"trf_blocks.0.att.W_query.weight\""));
}

TEST_CASE("a member of another class cannot be registered", "[module][values]") {
  struct Other : nn::Module {
    nn::Linear fc{2, 3};
    Parameter scale = Parameter::from_values({1}, {1.0});
    Other() : nn::Module("Other") {}
  };
  struct Holder : nn::Module {
    std::shared_ptr<nn::Linear> heap = std::make_shared<nn::Linear>(2, 3);
    nn::Linear member{2, 3};
    Holder() : nn::Module("Holder") {
      register_module("member", &Holder::member);
      // A pointer-to-member of another module class names no member of this one.
      CHECK_THROWS_WITH(register_module("fc", &Other::fc), Catch::Contains("not a member"));
      CHECK_THROWS_WITH(register_parameter("scale", &Other::scale),
                        Catch::Contains("parameter \"scale\" is not a member"));
      register_module("heap", heap);  // held elsewhere, owned through the shared_ptr: fine
    }
  };
  Holder h;
  Holder moved(std::move(h));
  const nn::StateDict sd = moved.state_dict();
  CHECK(sd.size() == 4);
  CHECK(sd.at("member.weight") == moved.member.weight);
  CHECK(sd.at("heap.weight") == moved.heap->weight);
}
