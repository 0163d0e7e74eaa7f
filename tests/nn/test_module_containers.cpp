// Tests for nn/module.h's containers: ModuleDict (torch's "key.weight" names, lookups, bad keys)
// and ModuleList over modules of mixed classes.
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include <tapegrad/tapegrad.h>

using namespace tapegrad;

namespace test_module_containers {

std::vector<std::string> keys_of(const nn::StateDict& sd) {
  std::vector<std::string> keys;
  for (const auto& [key, p] : sd) keys.push_back(key);
  return keys;
}

}  // namespace test_module_containers

TEST_CASE("ModuleDict: torch's state_dict names, in the order given, and lookups",
          "[nn][containers]") {
  manual_seed(1);
  nn::ModuleDict dict({{"encoder", std::make_shared<nn::Linear>(4, 3)},
                       {"act", std::make_shared<nn::ReLU>()},
                       {"head", std::make_shared<nn::Linear>(3, 2, false)}});
  CHECK(test_module_containers::keys_of(dict.state_dict()) ==
        std::vector<std::string>{"encoder.weight", "encoder.bias", "head.weight"});
  CHECK(dict.size() == 3);
  CHECK(dict.keys() == std::vector<std::string>{"encoder", "act", "head"});
  CHECK(dict.contains("act"));
  CHECK(!dict.contains("decoder"));
  nn::Linear& encoder = dict.at<nn::Linear>("encoder");
  CHECK(encoder.weight.name() == "encoder.weight");
  CHECK(&dict["encoder"] == &encoder);
  CHECK(&dict.child("head") == &dict["head"]);

  Tape tape;
  TapeScope scope(tape);
  const Tensor y =
      dict.at<nn::Linear>("head")(dict.at<nn::ReLU>("act")(encoder(rand(Shape{5, 4}))));
  CHECK(y.shape() == Shape{5, 2});

  // A second dict of the same structure loads the first's values by those names.
  nn::ModuleDict other({{"encoder", std::make_shared<nn::Linear>(4, 3)},
                        {"act", std::make_shared<nn::ReLU>()},
                        {"head", std::make_shared<nn::Linear>(3, 2, false)}});
  other.load_state_dict(dict.state_dict());
  CHECK(other.at<nn::Linear>("encoder").weight.values() == encoder.weight.values());

  CHECK_THROWS_WITH(dict["decoder"], Catch::Contains("ModuleDict: no key \"decoder\"") &&
                                         Catch::Contains("\"encoder\", \"act\", \"head\""));
  CHECK_THROWS_WITH(dict.at<nn::Linear>("act"),
                    Catch::Contains("\"act\" is a ReLU") && Catch::Contains("ModuleDict"));
}

TEST_CASE("ModuleDict: an empty, dotted or repeated key, or a null module, is an Error",
          "[nn][containers]") {
  const auto relu = std::make_shared<nn::ReLU>();
  CHECK_THROWS_WITH(nn::ModuleDict({{"", relu}}), Catch::Contains("a key is empty"));
  CHECK_THROWS_WITH(nn::ModuleDict({{"a.b", relu}}),
                    Catch::Contains("key \"a.b\"") && Catch::Contains("'.'"));
  CHECK_THROWS_WITH(nn::ModuleDict({{"a", relu}, {"a", std::make_shared<nn::Tanh>()}}),
                    Catch::Contains("key \"a\" is given twice"));
  CHECK_THROWS_WITH(nn::ModuleDict({{"a", nullptr}}), Catch::Contains("null module"));
}

TEST_CASE("ModuleList<Module>: modules of mixed classes, named \"0\", \"1\", ...",
          "[nn][containers]") {
  std::vector<std::unique_ptr<nn::Module>> modules;
  modules.push_back(std::make_unique<nn::Linear>(4, 3));
  modules.push_back(std::make_unique<nn::GELU>());
  modules.push_back(std::make_unique<nn::LayerNorm>(3));
  nn::ModuleList<> list(std::move(modules));
  CHECK(test_module_containers::keys_of(list.state_dict()) ==
        std::vector<std::string>{"0.weight", "0.bias", "2.scale", "2.shift"});
  CHECK(list.at<nn::LayerNorm>(2).scale.name() == "2.scale");
  CHECK_THROWS_AS(list.at<nn::Linear>(1), std::bad_cast);
}
