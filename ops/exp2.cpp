// exp2: elementwise 2ˣ, torch.exp2.
#include <cmath>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

constexpr double kLn2 = 0.6931471805599453;  // M_LN2, as torch's formula
void exp2_backward(Tape& tape, const Node& node) {
  // Y = 2ˣ  =>  dX += (dY ⊙ Y)·ln 2   (torch's order; reads the output)
  dispatch(node.dtype, [&]<class T>() {
    T* dx = tape.input_grad<T>(node, 0).to_add();
    if (dx == nullptr) return;
    const T* y = node.value_as<const T>();
    const T* dy = node.grad_as<const T>();
    const int64_t n = node.shape.numel();
    for (int64_t i = 0; i < n; ++i) dx[i] += dy[i] * y[i] * static_cast<T>(kLn2);
  });
}

void exp2_grad_graph(GradGraph& g) {
  // Y = 2ˣ  =>  dX += (dY ⊙ Y)·ln 2
  g.add(0, scale(mul(g.grad(), g.output()), kLn2));
}

const OpDef kExp2{.name = "exp2",
                  .backward = exp2_backward,
                  .saves = saves::kOutput,
                  .grad_graph = exp2_grad_graph};
TAPEGRAD_REGISTER_OP(kExp2);

}  // namespace

Tensor exp2(const Tensor& x) {
  Tensor y = x.tape().record(kExp2, x.shape(), x.dtype(), {x});
  dispatch(y.dtype(), [&]<class T>() {
    const T* in = x.data<T>();
    T* out = output_data<T>(y);
    const int64_t n = y.numel();
    for (int64_t i = 0; i < n; ++i) {
      const T v = in[i];
      out[i] = std::exp2(v);
    }
  });
  return y;
}

}  // namespace tapegrad
