// The shapes, dims and keepdim flags the dim-reduction gradchecks (sum_dim, mean_dim, max_dim) run
// over.
#pragma once

#include <vector>

#include <tapegrad/graph/shape.h>

namespace tapegrad::testing {

struct DimCase {
  Shape shape;
  int dim;
  bool keepdim;
};

// Ranks 0 to 4, every dim counted from the front and from the back, keepdim both ways.
inline std::vector<DimCase> dim_reduction_cases() {
  std::vector<DimCase> cases;
  for (const Shape& shape : {Shape{}, Shape{5}, Shape{3, 4}, Shape{2, 3, 4}, Shape{2, 1, 3, 2}}) {
    const int rank = shape.rank() == 0 ? 1 : shape.rank();
    for (int dim = -rank; dim < rank; ++dim) {
      for (bool keepdim : {false, true}) cases.push_back({shape, dim, keepdim});
    }
  }
  return cases;
}

}  // namespace tapegrad::testing
