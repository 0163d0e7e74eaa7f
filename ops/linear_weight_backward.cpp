// linear_weight_backward: linear's weight gradient dYᵀ·X as an op, linear's recorded backward.
#include <tapegrad/kernels/gemm/gemm.h>
#include <tapegrad/ops/backward_ops.h>
#include <tapegrad/ops/detail/layout_copy.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void linear_weight_backward_kernel(Tape& tape, const Node& node) {
  // Z = dYᵀ·X  =>  d(dY) += X·dZᵀ, dX += dY·dZ   (rows flattened)
  dispatch(node.dtype, [&]<class T>() {
    const Node& dy = tape.input(node, 0);
    const Node& x = tape.input(node, 1);
    const int64_t rows = layout::outer_size(x.shape, x.shape.rank() - 1), out = node.shape[0],
                  in = node.shape[1];
    const T* dz = node.grad_as<T>();
    if (const InputGrad<T> d = tape.input_grad<T>(node, 0); d.data != nullptr) {
      gemm(matrix(d.data, rows, out), matrix(x.value_as<T>(), rows, in), matrix(dz, out, in).t(),
           {.accumulate = !d.overwrite});
    }
    if (const InputGrad<T> d = tape.input_grad<T>(node, 1); d.data != nullptr) {
      gemm(matrix(d.data, rows, in), matrix(dy.value_as<T>(), rows, out), matrix(dz, out, in),
           {.accumulate = !d.overwrite});
    }
  });
}

void linear_weight_backward_grad_graph(GradGraph& g) {
  // Z = dYᵀ·X  =>  d(dY) += linear(X, dZ) = X·dZᵀ, dX += dY·dZ
  const Tensor dy = g.input(0), x = g.input(1);
  if (g.needs(0)) g.add(0, linear(x, g.grad()));
  if (g.needs(1)) g.add(1, matmul(dy, g.grad()));
}

const OpDef kLinearWeightBackward{.name = "linear_weight_backward",
                                  .backward = linear_weight_backward_kernel,
                                  .saves = saves::kInput0 | saves::kInput1,
                                  .grad_graph = linear_weight_backward_grad_graph};
TAPEGRAD_REGISTER_OP(kLinearWeightBackward);

}  // namespace

Tensor linear_weight_backward(const Tensor& dy, const Tensor& x) {
  check_same_dtype("linear_weight_backward", dy, x);
  const Shape ds = dy.shape(), xs = x.shape();
  const bool leading_match = ds.rank() == xs.rank() && ds.rank() >= 1 &&
                             std::equal(ds.dims().begin(), ds.dims().end() - 1, xs.dims().begin());
  if (!leading_match) {
    throw_binary_error("linear_weight_backward", dy, "and", x,
                       "dy [.., out] and x [.., in] need the same leading dims");
  }
  const int64_t rows = layout::outer_size(xs, xs.rank() - 1), out = ds[ds.rank() - 1],
                in = xs[xs.rank() - 1];
  Tensor z = x.tape().record(kLinearWeightBackward, Shape{out, in}, x.dtype(), {dy, x});
  dispatch(z.dtype(), [&]<class T>() {
    gemm(matrix(output_data<T>(z), out, in), matrix(dy.data<T>(), rows, out).t(),
         matrix(x.data<T>(), rows, in));
  });
  return z;
}

}  // namespace tapegrad
