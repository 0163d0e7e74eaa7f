// lerp: start + weight·(end − start) with a scalar or a tensor weight (torch.lerp), computed as
// torch's CPU kernel computes it, with its gradients.
#include <cmath>

#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/detail/binary.h>
#include <tapegrad/ops/detail/broadcast.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

// torch 1.13's lerp: from start when w < 0.5 (a negative weight too), else from end, each one
// fused multiply-add, as its AVX2 build compiles it.
template <class T>
T lerp_value(T start, T end, T w) {
  const T diff = end - start;
  return w < T(0.5) ? std::fma(w, diff, start) : std::fma(w - T(1), diff, end);
}

struct LerpState {
  double weight;
};

// Calls f(o, i_start, i_end, i_weight) for every element of `out`, each operand read broadcast.
template <class F>
void for_each_broadcast3(const Shape& out, const Shape& a, const Shape& b, const Shape& c, F&& f) {
  const Strides sa = broadcast_strides(a, out), sb = broadcast_strides(b, out),
                sc = broadcast_strides(c, out);
  const int64_t n = out.rank() == 0 ? 1 : out[out.rank() - 1];
  const int64_t la = sa[kMaxRank - 1], lb = sb[kMaxRank - 1], lc = sc[kMaxRank - 1];
  for_each_strided_row<3>(padded_dims(out), {&sa, &sb, &sc},
                          [&](int64_t o, const std::array<int64_t, 3>& base) {
                            for (int64_t i = 0; i < n; ++i) {
                              f(o + i, base[0] + i * la, base[1] + i * lb, base[2] + i * lc);
                            }
                          });
}

void lerp_scalar_backward(Tape& tape, const Node& node) {
  // Y = A + w·(B − A)  =>  dA += reduce(dY·(1 − w)); dB += reduce(dY·w)
  dispatch(node.dtype, [&]<class T>() {
    const double w = node.state_as<LerpState>().weight;
    const T* dy = node.grad_as<const T>();
    const Shape out = node.shape;
    for (int k = 0; k < 2; ++k) {
      T* d = tape.input_grad<T>(node, k).to_add();
      if (d == nullptr) continue;
      const T factor = static_cast<T>(k == 0 ? 1.0 - w : w);
      const Shape& shape = tape.input(node, k).shape;
      const int64_t n = out.numel();
      if (shape.numel() == n) {  // nothing to reduce: straight into the gradient
        for (int64_t i = 0; i < n; ++i) d[i] += dy[i] * factor;
        continue;
      }
      T* term = tape.arena().allocate_array<T>(n);
      for (int64_t i = 0; i < n; ++i) term[i] = dy[i] * factor;
      reduce_broadcast(term, out, d, shape);
    }
  });
}

void lerp_scalar_grad_graph(GradGraph& g) {
  // Y = A + w·(B − A)  =>  dA += reduce(dY·(1 − w)); dB += reduce(dY·w)
  const double w = g.state<LerpState>().weight;
  const Shape a = g.input(0).shape(), b = g.input(1).shape();
  if (g.needs(0)) g.add(0, sum_to_size(scale(g.grad(), 1.0 - w), a));
  if (g.needs(1)) g.add(1, sum_to_size(scale(g.grad(), w), b));
}

void lerp_backward(Tape& tape, const Node& node) {
  // Y = A + W ⊙ (B − A)  =>  dA += reduce(dY ⊙ (1 − W)); dB += reduce(dY ⊙ W);
  // dW += reduce(dY ⊙ (B − A))
  dispatch(node.dtype, [&]<class T>() {
    const T* a = tape.input(node, 0).value_as<const T>();
    const T* b = tape.input(node, 1).value_as<const T>();
    const T* w = tape.input(node, 2).value_as<const T>();
    const T* dy = node.grad_as<const T>();
    const Shape out = node.shape;
    const Shape sa = tape.input(node, 0).shape, sb = tape.input(node, 1).shape,
                sw = tape.input(node, 2).shape;
    for (int k = 0; k < 3; ++k) {
      T* d = tape.input_grad<T>(node, k).to_add();
      if (d == nullptr) continue;
      T* term = tape.arena().allocate_array<T>(out.numel());
      for_each_broadcast3(out, sa, sb, sw, [&](int64_t o, int64_t ia, int64_t ib, int64_t iw) {
        if (k == 0) term[o] = dy[o] * (T(1) - w[iw]);
        if (k == 1) term[o] = dy[o] * w[iw];
        if (k == 2) term[o] = dy[o] * (b[ib] - a[ia]);
      });
      reduce_broadcast(term, out, d, tape.input(node, k).shape);
    }
  });
}

