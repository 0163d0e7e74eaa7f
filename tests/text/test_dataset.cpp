// GPTDataset windows, torch's randperm and DataLoader batches (goldens from PyTorch), bad input.
#include <catch2/catch.hpp>

#include <array>
#include <optional>
#include <string>
#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/text/dataset.h>
#include <tapegrad/text/tokenizer.h>
#include "tests/goldens.h"

using namespace tapegrad;

namespace {

const testing::GoldenFile& goldens() {
  return testing::golden_file("text/dataset_goldens.txt");
}

// The names of the records that start with `prefix`, in file order.
std::vector<std::string> names_from(const std::string& prefix) {
  std::vector<std::string> out;
  for (const std::string& name : goldens().names()) {
    if (name.rfind(prefix, 0) == 0) out.push_back(name);
  }
  return out;
}

std::vector<int64_t> token_ids(int64_t n) {  // as make_dataset_goldens.py makes them
  std::vector<int64_t> ids;
  for (int64_t i = 0; i < n; ++i) ids.push_back((i * 7919 + 13) % 50257);
  return ids;
}

float next_rand(Generator& g) {  // torch.rand(()) in float32
  float value = 0;
  g.uniform(&value, 1);
  return value;
}

}  // namespace

TEST_CASE("GPTDataset: the book's sliding windows", "[text][dataset]") {
  // 10 ids, max_length 4, stride 3: windows at 0 and 3 (range(0, 6, 3)); the book's loop leaves
  // the last tokens without a window.
  GPTDataset ds({10, 11, 12, 13, 14, 15, 16, 17, 18, 19}, 4, 3);
  REQUIRE(ds.size() == 2);
  CHECK(std::vector<int64_t>(ds.input(1).begin(), ds.input(1).end()) ==
        std::vector<int64_t>{13, 14, 15, 16});
  CHECK(std::vector<int64_t>(ds.target(1).begin(), ds.target(1).end()) ==
        std::vector<int64_t>{14, 15, 16, 17});
  CHECK(GPTDataset({1, 2, 3, 4, 5}, 4, 1).size() == 1);  // exactly one window
  CHECK(GPTDataset(std::string("hello world"), ByteTokenizer(), 4, 4).size() == 2);
  CHECK_THROWS_WITH(ds.input(2), Catch::Contains("window 2"));
}

TEST_CASE("GPTDataset and DataLoader: bad input names the option", "[text][dataset]") {
  ByteTokenizer bytes;
  CHECK_THROWS_WITH(GPTDataset(std::string(""), bytes, 4, 1), Catch::Contains("empty"));
  CHECK_THROWS_WITH(GPTDataset(std::vector<int64_t>{}, 4, 1), Catch::Contains("empty"));
  CHECK_THROWS_WITH(
      GPTDataset(std::string("abcd"), bytes, 4, 1),
      Catch::Contains("shorter than one window") && Catch::Contains("max_length + 1 = 5"));
  CHECK_THROWS_WITH(GPTDataset(std::string("abcdefgh"), bytes, 4, 0), Catch::Contains("stride"));
  CHECK_THROWS_WITH(GPTDataset(std::string("abcdefgh"), bytes, 0, 1),
                    Catch::Contains("max_length"));
  GPTDataset ds(std::string("abcdefgh"), bytes, 4, 1);
  CHECK_THROWS_WITH(DataLoader(ds, 0, true, true), Catch::Contains("batch_size"));
  CHECK_THROWS_WITH(train_val_split("abc", 1.5), Catch::Contains("train_ratio"));
  CHECK_THROWS_WITH(randperm(-1, default_generator()), Catch::Contains("randperm"));
}

TEST_CASE("randperm equals torch.randperm(n, generator=g)", "[text][dataset]") {
  int checked = 0;
  for (const std::string& name : names_from("randperm:")) {  // randperm:<n>:<seed>
    const size_t colon = name.find(':', 9);
    const int64_t n = std::stoll(name.substr(9, colon - 9));
    Generator g(std::stoull(name.substr(colon + 1)));
    INFO(name);
    const Ids perm = randperm(n, g);
    CHECK(std::vector<int64_t>(perm.values().begin(), perm.values().end()) ==
          goldens()[name].ints());
    ++checked;
  }
  CHECK(checked == 24);
}

