// mse_loss: the mean of squared differences between a prediction and a target of the same shape.
#include <tapegrad/ops/detail/broadcast.h>
#include <tapegrad/ops/detail/eigen_maps.h>
#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

void mse_loss_backward(Tape& tape, const Node& node) {
  // y = Σ (P − T)² / n  =>  dP += 2(P − T)/n · dy, dT −= 2(P − T)/n · dy
  dispatch(node.dtype, [&]<class T>() {
    const Node& p = tape.input(node, 0);
    const Node& t = tape.input(node, 1);
    const int64_t n = p.shape.numel();
    const T g = T(2) / static_cast<T>(n) * node.grad_as<T>()[0];
    const ConstArrayMap<T> P(p.value_as<T>(), n), Tg(t.value_as<T>(), n);
    if (T* d = tape.input_grad<T>(node, 0).to_add()) ArrayMap<T>(d, n) += g * (P - Tg);
    if (T* d = tape.input_grad<T>(node, 1).to_add()) ArrayMap<T>(d, n) -= g * (P - Tg);
  });
}

void mse_loss_grad_graph(GradGraph& g) {
  // Y = mean((P − T)²)  =>  dP += (2/n)·(P − T)·dY, dT += −(2/n)·(P − T)·dY
  const Tensor p = g.input(0), t = g.input(1);
  const Tensor d = mul(scale(p - t, 2.0 / static_cast<double>(p.numel())), g.grad());
  if (g.needs(0)) g.add(0, d);
  if (g.needs(1)) g.add(1, neg(d));
}

const OpDef kMseLoss{.name = "mse_loss",
                     .backward = mse_loss_backward,
                     .saves = saves::kInput0 | saves::kInput1,
                     .grad_graph = mse_loss_grad_graph};
TAPEGRAD_REGISTER_OP(kMseLoss);

}  // namespace

Tensor mse_loss(const Tensor& prediction, const Tensor& target) {
  check_same_dtype("mse_loss", prediction, target);
  if (prediction.shape() != target.shape()) {
    // torch broadcasts the two (with a warning): the loss of both expanded to the common shape.
    bool ok = false;
    const Shape out = broadcast_shape(prediction.shape(), target.shape(), &ok);
    if (!ok) {
      throw Error("mse_loss: " + describe("prediction", prediction) + " and " +
                  describe("target", target) + ": shapes must be equal or broadcast");
    }
    return mse_loss(prediction.shape() == out ? prediction : expand(prediction, out),
                    target.shape() == out ? target : expand(target, out));
  }
  Tensor y = prediction.tape().record(kMseLoss, Shape{}, prediction.dtype(), {prediction, target});
  dispatch(y.dtype(), [&]<class T>() {
    const int64_t n = prediction.numel();
    const ConstArrayMap<T> P(prediction.data<T>(), n), Tg(target.data<T>(), n);
    // Squared and summed in double; an empty pair gives 0/0 = NaN, as in torch.
    const double total = (P.template cast<double>() - Tg.template cast<double>()).square().sum();
    output_data<T>(y)[0] = static_cast<T>(total / static_cast<double>(n));
  });
  return y;
}

}  // namespace tapegrad
