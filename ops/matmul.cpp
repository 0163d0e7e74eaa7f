// matmul: the matrix product of 2-D operands (batched and 1-D forms come with the op set).
#include "ops/op_util.h"
#include "ops/ops.h"

namespace tapegrad {

namespace {

void matmul_backward(Tape& tape, const Node& node) {
  // Y = A·B  =>  dA += dY·Bᵀ, dB += Aᵀ·dY
  dispatch(node.dtype, [&]<class T>() {
    const Node& a = tape.input(node, 0);
    const Node& b = tape.input(node, 1);
    const int64_t m = a.shape[0], k = a.shape[1], n = b.shape[1];
    ConstMatrixMap<T> A(a.value_as<T>(), m, k), B(b.value_as<T>(), k, n);
    ConstMatrixMap<T> dY(node.grad_as<T>(), m, n);
    if (T* d = tape.grad_for<T>(node, 0, Shape{m, k})) {
      MatrixMap<T>(d, m, k).noalias() += dY * B.transpose();
    }
    if (T* d = tape.grad_for<T>(node, 1, Shape{k, n})) {
      MatrixMap<T>(d, k, n).noalias() += A.transpose() * dY;
    }
  });
}

const OpDef kMatmul{"matmul", matmul_backward};

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  check_same_dtype("matmul", a, b);
  if (a.rank() != 2 || b.rank() != 2) throw_binary_error("matmul", a, "x", b, "expected 2-D operands");
  if (a.shape()[1] != b.shape()[0]) {
    throw_binary_error("matmul", a, "x", b,
                       "inner dims " + std::to_string(a.shape()[1]) +
                           " != " + std::to_string(b.shape()[0]));
  }
  const int64_t m = a.shape()[0], k = a.shape()[1], n = b.shape()[1];
  Tensor y = a.tape().record(kMatmul, Shape{m, n}, a.dtype(), {a, b});
  dispatch(y.dtype(), [&]<class T>() {
    MatrixMap<T>(value_of<T>(y), m, n).noalias() =
        ConstMatrixMap<T>(value_of<T>(a), m, k) * ConstMatrixMap<T>(value_of<T>(b), k, n);
  });
  return y;
}

}  // namespace tapegrad
