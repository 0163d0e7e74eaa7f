// Ids: int64 token ids with a shape ([B, T]), what embedding, cross_entropy and a GPT take.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include <tapegrad/graph/shape.h>

namespace tapegrad {

// Owns its ids (row-major, rank 0 to 4). Not a tape value: ids carry no gradient, so they live
// outside the tape, like torch's LongTensor inputs. A loader refills one Ids in place with
// assign(), which reuses its storage, so steady-state training steps allocate nothing for them.
class Ids {
 public:
  Ids() = default;
  // Throws Error unless ids.size() equals the shape's element count.
  Ids(Shape shape, std::vector<int64_t> ids);
  // [[6109, 3626], [6109, 1110]]: a [2, 2] batch; every row must have the same length.
  static Ids from_rows(std::initializer_list<std::initializer_list<int64_t>> rows);
  static Ids from_row(std::initializer_list<int64_t> row);  // shape [n]

  const Shape& shape() const { return shape_; }
  int rank() const { return shape_.rank(); }
  int64_t numel() const { return static_cast<int64_t>(ids_.size()); }
  int64_t size(int dim) const { return shape_.size(dim); }
  std::span<const int64_t> values() const { return ids_; }
  std::span<int64_t> values() { return ids_; }
  int64_t operator[](int64_t i) const { return ids_[static_cast<size_t>(i)]; }

  // Replaces shape and ids, keeping the storage when it is large enough.
  void assign(const Shape& shape, std::span<const int64_t> ids);
  // Takes `shape`, keeping the storage when it is large enough (what argmax and multinomial
  // write into, so a generation step allocates nothing); the ids are then for the caller to set.
  void resize(const Shape& shape);

  // torch's print format: `tensor([[15496,    11,   314,   716]])`.
  std::string str() const;

 private:
  Shape shape_;
  std::vector<int64_t> ids_;
};

}  // namespace tapegrad
