// Chapter 7's instruction data: the Alpaca prompt, the instruction-data.json layout, the padded
// collate with ignore_index targets, response extraction, and a demonstration set from the KJV.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <tapegrad/graph/ids.h>
#include <tapegrad/graph/random.h>
#include <tapegrad/text/dataset.h>
#include <tapegrad/text/tokenizer.h>

namespace tapegrad {

// One entry of the book's instruction-data.json: {"instruction", "input", "output"} (input may be
// empty or absent; other keys are ignored).
struct InstructionEntry {
  std::string instruction;
  std::string input;
  std::string output;
};

// The book's format_input: "Below is an instruction that describes a task. Write a response that
// appropriately completes the request.\n\n### Instruction:\n{instruction}", then
// "\n\n### Input:\n{input}" when the input is not empty.
std::string format_input(const InstructionEntry& entry);
// What the book's InstructionDataset tokenizes: format_input(entry) +
// "\n\n### Response:\n{output}".
std::string format_training_text(const InstructionEntry& entry);

// Parses the book's layout: a JSON list of objects whose "instruction" and "output" are strings
// ("input" a string or absent). `source` names the text in messages. Throws Error: malformed JSON
// gives line and column (1-based, columns in bytes) and nlohmann's reason; a wrong layout names
// the entry index and the key ("entry 3 has no \"output\"").
std::vector<InstructionEntry> parse_instruction_json(std::string_view json_text,
                                                     const std::string& source = "the JSON text");
// Reads and parses a file; an unreadable file throws Error naming it.
std::vector<InstructionEntry> read_instruction_json(const std::filesystem::path& path);

// The entries as the book writes test_data after generation: a JSON list of objects with
// instruction, input, output and, when responses is not empty (it must then have one per
// entry), "model_response"; json.dump(indent=4)'s layout and ASCII escapes. The text.
std::string instruction_json(std::span<const InstructionEntry> entries,
                             std::span<const std::string> responses = {});

// The book's split of instruction-data.json: the first int(0.85 n) entries train, the next
// int(0.1 n) test, the rest validate (no shuffling).
struct InstructionSplit {
  std::vector<InstructionEntry> train, test, validation;
};
InstructionSplit split_instruction_data(std::span<const InstructionEntry> entries);

// The book's InstructionDataset: each entry's format_training_text, tokenized once.
class InstructionDataset {
 public:
  InstructionDataset(std::span<const InstructionEntry> entries, const Tokenizer& tokenizer);
  int64_t size() const { return static_cast<int64_t>(encoded_texts_.size()); }
  // Throws Error naming the index when it is out of range.
  std::span<const int64_t> operator[](int64_t index) const;

 private:
  std::vector<std::vector<int64_t>> encoded_texts_;
};

// The book's custom_collate_fn. Each item gets one pad_token_id appended, then all are padded with
// pad_token_id to the longest item + 1; inputs drop the last token, targets the first; in each
// target row every pad_token_id after the first becomes ignore_index (so does any pad id the text
// itself contained after it, as in the book); then both are cut to allowed_max_length (none: no
// cut, the book's None). inputs and targets become [B, T]. Throws Error when the batch is empty
// or allowed_max_length < 1.
void custom_collate_fn(std::span<const std::span<const int64_t>> batch, Ids& inputs, Ids& targets,
                       int64_t pad_token_id = 50256, int64_t ignore_index = -100,
                       std::optional<int64_t> allowed_max_length = std::nullopt);

// DataLoader(InstructionDataset, batch_size, collate_fn=custom_collate_fn, shuffle, drop_last)
// with torch's draws (see BatchSampler).
class InstructionDataLoader final : public BatchLoader {
 public:
  // The dataset and generator must outlive the loader. Throws Error when batch_size < 1 or the
  // dataset is empty.
  InstructionDataLoader(const InstructionDataset& dataset, int64_t batch_size, bool shuffle,
                        bool drop_last, Generator* generator = nullptr,
                        std::optional<int64_t> allowed_max_length = std::nullopt,
                        int64_t pad_token_id = 50256, int64_t ignore_index = -100);
  // inputs and targets: [B, T], custom_collate_fn's.
  bool next(Ids& inputs, Ids& targets) override;
  BatchSampler& sampler() override { return sampler_; }
  const BatchSampler& sampler() const override { return sampler_; }

 private:
  const InstructionDataset* dataset_;
  BatchSampler sampler_;
  std::optional<int64_t> allowed_max_length_;
  int64_t pad_token_id_, ignore_index_;
  std::vector<std::span<const int64_t>> items_;
};

// The book's extraction: generated_text[len(input_text):].replace("### Response:", "").strip().
// generated_text is the decoded prompt + continuation (starting with input_text).
std::string extract_response(std::string_view generated_text, std::string_view input_text);

// A demonstration instruction set in the book's layout, from the King James Bible text that
// tools/kjv_text.sh writes (Debian's bible-kjv): `count` verses drawn with a Generator(seed)
// (randperm over the verses that are at most max_words long), alternating three tasks:
//   "Which book of the Bible is this verse from?"  input: the verse, output: the book's name;
//   "Complete the verse from the King James Bible." input: its first half, output: the rest;
//   "Give the chapter and verse of this passage."   input: the verse, output: "Book C:V".
// Throws Error when the text holds no verse or fewer than count short enough.
std::vector<InstructionEntry> kjv_instruction_set(std::string_view kjv_text, int64_t count,
                                                  uint64_t seed = 123, int64_t max_words = 24);

}  // namespace tapegrad
