// The loops of a unary elementwise op (y = f(x), same shape, no arguments), so its file holds
// only its math:
//   Tensor sin(const Tensor& x) {
//     return unary_forward(kSin, x, [](auto v) { return std::sin(v); });
//   }
//   void sin_backward(Tape& tape, const Node& node) {
//     // Y = sin X  =>  dX += dY ⊙ cos X
//     unary_backward_from_input(tape, node, [](auto dy, auto x) { return dy * std::cos(x); });
//   }
// The function objects run per element inside the loop and inline there, so the loop compiles
// (and vectorises, and rounds) as if written out in the op's file.
#pragma once

#include <cstdint>

#include <tapegrad/graph/op.h>
#include <tapegrad/graph/tape.h>
#include <tapegrad/ops/detail/op_util.h>

namespace tapegrad {

// Records y = f(x) as `def` and computes y[i] = f(x[i]).
template <class F>
Tensor unary_forward(const OpDef& def, const Tensor& x, F f) {
  Tensor y = x.tape().record(def, x.shape(), x.dtype(), {x});
  dispatch(y.dtype(), [&]<class T>() {
    const T* in = x.data<T>();
    T* out = output_data<T>(y);
    const int64_t n = y.numel();
    for (int64_t i = 0; i < n; ++i) out[i] = f(in[i]);
  });
  return y;
}

// dX[i] += term(dY[i], V[i]), V the input (`from_input`, the op saves saves::kInput0) or the
// output (`from_output`, saves::kOutput).
template <class F>
void unary_backward_from_input(Tape& tape, const Node& node, F term) {
  dispatch(node.dtype, [&]<class T>() {
    T* dx = tape.input_grad<T>(node, 0).to_add();
    if (dx == nullptr) return;
    const T* x = tape.input(node, 0).value_as<const T>();
    const T* dy = node.grad_as<const T>();
    const int64_t n = node.shape.numel();
    for (int64_t i = 0; i < n; ++i) dx[i] += term(dy[i], x[i]);
  });
}

template <class F>
void unary_backward_from_output(Tape& tape, const Node& node, F term) {
  dispatch(node.dtype, [&]<class T>() {
    T* dx = tape.input_grad<T>(node, 0).to_add();
    if (dx == nullptr) return;
    const T* y = node.value_as<const T>();
    const T* dy = node.grad_as<const T>();
    const int64_t n = node.shape.numel();
    for (int64_t i = 0; i < n; ++i) dx[i] += term(dy[i], y[i]);
  });
}

}  // namespace tapegrad
