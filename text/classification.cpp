// Chapter 6's classification data: labelled texts in the SMS Spam Collection's tab-separated
// layout, the book's class balancing and 70/10/20 split (pandas' draws), the padded SpamDataset,
// and a task this machine has the text for: which Testament a King James verse comes from.
#include <tapegrad/text/classification.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <random>

#include <tapegrad/graph/error.h>
#include <tapegrad/text/kjv.h>

namespace tapegrad {
namespace {

// pandas' C tokenizer, cut to what a two-column tab-separated file needs: the states of
// pandas/_libs/src/parser/tokenizer.c (START_FIELD, IN_FIELD, IN_QUOTED_FIELD,
// QUOTE_IN_QUOTED_FIELD) with '\t' as the delimiter and '"' as the quote.
struct Record {
  std::vector<std::string> fields;
  int64_t line, column;  // where the record starts
  std::vector<std::pair<int64_t, int64_t>> field_starts;
};

// "labelled data SOURCE: line L, column C": where every error of this file points.
std::string position(const std::string& source, int64_t line, int64_t column) {
  return "labelled data " + source + ": line " + std::to_string(line) + ", column " +
         std::to_string(column);
}

std::vector<Record> tokenize_tsv(std::string_view text, const std::string& source) {
  enum class State { kStartRecord, kStartField, kInField, kInQuoted, kQuoteInQuoted };
  std::vector<Record> records;
  State state = State::kStartRecord;
  Record record;
  std::string field;
  int64_t line = 1, column = 1, quote_line = 0, quote_column = 0;
  auto end_field = [&] { record.fields.push_back(std::move(field)), field.clear(); };
  auto end_record = [&] {
    end_field();
    records.push_back(std::move(record));
    record = Record{};
  };
  // Outside quotes a tab ends the field and a newline the record; true when `c` did either.
  auto end_at = [&](char c) {
    if (c == '\t') {
      end_field();
      state = State::kStartField;
    } else if (c == '\n') {
      end_record();
      state = State::kStartRecord;
    }
    return c == '\t' || c == '\n';
  };
  for (size_t i = 0; i <= text.size(); ++i) {
    const bool eof = i == text.size();
    char c = eof ? '\n' : text[i];
    if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      ++column;
      continue;  // "\r\n" ends a line like "\n"
    }
    if (state == State::kStartRecord) {
      if (eof) break;
      if (c == '\n') {  // skip_blank_lines
        ++line, column = 1;
        continue;
      }
      record.line = line, record.column = column;
      state = State::kStartField;
    }
    if (state == State::kStartField) {
      record.field_starts.emplace_back(line, column);
      if (c == '"' && !eof) {
        state = State::kInQuoted, quote_line = line, quote_column = column;
      } else if (!end_at(c)) {
        field += c;
        state = State::kInField;
      }
    } else if (state == State::kInField) {
      if (!end_at(c)) field += c;
    } else if (state == State::kInQuoted) {
      if (eof) {
        throw Error(position(source, quote_line, quote_column) +
                    ": the quote opened here is never closed");
      }
      if (c == '"') {
        state = State::kQuoteInQuoted;
      } else {
        field += c;
      }
    } else {  // kQuoteInQuoted
      if (c == '"' && !eof) {
        field += '"';
        state = State::kInQuoted;
      } else if (!end_at(c)) {
        field += c;
        state = State::kInField;
      }
    }
    if (c == '\n') {
      ++line, column = 1;
    } else {
      ++column;
    }
  }
  return records;
}

// Bytes of `text` that make parse_labeled_tsv keep a field as it is only when quoted.
bool needs_quotes(const std::string& text) {
  return text.find_first_of("\t\n\r") != std::string::npos || (!text.empty() && text[0] == '"');
}

int64_t class_index(const std::string& label, const std::vector<std::string>& classes) {
  const auto it = std::find(classes.begin(), classes.end(), label);
  return it == classes.end() ? -1 : static_cast<int64_t>(it - classes.begin());
}

std::string class_list(const std::vector<std::string>& classes) {
  std::string out;
  for (const std::string& c : classes) out += (out.empty() ? "" : ", ") + ("'" + c + "'");
  return out;
}

}  // namespace