TEST_CASE("DataLoader yields torch's DataLoader batches and draws", "[text][dataset]") {
  int loaders = 0;
  for (const std::string& config_name : names_from("loader:")) {
    const std::string suffix = ":config";
    if (!config_name.ends_with(suffix)) continue;
    const std::string prefix = config_name.substr(0, config_name.size() - suffix.size()) + ":";
    INFO(prefix);
    const std::vector<int64_t> config = goldens()[config_name].ints();
    REQUIRE(config.size() == 9);
    const auto [n_ids, max_length, stride, batch, shuffle, drop_last, epochs, gseed, global_seed] =
        std::array<int64_t, 9>{config[0], config[1], config[2], config[3], config[4],
                               config[5], config[6], config[7], config[8]};
    manual_seed(static_cast<uint64_t>(global_seed));
    GPTDataset ds(token_ids(n_ids), max_length, stride);
    std::optional<Generator> g;
    if (gseed >= 0) g.emplace(static_cast<uint64_t>(gseed));
    DataLoader loader(ds, batch, shuffle != 0, drop_last != 0, g ? &*g : nullptr);
    Ids inputs, targets;
    const std::vector<int64_t> epoch_of = goldens()[prefix + "epochs"].ints();
    size_t b = 0;
    for (int64_t epoch = 0; epoch < epochs; ++epoch) {
      loader.begin_epoch();
      int64_t batches = 0;
      while (loader.next(inputs, targets)) {
        const std::string batch_name = prefix + "batch:" + std::to_string(b);
        INFO(batch_name);
        REQUIRE(b < epoch_of.size());
        CHECK(epoch_of[b] == epoch);
        const auto& want = goldens()[batch_name];  // [2, B, T]: inputs, then targets
        CHECK(want.shape == Shape{2, inputs.size(0), inputs.size(1)});
        std::vector<int64_t> got(inputs.values().begin(), inputs.values().end());
        got.insert(got.end(), targets.values().begin(), targets.values().end());
        CHECK(got == want.ints());
        ++b;
        ++batches;
      }
      CHECK(batches == loader.size());
    }
    CHECK(b == epoch_of.size());
    // The generators are where torch's are: the loader drew exactly what torch's drew.
    const std::vector<double>& after = goldens()[prefix + "after"].values;
    REQUIRE(after.size() == (g ? 2u : 1u));
    CHECK(next_rand(default_generator()) == static_cast<float>(after[0]));
    if (g) CHECK(next_rand(*g) == static_cast<float>(after[1]));
    ++loaders;
  }
  CHECK(loaders == 6);
}

TEST_CASE("DataLoader: steady-state batches reuse their storage", "[text][dataset]") {
  GPTDataset ds(token_ids(500), 16, 16);
  Generator g(1);
  DataLoader loader(ds, 4, true, true, &g);
  Ids inputs, targets;
  REQUIRE(loader.next(inputs, targets));
  const int64_t* in_data = inputs.values().data();
  const int64_t* target_data = targets.values().data();
  int batches = 1;
  for (int epoch = 0; epoch < 2; ++epoch) {
    while (loader.next(inputs, targets)) {
      CHECK(inputs.values().data() == in_data);
      CHECK(targets.values().data() == target_data);
      CHECK(inputs.shape() == Shape{4, 16});
      ++batches;
    }
  }
  CHECK(batches == 2 * loader.size());
}

TEST_CASE("train_val_split: the book's split by characters", "[text][dataset]") {
  // Python: text[:int(0.9 * len(text))]; len counts code points ("é" is one, two bytes).
  const std::string text = "héllo wörld";              // 11 characters, 13 bytes
  const TextSplit split = train_val_split(text, 0.9);  // int(9.9) = 9 characters
  CHECK(split.train == "héllo wör");
  CHECK(split.validation == "ld");
  CHECK(train_val_split(text, 0.0).train.empty());
  CHECK(train_val_split(text, 1.0).validation.empty());
  CHECK(std::string(train_val_split(text, 0.5).train) == "héllo");  // int(5.5) = 5
}
