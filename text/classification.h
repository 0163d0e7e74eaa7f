// Chapter 6's classification data: labelled texts in the SMS Spam Collection's tab-separated
// layout, the book's class balancing and 70/10/20 split (pandas' draws), the padded SpamDataset,
// and a task this machine has the text for: which Testament a King James verse comes from.
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

struct LabeledText {
  int64_t label;  // the index of its class name
  std::string text;
};

// The classes of the book's spam task: "ham" is 0, "spam" 1 (its .map({"ham": 0, "spam": 1})).
inline const std::vector<std::string>& spam_classes() {
  static const std::vector<std::string> classes{"ham", "spam"};
  return classes;
}
// The Testament task: "old" is 0, "new" 1.
inline const std::vector<std::string>& testament_classes() {
  static const std::vector<std::string> classes{"old", "new"};
  return classes;
}

// Parses `label \t text` lines as the book's pd.read_csv(path, sep="\t", header=None,
// names=["Label", "Text"]) does: blank lines are skipped; a field opening with '"' is quoted
// (up to the closing '"', which may be lines later; '""' inside is one '"'; text after the
// closing quote is kept), a '"' elsewhere is text. Every label must be one of `classes` (its
// index becomes the label). `source` names the text in messages. Throws Error with line and
// column (1-based, columns in bytes) for a record without a tab, one with more than two fields,
// an unterminated quote, or a label outside the classes.
std::vector<LabeledText> parse_labeled_tsv(std::string_view tsv,
                                           const std::vector<std::string>& classes,
                                           const std::string& source = "the text");
std::vector<LabeledText> read_labeled_tsv(const std::filesystem::path& path,
                                          const std::vector<std::string>& classes);
// The layout parse_labeled_tsv reads: one `label \t text` line each, fields holding a tab, a
// newline or opening with '"' quoted as pandas' to_csv would ('"' doubled). Throws Error for a
// label outside the classes.
std::string labeled_tsv(std::span<const LabeledText> rows, const std::vector<std::string>& classes);

// numpy's legacy np.random.RandomState(seed).permutation(n) (MT19937 seeded as init_genrand,
// Fisher-Yates from the end with numpy's masked rejection draws), bit-exact: what pandas'
// DataFrame.sample(n, random_state=seed) takes the first rows of
// (RandomState.choice(len, n, replace=False) is permutation(len)[:n]).
std::vector<int64_t> numpy_permutation(int64_t n, uint32_t seed);

// The book's create_balanced_dataset, for any number of classes: every class is cut to
// `per_class` rows (nullopt: the smallest class's count, the book's num_spam); a class with more
// is sampled as df[label == c].sample(per_class, random_state=seed) does, one with exactly
// per_class keeps its rows in order; the classes follow one another in class order, as the
// book's pd.concat([ham_subset, spam]). Throws Error naming a class with fewer rows.
std::vector<LabeledText> create_balanced_dataset(std::span<const LabeledText> rows,
                                                 int64_t num_classes,
                                                 std::optional<int64_t> per_class = std::nullopt,
                                                 uint32_t seed = 123);

// The book's random_split: df.sample(frac=1, random_state=seed), then the first
// int(n * train_frac) rows train, the next int(n * validation_frac) validate, the rest test.
struct LabeledSplit {
  std::vector<LabeledText> train, validation, test;
};
LabeledSplit random_split(std::span<const LabeledText> rows, double train_frac,
                          double validation_frac, uint32_t seed = 123);

// The book's SpamDataset: each text tokenized, cut to max_length when one is given, and padded
// with pad_token_id to max_length (nullopt: the longest text, the book's max_length=None).
class SpamDataset {
 public:
  SpamDataset(std::span<const LabeledText> rows, const Tokenizer& tokenizer,
              std::optional<int64_t> max_length = std::nullopt, int64_t pad_token_id = 50256);
  int64_t size() const { return static_cast<int64_t>(labels_.size()); }
  int64_t max_length() const { return max_length_; }
  // Throw Error naming the index when it is out of range.
  std::span<const int64_t> encoded(int64_t index) const;  // [max_length]
  int64_t label(int64_t index) const;

 private:
  int64_t max_length_ = 0;
  std::vector<int64_t> ids_;  // [size, max_length]
  std::vector<int64_t> labels_;
};

// DataLoader(SpamDataset, batch_size, shuffle, drop_last) with torch's draws (see BatchSampler):
// inputs [B, max_length], targets the labels [B].
class ClassificationDataLoader final : public BatchLoader {
 public:
  // The dataset and generator must outlive the loader.
  ClassificationDataLoader(const SpamDataset& dataset, int64_t batch_size, bool shuffle,
                           bool drop_last, Generator* generator = nullptr);
  bool next(Ids& inputs, Ids& targets) override;
  BatchSampler& sampler() override { return sampler_; }
  const BatchSampler& sampler() const override { return sampler_; }

 private:
  const SpamDataset* dataset_;
  BatchSampler sampler_;
  std::vector<int64_t> input_buffer_, target_buffer_;
};

// The Testament task from the text tools/kjv_text.sh writes: every verse labelled old (0) or new
// (1), balanced to per_class verses each (create_balanced_dataset with that seed; the New
// Testament's 7957 verses are the smaller class).
std::vector<LabeledText> kjv_testament_dataset(std::string_view kjv_text, int64_t per_class = 747,
                                               uint32_t seed = 123);

}  // namespace tapegrad
