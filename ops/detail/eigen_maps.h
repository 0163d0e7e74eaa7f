// Eigen views over tape storage, for the op files whose arithmetic is Eigen's (only those
// include it: Eigen's headers are most of a file's compile time).
#pragma once

#include <Eigen/Core>

#include <tapegrad/graph/tape.h>

namespace tapegrad {

template <class T>
using MatrixMap = Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;
template <class T>
using ConstMatrixMap =
    Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;
template <class T>
using ArrayMap = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;
template <class T>
using ConstArrayMap = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;

template <class T>
using RowVec = Eigen::Map<Eigen::Array<T, 1, Eigen::Dynamic>>;
template <class T>
using RowBlock = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;
template <class T>
using ConstRowBlock =
    Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;

template <class T>
ArrayMap<T> array_of(const Node& n) {
  return ArrayMap<T>(n.value_as<T>(), n.shape.numel());
}
template <class T>
ArrayMap<T> grad_array_of(const Node& n) {
  return ArrayMap<T>(n.grad_as<T>(), n.shape.numel());
}

}  // namespace tapegrad
