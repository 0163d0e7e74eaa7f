// Shape: construction, validation and printing of dimension lists.
#include <tapegrad/graph/shape.h>

#include <tapegrad/graph/error.h>

namespace tapegrad {

const char* dtype_name(DType dtype) {
  return dtype == DType::Float32 ? "float32" : "float64";
}

namespace {
std::string dims_str(std::span<const int64_t> dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

void check_dims(std::span<const int64_t> dims) {
  if (dims.size() > static_cast<size_t>(kMaxRank)) {
    throw Error("Shape: " + dims_str(dims) + " has rank " + std::to_string(dims.size()) +
                ", above the maximum of " + std::to_string(kMaxRank));
  }
  for (int64_t d : dims) {
    if (d < 0)
      throw Error("Shape: " + dims_str(dims) + " has a negative dimension " + std::to_string(d));
  }
  // Byte counts (numel * 8) must fit in int64: no later size computation can overflow.
  constexpr int64_t kMaxNumel = int64_t{1} << 60;
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d != 0 && n > kMaxNumel / d) {
      for (int64_t e : dims) {
        if (e == 0) return;  // an empty tensor, however large its other dims
      }
      throw Error("Shape: " + dims_str(dims) + " has more than 2^60 elements");
    }
    n *= d;
  }
}
}  // namespace

Shape::Shape(std::initializer_list<int64_t> dims) : Shape(std::span<const int64_t>(dims)) {}

Shape::Shape(std::span<const int64_t> dims) {
  check_dims(dims);
  rank_ = static_cast<int>(dims.size());
  for (int i = 0; i < rank_; ++i) dims_[static_cast<size_t>(i)] = dims[static_cast<size_t>(i)];
}

int64_t Shape::size(int dim) const {
  return (*this)[normalize_dim("size", dim, rank_)];
}

std::array<int64_t, kMaxRank> Shape::strides() const {
  std::array<int64_t, kMaxRank> s{};
  int64_t stride = 1;
  for (int i = rank_ - 1; i >= 0; --i) {
    s[static_cast<size_t>(i)] = stride;
    stride *= dims_[static_cast<size_t>(i)];
  }
  return s;
}

bool Shape::operator==(const Shape& other) const {
  if (rank_ != other.rank_) return false;
  for (int i = 0; i < rank_; ++i) {
    if (dims_[static_cast<size_t>(i)] != other.dims_[static_cast<size_t>(i)]) return false;
  }
  return true;
}

std::string Shape::str() const {
  std::string s = "[";
  for (int i = 0; i < rank_; ++i) {
    if (i) s += ", ";
    s += std::to_string(dims_[static_cast<size_t>(i)]);
  }
  return s + "]";
}

std::vector<double> to_doubles(const void* data, DType dtype, int64_t n) {
  std::vector<double> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    out[static_cast<size_t>(i)] = dtype == DType::Float32 ? static_cast<const float*>(data)[i]
                                                          : static_cast<const double*>(data)[i];
  }
  return out;
}

namespace {
template <class T>
void store_doubles(std::span<const double> values, T* dst, bool add) {
  for (size_t i = 0; i < values.size(); ++i) {
    dst[i] = add ? dst[i] + static_cast<T>(values[i]) : static_cast<T>(values[i]);
  }
}
}  // namespace

void from_doubles(std::span<const double> values, void* dst, DType dtype, bool add) {
  if (dtype == DType::Float32) {
    store_doubles(values, static_cast<float*>(dst), add);
  } else {
    store_doubles(values, static_cast<double*>(dst), add);
  }
}

int normalize_dim(const char* op, int dim, int rank) {
  const int lo = rank == 0 ? -1 : -rank;
  const int hi = rank == 0 ? 0 : rank - 1;
  if (dim < lo || dim > hi) {
    throw Error(std::string(op) + ": dim " + std::to_string(dim) + " is out of range for rank " +
                std::to_string(rank) + " (expected " + std::to_string(lo) + ".." +
                std::to_string(hi) + ")");
  }
  return dim < 0 ? dim + (rank == 0 ? 1 : rank) : dim;
}

}  // namespace tapegrad
