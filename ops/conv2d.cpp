// conv2d: torch.nn.functional.conv2d on kernels/conv/conv.h's kernels (oneDNN's direct kernels
// for float32 where linked, else im2col and one GEMM per image and group); the argument checks
// every convolution shares.
#include <tapegrad/kernels/conv/conv.h>
#include <tapegrad/ops/detail/conv.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void conv2d_backward(Tape& tape, const Node& node) {
  // Y = W ⋆ X + b  =>  dX += col2im(Wᵀ·dY), dW += Σ_n dY·im2col(X)ᵀ, db += Σ_{n,pixels} dY
  dispatch(node.dtype, [&]<class T>() {
    const ConvGeometry& g = detail::conv_geometry(node);
    const T* dy = node.grad_as<T>();
    if (const InputGrad<T> dx = tape.input_grad<T>(node, 0); dx.data != nullptr) {
      conv2d_backward_input(g, dy, tape.input(node, 1).value_as<T>(), dx.data, !dx.overwrite);
    }
    if (const InputGrad<T> dw = tape.input_grad<T>(node, 1); dw.data != nullptr) {
      conv2d_backward_weight(g, dy, tape.input(node, 0).value_as<T>(), dw.data, !dw.overwrite);
    }
    if (node.num_inputs == 3) {
      if (T* db = tape.input_grad<T>(node, 2).to_add()) {
        channel_sums(dy, g.batch, g.out_channels, g.out_pixels(), db);
      }
    }
  });
}

void conv2d_grad_graph(GradGraph& g) {
  // Y = W ⋆ X + b  =>  dX += conv_transpose2d(dY, W), dW += conv2d_weight_grad(dY, X),
  //                    db += Σ_{n,h,w} dY
  const ConvGeometry geo = detail::conv_geometry(g.node());
  const bool has_bias = g.node().num_inputs == 3;
  const Tensor x = g.input(0), w = g.input(1), dy = g.grad();
  if (g.needs(0)) g.add(0, detail::conv_transpose2d_recorded(dy, w, Tensor(), geo));
  if (g.needs(1)) g.add(1, detail::conv2d_weight_grad_recorded(dy, x, geo));
  if (has_bias && g.needs(2)) g.add(2, sum(dy, {0, 2, 3}));
}

const OpDef kConv2d{
    .name = "conv2d",
    .backward = conv2d_backward,
    .arguments = [](const Tape&,
                    const Node& n) { return detail::conv_arguments(detail::conv_geometry(n)); },
    .saves = saves::kInput0 | saves::kInput1,
    .grad_graph = conv2d_grad_graph};
TAPEGRAD_REGISTER_OP(kConv2d);

std::string conv_pair_text(int64_t h, int64_t w) {
  return std::to_string(h) + "×" + std::to_string(w);
}

// Checks the arguments against what they describe, for checked_conv_geometry's messages.
class ConvChecker {
 public:
  ConvChecker(const char* op, const Tensor& input, const Tensor& weight, int spatial)
      : op_(op), input_(input), weight_(weight), spatial_(spatial) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw Error(std::string(op_) + ": " + describe("input", input_) + " x " +
                describe("weight", weight_) + ": " + what);
  }
  // "2×1" in 2-D, "1" in 1-D (where only the columns are the caller's).
  std::string text(int64_t h, int64_t w) const {
    return spatial_ == 1 ? std::to_string(w) : conv_pair_text(h, w);
  }
  void at_least(const char* name, Size2 v, int64_t least) const {
    if (v.h < least || v.w < least) {
      fail(std::string(name) + " must be at least " + std::to_string(least) + ", got " +
           text(v.h, v.w));
    }
  }

 private:
  const char* op_;
  const Tensor& input_;
  const Tensor& weight_;
  int spatial_;
};

}  // namespace

