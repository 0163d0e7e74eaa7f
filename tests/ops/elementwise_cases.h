// Shapes the elementwise gradchecks share: same shapes up to rank 4, and for binary ops
// broadcasting in both directions through every path of broadcast_apply / reduce_broadcast.
#pragma once

#include <utility>
#include <vector>

#include <tapegrad/graph/shape.h>

namespace tapegrad::testing {

inline std::vector<Shape> unary_gradcheck_shapes() {
  return {Shape{}, Shape{5}, Shape{2, 3}, Shape{2, 3, 4}, Shape{2, 1, 3, 2}};
}

inline std::vector<std::pair<Shape, Shape>> binary_gradcheck_shapes() {
  return {
      {Shape{}, Shape{}},                      // scalars
      {Shape{5}, Shape{5}},                    // same shape
      {Shape{2, 3}, Shape{2, 3}},              //
      {Shape{2, 3, 4}, Shape{2, 3, 4}},        //
      {Shape{2, 2, 3, 2}, Shape{2, 2, 3, 2}},  // rank 4
      {Shape{2, 3}, Shape{}},                  // scalar on the right
      {Shape{}, Shape{2, 3}},                  // scalar on the left
      {Shape{2, 3, 4}, Shape{4}},              // row (bias-like)
      {Shape{4}, Shape{2, 3, 4}},              //
      {Shape{2, 3, 4}, Shape{2, 3, 1}},        // column (per-row statistic)
      {Shape{2, 3, 1}, Shape{2, 3, 4}},        //
      {Shape{2, 1, 4}, Shape{3, 1}},           // both broadcast, general walk
      {Shape{3, 1}, Shape{2, 1, 4}},           //
      {Shape{2, 3, 2, 2}, Shape{3, 1, 2}},     // rank 4 against rank 3
      {Shape{1, 3, 1, 2}, Shape{2, 1, 4, 1}},  // rank 4, both broadcast
  };
}

}  // namespace tapegrad::testing
