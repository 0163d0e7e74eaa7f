// conv_transpose2d: torch.nn.functional.conv_transpose2d, which is conv2d's gradient w.r.t. its
// input (a GEMM per image and group, then col2im: kernels/conv/conv.h); conv2d's recorded
// backward records it for that gradient.
#include <algorithm>

#include <tapegrad/kernels/conv/conv.h>
#include <tapegrad/ops/detail/conv.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

// The geometry is conv2d's seen from the forward this op is the input gradient of: the op's
// input is that conv2d's output (out_*), its output that conv2d's input (in_*).
void conv_transpose2d_backward(Tape& tape, const Node& node) {
  // Z = Wᵀ ⋆ A + b (conv2d's input gradient)  =>  dA += W ⋆ dZ (conv2d), dW += Σ_n A·im2col(dZ)ᵀ,
  //                                               db += Σ_{n,pixels} dZ
  dispatch(node.dtype, [&]<class T>() {
    const ConvGeometry& g = detail::conv_geometry(node);
    const T* dz = node.grad_as<T>();
    if (const InputGrad<T> da = tape.input_grad<T>(node, 0); da.data != nullptr) {
      conv2d_forward(g, dz, tape.input(node, 1).value_as<T>(), static_cast<const T*>(nullptr),
                     da.data, !da.overwrite);
    }
    if (const InputGrad<T> dw = tape.input_grad<T>(node, 1); dw.data != nullptr) {
      conv2d_backward_weight(g, tape.input(node, 0).value_as<T>(), dz, dw.data, !dw.overwrite);
    }
    if (node.num_inputs == 3) {
      if (T* db = tape.input_grad<T>(node, 2).to_add()) {
        channel_sums(dz, g.batch, g.in_channels, g.in_pixels(), db);
      }
    }
  });
}

void conv_transpose2d_grad_graph(GradGraph& g) {
  // Z = Wᵀ ⋆ A + b  =>  dA += conv2d(dZ, W), dW += conv2d_weight_grad(A, dZ), db += Σ_{n,h,w} dZ
  const ConvGeometry geo = detail::conv_geometry(g.node());
  const bool has_bias = g.node().num_inputs == 3;
  const Tensor a = g.input(0), w = g.input(1), dz = g.grad();
  if (g.needs(0)) g.add(0, detail::conv2d_recorded(dz, w, Tensor(), geo));
  if (g.needs(1)) g.add(1, detail::conv2d_weight_grad_recorded(a, dz, geo));
  if (has_bias && g.needs(2)) g.add(2, sum(dz, {0, 2, 3}));
}

const OpDef kConvTranspose2d{
    .name = "conv_transpose2d",
    .backward = conv_transpose2d_backward,
    .arguments = [](const Tape&,
                    const Node& n) { return detail::conv_arguments(detail::conv_geometry(n)); },
    .saves = saves::kInput0 | saves::kInput1,
    .grad_graph = conv_transpose2d_grad_graph};
TAPEGRAD_REGISTER_OP(kConvTranspose2d);

[[noreturn]] void fail_conv_transpose2d(const Tensor& input, const Tensor& weight,
                                        const std::string& what) {
  throw Error("conv_transpose2d: " + describe("input", input) + " x " + describe("weight", weight) +
              ": " + what);
}

std::string size2_text(Size2 v) {
  return std::to_string(v.h) + "×" + std::to_string(v.w);
}

}  // namespace

