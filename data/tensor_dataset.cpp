// TensorDataset's rows and batches, the DataLoader over them, and random_split.
#include <tapegrad/data/tensor_dataset.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <sstream>
#include <utility>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/scope.h>

namespace tapegrad::data {

namespace {

std::string tensor_text(size_t k, const Column& c) {
  return "tensor " + std::to_string(k) + " " + c.shape().str() + (c.is_ids() ? " (ids)" : "");
}

// `shape` with dim 0 replaced by `rows`, or removed when keep_dim is false.
Shape rows_shape(const Shape& shape, int64_t rows, bool keep_dim) {
  std::vector<int64_t> dims(shape.dims().begin(), shape.dims().end());
  if (keep_dim) {
    dims[0] = rows;
  } else {
    dims.erase(dims.begin());
  }
  return Shape(std::span<const int64_t>(dims));
}

}  // namespace

// --- Column, Batch -------------------------------------------------------------------------------

Column::Column(const Tensor& values)
    : values_(Parameter(values.shape(), values.dtype()).set_requires_grad(false)) {
  std::memcpy(values_.raw_data(), values.node().value,
              static_cast<size_t>(values.numel() * dtype_size(values.dtype())));
}

Column::Column(const Parameter& values)
    : values_(Parameter(values.shape(), values.dtype()).set_requires_grad(false)) {
  std::memcpy(values_.raw_data(), values.raw_data(),
              static_cast<size_t>(values.numel() * dtype_size(values.dtype())));
}

Column::Column(Ids ids) : ids_(std::move(ids)) {}

void Batch::check(size_t k, bool want_ids, const char* what) const {
  const std::string call = std::string("Batch.") + what + "(" + std::to_string(k) + ")";
  if (k >= kinds_.size()) {
    throw Error(call + ": the batch holds " + std::to_string(kinds_.size()) + " tensors");
  }
  if (kinds_[k] != want_ids) {
    throw Error(call + ": tensor " + std::to_string(k) +
                (kinds_[k] ? " holds ids: read it with ids("
                           : " holds float values: read it with tensor(") +
                std::to_string(k) + ")");
  }
}

Tensor Batch::tensor(size_t k) const {
  check(k, false, "tensor");
  return current_tape().parameter(values_[k]);
}

const Parameter& Batch::values(size_t k) const {
  check(k, false, "values");
  return values_[k];
}

const Ids& Batch::ids(size_t k) const {
  check(k, true, "ids");
  return ids_[k];
}

// --- TensorDataset -------------------------------------------------------------------------------

TensorDataset::TensorDataset(std::vector<Column> tensors) : columns_(std::move(tensors)) {
  if (columns_.empty()) throw Error("TensorDataset: no tensors given");
  for (size_t k = 0; k < columns_.size(); ++k) {
    if (columns_[k].shape().rank() == 0) {
      throw Error("TensorDataset: " + tensor_text(k, columns_[k]) +
                  " is 0-dim: every tensor needs a dim 0 to index rows by");
    }
  }
  rows_ = columns_[0].shape().size(0);
  for (size_t k = 1; k < columns_.size(); ++k) {
    if (columns_[k].shape().size(0) != rows_) {
      throw Error("TensorDataset: size mismatch between tensors: " + tensor_text(0, columns_[0]) +
                  " has " + std::to_string(rows_) + " rows but " + tensor_text(k, columns_[k]) +
                  " has " + std::to_string(columns_[k].shape().size(0)));
    }
  }
}

Batch TensorDataset::gather(std::span<const int64_t> indices, bool keep_dim) const {
  for (size_t j = 0; j < indices.size(); ++j) {
    if (indices[j] < 0 || indices[j] >= rows_) {
      throw Error("TensorDataset: index " + std::to_string(indices[j]) + " (at position " +
                  std::to_string(j) + ") is out of range for " + std::to_string(rows_) + " rows");
    }
  }
  const auto count = static_cast<int64_t>(indices.size());
  Batch batch;
  for (const Column& c : columns_) {
    const Shape shape = rows_shape(c.shape(), count, keep_dim);
    const int64_t row = rows_shape(c.shape(), 1, true).numel();  // elements per row
    batch.kinds_.push_back(c.is_ids());
    if (c.is_ids()) {
      std::vector<int64_t> ids;
      ids.reserve(static_cast<size_t>(count * row));
      const std::span<const int64_t> all = c.ids().values();
      for (const int64_t i : indices) {
        ids.insert(ids.end(), all.begin() + i * row, all.begin() + (i + 1) * row);
      }
      batch.ids_.emplace_back(shape, std::move(ids));
      batch.values_.emplace_back();
    } else {
      Parameter values(shape, c.values().dtype());
      values.set_requires_grad(false);
      const auto bytes = static_cast<size_t>(row * dtype_size(c.values().dtype()));
      auto* out = static_cast<unsigned char*>(values.raw_data());
      const auto* all = static_cast<const unsigned char*>(c.values().raw_data());
      for (size_t j = 0; j < indices.size() && bytes > 0; ++j) {
        std::memcpy(out + j * bytes, all + static_cast<size_t>(indices[j]) * bytes, bytes);
      }
      batch.values_.push_back(std::move(values));
      batch.ids_.emplace_back();
    }
  }
  return batch;
}

Batch TensorDataset::operator[](int64_t i) const {
  const int64_t index = i < 0 ? i + rows_ : i;
  if (index < 0 || index >= rows_) {
    throw Error("TensorDataset[" + std::to_string(i) + "]: out of range for " +
                std::to_string(rows_) + " rows");
  }
  return gather(std::span<const int64_t>(&index, 1), false);
}

Batch TensorDataset::batch(std::span<const int64_t> indices) const {
  return gather(indices, true);
}

TensorDataset TensorDataset::subset(std::span<const int64_t> indices) const {
  const Batch rows = gather(indices, true);
  std::vector<Column> columns;
  for (size_t k = 0; k < columns_.size(); ++k) {
    if (columns_[k].is_ids()) {
      columns.emplace_back(rows.ids(k));
    } else {
      columns.emplace_back(rows.values(k));
    }
  }
  return TensorDataset(std::move(columns));
}

// --- Subset --------------------------------------------------------------------------------------

Subset::Subset(const TensorDataset& dataset, std::vector<int64_t> indices)
    : dataset_(&dataset), indices_(std::move(indices)) {
  for (size_t j = 0; j < indices_.size(); ++j) {
    if (indices_[j] < 0 || indices_[j] >= dataset.size()) {
      throw Error("Subset: index " + std::to_string(indices_[j]) + " (position " +
                  std::to_string(j) + ") is out of range for " + std::to_string(dataset.size()) +
                  " rows");
    }
  }
}

std::vector<int64_t> Subset::dataset_rows(std::span<const int64_t> rows) const {
  std::vector<int64_t> out;
  out.reserve(rows.size());
  for (size_t j = 0; j < rows.size(); ++j) {
    if (rows[j] < 0 || rows[j] >= size()) {
      throw Error("Subset.batch: index " + std::to_string(rows[j]) + " (position " +
                  std::to_string(j) + ") is out of range for " + std::to_string(size()) + " rows");
    }
    out.push_back(indices_[static_cast<size_t>(rows[j])]);
  }
  return out;
}

Batch Subset::operator[](int64_t i) const {
  const int64_t index = i < 0 ? i + size() : i;
  if (index < 0 || index >= size()) {
    throw Error("Subset[" + std::to_string(i) + "]: out of range for " + std::to_string(size()) +
                " rows");
  }
  return (*dataset_)[indices_[static_cast<size_t>(index)]];
}

Batch Subset::batch(std::span<const int64_t> rows) const {
  return dataset_->batch(dataset_rows(rows));
}

TensorDataset Subset::to_dataset() const {
  return dataset_->subset(indices_);
}

// --- DataLoader ----------------------------------------------------------------------------------

DataLoader::DataLoader(const TensorDataset& dataset, int64_t batch_size, bool shuffle,
                       bool drop_last, Generator* generator)
    : dataset_(dataset),
      sampler_(dataset.size(), batch_size, shuffle, drop_last, generator, "row") {}

DataLoader::DataLoader(const Subset& subset, int64_t batch_size, bool shuffle, bool drop_last,
                       Generator* generator)
    : dataset_(subset.dataset()),
      subset_(&subset),
      sampler_(subset.size(), batch_size, shuffle, drop_last, generator, "row") {}

bool DataLoader::next(Batch& batch) {
  std::span<const int64_t> indices;
  if (!sampler_.next(indices)) return false;
  batch = subset_ != nullptr ? subset_->batch(indices) : dataset_.batch(indices);
  return true;
}

DataLoader::iterator DataLoader::begin() {
  sampler_.begin_epoch();
  return next(current_) ? iterator(this) : iterator();
}

DataLoader::iterator& DataLoader::iterator::operator++() {
  if (!loader_->next(loader_->current_)) loader_ = nullptr;
  return *this;
}

// --- random_split --------------------------------------------------------------------------------

std::vector<Subset> random_split(const TensorDataset& dataset, const std::vector<int64_t>& lengths,
                                 Generator& generator) {
  int64_t total = 0;
  std::string list;
  for (const int64_t length : lengths) {
    list += (list.empty() ? "" : ", ") + std::to_string(length);
    if (length < 0) throw Error("random_split: lengths [" + list + "...] hold a negative length");
    total += length;
  }
  if (total != dataset.size()) {
    throw Error("random_split: lengths [" + list + "] add up to " + std::to_string(total) +
                ", but the dataset has " + std::to_string(dataset.size()) + " rows");
  }
  const Ids order = randperm(total, generator);
  std::vector<Subset> parts;
  auto offset = order.values().begin();
  for (const int64_t length : lengths) {
    parts.emplace_back(dataset, std::vector<int64_t>(offset, offset + length));
    offset += length;
  }
  return parts;
}

std::vector<Subset> random_split(const TensorDataset& dataset, const std::vector<int64_t>& lengths,
                                 uint64_t seed) {
  Generator generator(seed);
  return random_split(dataset, lengths, generator);
}

std::vector<Subset> random_split(const TensorDataset& dataset, std::span<const double> fractions,
                                 Generator& generator) {
  double sum = 0;
  std::string list;
  for (const double f : fractions) {
    sum += f;
    std::ostringstream text;
    text << f;
    list += (list.empty() ? "" : ", ") + text.str();
  }
  // torch: math.isclose(sum(lengths), 1) and sum(lengths) <= 1 (isclose's rel_tol is 1e-9).
  if (!(std::abs(sum - 1.0) <= 1e-9 * std::max(std::abs(sum), 1.0) && sum <= 1.0)) {
    throw Error("random_split: fractions [" + list + "] add up to " + std::to_string(sum) +
                ", not 1");
  }
  std::vector<int64_t> lengths;
  for (size_t i = 0; i < fractions.size(); ++i) {
    if (!(fractions[i] >= 0.0 && fractions[i] <= 1.0)) {
      throw Error("random_split: fraction " + std::to_string(i) + " of [" + list +
                  "] is not between 0 and 1");
    }
    lengths.push_back(
        static_cast<int64_t>(std::floor(static_cast<double>(dataset.size()) * fractions[i])));
  }
  const int64_t remainder =
      dataset.size() - std::accumulate(lengths.begin(), lengths.end(), int64_t{0});
  for (int64_t i = 0; i < remainder; ++i) ++lengths[static_cast<size_t>(i) % lengths.size()];
  return random_split(dataset, lengths, generator);
}

std::vector<Subset> random_split(const TensorDataset& dataset, std::span<const double> fractions,
                                 uint64_t seed) {
  Generator generator(seed);
  return random_split(dataset, fractions, generator);
}

}  // namespace tapegrad::data
