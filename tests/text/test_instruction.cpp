// Chapter 7's instruction data: the book's collate on its toy batch and through a shuffling
// DataLoader, its prompts and response extraction (goldens from the book's code under torch),
// the JSON layout and its errors, and the KJV demonstration set.
#include <catch2/catch.hpp>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/text/dataset.h>
#include <tapegrad/text/instruction.h>
#include <tapegrad/text/kjv.h>
#include <tapegrad/text/tokenizer.h>
#include "tests/goldens.h"
#include "tests/text/kjv_sample.h"

using namespace tapegrad;
using tapegrad::testing::GoldenFile;
using tapegrad::testing::kjv_sample;

namespace {

std::vector<int64_t> values(const Ids& ids) {
  return {ids.values().begin(), ids.values().end()};
}

void require_ids(const Ids& ids, const tapegrad::testing::GoldenTensor& golden) {
  REQUIRE(ids.shape() == golden.shape);
  REQUIRE(values(ids) == golden.ints());
}

}  // namespace

TEST_CASE("custom_collate_fn: the book's toy batch, as torch", "[text][instruction]") {
  const GoldenFile golden("finetune_data", "collate_goldens.txt");
  const std::vector<int64_t> a{0, 1, 2, 3, 4}, b{5, 6}, c{7, 8, 9};
  const std::vector<std::span<const int64_t>> toy{a, b, c};
  Ids inputs, targets;
  for (const auto& [name, allowed] : std::vector<std::pair<std::string, std::optional<int64_t>>>{
           {"none", std::nullopt}, {"2", 2}, {"4", 4}, {"5", 5}}) {
    INFO("allowed_max_length " << name);
    custom_collate_fn(toy, inputs, targets, 50256, -100, allowed);
    require_ids(inputs, golden["toy_" + name + "_inputs"]);
    require_ids(targets, golden["toy_" + name + "_targets"]);
  }
  // Pad ids inside the texts count as pads, as in the book.
  const std::vector<int64_t> p{50256, 3, 50256}, q{4}, r{50256};
  custom_collate_fn(std::vector<std::span<const int64_t>>{p, q, r}, inputs, targets);
  require_ids(inputs, golden["pads_inputs"]);
  require_ids(targets, golden["pads_targets"]);

  CHECK_THROWS_WITH(custom_collate_fn({}, inputs, targets), Catch::Contains("empty"));
  CHECK_THROWS_WITH(custom_collate_fn(toy, inputs, targets, 50256, -100, 0),
                    Catch::Contains("allowed_max_length"));
}

TEST_CASE("BatchSampler + custom_collate_fn: torch's shuffled batches, collated",
          "[text][instruction]") {
  const GoldenFile golden("finetune_data", "collate_goldens.txt");
  // The goldens' token lists, batched by a BatchSampler (what InstructionDataLoader runs) with
  // torch's draws and collated as the book's DataLoader(collate_fn=...) does.
  const std::vector<int64_t> lengths = golden["loader_items_lengths"].ints();
  const std::vector<int64_t> flat = golden["loader_items_flat"].ints();
  std::vector<std::vector<int64_t>> items;
  size_t at = 0;
  for (int64_t n : lengths) {
    items.emplace_back(flat.begin() + static_cast<std::ptrdiff_t>(at),
                       flat.begin() + static_cast<std::ptrdiff_t>(at + static_cast<size_t>(n)));
    at += static_cast<size_t>(n);
  }
  Generator generator(123);
  BatchSampler sampler(static_cast<int64_t>(items.size()), 3, true, false, &generator);
  Ids inputs, targets;
  for (int epoch = 0; epoch < 2; ++epoch) {
    int b = 0;
    for (std::span<const int64_t> indices; sampler.next(indices); ++b) {
      std::vector<std::span<const int64_t>> batch;
      for (int64_t i : indices) batch.emplace_back(items[static_cast<size_t>(i)]);
      custom_collate_fn(batch, inputs, targets, 50256, -100, 6);
      const std::string name = "loader_" + std::to_string(epoch) + "_" + std::to_string(b);
      INFO(name);
      require_ids(inputs, golden[name + "_inputs"]);
      require_ids(targets, golden[name + "_targets"]);
    }
    CHECK(b == 4);
  }
}

TEST_CASE("InstructionDataset and its loader: the training texts, collated",
          "[text][instruction]") {
  ByteTokenizer bytes;
  const std::vector<InstructionEntry> entries{{"Say hi.", "", "hi"}, {"Add.", "1 2", "3"}};
  const InstructionDataset dataset(entries, bytes);
  REQUIRE(dataset.size() == 2);
  const std::string text = format_training_text(entries[1]);
  CHECK(std::string(dataset[1].begin(), dataset[1].end()) == text);
  CHECK_THROWS_WITH(dataset[2], Catch::Contains("index 2"));

  InstructionDataLoader loader(dataset, 2, false, false, nullptr, 1024);
  REQUIRE(loader.size() == 1);
  Ids inputs, targets;
  REQUIRE(loader.next(inputs, targets));
  const int64_t longest =
      static_cast<int64_t>(std::max(format_training_text(entries[0]).size(), text.size()));
  CHECK(inputs.shape() == Shape{2, longest});
  CHECK(targets[longest + static_cast<int64_t>(text.size()) - 1] ==
        50256);  // row 1 ends: one pad kept
  CHECK_FALSE(loader.next(inputs, targets));
}