namespace detail {

Tensor conv_transpose2d_recorded(const Tensor& dy, const Tensor& w, const Tensor& b,
                                 const ConvGeometry& g) {
  const Shape out{g.batch, g.in_channels, g.in_h, g.in_w};
  Tensor z = b.defined() ? dy.tape().record(kConvTranspose2d, out, dy.dtype(), {dy, w, b}, g)
                         : dy.tape().record(kConvTranspose2d, out, dy.dtype(), {dy, w}, g);
  dispatch(z.dtype(), [&]<class T>() {
    T* zv = output_data<T>(z);
    std::fill_n(zv, z.numel(), T(0));
    conv2d_backward_input(g, dy.data<T>(), w.data<T>(), zv);
    if (b.defined()) add_channel_bias(zv, b.data<T>(), g.batch, g.in_channels, g.in_pixels());
  });
  return z;
}

}  // namespace detail

Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias, Size2 stride,
                        Size2 padding, Size2 output_padding, int64_t groups, Size2 dilation) {
  if (input.dtype() != weight.dtype()) {
    fail_conv_transpose2d(input, weight,
                          std::string("dtypes differ (") + dtype_name(input.dtype()) + " vs " +
                              dtype_name(weight.dtype()) + ")");
  }
  if (input.rank() != 3 && input.rank() != 4) {
    fail_conv_transpose2d(input, weight,
                          "input must be 4-D (batched) or 3-D (unbatched), got " +
                              std::to_string(input.rank()) + "-D");
  }
  if (weight.rank() != 4) {
    fail_conv_transpose2d(input, weight,
                          "weight must be 4-D [in_channels, out_channels / groups, kH, kW], got " +
                              std::to_string(weight.rank()) + "-D");
  }
  if (groups < 1)
    fail_conv_transpose2d(input, weight,
                          "groups must be at least 1, got " + std::to_string(groups));
  const auto at_least = [&](const char* name, Size2 v, int64_t least) {
    if (v.h < least || v.w < least) {
      fail_conv_transpose2d(input, weight,
                            std::string(name) + " must be at least " + std::to_string(least) +
                                ", got " + size2_text(v));
    }
  };
  at_least("stride", stride, 1);
  at_least("dilation", dilation, 1);
  at_least("padding", padding, 0);
  at_least("output_padding", output_padding, 0);
  if ((output_padding.h >= stride.h && output_padding.h >= dilation.h) ||
      (output_padding.w >= stride.w && output_padding.w >= dilation.w)) {
    fail_conv_transpose2d(input, weight,
                          "output_padding " + size2_text(output_padding) +
                              " must be smaller than the stride " + size2_text(stride) +
                              " or the dilation " + size2_text(dilation));
  }
  const bool batched = input.rank() == 4;
  const int c = batched ? 1 : 0;
  ConvGeometry g;
  g.batch = batched ? input.size(0) : 1;
  g.out_channels = input.size(c);  // the input is the output of the conv2d this transposes
  g.out_h = input.size(c + 1);
  g.out_w = input.size(c + 2);
  g.in_channels = weight.size(1) * groups;
  g.kernel_h = weight.size(2);
  g.kernel_w = weight.size(3);
  g.groups = groups;
  if (weight.numel() == 0) fail_conv_transpose2d(input, weight, "the weight has no elements");
  if (g.out_h < 1 || g.out_w < 1) fail_conv_transpose2d(input, weight, "the input has no pixels");
  if (weight.size(0) != g.out_channels) {
    fail_conv_transpose2d(input, weight,
                          "the input has " + std::to_string(g.out_channels) +
                              " channels but the weight's dim 0 (in_channels) is " +
                              std::to_string(weight.size(0)));
  }
  if (g.out_channels % groups != 0) {
    fail_conv_transpose2d(input, weight,
                          "groups " + std::to_string(groups) + " does not divide the input's " +
                              std::to_string(g.out_channels) + " channels");
  }
  if (bias.defined() && (bias.dtype() != input.dtype() || bias.shape() != Shape{g.in_channels})) {
    fail_conv_transpose2d(input, weight,
                          describe("bias", bias) + " should be " + dtype_name(input.dtype()) +
                              " [" + std::to_string(g.in_channels) + "] (weight's dim 1 x groups)");
  }
  g.stride_h = stride.h;
  g.stride_w = stride.w;
  g.pad_h = padding.h;
  g.pad_w = padding.w;
  g.dilation_h = dilation.h;
  g.dilation_w = dilation.w;
  g.in_h = (g.out_h - 1) * stride.h - 2 * padding.h + dilation.h * (g.kernel_h - 1) +
           output_padding.h + 1;
  g.in_w = (g.out_w - 1) * stride.w - 2 * padding.w + dilation.w * (g.kernel_w - 1) +
           output_padding.w + 1;
  if (g.in_h < 1 || g.in_w < 1) {
    fail_conv_transpose2d(input, weight,
                          "the output would be " + std::to_string(g.in_h) + "×" +
                              std::to_string(g.in_w) + " (padding " + size2_text(padding) +
                              " too large)");
  }
  if (batched) return detail::conv_transpose2d_recorded(input, weight, bias, g);
  const Tensor x = reshape(input, {1, g.out_channels, g.out_h, g.out_w});
  return reshape(detail::conv_transpose2d_recorded(x, weight, bias, g),
                 {g.in_channels, g.in_h, g.in_w});
}

}  // namespace tapegrad
