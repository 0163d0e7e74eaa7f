// The loops of a broadcasting binary elementwise op, so its file holds only its math: per element
// (binary_forward / binary_backward: the logical ops, maximum and minimum), or a chunk at a time
// through vector kernels (binary_forward_rows / binary_backward_rows: pow with a tensor exponent,
// atan2, fmod, remainder, logaddexp):
//   Tensor atan2(const Tensor& a, const Tensor& b) {
//     return binary_forward_rows(kAtan2, a, b, []<class T>(const T* y, const T* x, T* out,
//                                                          int64_t n) { vmath::map(...); });
//   }
//   void atan2_backward(Tape& tape, const Node& node) {
//     binary_backward_rows(tape, node, []<class T>(const T* a, const T* b, const T* y,
//                                                  const T* dy, T* ga, T* gb, int64_t n) {
//       ... n dA terms into ga, n dB terms into gb ...
//     });
//   }
// Each gradient term is formed over the output and summed over the dims its operand was
// broadcast along, as torch does.
#pragma once

#include <array>
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

// The outputs a chunked loop below hands its kernel at once: two operands' worth stays in L1.
inline constexpr int64_t kBinaryChunk = 256;

// chunk(o, a, b, n) for consecutive runs of `out`, o the run's first output and n <= kBinaryChunk,
// with a and b the operands' values at those outputs: the operands themselves where they run
// contiguously along out, else copies gathered along the broadcast (a row at a time when out's
// rows are long, across rows when they are short).
template <class T, class F>
void for_each_binary_chunk(const T* av, const Shape& a_shape, const T* bv, const Shape& b_shape,
                           const Shape& out, F chunk) {
  const int64_t n = out.numel();
  if (a_shape.numel() == n && b_shape.numel() == n) {
    for (int64_t o = 0; o < n; o += kBinaryChunk) {
      chunk(o, av + o, bv + o, n - o < kBinaryChunk ? n - o : kBinaryChunk);
    }
    return;
  }
  alignas(64) T a_run[kBinaryChunk];
  alignas(64) T b_run[kBinaryChunk];
  const Strides as = broadcast_strides(a_shape, out), bs = broadcast_strides(b_shape, out);
  const std::array<int64_t, kMaxRank> dims = padded_dims(out);
  const int64_t row = dims[kMaxRank - 1];
  if (row >= kBinaryChunk / 4) {
    // A run along the row: the operand itself (step 1), its one value repeated (step 0).
    auto run = [](const T* p, int64_t step, int64_t len, T* buffer) -> const T* {
      if (step == 1) return p;
      for (int64_t i = 0; i < len; ++i) buffer[i] = p[i * step];
      return buffer;
    };
    const int64_t a_step = as[kMaxRank - 1], b_step = bs[kMaxRank - 1];
    for_each_strided_row<2>(dims, {&as, &bs}, [&](int64_t o, const std::array<int64_t, 2>& base) {
      for (int64_t s = 0; s < row; s += kBinaryChunk) {
        const int64_t len = row - s < kBinaryChunk ? row - s : kBinaryChunk;
        chunk(o + s, run(av + base[0] + s * a_step, a_step, len, a_run),
              run(bv + base[1] + s * b_step, b_step, len, b_run), len);
      }
    });
    return;
  }
  int64_t k = 0;
  for_each_broadcast(out, as, bs, [&](int64_t o, int64_t i, int64_t j) {
    a_run[k] = av[i];
    b_run[k] = bv[j];
    if (++k == kBinaryChunk) {
      chunk(o + 1 - k, a_run, b_run, k);
      k = 0;
    }
  });
  if (k > 0) chunk(n - k, a_run, b_run, k);
}

// Records y = f(a, b) as `def` (as binary_forward), computed a chunk at a time by
// rows(a, b, y, n) over n contiguous elements of each: a vector kernel such as vmath::map.
template <class Rows>
Tensor binary_forward_rows(const OpDef& def, const Tensor& a, const Tensor& b, Rows rows) {
  check_same_dtype(def.name, a, b);
  const Shape out = broadcast_shape(def.name, a, "and", b);
  Tensor y = a.tape().record(def, out, a.dtype(), {a, b});
  dispatch(y.dtype(), [&]<class T>() {
    T* yv = output_data<T>(y);
    for_each_binary_chunk(
        a.data<T>(), a.shape(), b.data<T>(), b.shape(), out,
        [&](int64_t o, const T* ac, const T* bc, int64_t n) { rows(ac, bc, yv + o, n); });
  });
  return y;
}

// dA += reduce(gA) and dB += reduce(gB), the terms computed a chunk at a time by
// terms(a, b, y, dy, ga, gb, n): n terms into ga and gb (either null when its input needs no
// gradient) from n contiguous elements of A, B, Y (null unless the op saves it) and dY. For ops
// whose terms call vector kernels (vmath), as binary_backward's per-element ones cannot.
template <class Terms>
void binary_backward_rows(Tape& tape, const Node& node, Terms terms) {
  dispatch(node.dtype, [&]<class T>() {
    const Node& a = tape.input(node, 0);
    const Node& b = tape.input(node, 1);
    const T* yv = node.value_as<const T>();
    const T* dy = node.grad_as<const T>();
    const Shape out = node.shape;
    T* d[2] = {tape.input_grad<T>(node, 0).to_add(), tape.input_grad<T>(node, 1).to_add()};
    const Shape shapes[2] = {a.shape, b.shape};
    // Each term adds into its gradient where the input covers out, else fills scratch to reduce.
    T* sink[2] = {nullptr, nullptr};
    for (int k = 0; k < 2; ++k) {
      if (d[k] != nullptr && shapes[k].numel() != out.numel()) {
        sink[k] = tape.arena().allocate_array<T>(out.numel());
      }
    }
    alignas(64) T g[2][kBinaryChunk];
    for_each_binary_chunk(a.value_as<const T>(), a.shape, b.value_as<const T>(), b.shape, out,
                          [&](int64_t o, const T* ac, const T* bc, int64_t n) {
                            terms(ac, bc, yv == nullptr ? nullptr : yv + o, dy + o,
                                  d[0] == nullptr ? nullptr : g[0],
                                  d[1] == nullptr ? nullptr : g[1], n);
                            for (int k = 0; k < 2; ++k) {
                              if (d[k] == nullptr) continue;
                              if (sink[k] == nullptr) {
                                for (int64_t i = 0; i < n; ++i) d[k][o + i] += g[k][i];
                              } else {
                                for (int64_t i = 0; i < n; ++i) sink[k][o + i] = g[k][i];
                              }
                            }
                          });
    for (int k = 0; k < 2; ++k) {
      if (sink[k] != nullptr) reduce_broadcast(sink[k], out, d[k], shapes[k]);
    }
  });
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