namespace detail {

std::string conv_arguments(const ConvGeometry& g) {
  return "stride " + conv_pair_text(g.stride_h, g.stride_w) + ", padding " +
         conv_pair_text(g.pad_h, g.pad_w) + ", dilation " +
         conv_pair_text(g.dilation_h, g.dilation_w) + ", groups " + std::to_string(g.groups);
}

ConvGeometry checked_conv_geometry(const char* op, const Tensor& input, const Tensor& weight,
                                   const Tensor& bias, int spatial, const ConvArgs& args) {
  const ConvChecker check(op, input, weight, spatial);
  if (input.dtype() != weight.dtype()) {
    check.fail(std::string("dtypes differ (") + dtype_name(input.dtype()) + " vs " +
               dtype_name(weight.dtype()) + ")");
  }
  if (input.rank() != spatial + 1 && input.rank() != spatial + 2) {
    check.fail("input must be " + std::to_string(spatial + 2) + "-D (batched) or " +
               std::to_string(spatial + 1) + "-D (unbatched), got " + std::to_string(input.rank()) +
               "-D");
  }
  if (weight.rank() != spatial + 2) {
    check.fail("weight must be " + std::to_string(spatial + 2) + "-D [out_channels, " +
               "in_channels / groups, " + (spatial == 2 ? "kH, kW" : "k") + "], got " +
               std::to_string(weight.rank()) + "-D");
  }
  const bool batched = input.rank() == spatial + 2;
  const int c_dim = batched ? 1 : 0;
  ConvGeometry g;
  g.batch = batched ? input.size(0) : 1;
  g.in_channels = input.size(c_dim);
  g.in_h = spatial == 2 ? input.size(c_dim + 1) : 1;
  g.in_w = input.size(-1);
  g.out_channels = weight.size(0);
  g.kernel_h = spatial == 2 ? weight.size(2) : 1;
  g.kernel_w = weight.size(-1);
  g.groups = args.groups;
  if (g.groups < 1) check.fail("groups must be at least 1, got " + std::to_string(g.groups));
  check.at_least("stride", args.stride, 1);
  check.at_least("dilation", args.dilation, 1);
  if (g.out_channels < 1 || weight.size(1) < 1 || g.kernel_h < 1 || g.kernel_w < 1) {
    check.fail("the weight has no elements");
  }
  if (g.in_h < 1 || g.in_w < 1) check.fail("the input has no pixels");
  if (g.in_channels % g.groups != 0) {
    check.fail("groups " + std::to_string(g.groups) + " does not divide the input's " +
               std::to_string(g.in_channels) + " channels");
  }
  if (g.out_channels % g.groups != 0) {
    check.fail("groups " + std::to_string(g.groups) + " does not divide the weight's " +
               std::to_string(g.out_channels) + " out_channels (dim 0)");
  }
  if (weight.size(1) * g.groups != g.in_channels) {
    check.fail("the input has " + std::to_string(g.in_channels) +
               " channels but the weight expects " + std::to_string(weight.size(1)) + " x groups " +
               std::to_string(g.groups) + " = " + std::to_string(weight.size(1) * g.groups));
  }
  if (bias.defined()) {
    if (bias.dtype() != input.dtype()) {
      check.fail(describe("bias", bias) + " is " + dtype_name(bias.dtype()) + ", not " +
                 dtype_name(input.dtype()));
    }
    if (bias.shape() != Shape{g.out_channels}) {
      check.fail(describe("bias", bias) + " should have shape [" + std::to_string(g.out_channels) +
                 "] (the weight's out_channels)");
    }
  }
  g.stride_h = args.stride.h;
  g.stride_w = args.stride.w;
  g.dilation_h = args.dilation.h;
  g.dilation_w = args.dilation.w;
  const int64_t span_h = g.dilation_h * (g.kernel_h - 1) + 1;  // the dilated kernel
  const int64_t span_w = g.dilation_w * (g.kernel_w - 1) + 1;
  int64_t pad_after_h = 0, pad_after_w = 0;
  const std::string_view mode = args.padding.mode;
  if (mode == "same") {
    if (g.stride_h != 1 || g.stride_w != 1) {
      check.fail("padding \"same\" needs stride 1 (as torch), got stride " +
                 check.text(g.stride_h, g.stride_w));
    }
    // torch's _conv_padding_same: half the total before, the odd one after.
    g.pad_h = (span_h - 1) / 2;
    g.pad_w = (span_w - 1) / 2;
    pad_after_h = span_h - 1 - g.pad_h;
    pad_after_w = span_w - 1 - g.pad_w;
  } else if (mode == "valid" || mode.empty()) {
    g.pad_h = pad_after_h = args.padding.size.h;
    g.pad_w = pad_after_w = args.padding.size.w;
    if (g.pad_h < 0 || g.pad_w < 0) {
      check.fail("padding must be at least 0, got " + check.text(g.pad_h, g.pad_w));
    }
  } else {
    check.fail("padding \"" + std::string(mode) + "\" is not \"valid\", \"same\" or a number");
  }
  const int64_t padded_h = g.in_h + g.pad_h + pad_after_h;
  const int64_t padded_w = g.in_w + g.pad_w + pad_after_w;
  if (span_h > padded_h || span_w > padded_w) {
    check.fail("the kernel " + check.text(g.kernel_h, g.kernel_w) + " (dilated " +
               check.text(span_h, span_w) + ") is larger than the padded input " +
               check.text(padded_h, padded_w));
  }
  g.out_h = (padded_h - span_h) / g.stride_h + 1;
  g.out_w = (padded_w - span_w) / g.stride_w + 1;
  return g;
}

Tensor conv2d_recorded(const Tensor& x, const Tensor& w, const Tensor& b, const ConvGeometry& g) {
  const Shape out{g.batch, g.out_channels, g.out_h, g.out_w};
  Tensor y = b.defined() ? x.tape().record(kConv2d, out, x.dtype(), {x, w, b}, g)
                         : x.tape().record(kConv2d, out, x.dtype(), {x, w}, g);
  dispatch(y.dtype(), [&]<class T>() {
    conv2d_forward(g, x.data<T>(), w.data<T>(), b.defined() ? b.data<T>() : nullptr,
                   output_data<T>(y));
  });
  return y;
}

}  // namespace detail

Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, Size2 stride,
              ConvPadding padding, Size2 dilation, int64_t groups) {
  const ConvGeometry g = detail::checked_conv_geometry("conv2d", input, weight, bias, 2,
                                                       {stride, padding, dilation, groups});
  if (input.rank() == 4) return detail::conv2d_recorded(input, weight, bias, g);
  // Unbatched, as torch: a batch of one.
  const Tensor x = reshape(input, {1, g.in_channels, g.in_h, g.in_w});
  return reshape(detail::conv2d_recorded(x, weight, bias, g), {g.out_channels, g.out_h, g.out_w});
}

}  // namespace tapegrad
