// Shape and DType: the dimension list (rank 0 to 8) and element type every tensor carries.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

namespace tapegrad {

inline constexpr int kMaxRank = 8;

enum class DType : uint8_t { Float32, Float64 };

const char* dtype_name(DType dtype);  // "float32" / "float64"
inline int64_t dtype_size(DType dtype) {
  return dtype == DType::Float32 ? 4 : 8;
}

template <class T>
constexpr DType dtype_of();
template <>
constexpr DType dtype_of<float>() {
  return DType::Float32;
}
template <>
constexpr DType dtype_of<double>() {
  return DType::Float64;
}

// A fixed-capacity dimension list: no heap, cheap to copy, printed as `[2, 6, 3]`.
class Shape {
 public:
  Shape() = default;  // rank 0: a scalar
  Shape(std::initializer_list<int64_t> dims);
  explicit Shape(std::span<const int64_t> dims);

  int rank() const { return rank_; }
  int64_t numel() const {  // inline: every op and kernel asks, on tiny tensors too
    int64_t n = 1;
    for (int i = 0; i < rank_; ++i) n *= dims_[static_cast<size_t>(i)];
    return n;
  }
  // Unchecked, for the kernels' inner loops: `dim` must be in 0..rank()-1 (no negative dims).
  int64_t operator[](int dim) const { return dims_[static_cast<size_t>(dim)]; }
  int64_t& operator[](int dim) { return dims_[static_cast<size_t>(dim)]; }
  // Checked: negative dims count from the end, like PyTorch's x.size(-1); out of range throws
  // Error naming "size".
  int64_t size(int dim) const;
  std::span<const int64_t> dims() const { return {dims_.data(), static_cast<size_t>(rank_)}; }
  // Row-major strides in elements.
  std::array<int64_t, kMaxRank> strides() const;

  bool operator==(const Shape& other) const;
  bool operator!=(const Shape& other) const { return !(*this == other); }

  std::string str() const;  // "[2, 6, 3]"

 private:
  std::array<int64_t, kMaxRank> dims_{};
  int rank_ = 0;
};

// n elements of `dtype` at `data`, widened to double (exact for float32).
std::vector<double> to_doubles(const void* data, DType dtype, int64_t n);
// The inverse: dst[i] = values[i] converted to dtype, or dst[i] += values[i] when `add`.
void from_doubles(std::span<const double> values, void* dst, DType dtype, bool add = false);

// Turns a possibly negative dim into 0..rank-1; throws Error naming `op` when out of range.
int normalize_dim(const char* op, int dim, int rank);

}  // namespace tapegrad
