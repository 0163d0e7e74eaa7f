// The book's GPTDatasetV1 (sliding windows over token ids) and a DataLoader yielding [B, T] Ids.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/graph/ids.h>
#include <tapegrad/graph/random.h>
#include <tapegrad/text/tokenizer.h>

namespace tapegrad {

// Chapter 2's GPTDatasetV1: window i starts at token i * stride; its input is max_length tokens
// and its target the same window shifted by one token. The windows are those of
// range(0, len(token_ids) - max_length, stride), so the last tokens may belong to no window, as
// in the book. The ids are stored once; windows are views into them.
class GPTDataset {
 public:
  // Throws Error when the ids are empty, max_length < 1, stride < 1, or there are fewer than
  // max_length + 1 ids (no complete window), naming the option.
  GPTDataset(std::vector<int64_t> token_ids, int64_t max_length, int64_t stride);
  // tokenizer.encode(text) (with <|endoftext|> allowed), then as above; an empty text throws.
  GPTDataset(std::string_view text, const Tokenizer& tokenizer, int64_t max_length, int64_t stride);

  int64_t size() const { return windows_; }  // len(dataset)
  int64_t max_length() const { return max_length_; }
  int64_t stride() const { return stride_; }
  std::span<const int64_t> input(int64_t i) const;   // [max_length]
  std::span<const int64_t> target(int64_t i) const;  // [max_length], input(i) shifted by one
  const std::vector<int64_t>& token_ids() const { return token_ids_; }

 private:
  std::vector<int64_t> token_ids_;
  int64_t max_length_ = 0;
  int64_t stride_ = 0;
  int64_t windows_ = 0;
};

// The index side of torch.utils.data.DataLoader(dataset, batch_size, shuffle, drop_last,
// generator) with num_workers=0, down to its random draws, so a PyTorch script can replay the same
// batches over any dataset of n items (windows, instruction entries, labelled texts):
//  - begin_epoch() is iter(loader): it draws the loader's base seed, one random64() from the
//    generator (torch draws it whether or not it shuffles, and never uses it without workers).
//  - the first next() of an epoch draws the order, torch's RandomSampler: with a generator,
//    randperm(n, generator); without one (nullptr, torch's generator=None), a seed
//    random64() % 2^63 from default_generator(), then randperm from a fresh Generator(seed).
//  - when an epoch is read past its last index (the next() that returns false, or the one that
//    returns the short last batch when drop_last is false), the sampler draws one more randperm
//    of n from its generator and discards it (torch 1.13's RandomSampler ends with
//    `randperm(n)[:num_samples % n]`). Stopping an epoch early skips that draw, as in torch.
// The loaders below gather and collate the items of each batch of indices.
class BatchSampler {
 public:
  // Throws Error when batch_size < 1 or n < 1 (`what` names the items in the message). The
  // generator must outlive the sampler.
  BatchSampler(int64_t n, int64_t batch_size, bool shuffle, bool drop_last, Generator* generator,
               const char* what = "item");

  int64_t size() const;  // len(loader): batches per epoch
  int64_t n() const { return n_; }
  int64_t batch_size() const { return batch_size_; }
  void begin_epoch();
  // The next batch's item indices (a view valid until the next call; fewer than batch_size only
  // for the last batch when drop_last is false); false at the end of the epoch. Calls
  // begin_epoch() itself when no epoch has begun, or the last one has ended.
  bool next(std::span<const int64_t>& indices);
  // This epoch's order of item indices (empty before its first next()), and how many of them
  // were handed out.
  const std::vector<int64_t>& order() const { return order_; }
  int64_t position() const { return position_; }
  // Whether this epoch's trailing sampler draw was made (see above).
  bool sampler_exhausted() const { return sampler_exhausted_; }
  // Continues an epoch saved from order(), position() and sampler_exhausted() (a checkpoint's
  // data position): the next next() hands out the batch that would have followed. Throws Error,
  // changing nothing, unless order is a permutation of 0..n-1 (or empty: the epoch's first batch
  // is still to come), 0 <= position <= its size, and, for a shuffling sampler, the sampler has
  // a generator (torch's generator=None sampler cannot be restored).
  void restore_epoch(std::vector<int64_t> order, int64_t position, bool sampler_exhausted);

 private:
  Generator& sampler_generator();

  int64_t n_;
  int64_t batch_size_;
  bool shuffle_;
  bool drop_last_;
  Generator* generator_;                  // nullptr: torch's generator=None
  const char* what_;                      // "window", "entry", ...: for messages
  std::optional<Generator> own_sampler_;  // the sampler's Generator(seed) when generator_ is null
  std::vector<int64_t> order_;
  int64_t position_ = 0;
  bool in_epoch_ = false;
  bool sampler_exhausted_ = false;
};

// What the training loops (train/) read: a loader of (inputs, targets) batches over a
// BatchSampler. DataLoader below (windows of text), InstructionDataLoader (text/instruction.h)
// and ClassificationDataLoader (text/classification.h) are the three.
class BatchLoader {
 public:
  virtual ~BatchLoader() = default;
  int64_t size() const { return sampler().size(); }  // len(loader)
  int64_t batch_size() const { return sampler().batch_size(); }
  void begin_epoch() { sampler().begin_epoch(); }
  // Fills inputs and targets with the next batch (B < batch_size only for the last batch when
  // drop_last is false); false at the end of the epoch.
  virtual bool next(Ids& inputs, Ids& targets) = 0;
  virtual BatchSampler& sampler() = 0;
  virtual const BatchSampler& sampler() const = 0;
};

// torch.utils.data.DataLoader over a GPTDataset (see BatchSampler for its draws). Batches are
// refilled in place (Ids::assign), so steady-state steps allocate nothing.
class DataLoader final : public BatchLoader {
 public:
  // Throws Error when batch_size < 1 or the dataset has no window. The dataset and generator
  // must outlive the loader.
  DataLoader(const GPTDataset& dataset, int64_t batch_size, bool shuffle, bool drop_last,
             Generator* generator = nullptr);

  // inputs and targets: [B, T], the windows and the windows shifted by one token.
  bool next(Ids& inputs, Ids& targets) override;
  BatchSampler& sampler() override { return sampler_; }
  const BatchSampler& sampler() const override { return sampler_; }
  const std::vector<int64_t>& order() const { return sampler_.order(); }
  int64_t position() const { return sampler_.position(); }
  bool sampler_exhausted() const { return sampler_.sampler_exhausted(); }
  // BatchSampler::restore_epoch.
  void restore_epoch(std::vector<int64_t> order, int64_t position, bool sampler_exhausted) {
    sampler_.restore_epoch(std::move(order), position, sampler_exhausted);
  }

 private:
  const GPTDataset* dataset_;
  BatchSampler sampler_;
  std::vector<int64_t> input_buffer_;   // [B * T], gathered before Ids::assign
  std::vector<int64_t> target_buffer_;  // [B * T]
};

// The book's split: the first int(train_ratio * len(text)) characters (Unicode code points, as
// Python counts them) train, the rest validate. Views into text. Throws Error unless
// 0 <= train_ratio <= 1.
struct TextSplit {
  std::string_view train;
  std::string_view validation;
};
TextSplit train_val_split(std::string_view text, double train_ratio);

// The whole file as bytes. Throws Error "<who>: cannot read '<path>'" when it cannot be opened.
std::string read_text_file(const std::filesystem::path& path, const std::string& who);

}  // namespace tapegrad
