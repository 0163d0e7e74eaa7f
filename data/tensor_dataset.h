// torch.utils.data for tensors held in memory: TensorDataset, Subset, a DataLoader of their
// batches and random_split, with torch's orders (the shuffles and splits a PyTorch script gets from
// the same seed).
#pragma once

#include <cstdint>
#include <iterator>
#include <span>
#include <string>
#include <vector>

#include <tapegrad/graph/ids.h>
#include <tapegrad/graph/parameter.h>
#include <tapegrad/graph/random.h>
#include <tapegrad/graph/tape.h>
#include <tapegrad/text/dataset.h>

namespace tapegrad::data {

// One of a TensorDataset's tensors: float values (a Tensor's or a Parameter's, copied) or integer
// ids (class labels, token ids: tapegrad has no integer tensor dtype, torch's LongTensor).
class Column {
 public:
  Column(const Tensor& values);     // NOLINT: implicit, as TensorDataset({x, y}) reads
  Column(const Parameter& values);  // NOLINT
  Column(Ids ids);                  // NOLINT
  bool is_ids() const { return !values_.defined(); }
  const Shape& shape() const { return is_ids() ? ids_.shape() : values_.shape(); }
  const Parameter& values() const { return values_; }  // undefined for ids
  const Ids& ids() const { return ids_; }

 private:
  Parameter values_;  // a copy, outliving any tape
  Ids ids_;
};

// The tensors of one batch (or one row), in the dataset's order: float values (held outside any
// tape) or ids.
class Batch {
 public:
  size_t size() const { return kinds_.size(); }  // how many tensors
  // The k-th tensor as a constant leaf (no gradient) on the current tape, made at the call: the
  // same leaf for every call until that tape is reset, so a loop may reset its tape at the start
  // of a step and read the batch after. Throws Error when k is out of range or the k-th tensor
  // holds ids.
  Tensor tensor(size_t k) const;
  // Its values, as the Parameter (requires_grad false) the leaf reads.
  const Parameter& values(size_t k) const;
  // The k-th tensor's ids; throws Error when k is out of range or it holds float values.
  const Ids& ids(size_t k) const;

 private:
  friend class TensorDataset;
  void check(size_t k, bool want_ids, const char* what) const;
  std::vector<bool> kinds_;  // true: ids
  std::vector<Parameter> values_;
  std::vector<Ids> ids_;
};

// torch.utils.data.TensorDataset: row i of the dataset is row i (along dim 0) of every tensor.
class TensorDataset {
 public:
  // Throws Error, naming the tensors and their shapes, when there is no tensor, one is 0-dim, or
  // their dim 0 sizes differ.
  explicit TensorDataset(std::vector<Column> tensors);
  int64_t size() const { return rows_; }  // len(dataset)
  size_t num_tensors() const { return columns_.size(); }
  const std::vector<Column>& tensors() const { return columns_; }
  // dataset[i]: row i of each tensor (dim 0 removed); i may count from the end.
  Batch operator[](int64_t i) const;
  // The rows `indices` of each tensor, stacked along dim 0 (what the DataLoader's collate gives).
  // Throws Error naming an index outside [0, size()).
  Batch batch(std::span<const int64_t> indices) const;
  // A dataset of the rows `indices`, copied (torch's Subset, as a TensorDataset of its own).
  TensorDataset subset(std::span<const int64_t> indices) const;

 private:
  Batch gather(std::span<const int64_t> indices, bool keep_dim) const;
  std::vector<Column> columns_;
  int64_t rows_ = 0;
};

// torch.utils.data.Subset(dataset, indices): the rows `indices` of a dataset, read through them
// (no copy); row i is dataset[indices[i]]. The dataset must outlive the Subset (as torch's holds a
// reference; a temporary dataset is refused at compile time). Throws Error naming an index
// outside [0, dataset.size()).
class Subset {
 public:
  Subset(const TensorDataset& dataset, std::vector<int64_t> indices);
  Subset(TensorDataset&& dataset, std::vector<int64_t> indices) = delete;
  int64_t size() const { return static_cast<int64_t>(indices_.size()); }  // len(subset)
  const TensorDataset& dataset() const { return *dataset_; }
  const std::vector<int64_t>& indices() const { return indices_; }
  // subset[i]: the dataset's row indices[i] (i may count from the end).
  Batch operator[](int64_t i) const;
  // Rows of the subset, stacked: the dataset's rows indices[j] for each j of `rows`.
  Batch batch(std::span<const int64_t> rows) const;
  // The subset's rows copied into a dataset of their own.
  TensorDataset to_dataset() const;

