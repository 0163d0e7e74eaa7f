// conv2d_weight_grad: conv2d's gradient w.r.t. its weight as an op (Σ_n dY·im2col(X)ᵀ,
// kernels/conv/conv.h), which conv2d's and conv_transpose2d's recorded backwards record.
#include <tapegrad/kernels/conv/conv.h>
#include <tapegrad/ops/detail/conv.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void conv2d_weight_grad_backward(Tape& tape, const Node& node) {
  // V = Σ_n D·im2col(X)ᵀ  =>  dD += dV ⋆ X (conv2d with weight dV), dX += col2im(dVᵀ·D)
  dispatch(node.dtype, [&]<class T>() {
    const ConvGeometry& g = detail::conv_geometry(node);
    const T* dv = node.grad_as<T>();
    if (const InputGrad<T> dd = tape.input_grad<T>(node, 0); dd.data != nullptr) {
      conv2d_forward(g, tape.input(node, 1).value_as<T>(), dv, static_cast<const T*>(nullptr),
                     dd.data, !dd.overwrite);
    }
    if (T* dx = tape.input_grad<T>(node, 1).to_add()) {
      conv2d_backward_input(g, tape.input(node, 0).value_as<T>(), dv, dx);
    }
  });
}

void conv2d_weight_grad_grad_graph(GradGraph& g) {
  // V = Σ_n D·im2col(X)ᵀ  =>  dD += conv2d(X, dV), dX += conv_transpose2d(D, dV)
  const ConvGeometry geo = detail::conv_geometry(g.node());
  const Tensor d = g.input(0), x = g.input(1), dv = g.grad();
  if (g.needs(0)) g.add(0, detail::conv2d_recorded(x, dv, Tensor(), geo));
  if (g.needs(1)) g.add(1, detail::conv_transpose2d_recorded(d, dv, Tensor(), geo));
}

const OpDef kConv2dWeightGrad{
    .name = "conv2d_weight_grad",
    .backward = conv2d_weight_grad_backward,
    .arguments = [](const Tape&,
                    const Node& n) { return detail::conv_arguments(detail::conv_geometry(n)); },
    .saves = saves::kInput0 | saves::kInput1,
    .grad_graph = conv2d_weight_grad_grad_graph};
TAPEGRAD_REGISTER_OP(kConv2dWeightGrad);

}  // namespace

namespace detail {

Tensor conv2d_weight_grad_recorded(const Tensor& dy, const Tensor& x, const ConvGeometry& g) {
  const Shape out{g.out_channels, g.group_in(), g.kernel_h, g.kernel_w};
  Tensor v = dy.tape().record(kConv2dWeightGrad, out, dy.dtype(), {dy, x}, g);
  dispatch(v.dtype(), [&]<class T>() {
    conv2d_backward_weight(g, dy.data<T>(), x.data<T>(), output_data<T>(v), false);
  });
  return v;
}

}  // namespace detail

}  // namespace tapegrad
