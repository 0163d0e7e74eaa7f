// Tests for ops/interpolate.cpp: torch 1.13's goldens (nearest and bilinear, size and
// scale_factor), the errors and a float64 gradient check.
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/pooling.h>
#include "tests/ops/gradcheck_registry.h"
#include "tests/ops/pool_goldens.h"

using namespace tapegrad;

TEST_CASE("interpolate: torch goldens (nearest, bilinear, align_corners, size, scale_factor)",
          "[interpolate][goldens]") {
  using testing::check_pool_case;
  using M = InterpolateMode;
  check_pool_case("interpolate.nearest_size", [](const Tensor& x) {
    return interpolate(x, {.size = Size2{9, 4}});
  });
  check_pool_case("interpolate.nearest_x2",
                  [](const Tensor& x) { return interpolate(x, {.scale_factor = 2.0}); });
  check_pool_case("interpolate.nearest_scale", [](const Tensor& x) {
    return interpolate(x, {.scale_factor = Scale2{1.7, 0.6}});
  });
  check_pool_case("interpolate.nearest_recompute", [](const Tensor& x) {
    return interpolate(x, {.scale_factor = Scale2{1.7, 0.6}, .recompute_scale_factor = true});
  });
  check_pool_case("interpolate.bilinear_size", [](const Tensor& x) {
    return interpolate(x, {.size = Size2{9, 4}, .mode = M::Bilinear, .align_corners = false});
  });
  check_pool_case("interpolate.bilinear_corners", [](const Tensor& x) {
    return interpolate(x, {.size = Size2{9, 4}, .mode = M::Bilinear, .align_corners = true});
  });
  check_pool_case("interpolate.bilinear_scale", [](const Tensor& x) {
    return interpolate(x, {.scale_factor = Scale2{1.7, 0.6}, .mode = M::Bilinear});
  });
  check_pool_case("interpolate.bilinear_x2_corners", [](const Tensor& x) {
    return interpolate(x, {.scale_factor = 2.0, .mode = M::Bilinear, .align_corners = true});
  });
  check_pool_case("interpolate.bilinear_same", [](const Tensor& x) {
    return interpolate(x, {.size = Size2{3, 8}, .mode = M::Bilinear});
  });
}

TEST_CASE("interpolate: errors name the argument and the shapes", "[interpolate][errors]") {
  Tape tape;
  TapeScope scope(tape);
  const Tensor x = zeros({1, 1, 2, 2});
  CHECK_THROWS_WITH(interpolate(x, {}),
                    "interpolate: x [1, 1, 2, 2]: give exactly one of size and scale_factor");
  CHECK_THROWS_WITH(interpolate(x, {.size = 3, .scale_factor = 2.0}),
                    "interpolate: x [1, 1, 2, 2]: give exactly one of size and scale_factor");
  CHECK_THROWS_WITH(interpolate(x, {.size = 3, .align_corners = true}),
                    "interpolate: x [1, 1, 2, 2]: align_corners can only be set with mode "
                    "bilinear");
  CHECK_THROWS_WITH(interpolate(x, {.scale_factor = 0.4}),
                    "interpolate: x [1, 1, 2, 2]: output size [0, 0] must be positive");
  CHECK_THROWS_WITH(interpolate(x, {.scale_factor = -1.0}),
                    "interpolate: x [1, 1, 2, 2]: scale_factor [-1, -1] must be positive and "
                    "finite");
  CHECK_THROWS_WITH(interpolate(zeros({1, 2, 3}), {.size = 2}),
                    "interpolate: x [1, 2, 3]: expected a 4-D input [N, C, H, W], got rank 3");
}

GRADCHECK_TEST_CASE("interpolate", "nearest and bilinear, up and down") {
  using M = InterpolateMode;
  for (const InterpolateOptions& o :
       {InterpolateOptions{.size = Size2{5, 3}},
        InterpolateOptions{.size = Size2{5, 3}, .mode = M::Bilinear},
        InterpolateOptions{
            .scale_factor = Scale2{1.5, 0.7}, .mode = M::Bilinear, .align_corners = true}}) {
    auto report =
        gradcheck("interpolate", [&](std::span<const Tensor> in) { return interpolate(in[0], o); },
                  {random_input({2, 2, 3, 4}, 11)});
    testing::require_gradcheck(report, "interpolate");
  }
}
