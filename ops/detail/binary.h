// The loops of a broadcasting binary elementwise op whose formulas are per element (atan2,
// logaddexp, fmod, remainder, pow with a tensor exponent, the logical ops), so its file holds only
// its math:
//   Tensor atan2(const Tensor& a, const Tensor& b) {
//     return binary_forward(kAtan2, a, b, []<class T>(T x, T z) { return std::atan2(x, z); });
//   }
//   void atan2_backward(Tape& tape, const Node& node) {
//     binary_backward(tape, node, [](auto dy, auto a, auto b, auto) { ... dA term ... },
//                                 [](auto dy, auto a, auto b, auto) { ... dB term ... });
//   }
// Each gradient term is formed over the output and summed over the dims its operand was
// broadcast along, as torch does.
#pragma once

#include <cstdint>

#include <tapegrad/graph/op.h>
#include <tapegrad/graph/tape.h>
#include <tapegrad/ops/detail/broadcast.h>
#include <tapegrad/ops/detail/op_util.h>

namespace tapegrad {

// Records y = f(a, b) as `def`, a and b broadcast together (one dtype), and computes it.
template <class F>
Tensor binary_forward(const OpDef& def, const Tensor& a, const Tensor& b, F f) {
  check_same_dtype(def.name, a, b);
  const Shape out = broadcast_shape(def.name, a, "and", b);
  Tensor y = a.tape().record(def, out, a.dtype(), {a, b});
  dispatch(y.dtype(), [&]<class T>() {
    const T* av = a.data<T>();
    const T* bv = b.data<T>();
    T* yv = output_data<T>(y);
    for_each_broadcast(out, broadcast_strides(a.shape(), out), broadcast_strides(b.shape(), out),
                       [&](int64_t o, int64_t i, int64_t j) { yv[o] = f(av[i], bv[j]); });
  });
  return y;
}

// dA += reduce(term_a(dY, A, B, Y)) and dB += reduce(term_b(dY, A, B, Y)), each term per element
// of the output. The op saves both inputs, and its output when a term reads Y (a term that does
// not read it inlines to code that never loads it).
template <class FA, class FB>
void binary_backward(Tape& tape, const Node& node, FA term_a, FB term_b) {
  dispatch(node.dtype, [&]<class T>() {
    const Node& a = tape.input(node, 0);
    const Node& b = tape.input(node, 1);
    const T* av = a.value_as<const T>();
    const T* bv = b.value_as<const T>();
    const T* yv = node.value_as<const T>();
    const T* dy = node.grad_as<const T>();
    const Shape out = node.shape;
    const Strides as = broadcast_strides(a.shape, out), bs = broadcast_strides(b.shape, out);
    for (int k = 0; k < 2; ++k) {
      T* d = tape.input_grad<T>(node, k).to_add();
      if (d == nullptr) continue;
      const Shape shape = k == 0 ? a.shape : b.shape;
      const bool direct = shape.numel() == out.numel();
      T* term = direct ? d : tape.arena().allocate_array<T>(out.numel());
      for_each_broadcast(out, as, bs, [&](int64_t o, int64_t i, int64_t j) {
        const T g =
            k == 0 ? term_a(dy[o], av[i], bv[j], yv[o]) : term_b(dy[o], av[i], bv[j], yv[o]);
        if (direct) {
          term[o] += g;
        } else {
          term[o] = g;
        }
      });
      if (!direct) reduce_broadcast(term, out, d, shape);
    }
  });
}

}  // namespace tapegrad
