// linear: nn.Linear's y = x·Wᵀ + b (a GEMM over x's rows; one row: a matrix-vector product).
#include <tapegrad/kernels/gemm/gemm.h>
#include <tapegrad/kernels/gemm/gemv.h>
#include <tapegrad/ops/backward_ops.h>
#include <tapegrad/ops/detail/eigen_maps.h>
#include <tapegrad/ops/detail/layout_copy.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

#include <type_traits>

namespace tapegrad {

namespace {

void linear_backward(Tape& tape, const Node& node) {
  // Y = X·Wᵀ + b  =>  dX += dY·W, dW += dYᵀ·X, db += Σ_rows dY
  dispatch(node.dtype, [&]<class T>() {
    const Node& x = tape.input(node, 0);
    const Node& w = tape.input(node, 1);
    const int64_t out = w.shape[0], in = w.shape[1];
    const int64_t rows = layout::outer_size(x.shape, x.shape.rank() - 1);
    const T* dy = node.grad_as<T>();
    // The products write every element: into a gradient that is still zero, C = A·B (BLAS's
    // beta 0) instead of zeroing it first (InputGrad::overwrite).
    if (const InputGrad<T> dx = tape.input_grad<T>(node, 0); dx.data != nullptr) {
      gemm(matrix(dx.data, rows, in), matrix(dy, rows, out), matrix(w.value_as<T>(), out, in),
           {.accumulate = !dx.overwrite});
    }
    if (const InputGrad<T> dw = tape.input_grad<T>(node, 1); dw.data != nullptr) {
      gemm(matrix(dw.data, out, in), matrix(dy, rows, out).t(), matrix(x.value_as<T>(), rows, in),
           {.accumulate = !dw.overwrite});
    }
    if (node.num_inputs == 3) {
      if (T* d = tape.input_grad<T>(node, 2).to_add()) {
        ArrayMap<T> db(d, out);
        for (int64_t r = 0; r < rows; ++r) db += ConstArrayMap<T>(node.grad_as<T>() + r * out, out);
      }
    }
  });
}

void linear_grad_graph(GradGraph& g) {
  // Y = X·Wᵀ + b  =>  dX += dY·W, dW += dYᵀ·X (rows flattened), db += Σ_rows dY
  const Tensor x = g.input(0), w = g.input(1);
  const int64_t out = w.shape()[0];
  if (g.needs(0)) g.add(0, matmul(g.grad(), w));
  if (g.needs(1)) g.add(1, linear_weight_backward(g.grad(), x));
  if (g.node().num_inputs == 3 && g.needs(2)) g.add(2, sum_to_size(g.grad(), Shape{out}));
}

const OpDef kLinear{.name = "linear",
                    .backward = linear_backward,
                    .saves = saves::kInput0 | saves::kInput1,
                    .grad_graph = linear_grad_graph};
TAPEGRAD_REGISTER_OP(kLinear);

[[noreturn]] void throw_linear_error(const Tensor& x, const Tensor& weight,
                                     const std::string& what) {
  throw Error("linear: " + describe("x", x) + " x " + describe("weight", weight) + ": " + what);
}

}  // namespace

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  if (x.dtype() != weight.dtype()) {
    throw_linear_error(x, weight,
                       std::string("dtypes differ (") + dtype_name(x.dtype()) + " vs " +
                           dtype_name(weight.dtype()) + ")");
  }
  if (weight.rank() != 2) throw_linear_error(x, weight, "weight must be 2-D [out, in]");
  if (x.rank() == 0) throw_linear_error(x, weight, "x must have at least 1 dim");
  const int64_t out = weight.shape()[0], in = weight.shape()[1];
  if (x.shape()[x.rank() - 1] != in) {
    throw_linear_error(
        x, weight,
        "in features " + std::to_string(x.shape()[x.rank() - 1]) + " != " + std::to_string(in));
  }
  if (bias.defined()) {
    if (bias.dtype() != x.dtype()) {
      throw_linear_error(x, weight,
                         describe("bias", bias) + " is " + dtype_name(bias.dtype()) + ", not " +
                             dtype_name(x.dtype()));
    }
    if (bias.shape() != Shape{out}) {
      throw_linear_error(
          x, weight, describe("bias", bias) + " should have shape [" + std::to_string(out) + "]");
    }
  }
  Shape shape = x.shape();
  shape[shape.rank() - 1] = out;
  const int64_t rows = layout::outer_size(x.shape(), x.rank() - 1);
  Tensor y = bias.defined() ? x.tape().record(kLinear, shape, x.dtype(), {x, weight, bias})
                            : x.tape().record(kLinear, shape, x.dtype(), {x, weight});
  dispatch(y.dtype(), [&]<class T>() {
    if constexpr (std::is_same_v<T, float>) {
      // One row (a decode step): a matrix-vector product reads each weight once.
      if (rows == 1) {
        gemv(weight.data<T>(), x.data<T>(), bias.defined() ? bias.data<T>() : nullptr,
             output_data<T>(y), out, in);
        return;
      }
    }
    MatrixMap<T> Y(output_data<T>(y), rows, out);
    if (bias.defined()) {
      Y.rowwise() = Eigen::Map<const Eigen::Matrix<T, 1, Eigen::Dynamic>>(bias.data<T>(), out);
    }
    // Y (+)= X·Wᵀ, on top of the bias rows when there is a bias
    gemm(matrix(Y.data(), rows, out), matrix(x.data<T>(), rows, in),
         matrix(weight.data<T>(), out, in).t(), {.accumulate = bias.defined()});
  });
  return y;
}

}  // namespace tapegrad
