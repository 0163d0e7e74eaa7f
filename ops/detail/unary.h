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

#include <algorithm>
#include <cstdint>

#include <tapegrad/graph/op.h>
#include <tapegrad/graph/tape.h>
#include <tapegrad/kernels/vmath/vmath.h>
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
// Where nothing was written to dX yet, dX = 0 + term: the bits adding into a zero-filled buffer
// gives (a −0 term ends +0), without the fill's pass over memory.
template <class T, class F>
void unary_backward_loop(InputGrad<T> g, const T* v, const T* dy, int64_t n, F term) {
  T* dx = g.data;
  if (g.overwrite) {
    for (int64_t i = 0; i < n; ++i) dx[i] = T(0) + term(dy[i], v[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) dx[i] += term(dy[i], v[i]);
  }
}

template <class F>
void unary_backward_from_input(Tape& tape, const Node& node, F term) {
  dispatch(node.dtype, [&]<class T>() {
    const InputGrad<T> g = tape.input_grad<T>(node, 0);
    if (g.data == nullptr) return;
    unary_backward_loop(g, tape.input(node, 0).value_as<const T>(), node.grad_as<const T>(),
                        node.shape.numel(), term);
  });
}

template <class F>
void unary_backward_from_output(Tape& tape, const Node& node, F term) {
  dispatch(node.dtype, [&]<class T>() {
    const InputGrad<T> g = tape.input_grad<T>(node, 0);
    if (g.data == nullptr) return;
    unary_backward_loop(g, node.value_as<const T>(), node.grad_as<const T>(), node.shape.numel(),
                        term);
  });
}

// Records y = f(x) as `def`, computed by the kernel vmath::map (kernels/vmath/vmath.h: SLEEF's
// vector functions at AVX2 and AVX-512, the C library's at baseline).
inline Tensor unary_forward_kernel(const OpDef& def, const Tensor& x, vmath::Unary f) {
  Tensor y = x.tape().record(def, x.shape(), x.dtype(), {x});
  dispatch(y.dtype(), [&]<class T>() { vmath::map(f, x.data<T>(), output_data<T>(y), y.numel()); });
  return y;
}

// dX += term(dY[i], V[i], t[i]) with t = f(pre(V[i])) computed by vmath::map, V the input or (with
// from_output) the output: a derivative with a transcendental function of the input (sin's cos X),
// in chunks small enough to stay in L1.
template <class Pre, class F>
void unary_backward_kernel(Tape& tape, const Node& node, bool from_output, Pre pre, vmath::Unary f,
                           F term) {
  dispatch(node.dtype, [&]<class T>() {
    const InputGrad<T> g = tape.input_grad<T>(node, 0);
    if (g.data == nullptr) return;
    const T* v = from_output ? node.value_as<const T>() : tape.input(node, 0).value_as<const T>();
    const T* dy = node.grad_as<const T>();
    const int64_t n = node.shape.numel();
    constexpr int64_t kChunk = 512;
    alignas(64) T t[kChunk];
    for (int64_t s = 0; s < n; s += kChunk) {
      const int64_t len = std::min(kChunk, n - s);
      for (int64_t i = 0; i < len; ++i) t[i] = pre(v[s + i]);
      vmath::map(f, t, t, len);
      T* dx = g.data + s;
      if (g.overwrite) {
        for (int64_t i = 0; i < len; ++i) dx[i] = T(0) + term(dy[s + i], t[i]);
      } else {
        for (int64_t i = 0; i < len; ++i) dx[i] += term(dy[s + i], t[i]);
      }
    }
  });
}

}  // namespace tapegrad
