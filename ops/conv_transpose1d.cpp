// conv_transpose1d: torch.nn.functional.conv_transpose1d as conv_transpose2d on height-1 views.
#include <string>

#include <tapegrad/graph/error.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const Tensor& bias,
                        int64_t stride, int64_t padding, int64_t output_padding, int64_t groups,
                        int64_t dilation) {
  const std::string call =
      "conv_transpose1d: " + describe("input", input) + " x " + describe("weight", weight);
  if ((input.rank() != 2 && input.rank() != 3) || weight.rank() != 3) {
    throw Error(call + ": expected input [N, C_in, L] or [C_in, L] and weight [C_in, C_out / " +
                "groups, k]");
  }
  // The height-1 views are unsqueezed before the 2-D op's checks, so its errors (channels,
  // groups, sizes) are caught and named after this op and the 1-D shapes.
  try {
    const Tensor y =
        conv_transpose2d(unsqueeze(input, -2), unsqueeze(weight, -2), bias, {1, stride},
                         {0, padding}, {0, output_padding}, groups, {1, dilation});
    return squeeze(y, -2);  // [N, C_out, L_out]
  } catch (const Error& e) {
    throw Error(call + " (as conv_transpose2d on height-1 views): " + e.what());
  }
}

}  // namespace tapegrad