 private:
  std::vector<int64_t> dataset_rows(std::span<const int64_t> rows) const;
  const TensorDataset* dataset_;
  std::vector<int64_t> indices_;
};

// torch.utils.data.DataLoader(dataset, batch_size=1, shuffle=False, drop_last=False,
// generator=None) with num_workers=0, down to its random draws (text/dataset.h's BatchSampler:
// each epoch draws one random64() from the generator, then, shuffling, torch.randperm's order).
// Range-for reads one epoch: `for (const data::Batch& b : loader)` is torch's `for b in loader`.
// The dataset and generator must outlive the loader.
class DataLoader {
 public:
  // Throws Error when batch_size < 1 or the dataset is empty.
  explicit DataLoader(const TensorDataset& dataset, int64_t batch_size = 1, bool shuffle = false,
                      bool drop_last = false, Generator* generator = nullptr);
  // Over a Subset (random_split's parts): its rows in its order, as torch's DataLoader(subset).
  explicit DataLoader(const Subset& subset, int64_t batch_size = 1, bool shuffle = false,
                      bool drop_last = false, Generator* generator = nullptr);
  int64_t size() const { return sampler_.size(); }  // len(loader): batches per epoch
  int64_t batch_size() const { return sampler_.batch_size(); }
  // The next batch of this epoch (starting one when none is under way); false at its end.
  bool next(Batch& batch);
  // This epoch's order of row indices (empty before its first batch).
  const std::vector<int64_t>& order() const { return sampler_.order(); }

  class iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Batch;
    using difference_type = std::ptrdiff_t;
    using pointer = const Batch*;
    using reference = const Batch&;
    iterator() = default;
    const Batch& operator*() const { return loader_->current_; }
    const Batch* operator->() const { return &loader_->current_; }
    iterator& operator++();
    bool operator==(const iterator& other) const { return loader_ == other.loader_; }

   private:
    friend class DataLoader;
    explicit iterator(DataLoader* loader) : loader_(loader) {}
    DataLoader* loader_ = nullptr;  // null at the end
  };
  // iter(loader): starts an epoch and reads its first batch.
  iterator begin();
  iterator end() { return iterator(); }

 private:
  const TensorDataset& dataset_;
  const Subset* subset_ = nullptr;  // when reading a Subset: its rows map onto dataset_'s
  BatchSampler sampler_;
  Batch current_;
};

// torch.utils.data.random_split(dataset, lengths, generator) with integer lengths: the rows in
// the order of randperm(size(), generator), cut into consecutive parts of `lengths`, each a Subset
// of the dataset (its row indices, no copy; Subset::to_dataset copies). Throws Error when a length
// is negative or the lengths do not add up to size().
std::vector<Subset> random_split(const TensorDataset& dataset, const std::vector<int64_t>& lengths,
                                 Generator& generator = default_generator());
// The same with torch.Generator().manual_seed(seed).
std::vector<Subset> random_split(const TensorDataset& dataset, const std::vector<int64_t>& lengths,
                                 uint64_t seed);
// With fractions (torch 1.13's rule: they must add up to 1 within 1e-9 relative and not above
// it): each part gets floor(size()·fraction) rows, then the remainder one row at a time to the
// parts in order (round robin), then the integer split. A fraction outside [0, 1], or fractions
// that do not add up to 1, are Errors. A span (not a braced list, which reads as the integer
// lengths): random_split(ds, std::vector<double>{0.8, 0.2}, generator).
std::vector<Subset> random_split(const TensorDataset& dataset, std::span<const double> fractions,
                                 Generator& generator = default_generator());
std::vector<Subset> random_split(const TensorDataset& dataset, std::span<const double> fractions,
                                 uint64_t seed);
// The rows of each part held by a Subset: a temporary dataset would leave them dangling.
std::vector<Subset> random_split(TensorDataset&& dataset, const std::vector<int64_t>& lengths,
                                 Generator& generator = default_generator()) = delete;
std::vector<Subset> random_split(TensorDataset&& dataset, const std::vector<int64_t>& lengths,
                                 uint64_t seed) = delete;
std::vector<Subset> random_split(TensorDataset&& dataset, std::span<const double> fractions,
                                 Generator& generator = default_generator()) = delete;
std::vector<Subset> random_split(TensorDataset&& dataset, std::span<const double> fractions,
                                 uint64_t seed) = delete;

}  // namespace tapegrad::data
