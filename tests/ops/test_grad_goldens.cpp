// Tests for ops/grad.cpp against torch: second derivatives of ops, an MLP's Hessian-vector
// product, a gradient penalty's gradient and a MAML outer gradient, within 1e-10 relative
// (tests/goldens/grad/make_grad_goldens.py writes them).
#include <tapegrad/graph/factory.h>
#include <tapegrad/ops/grad.h>
#include <tapegrad/ops/ops.h>

#include <cmath>
#include <functional>
#include <string>

#include "tests/goldens.h"

using namespace tapegrad;

namespace {

const testing::GoldenFile& goldens() {
  return testing::golden_file("grad/grad.txt");
}

Tensor golden(const std::string& name, bool needs_grad = false) {
  const testing::GoldenTensor& g = goldens()[name];
  return from_values(g.shape, g.values, DType::Float64, needs_grad);
}

void require_golden(const Tensor& t, const std::string& name) {
  const testing::GoldenTensor& g = goldens()[name];
  INFO(name);
  REQUIRE(t.shape() == g.shape);
  const std::vector<double> v = t.values();
  for (size_t i = 0; i < v.size(); ++i) {
    INFO("element " << i << ": " << v[i] << " vs torch " << g.values[i]);
    REQUIRE(std::abs(v[i] - g.values[i]) <= 1e-10 * std::max(1.0, std::abs(g.values[i])));
  }
}

using Function = std::function<Tensor(const std::vector<Tensor>&)>;

// g = grad(f(x), x, v, create_graph), then grad(g, x, u): both against torch's.
void check_second_order(const std::string& name, int inputs, const Function& f) {
  Tape tape;
  TapeScope scope(tape);
  std::vector<Tensor> x, u;
  for (int i = 0; i < inputs; ++i) {
    x.push_back(golden(name + ".x" + std::to_string(i), true));
    u.push_back(golden(name + ".u" + std::to_string(i)));
  }
  const Tensor y = f(x);
  const Tensor v = golden(name + ".v");
  const std::vector<Tensor> g =
      grad(std::vector<Tensor>{y}, x, std::vector<Tensor>{v}, {.create_graph = true});
  for (int i = 0; i < inputs; ++i) require_golden(g[i], name + ".g" + std::to_string(i));
  // A first gradient that depends on no input (layer_norm's bias gradient, Σ v) adds nothing;
  // an input no first gradient depends on (that bias) has a zero second derivative.
  std::vector<Tensor> outputs, directions;
  for (int i = 0; i < inputs; ++i) {
    if (!g[i].requires_grad()) continue;
    outputs.push_back(g[i]);
    directions.push_back(u[i]);
  }
  const std::vector<Tensor> h = grad(outputs, x, directions, {.allow_unused = true});
  for (int i = 0; i < inputs; ++i) {
    const Tensor hi = h[i].defined() ? h[i] : zeros(x[i].shape(), DType::Float64);
    require_golden(hi, name + ".h" + std::to_string(i));
  }
}

Tensor mlp(const Tensor& x, const std::vector<Tensor>& p) {  // Linear -> tanh -> Linear
  return linear(tanh(linear(x, p[0], p[1])), p[2], p[3]);
}

}  // namespace

TEST_CASE("second derivatives against torch", "[grad][goldens]") {
  using V = const std::vector<Tensor>&;
  check_second_order("softmax", 1, [](V x) { return softmax(x[0], -1); });
  check_second_order("log_softmax", 1, [](V x) { return log_softmax(x[0], 0); });
  check_second_order("layer_norm", 3, [](V x) { return layer_norm(x[0], x[1], x[2], 1e-5); });
  check_second_order("gelu", 1, [](V x) { return gelu(x[0], "tanh"); });
  check_second_order("gelu_erf", 1, [](V x) { return gelu(x[0]); });
  check_second_order("matmul", 2, [](V x) { return matmul(x[0], x[1]); });
  check_second_order("tanh", 1, [](V x) { return tanh(x[0]); });
  check_second_order("div", 2, [](V x) { return div(x[0], x[1]); });
  check_second_order("cross_entropy", 1, [](V x) {
    return cross_entropy(x[0], std::vector<int64_t>{2, 0, 3});
  });
  check_second_order("causal_attention", 3,
                     [](V x) { return causal_dot_product_attention(x[0], x[1], x[2], 2); });
}

TEST_CASE("an MLP's Hessian-vector product against torch", "[grad][goldens]") {
  Tape tape;
  TapeScope scope(tape);
  const std::vector<std::string> names{"w1", "b1", "w2", "b2"};
  std::vector<Tensor> params, v;
  for (const std::string& n : names) {
    params.push_back(golden("mlp." + n));
    v.push_back(golden("mlp.v_" + n));
  }
  const Tensor x = golden("mlp.x"), target = golden("mlp.target");
  const TensorFunction loss = [&](std::span<const Tensor> p) {
    return mse_loss(mlp(x, std::vector<Tensor>(p.begin(), p.end())), target);
  };
  const FunctionalResult hv = hvp(loss, params, v);
  require_golden(hv.output, "mlp.loss");
  for (size_t i = 0; i < names.size(); ++i) require_golden(hv.results[i], "mlp.hv_" + names[i]);
}

TEST_CASE("a gradient penalty's gradient against torch", "[grad][goldens]") {
  Tape tape;
  TapeScope scope(tape);
  const std::vector<std::string> names{"w1", "b1", "w2", "b2"};
  std::vector<Tensor> params;
  for (const std::string& n : names) params.push_back(golden("gp." + n, true));
  const Tensor x = golden("gp.x", true);
  const Tensor score = sum(mlp(x, params));                       // []
  const Tensor dx = grad(score, {x}, {.create_graph = true})[0];  // [4, 3]
  const Tensor norm = sqrt(sum(mul(dx, dx), 1));                  // [4]
  const Tensor penalty = mean(pow(norm - 1.0, 2.0));              // []
  require_golden(penalty, "gp.penalty");
  // The penalty does not depend on the last bias (∇ₓ does not see it): an Error unless allowed.
  CHECK_THROWS_WITH(grad(std::vector<Tensor>{penalty}, params, {}, {.retain_graph = true}),
                    Catch::Contains("allow_unused"));
  const std::vector<Tensor> grads =
      grad(std::vector<Tensor>{penalty}, std::vector<Tensor>(params.begin(), params.end() - 1));
  for (size_t i = 0; i < 3; ++i) require_golden(grads[i], "gp.grad_" + names[i]);
}

TEST_CASE("a MAML outer gradient against torch", "[grad][goldens]") {
  Tape tape;
  TapeScope scope(tape);
  const Tensor w = golden("maml.w", true);
  const Tensor inner = mse_loss(tanh(matmul(golden("maml.xs"), w)), golden("maml.ys"));
  const Tensor dw = grad(inner, {w}, {.create_graph = true})[0];
  const Tensor adapted = w - scale(dw, 0.1);
  const Tensor outer = mse_loss(tanh(matmul(golden("maml.xq"), adapted)), golden("maml.yq"));
  require_golden(outer, "maml.outer");
  require_golden(grad(outer, {w})[0], "maml.grad_w");
}