void lerp_grad_graph(GradGraph& g) {
  // Y = A + W ⊙ (B − A)  =>  dA += reduce(dY ⊙ (1 − W)); dB += reduce(dY ⊙ W);
  // dW += reduce(dY ⊙ (B − A))
  const Tensor a = g.input(0), b = g.input(1), w = g.input(2);
  const Shape sa = a.shape(), sb = b.shape(), sw = w.shape();
  if (g.needs(0)) g.add(0, sum_to_size(mul(g.grad(), add_scalar(neg(w), 1.0)), sa));
  if (g.needs(1)) g.add(1, sum_to_size(mul(g.grad(), w), sb));
  if (g.needs(2)) g.add(2, sum_to_size(mul(g.grad(), sub(b, a)), sw));
}

const OpDef kLerpScalar{.name = "lerp_scalar",
                        .backward = lerp_scalar_backward,
                        .arguments =
                            [](const Tape&, const Node& n) {
                              return "weight " + number_text(n.state_as<LerpState>().weight);
                            },
                        .saves = saves::kNothing,
                        .grad_graph = lerp_scalar_grad_graph};
TAPEGRAD_REGISTER_OP(kLerpScalar);

const OpDef kLerp{.name = "lerp",
                  .backward = lerp_backward,
                  .saves = saves::kInput0 | saves::kInput1 | saves::kInput2,
                  .grad_graph = lerp_grad_graph};
TAPEGRAD_REGISTER_OP(kLerp);

}  // namespace

Tensor lerp(const Tensor& start, const Tensor& end, double weight) {
  check_same_dtype("lerp", start, end);
  check_scalar_argument("lerp", start, "weight", weight);
  const Shape out = broadcast_shape("lerp", start, "and", end);
  Tensor y = start.tape().record(kLerpScalar, out, start.dtype(), {start, end}, LerpState{weight});
  dispatch(y.dtype(), [&]<class T>() {
    T* yv = output_data<T>(y);
    const T w = static_cast<T>(weight);
    // A chunk at a time over contiguous runs, so that the loop vectorises.
    for_each_binary_chunk(start.data<T>(), start.shape(), end.data<T>(), end.shape(), out,
                          [&](int64_t o, const T* a, const T* b, int64_t n) {
                            for (int64_t i = 0; i < n; ++i) yv[o + i] = lerp_value(a[i], b[i], w);
                          });
  });
  return y;
}

Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight) {
  check_same_dtype("lerp", start, end);
  check_same_dtype("lerp", start, weight);
  const Shape ab = broadcast_shape("lerp", start, "and", end);
  bool ok = true;
  const Shape out = broadcast_shape(ab, weight.shape(), &ok);
  if (!ok) {
    throw_binary_error("lerp", start, "and", end,
                       "cannot broadcast with weight " + Shape(weight.shape()).str());
  }
  Tensor y = start.tape().record(kLerp, out, start.dtype(), {start, end, weight});
  dispatch(y.dtype(), [&]<class T>() {
    const T* a = start.data<T>();
    const T* b = end.data<T>();
    const T* w = weight.data<T>();
    T* yv = output_data<T>(y);
    for_each_broadcast3(out, start.shape(), end.shape(), weight.shape(),
                        [&](int64_t o, int64_t ia, int64_t ib, int64_t iw) {
                          yv[o] = lerp_value(a[ia], b[ib], w[iw]);
                        });
  });
  return y;
}

}  // namespace tapegrad
