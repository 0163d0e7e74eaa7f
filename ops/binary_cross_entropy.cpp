// binary_cross_entropy: torch's elementwise kernel, −(t·log x + (1 − t)·log(1 − x)) with each log
// clamped to >= −100, and torch's gradients (not the clamped composite's: at x = 0 or 1 the
// gradient stays (x − t) / 1e-12, as torch's).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <tapegrad/ops/detail/op_util.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/losses.h>
#include <tapegrad/ops/ops.h>

namespace tapegrad {

namespace {

// torch's EPSILON in binary_cross_entropy_backward: a float, so 1e-12 rounded to float32 in
// float64 too.
constexpr double kEpsilon = static_cast<double>(1e-12f);

void bce_backward(Tape& tape, const Node& node) {
  // Y = −(T·log X + (1 − T)·log(1 − X))  =>  dX += dY·(X − T) / max((1 − X)·X, ε),
  // dT += dY·(log(1 − X) − log X)
  dispatch(node.dtype, [&]<class T>() {
    const Node& x = tape.input(node, 0);
    const Node& t = tape.input(node, 1);
    const int64_t n = node.shape.numel();
    const T* X = x.value_as<T>();
    const T* Tg = t.value_as<T>();
    const T* dy = node.grad_as<const T>();
    if (T* d = tape.input_grad<T>(node, 0).to_add()) {
      for (int64_t i = 0; i < n; ++i) {
        d[i] += dy[i] * (X[i] - Tg[i]) / std::max((T(1) - X[i]) * X[i], T(kEpsilon));
      }
    }
    if (T* d = tape.input_grad<T>(node, 1).to_add()) {
      for (int64_t i = 0; i < n; ++i) d[i] += dy[i] * (std::log1p(-X[i]) - std::log(X[i]));
    }
  });
}

void bce_grad_graph(GradGraph& g) {
  // dX += dY·(X − T) / max((1 − X)·X, ε), dT += dY·(log(1 − X) − log X)
  const Tensor x = g.input(0), t = g.input(1);
  if (g.needs(0)) g.add(0, div(mul(g.grad(), x - t), clamp_min((1.0 - x) * x, kEpsilon)));
  if (g.needs(1)) g.add(1, mul(g.grad(), log1p(neg(x)) - log(x)));
}

const OpDef kBinaryCrossEntropy{.name = "binary_cross_entropy",
                                .backward = bce_backward,
                                .saves = saves::kInput0 | saves::kInput1,
                                .grad_graph = bce_grad_graph};
TAPEGRAD_REGISTER_OP(kBinaryCrossEntropy);

void check_unit_interval(const char* role, const Tensor& t) {
  const std::vector<double> v = t.values();
  for (size_t i = 0; i < v.size(); ++i) {
    if (!(v[i] >= 0 && v[i] <= 1)) {
      throw Error("binary_cross_entropy: " + describe(role, t) + ": " + role +
                  position_text(t.shape(), static_cast<int64_t>(i)) + " = " + std::to_string(v[i]) +
                  " is outside [0, 1]");
    }
  }
}

}  // namespace

Tensor binary_cross_entropy_elementwise(const Tensor& input, const Tensor& target) {
  check_same_dtype("binary_cross_entropy", input, target);
  if (input.shape() != target.shape()) {
    throw Error("binary_cross_entropy: " + describe("input", input) + " and " +
                describe("target", target) + ": shapes must be equal");
  }
  check_unit_interval("input", input);
  check_unit_interval("target", target);
  Tensor y =
      input.tape().record(kBinaryCrossEntropy, input.shape(), input.dtype(), {input, target});
  dispatch(y.dtype(), [&]<class T>() {
    const T* X = input.data<T>();
    const T* Tg = target.data<T>();
    T* out = output_data<T>(y);
    for (int64_t i = 0; i < input.numel(); ++i) {
      // torch 1.13's kernel, log(1 − x) included (not log1p), with the C library's log
      out[i] = (Tg[i] - T(1)) * std::max(T(std::log(T(1) - X[i])), T(-100)) -
               Tg[i] * std::max(T(std::log(X[i])), T(-100));
    }
  });
  return y;
}

}  // namespace tapegrad