TEST_CASE("format_input, the training text and extract_response: the book's strings",
          "[text][instruction]") {
  const testing::GoldenFile& g = testing::golden_file("finetune_data/prompts_goldens.txt");
  REQUIRE(g.names().size() == 21);  // 3 entries, 7 strings each
  for (int i = 0; i < 3; ++i) {
    const auto text = [&](const std::string& field) {
      return g["prompt_" + std::to_string(i) + ":" + field].text;
    };
    const InstructionEntry entry{text("instruction"), text("input"), text("output")};
    CHECK(format_input(entry) == text("format_input"));
    CHECK(format_training_text(entry) == text("training_text"));
    CHECK(extract_response(text("generated_text"), format_input(entry)) == text("response"));
  }
  CHECK(extract_response("abc", "abcdef") == "");
}

TEST_CASE("instruction JSON: the book's layout, written and read back", "[text][instruction]") {
  const std::vector<InstructionEntry> entries{{"Translate.", "caf\xC3\xA9", "coffee"},
                                              {"Say \"no\".", "", "no"}};
  const std::vector<std::string> responses{"coffee", "No.\n"};
  const std::string json = instruction_json(entries, responses);
  CHECK(json.starts_with("[\n    {\n        \"instruction\": \"Translate.\",\n"));
  CHECK(json.find("\"input\": \"caf\\u00e9\"") != std::string::npos);  // json.dump's ensure_ascii
  CHECK(json.find("\"model_response\": \"No.\\n\"") != std::string::npos);
  const std::vector<InstructionEntry> back = parse_instruction_json(json);
  REQUIRE(back.size() == 2);
  CHECK(back[0].input == "caf\xC3\xA9");
  CHECK(back[1].instruction == "Say \"no\".");
  CHECK_THROWS_WITH(instruction_json(entries, std::vector<std::string>{"x"}),
                    Catch::Contains("1 responses for 2 entries"));

  const auto split = split_instruction_data(std::vector<InstructionEntry>(1100, entries[0]));
  CHECK(split.train.size() == 935);  // the book's 1100 entries: 935 / 110 / 55
  CHECK(split.test.size() == 110);
  CHECK(split.validation.size() == 55);
}

TEST_CASE("instruction JSON: errors name the entry, or the line and column",
          "[text][instruction]") {
  CHECK_THROWS_WITH(
      parse_instruction_json("[\n  {\"instruction\": \"a\",\n   \"output\": \"b\",}\n]"),
      Catch::Contains("line 3, column 18") && Catch::Contains("malformed JSON"));
  CHECK_THROWS_WITH(parse_instruction_json("[{\"instruction\": \"a\", \"output\": \"b\"},\n"
                                           " {\"instruction\": \"c\", \"input\": \"\"}]"),
                    Catch::Contains("entry 1 has no \"output\""));
  CHECK_THROWS_WITH(parse_instruction_json("[{\"output\": \"b\"}]"),
                    Catch::Contains("entry 0 has no \"instruction\""));
  CHECK_THROWS_WITH(parse_instruction_json("[{\"instruction\": 3, \"output\": \"b\"}]"),
                    Catch::Contains("entry 0's \"instruction\" is number, not a string"));
  CHECK_THROWS_WITH(parse_instruction_json("{\"instruction\": \"a\"}"),
                    Catch::Contains("expected a JSON list"));
  CHECK_THROWS_WITH(parse_instruction_json("[1]"), Catch::Contains("entry 0 is number"));
  CHECK_THROWS_WITH(read_instruction_json("/nonexistent/instruction-data.json"),
                    Catch::Contains("cannot read '/nonexistent/instruction-data.json'"));
  CHECK(parse_instruction_json("[]").empty());
}

TEST_CASE("kjv_instruction_set: a demonstration set from the King James text",
          "[text][instruction]") {
  const std::string text = kjv_sample();
  const std::vector<KjvVerse> verses = parse_kjv_verses(text);
  const std::vector<InstructionEntry> entries = kjv_instruction_set(text, 9, 123, 40);
  REQUIRE(entries.size() == 9);
  std::set<std::string> books;
  for (const KjvVerse& v : verses) books.insert(v.book);
  for (size_t i = 0; i < entries.size(); ++i) {
    const InstructionEntry& e = entries[i];
    INFO("entry " << i);
    bool found = false;
    for (const KjvVerse& v : verses) {
      if (i % 3 == 0) found |= e.input == v.text && e.output == v.book;
      if (i % 3 == 1) found |= e.input + " " + e.output == v.text;
      if (i % 3 == 2) {
        found |= e.input == v.text && e.output == v.book + " " + std::to_string(v.chapter) + ":" +
                                                      std::to_string(v.verse);
      }
    }
    CHECK(found);
  }
  CHECK(entries[0].instruction == "Which book of the Bible is this verse from?");
  CHECK(kjv_instruction_set(text, 9, 123, 40)[4].output == entries[4].output);  // deterministic
  CHECK_THROWS_WITH(kjv_instruction_set(text, 1000), Catch::Contains("1000 entries asked"));
  CHECK_THROWS_WITH(kjv_instruction_set("", 1), Catch::Contains("0 verses"));
}
