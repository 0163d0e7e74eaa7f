// GPTDatasetV1's windows, torch's randperm and DataLoader order, and the book's train/val split.
#include <tapegrad/text/dataset.h>

#include <cmath>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string>
#include <utility>

#include <tapegrad/graph/error.h>

namespace tapegrad {

GPTDataset::GPTDataset(std::vector<int64_t> token_ids, int64_t max_length, int64_t stride)
    : token_ids_(std::move(token_ids)), max_length_(max_length), stride_(stride) {
  if (token_ids_.empty()) throw Error("GPTDataset: the text is empty (no token ids)");
  if (max_length < 1)
    throw Error("GPTDataset: max_length must be >= 1, got " + std::to_string(max_length));
  if (stride < 1) throw Error("GPTDataset: stride must be >= 1, got " + std::to_string(stride));
  const auto n = static_cast<int64_t>(token_ids_.size());
  if (n <= max_length) {
    throw Error("GPTDataset: the text has " + std::to_string(n) +
                " tokens, shorter than one window (max_length + 1 = " +
                std::to_string(max_length + 1) + " tokens)");
  }
  windows_ = (n - max_length + stride - 1) / stride;  // len(range(0, n - max_length, stride))
}

GPTDataset::GPTDataset(std::string_view text, const Tokenizer& tokenizer, int64_t max_length,
                       int64_t stride)
    : GPTDataset(
          text.empty() ? throw Error("GPTDataset: the text is empty") : tokenizer.encode(text),
          max_length, stride) {}

std::span<const int64_t> GPTDataset::input(int64_t i) const {
  if (i < 0 || i >= windows_) {
    throw Error("GPTDataset: window " + std::to_string(i) + " is outside [0, " +
                std::to_string(windows_) + ")");
  }
  return std::span<const int64_t>(token_ids_)
      .subspan(static_cast<size_t>(i * stride_), static_cast<size_t>(max_length_));
}

std::span<const int64_t> GPTDataset::target(int64_t i) const {
  input(i);  // the range check
  return std::span<const int64_t>(token_ids_)
      .subspan(static_cast<size_t>(i * stride_ + 1), static_cast<size_t>(max_length_));
}

BatchSampler::BatchSampler(int64_t n, int64_t batch_size, bool shuffle, bool drop_last,
                           Generator* generator, const char* what)
    : n_(n),
      batch_size_(batch_size),
      shuffle_(shuffle),
      drop_last_(drop_last),
      generator_(generator),
      what_(what) {
  if (batch_size < 1)
    throw Error("DataLoader: batch_size must be >= 1, got " + std::to_string(batch_size));
  if (n < 1) throw Error(std::string("DataLoader: the dataset has no ") + what);
  order_.reserve(static_cast<size_t>(n));
}

int64_t BatchSampler::size() const {
  return drop_last_ ? n_ / batch_size_ : (n_ + batch_size_ - 1) / batch_size_;
}

Generator& BatchSampler::sampler_generator() {
  return generator_ ? *generator_ : *own_sampler_;
}

void BatchSampler::begin_epoch() {
  // _BaseDataLoaderIter's _base_seed: torch.empty((), dtype=torch.int64).random_(generator=g).
  (generator_ ? *generator_ : default_generator()).random64();
  order_.clear();
  position_ = 0;
  in_epoch_ = true;
  sampler_exhausted_ = false;
}

void BatchSampler::restore_epoch(std::vector<int64_t> order, int64_t position,
                                 bool sampler_exhausted) {
  const int64_t n = n_;
  if (shuffle_ && generator_ == nullptr) {
    throw Error("DataLoader::restore_epoch: a shuffling loader without a generator cannot resume");
  }
  if (!order.empty()) {
    std::vector<bool> seen(static_cast<size_t>(n), false);
    if (static_cast<int64_t>(order.size()) != n) {
      throw Error("DataLoader::restore_epoch: order has " + std::to_string(order.size()) +
                  " indices, the dataset " + std::to_string(n) + " (" + what_ + "s)");
    }
    for (const int64_t i : order) {
      if (i < 0 || i >= n || seen[static_cast<size_t>(i)]) {
        throw Error("DataLoader::restore_epoch: order is not a permutation of 0.." +
                    std::to_string(n - 1));
      }
      seen[static_cast<size_t>(i)] = true;
    }
  }
  if (position < 0 || position > static_cast<int64_t>(order.size())) {
    throw Error("DataLoader::restore_epoch: position " + std::to_string(position) +
                " outside [0, " + std::to_string(order.size()) + "]");
  }
  order_ = std::move(order);
  position_ = position;
  sampler_exhausted_ = sampler_exhausted;
  in_epoch_ = true;
}

bool BatchSampler::next(std::span<const int64_t>& indices) {
  if (!in_epoch_) begin_epoch();
  const int64_t n = n_;
  if (order_.empty()) {  // the sampler starts on the first batch, as torch's generators do
    if (shuffle_) {
      if (!generator_) {
        // RandomSampler without a generator: seed = int(torch.empty((), dtype=torch.int64)
        // .random_()), i.e. random64() % 2^63 of the default generator.
        const uint64_t seed = default_generator().random64() % (uint64_t{1} << 63);
        own_sampler_.emplace(seed);
      }
      const Ids perm = randperm(n, sampler_generator());  // torch's order (graph/factory.h)
      order_.assign(perm.values().begin(), perm.values().end());
    } else {
      order_.resize(static_cast<size_t>(n));
      std::iota(order_.begin(), order_.end(), int64_t{0});
    }
  }
  const int64_t remaining = n - position_;
  const int64_t take = std::min(batch_size_, remaining);
  const bool ends = remaining < batch_size_ || remaining == 0;  // this call reads past the end
  if (ends && !sampler_exhausted_) {
    if (shuffle_) randperm(n, sampler_generator());  // RandomSampler's trailing draw, discarded
    sampler_exhausted_ = true;
  }
  if (take == 0 || (take < batch_size_ && drop_last_)) {
    in_epoch_ = false;
    return false;
  }
  indices = std::span<const int64_t>(order_).subspan(static_cast<size_t>(position_),
                                                     static_cast<size_t>(take));
  position_ += take;
  return true;
}

DataLoader::DataLoader(const GPTDataset& dataset, int64_t batch_size, bool shuffle, bool drop_last,
                       Generator* generator)
    : dataset_(&dataset),
      sampler_(dataset.size(), batch_size, shuffle, drop_last, generator, "window") {
  const auto capacity = static_cast<size_t>(batch_size * dataset.max_length());
  input_buffer_.reserve(capacity);
  target_buffer_.reserve(capacity);
}

bool DataLoader::next(Ids& inputs, Ids& targets) {
  std::span<const int64_t> windows;
  if (!sampler_.next(windows)) return false;
  const auto take = static_cast<int64_t>(windows.size());
  const int64_t t = dataset_->max_length();
  input_buffer_.resize(static_cast<size_t>(take * t));
  target_buffer_.resize(static_cast<size_t>(take * t));
  for (int64_t b = 0; b < take; ++b) {
    const int64_t window = windows[static_cast<size_t>(b)];
    const auto in = dataset_->input(window);
    const auto out = dataset_->target(window);
    std::copy(in.begin(), in.end(), input_buffer_.begin() + b * t);
    std::copy(out.begin(), out.end(), target_buffer_.begin() + b * t);
  }
  inputs.assign(Shape{take, t}, input_buffer_);    // [B, T]
  targets.assign(Shape{take, t}, target_buffer_);  // [B, T]
  return true;
}

TextSplit train_val_split(std::string_view text, double train_ratio) {
  if (!(train_ratio >= 0.0 && train_ratio <= 1.0)) {
    throw Error("train_val_split: train_ratio must be in [0, 1], got " +
                std::to_string(train_ratio));
  }
  // Python's len(text) counts code points: every byte but UTF-8 continuation bytes.
  int64_t characters = 0;
  for (char c : text) characters += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  const auto split = static_cast<int64_t>(train_ratio * static_cast<double>(characters));
  size_t byte = 0;
  for (int64_t seen = 0; byte < text.size(); ++byte) {
    if ((static_cast<unsigned char>(text[byte]) & 0xC0) != 0x80 && seen++ == split) break;
  }
  return {text.substr(0, byte), text.substr(byte)};
}

std::string read_text_file(const std::filesystem::path& path, const std::string& who) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(who + ": cannot read '" + path.string() + "'");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw Error(who + ": cannot read '" + path.string() + "'");
  return text.str();
}

}  // namespace tapegrad