std::vector<LabeledText> parse_labeled_tsv(std::string_view tsv,
                                           const std::vector<std::string>& classes,
                                           const std::string& source) {
  std::vector<LabeledText> rows;
  for (Record& r : tokenize_tsv(tsv, source)) {
    const std::string where = position(source, r.line, r.column);
    if (r.fields.size() < 2) throw Error(where + ": expected 'label<TAB>text', found no tab");
    if (r.fields.size() > 2) {
      const auto [l, c] = r.field_starts[2];
      throw Error(position(source, l, c - 1) + ": a second tab (expected 2 fields, saw " +
                  std::to_string(r.fields.size()) + ")");
    }
    const int64_t label = class_index(r.fields[0], classes);
    if (label < 0) {
      throw Error(where + ": label '" + r.fields[0] + "' is not one of the classes " +
                  class_list(classes));
    }
    rows.push_back({label, std::move(r.fields[1])});
  }
  return rows;
}

std::vector<LabeledText> read_labeled_tsv(const std::filesystem::path& path,
                                          const std::vector<std::string>& classes) {
  const std::string text = read_text_file(path, "labelled data");
  return parse_labeled_tsv(text, classes, "'" + path.string() + "'");
}

std::string labeled_tsv(std::span<const LabeledText> rows,
                        const std::vector<std::string>& classes) {
  std::string out;
  for (const LabeledText& row : rows) {
    if (row.label < 0 || row.label >= static_cast<int64_t>(classes.size())) {
      throw Error("labeled_tsv: label " + std::to_string(row.label) + " outside the " +
                  std::to_string(classes.size()) + " classes");
    }
    out += classes[static_cast<size_t>(row.label)];
    out += '\t';
    if (needs_quotes(row.text)) {
      out += '"';
      for (char c : row.text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
      out += '"';
    } else {
      out += row.text;
    }
    out += '\n';
  }
  return out;
}

std::vector<int64_t> numpy_permutation(int64_t n, uint32_t seed) {
  if (n < 0) throw Error("numpy_permutation: n must be >= 0, got " + std::to_string(n));
  std::mt19937 mt(seed);  // numpy's legacy seeding of an int is MT19937's init_genrand
  std::vector<int64_t> perm(static_cast<size_t>(n));
  std::iota(perm.begin(), perm.end(), int64_t{0});
  for (int64_t i = n - 1; i >= 1; --i) {
    // numpy's random_interval(max = i): draws masked to the smallest 2^k - 1 >= i until <= i.
    auto max = static_cast<uint64_t>(i);
    uint64_t mask = max;
    for (int shift = 1; shift <= 32; shift *= 2) mask |= mask >> shift;
    uint64_t j;
    if (max <= 0xffffffffULL) {
      do j = mt() & mask;
      while (j > max);
    } else {
      do j = ((static_cast<uint64_t>(mt()) << 32) | mt()) & mask;
      while (j > max);
    }
    std::swap(perm[static_cast<size_t>(i)], perm[static_cast<size_t>(j)]);
  }
  return perm;
}

std::vector<LabeledText> create_balanced_dataset(std::span<const LabeledText> rows,
                                                 int64_t num_classes,
                                                 std::optional<int64_t> per_class, uint32_t seed) {
  if (num_classes < 1) throw Error("create_balanced_dataset: num_classes must be >= 1");
  std::vector<std::vector<const LabeledText*>> by_class(static_cast<size_t>(num_classes));
  for (const LabeledText& row : rows) {
    if (row.label < 0 || row.label >= num_classes) {
      throw Error("create_balanced_dataset: label " + std::to_string(row.label) + " outside [0, " +
                  std::to_string(num_classes) + ")");
    }
    by_class[static_cast<size_t>(row.label)].push_back(&row);
  }
  int64_t n = per_class.value_or(std::numeric_limits<int64_t>::max());
  if (!per_class) {
    for (const auto& c : by_class) n = std::min(n, static_cast<int64_t>(c.size()));
  }
  if (n < 1) throw Error("create_balanced_dataset: a class has no rows");
  std::vector<LabeledText> out;
  out.reserve(static_cast<size_t>(n * num_classes));
  for (size_t c = 0; c < by_class.size(); ++c) {
    const auto& members = by_class[c];
    const auto size = static_cast<int64_t>(members.size());
    if (size < n) {
      throw Error("create_balanced_dataset: class " + std::to_string(c) + " has " +
                  std::to_string(size) + " rows, fewer than " + std::to_string(n));
    }
    if (size == n) {
      for (const LabeledText* row : members) out.push_back(*row);
    } else {
      const std::vector<int64_t> perm = numpy_permutation(size, seed);
      for (int64_t i = 0; i < n; ++i)
        out.push_back(*members[static_cast<size_t>(perm[static_cast<size_t>(i)])]);
    }
  }
  return out;
}

LabeledSplit random_split(std::span<const LabeledText> rows, double train_frac,
                          double validation_frac, uint32_t seed) {
  if (!(train_frac >= 0 && validation_frac >= 0 && train_frac + validation_frac <= 1)) {
    throw Error("random_split: train_frac and validation_frac must be >= 0 with a sum <= 1");
  }
  const auto n = static_cast<int64_t>(rows.size());
  const std::vector<int64_t> perm = numpy_permutation(n, seed);
  const auto train_end = static_cast<int64_t>(static_cast<double>(n) * train_frac);
  const int64_t validation_end =
      train_end + static_cast<int64_t>(static_cast<double>(n) * validation_frac);
  LabeledSplit split;
  for (int64_t i = 0; i < n; ++i) {
    const LabeledText& row = rows[static_cast<size_t>(perm[static_cast<size_t>(i)])];
    (i < train_end        ? split.train
     : i < validation_end ? split.validation
                          : split.test)
        .push_back(row);
  }
  return split;
}

SpamDataset::SpamDataset(std::span<const LabeledText> rows, const Tokenizer& tokenizer,
                         std::optional<int64_t> max_length, int64_t pad_token_id) {
  if (max_length && *max_length < 1) {
    throw Error("SpamDataset: max_length must be >= 1, got " + std::to_string(*max_length));
  }
  std::vector<std::vector<int64_t>> encoded;
  encoded.reserve(rows.size());
  int64_t longest = 0;
  for (const LabeledText& row : rows) {
    encoded.push_back(tokenizer.encode(row.text));
    longest = std::max(longest, static_cast<int64_t>(encoded.back().size()));
    labels_.push_back(row.label);
  }
  max_length_ = max_length.value_or(longest);
  ids_.assign(rows.size() * static_cast<size_t>(max_length_), pad_token_id);
  for (size_t i = 0; i < encoded.size(); ++i) {
    const size_t n = std::min(encoded[i].size(), static_cast<size_t>(max_length_));
    std::copy_n(encoded[i].begin(), n,
                ids_.begin() + static_cast<std::ptrdiff_t>(i * static_cast<size_t>(max_length_)));
  }
}

std::span<const int64_t> SpamDataset::encoded(int64_t index) const {
  if (index < 0 || index >= size()) {
    throw Error("SpamDataset: index " + std::to_string(index) + " outside [0, " +
                std::to_string(size()) + ")");
  }
  return std::span<const int64_t>(ids_).subspan(static_cast<size_t>(index * max_length_),
                                                static_cast<size_t>(max_length_));
}

int64_t SpamDataset::label(int64_t index) const {
  encoded(index);  // the range check
  return labels_[static_cast<size_t>(index)];
}

ClassificationDataLoader::ClassificationDataLoader(const SpamDataset& dataset, int64_t batch_size,
                                                   bool shuffle, bool drop_last,
                                                   Generator* generator)
    : dataset_(&dataset),
      sampler_(dataset.size(), batch_size, shuffle, drop_last, generator, "text") {}

bool ClassificationDataLoader::next(Ids& inputs, Ids& targets) {
  std::span<const int64_t> indices;
  if (!sampler_.next(indices)) return false;
  const auto b = static_cast<int64_t>(indices.size());
  const int64_t t = dataset_->max_length();
  input_buffer_.resize(static_cast<size_t>(b * t));
  target_buffer_.resize(static_cast<size_t>(b));
  for (int64_t i = 0; i < b; ++i) {
    const auto row = dataset_->encoded(indices[static_cast<size_t>(i)]);
    std::copy(row.begin(), row.end(), input_buffer_.begin() + i * t);
    target_buffer_[static_cast<size_t>(i)] = dataset_->label(indices[static_cast<size_t>(i)]);
  }
  inputs.assign(Shape{b, t}, input_buffer_);  // [B, T]
  targets.assign(Shape{b}, target_buffer_);   // [B]
  return true;
}

std::vector<LabeledText> kjv_testament_dataset(std::string_view kjv_text, int64_t per_class,
                                               uint32_t seed) {
  std::vector<LabeledText> rows;
  for (KjvVerse& v : parse_kjv_verses(kjv_text))
    rows.push_back({v.new_testament ? 1 : 0, std::move(v.text)});
  if (rows.empty()) throw Error("kjv_testament_dataset: the text holds no verse");
  return create_balanced_dataset(rows, 2, per_class, seed);
}

}  // namespace tapegrad
