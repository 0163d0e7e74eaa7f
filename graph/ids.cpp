// Ids: construction checks and torch's integer print format.
#include <tapegrad/graph/ids.h>

#include <algorithm>

#include <tapegrad/graph/error.h>

namespace tapegrad {

namespace {

// torch 1.13's _tensor_str_with_formatter for an integer tensor (no summarisation: ids printed
// by the book are short), every id right-aligned to the widest one.
void append_ids(std::string& out, std::span<const int64_t> dims, const int64_t*& ids, int indent,
                size_t width) {
  constexpr int kLineWidth = 80;
  if (dims.empty()) {
    const std::string s = std::to_string(*ids++);
    out += std::string(width - s.size(), ' ') + s;
    return;
  }
  out += '[';
  if (dims.size() == 1) {
    const int64_t per_line =
        std::max<int64_t>(1, (kLineWidth - indent) / static_cast<int64_t>(width + 2));
    for (int64_t i = 0; i < dims[0]; ++i) {
      if (i > 0) out += i % per_line == 0 ? ",\n" + std::string(indent + 1, ' ') : ", ";
      append_ids(out, {}, ids, indent + 1, width);
    }
  } else {
    for (int64_t i = 0; i < dims[0]; ++i) {
      if (i > 0) out += "," + std::string(dims.size() - 1, '\n') + std::string(indent + 1, ' ');
      append_ids(out, dims.subspan(1), ids, indent + 1, width);
    }
  }
  out += ']';
}

}  // namespace

Ids::Ids(Shape shape, std::vector<int64_t> ids) : shape_(shape), ids_(std::move(ids)) {
  if (static_cast<int64_t>(ids_.size()) != shape_.numel()) {
    throw Error("Ids: " + std::to_string(ids_.size()) + " ids do not fill shape " + shape_.str());
  }
}

Ids Ids::from_rows(std::initializer_list<std::initializer_list<int64_t>> rows) {
  std::vector<int64_t> ids;
  const int64_t cols = rows.size() == 0 ? 0 : static_cast<int64_t>(rows.begin()->size());
  for (const auto& row : rows) {
    if (static_cast<int64_t>(row.size()) != cols) {
      throw Error("Ids::from_rows: rows of different lengths (" + std::to_string(cols) + " and " +
                  std::to_string(row.size()) + ")");
    }
    ids.insert(ids.end(), row.begin(), row.end());
  }
  return Ids(Shape{static_cast<int64_t>(rows.size()), cols}, std::move(ids));
}

Ids Ids::from_row(std::initializer_list<int64_t> row) {
  return Ids(Shape{static_cast<int64_t>(row.size())}, std::vector<int64_t>(row));
}

void Ids::assign(const Shape& shape, std::span<const int64_t> ids) {
  if (static_cast<int64_t>(ids.size()) != shape.numel()) {
    throw Error("Ids::assign: " + std::to_string(ids.size()) + " ids do not fill shape " +
                shape.str());
  }
  shape_ = shape;
  ids_.assign(ids.begin(), ids.end());
}

void Ids::resize(const Shape& shape) {
  shape_ = shape;
  ids_.resize(static_cast<size_t>(shape.numel()));
}

std::string Ids::str() const {
  size_t width = 1;
  for (int64_t id : ids_) width = std::max(width, std::to_string(id).size());
  std::string out = "tensor(";
  const int64_t* cursor = ids_.data();
  if (shape_.numel() == 0) {
    out += "[]";
  } else {
    append_ids(out, shape_.dims(), cursor, static_cast<int>(out.size()), width);
  }
  return out + ")";
}

}  // namespace tapegrad
