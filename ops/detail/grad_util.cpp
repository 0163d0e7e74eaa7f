// The recorded backwards' shared pieces (grad_util.h); grad_through is in ops/grad.cpp.
#include <tapegrad/ops/detail/grad_util.h>

#include <vector>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

Tensor indicator(const Tensor& x, const std::function<bool(double)>& pred) {
  std::vector<double> values = x.values();
  for (double& v : values) v = pred(v) ? 1.0 : 0.0;
  return from_values(x.shape(), values, x.dtype());
}

Tensor keepdim_view(const Tensor& dy, Shape shape, int dim) {
  if (dy.rank() == shape.rank()) return dy;
  std::vector<int64_t> dims(shape.dims().begin(), shape.dims().end());
  dims[static_cast<size_t>(dim)] = 1;
  return reshape(dy, dims);
}

Tensor placed(const Tensor& dy, Shape shape, int dim, int64_t start) {
  const int64_t length = dy.shape()[dim], after = shape[dim] - start - length;
  std::vector<Tensor> parts;
  Shape part = shape;
  if (start > 0) {
    part[dim] = start;
    parts.push_back(zeros(part, dy.dtype()));
  }
  parts.push_back(dy);
  if (after > 0) {
    part[dim] = after;
    parts.push_back(zeros(part, dy.dtype()));
  }
  return parts.size() == 1 ? dy : cat(parts, dim);
}

Tensor one_hot_along(Shape shape, int dim, const int64_t* index, DType dtype) {
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < dim; ++d) outer *= shape[d];
  for (int d = dim + 1; d < shape.rank(); ++d) inner *= shape[d];
  const int64_t n = shape[dim];
  std::vector<double> values(static_cast<size_t>(shape.numel()));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t at = index[o * inner + i];
      values[static_cast<size_t>((o * n + at) * inner + i)] = 1.0;
    }
  }
  return from_values(shape, values, dtype);
}

}  // namespace tapegrad
