// one_hot: ids to rows of 0/1 (torch.nn.functional.one_hot), a leaf with no gradient (ids have
// none), of a float dtype since tapegrad has no integer tensors.
#include <algorithm>
#include <string>
#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/graph/factory.h>
#include <tapegrad/graph/scope.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

Tensor one_hot(const Ids& ids, int64_t num_classes, DType dtype) {
  if (num_classes < -1) {
    throw Error("one_hot: num_classes must be -1 or >= 0, got " + std::to_string(num_classes));
  }
  const std::span<const int64_t> values = ids.values();
  int64_t classes = num_classes;
  if (classes == -1) {
    if (values.empty()) {
      throw Error("one_hot: cannot infer the number of classes from ids " + ids.shape().str() +
                  " with no ids; give num_classes");
    }
    const int64_t top = *std::max_element(values.begin(), values.end());
    if (top >= (int64_t{1} << 60)) {
      throw Error("one_hot: id " + std::to_string(top) + " is too large to count classes by");
    }
    classes = std::max<int64_t>(top + 1, 0);
  }
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] < 0 || values[i] >= classes) {
      throw Error("one_hot: id " + std::to_string(values[i]) + " at position " + std::to_string(i) +
                  " of ids " + ids.shape().str() + " is out of range for " +
                  std::to_string(classes) + " classes");
    }
  }
  if (ids.rank() >= kMaxRank) {
    throw Error("one_hot: ids " + ids.shape().str() + " would give a result above rank " +
                std::to_string(kMaxRank));
  }
  std::vector<int64_t> dims(ids.shape().dims().begin(), ids.shape().dims().end());
  dims.push_back(classes);
  Tensor t = zeros(Shape(std::span<const int64_t>(dims)), dtype);
  void* out = current_tape().node(t.id()).value;
  for (size_t i = 0; i < values.size(); ++i) {
    const auto at = static_cast<int64_t>(i) * classes + values[i];
    if (dtype == DType::Float32) {
      static_cast<float*>(out)[at] = 1.0f;
    } else {
      static_cast<double*>(out)[at] = 1.0;
    }
  }
  return t;
}

}  // namespace tapegrad
