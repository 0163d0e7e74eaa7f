// Chapter 7's instruction data: the Alpaca prompt, the instruction-data.json layout, the padded
// collate with ignore_index targets, response extraction, and a demonstration set from the KJV.
#include <tapegrad/text/instruction.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>

#include <tapegrad/graph/error.h>
#include <tapegrad/text/kjv.h>

namespace tapegrad {
namespace {

using ordered_json = nlohmann::ordered_json;

// 1-based line and column (in bytes) of the byte at 0-based offset `at`.
std::pair<int64_t, int64_t> line_column(std::string_view text, size_t at) {
  at = std::min(at, text.size());
  int64_t line = 1, column = 1;
  for (size_t i = 0; i < at; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}

// nlohmann's message without its "[json.exception...] parse error at line L, column C: " prefix.
std::string parse_reason(const std::string& what) {
  const size_t colon = what.find(": ");
  return colon == std::string::npos ? what : what.substr(colon + 2);
}

const std::string& string_field(const ordered_json& entry, size_t index, const char* key,
                                const std::string& source, bool required) {
  static const std::string empty;
  const auto it = entry.find(key);
  if (it == entry.end()) {
    if (!required) return empty;
    throw Error("instruction data " + source + ": entry " + std::to_string(index) + " has no \"" +
                key + "\"");
  }
  if (!it->is_string()) {
    throw Error("instruction data " + source + ": entry " + std::to_string(index) + "'s \"" + key +
                "\" is " + it->type_name() + ", not a string");
  }
  return it->get_ref<const std::string&>();
}

bool python_space(char c) {  // str.strip()'s ASCII whitespace
  return c == ' ' || (c >= '\t' && c <= '\r') || (c >= '\x1c' && c <= '\x1f');
}

}  // namespace

std::string format_input(const InstructionEntry& entry) {
  std::string text =
      "Below is an instruction that describes a task. "
      "Write a response that appropriately completes the request."
      "\n\n### Instruction:\n" +
      entry.instruction;
  if (!entry.input.empty()) text += "\n\n### Input:\n" + entry.input;
  return text;
}

std::string format_training_text(const InstructionEntry& entry) {
  return format_input(entry) + "\n\n### Response:\n" + entry.output;
}

std::vector<InstructionEntry> parse_instruction_json(std::string_view json_text,
                                                     const std::string& source) {
  ordered_json data;
  try {
    data = ordered_json::parse(json_text.begin(), json_text.end());
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is the 1-based position of the byte the parser stopped at.
    const auto [line, column] = line_column(json_text, e.byte == 0 ? 0 : e.byte - 1);
    throw Error("instruction data " + source + ": malformed JSON at line " + std::to_string(line) +
                ", column " + std::to_string(column) + ": " + parse_reason(e.what()));
  }
  if (!data.is_array()) {
    throw Error("instruction data " + source + ": expected a JSON list of entries, got " +
                std::string(data.type_name()));
  }
  std::vector<InstructionEntry> entries;
  entries.reserve(data.size());
  for (size_t i = 0; i < data.size(); ++i) {
    const ordered_json& entry = data[i];
    if (!entry.is_object()) {
      throw Error("instruction data " + source + ": entry " + std::to_string(i) + " is " +
                  entry.type_name() + ", not an object");
    }
    entries.push_back({string_field(entry, i, "instruction", source, true),
                       string_field(entry, i, "input", source, false),
                       string_field(entry, i, "output", source, true)});
  }
  return entries;
}

std::vector<InstructionEntry> read_instruction_json(const std::filesystem::path& path) {
  const std::string text = read_text_file(path, "instruction data");
  return parse_instruction_json(text, "'" + path.string() + "'");
}

std::string instruction_json(std::span<const InstructionEntry> entries,
                             std::span<const std::string> responses) {
  if (!responses.empty() && responses.size() != entries.size()) {
    throw Error("instruction_json: " + std::to_string(responses.size()) + " responses for " +
                std::to_string(entries.size()) + " entries");
  }
  ordered_json list = ordered_json::array();
  for (size_t i = 0; i < entries.size(); ++i) {
    ordered_json entry;
    entry["instruction"] = entries[i].instruction;
    entry["input"] = entries[i].input;
    entry["output"] = entries[i].output;
    if (!responses.empty()) entry["model_response"] = responses[i];
    list.push_back(std::move(entry));
  }
  // json.dump(indent=4) escapes non-ASCII (ensure_ascii); bytes that are not UTF-8 become U+FFFD,
  // as tiktoken's decode() would have made them.
  return list.dump(4, ' ', true, nlohmann::json::error_handler_t::replace);
}

InstructionSplit split_instruction_data(std::span<const InstructionEntry> entries) {
  const size_t n = entries.size();
  const auto train = static_cast<size_t>(static_cast<double>(n) * 0.85);
  const auto test = static_cast<size_t>(static_cast<double>(n) * 0.1);
  InstructionSplit split;
  split.train.assign(entries.begin(), entries.begin() + static_cast<std::ptrdiff_t>(train));
  split.test.assign(entries.begin() + static_cast<std::ptrdiff_t>(train),
                    entries.begin() + static_cast<std::ptrdiff_t>(train + test));
  split.validation.assign(entries.begin() + static_cast<std::ptrdiff_t>(train + test),
                          entries.end());
  return split;
}

InstructionDataset::InstructionDataset(std::span<const InstructionEntry> entries,
                                       const Tokenizer& tokenizer) {
  encoded_texts_.reserve(entries.size());
  for (const InstructionEntry& entry : entries) {
    encoded_texts_.push_back(tokenizer.encode(format_training_text(entry)));
  }
}

std::span<const int64_t> InstructionDataset::operator[](int64_t index) const {
  if (index < 0 || index >= size()) {
    throw Error("InstructionDataset: index " + std::to_string(index) + " outside [0, " +
                std::to_string(size()) + ")");
  }
  return encoded_texts_[static_cast<size_t>(index)];
}

void custom_collate_fn(std::span<const std::span<const int64_t>> batch, Ids& inputs, Ids& targets,
                       int64_t pad_token_id, int64_t ignore_index,
                       std::optional<int64_t> allowed_max_length) {
  if (batch.empty()) throw Error("custom_collate_fn: the batch is empty");
  if (allowed_max_length && *allowed_max_length < 1) {
    throw Error("custom_collate_fn: allowed_max_length must be >= 1, got " +
                std::to_string(*allowed_max_length));
  }
  size_t batch_max_length = 0;  // max(len(item) + 1): each item gains one <|endoftext|>
  for (const auto& item : batch) batch_max_length = std::max(batch_max_length, item.size() + 1);
  const size_t row = batch_max_length - 1;  // inputs drop the last token, targets the first
  const size_t t =
      allowed_max_length ? std::min(row, static_cast<size_t>(*allowed_max_length)) : row;
  std::vector<int64_t> in(batch.size() * t), out(batch.size() * t);
  std::vector<int64_t> padded(batch_max_length);
  for (size_t b = 0; b < batch.size(); ++b) {
    std::fill(std::copy(batch[b].begin(), batch[b].end(), padded.begin()), padded.end(),
              pad_token_id);
    bool first_pad = true;  // targets: the first pad stays a target, later pads are ignored
    for (size_t j = 0; j < t; ++j) {
      in[b * t + j] = padded[j];
      int64_t target = padded[j + 1];
      if (target == pad_token_id) {
        if (!first_pad) target = ignore_index;
        first_pad = false;
      }
      out[b * t + j] = target;
    }
  }
  const auto rows = static_cast<int64_t>(batch.size());
  inputs.assign(Shape{rows, static_cast<int64_t>(t)}, in);    // [B, T]
  targets.assign(Shape{rows, static_cast<int64_t>(t)}, out);  // [B, T]
}

InstructionDataLoader::InstructionDataLoader(const InstructionDataset& dataset, int64_t batch_size,
                                             bool shuffle, bool drop_last, Generator* generator,
                                             std::optional<int64_t> allowed_max_length,
                                             int64_t pad_token_id, int64_t ignore_index)
    : dataset_(&dataset),
      sampler_(dataset.size(), batch_size, shuffle, drop_last, generator, "instruction"),
      allowed_max_length_(allowed_max_length),
      pad_token_id_(pad_token_id),
      ignore_index_(ignore_index) {}

bool InstructionDataLoader::next(Ids& inputs, Ids& targets) {
  std::span<const int64_t> indices;
  if (!sampler_.next(indices)) return false;
  items_.clear();
  for (const int64_t i : indices) items_.push_back((*dataset_)[i]);
  custom_collate_fn(items_, inputs, targets, pad_token_id_, ignore_index_, allowed_max_length_);
  return true;
}

std::string extract_response(std::string_view generated_text, std::string_view input_text) {
  std::string rest(generated_text.substr(std::min(input_text.size(), generated_text.size())));
  static constexpr std::string_view kMarker = "### Response:";
  for (size_t at = rest.find(kMarker); at != std::string::npos; at = rest.find(kMarker, at)) {
    rest.erase(at, kMarker.size());
  }
  size_t begin = 0, end = rest.size();
  while (begin < end && python_space(rest[begin])) ++begin;
  while (end > begin && python_space(rest[end - 1])) --end;
  return rest.substr(begin, end - begin);
}

std::vector<InstructionEntry> kjv_instruction_set(std::string_view kjv_text, int64_t count,
                                                  uint64_t seed, int64_t max_words) {
  if (count < 1)
    throw Error("kjv_instruction_set: count must be >= 1, got " + std::to_string(count));
  const std::vector<KjvVerse> verses = parse_kjv_verses(kjv_text);
  std::vector<const KjvVerse*> short_verses;
  for (const KjvVerse& v : verses) {
    const auto words = std::count(v.text.begin(), v.text.end(), ' ') + 1;
    if (words >= 4 && words <= max_words) short_verses.push_back(&v);
  }
  if (static_cast<int64_t>(short_verses.size()) < count) {
    throw Error("kjv_instruction_set: " + std::to_string(count) + " entries asked, the text has " +
                std::to_string(short_verses.size()) + " verses of 4 to " +
                std::to_string(max_words) + " words");
  }
  Generator generator(seed);
  const Ids order = randperm(static_cast<int64_t>(short_verses.size()), generator);
  std::vector<InstructionEntry> entries;
  entries.reserve(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    const KjvVerse& v = *short_verses[static_cast<size_t>(order[i])];
    switch (i % 3) {
      case 0:
        entries.push_back({"Which book of the Bible is this verse from?", v.text, v.book});
        break;
      case 1: {  // cut at the space nearest the middle word
        size_t cut = v.text.size() / 2;
        const size_t after = v.text.find(' ', cut);
        cut = after == std::string::npos ? v.text.rfind(' ', cut) : after;
        entries.push_back({"Complete the verse from the King James Bible.", v.text.substr(0, cut),
                           v.text.substr(cut + 1)});
        break;
      }
      default:
        entries.push_back(
            {"Give the chapter and verse of this passage.", v.text,
             v.book + " " + std::to_string(v.chapter) + ":" + std::to_string(v.verse)});
    }
  }
  return entries;
}

}  // namespace tapegrad
